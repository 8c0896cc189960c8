"""Bad rows on the Spark engine (issue 17, item 1): a time outside the
supported range and a string that is not Unicode, in the formats Spark
reads itself (Parquet) and in those the readers parse (JSON Lines), are
`reject` rows with the same place and reason as on the local engine; the
query goes on and answers as the local engine does."""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cep import cli, terms

pytestmark = pytest.mark.spark
EX = "http://example.org/"
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")


def cep(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def rejected(err: str) -> set:
    return set(re.findall(r"^cep: rejected (.*?): (.*)$", err, re.M))


def test_bad_times_and_strings_are_reject_rows_and_the_query_goes_on(spark, capsys, tmp_path):
    rules = tmp_path / "q.rq"
    rules.write_text(f"PREFIX : <{EX}>\nSELECT ?s ?o WHERE {{ ?s :p ?o }}\n")
    events = tmp_path / "in"
    events.mkdir()
    rows = [{"s": f"<{EX}a>", "p": f"<{EX}p>", "o": f"<{EX}o1>", "t": T0},
            {"s": f"<{EX}a>", "p": f"<{EX}p>", "o": f"<{EX}o2>", "t": 10**30},
            {"s": f"<{EX}a>", "p": f"<{EX}p>", "o": '"\\ud800"', "t": T0 + 1},
            {"s": f"<{EX}a>", "p": f"<{EX}p>", "o": f"<{EX}o3>", "t": "0000-01-01T00:00:00Z"},
            {"s": f"<{EX}a>", "p": f"<{EX}p>", "o": f"<{EX}o4>", "t": T0 + 2}]
    (events / "e.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    raw = pa.array([f"<{EX}o5>".encode(), b'"\xff"', f"<{EX}o6>".encode(), f"<{EX}o7>".encode()], pa.binary())
    o = pa.Array.from_buffers(pa.string(), 4, raw.buffers())  # bytes as they are: not UTF-8 in row 2
    pq.write_table(pa.table({"s": [f"<{EX}b>"] * 4, "p": [f"<{EX}p>"] * 4, "o": o,
                             "t": pa.array([T0 + 3, T0 + 4, 2**63 - 1, T0 + 5], pa.int64())}),
                   events / "e.parquet")

    code, local, local_err = cep(["run", rules, "--events", events, "--engine", "local"], capsys)
    assert code == 0, local_err
    code, out, err = cep(["run", rules, "--events", events, "--engine", "spark"], capsys)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(local.splitlines())
    assert sorted(json.loads(line)["bindings"]["o"]["value"] for line in out.splitlines()) == [
        f"{EX}o{i}" for i in (1, 4, 5, 7)]
    assert rejected(err) == rejected(local_err) and len(rejected(err)) == 5
    assert (f"{events / 'e.parquet'}:row 2", "column o: not UTF-8 text") in rejected(err)
    assert (f"{events / 'e.parquet'}:row 3", "column t: 9223372036854775807 ms is outside the supported time "
                                              "range, 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z") in rejected(err)


def test_a_column_of_numbers_or_bytes_for_terms_gives_reject_rows(spark, tmp_path):
    """detect() over Parquet whose s is not a string column: each row is a
    reject (the worker failed on such a column), each good one an answer."""
    from cep.spark import detect

    path = tmp_path / "bytes.parquet"
    pq.write_table(pa.table({"s": pa.array([f"<{EX}a>".encode(), b"\xff", b"5"], pa.binary()),
                             "p": [f"<{EX}p>"] * 3, "o": [f"<{EX}o>"] * 3,
                             "t": pa.array([T0, T0 + 1, T0 + 2], pa.int64())}), path)
    rows = detect(spark.read.parquet(str(path)), f"PREFIX : <{EX}>\nSELECT ?s WHERE {{ ?s :p ?o }}\n").collect()
    assert sorted((r["kind"], r["reason"]) for r in rows) == [
        ("answer", None), ("reject", "column s: not UTF-8 text"), ("reject", "column s: not an N-Triples term: '5'")]


def reject_lines(err: str) -> set:
    """Each reject as its two lines: place and reason, then the record."""
    lines = err.splitlines()
    return {(line, lines[i + 1]) for i, line in enumerate(lines[:-1]) if line.startswith("cep: rejected ")}


def test_parquet_timestamps_beyond_what_sparks_reader_holds_are_reject_rows(spark, capsys, tmp_path):
    """TIMESTAMP(MILLIS) times about ±317,000 years from 1970 (Spark's reader
    overflows on them and fails the whole file) and year 0000: reject rows
    with the local engine's places, reasons and texts; the other rows answer."""
    rules = tmp_path / "q.rq"
    rules.write_text(f"PREFIX : <{EX}>\nSELECT ?s ?o WHERE {{ ?s :p ?o }}\n")
    events = tmp_path / "in"
    events.mkdir()
    year0 = terms.parse_datetime_ms("0000-06-01T12:00:00.5Z")
    times = [T0, 10**16, -10**16, year0, T0 + 5]
    pq.write_table(pa.table({"s": [f"<{EX}a>"] * 5, "p": [f"<{EX}p>"] * 5, "o": [f"<{EX}o{i}>" for i in range(5)],
                             "t": pa.array(times, pa.timestamp("ms", tz="UTC"))}), events / "e.parquet")
    code, local, local_err = cep(["run", rules, "--events", events, "--engine", "local"], capsys)
    assert code == 0, local_err
    code, out, err = cep(["run", rules, "--events", events, "--engine", "spark"], capsys)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(local.splitlines()) and len(out.splitlines()) == 2
    assert reject_lines(err) == reject_lines(local_err) and len(reject_lines(err)) == 3
    assert (f"cep: rejected {events / 'e.parquet'}:row 2: column t: 318857-05-20T17:46:40Z is outside the "
            "supported time range, 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z",
            f"    <{EX}a> <{EX}p> <{EX}o1> @ 318857-05-20T17:46:40Z") in reject_lines(err)


def test_a_parquet_file_spark_cannot_read_is_named_and_the_run_exits_2(spark, capsys, tmp_path):
    rules = tmp_path / "q.rq"
    rules.write_text(f"PREFIX : <{EX}>\nSELECT ?s ?o WHERE {{ ?s :p ?o }}\n")
    damaged, nanos = tmp_path / "damaged.parquet", tmp_path / "nanos.parquet"
    damaged.write_bytes(b"PAR1" + b"\x00" * 100)
    pq.write_table(pa.table({"s": [f"<{EX}a>"], "p": [f"<{EX}p>"], "o": [f"<{EX}o>"],
                             "t": pa.array([T0 * 10**6], pa.timestamp("ns", tz="UTC"))}), nanos)
    for path, said in ((damaged, "Spark cannot read this event file"),
                       (nanos, "column t holds timestamps in nanoseconds")):
        code, _, err = cep(["run", rules, "--events", path, "--engine", "spark"], capsys)
        assert code == 2 and err.splitlines()[-1].startswith(f"cep: error: {path}: {said}"), err
        assert "Traceback" not in err and "internal error" not in err


def test_spark_writes_any_time_as_the_local_engine_does(spark):
    """cep.spark._datetime_text, Spark SQL's integer calendar, against
    cep.terms.format_datetime_ms over the whole range of a long."""
    import random

    from pyspark.sql import functions as F

    from cep.spark import _datetime_text

    rng = random.Random(5)
    values = [0, 1, -1, 999, -86_400_000, 951_782_400_000, 2**63 - 1, -2**63, 10**16, -10**16,
              *(rng.randint(-2**63, 2**63 - 1) for _ in range(200)), *(rng.randint(-10**14, 10**14) for _ in range(200))]
    rows = spark.createDataFrame([(v,) for v in values], "v long").select(
        "v", _datetime_text(F.col("v")).alias("text")).collect()
    assert {r["v"]: r["text"] for r in rows} == {v: terms.format_datetime_ms(v) for v in values}
