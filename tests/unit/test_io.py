"""Readers and writers of cep.io: every format, every reject path (with its
exact file:line), sorting, and the TriG round trip."""

from __future__ import annotations

import csv
import io
import json
import re
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from cep import terms
from cep.errors import UsageError
from cep import io as cep_io
from cep.events import EVENTS, Answer, Event, Reject, answers_table, events_of
from cep.io import (
    CsvWriter,
    JsonlWriter,
    RdfWriter,
    answer_json,
    check_format,
    input_files,
    make_writer,
    write_rejects,
)
from cep.io import tables

EX = "http://example.org/"
XSD = terms.XSD
PREFIXES = (
    "@prefix : <http://example.org/> .\n"
    "@prefix prov: <http://www.w3.org/ns/prov#> .\n"
    "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
)
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")


def ex(name):
    return f"<{EX}{name}>"


def integer(n):
    return f'"{n}"^^<{XSD}integer>'


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def trig(tmp_path, body, name="s.trig"):
    return write(tmp_path, name, PREFIXES + body)


# the readers give events tables (cep.events.EVENTS); most tests here read
# their rows as Events
def _rows_of(reader):
    def read(path, rejects, *data):
        table = reader(path, rejects, *data)
        assert table.schema == EVENTS
        return events_of(table)
    return read


read_csv, read_jsonl, read_parquet, read_trig = (
    _rows_of(r) for r in (cep_io.read_csv, cep_io.read_jsonl, cep_io.read_parquet, cep_io.read_trig))


def read_events(paths):
    table, rejects = cep_io.read_events(paths)
    assert table.schema == EVENTS
    return events_of(table), rejects


def triples(events):
    return sorted((e.s, e.p, e.o, e.start, e.end) for e in events)


# ================================================================== TriG


def test_trig_instants_and_intervals(tmp_path):
    path = trig(tmp_path, """
:g1 { :a :price 1.50 . :a :name "A" }
:g1 prov:generatedAtTime "2026-01-01T00:00:05Z"^^xsd:dateTime .
GRAPH :g2 { :b :price 7 }
:g2 prov:startedAtTime "2026-01-01T01:00:00+01:00"^^xsd:dateTime ;
    prov:endedAtTime "2026-01-01T00:00:10.250Z"^^xsd:dateTime .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert rejects == []
    assert triples(events) == [
        (ex("a"), ex("name"), '"A"', T0 + 5000, T0 + 5000),
        (ex("a"), ex("price"), f'"1.50"^^<{XSD}decimal>', T0 + 5000, T0 + 5000),  # as written
        (ex("b"), ex("price"), integer(7), T0, T0 + 10250),
    ]
    sources = {e.o: e.source for e in events}
    assert sources['"A"'] == f"{path}:5"
    assert sources[integer(7)] == f"{path}:7"


def test_trig_sparql_style_prefixes_and_full_iris(tmp_path):
    path = write(tmp_path, "s.trig", """PREFIX ex: <http://example.org/>
PREFIX prov: <http://www.w3.org/ns/prov#>
<http://example.org/g> { ex:a ex:b ex:c }
<http://example.org/g> prov:generatedAtTime "2026-01-01T00:00:00"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert rejects == []
    assert triples(events) == [(ex("a"), ex("b"), ex("c"), T0, T0)]  # no zone: UTC
    assert events[0].source == f"{path}:3"


def test_trig_graph_without_timestamp_is_rejected_the_rest_goes_on(tmp_path):
    path = trig(tmp_path, """
:g1 { :a :b 1 }
:g1 prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .
:g2 { :a :b 2 . :a :b 3 }
""")
    rejects = []
    events = read_trig(path, rejects)
    assert triples(events) == [(ex("a"), ex("b"), integer(1), T0, T0)]
    assert len(rejects) == 1
    assert rejects[0].source == f"{path}:7"
    assert f"graph {ex('g2')} has no timestamp" in rejects[0].reason
    assert "prov:generatedAtTime" in rejects[0].reason
    assert "2 triple(s)" in rejects[0].text


@pytest.mark.parametrize("meta, reason", [
    (':g prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime , "2026-01-02T00:00:00Z"^^xsd:dateTime .',
     "has 2 different prov:generatedAtTime values"),
    (':g prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime ; '
     'prov:startedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime ; '
     'prov:endedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .',
     "both prov:generatedAtTime and prov:startedAtTime/prov:endedAtTime"),
    (':g prov:startedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .',
     "has prov:startedAtTime but no prov:endedAtTime"),
    (':g prov:endedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .',
     "has prov:endedAtTime but no prov:startedAtTime"),
    (':g prov:startedAtTime "2026-01-02T00:00:00Z"^^xsd:dateTime ; '
     'prov:endedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .',
     "ends (prov:endedAtTime 2026-01-01T00:00:00Z) before it starts"),
    (':g prov:generatedAtTime "yesterday" .', 'is "yesterday", not an xsd:dateTime literal'),
    (':g prov:generatedAtTime "2026-13-01T00:00:00Z"^^xsd:dateTime .', "malformed xsd:dateTime"),
])
def test_trig_bad_timestamps(tmp_path, meta, reason):
    path = trig(tmp_path, f"\n:g {{ :a :b :c }}\n{meta}\n")
    rejects = []
    assert read_trig(path, rejects) == []
    assert [r.source for r in rejects] == [f"{path}:5"]
    assert reason in rejects[0].reason


def test_trig_bad_graph_block_costs_only_itself(tmp_path):
    path = trig(tmp_path, """
:g1 { :a :b 1 }
:g1 prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .

:g2 { :a :b 2 ;;; , }
:g2 prov:generatedAtTime "2026-01-01T00:00:02Z"^^xsd:dateTime .

:g3 { :a :b 3 }
:g3 prov:generatedAtTime "2026-01-01T00:00:03Z"^^xsd:dateTime .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert [e.o for e in sorted(events, key=lambda e: e.start)] == [integer(1), integer(3)]
    assert len(rejects) == 1
    assert rejects[0].source == f"{path}:8"
    assert rejects[0].reason.startswith("TriG syntax error:")
    assert rejects[0].text == ":g2 { :a :b 2 ;;; , }"


@pytest.mark.parametrize("block, term", [
    (":a :b 2 . :d", ":d"),
    (":a :b 2 .\n  :d .\n  :e :f 2", ":d"),
    ('"lone"@en . :a :b 2', '"lone"@en'),
])
def test_trig_term_alone_in_a_block_with_triples_is_a_reject(tmp_path, block, term):
    # rdflib reads `:d` as nothing and keeps the block's triples: the
    # input would change silently
    path = trig(tmp_path, f"""
:g1 {{ :a :b 1 }}
:g1 prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .

:g2 {{ {block} }}
:g2 prov:generatedAtTime "2026-01-01T00:00:02Z"^^xsd:dateTime .

:g3 {{ :a :b 3 }}
:g3 prov:generatedAtTime "2026-01-01T00:00:03Z"^^xsd:dateTime .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert [e.o for e in sorted(events, key=lambda e: e.start)] == [integer(1), integer(3)]
    line = 8 + block[:block.index(term)].count("\n")
    assert [(r.source, r.reason) for r in rejects] == [
        (f"{path}:{line}", f"TriG syntax error: the term {term} stands alone in the graph's block, where a "
                           "triple was expected; this statement is skipped")]


def test_trig_blank_node_lists_and_collections_are_not_terms_alone(tmp_path):
    path = trig(tmp_path, """
:g1 { :a :b 1 . [ :p 2 ] . :a :b ( 3 ) }
:g1 prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert rejects == []
    assert rejects == []
    pairs = sorted((e.p, e.o if not e.o.startswith("_:") else "_:") for e in events if e.p in (ex("b"), ex("p")))
    assert pairs == [(ex("b"), integer(1)), (ex("b"), "_:"), (ex("p"), integer(2))]


def test_trig_error_inside_a_long_block_points_at_the_bad_line(tmp_path):
    path = trig(tmp_path, """
:g1 {
  :a :b 1 .
  :a :b "two" "three" .
  :a :b 4 .
}
:g1 prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .
""")
    rejects = []
    assert read_trig(path, rejects) == []
    assert [r.source for r in rejects] == [f"{path}:7"]


def test_trig_unclosed_block_does_not_swallow_the_next_graphs(tmp_path):
    path = trig(tmp_path, """
:g1 { :a :b 1
:g2 { :a :b 2 }
:g1 prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .
:g2 prov:generatedAtTime "2026-01-01T00:00:02Z"^^xsd:dateTime .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert triples(events) == [(ex("a"), ex("b"), integer(2), T0 + 2000, T0 + 2000)]
    assert [r.source for r in rejects] == [f"{path}:5"]


def test_trig_unterminated_string_is_reported_at_its_line(tmp_path):
    path = trig(tmp_path, """
:g1 { :a :b "no end }
:g1 prov:generatedAtTime "2026-01-01T00:00:01Z"^^xsd:dateTime .
:g2 { :a :b "fine. {really}" }
:g2 prov:generatedAtTime "2026-01-01T00:00:02Z"^^xsd:dateTime .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert [e.o for e in events] == ['"fine. {really}"']
    assert [r.source for r in rejects] == [f"{path}:5"]


def test_trig_bad_prefix_directive(tmp_path):
    path = write(tmp_path, "s.trig", """@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix ex <http://example.org/> .
<http://example.org/g> { <http://example.org/a> <http://example.org/b> 1 }
<http://example.org/g> prov:generatedAtTime "2026-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert triples(events) == [(ex("a"), ex("b"), integer(1), T0, T0)]
    assert [r.source for r in rejects] == [f"{path}:2"]


def test_trig_other_default_graph_triples_are_reported_once(tmp_path):
    path = trig(tmp_path, """
:g { :a :b :c }
:g prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime ; :source :sensor1 .
:x :y :z .
:x :y :w .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert len(events) == 1
    assert len(rejects) == 1  # metadata about :g (":source") is fine
    assert rejects[0].source == str(path)
    assert rejects[0].reason.startswith("2 triple(s) of the default graph skipped")


def test_trig_not_utf8(tmp_path):
    path = tmp_path / "s.trig"
    path.write_bytes(PREFIXES.encode() + b'\n:g { :a :b "caf\xe9" }\n')
    rejects = []
    assert read_trig(path, rejects) == []
    assert [r.source for r in rejects] == [f"{path}:5"]
    assert "not UTF-8" in rejects[0].reason


def test_trig_blank_node_graph_names_and_values(tmp_path):
    path = trig(tmp_path, """
_:g { _:x :b "v"@EN }
_:g prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .
""")
    rejects = []
    events = read_trig(path, rejects)
    assert rejects == []
    assert len(events) == 1 and events[0].s.startswith("_:") and events[0].o == '"v"@en'


# ============================================================ JSON Lines


def jsonl(tmp_path, rows, name="s.jsonl"):
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    return write(tmp_path, name, "\n".join(lines) + "\n")


def row(s=ex("a"), p=ex("b"), o=None, t="2026-01-01T00:00:00Z", **extra):
    out = {"s": s, "p": p, "o": integer(1) if o is None else o, "t": t}
    out.update(extra)
    return out


def test_jsonl_reads_terms_and_times(tmp_path):
    path = jsonl(tmp_path, [
        row(o=f'"1.50"^^<{XSD}decimal>'),
        "",  # blank lines are skipped but counted
        row(o='"x"@EN-gb', t=T0 + 7, t_end="2026-01-01T00:00:01.5Z"),
        row(s="_:b1", t=str(T0 + 9), t_end=None),
        row(t=f'"2026-01-01T00:00:02Z"^^<{XSD}dateTime>'),
    ])
    rejects = []
    events = read_jsonl(path, rejects)
    assert rejects == []
    assert [(e.s, e.o, e.start, e.end, e.source) for e in events] == [
        (ex("a"), f'"1.50"^^<{XSD}decimal>', T0, T0, f"{path}:1"),  # as written
        (ex("a"), '"x"@en-gb', T0 + 7, T0 + 1500, f"{path}:3"),
        ("_:b1", integer(1), T0 + 9, T0 + 9, f"{path}:4"),
        (ex("a"), integer(1), T0 + 2000, T0 + 2000, f"{path}:5"),
    ]


BAD_ROWS = [
    ('{"s": "<http://ex.org/a>", ', "not JSON:"),
    ("[1, 2]", "expected a JSON object"),
    ({"s": ex("a"), "p": ex("b"), "o": ex("c")}, "missing column t"),
    ({"p": ex("b"), "t": 0}, "missing columns s, o"),
    (row(s="<a b>"), "column s: an IRI cannot hold a space: <a b>"),
    (row(s='"lit"'), "column s: a subject is an IRI or a blank node, not a literal"),
    (row(p="_:b"), "column p: a predicate is an IRI"),
    (row(o="plain"), "column o: not an N-Triples term"),
    (row(o=5), "column o: expected an RDF term in N-Triples syntax as a string, got 5"),
    (row(o=""), "column o is empty"),
    (row(t="2026-01-01 00:00"), "column t: '2026-01-01 00:00' is neither xsd:dateTime text"),
    (row(t=1.5), "column t: 1.5 is not a whole number of milliseconds"),
    (row(t=True), "column t: expected a time, got true"),
    (row(t=f'"5"^^<{XSD}integer>'), "is not an xsd:dateTime literal"),
    (row(t_end="2025-12-31T23:59:59Z"), "t_end (2025-12-31T23:59:59Z) is before t (2026-01-01T00:00:00Z)"),
    (row(t_end="soon"), "column t_end:"),
]


@pytest.mark.parametrize("bad, reason", BAD_ROWS)
def test_jsonl_each_bad_row_is_rejected_with_its_line(tmp_path, bad, reason):
    path = jsonl(tmp_path, [row(t=T0), bad, row(t=T0 + 1)])
    rejects = []
    events = read_jsonl(path, rejects)
    assert [e.start for e in events] == [T0, T0 + 1]
    assert len(rejects) == 1
    assert rejects[0].source == f"{path}:2"
    assert reason in rejects[0].reason
    assert rejects[0].text == (bad if isinstance(bad, str) else json.dumps(bad))


def test_jsonl_bad_utf8_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(json.dumps(row()).encode() + b'\n{"s": "\xff"}\n' + json.dumps(row()).encode() + b"\n")
    rejects = []
    assert len(read_jsonl(path, rejects)) == 2
    assert [(r.source, r.reason) for r in rejects] == [(f"{path}:2", "not UTF-8 text")]


# =================================================================== CSV


def csv_file(tmp_path, rows, header=("s", "p", "o", "t"), name="s.csv"):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if header:
        w.writerow(header)
    for r in rows:
        w.writerow(r)
    return write(tmp_path, name, buf.getvalue())


def test_csv_reads_rows(tmp_path):
    path = csv_file(tmp_path, [
        [ex("a"), ex("b"), '"a, \\"quoted\\" value"', "2026-01-01T00:00:00Z", ""],
        ["_:x", ex("b"), f'"0010"^^<{XSD}integer>', str(T0 + 1), str(T0 + 5)],
    ], header=(" s", "p", "o", "t", "t_end "))
    rejects = []
    events = read_csv(path, rejects)
    assert rejects == []
    assert [(e.s, e.o, e.start, e.end, e.source) for e in events] == [
        (ex("a"), '"a, \\"quoted\\" value"', T0, T0, f"{path}:2"),
        ("_:x", f'"0010"^^<{XSD}integer>', T0 + 1, T0 + 5, f"{path}:3"),  # as written
    ]


def test_csv_row_after_multiline_field_reports_its_own_start_line(tmp_path):
    path = write(tmp_path, "s.csv", "s,p,o,t\n"
                 f'{ex("a")},{ex("b")},"""x""",0\n'
                 f'"{ex("a")}\nstill the same field",{ex("b")},"""y""",0\n'
                 f'<bad iri>,{ex("b")},"""z""",0\n')
    rejects = []
    events = read_csv(path, rejects)
    assert [e.o for e in events] == ['"x"']
    assert [r.source for r in rejects] == [f"{path}:3", f"{path}:5"]
    assert "an IRI cannot hold a space" in rejects[1].reason


@pytest.mark.parametrize("bad, reason", [
    ([ex("a"), ex("b"), integer(1)], "the row has 3 fields, the header 4"),
    ([ex("a"), ex("b"), "1", "0"], "column o: not an N-Triples term"),
    (['"s"', ex("b"), ex("c"), "0"], "a subject is an IRI or a blank node"),
    ([ex("a"), ex("b"), ex("c"), "noon"], "neither xsd:dateTime text"),
    ([ex("a"), ex("b"), ex("c"), ""], "column t is empty"),
])
def test_csv_each_bad_row_is_rejected_with_its_line(tmp_path, bad, reason):
    good = [ex("a"), ex("b"), ex("c"), "0"]
    path = csv_file(tmp_path, [good, bad, good])
    rejects = []
    assert len(read_csv(path, rejects)) == 2
    assert [r.source for r in rejects] == [f"{path}:3"]
    assert reason in rejects[0].reason


def test_csv_header_without_a_column_skips_the_file(tmp_path):
    path = csv_file(tmp_path, [[ex("a"), ex("b"), ex("c")]], header=("s", "p", "o"))
    rejects = []
    assert read_csv(path, rejects) == []
    assert [r.source for r in rejects] == [f"{path}:1"]
    assert "the header lacks column t" in rejects[0].reason


def test_csv_extra_columns_are_ignored(tmp_path):
    path = csv_file(tmp_path, [["x", ex("a"), ex("b"), ex("c"), "0"]], header=("id", "s", "p", "o", "t"))
    rejects = []
    assert [e.s for e in read_csv(path, rejects)] == [ex("a")] and rejects == []


# =============================================================== Parquet


def parquet(tmp_path, columns: dict, name="s.parquet"):
    path = tmp_path / name
    pq.write_table(pa.table(columns), path)
    return path


def test_parquet_reads_rows_with_all_kinds_of_times(tmp_path):
    path = parquet(tmp_path, {
        "s": [ex("a"), ex("a"), "_:b"],
        "p": [ex("p")] * 3,
        "o": [f'"1.50"^^<{XSD}decimal>', '"x"@EN', integer(3)],
        "t": ["2026-01-01T00:00:00Z", str(T0 + 5), "2026-01-01T01:00:00+01:00"],
        "t_end": [None, str(T0 + 9), "2026-01-01T00:00:00.5Z"],
    })
    rejects = []
    events = read_parquet(path, rejects)
    assert rejects == []
    assert [(e.s, e.o, e.start, e.end, e.source) for e in events] == [
        (ex("a"), f'"1.50"^^<{XSD}decimal>', T0, T0, f"{path}:row 1"),  # as written
        (ex("a"), '"x"@en', T0 + 5, T0 + 9, f"{path}:row 2"),
        ("_:b", integer(3), T0, T0 + 500, f"{path}:row 3"),
    ]


def test_parquet_integer_and_timestamp_time_columns(tmp_path):
    ts = pa.array([T0 * 1000, (T0 + 1500) * 1000], pa.timestamp("us", tz="UTC"))
    path = parquet(tmp_path, {"s": [ex("a")] * 2, "p": [ex("p")] * 2, "o": [ex("o")] * 2,
                              "t": pa.array([T0, T0 + 1], pa.int64()), "t_end": ts})
    table = cep_io.read_parquet(path, [])
    assert table["start"].to_pylist() == [T0, T0 + 1]
    assert table["end"].to_pylist() == [T0, T0 + 1500]


def test_parquet_t_end_column_without_values(tmp_path):
    path = parquet(tmp_path, {"s": [ex("a")], "p": [ex("p")], "o": [ex("o")], "t": [T0],
                              "t_end": pa.array([None], pa.null())})
    rejects = []
    assert [(e.start, e.end) for e in read_parquet(path, rejects)] == [(T0, T0)] and rejects == []


def test_parquet_each_bad_row_is_rejected_with_its_row_number(tmp_path):
    good = (ex("a"), ex("p"), integer(1), "2026-01-01T00:00:00Z", None)
    rows = [
        good,
        ("<a b>", ex("p"), integer(1), "2026-01-01T00:00:00Z", None),   # row 2
        ('"lit"', ex("p"), integer(1), "2026-01-01T00:00:00Z", None),   # row 3
        (ex("a"), ex("p"), None, "2026-01-01T00:00:00Z", None),         # row 4
        (ex("a"), ex("p"), integer(1), "2026-02-30T00:00:00Z", None),   # row 5: no such day
        (ex("a"), ex("p"), integer(1), None, None),                     # row 6
        (ex("a"), ex("p"), integer(1), "2026-01-01T00:00:01Z", "2026-01-01T00:00:00Z"),  # row 7
        (ex("a"), ex("p"), integer(1), "2026-01-01T00:00:01Z", "later"),  # row 8
        good,
    ]
    path = parquet(tmp_path, {name: [r[i] for r in rows] for i, name in enumerate(("s", "p", "o", "t", "t_end"))})
    rejects = []
    events = read_parquet(path, rejects)
    assert [e.source for e in events] == [f"{path}:row 1", f"{path}:row 9"]
    got = {r.source: r.reason for r in rejects}
    assert list(got) == [f"{path}:row {i}" for i in range(2, 9)]
    assert "an IRI cannot hold a space" in got[f"{path}:row 2"]
    assert "not a literal" in got[f"{path}:row 3"]
    assert got[f"{path}:row 4"] == "column o is empty"
    assert "malformed xsd:dateTime" in got[f"{path}:row 5"] or "neither" in got[f"{path}:row 5"]
    assert got[f"{path}:row 6"] == "column t is empty"
    assert got[f"{path}:row 7"] == "t_end (2026-01-01T00:00:00Z) is before t (2026-01-01T00:00:01Z)"
    assert "column t_end:" in got[f"{path}:row 8"]


def test_parquet_missing_column_and_unreadable_file(tmp_path):
    path = parquet(tmp_path, {"s": [ex("a")], "p": [ex("p")], "o": [ex("o")]})
    rejects = []
    assert read_parquet(path, rejects) == []
    assert rejects[0].source == str(path) and "no column t" in rejects[0].reason
    broken = write(tmp_path, "broken.parquet", "not parquet at all")
    rejects = []
    assert read_parquet(broken, rejects) == []
    assert rejects[0].source == str(broken) and rejects[0].reason.startswith("cannot read the Parquet file")


def test_parquet_wrong_column_type_skips_the_file(tmp_path):
    path = parquet(tmp_path, {"s": [ex("a")], "p": [ex("p")], "o": [ex("o")], "t": [1.5]})
    rejects = []
    assert read_parquet(path, rejects) == []
    assert "column t has type double" in rejects[0].reason


def test_columnar_path_agrees_with_the_row_path(tmp_path):
    objects = [integer(1), integer("007"), f'"-0.0"^^<{XSD}decimal>', f'"2.50"^^<{XSD}decimal>',
               f'"10.0"^^<{XSD}decimal>', f'"1E3"^^<{XSD}double>', '"tab\\there"', '"é"@FR',
               f'"2026-01-01T00:00:00.100Z"^^<{XSD}dateTime>', f'"2026-01-01T00:00:00.12Z"^^<{XSD}dateTime>',
               "<http://ex.org/\\u0041>", "_:x1", '  "padded"  ', f'"true"^^<{XSD}boolean>']
    n = len(objects)
    times = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5Z", "1969-12-31T23:59:59.5Z", str(T0),
             "2026-01-01T00:00:00", "2026-01-01T00:00:00-05:00", "2026-01-01T24:00:00Z",
             "-5"] + ["2026-01-01T00:00:00.123Z"] * (n - 8)
    table = {"s": [ex("a")] * n, "p": [ex("p")] * n, "o": objects, "t": times}
    pq_path = parquet(tmp_path, table)
    columns = cep_io.read_parquet(pq_path, [])
    rows = [{k: table[k][i] for k in table} for i in range(n)]
    jl_path = jsonl(tmp_path, rows)
    expected = cep_io.read_jsonl(jl_path, [])
    assert columns.select(["s", "p", "o", "start", "end"]) == expected.select(["s", "p", "o", "start", "end"])
    assert columns["o"].to_pylist() == [terms.canonical(o) for o in objects]


def test_fast_term_patterns_match_only_canonical_text():
    samples = [
        "<http://ex.org/a>", "<http://ex.org/a b>", "<>", "_:b1", "_:b.1", "_:", '""', '"a"', '"a\\"b"',
        '"x"@en', '"x"@EN', '"x"@en-GB', '"x"@en-gb', '"x\x01"',
        *(f'"{v}"^^<{XSD}integer>' for v in ["0", "-0", "7", "-7", "07", "+7", "12345678901234567890"]),
        *(f'"{v}"^^<{XSD}decimal>' for v in ["0.0", "-0.0", "1.0", "1.50", "1.05", "-0.5", ".5", "1.",
                                                   "10.0", "100.25", "00.5"]),
        *(f'"{v}"^^<{XSD}dateTime>' for v in ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.1Z",
                                                    "2026-01-01T00:00:00.10Z", "2026-01-01T00:00:00.001Z",
                                                    "2026-01-01T00:00:00.0001Z", "2026-02-30T00:00:00Z",
                                                    "2026-01-01T24:00:00Z", "0999-01-01T00:00:00Z",
                                                    "2026-01-01T00:00:00+00:00"]),
    ]
    for role, pattern in tables.FAST_TERM.items():
        matched = pc.match_substring_regex(pa.array(samples), pattern).to_pylist()
        for text, fast in zip(samples, matched):
            if fast:
                assert terms.canonical(text) == text, (role, text)
                assert re.fullmatch(pattern.strip("^$"), text)
    fast_o = dict(zip(samples, pc.match_substring_regex(pa.array(samples), tables.FAST_TERM["o"]).to_pylist()))
    assert fast_o[f'"7"^^<{XSD}integer>'] and fast_o[f'"1.05"^^<{XSD}decimal>'] and fast_o['"x"@en-gb']


def test_fast_terms_tell_integers_as_the_pattern_does():
    """tables._fast_terms tells a column's integer literals by string
    kernels, the other terms by FAST_TERM: the same verdicts as the
    pattern on every term (mixed columns, nulls, terms past FAST_LENGTH)."""
    integers = [f'"{v}"^^<{XSD}integer>' for v in ["0", "-0", "7", "-7", "07", "+7", "-", "", "1 ", "--1", "\uff11",
                                                     "1" * 2000, "12345678901234567890", '1"']]
    others = ["<http://ex.org/a>", '"a"', f'"1.5"^^<{XSD}decimal>', f'"7"^^<{XSD}integer> ', f'x"7"^^<{XSD}integer>',
              f'"7"^^<{XSD}integer>^^<{XSD}integer>', f'"^^<{XSD}integer>', "_:b1", None]
    for column in (integers, integers + others, others, [integers[2], None]):
        arr = pa.array(column, pa.string())
        for role, pattern in tables.FAST_TERM.items():
            want = pc.and_(pc.match_substring_regex(arr, pattern), pc.less_equal(pc.binary_length(arr), tables.FAST_LENGTH))
            assert tables._fast_terms(arr, role).to_pylist() == want.to_pylist(), (role, column)


# ============================================================ read_events


def test_read_events_sorts_unsorted_input_across_files(tmp_path):
    jsonl(tmp_path, [row(o=integer(3), t=T0 + 3), row(o=integer(1), t=T0 + 1, t_end=T0 + 9),
                     row(o=integer(2), t=T0 + 1)], name="b.jsonl")
    csv_file(tmp_path, [[ex("a"), ex("b"), integer(0), str(T0)], [ex("0"), ex("b"), integer(0), str(T0 + 1)]],
             name="a.csv")
    write(tmp_path, "notes.txt", "ignored in a directory")
    events, rejects = read_events([tmp_path])
    assert rejects == []
    assert [(e.start, e.end, e.s, e.o) for e in events] == [
        (T0, T0, ex("a"), integer(0)),
        (T0 + 1, T0 + 1, ex("0"), integer(0)),
        (T0 + 1, T0 + 1, ex("a"), integer(2)),
        (T0 + 1, T0 + 9, ex("a"), integer(1)),
        (T0 + 3, T0 + 3, ex("a"), integer(3)),
    ]


def test_input_files_directory_order_and_errors(tmp_path):
    for name in ("b.trig", "a.parquet", "c.CSV", "skip.txt", ".hidden.csv"):
        write(tmp_path, name, "")
    assert [p.name for p in input_files([tmp_path])] == ["a.parquet", "b.trig", "c.CSV"]
    with pytest.raises(UsageError, match=r"unknown event file type \.txt"):
        input_files([tmp_path / "skip.txt"])
    with pytest.raises(UsageError, match="no such file or directory"):
        input_files([tmp_path / "missing.trig"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="holds no event files"):
        input_files([empty])


# =============================================================== writers

A = ex("ACME")
SELECT = Answer("q", T0, T0 + 5000, bindings=(("company", A), ("price", f'"1.5"^^<{XSD}decimal>')))
CONSTRUCT = Answer("c", T0 + 1, T0 + 1250, triples=((A, ex("crashed"), '"yes"@en'), ("_:c0", ex("p"), A)))


def test_jsonl_select_answer():
    out = io.StringIO()
    w = JsonlWriter(out)
    w.write(answers_table([SELECT, Answer("q", T0, T0, bindings=(("company", A),))]))
    w.close()
    first, second = [json.loads(line) for line in out.getvalue().splitlines()]
    assert first == {
        "query": "q",
        "bindings": {"company": {"type": "uri", "value": EX + "ACME"},
                     "price": {"type": "literal", "value": "1.5", "datatype": XSD + "decimal"}},
        "start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:00:05Z",
    }
    assert list(first) == ["query", "bindings", "start", "end"]
    assert second["bindings"] == {"company": {"type": "uri", "value": EX + "ACME"}}  # unbound: left out


def test_jsonl_construct_answer_with_milliseconds():
    assert answer_json(CONSTRUCT) == {
        "query": "c",
        "triples": [
            {"s": {"type": "uri", "value": EX + "ACME"}, "p": {"type": "uri", "value": EX + "crashed"},
             "o": {"type": "literal", "value": "yes", "xml:lang": "en"}},
            {"s": {"type": "bnode", "value": "c0"}, "p": {"type": "uri", "value": EX + "p"},
             "o": {"type": "uri", "value": EX + "ACME"}},
        ],
        "start": "2026-01-01T00:00:00.001Z", "end": "2026-01-01T00:00:01.25Z",
    }


def test_csv_writer_streams_with_known_columns():
    out = io.StringIO()
    w = CsvWriter(out, ["company", "price", "end"])
    w.write(answers_table([SELECT]))
    w.write(answers_table([Answer("q", T0, T0, bindings=(("company", '"a, \\"b\\""'),))]))
    w.close()
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [
        ["query", "start", "end", "company", "price", "?end"],
        ["q", "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z", A, f'"1.5"^^<{XSD}decimal>', ""],
        ["q", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", '"a, \\"b\\""', "", ""],
    ]


def test_csv_writer_without_columns_uses_first_seen_order():
    out = io.StringIO()
    w = CsvWriter(out)
    w.write(answers_table([Answer("q", T0, T0, bindings=(("z", A),)),
                           Answer("r", T0, T0, bindings=(("a", A), ("z", A)))]))
    assert out.getvalue() == ""  # held until the columns are known
    w.close()
    assert out.getvalue().splitlines()[0] == "query,start,end,z,a"


def test_csv_and_trig_refuse_the_other_form():
    with pytest.raises(UsageError, match="CONSTRUCT"):
        CsvWriter(io.StringIO(), ["x"]).write(answers_table([CONSTRUCT]))
    with pytest.raises(UsageError, match="SELECT"):
        RdfWriter(io.StringIO(), "trig").write(answers_table([SELECT]))


def test_check_format_names_the_queries():
    from types import SimpleNamespace as Q

    queries = [Q(name="sel", form="select"), Q(name="con", form="construct")]
    check_format("jsonl", queries)
    with pytest.raises(UsageError, match="--format csv writes SELECT answers only, and con is a CONSTRUCT"):
        check_format("csv", queries)
    with pytest.raises(UsageError, match="--format trig writes CONSTRUCT answers only, and sel is a SELECT"):
        check_format("trig", queries)
    with pytest.raises(UsageError, match="unknown output format 'xml'"):
        make_writer("xml", io.StringIO())


def test_trig_writer_round_trips_through_the_trig_reader(tmp_path):
    answers = [
        CONSTRUCT,
        Answer("c", T0 + 2000, T0 + 2000, triples=((A, ex("note"), '"line\\nbreak \\"q\\""'),)),
        Answer("odd name/1", T0, T0 + 86_400_000, triples=((A, ex("p"), integer(-4)),)),
    ]
    path = tmp_path / "answers.trig"
    with open(path, "w", encoding="utf-8") as handle:
        w = make_writer("trig", handle)
        w.write(answers_table(answers))
        w.close()
    text = path.read_text()
    assert "<urn:cep:answer:c:1> {" in text and "<urn:cep:answer:c:2> {" in text
    assert "<urn:cep:answer:odd%20name%2F1:1>" in text
    rejects = []
    events = read_trig(path, rejects)
    assert rejects == []
    got = sorted((e.s if not e.s.startswith("_:") else "_:", e.p, e.o, e.start, e.end) for e in events)
    want = sorted((s if not s.startswith("_:") else "_:", p, o, a.start, a.end)
                  for a in answers for s, p, o in a.triples)
    assert got == want


def test_rejects_are_written_as_json_lines():
    out = io.StringIO()
    write_rejects([Reject("f.csv:3", "column t is empty", "a,b,c,"), Reject("g.trig", "why")], out)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"source": "f.csv:3", "reason": "column t is empty", "text": "a,b,c,"},
        {"source": "g.trig", "reason": "why", "text": ""},
    ]


# ============================================================ the sample

ROOT = Path(__file__).resolve().parents[2]


def test_stock_example_expected_answers_follow_from_the_data():
    """The README's two answers, found by the definition of query (1):
    three quotes of one company at t1 < t2 < t3, p2 < 0.7 p1, p3 > 1.05 p1,
    t3 - t1 < 30 days."""
    events, rejects = read_events([ROOT / "examples/stock/ticks.trig"])
    assert rejects == [] and len(events) == 39
    price = ex("hasStockPrice")
    quotes = {}
    for e in events:
        assert e.p == price and e.start == e.end
        quotes.setdefault(e.s, []).append((e.start, Decimal(terms.split(e.o)[1])))
    found = []
    for company, qs in quotes.items():
        for t1, p1 in qs:
            for t2, p2 in qs:
                for t3, p3 in qs:
                    if t1 < t2 < t3 and p2 < p1 * Decimal("0.7") and p3 > p1 * Decimal("1.05") \
                            and t3 - t1 < 30 * 86_400_000:
                        found.append((company, str(p1), str(p2), str(p3),
                                      terms.format_datetime_ms(t1), terms.format_datetime_ms(t3)))
    assert sorted(found) == [
        (A, "100", "65.80", "106", "2026-01-05T10:00:00Z", "2026-01-25T10:00:00Z"),
        (A, "97.5", "65.80", "106", "2026-01-09T10:00:00Z", "2026-01-25T10:00:00Z"),
    ]


def test_the_spark_sinks_write_the_in_process_writers_lines():
    """The Spark engine's raw output (typed bindings and triples, as its
    workers give them) goes through the same writer as the local engine's
    answers; its late and rejected records through reject_json."""
    from cep.spark import sinks, worker

    raw = pa.Table.from_pylist([
        {"kind": "answer", "query": "q", "bindings": [("price", f'"1.5"^^<{XSD}decimal>'), ("company", A)],
         "start": T0, "end": T0 + 5000},
        {"kind": "late", "start": T0, "end": T0, "s": A, "p": ex("p"), "o": A, "source": "e.jsonl:3",
         "reason": "late: ends before the watermark", "text": f"{A} {ex('p')} {A}"},
        {"kind": "answer", "query": "c", "triples": [{"s": A, "p": ex("crashed"), "o": '"yes"@en'},
                                                      {"s": "_:c0", "p": ex("p"), "o": A}],
         "start": T0 + 1, "end": T0 + 1250},
    ], worker.OUTPUT_SCHEMA)
    (out,) = sinks._json_lines(raw.to_batches())
    assert out.column("kind").to_pylist() == ["answer", "late", "answer"]
    assert [json.loads(line) for line in out.column("value").to_pylist()] == [
        answer_json(SELECT), {"source": "e.jsonl:3", "reason": "late: ends before the watermark",
                              "text": f"{A} {ex('p')} {A}"}, answer_json(CONSTRUCT)]
    shown = io.StringIO()
    JsonlWriter(shown).write(sinks.answers(raw))  # what the console sink writes
    assert [json.loads(line) for line in shown.getvalue().splitlines()] == [answer_json(SELECT),
                                                                             answer_json(CONSTRUCT)]


def test_the_spark_console_keeps_an_order_by_querys_order():
    """A micro-batch's answers come from Spark's groups in any order, so the
    console sink sorts them; an ORDER BY query's answers of one evaluation
    come from its one group in their order, which the sort keeps (W3C pp16:
    a literal sorts after IRIs, though its N-Triples text sorts first)."""
    from cep.spark import sinks, worker

    def raw(query, values):
        return [{"kind": "answer", "query": query, "bindings": [("x", v)], "start": T0, "end": T0}
                for v in values]

    ordered = [ex("a"), ex("b"), '"test"']
    table = pa.Table.from_pylist(raw("o", ordered) + raw("u", list(reversed(ordered))), worker.OUTPUT_SCHEMA)
    order = sinks._time_order(sinks.answers(table), {"o"})
    picked = sinks.answers(table).take(pa.array(order, pa.int64()))
    values = [dict(b)["x"] for b in picked["bindings"].to_pylist()]
    assert values[:3] == ordered
    assert values[3:] == sorted(ordered)  # a query without ORDER BY: sorted by its terms' text


# ======================================================== terms as written
# RDF 1.1 term equality (issue 19): a literal keeps its lexical form in every
# reader, in the table Spark's input goes through, and in the Prolog term;
# only the N-Triples syntax is made canonical (escapes, a language tag's case).

AS_WRITTEN = [
    f'"01"^^<{XSD}integer>', f'"+1"^^<{XSD}integer>', f'"1.0e0"^^<{XSD}double>', f'"0"^^<{XSD}boolean>',
    f'"1.50"^^<{XSD}decimal>', f'"2006-08-23Z"^^<{XSD}date>', f'"2006-08-23T10:00:00+05:00"^^<{XSD}dateTime>',
    f'"2006-08-23T10:00:00"^^<{XSD}dateTime>', f'"PT90M"^^<{XSD}duration>', f'"abc"^^<{XSD}integer>',
]


@pytest.mark.parametrize("term", AS_WRITTEN)
def test_every_reader_keeps_a_literal_as_written(tmp_path, term):
    rows = [{"s": ex("a"), "p": ex("p"), "o": term, "t": T0}]
    write(tmp_path, "e.jsonl", json.dumps(rows[0]) + "\n")
    pq.write_table(pa.table({k: [rows[0][k]] for k in ("s", "p", "o", "t")}), tmp_path / "e.parquet")
    lex, _, datatype = term[1:].partition('"^^')
    trig(tmp_path, f':g {{ :a :p "{lex}"^^{datatype} }}\n:g prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .\n',
         "e.trig")
    for name in ("e.jsonl", "e.parquet", "e.trig"):
        events, rejects = read_events([tmp_path / name])
        assert rejects == [] and [e.o for e in events] == [term], name
    # the table of a Spark DataFrame goes through the same checks
    table, bad = tables.checked_rows(pa.table({"s": [ex("a")], "p": [ex("p")], "o": [term],
                                               "start": pa.array([T0], pa.int64()), "end": pa.array([T0], pa.int64())}))
    assert bad == [] and table.column("o").to_pylist() == [term]


def test_canonical_n_triples_normalizes_the_syntax_not_the_lexical_form():
    assert terms.canonical('"\\u0041"^^<http://www.w3.org/2001/XMLSchema#string>') == '"A"'
    assert terms.canonical('"chat"@FR-be') == '"chat"@fr-be'
    assert terms.canonical(f'"01"^^<{XSD}integer>') == f'"01"^^<{XSD}integer>'


def test_a_literal_has_its_value_encoding_only_in_canonical_form():
    from cep import prolog as pl

    assert terms.to_prolog(f'"1"^^<{XSD}integer>') == 1
    assert terms.to_prolog(f'"false"^^<{XSD}boolean>') == pl.Struct("bool", pl.Atom("false"))
    assert terms.to_prolog(f'"01"^^<{XSD}integer>') == pl.Struct("lv", pl.Str("01"), pl.Atom(XSD + "integer"), 1)
    # another lexical form keeps its text beside the value; an ill-typed one or
    # another datatype is l(Lexical, Datatype)
    assert [terms.to_prolog(term).functor for term in AS_WRITTEN] == ["lv"] * 5 + ["l"] + ["lv"] * 3 + ["l"]
