"""Inputs of cep.io beyond the per-format readers of test_io.py: N-Quads
and N-Triples streams, gzip-compressed files of every format, standard
input, reading in bounded batches, the time order of cep.io.order, and
hostile files (odd bytes, huge lines, cut or damaged gzip)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cep import io as cep_io
from cep import terms
from cep.errors import UsageError
from cep.events import EVENTS, events_of
from cep.io import lines
from cep.io.event_time import FAR
from cep.io.order import ORDER, time_ordered
from cep.io.readers import Input, file_batches, inputs

ROOT = Path(__file__).resolve().parents[2]
EX = "http://example.org/"
PROV = "http://www.w3.org/ns/prov#"
XSD = terms.XSD
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")


def ex(name):
    return f"<{EX}{name}>"


def when(ms):
    return f'"{terms.format_datetime_ms(ms)}"^^<{XSD}dateTime>'


def gen(node, ms, graph=""):
    return f"{node} <{PROV}generatedAtTime> {when(ms)} {graph}.".replace("  ", " ")


def write(path, text, mode="w"):
    if mode == "w":
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def triples(table):
    return [(e.s, e.p, e.o, e.start, e.end, e.source) for e in events_of(table)]


# ================================================================ N-Quads


def test_nquads_a_named_graph_is_an_event_timed_as_in_trig(tmp_path):
    path = write(tmp_path / "s.nq", "\n".join([
        "# ticks",
        f'{ex("ACME")} {ex("price")} "100"^^<{XSD}integer> {ex("tick1")} .',
        f'{ex("ACME")} {ex("volume")} "7"^^<{XSD}integer> {ex("tick1")} .',
        gen(ex("tick1"), T0),
        "",
        f"{ex('tick2')} <{PROV}startedAtTime> {when(T0 + 1000)} .",
        f'{ex("ACME")} {ex("price")} "90"^^<{XSD}integer> {ex("tick2")} .   # a comment',
        f"{ex('tick2')} <{PROV}endedAtTime> {when(T0 + 5000)} .",
    ]) + "\n")
    rejects = []
    got = triples(cep_io.read_nquads(path, rejects))
    assert rejects == []
    # a graph's triples are one record, the place of the time line that decided it
    assert got == [
        (ex("ACME"), ex("price"), f'"100"^^<{XSD}integer>', T0, T0, f"{path}:4"),
        (ex("ACME"), ex("volume"), f'"7"^^<{XSD}integer>', T0, T0, f"{path}:4"),
        (ex("ACME"), ex("price"), f'"90"^^<{XSD}integer>', T0 + 1000, T0 + 5000, f"{path}:8"),
    ]


def test_nquads_reads_what_trig_reads_of_the_stock_sample(tmp_path):
    from rdflib import Dataset

    dataset = Dataset()
    dataset.parse(ROOT / "examples/stock/ticks.trig", format="trig")
    path = write(tmp_path / "ticks.nq", dataset.serialize(format="nquads"))  # rdflib's own order
    rejects = []
    got = sorted((e.s, e.p, e.o, e.start, e.end) for e in events_of(cep_io.read_nquads(path, rejects)))
    want = sorted((e.s, e.p, e.o, e.start, e.end)
                  for e in events_of(cep_io.read_trig(ROOT / "examples/stock/ticks.trig", [])))
    assert rejects == [] and got == want and len(got) > 10


def test_nquads_bad_lines_are_rejected_with_file_line_and_the_rest_goes_on(tmp_path):
    good = f'{ex("a")} {ex("p")} "1" {ex("g")} .'
    path = write(tmp_path / "s.nq", "\n".join([
        good,
        "this is not a quad .",
        f'{ex("a")} "lit" {ex("c")} {ex("g")} .',
        f'{ex("a")} {ex("p")} "never closed {ex("g")} .',
        f'{ex("a")} {ex("p")} {ex("c")} {ex("g")}',
        f"<not an iri> {ex('p')} {ex('c')} {ex('g')} .",
        f'{ex("a")} {ex("p")} "2" {ex("g")} .',
        gen(ex("g"), T0),
    ]) + "\n")
    rejects = []
    got = triples(cep_io.read_nquads(path, rejects))
    # both triples are graph g's event, one record: their source is g's time line
    assert [(e[2], e[5]) for e in got] == [('"1"', f"{path}:8"), ('"2"', f"{path}:8")]
    assert [r.source for r in rejects] == [f"{path}:{n}" for n in (2, 3, 4, 5, 6)]
    assert "expected the subject" in rejects[0].reason and "column 1" in rejects[0].reason
    assert "expected the predicate (an IRI) at column 24" in rejects[1].reason
    assert 'expected the final "."' in rejects[3].reason
    assert "the subject" in rejects[4].reason and rejects[4].text.startswith("<not an iri>")


def test_nquads_time_problems_cost_their_graph_not_the_file(tmp_path):
    path = write(tmp_path / "s.nq", "\n".join([
        f'{ex("a")} {ex("p")} "no time" {ex("g1")} .',
        f'{ex("a")} {ex("p")} "bad time" {ex("g2")} .',
        f'{ex("g2")} <{PROV}generatedAtTime> "yesterday" .',
        f'{ex("a")} {ex("p")} "twice" {ex("g3")} .',
        gen(ex("g3"), T0),
        gen(ex("g3"), T0 + 5),
        f'{ex("a")} {ex("p")} "backwards" {ex("g4")} .',
        f"{ex('g4')} <{PROV}startedAtTime> {when(T0 + 10)} .",
        f"{ex('g4')} <{PROV}endedAtTime> {when(T0)} .",
        f'{ex("doc")} {ex("author")} "someone" .',
    ]) + "\n")
    rejects = []
    got = triples(cep_io.read_nquads(path, rejects))
    assert got == []
    by_line = {r.source: r.reason for r in rejects}
    assert "not an xsd:dateTime" in by_line[f"{path}:2"]
    # two values in one chunk are read together, as TriG reads them (cep.io.event_time)
    assert "has 2 different prov:generatedAtTime values" in by_line[f"{path}:4"]
    assert "ends" in by_line[f"{path}:7"] and "before it starts" in by_line[f"{path}:7"]
    assert by_line[f"{path}:1"].startswith(f"graph {ex('g1')} has no timestamp: add")
    assert "1 triple(s) of the default graph skipped" in by_line[str(path)]


def test_nquads_a_time_repeated_is_one_a_later_other_one_is_refused(tmp_path):
    body = [f'{ex("a")} {ex("p")} "g" {ex("g")} .', gen(ex("g"), T0), gen(ex("g"), T0)]  # the same triple twice
    body += [f'{ex("a")} {ex("p")} "{i}" {ex(f"h{i}")} .\n{gen(ex(f"h{i}"), T0 + i)}' for i in range(2)]
    body += [gen(ex("g"), T0 + 5), gen(ex("g"), T0)]  # in a later chunk: g's time is decided
    path = write(tmp_path / "s.nq", "\n".join(body) + "\n")
    rejects = []
    got = [e for table in file_batches(Input(str(path), "nq"), rejects, rows=4) for e in events_of(table)]
    assert sorted((e.o, e.start) for e in got) == [('"0"', T0), ('"1"', T0 + 1), ('"g"', T0)]
    assert [(r.source, r.reason) for r in rejects] == [
        (f"{path}:8", f"graph {ex('g')} has its time already; this prov:generatedAtTime is skipped")]


def test_rdf_inputs_take_the_time_predicates_named(tmp_path):
    """RSP-QL's example interval, :startsAt and :endsAt, in each RDF format;
    PROV's predicates are then metadata."""
    from cep.io.event_time import time_predicates

    times = time_predicates(None, ex("startsAt")[1:-1], ex("endsAt"))
    starts, ends = f"{ex('startsAt')}", f"{ex('endsAt')}"
    nq = write(tmp_path / "s.nq", "\n".join([
        f'{ex("a")} {ex("p")} "1" {ex("g")} .', f"{ex('g')} {starts} {when(T0)} .", f"{ex('g')} {ends} {when(T0 + 9)} .",
        f'{ex("a")} {ex("p")} "2" {ex("h")} .', gen(ex("h"), T0)]) + "\n")
    tg = write(tmp_path / "s.trig", f"""@prefix : <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:g {{ :a :p "1" }}
:g :startsAt "2026-01-01T00:00:00Z"^^xsd:dateTime ; :endsAt "2026-01-01T00:00:00.009Z"^^xsd:dateTime .
""")
    for path, fmt in ((nq, "nq"), (tg, "trig")):
        rejects = []
        got = [e for table in file_batches(Input(str(path), fmt, times=times), rejects) for e in events_of(table)]
        # each option replaces its own predicate: h's instant is still prov:generatedAtTime
        assert [(e.o, e.start, e.end) for e in got] == [('"1"', T0, T0 + 9)] + [('"2"', T0, T0)] * (fmt == "nq")
        assert rejects == []
    rejects = []
    only = time_predicates(ex("at"), ex("startsAt"), ex("endsAt"))
    got = [e for table in file_batches(Input(str(nq), "nq", times=only), rejects) for e in events_of(table)]
    assert [e.o for e in got] == ['"1"']  # prov:generatedAtTime is metadata now: h has no time
    assert [r.source for r in rejects] == [f"{nq}:4", str(nq)]
    assert rejects[0].reason.startswith(f"graph {ex('h')} has no timestamp: add")
    with pytest.raises(ValueError, match="must be different IRIs"):
        time_predicates(ex("t"), ex("t"), None)
    with pytest.raises(ValueError, match="must be different IRIs"):
        time_predicates(None, ex("startsAt"), None, ex("startsAt"))
    with pytest.raises(ValueError, match="--end-predicate 'endsAt': not an absolute IRI"):
        time_predicates(None, None, "endsAt")
    with pytest.raises(ValueError, match="--interval-predicate 'validBetween': not an absolute IRI"):
        time_predicates(None, None, None, "validBetween")


def seed_times():
    """RSP-QL's second interval example: `:g :validBetween [ :startsAt T1 ; :endsAt T2 ]`."""
    from cep.io.event_time import time_predicates

    return time_predicates(None, ex("startsAt"), ex("endsAt"), ex("validBetween"))


def noon(hour, minute=0):
    return T_SEED + (hour - 12) * 3_600_000 + minute * 60_000


T_SEED = terms.parse_datetime_ms("2015-06-18T12:00:00Z")
VB, STARTS, ENDS = ex("validBetween"), ex("startsAt"), ex("endsAt")
# (graph, its time triples: one per line, as N-Triples, so that the same
# lines are TriG's default graph, N-Quads' and N-Triples'), and what it gets:
# its (start, end), or a piece of the reason it is refused; hand-checked
# against the rules of docs/io.md, "The time predicates"
NODE_CASES = [
    ("ok", [f"{ex('ok')} {VB} _:i1 .", f"_:i1 {STARTS} {when(noon(12))} .", f"_:i1 {ENDS} {when(noon(13))} ."],
     (noon(12), noon(13))),
    # the node's triples before the link: one part of the input is read whole
    ("first", [f"_:i2 {ENDS} {when(noon(14))} .", f"_:i2 {STARTS} {when(noon(13))} .", f"{ex('first')} {VB} _:i2 ."],
     (noon(13), noon(14))),
    ("two", [f"{ex('two')} {VB} _:a3 .", f"{ex('two')} {VB} _:b3 .", f"_:a3 {STARTS} {when(noon(12))} .",
             f"_:a3 {ENDS} {when(noon(13))} .", f"_:b3 {STARTS} {when(noon(12))} .", f"_:b3 {ENDS} {when(noon(14))} ."],
     f"has 2 different {VB} values (2 intervals); give exactly one"),
    ("noend", [f"{ex('noend')} {VB} _:i4 .", f"_:i4 {STARTS} {when(noon(12))} ."],
     f"the {VB} node of {{what}} {ex('noend')} has {STARTS} but no {ENDS}; an interval needs both"),
    ("back", [f"{ex('back')} {VB} _:i5 .", f"_:i5 {STARTS} {when(noon(13))} .", f"_:i5 {ENDS} {when(noon(12))} ."],
     f"the {VB} node of {{what}} {ex('back')} ends ({ENDS} 2015-06-18T12:00:00Z) before it starts "
     f"({STARTS} 2015-06-18T13:00:00Z)"),
    ("plain", [f"{ex('plain')} {VB} _:i6 .", f'_:i6 {STARTS} "2015-06-18T12:00:00" .', f"_:i6 {ENDS} {when(noon(13))} ."],
     f'{STARTS} of the {VB} node of {{what}} {ex("plain")} is "2015-06-18T12:00:00", not an xsd:dateTime literal'),
    ("shared1", [f"{ex('shared1')} {VB} _:s .", f"{ex('shared2')} {VB} _:s .", f"_:s {STARTS} {when(noon(12))} .",
                 f"_:s {ENDS} {when(noon(13))} ."],
     f"{{what}} {ex('shared1')} shares its {VB} node _:"),
    ("shared2", [], f"{{what}} {ex('shared2')} shares its {VB} node _:"),
    ("cycle", [f"{ex('cycle')} {VB} _:c1 .", f"_:c1 {VB} _:c2 .", f"_:c2 {VB} _:c1 ."],
     f"the {VB} node of {{what}} {ex('cycle')} has a {VB} of its own (a chain or a cycle)"),
    ("iri", [f"{ex('iri')} {VB} {ex('i9')} .", f"{ex('i9')} {STARTS} {when(noon(12))} .", f"{ex('i9')} {ENDS} {when(noon(13))} ."],
     f"{VB} of {{what}} {ex('iri')} is {ex('i9')}, not a blank node giving {STARTS} and {ENDS}"),
    ("both", [f"{ex('both')} {VB} _:i10 .", f"_:i10 {STARTS} {when(noon(12))} .", f"_:i10 {ENDS} {when(noon(13))} .",
              f"{ex('both')} {STARTS} {when(noon(12))} ."],
     f"{{what}} {ex('both')} has both {VB} and {STARTS}; give an instant or one interval, not both"),
    ("instant", [f"{ex('instant')} {VB} _:i11 .", gen("_:i11", noon(12))],
     f"the {VB} node of {{what}} {ex('instant')} has prov:generatedAtTime; an interval node gives {STARTS} and {ENDS}"),
]


@pytest.mark.parametrize("fmt", ["trig", "nq", "nt"])
def test_an_interval_given_through_a_node_and_its_malformed_forms(tmp_path, fmt):
    """RSP-QL's `:g :validBetween [ :startsAt T1 ; :endsAt T2 ]` read by
    every RDF format: each malformed form refuses its event, at the line of
    its content, and the others are read."""
    what = "subject" if fmt == "nt" else "graph"
    lines, content = [], {}  # content: graph -> its line
    for graph, times, _ in NODE_CASES:
        content[graph] = len(lines) + 1
        lines.append({"trig": f'{ex(graph)} {{ {ex("a")} {ex("p")} "{graph}" }}',
                      "nq": f'{ex("a")} {ex("p")} "{graph}" {ex(graph)} .',
                      "nt": f'{ex(graph)} {ex("p")} "{graph}" .'}[fmt])
        lines += times
    path = write(tmp_path / f"s.{fmt}", "\n".join(lines) + "\n")
    rejects = []
    got = [e for table in file_batches(Input(str(path), fmt, times=seed_times()), rejects) for e in events_of(table)]
    assert sorted((e.o, e.start, e.end) for e in got) == [('"first"', noon(13), noon(14)), ('"ok"', noon(12), noon(13))]
    assert sorted(r.source for r in rejects) == sorted(
        f"{path}:{content[graph]}" for graph, _, expected in NODE_CASES if isinstance(expected, str))
    for graph, _, expected in NODE_CASES:
        if isinstance(expected, str):
            (reason,) = [r.reason for r in rejects if r.source == f"{path}:{content[graph]}"]
            assert expected.format(what=what) in reason, graph
    # without the interval predicate the link is metadata (TriG, N-Quads) or an event (N-Triples)
    rejects = []
    plain = seed_times().__class__(start=STARTS, end=ENDS)
    got = [e for table in file_batches(Input(str(path), fmt, times=plain), rejects) for e in events_of(table)]
    assert f"{what} {ex('ok')} has no timestamp: add" in next(r.reason for r in rejects if r.source == f"{path}:1")


def test_an_interval_node_comes_within_the_part_of_its_event_or_the_next(tmp_path):
    """An interval node's triples come as the event's own time triples do
    (docs/io.md, "Reading in bounded memory"): in its part of the input or
    the next; a later different value is refused; a node linked again in a
    later part, once it gave its interval, refuses the later event only."""
    def filler(i):
        return [f'{ex("a")} {ex("p")} "{i}" {ex(f"f{i}")} .', gen(ex(f"f{i}"), T0 + i)]

    body = [  # parts of 4 lines (rows=4)
        f'{ex("a")} {ex("p")} "near" {ex("near")} .', f"{ex('near')} {VB} _:n .", *filler(0),
        f"_:n {STARTS} {when(noon(12))} .", f"_:n {ENDS} {when(noon(13))} .", *filler(1),  # near: its part and the next
        f'{ex("a")} {ex("p")} "again" {ex("again")} .', f"{ex('again')} {VB} _:n .",  # lines 9-10
        f"_:n {ENDS} {when(noon(14))} .",  # line 11: _:n's interval was decided in the part before
        f'{ex("a")} {ex("p")} "far" {ex("far")} .',  # line 12
        f"{ex('far')} {VB} _:f .", *filler(2), *filler(3), *filler(4), "",
        f"_:f {STARTS} {when(noon(12))} .", f"_:f {ENDS} {when(noon(13))} ."]  # two parts after far's
    path = write(tmp_path / "s.nq", "\n".join(body) + "\n")
    rejects = []
    got = [e for table in file_batches(Input(str(path), "nq", times=seed_times()), rejects, rows=4)
           for e in events_of(table)]
    assert sorted((e.o, e.start, e.end) for e in got if e.o in ('"near"', '"again"', '"far"')) == [
        ('"near"', noon(12), noon(13))]
    rejects.sort(key=lambda r: int(r.source.rsplit(":", 1)[1]))
    assert [r.source for r in rejects] == [f"{path}:9", f"{path}:11", f"{path}:12"]
    assert rejects[0].reason.startswith(f"graph {ex('again')} shares its {VB} node _:")
    assert rejects[0].reason.endswith(f" with graph {ex('near')}; a node gives the interval of one graph")
    assert rejects[1].reason.startswith("graph _:") and f"has its time already; this {ENDS} is skipped" in rejects[1].reason
    assert rejects[2].reason == f"the {VB} node of graph {ex('far')} has no {STARTS} and no {ENDS}" + FAR


def test_nquads_a_time_must_come_within_a_batch_of_its_triples(tmp_path):
    body = [f'{ex("a")} {ex("p")} "early" {ex("g")} .']
    body += [f'{ex("a")} {ex("p")} "{i}" {ex(f"h{i}")} .\n{gen(ex(f"h{i}"), T0 + i)}' for i in range(6)]
    body += [gen(ex("g"), T0)]
    path = write(tmp_path / "s.nq", "\n".join(body) + "\n")
    rejects = []
    source = Input(str(path), "nq")
    got = [e for table in file_batches(source, rejects, rows=4) for e in events_of(table)]
    assert sorted(e.o for e in got) == sorted(f'"{i}"' for i in range(6))
    assert [r.source for r in rejects] == [f"{path}:1"]  # (g's late time line times nothing left)
    assert rejects[0].reason.startswith(f"graph {ex('g')} has no timestamp: add")
    assert rejects[0].reason.endswith(FAR)


def test_ntriples_a_subject_is_an_event(tmp_path):
    path = write(tmp_path / "s.nt", "\n".join([
        f'_:e1 {ex("company")} {ex("ACME")} .',
        f'_:e1 {ex("price")} "100"^^<{XSD}integer> .',
        gen("_:e1", T0),
        gen("_:e2", T0 + 1000),
        f'_:e2 {ex("price")} "90"^^<{XSD}integer> .',
        f'{ex("a")} {ex("p")} {ex("b")} {ex("g")} .',  # a quad is not a triple
    ]) + "\n")
    rejects = []
    got = events_of(cep_io.read_ntriples(path, rejects))
    assert [(e.p, e.start) for e in got] == [(ex("company"), T0), (ex("price"), T0), (ex("price"), T0 + 1000)]
    assert got[0].s == got[1].s != got[2].s and got[0].s.startswith("_:")
    assert [r.source for r in rejects] == [f"{path}:6"] and "N-Triples syntax error" in rejects[0].reason


def test_blank_nodes_are_the_files_own(tmp_path):
    text = f'_:b {ex("p")} "x" _:g .\n{gen("_:g", T0)}\n'
    one, two = write(tmp_path / "one.nq", text), write(tmp_path / "two.nq", text)
    a, b = events_of(cep_io.read_nquads(one, [])), events_of(cep_io.read_nquads(two, []))
    assert a[0].s != b[0].s
    assert events_of(cep_io.read_nquads(one, []))[0].s == a[0].s  # the same file: the same labels


def test_blank_node_labels_beyond_ascii_read_as_in_trig(tmp_path):
    """N-Triples and N-Quads give a blank node label the characters TriG
    does (PN_CHARS: _:café, _:a·b), not only ASCII ones: the same events
    from each format, the labels kept apart from every ASCII label (_:e,
    and _:_ue9_, how the engine writes é)."""
    labels = ["_:é", "_:e", "_:_ue9_", "_:a\u00b7b", "_:ü.1"]
    nq = "".join(f'{label} {ex("p")} "{i}" _:gé .\n' for i, label in enumerate(labels)) + gen("_:gé", T0) + "\n"
    nt = "".join(f'{label} {ex("p")} "{i}" .\n{gen(label, T0)}\n' for i, label in enumerate(labels))
    trig = ("_:gé { " + " ".join(f'{label} {ex("p")} "{i}" .' for i, label in enumerate(labels)) + " }\n"
            + gen("_:gé", T0) + "\n")
    for fmt, text in (("nq", nq), ("nt", nt), ("trig", trig)):
        rejects = []
        read = {"nq": cep_io.read_nquads, "nt": cep_io.read_ntriples, "trig": cep_io.read_trig}[fmt]
        got = events_of(read(write(tmp_path / f"u.{fmt}", text), rejects))
        assert rejects == [], (fmt, rejects)
        subjects = {e.o: e.s for e in got}
        assert sorted(subjects) == [f'"{i}"' for i in range(len(labels))], fmt
        assert len(set(subjects.values())) == len(labels) and all(s.startswith("_:") for s in subjects.values())


def test_nquads_terms_get_the_canonical_form_of_every_reader(tmp_path):
    path = write(tmp_path / "s.nq",
                 f'<{EX}caf\\u00E9> {ex("p")} "x\\u00e9"@EN {ex("g")} .\n{gen(ex("g"), T0)}\n')
    (event,) = events_of(cep_io.read_nquads(path, []))
    assert (event.s, event.o) == (f"<{EX}café>", '"xé"@en')


# ======================================================== gzip, every format


def _formats(tmp_path):
    """The same two events in every input format: {suffix: path}."""
    rows = [(ex("a"), ex("p"), '"1"', T0), (ex("b"), ex("p"), '"2"', T0 + 1000)]
    jsonl = "".join(json.dumps({"s": s, "p": p, "o": o, "t": t}) + "\n" for s, p, o, t in rows)
    csv = "s,p,o,t\n" + "".join(f'{s},{p},"{o.replace(chr(34), chr(34) * 2)}",{t}\n' for s, p, o, t in rows)
    nq = "".join(f"{s} {p} {o} <{EX}g{i}> .\n{gen(f'<{EX}g{i}>', t)}\n" for i, (s, p, o, t) in enumerate(rows))
    nt = "".join(f"{s} {p} {o} .\n{gen(s, t)}\n" for s, p, o, t in rows)
    trig = (f"@prefix prov: <{PROV}> .\n"
            + "".join(f"<{EX}g{i}> {{ {s} {p} {o} }}\n<{EX}g{i}> prov:generatedAtTime {when(t)} .\n"
                      for i, (s, p, o, t) in enumerate(rows)))
    out = {}
    for suffix, text in (("jsonl", jsonl), ("csv", csv), ("nq", nq), ("nt", nt), ("trig", trig)):
        out[suffix] = write(tmp_path / f"e.{suffix}", text)
    pq.write_table(pa.table({"s": [r[0] for r in rows], "p": [r[1] for r in rows], "o": [r[2] for r in rows],
                             "t": [r[3] for r in rows]}), tmp_path / "e.parquet")
    out["parquet"] = tmp_path / "e.parquet"
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "nq", "nt", "trig", "parquet"])
def test_gzip_inputs_of_every_format_read_as_the_plain_file(tmp_path, fmt):
    plain = _formats(tmp_path)[fmt]
    packed = write(tmp_path / f"{plain.name}.gz", gzip.compress(plain.read_bytes()), "wb")
    assert cep_io.format_of(packed) == fmt
    plain_rejects, packed_rejects = [], []
    want = [(e.s, e.p, e.o, e.start) for e in events_of(cep_io.read_file(plain, plain_rejects))]
    got = [(e.s, e.p, e.o, e.start) for e in events_of(cep_io.read_file(packed, packed_rejects))]
    assert plain_rejects == packed_rejects == []
    assert len(want) == 2 and [w[:2] for w in want] == [(ex("a"), ex("p")), (ex("b"), ex("p"))]
    assert got == want


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "nq", "trig"])
def test_a_cut_gzip_file_keeps_what_was_read_and_says_the_rest_is_lost(tmp_path, fmt):
    plain = _formats(tmp_path)[fmt]
    text = plain.read_text() * 200  # long enough that the cut falls well inside
    if fmt == "csv":
        text = "s,p,o,t\n" + text.replace("s,p,o,t\n", "")
    if fmt == "trig":
        text = plain.read_text() + "".join(
            f"<{EX}h{i}> {{ <{EX}x> <{EX}p> \"{i}\" }}\n<{EX}h{i}> <{PROV}generatedAtTime> {when(T0)} .\n"
            for i in range(400))
    packed = gzip.compress(text.encode())
    cut = write(tmp_path / f"cut.{fmt}.gz", packed[:len(packed) * 2 // 3], "wb")
    rejects = []
    got = cep_io.read_file(cut, rejects)
    assert got.num_rows > 0
    assert [r for r in rejects if "cut short" in r.reason], rejects


def test_a_damaged_gzip_file_is_a_reject_not_a_crash(tmp_path):
    plain = _formats(tmp_path)["jsonl"]
    packed = bytearray(gzip.compress(plain.read_bytes() * 50))
    packed[40:60] = b"\xff" * 20
    rejects = []
    cep_io.read_file(write(tmp_path / "bad.jsonl.gz", bytes(packed), "wb"), rejects)
    assert rejects and "damaged" in rejects[-1].reason or "cut short" in rejects[-1].reason
    not_gzip = write(tmp_path / "plain.nq.gz", b"<a> <b> <c> .\n", "wb")
    rejects = []
    assert cep_io.read_file(not_gzip, rejects).num_rows == 0
    assert len(rejects) == 1 and "damaged (Not a gzipped file" in rejects[0].reason


# ==================================================== odd bytes, huge lines


def test_odd_bytes_cost_their_line(tmp_path):
    good = f'{ex("a")} {ex("p")} "1" {ex("g")} .\n{gen(ex("g"), T0)}\n'.encode()
    data = b"\xef\xbb\xbf" + good + b"<http://ex.org/\xff> <http://ex.org/p> \"x\" <http://ex.org/g> .\n" \
        + b"\x00\x01\x02\n" + b'<http://ex.org/a> <http://ex.org/p> "nul\x00here" <http://ex.org/g> .\n'
    path = write(tmp_path / "s.nq", data, "wb")
    rejects = []
    got = events_of(cep_io.read_nquads(path, rejects))
    assert [e.o for e in got] == ['"1"']
    assert [r.source for r in rejects] == [f"{path}:3", f"{path}:4", f"{path}:5"]
    assert rejects[0].reason == "not UTF-8 text"


@pytest.mark.parametrize("fmt", ["nq", "jsonl", "csv"])
def test_a_line_longer_than_the_limit_is_skipped_unread(tmp_path, monkeypatch, fmt):
    monkeypatch.setattr(lines, "MAX_LINE_BYTES", 1000)
    files = _formats(tmp_path)
    text = files[fmt].read_text().splitlines(keepends=True)
    at = 1 if fmt == "csv" else 0
    text.insert(at, "x" * 50_000 + "\n")
    path = write(tmp_path / f"long.{fmt}", "".join(text))
    rejects = []
    got = cep_io.read_file(path, rejects)
    assert got.num_rows == 2
    assert [r.source for r in rejects] == [f"{path}:{at + 1}"]
    assert "longer than 1,000 bytes (50,000)" in rejects[0].reason and len(rejects[0].text) <= 200


# ============================================================ in batches


def test_readers_give_bounded_batches(tmp_path):
    n = 1000
    jsonl = write(tmp_path / "e.jsonl", "".join(
        json.dumps({"s": ex(f"s{i}"), "p": ex("p"), "o": f'"{i}"', "t": T0 + i}) + "\n" for i in range(n)))
    nq = write(tmp_path / "e.nq", "".join(
        f'{ex("s")} {ex("p")} "{i}" {ex(f"g{i}")} .\n{gen(ex(f"g{i}"), T0 + i)}\n' for i in range(n)))
    pq.write_table(pa.table({"s": [ex(f"s{i}") for i in range(n)], "p": [ex("p")] * n,
                             "o": [f'"{i}"' for i in range(n)], "t": [T0 + i for i in range(n)]}),
                   tmp_path / "e.parquet", row_group_size=300)
    for path in (jsonl, nq, tmp_path / "e.parquet"):
        rejects = []
        sizes = [t.num_rows for t in file_batches(inputs([path])[0], rejects, rows=64)]
        assert rejects == [] and sum(sizes) == n and max(sizes) <= 64 and len(sizes) >= n // 64, (path, sizes)


def test_time_order_of_unordered_runs_is_the_whole_sort(tmp_path):
    import random

    rng = random.Random(7)
    rows = [(ex(f"s{rng.randrange(5)}"), ex("p"), f'"{i}"', T0 + rng.randrange(50) * 1000) for i in range(700)]
    tables = []
    for k in range(0, len(rows), 90):  # tables that overlap in time: several runs
        part = rows[k:k + 90]
        tables.append(pa.table({"s": [r[0] for r in part], "p": [r[1] for r in part], "o": [r[2] for r in part],
                                "start": [r[3] for r in part], "end": [r[3] + (i % 3) for i, r in enumerate(part)],
                                "source": [f"f:{k + i}" for i in range(len(part))],
                                "stream": pa.nulls(len(part), pa.string())}, schema=EVENTS))
    whole = pa.concat_tables(tables).sort_by(ORDER)
    got = list(time_ordered(iter(tables), 40))
    assert pa.concat_tables(got).equals(whole)
    ends = [(t["end"][0].as_py(), t["end"][-1].as_py()) for t in got]
    assert all(a[1] < b[0] for a, b in zip(ends, ends[1:]))  # an instant is never split between tables
    ordered = list(time_ordered(iter([whole.slice(i, 100) for i in range(0, 700, 100)]), 100))
    assert [t.num_rows for t in ordered] == [100] * 7  # one run: read back as written


def _parquet(path, rows, row_group_size=None):
    """A Parquet event file of (s, o, t[, t_end]) rows."""
    columns = {"s": [ex(r[0]) for r in rows], "p": [ex("p")] * len(rows), "o": [f'"{r[1]}"' for r in rows],
               "t": [r[2] for r in rows]}
    if any(len(r) > 3 for r in rows):
        columns["t_end"] = [r[3] if len(r) > 3 else None for r in rows]
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def test_in_time_order_reads_the_times_of_parquet_files_one_after_the_other(tmp_path):
    from cep.io import in_time_order

    first = _parquet(tmp_path / "a.parquet", [("s", i, T0 + i // 3) for i in range(30)], row_group_size=7)
    second = _parquet(tmp_path / "b.parquet", [("s", i, T0 + 10 + i) for i in range(5)])
    earlier = _parquet(tmp_path / "c.parquet", [("s", i, T0 + 8) for i in range(5)])  # the first ends at T0 + 9
    intervals = _parquet(tmp_path / "d.parquet", [("s", 1, T0, T0 + 5), ("s", 2, T0 + 1, T0 + 5), ("s", 3, T0 + 6)])
    ending_sooner = _parquet(tmp_path / "e.parquet", [("s", 1, T0, T0 + 5), ("s", 2, T0 + 1, T0 + 2)])
    unreadable = _parquet(tmp_path / "f.parquet", [("s", 1, str(T0)), ("s", 2, "yesterday")])
    jsonl = write(tmp_path / "g.jsonl", json.dumps({"s": ex("s"), "p": ex("p"), "o": '"1"', "t": T0}) + "\n")
    assert in_time_order(inputs([first, second]), rows=4)
    assert in_time_order(inputs([intervals]))
    assert not in_time_order(inputs([second, first]))  # the second file starts before the first ended
    assert not in_time_order(inputs([first, earlier]), rows=4)
    assert not in_time_order(inputs([ending_sooner]))  # by end times: the second event ends first
    assert not in_time_order(inputs([unreadable]))  # its rejected row is left to the spilled sort
    assert not in_time_order(inputs([first, jsonl]))  # known only once read whole


def test_time_order_of_ordered_input_is_the_spilled_sort_without_spilling(tmp_path):
    # times that never go back, several events at most times, their terms out of order, and a time's
    # events across tables: passed on (no spill file), in the same order as the spilled sort gives them
    rows = [(ex(f"s{(7 * i) % 5}"), T0 + (i // 4) * 1000, T0 + (i // 4) * 1000 + (i % 4 // 2)) for i in range(400)]
    rows.sort(key=lambda r: (r[2], r[1]))
    table = pa.table({"s": [r[0] for r in rows], "p": [ex("p")] * len(rows), "o": [f'"{i}"' for i in range(len(rows))],
                      "start": [r[1] for r in rows], "end": [r[2] for r in rows],
                      "source": [f"f:{i}" for i in range(len(rows))], "stream": pa.nulls(len(rows), pa.string())},
                     schema=EVENTS)
    tables = [table.slice(i, 30) for i in range(0, len(rows), 30)]
    spilled = pa.concat_tables(list(time_ordered(iter(tables), 30)))
    passed = list(time_ordered(iter(tables), 30, in_order=True))
    assert pa.concat_tables(passed).equals(spilled) and spilled.equals(table.sort_by(ORDER))
    assert max(t.num_rows for t in passed) <= 30 + 4  # a table and the events of one time
    with pytest.raises(RuntimeError, match="went back in time"):
        list(time_ordered(iter(tables[::-1]), 30, in_order=True))


def test_cli_answers_parquet_in_time_order_as_the_same_events_spilled(capsys, tmp_path):
    # the Parquet file is passed on as read (its times never go back); the same events as JSON Lines
    # go through the spilled sort: the same answers, in the same order, with events sharing their
    # times (terms out of order) across batches of 7
    from cep import cli

    rows = [{"s": ex(f"k{(5 * i) % 3}"), "p": ex("a" if i % 2 else "b"), "o": f'"{i}"^^<{XSD}integer>',
             "t": T0 + (i // 4) * 1000} for i in range(60)]
    parquet = tmp_path / "e.parquet"
    pq.write_table(pa.table({c: [r[c] for r in rows] for c in ("s", "p", "o", "t")}), parquet, row_group_size=9)
    jsonl = write(tmp_path / "e.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    assert cep_io.in_time_order(inputs([parquet]))
    rules = write(tmp_path / "q.rq", f"PREFIX : <{EX}>\nREGISTER QUERY q AS SELECT ?k ?x ?y "
                                     "WHERE { ?k :a ?x } SEQ { ?k :b ?y }\n")
    outputs = []
    for path in (parquet, jsonl):
        assert cli.main(["run", str(rules), "--events", str(path), "--engine", "local", "--batch-size", "7",
                         "--quiet"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and outputs[0].count("\n") > 100


# ========================================================== the command


def _cep(args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "cep", *map(str, args)], input=stdin, capture_output=True,
                          cwd=cwd or ROOT, timeout=600)


def test_cli_reads_nquads_gzip_and_standard_input_as_trig(tmp_path):
    from rdflib import Dataset

    dataset = Dataset()
    dataset.parse(ROOT / "examples/stock/ticks.trig", format="trig")
    nq = write(tmp_path / "ticks.nq", dataset.serialize(format="nquads"))
    packed = write(tmp_path / "ticks.nq.gz", gzip.compress(nq.read_bytes()), "wb")
    rules = ROOT / "rules/stock.rq"

    def answers(result):
        assert result.returncode == 0, result.stderr.decode()
        return sorted(result.stdout.decode().splitlines())

    want = answers(_cep(["run", rules, "--events", ROOT / "examples/stock/ticks.trig", "-q"]))
    assert want
    assert answers(_cep(["run", rules, "--events", packed, "-q"])) == want
    assert answers(_cep(["run", rules, "--events", "-", "--events-format", "nq", "-q"],
                        stdin=nq.read_bytes())) == want
    missing = _cep(["run", rules, "--events", "-"], stdin=b"")
    assert missing.returncode == 2 and b"--events-format" in missing.stderr and b"Traceback" not in missing.stderr


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_lines_cut_between_blocks_read_as_whole_lines(tmp_path, monkeypatch, ending):
    text = "".join(f'{ex("s")} {ex("p")} "{i}" {ex(f"g{i}")} .{ending}{gen(ex(f"g{i}"), T0 + i)}{ending}'
                   for i in range(20))
    path = write(tmp_path / "e.nq", text.encode(), "wb")
    want = triples(cep_io.read_nquads(path, []))
    monkeypatch.setattr(lines, "BLOCK", 7)  # every line end, a CR LF among them, falls across blocks somewhere
    rejects = []
    assert triples(cep_io.read_nquads(path, rejects)) == want and rejects == []
    assert [e[5] for e in want] == [f"{path}:{2 * i + 2}" for i in range(20)]  # each graph's time line


def test_events_format_names_the_format_of_what_has_no_extension(tmp_path):
    plain = _formats(tmp_path)
    unnamed = write(tmp_path / "events.log", plain["nq"].read_bytes(), "wb")
    got = inputs([unnamed, plain["trig"]], "nq")
    assert [(Path(i.path).name, i.fmt) for i in got] == [("events.log", "nq"), ("e.trig", "trig")]
    with pytest.raises(UsageError, match="unknown event file type .log"):
        inputs([unnamed])


def test_a_long_column_of_repeated_terms_gets_each_rows_verdict(tmp_path):
    # (checked once per distinct term: cep.io.tables.term_column)
    n = 3000
    s = [f"<{EX}k{i % 3}>" for i in range(n)]
    s[5], s[2000] = "<not an iri>", None
    s[7] = f"<{EX}caf\\u00E9>"  # not canonical: written as the readers write it
    pq.write_table(pa.table({"s": s, "p": [f"<{EX}p>"] * n, "o": ['"x"'] * n, "t": [T0 + i for i in range(n)]}),
                   tmp_path / "e.parquet")
    rejects = []
    got = cep_io.read_parquet(tmp_path / "e.parquet", rejects)
    assert [r.source.rsplit(":", 1)[1] for r in rejects] == ["row 6", "row 2001"]
    assert "column s" in rejects[0].reason and "empty" in rejects[1].reason
    assert got.num_rows == n - 2 and got["s"][6].as_py() == f"<{EX}café>" and got["s"][0].as_py() == f"<{EX}k0>"


SEED_INTERVAL = """@prefix : <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:g_1 { :axel :isIn :RedRoom }
:g_1 :startsAt "2015-06-18T12:00:00"^^xsd:dateTime ; :endsAt "2015-06-18T13:00:00"^^xsd:dateTime .
:g_2 { :bob :isIn :RedRoom }
:g_2 :validBetween [:startsAt "2015-06-18T12:00:00"^^xsd:dateTime; :endsAt "2015-06-18T13:00:00"^^xsd:dateTime].
"""


def test_cep_run_names_the_time_predicates(tmp_path, capsys):
    """RSP-QL's own interval examples, `:g_1 :startsAt T1 ; :endsAt T2` and
    `:g_2 :validBetween [ :startsAt T1 ; :endsAt T2 ]` (the second as the seed
    prints it), read by `cep run`, in process, and by the Spark engine's
    file parser (the function its mapInPandas runs). Hand-checked: each
    graph holds from 12:00 to 13:00 (xsd:dateTime without a zone: UTC), so
    each person's answer lasts one hour; with PROV's predicates neither graph
    has a time, with :startsAt and :endsAt only g_1 has, and g_2 needs
    :validBetween named too."""
    from cep import cli
    from cep.io.event_time import time_predicates
    from cep.spark.sources import _parse_files

    events = write(tmp_path / "rooms.trig", SEED_INTERVAL)
    rules = write(tmp_path / "in.rq", "PREFIX : <http://example.org/>\n"
                                      "SELECT ?who (getDURATION() AS ?d) WHERE { ?who :isIn :RedRoom }\n")
    assert cli.main(["run", str(rules), "--events", str(events), "-q"]) == 0  # PROV's: no time
    out, err = capsys.readouterr()
    assert out == "" and err.count("has no timestamp") == 2
    named = ["--start-predicate", "http://example.org/startsAt", "--end-predicate", "<http://example.org/endsAt>"]
    through = ["--interval-predicate", "http://example.org/validBetween"]

    def answers(out):
        return [(a["bindings"]["who"]["value"], a["bindings"]["d"]["value"], a["start"], a["end"])
                for a in map(json.loads, out.splitlines())]

    hour = ("PT1H", "2015-06-18T12:00:00Z", "2015-06-18T13:00:00Z")
    assert cli.main(["run", str(rules), "--events", str(events), "-q"] + named) == 0
    out, err = capsys.readouterr()
    assert answers(out) == [("http://example.org/axel", *hour)]
    assert f"rejected {events}:5: graph {ex('g_2')} has no timestamp: add" in err
    assert cli.main(["run", str(rules), "--events", str(events), "-q"] + named + through) == 0
    out, err = capsys.readouterr()
    assert sorted(answers(out)) == [("http://example.org/axel", *hour), ("http://example.org/bob", *hour)]
    assert "rejected" not in err
    assert cli.main(["run", str(rules), "--events", str(events), "--end-predicate", "endsAt"]) == 2
    assert "--end-predicate 'endsAt': not an absolute IRI" in capsys.readouterr().err

    import pandas as pd

    files = pd.DataFrame({"path": [str(events)], "content": [events.read_bytes()]})
    times = time_predicates(None, "http://example.org/startsAt", "http://example.org/endsAt",
                            "http://example.org/validBetween")
    (rows,) = _parse_files([files], times=times)
    assert sorted(rows["s"].tolist()) == [ex("axel"), ex("bob")] and rows["reason"].isna().all()
    assert (rows["start"].tolist(), rows["end"].tolist()) == ([noon(12)] * 2, [noon(13)] * 2)
    (rows,) = _parse_files([files], times=time_predicates(None, "http://example.org/startsAt",
                                                          "http://example.org/endsAt"))
    assert rows["s"].tolist()[0] == ex("axel") and rows["s"].isna().tolist() == [False, True]
    assert rows["reason"][1].startswith(f"graph {ex('g_2')} has no timestamp")
    (rows,) = _parse_files([files])
    assert rows["s"].isna().all() and "has no timestamp" in rows["reason"][0]
