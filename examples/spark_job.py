"""The engine as a step of your own PySpark streaming job.

    .venv/bin/python examples/spark_job.py [WORKDIR]

Writes the sample stock ticks (examples/stock/ticks.trig) as Parquet files
into WORKDIR/incoming, runs the paper's query (1) (rules/stock.rq) over them
as a Structured Streaming query with a JSON file sink, marks the end of the
input so the last events are processed too, and prints the answers.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

from cep.io import read_events
from cep.spark import detect, end_input, spark_session

HERE = Path(__file__).resolve().parent
RULES = HERE.parent / "rules" / "stock.rq"


def write_sample(folder: Path) -> None:
    """The sample ticks as two Parquet files with columns s, p, o, t (ms)."""
    events, _ = read_events([HERE / "stock" / "ticks.trig"])  # an Arrow table
    table = events.select(["s", "p", "o", "start"]).rename_columns(["s", "p", "o", "t"])
    folder.mkdir(parents=True, exist_ok=True)
    half = table.num_rows // 2
    for i, part in enumerate((table.slice(0, half), table.slice(half))):
        pq.write_table(part, folder / f"ticks-{i}.parquet")


def main(work: Path) -> list:
    spark = spark_session()
    write_sample(work / "incoming")

    # Your job: any streaming DataFrame with columns s, p, o, t.
    events = (spark.readStream.schema("s string, p string, o string, t long")
              .option("maxFilesPerTrigger", 1).parquet(str(work / "incoming")))
    answers = detect(events, str(RULES), lateness="1 hour", end_markers=str(work / "end"))
    writer = (answers.writeStream.format("json").outputMode("append")
              .option("checkpointLocation", str(work / "checkpoint"))
              .option("path", str(work / "answers")).trigger(availableNow=True))

    writer.start().awaitTermination()  # everything there, up to the watermark
    end_input(work / "end")            # the input ends: process what still waits
    writer.start().awaitTermination()

    rows = spark.read.json(str(work / "answers")).where("kind = 'answer'").orderBy("end").collect()
    for row in rows:
        print(row["query"], row["start"], row["end"], row["bindings"].asDict())
    return rows


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="cep-spark-job-")))
