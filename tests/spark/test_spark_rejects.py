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
