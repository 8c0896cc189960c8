"""Where `cep run --engine spark` writes: Spark's file sink, or the console.

A file sink (--out DIR) is exactly-once: Spark writes each micro-batch's
files and then records them in DIR/_spark_metadata, so a query restarted
from its checkpoint neither loses nor repeats a batch (read DIR with Spark,
which follows that log; files of a batch cut short by a crash are left
outside it). The rows are partitioned by kind: DIR/kind=answer,
DIR/kind=late (events after the watermark) and DIR/kind=reject (records
that could not be read).

    jsonl    text files of the in-process engine's JSON Lines (cep.io.writers):
             answers as SPARQL 1.1 JSON terms, late and rejected records as
             {"source", "reason", "text"}
    csv      Spark's CSV with a header: query, start, end, one column per SELECT
             variable (N-Triples terms; ?name for one named like another
             column), source, reason, text
    parquet  the columns of cep.spark.detect

Without --out, each micro-batch's answers are printed as the in-process
engine prints them, and late and rejected records are reported like its
rejects.
"""

from __future__ import annotations

import json

from cep.events import Answer, Reject

FILE_FORMATS = ("jsonl", "csv", "parquet")
TIME_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"


def answer(row) -> Answer:
    """An answer row of the workers' raw output (cep.spark.run: times in
    epoch ms, bindings and triples as JSON text) as an Answer."""
    triples, bindings = _text(row["triples"]), _text(row["bindings"])
    triples = tuple((t["s"], t["p"], t["o"]) for t in json.loads(triples)) if triples else ()
    bindings = tuple(sorted(json.loads(bindings).items())) if bindings else ()
    return Answer(row["query"], int(row["start"]), int(row["end"]), bindings, triples)


def reject(row) -> Reject:
    return Reject(_text(row["source"]) or "", row["reason"], _text(row["text"]))


def _text(value):
    """A string column's value (pandas gives NaN for null)."""
    return value if isinstance(value, str) else None


def _json_lines(batches):
    """mapInPandas: raw rows -> (kind, the JSON line of cep.io.writers)."""
    import pandas as pd

    from cep.io.writers import answer_json, reject_json

    for pdf in batches:
        lines = [json.dumps(answer_json(answer(row)) if row["kind"] == "answer" else reject_json(reject(row)),
                            ensure_ascii=False)
                 for row in pdf.to_dict("records")]
        yield pd.DataFrame({"kind": pdf["kind"], "value": lines})


_CSV_FIXED = ("kind", "query", "start", "end", "source", "reason", "text")


def _csv_columns(out, variables):
    """The CSV columns; a variable named like a fixed column keeps its "?"
    to stay apart (as cep.io.writers.CsvWriter does)."""
    from pyspark.sql import functions as F

    times = [F.date_format(c, TIME_FORMAT).alias(c) for c in ("start", "end")]
    bindings = [F.col("bindings")[v].alias("?" + v if v in _CSV_FIXED else v) for v in variables]
    return out.select("kind", "query", *times, *bindings, "source", "reason", "text")


def file_sink(raw, fmt: str, path: str, variables=()):
    """A DataStreamWriter of the workers' raw output to the file sink."""
    from cep.spark import _finish

    if fmt == "jsonl":
        return (raw.mapInPandas(_json_lines, "kind string, value string")
                .writeStream.format("text").partitionBy("kind").option("path", path))
    out = _finish(raw)
    if fmt == "csv":
        return (_csv_columns(out, variables).writeStream.format("csv").partitionBy("kind")
                .option("header", "true").option("path", path))
    if fmt == "parquet":
        return out.writeStream.format("parquet").partitionBy("kind").option("path", path)
    raise ValueError(f"no file sink for {fmt}")


class Console:
    """foreachBatch of the raw output: each micro-batch's answers to a
    cep.io writer, in time order; late and rejected records to `report`."""

    def __init__(self, writer, stream, report, counts):
        self.writer, self.stream, self.report, self.counts = writer, stream, report, counts
        self.failure = None  # what failed in a micro-batch: Spark passes it on as text alone

    def __call__(self, batch, batch_id):
        try:
            rows = batch.collect()
        except Exception as exc:
            self.failure = exc
            raise
        answers = sorted((answer(r) for r in rows if r["kind"] == "answer"),
                         key=lambda a: (a.end, a.start, a.query, a.bindings, a.triples))
        self.writer.write(answers)
        self.stream.flush()
        self.counts.update(a.query for a in answers)
        bad = [reject(r) for r in rows if r["kind"] != "answer"]
        if bad:
            self.report(bad)
