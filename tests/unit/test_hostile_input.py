"""Single hostile inputs, run through `cep run --engine local` (issue 17):
odd times and strings (item 1), huge terms (item 2), TriG blank nodes
(item 14) and undecodable bytes (item 15), and one verdict for a term in
every format (item 16). Each bad record is a reject naming its place and
why; the run goes on and the good records around it answer as they would
alone."""

from __future__ import annotations

import csv
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cep import cli, terms
from cep.errors import OntologyError
from cep.events import events_of
from cep.io import check
from cep.io import read_events as read_events_table


def read_events(paths):
    """The readers' events table as Events (the assertions here are on rows)."""
    table, rejects = read_events_table(paths)
    return events_of(table), rejects


EX = "http://example.org/"
XSD = terms.XSD
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")
PREFIXES = f"PREFIX : <{EX}>\n"
SELECT_ALL = PREFIXES + "SELECT ?s ?o WHERE { ?s :p ?o }\n"
TRIG_PREFIXES = (f"@prefix : <{EX}> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
                 f"@prefix xsd: <{XSD}> .\n")
OUTSIDE = "is outside the supported time range, 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z"


def ex(name):
    return f"<{EX}{name}>"


def cep_run(capsys, tmp_path, rules, events, *options):
    """`cep run` on the local engine: (exit code, answers as parsed JSON or
    the output text, rejects as parsed JSON, stderr)."""
    path = tmp_path / "q.rq"
    path.write_text(rules)
    rejects = tmp_path / "rejects.jsonl"
    argv = ["run", path, "--events", *events, "--engine", "local", "--rejects", rejects, "--quiet", *options]
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    answers = [json.loads(line) for line in out.splitlines()] if "--format" not in options else out
    return code, answers, [json.loads(line) for line in rejects.read_text().splitlines()], err


def objects(answers):
    return sorted(a["bindings"]["o"]["value"] for a in answers)


def good_row(i):
    return {"s": ex("k"), "p": ex("p"), "o": ex(f"good{i}"), "t": T0 + i}


def interleaved(bad):
    """Good rows 0..n with one bad row after each: (rows, 1-based lines of the bad ones)."""
    rows, lines = [good_row(0)], []
    for i, b in enumerate(bad, 1):
        rows.append(b)
        lines.append(len(rows))
        rows.append(good_row(i))
    return rows, lines


def jsonl_text(rows):
    """JSON Lines; a value given as a str subclass Raw is written as it is (a number JSON reads as it may)."""
    def value(v):
        return v if isinstance(v, Raw) else json.dumps(v)

    return "".join("{" + ", ".join(f'"{k}": {value(v)}' for k, v in r.items()) + "}\n" for r in rows)


class Raw(str):
    pass


def csv_text(rows):
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["s", "p", "o", "t"])
    for r in rows:
        writer.writerow([r["s"], r["p"], r["o"], r["t"]])
    return buf.getvalue()


def trig_text(rows):
    """A graph per row, at its line 2 k + 4 (k from 0): the block, then its time."""
    out = [TRIG_PREFIXES]
    for k, r in enumerate(rows):
        time = r["t"] if isinstance(r["t"], str) else terms.format_datetime_ms(r["t"])
        out.append(f"<{EX}g{k}> {{ {r['s']} {r['p']} {r['o']} }}\n"
                   f'<{EX}g{k}> prov:generatedAtTime "{time}"^^xsd:dateTime .\n')
    return "".join(out)


# ============================================================ item 1: times


ODD_TIMES = [10**30, 1e300, "1234567890123456789012345", -2**63, 2**64 - 1, "9999-12-31T23:00:00-05:00",
             "9999-12-31T24:00:00Z", "0000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "10000-01-01T00:00:00Z",
             Raw("1e400"), Raw("9" * 5000)]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_odd_times_are_rejected_with_their_line_and_the_run_goes_on(capsys, tmp_path, fmt):
    bad = [dict(good_row(100 + i), t=t) for i, t in enumerate(ODD_TIMES)]
    rows, lines = interleaved(bad)
    path = tmp_path / f"e.{fmt}"
    path.write_text(jsonl_text(rows) if fmt == "jsonl" else csv_text(rows))
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, [path])
    assert code == 0, err
    assert objects(answers) == sorted(f"{EX}good{i}" for i in range(len(bad) + 1))
    header = 1 if fmt == "csv" else 0
    assert [r["source"] for r in rejects] == [f"{path}:{line + header}" for line in lines]
    for r, t in zip(rejects, ODD_TIMES):
        if fmt == "csv" and (isinstance(t, float) or t == "1e400"):  # text, not a JSON number
            assert r["reason"] == f"column t: {str(t)!r} is neither xsd:dateTime text (like " \
                                  "2026-01-05T10:00:00Z) nor integer epoch milliseconds", r
        else:
            assert r["reason"].startswith("column t: ") and r["reason"].endswith(OUTSIDE), r


def test_odd_parquet_times_are_rejected_with_their_row(capsys, tmp_path):
    def write(name, t):
        n = len(t)
        pq.write_table(pa.table({"s": [ex("k")] * n, "p": [ex("p")] * n,
                                 "o": [ex(f"{name}{i}") for i in range(n)], "t": t}), tmp_path / f"{name}.parquet")
        return tmp_path / f"{name}.parquet"

    files = [
        write("long", pa.array([T0, -2**63, 2**63 - 1, T0 + 1], pa.int64())),
        write("unsigned", pa.array([T0, 2**64 - 1], pa.uint64())),
        write("stamp", pa.array([T0 * 1000, -62_167_219_200_000_000], pa.timestamp("us", tz="UTC"))),  # year 0
        write("text", pa.array(["2026-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T24:00:00Z"])),
    ]
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, files)
    assert code == 0, err
    assert objects(answers) == [f"{EX}long0", f"{EX}long3", f"{EX}stamp0", f"{EX}text0", f"{EX}unsigned0"]
    assert {r["source"]: r["reason"] for r in rejects} == {
        f"{files[0]}:row 2": f"column t: -9223372036854775808 ms {OUTSIDE}",
        f"{files[0]}:row 3": f"column t: 9223372036854775807 ms {OUTSIDE}",
        f"{files[1]}:row 2": f"column t: 18446744073709551615 ms {OUTSIDE}",
        f"{files[2]}:row 2": f"column t: 0000-01-01T00:00:00Z {OUTSIDE}",
        f"{files[3]}:row 2": f"column t: 0000-01-01T00:00:00Z {OUTSIDE}",
        f"{files[3]}:row 3": f"column t: 9999-12-31T24:00:00Z {OUTSIDE}",
    }


def test_odd_trig_times_reject_their_graph(capsys, tmp_path):
    bad = [dict(good_row(100 + i), t=t) for i, t in enumerate(
        ["9999-12-31T23:00:00-05:00", "9999-12-31T24:00:00Z", "0000-01-01T00:00:00Z", "123456-01-01T00:00:00Z"])]
    rows, _ = interleaved(bad)
    path = tmp_path / "e.trig"
    path.write_text(trig_text(rows))
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, [path])
    assert code == 0, err
    assert objects(answers) == sorted(f"{EX}good{i}" for i in range(len(bad) + 1))
    assert [r["source"] for r in rejects] == [f"{path}:{2 * k + 4}" for k in (1, 3, 5, 7)]
    assert all(r["reason"].startswith("prov:generatedAtTime of graph") and r["reason"].endswith(OUTSIDE)
               for r in rejects), rejects


ODD_TERMS = [  # (a row's s, p, o: one of them odd; the reason's words)
    (ex("k"), ex("p"), '"\\ud800"', "\\ud800 is not a Unicode character (a surrogate)"),
    (ex("k"), ex("p"), '"\\U00110000"', "\\U00110000 is not a Unicode character (past U+10FFFF)"),
    (ex("k"), ex("p"), '"\ud800"', "U+D800 is not a Unicode character (a lone surrogate"),  # JSON's \ud800
    ("<http://example.org/\\uDFFF>", ex("p"), ex("o"), "\\uDFFF is not a Unicode character"),
]


def test_odd_strings_are_rejected_with_their_line_and_the_run_goes_on(capsys, tmp_path):
    bad = [{"s": s, "p": p, "o": o, "t": T0 + 50} for s, p, o, _ in ODD_TERMS]
    rows, lines = interleaved(bad)
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # JSON escapes the lone surrogate
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, [path])
    assert code == 0, err
    assert objects(answers) == sorted(f"{EX}good{i}" for i in range(len(bad) + 1))
    assert [r["source"] for r in rejects] == [f"{path}:{line}" for line in lines]
    for r, (*_, why) in zip(rejects, ODD_TERMS):
        assert why in r["reason"], r


def test_a_parquet_string_that_is_not_utf8_costs_its_row(capsys, tmp_path):
    raw = pa.array([ex("o1").encode(), b'"\xff\xfe"', ex("o3").encode()], pa.binary())
    o = pa.Array.from_buffers(pa.string(), 3, raw.buffers())  # a string column with bytes as they are
    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"s": [ex("k")] * 3, "p": [ex("p")] * 3, "o": o, "t": [T0, T0 + 1, T0 + 2]}), path)
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, [path])
    assert code == 0, err
    assert objects(answers) == [f"{EX}o1", f"{EX}o3"]
    assert [(r["source"], r["reason"]) for r in rejects] == [(f"{path}:row 2", "column o: not UTF-8 text")]
    assert '"\ufffd\ufffd"' in rejects[0]["text"]


def test_times_past_the_range_that_the_engine_computes_are_given_at_its_edges(capsys, tmp_path):
    """An event near year 9999: its NOTSEQ deadline and its windows end
    after 9999; an event near year 1: its window starts before it. An
    answer gives such a time as the nearest instant events may have
    (docs/language.md, "Times"), in every output format, so that the
    answers written as events are read back as events; the run goes on.
    A value computed from it (getENDTIME()) is a literal of any year."""
    events = tmp_path / "e.jsonl"
    events.write_text("".join(json.dumps({"s": ex(s), "p": ex("p"), "o": ex("o"), "t": t,
                                          "stream": f"{EX}s"}) + "\n"
                              for s, t in (("early", "0001-01-01T00:05:00Z"), ("late", "9999-12-31T23:55:00Z"))))
    notseq = PREFIXES + ('SELECT ?s (getENDTIME() AS ?end) WHERE { { ?s :p ?o } NOTSEQ "PT10M" { ?s :q ?c } }\n')
    code, answers, _, err = cep_run(capsys, tmp_path, notseq, [events])
    assert code == 0, err
    assert sorted((a["start"], a["end"], a["bindings"]["end"]["value"]) for a in answers) == [
        ("0001-01-01T00:05:00Z", "0001-01-01T00:15:00Z", "0001-01-01T00:15:00Z"),
        ("9999-12-31T23:55:00Z", "9999-12-31T23:59:59.999Z", "10000-01-01T00:05:00Z"),
    ]
    # grouped: the empty windows between the two give no row (without GROUP BY, each would count 0)
    window = PREFIXES + ("REGISTER QUERY w AS SELECT (COUNT(*) AS ?n) "
                         f"FROM STREAM <{EX}s> [RANGE 1h STEP 30m] WHERE {{ ?s :p ?o }} GROUP BY ?s\n")
    code, out, _, err = cep_run(capsys, tmp_path, window, [events], "--format", "csv")
    assert code == 0, err
    assert out.splitlines() == [  # the windows (0000-12-31T23:30, 00:30], ..., (23:30, 10000-01-01T00:30]
        "query,start,end,n",
        f'w,0001-01-01T00:00:00Z,0001-01-01T00:30:00Z,"""1""^^<{XSD}integer>"',
        f'w,0001-01-01T00:00:00Z,0001-01-01T01:00:00Z,"""1""^^<{XSD}integer>"',
        f'w,9999-12-31T23:00:00Z,9999-12-31T23:59:59.999Z,"""1""^^<{XSD}integer>"',
        f'w,9999-12-31T23:30:00Z,9999-12-31T23:59:59.999Z,"""1""^^<{XSD}integer>"',
    ]
    code, out, _, err = cep_run(capsys, tmp_path, window, [events], "--format", "parquet",
                                "--out", tmp_path / "w.parquet")
    assert code == 0, err
    assert pq.read_table(tmp_path / "w.parquet").column("end").to_pylist()[-1].year == 9999
    # the engine's answers are the reference's
    from cep.events import Event
    from cep.rules import parse_rules
    from tests.unit.support import checked_answers

    queries = parse_rules(window + notseq.replace(PREFIXES, ""), "q.rq")
    early, late = (checked_answers(queries, [Event(ex("k"), ex("p"), ex("o"), ms, ms, stream=f"<{EX}s>")])
                   for ms in (check.TIME_MIN_MS + 300_000, check.TIME_MAX_MS + 1 - 300_000))
    assert min(a.start for a in early) == check.TIME_MIN_MS and max(a.end for a in late) == check.TIME_MAX_MS
    # their triples, written as TriG, are events again: the same answers
    construct = PREFIXES + 'CONSTRUCT { ?s :unconfirmed ?o } WHERE { { ?s :p ?o } NOTSEQ "PT10M" { ?s :q ?c } }\n'
    code, out, _, err = cep_run(capsys, tmp_path, construct, [events], "--format", "trig")
    assert code == 0, err
    assert 'prov:endedAtTime "9999-12-31T23:59:59.999Z"^^xsd:dateTime' in out
    windowed = PREFIXES + ("REGISTER STREAM c AS CONSTRUCT { ?s :seen ?o } "
                           f"FROM STREAM <{EX}s> [RANGE 1h STEP 30m] WHERE {{ ?s :p ?o }}\n")
    code, more, _, err = cep_run(capsys, tmp_path, windowed, [events], "--format", "trig")
    assert code == 0, err
    (tmp_path / "answers.trig").write_text(out + more)
    read_back = PREFIXES + "SELECT ?s ?p ?o WHERE { ?s ?p ?o }\n"
    code, again, rejects, err = cep_run(capsys, tmp_path, read_back, [tmp_path / "answers.trig"])
    assert code == 0, err
    assert rejects == []
    assert sorted((a["bindings"]["s"]["value"], a["bindings"]["p"]["value"], a["end"]) for a in again) == [
        (f"{EX}early", f"{EX}seen", "0001-01-01T00:30:00Z"),
        (f"{EX}early", f"{EX}seen", "0001-01-01T01:00:00Z"),
        (f"{EX}early", f"{EX}unconfirmed", "0001-01-01T00:15:00Z"),
        (f"{EX}late", f"{EX}seen", "9999-12-31T23:59:59.999Z"),  # the two windows' triple: one solution
        (f"{EX}late", f"{EX}unconfirmed", "9999-12-31T23:59:59.999Z"),
    ]


def test_datetimes_of_every_year_read_back_as_written():
    for ms in (check.TIME_MIN_MS, check.TIME_MAX_MS, check.TIME_MIN_MS - 1, check.TIME_MAX_MS + 1,
               -62_198_755_200_000, 10**17, -(10**17), 0, -1):
        text = terms.format_datetime_ms(ms)
        assert terms.parse_datetime_ms(text) == ms, text
    assert terms.format_datetime_ms(check.TIME_MAX_MS + 1) == "10000-01-01T00:00:00Z"
    assert terms.format_datetime_ms(check.TIME_MIN_MS - 1) == "0000-12-31T23:59:59.999Z"
    assert terms.format_datetime_ms(-62_198_755_200_000) == "-0001-01-01T00:00:00Z"  # 0000 is 1 BCE, a leap year


# ========================================================= item 2: big terms


BIG = 3 * 1024 * 1024  # over Arrow's 1 MiB blocks and the csv module's 128 KiB fields


def big_rows():
    return [{"s": ex("k"), "p": ex("p"), "o": '"' + "x" * BIG + '"', "t": T0},
            {"s": ex("k"), "p": ex("p"), "o": f"<{EX}{'y' * BIG}>", "t": T0 + 1},
            {"s": ex("k"), "p": ex("p"), "o": ex("small"), "t": T0 + 2}]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet", "trig"])
def test_terms_of_megabytes_go_through_every_input_format(capsys, tmp_path, fmt):
    rows = big_rows()
    path = tmp_path / f"e.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.table({k: [r[k] for r in rows] for k in ("s", "p", "o", "t")}), path)
    else:
        path.write_text({"jsonl": jsonl_text, "csv": csv_text, "trig": trig_text}[fmt](rows))
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, [path])
    assert code == 0, err
    assert rejects == []
    assert sorted(a["bindings"]["o"]["value"] for a in answers) == sorted(
        ["x" * BIG, f"{EX}{'y' * BIG}", f"{EX}small"])


def test_terms_of_megabytes_go_through_every_output_format(capsys, tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text(jsonl_text(big_rows()))
    code, out, _, err = cep_run(capsys, tmp_path, SELECT_ALL, [path], "--format", "csv")
    assert code == 0, err
    limit = csv.field_size_limit(2 * BIG)
    try:
        got = list(csv.reader(io.StringIO(out)))
    finally:
        csv.field_size_limit(limit)
    assert sorted(r[4] for r in got[1:]) == sorted(r["o"] for r in big_rows())
    construct = PREFIXES + "CONSTRUCT { ?s :q ?o } WHERE { ?s :p ?o }\n"
    code, out, _, err = cep_run(capsys, tmp_path, construct, [path], "--format", "trig")
    assert code == 0, err
    back = tmp_path / "back.trig"
    back.write_text(out)
    events, rejects = read_events([back])
    assert rejects == [] and sorted(e.o for e in events) == sorted(r["o"] for r in big_rows())


def test_the_term_limit_is_the_same_in_every_format(capsys, tmp_path, monkeypatch):
    """A term of MAX_TERM_BYTES is taken, one byte more is a reject (with
    its place) in every format; shown here with a small limit."""
    assert check.term('"' + "x" * (terms.MAX_TERM_BYTES - 2) + '"', "o")
    with pytest.raises(check.Invalid, match="terms are limited to 16,777,216 bytes"):
        check.term('"' + "x" * (terms.MAX_TERM_BYTES - 1) + '"', "o")
    monkeypatch.setattr(terms, "MAX_TERM_BYTES", 2000)
    rows = [{"s": ex("k"), "p": ex("p"), "o": '"' + "é" * 999 + '"', "t": T0},  # 2,000 bytes
            {"s": ex("k"), "p": ex("p"), "o": '"' + "é" * 1000 + '"', "t": T0 + 1},  # 2,002 bytes
            {"s": f"<{EX}{'y' * 3000}>", "p": ex("p"), "o": ex("o"), "t": T0 + 2},
            {"s": ex("k"), "p": ex("p"), "o": ex("small"), "t": T0 + 3}]
    files = []
    for fmt, text in (("jsonl", jsonl_text), ("csv", csv_text), ("trig", trig_text), ("parquet", None)):
        path = tmp_path / f"e.{fmt}"
        if text is None:
            pq.write_table(pa.table({k: [r[k] for r in rows] for k in ("s", "p", "o", "t")}), path)
        else:
            path.write_text(text(rows))
        files.append(path)
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, files)
    assert code == 0, err
    # the four files hold the same events: one occurrence each (a stream is a set)
    assert sorted(a["bindings"]["o"]["value"] for a in answers) == sorted(["é" * 999, f"{EX}small"])
    places = {"jsonl": ("2", "3"), "csv": ("3", "4"), "trig": ("6", "8"), "parquet": ("row 2", "row 3")}
    assert sorted(r["source"] for r in rejects) == sorted(f"{tmp_path}/e.{fmt}:{p}"
                                                          for fmt, ps in places.items() for p in ps)
    for r in rejects:
        assert "terms are limited to 2,000 bytes" in r["reason"] or "a field is longer than 2,000" in r["reason"]


# ==================================================== item 14: blank nodes


def test_trig_blank_nodes_are_labelled_alike_on_every_run_and_apart_across_files(capsys, tmp_path):
    body = TRIG_PREFIXES + """
:g1 { _:b :p :o1 . [] :p :o2 . _:c :p ( 1 ) }
:g1 prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .
_:g { _:b :p :o3 }
_:g prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .
"""
    one, two = tmp_path / "one.trig", tmp_path / "two.trig"
    one.write_text(body)
    two.write_text(body)
    runs = [cep_run(capsys, tmp_path, SELECT_ALL, [one]) for _ in range(2)]
    assert runs[0][0] == 0 and runs[0][1] == runs[1][1]
    labels = {a["bindings"]["o"]["value"]: a["bindings"]["s"]["value"] for a in runs[0][1]}
    assert labels[f"{EX}o1"] == labels[f"{EX}o3"]  # _:b is one node in the file (TriG's scope)
    assert len(set(labels.values())) == 3
    join = PREFIXES + "SELECT ?x WHERE { ?x :p :o1 . ?x :p :o3 }\n"
    code, answers, _, err = cep_run(capsys, tmp_path, join, [one, two])
    assert code == 0, err
    assert len(answers) == 2  # each file's _:b with itself, never with the other file's


# ============================================= item 15: bytes not UTF-8


def test_a_trig_byte_that_is_not_utf8_costs_only_its_statement(capsys, tmp_path):
    path = tmp_path / "e.trig"
    path.write_bytes(TRIG_PREFIXES.encode() + b"""# a comment with \xfe in it costs nothing
:g1 { :k :p :o1 }
:g1 prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .
:g2 { :k :p "caf\xe9" }
:g2 prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .
:g3 { :k :p :o3 }
:g3 prov:generatedAtTime "2026-01-01T00:00:02Z"^^xsd:dateTime .
""")
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, [path])
    assert code == 0, err
    assert objects(answers) == [f"{EX}o1", f"{EX}o3"]
    byte = len(TRIG_PREFIXES.encode()) + len(b"# a comment with \xfe in it costs nothing\n"
                                             b':g1 { :k :p :o1 }\n:g1 prov:generatedAtTime "2026-01-01T00:00:00Z"'
                                             b'^^xsd:dateTime .\n:g2 { :k :p "caf') + 1
    assert [(r["source"], r["reason"]) for r in rejects] == [
        (f"{path}:7", f"not UTF-8 text (byte {byte} of the file); this statement is skipped")]
    assert rejects[0]["text"] == ':g2 { :k :p "caf\ufffd" }'


# ===================================================== item 16: one verdict


VERDICTS = [  # (s, p, o, the reason's words in every format, or the canonical object when taken)
    (f"<{EX}a b>", ex("p"), ex("o"), "an IRI cannot hold a space: <http://example.org/a b>"),
    (f"<{EX}a\\u0020b>", ex("p"), ex("o"), "an IRI cannot hold a space: <http://example.org/a b>"),
    (ex("k"), ex("p"), f"<{EX}x\\u007Cy>", "an IRI cannot hold '|'"),
    (ex("k"), ex("p"), f"<{EX}x\\u000Ay>", "an IRI cannot hold the control character U+000A"),
    ("<a>", ex("p"), ex("o"), "relative IRI <a>"),
    (ex("k"), ex("p"), '"1"^^<dt>', "relative IRI <dt>"),
    ('"lit"', ex("p"), ex("o"), "a subject is an IRI or a blank node, not a literal"),
    (ex("k"), ex("p"), '"\\uD800"', "D800 is not a Unicode character"),  # TriG's parser undoes escapes
    (ex("k"), ex("p"), f'"{"9" * 4001}"^^<{XSD}integer>', "the engine computes with numbers of up to 4,000"),
    (ex("k"), ex("p"), f"<{EX}\\u0041>", f"<{EX}A>"),
    (ex("k"), ex("p"), '"x"@EN', '"x"@en'),
    (ex("k"), ex("p"), f'"+0.{"1" * 100}0"^^<{XSD}decimal>', f'"+0.{"1" * 100}0"^^<{XSD}decimal>'),  # as written
]


@pytest.mark.parametrize("s, p, o, verdict", VERDICTS)
def test_a_term_gets_one_verdict_in_every_format(tmp_path, s, p, o, verdict):
    rows = [{"s": s, "p": p, "o": o, "t": T0}]
    files = {"jsonl": jsonl_text(rows), "csv": csv_text(rows), "trig": trig_text(rows)}
    for fmt, text in files.items():
        (tmp_path / f"e.{fmt}").write_text(text)
    pq.write_table(pa.table({k: [rows[0][k]] for k in ("s", "p", "o", "t")}), tmp_path / "e.parquet")
    for fmt in ("jsonl", "csv", "trig", "parquet"):
        events, rejects = read_events([tmp_path / f"e.{fmt}"])
        if verdict.startswith(("<", '"')):
            assert rejects == [] and [e.o for e in events] == [verdict], fmt
        else:
            assert events == [] and len(rejects) == 1 and verdict in rejects[0].reason, (fmt, rejects)


def test_a_relative_iri_is_refused_in_trig_unless_the_file_gives_a_base(tmp_path):
    path = tmp_path / "e.trig"
    path.write_text(TRIG_PREFIXES + '<g> { <a> :p :o }\n<g> prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .\n'
                    ':h { <a> :p :o . :k :p <../b> }\n:h prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .\n')
    events, rejects = read_events([path])
    assert events == []
    assert [(r.source, r.reason.split(":")[0]) for r in rejects] == [
        (f"{path}:4", "the graph's name"), (f"{path}:6", "subject"), (f"{path}:6", "object")]
    assert all("relative IRI" in r.reason for r in rejects) and "file:" not in repr(rejects)
    path.write_text(f"@base <{EX}dir/> .\n" + path.read_text())
    events, rejects = read_events([path])
    assert rejects == []
    assert sorted((e.s, e.o) for e in events) == [(f"<{EX}dir/a>", ex("o")), (f"<{EX}dir/a>", ex("o")),
                                                  (ex("k"), ex("b"))]


def test_a_trig_round_trip_keeps_every_term(capsys, tmp_path):
    events = tmp_path / "e.jsonl"
    events.write_text(jsonl_text([{"s": "_:b1", "p": ex("p"), "o": '"é\\u0001"@en', "t": T0},
                                  {"s": f"<urn:x:{'%20'}>", "p": ex("p"), "o": f'"1"^^<{XSD}integer>', "t": T0}]))
    construct = PREFIXES + "CONSTRUCT { ?s :q ?o } WHERE { ?s :p ?o }\n"
    code, out, _, err = cep_run(capsys, tmp_path, construct, [events], "--format", "trig")
    assert code == 0, err
    back = tmp_path / "back.trig"
    back.write_text(out)
    got, rejects = read_events([back])
    assert rejects == []
    assert sorted(e.o for e in got) == ['"1"^^<http://www.w3.org/2001/XMLSchema#integer>', '"é\\u0001"@en']
    assert "<urn:x:%20>" in {e.s for e in got}


def test_a_column_named_twice_in_a_csv_header_is_one_reject_for_the_file(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text(f"s,p,o,t,t\n{ex('k')},{ex('p')},{ex('o')},{T0},\n{ex('k')},{ex('p')},{ex('o')},{T0},{T0}\n")
    events, rejects = read_events([path])
    assert events == []
    assert [(r.source, r.reason) for r in rejects] == [
        (f"{path}:1", "the header names column t twice (columns 4, 5): which one holds the value is not clear; "
                      "file skipped")]


def test_an_obo_id_with_a_quote_is_not_made_an_iri(tmp_path):
    from cep.background.load import read_ontology

    path = tmp_path / "x.obo"
    path.write_text('format-version: 1.2\n\n[Term]\nid: GO:0001\n\n[Term]\nid: GO:00"02\nname: b\n')
    with pytest.raises(OntologyError) as caught:
        read_ontology(path)
    assert str(caught.value) == (f'{path}:7: OBO syntax error: id: GO:00"02: an IRI cannot hold a quote: '
                                 '<http://purl.obolibrary.org/obo/GO_00"02>')


def test_an_escaped_space_in_a_background_iri_is_refused(tmp_path):
    from cep.background.load import read_ontology

    path = tmp_path / "x.nt"
    path.write_text(f"{ex('a')} {ex('p')} {ex('b')} .\n{ex('a')} {ex('p')} <{EX}b\\u0020c> .\n")
    with pytest.raises(OntologyError, match=r"x\.nt:2:\d+: .*an IRI cannot hold a space"):
        read_ontology(path)


def test_control_characters_of_a_rejected_record_do_not_reach_the_terminal(capsys, tmp_path):
    """A reject is shown with the record's text; an escape sequence in it
    (colour, the window's title, clearing the screen) is shown escaped."""
    events = tmp_path / "e.nq"
    events.write_bytes(b'<http://example.org/a> <http://example.org/p> "\x1b[31mred\x1b]0;title\x07\xc2\x9b2J" <bad> .\n'
                       b'{"s": "\x1b[2J"}\n')
    (tmp_path / "e.jsonl").write_bytes(events.read_bytes().splitlines(keepends=True)[1])
    (tmp_path / "q.rq").write_text(SELECT_ALL)
    code = cli.main(["run", str(tmp_path / "q.rq"), "--events", str(events), str(tmp_path / "e.jsonl"), "-q"])
    err = capsys.readouterr().err
    assert code == 0
    assert err.count("cep: rejected") == 3, err
    assert r'"\x1b[31mred\x1b]0;title\x07\x9b2J"' in err and r'{"s": "\x1b[2J"}' in err
    assert not any(ch in err for ch in "\x1b\x07\x9b")


def test_a_json_lines_record_that_gives_a_key_twice_is_rejected_with_its_line(capsys, tmp_path):
    """{"t": A, "t": B} has no one meaning (RFC 8259 leaves it to the
    reader; Python's takes B): the record is refused, not read as one of
    them, whichever key it repeats, and the run goes on."""
    bad = [Raw('{"s": "%s", "p": "%s", "o": "%s", "t": %d, "t": %d}' % (ex("k"), ex("p"), ex("bad0"), T0, T0 + 9)),
           Raw('{"s": "%s", "s": "%s", "p": "%s", "o": "%s", "t": %d}' % (ex("k"), ex("j"), ex("p"), ex("bad1"), T0)),
           Raw('{"s": "%s", "p": "%s", "o": "%s", "t": %d, "stream": "%s", "stream": "%s"}'
               % (ex("k"), ex("p"), ex("bad2"), T0, f"{EX}a", f"{EX}b"))]
    rows, lines = interleaved(bad)
    path = tmp_path / "e.jsonl"
    path.write_text("".join(r + "\n" if isinstance(r, Raw) else jsonl_text([r]) for r in rows))
    code, answers, rejects, err = cep_run(capsys, tmp_path, SELECT_ALL, [path])
    assert code == 0, err
    assert objects(answers) == sorted(f"{EX}good{i}" for i in range(len(bad) + 1))
    assert [(r["source"], r["reason"]) for r in rejects] == [
        (f"{path}:{line}", f'the key "{key}" given twice in one object') for line, key in zip(lines, ["t", "s", "stream"])]
