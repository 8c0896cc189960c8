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
rejects; with --service-report FILE, the SERVICE evaluations' reports the
workers return (rows of kind `service`) go to FILE as JSON Lines.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

from cep.events import ANSWERS, Reject

FILE_FORMATS = ("jsonl", "csv", "parquet")
TIME_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"


def answers(raw: pa.Table) -> pa.Table:
    """The answer rows of the workers' raw output (cep.spark.run: times in
    epoch ms) as an answer table (cep.events.ANSWERS), what the writers take."""
    return raw.filter(pc.equal(raw["kind"], "answer")).select(ANSWERS.names).cast(ANSWERS)


def rejects(raw: pa.Table) -> list[Reject]:
    """The late and rejected records of the workers' raw output."""
    bad = raw.filter(pc.is_in(raw["kind"], pa.array(["late", "reject"]))).select(["source", "reason", "text"])
    return [Reject(r["source"] or "", r["reason"], r["text"]) for r in bad.to_pylist()]


def service_lines(raw: pa.Table) -> list[str]:
    """The SERVICE reports of the workers' raw output (their JSON lines),
    by evaluation time and query: a micro-batch's come from its groups in
    any order, each group's in the order it made them."""
    found = raw.filter(pc.equal(raw["kind"], "service")).select(["start", "query", "text"]).to_pylist()
    return [r["text"] for r in sorted(found, key=lambda r: (r["start"], r["query"]))]


def _json_lines(batches):
    """mapInArrow: raw rows -> (kind, the JSON line of cep.io.writers), in order."""
    from cep.io.writers import json_lines, reject_json

    for batch in batches:
        raw = pa.Table.from_batches([batch])
        is_answer = pc.equal(raw["kind"], "answer").to_pylist()
        found, bad = json_lines(answers(raw)), iter(rejects(raw))
        lines = [next(found) if yes else json.dumps(reject_json(next(bad)), ensure_ascii=False)
                 for yes in is_answer]
        yield pa.RecordBatch.from_pydict({"kind": batch.column("kind"), "value": pa.array(lines, pa.string())})


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
        return (raw.mapInArrow(_json_lines, "kind string, value string")
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
    cep.io writer, in time order; late and rejected records to `report`.
    `ordered`: the names of the queries with ORDER BY, whose answers keep
    the order their one group gave them. `service_log`: a text file that
    takes the SERVICE reports (service_lines), a line each, or None."""

    def __init__(self, writer, stream, report, counts, ordered=frozenset(), service_log=None):
        self.writer, self.stream, self.report, self.counts = writer, stream, report, counts
        self.ordered = frozenset(ordered)
        self.service_log = service_log
        self.failure = None  # what failed in a micro-batch: Spark passes it on as text alone

    def __call__(self, batch, batch_id):
        try:
            raw = batch.toArrow()
        except Exception as exc:
            self.failure = exc
            raise
        found = answers(raw)
        self.writer.write(found.take(pa.array(_time_order(found, self.ordered), pa.int64())))
        getattr(self.writer, "flush", lambda: None)()  # a table writer (--format table): a table per micro-batch
        self.stream.flush()
        self.counts.update(found["query"].to_pylist())
        bad = rejects(raw)
        if bad:
            self.report(bad)
        if self.service_log is not None:
            self.service_log.writelines(line + "\n" for line in service_lines(raw))
            self.service_log.flush()


def _time_order(found: pa.Table, ordered=frozenset()) -> list[int]:
    """The rows of an answer table by (end, start, query, bindings, triples):
    a micro-batch's answers come from its groups in any order. The answers
    of an evaluation of an `ordered` query (ORDER BY) come from one group
    in their order (cep.spark.routing.partition_key), which they keep."""
    from cep.io.writers import rows

    keys = [(end, 0, query, i) if query in ordered else
            (end, 1, start, query, tuple(sorted(bindings or ())), tuple(tuple(t.values()) for t in triples or ()))
            for i, (query, start, end, bindings, triples) in enumerate(rows(found))]
    return sorted(range(len(keys)), key=keys.__getitem__)
