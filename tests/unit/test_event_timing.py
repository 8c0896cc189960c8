"""The one timing stage of the RDF readers (cep.io.event_time.Timing): the
same events and times written as TriG and as N-Quads give the same events
(an N-Quads event's source the line of its time, a TriG one's its block)
and the same rejects, at the same lines, whether the file is read whole or
in small parts (a TriG window of statements, an N-Quads chunk of lines)."""

from __future__ import annotations

import pytest

from cep import terms
from cep.events import events_of
from cep.io.event_time import FAR
from cep.io.readers import Input, file_batches

EX = "http://example.org/"
PROV = "http://www.w3.org/ns/prov#"
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")

# One statement a line, each graph one triple, so that a TriG graph's block
# and its N-Quads quad are on the same line. In parts of 4 lines (4
# statements), each part starts with a block, so TriG's windows and
# N-Quads' chunks hold the same lines: 1-4, 5-8, 9-12, 13-16, 17-20, 21-24.
LINES = [
    ("g1", "event", 1), ("g1", "generatedAtTime", 1),  # its time in its part
    ("g2", "event", 2), ("g3", "generatedAtTime", "yesterday"),  # g2: its time in the next part
    ("g3", "event", 3), ("g2", "generatedAtTime", 2),  # g3: a time that is no xsd:dateTime
    ("g1", "generatedAtTime", 9), ("g4", "startedAtTime", 4),  # g1: another time, once decided
    ("g4", "event", 4), ("g4", "endedAtTime", 5),  # an interval over two parts
    ("g5", "generatedAtTime", 1), ("g5", "generatedAtTime", 2),  # two values in one part
    ("g5", "event", 5), ("g6", "event", 6),  # g6: its time three parts later
    ("g7", "startedAtTime", 7), ("g7", "generatedAtTime", 7),  # an instant and an interval
    ("g7", "event", 7), ("g8", "event", 8),
    ("g8", "startedAtTime", 8), ("g8", "endedAtTime", 7),  # an interval that ends before it starts
    ("g9", "event", 9), ("g6", "generatedAtTime", 6),  # g9: no time at all
    ("g10", "event", 10), ("g10", "generatedAtTime", 10),
]


def value(v):
    if isinstance(v, int):
        return f'"{terms.format_datetime_ms(T0 + 1000 * v)}"^^<{terms.XSD}dateTime>'
    return f'"{v}"^^<{terms.XSD}dateTime>'


def write(folder):
    trig, nq = [], []
    for graph, what, v in LINES:
        g = f"<{EX}{graph}>"
        if what == "event":
            trig.append(f'{g} {{ <{EX}a> <{EX}p> "{v}" }}')
            nq.append(f'<{EX}a> <{EX}p> "{v}" {g} .')
        else:
            trig.append(f"{g} <{PROV}{what}> {value(v)} .")
            nq.append(trig[-1])
    (folder / "s.trig").write_text("\n".join(trig) + "\n")
    (folder / "s.nq").write_text("\n".join(nq) + "\n")
    return folder / "s.trig", folder / "s.nq"


def read(path, fmt, rows):
    rejects = []
    events = [e for t in file_batches(Input(str(path), fmt), rejects, rows) for e in events_of(t)]
    line = lambda source: source.replace(str(path), "FILE")  # noqa: E731
    return (sorted((e.o, e.start - T0, e.end - T0, line(e.source)) for e in events),
            sorted((line(r.source), r.reason) for r in rejects))


def test_trig_and_nquads_time_their_events_alike_in_parts(tmp_path):
    trig, nq = write(tmp_path)
    events, rejects = read(trig, "trig", 4)
    nq_events, nq_rejects = read(nq, "nq", 4)
    assert rejects_with_the_nquads_line(rejects) == nq_rejects
    assert events == [('"1"', 1000, 1000, "FILE:1"), ('"10"', 10_000, 10_000, "FILE:23"),
                      ('"2"', 2000, 2000, "FILE:3"), ('"4"', 4000, 5000, "FILE:9")]
    # the same events; an N-Quads event's source is the time line that decided
    # its time (g4's interval: its prov:endedAtTime), a TriG one's its block
    assert nq_events == [('"1"', 1000, 1000, "FILE:2"), ('"10"', 10_000, 10_000, "FILE:24"),
                         ('"2"', 2000, 2000, "FILE:6"), ('"4"', 4000, 5000, "FILE:10")]
    g = lambda n: f"graph <{EX}g{n}>"  # noqa: E731
    reasons = dict(rejects)
    assert reasons["FILE:5"].startswith(f"prov:generatedAtTime of {g(3)}: ")
    assert reasons[f"FILE:graph <{EX}g1>"] == f"{g(1)} has its time already; this prov:generatedAtTime is skipped"
    assert reasons["FILE:13"] == f"{g(5)} has 2 different prov:generatedAtTime values; give exactly one"
    assert reasons["FILE:14"].startswith(f"{g(6)} has no timestamp: add") and reasons["FILE:14"].endswith(FAR)
    assert reasons["FILE:17"].startswith(f"{g(7)} has both prov:generatedAtTime and prov:startedAtTime")
    assert reasons["FILE:18"].startswith(f"{g(8)} ends (prov:endedAtTime") and "before it starts" in reasons["FILE:18"]
    assert reasons["FILE:21"].startswith(f"{g(9)} has no timestamp: add") and not reasons["FILE:21"].endswith(FAR)
    assert len(rejects) == 7


def rejects_with_the_nquads_line(rejects):
    """The TriG rejects as N-Quads places them: a time triple of the default
    graph by its line (rdflib gives TriG's none, so TriG names its graph)."""
    return sorted(("FILE:7", reason) if source == f"FILE:graph <{EX}g1>" else (source, reason)
                  for source, reason in rejects)


@pytest.mark.parametrize("fmt", ["trig", "nq"])
def test_read_whole_every_time_is_in_the_part_of_its_event(tmp_path, fmt):
    path = dict(zip(("trig", "nq"), write(tmp_path)))[fmt]
    events, rejects = read(path, fmt, 10_000)
    # an event's source: its TriG block; the N-Quads line that decided its time
    lines = {"trig": (23, 3, 9, 14), "nq": (24, 6, 10, 22)}[fmt]
    assert events == [('"10"', 10_000, 10_000, f"FILE:{lines[0]}"), ('"2"', 2000, 2000, f"FILE:{lines[1]}"),
                      ('"4"', 4000, 5000, f"FILE:{lines[2]}"), ('"6"', 6000, 6000, f"FILE:{lines[3]}")]
    assert [source for source, _ in rejects] == ["FILE:1", "FILE:13", "FILE:17", "FILE:18", "FILE:21", "FILE:5"]
    assert dict(rejects)["FILE:1"] == f"graph <{EX}g1> has 2 different prov:generatedAtTime values; give exactly one"


@pytest.mark.parametrize("fmt", ["nq", "nt"])
def test_an_event_over_two_parts_is_one_record(tmp_path, fmt):
    # the line given in both parts of g's (the subject's) event is one triple of
    # it: its rows share the source the timing stage keeps, the time line's
    g = f" <{EX}g>" if fmt == "nq" else ""
    at = f"<{EX}g>" if fmt == "nq" else f"<{EX}a>"
    triple = f'<{EX}a> <{EX}p> "1"{g} .'
    path = tmp_path / f"s.{fmt}"
    path.write_text("\n".join([triple, f'<{EX}a> <{EX}q> "2"{g} .', triple,
                               f"{at} <{PROV}generatedAtTime> {value(1)} ."]) + "\n")
    events, rejects = read(path, fmt, 2)
    want = [('"1"', 1000, 1000, "FILE:4")] * 2 + [('"2"', 1000, 1000, "FILE:4")]
    assert (events, rejects) == (want, [])


@pytest.mark.parametrize("rows", [4, 100])
def test_a_trig_graph_in_blocks_of_two_windows_is_one_record(tmp_path, rows):
    # g's triple is given in two blocks, in one window (100 statements) or
    # two (4): either way one triple of one graph, its source its first block
    # (rows repeated within one record are one: cep.engine._records)
    path = tmp_path / "s.trig"
    block = f'<{EX}g> {{ <{EX}a> <{EX}p> "1" }}'
    other = [f'<{EX}h{i}> {{ <{EX}a> <{EX}p> "h{i}" }}' for i in range(3)]
    times = [f"<{EX}{g}> <{PROV}generatedAtTime> {value(1)} ." for g in ("g", "h0", "h1", "h2")]
    path.write_text("\n".join([block, *other, block, *times]) + "\n")
    events, rejects = read(path, "trig", rows)
    assert rejects == []
    assert {e for e in events if e[0] == '"1"'} == {('"1"', 1000, 1000, "FILE:1")}
