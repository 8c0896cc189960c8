"""Helpers for the Spark tests: events in and answers out of cep.spark.detect
in the form the in-process engine gives them, several rule sets evaluated
in one Spark job, and a stream of Parquet files read one a micro-batch.

A Spark job costs seconds on a 2-core machine, mostly per stage and per
micro-batch, not per event: these helpers put many cases into one job where
Spark allows it (a batch DataFrame: the union of one detect() per case).
A streaming query holds one stateful operator only ("Multiple
applyInPandasWithStates are not supported"), so each stream runs as a
query of its own, several started together and waited for together.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq

from cep import reference
from cep.algebra import sexpr
from cep.engine import Engine
from cep.events import Answer

# The test sessions turn Spark's UI off (cep keeps Spark's default, on):
# test runs go on in parallel (CI jobs, several checkouts on one machine),
# and each UI would take a port, 4040 and up, where Spark gives up after
# spark.port.maxRetries of them taken.
TEST_CONF = {"spark.ui.enabled": "false"}

EVENT_DDL = "s string, p string, o string, t long, t_end long, source string"
EVENT_SCHEMA = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()),
                          ("t", pa.int64()), ("t_end", pa.int64()), ("source", pa.string())])


def event_rows(events) -> list[tuple]:
    """Events as rows of EVENT_DDL (t, t_end: start and end, epoch ms;
    source: the record, which a count window of events counts once)."""
    return [(e.s, e.p, e.o, e.start, e.end, e.source or None) for e in events]


def in_process(queries, events, background=None) -> list[Answer]:
    """The in-process engine's answers over the whole stream (events in
    end-time order, as one push)."""
    engine = Engine(list(queries), background=background)
    return engine.push(sorted(events, key=lambda e: (e.end, e.start))) + engine.flush()


def output_columns(df):
    """detect()'s output with times as epoch ms (not timestamps, whose
    conversion to Python datetimes depends on the local time zone)."""
    from pyspark.sql import functions as F

    return df.select("kind", "query", "bindings", "triples", F.unix_millis("start").alias("start"),
                     F.unix_millis("end").alias("end"), "s", "p", "o", "reason")


def answer_of(row) -> Answer:
    """An output row of kind "answer" as the in-process engine's Answer."""
    triples = tuple((t["s"], t["p"], t["o"]) for t in row["triples"] or ())
    bindings = () if triples else tuple(sorted((row["bindings"] or {}).items()))
    ask = True if row["bindings"] is None and not triples else None  # cep.events.ANSWERS
    return Answer(row["query"], row["start"], row["end"], bindings=bindings, triples=triples, boolean=ask)


def split_rows(rows) -> tuple[list[Answer], list]:
    """(answers, the other rows: late or rejected events)."""
    answers, others = [], []
    for r in rows:
        if r["kind"] == "answer":
            answers.append(answer_of(r))
        else:
            others.append(r)
    return answers, others


def batch_answers(spark, cases, buckets, backgrounds=None) -> dict:
    """detect() over a batch DataFrame of each case's events with its rule
    set, all cases in one Spark job: case index -> (answers, other rows).
    `cases`: [(queries, events)]; `buckets`: one number, or one per case;
    `backgrounds`: each case's background knowledge (or None), if any."""
    from pyspark.sql import functions as F

    from cep.spark import detect

    if isinstance(buckets, int):
        buckets = [buckets] * len(cases)
    rows = [(i, *r) for i, (_, events) in enumerate(cases) for r in event_rows(events)]
    events = spark.createDataFrame(rows, "case int, " + EVENT_DDL)
    out = None
    for i, ((queries, _), n) in enumerate(zip(cases, buckets)):
        part = detect(events.filter(F.col("case") == i).drop("case"), list(queries), buckets=n,
                      ontology=None if backgrounds is None else backgrounds[i])
        part = output_columns(part).withColumn("case", F.lit(i))
        out = part if out is None else out.unionByName(part)
    got = {i: ([], []) for i in range(len(cases))}
    for r in out.collect():
        answers, others = got[r["case"]]
        if r["kind"] == "answer":
            answers.append(answer_of(r))
        else:
            others.append(r)
    return got


def write_files(folder, chunks, schema=EVENT_SCHEMA) -> None:
    """One Parquet file of `schema` per chunk of rows, in order: Spark's
    file source takes files in order of modification time, so the times
    are set one second apart."""
    folder.mkdir(parents=True)
    for i, chunk in enumerate(chunks):
        path = folder / f"part-{i:04d}.parquet"
        pq.write_table(pa.table({name: [r[j] for r in chunk] for j, name in enumerate(schema.names)},
                                schema=schema), path)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


def start_stream(spark, folder, queries, lateness: str, buckets: int):
    """Start detect() on the Parquet files of `folder`, one file a
    micro-batch, to the end of the files, into a memory table: (the
    streaming query, the table's name). Await the query, then read the table."""
    from cep.spark import detect

    events = spark.readStream.schema(EVENT_DDL).option("maxFilesPerTrigger", 1).parquet(str(folder / "in"))
    name = f"answers_{uuid.uuid4().hex}"
    query = (output_columns(detect(events, list(queries), lateness=lateness, buckets=buckets))
             .writeStream.format("memory").queryName(name).outputMode("append")
             .option("checkpointLocation", str(folder / "checkpoint")).trigger(availableNow=True).start())
    return query, name


def micro_batch_answers(spark, folder, queries, chunks, horizon: int):
    """Each chunk of events a file, so a micro-batch, through detect() (3
    buckets, 1 minute of lateness): (its answers ending before `horizon`,
    those of the in-process engine over the same events). The end of this
    stream is never marked (end_input), so Spark answers only what the
    watermark has passed: give a last chunk whose events (read by a query
    or not) move it past `horizon`, which leaves out the answers that the
    in-process engine gives only at the end of the stream."""
    write_files(folder / "in", [event_rows(chunk) for chunk in chunks])
    query, name = start_stream(spark, folder, queries, lateness="1 minute", buckets=3)
    process_all(query)
    answers, others = split_rows(spark.table(name).collect())
    assert not others
    expected = [a for a in in_process(queries, [e for chunk in chunks for e in chunk]) if a.end < horizon]
    return [a for a in answers if a.end < horizon], expected


def process_all(query, seconds: float = 300):
    """Wait until the query has processed every file there is, then stop
    it. (Not awaitTermination: whether an availableNow query also ends is
    not what these tests check, and a query whose stateful operator asks
    for batches without data keeps running.) A watchdog stops the query
    after `seconds`, so a query that hangs fails the test instead of
    hanging it."""
    watchdog = threading.Timer(seconds, query.stop)
    watchdog.start()
    try:
        query.processAllAvailable()
    finally:
        watchdog.cancel()
        query.stop()


def describe(queries, events) -> str:
    """A failing case as text: its queries' algebra and its stream."""
    lines = [f"query {q.name}:\n{sexpr.query(q)}" for q in queries]
    lines.append("stream:\n" + "\n".join(f"  {e.s} {e.p} {e.o} [{e.start}, {e.end}]"
                                         for e in sorted(events, key=lambda e: (e.start, e.end, e.s, e.p, e.o))))
    return "\n".join(lines)


def difference(expected: Counter, got: Counter) -> str:
    """What one multiset of answers (reference.multiset) lacks and has
    over another, or "" when they are equal."""
    missing, extra = expected - got, got - expected
    if not missing and not extra:
        return ""
    return (f"missing from Spark ({sum(missing.values())}): {sorted(missing.elements())}\n"
            f"extra in Spark ({sum(extra.values())}): {sorted(extra.elements())}")


multiset = reference.multiset
