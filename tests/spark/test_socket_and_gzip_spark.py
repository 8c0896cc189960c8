"""The Spark engine's other inputs, on a real local Spark: a TCP socket of
JSON Lines (--events tcp://HOST:PORT, Spark's socket source) and gzipped
event files, each giving the in-process engine's answers."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time

import pytest

from cep import cli
from cep.engine import Engine
from cep.events import answers_table
from cep.io.writers import json_lines
from cep.rules import parse_rules
from cep.spark import end_input, plan
from cep.spark import run as engine_run
from cep.spark import sinks, sources

pytestmark = pytest.mark.spark
EX = "http://example.org/"
RULES = f"""PREFIX : <{EX}>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
REGISTER QUERY pairs AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT1S"^^xsd:duration)
"""
N = 12


def record(i: int) -> dict:
    return {"s": f"<{EX}k{i % 2}>", "p": f"<{EX}{'ab'[(i // 2) % 2]}>", "o": f'"{i}"', "t": 1000 + 100 * i}


def local_lines(records) -> list[str]:
    from cep.events import Event

    engine = Engine(list(parse_rules(RULES, "<rules>")))
    found = engine.push([Event(r["s"], r["p"], r["o"], r["t"], r["t"]) for r in records]) + engine.flush()
    return sorted(json_lines(answers_table(found)))


def wait_for(condition, what: str, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout  # a guard against a hang, not a timed assertion
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {timeout:.0f} s"
        time.sleep(0.5)


def test_a_tcp_socket_of_json_lines(spark, tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    text = "".join(json.dumps(record(i)) + "\n" for i in range(N)) + "not an event\n"

    def serve():
        connection, _ = server.accept()
        connection.sendall(text.encode())
        done.wait()
        connection.close()

    done = threading.Event()
    threading.Thread(target=serve, daemon=True).start()
    streams = sources.sources([f"tcp://127.0.0.1:{port}"], follow=True)
    ends = tmp_path / "ends"
    raw = engine_run(sources.event_stream(spark, streams), plan(RULES), "0 seconds", str(ends))
    query = (raw.mapInArrow(sinks._json_lines, "kind string, value string").writeStream.format("memory")
             .queryName("socket_answers").option("checkpointLocation", str(tmp_path / "ckpt")).start())
    expected = local_lines([record(i) for i in range(N)])
    try:
        wait_for(lambda: sum(p["numInputRows"] for p in query.recentProgress) >= N + 1, "lines read")
        end_input(ends)
        wait_for(lambda: spark.table("socket_answers").count() >= len(expected) + 1, "answers and the reject")
        rows = spark.table("socket_answers").collect()
    finally:
        query.stop()
        done.set()
        server.close()
    assert len(expected) >= 3
    assert sorted(r["value"] for r in rows if r["kind"] == "answer") == expected
    bad = [json.loads(r["value"]) for r in rows if r["kind"] == "reject"]
    assert len(bad) == 1 and bad[0]["text"] == "not an event"
    assert bad[0]["source"].startswith(f"tcp://127.0.0.1:{port} at ") and bad[0]["reason"].startswith("not an event")


def test_gzipped_event_files_on_spark(spark, tmp_path, capsys):
    events = tmp_path / "events.jsonl.gz"
    with gzip.open(events, "wt") as out:
        out.writelines(json.dumps(record(i)) + "\n" for i in range(N))
    rules = tmp_path / "pairs.rq"
    rules.write_text(RULES)
    code = cli.main(["run", str(rules), "--events", str(events), "--engine", "spark", "-q"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert sorted(out.splitlines()) == local_lines([record(i) for i in range(N)])


def test_a_json_record_that_gives_a_key_twice_is_refused_as_the_file_readers_refuse_it(spark):
    """{"t": A, "t": B} has no one meaning: Spark's from_json took one of
    them silently; the record is refused with a reason (cep.spark._times
    makes it a reject), as a .jsonl file's is (cep.io.tables.unique_keys)."""
    from pyspark.sql import functions as F

    from cep.spark.sources import json_events

    good = '{"s": "<http://e/k>", "p": "<http://e/p>", "o": "<http://e/o>", "t": "2026-01-01T00:00:00Z"}'
    twice = good[:-1] + ', "t": "2026-01-01T00:00:05Z"}'
    rows = json_events(spark.createDataFrame([(good,), (twice,)], "value string"), F.col("value"),
                       F.lit(None).cast("string"), F.lit("here")).collect()
    assert [r["reason"] for r in rows] == [None, "a key given twice in one object (RFC 8259 leaves its meaning "
                                                 "to the reader)"]
