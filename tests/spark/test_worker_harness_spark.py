"""The harness of the streaming worker (tests/unit/worker_harness.py) against
a real Spark: the same micro-batches, one Parquet file each, give the same
answers and late rows through Spark as through the harness, so that the
harness's account of Spark (watermarks, late rows dropped, timeouts,
batches without data) cannot drift from Spark's silently."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from tests.spark.support import event_rows, output_columns, split_rows, write_files
from tests.unit.test_worker_steps import PAIRS, UNCONFIRMED, WINDOWS, stream
from tests.unit.worker_harness import Harness, ev

pytestmark = pytest.mark.spark
BUCKETS = 2
LATENESS_MS = 20


def micro_batches() -> list[list]:
    """Four batches of a random stream, each out of time order; then one of
    two late events; one of events that end at the watermark (on time: Spark
    keeps them, the worker processes them); and one far later, after which
    Spark's batches without data close the windows and deadlines by timeouts."""
    rng = random.Random(7)
    events = stream(240, seed=7)
    chunks = [events[i:i + 60] for i in range(0, len(events), 60)]
    for chunk in chunks:
        rng.shuffle(chunk)
    chunks.append([ev("k1", "b", 1, 1050), ev("k2", "a", 2, 1051)])
    watermark = max(e.end for chunk in chunks for e in chunk) - LATENESS_MS
    chunks.append([ev("k0", "b", 3, watermark), ev("k3", "a", 4, watermark), ev("k3", "b", 5, watermark)])
    chunks.append([ev("k1", "a", 6, watermark + 500)])
    return chunks


def test_micro_batches_through_spark_and_through_the_harness_give_the_same_rows(spark, tmp_path):
    from cep.spark import detect

    chunks = micro_batches()
    keys = sorted({e.s for chunk in chunks for e in chunk})
    # each key's bucket, as the router computes it
    row = spark.sql("select " + ", ".join(f"pmod(xxhash64('{k}'), {BUCKETS})" for k in keys)).collect()[0]
    bucket = dict(zip(keys, row))

    rules_sets = {"pairs": PAIRS, "windows": WINDOWS, "unconfirmed": UNCONFIRMED}
    queries = {}
    for name, rules in rules_sets.items():
        folder = tmp_path / name
        write_files(folder / "in", [event_rows(chunk) for chunk in chunks])
        frames = spark.readStream.schema("s string, p string, o string, t long, t_end long").option(
            "maxFilesPerTrigger", 1).parquet(str(folder / "in"))
        queries[name] = (output_columns(detect(frames, rules, lateness=f"{LATENESS_MS} milliseconds",
                                               buckets=BUCKETS))
                         .writeStream.format("memory").queryName(f"harness_{name}").outputMode("append")
                         .option("checkpointLocation", str(folder / "checkpoint"))
                         .trigger(availableNow=True).start())
    try:
        for query in queries.values():
            assert query.awaitTermination(600), "the query did not end"
    finally:
        for query in queries.values():
            query.stop()

    for name, rules in rules_sets.items():
        answers, others = split_rows(spark.sql(f"select * from harness_{name}").collect())
        harness = Harness(rules, lateness_ms=LATENESS_MS, buckets=BUCKETS, route=lambda e: (0, bucket[e.s]))
        out = harness.run(chunks)
        assert len(out.answers) > 10, name
        assert Counter(answers) == Counter(out.answers), name
        assert (sorted((r["kind"], r["s"], r["p"], r["o"], r["end"]) for r in others)
                == sorted((r["kind"], r["s"], r["p"], r["o"], r["end"]) for r in out.late + out.rejects)), name
        if name == "pairs":  # without timeouts, the late events reach their groups, which report them
            assert len(out.late) == 2
