"""Kafka's columns around detect (cep.spark.kafka), on a real local Spark.

The Kafka connector cannot be installed here (no Maven repository), so the
records are made from Spark's `rate` source in the Kafka source's shape
(key, value, topic, partition, offset, timestamp, timestampType), and the
answers go to the memory sink in the Kafka sink's shape (key, value). The
answers must be the in-process engine's JSON lines; a record that is no
event is a reject naming its topic:partition:offset; and the progress
listener (cep.spark.progress) counts what went by."""

from __future__ import annotations

import json
import time

import pytest

from cep.engine import Engine
from cep.events import Event
from cep.io.writers import json_lines
from cep.rules import parse_rules
from cep.spark import detect, end_input
from cep.spark.kafka import kafka_events, kafka_records
from cep.spark.progress import ProgressListener, observed

pytestmark = pytest.mark.spark
EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RULES = f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
REGISTER QUERY pairs AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT1S"^^xsd:duration)
"""
N = 24  # records; record BAD is not an event
BAD = 7
BASE = 1_767_225_600_000


def event(i: int) -> Event:
    return Event(f"<{EX}k{i % 3}>", f"<{EX}{'ab'[(i // 3) % 2]}>", f'"{i}"^^<{XSD}integer>', BASE + 100 * i,
                 BASE + 100 * i)


def wait_for(condition, what: str, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout  # a guard against a hang, not a timed assertion
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {timeout:.0f} s"
        time.sleep(0.5)


def test_kafka_records_in_answers_out_as_the_local_engine_gives_them(spark, tmp_path):
    from pyspark.sql import functions as F

    i = F.col("value")
    body = F.to_json(F.struct(
        F.format_string(f"<{EX}k%d>", i % 3).alias("s"),
        F.when((i / 3).cast("int") % 2 == 0, F.lit(f"<{EX}a>")).otherwise(F.lit(f"<{EX}b>")).alias("p"),
        F.format_string(f'"%d"^^<{XSD}integer>', i).alias("o"),
        (F.lit(BASE) + i * 100).alias("t")))
    records = (spark.readStream.format("rate").option("rowsPerSecond", 100).load()
               .where(i < N)
               .select(i.cast("string").cast("binary").alias("key"),
                       F.when(i == BAD, F.lit("not an event")).otherwise(body).cast("binary").alias("value"),
                       F.lit("ticks").alias("topic"), F.lit(0).alias("partition"), i.alias("offset"),
                       F.col("timestamp"), F.lit(0).alias("timestampType")))
    ends = tmp_path / "ends"
    out = observed(detect(kafka_events(records), RULES, lateness="0 seconds", end_markers=str(ends)))
    listener = ProgressListener(json_path=tmp_path / "progress.jsonl")
    spark.streams.addListener(listener)
    query = (kafka_records(out).writeStream.format("memory").queryName("kafka_answers")
             .option("checkpointLocation", str(tmp_path / "ckpt")).start())
    try:
        engine = Engine(list(parse_rules(RULES, "<rules>")))
        found = engine.push([event(k) for k in range(N) if k != BAD]) + engine.flush()
        expected = sorted(json_lines_of(found))
        assert len(expected) >= 4
        wait_for(lambda: sum(p.numInputRows for p in query.recentProgress) >= N, "records read")
        end_input(ends)
        wait_for(lambda: spark.table("kafka_answers").count() >= len(expected) + 1, "answers and the reject")
        rows = spark.table("kafka_answers").collect()
        listener.wait(query)
    finally:
        query.stop()
        spark.streams.removeListener(listener)
        listener.close()
    assert sorted(r["value"] for r in rows if r["key"] == "pairs") == expected
    bad = [json.loads(r["value"]) for r in rows if r["key"] == "reject"]
    assert [b["source"] for b in bad] == [f"ticks:0:{BAD}"] and "not an event" in bad[0]["text"]
    assert {r["key"] for r in rows} == {"pairs", "reject"}
    progress = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    assert sum(p["answers"] for p in progress) == len(expected)
    assert sum(p["rejected"] for p in progress) == 1
    assert any(p["watermark"] and p["watermark"].startswith("2026-01-01T00:00") for p in progress)
    assert all(p["state_groups"] is not None for p in progress if p["rows"])


def json_lines_of(answers) -> list[str]:
    from cep.events import answers_table

    return list(json_lines(answers_table(answers)))
