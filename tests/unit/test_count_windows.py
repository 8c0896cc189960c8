"""Count windows count events (timestamped graphs), [TRIPLES n] triples
(docs/language.md, "Windows"): what an event is in each input format, read
by the project's readers and run through the engine."""

from __future__ import annotations

import json

from cep.engine import Engine
from cep.events import Event, events_of
from cep.io.readers import event_batches, inputs
from cep.rules import parse_rules

EX = "http://example.org/"
TIME = "http://www.w3.org/ns/prov#generatedAtTime"
DT = "^^<http://www.w3.org/2001/XMLSchema#dateTime>"
RULES = f"""PREFIX : <{EX}>
REGISTER QUERY events AS
SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> WINDOW ELEMS 2 WHERE {{ ?t :speed ?v }}
REGISTER QUERY triples AS
SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [TRIPLES 2] WHERE {{ ?t :speed ?v }}
"""


def counts(events) -> dict:
    """query -> [(start s, end s, n)] of its answers."""
    engine = Engine(list(parse_rules(RULES, "count.rq")))
    got = engine.push(sorted(events, key=lambda e: e.end)) + engine.flush()
    out = {}
    for a in sorted(got, key=lambda a: (a.query, a.end)):
        n = int(a.binding("n").split('"')[1])
        out.setdefault(a.query, []).append((a.start // 1000, a.end // 1000, n))
    return out


def read(path) -> list[Event]:
    rejects = []
    events = [e for t in event_batches(inputs([str(path)]), rejects, 1000) for e in events_of(t)]
    assert rejects == []
    return events


def at(second: int) -> str:
    return f'"1970-01-01T00:00:{second:02d}Z"{DT}'


# events of two triples at 1 and 2 s (a speed and a direction), one of one at 3 s
GRAPHS = [(1, 2), (2, 2), (3, 1)]
# at 2 s the last 2 events reach back to 1 s, the last 2 triples do not;
# at 3 s the 2nd triple back is inside the event at 2 s: that instant is whole
EXPECTED = {"events": [(1, 1, 1), (1, 2, 2), (2, 3, 2)],
            "triples": [(1, 1, 1), (2, 2, 1), (2, 3, 2)]}


def test_trig_named_graph_is_one_event(tmp_path):
    lines = ["@prefix : <http://example.org/> ."]
    for i, (t, size) in enumerate(GRAPHS):
        body = " . ".join([f":t{i} :speed {t}", f":t{i} :direction :north"][:size])
        lines.append(f"<{EX}g{i}> {{ {body} }} <{EX}g{i}> <{TIME}> {at(t)} .")
    path = tmp_path / "s.trig"
    path.write_text("\n".join(lines) + "\n")
    assert counts(read(path)) == EXPECTED


def test_nquads_named_graph_is_one_event(tmp_path):
    lines = []
    for i, (t, size) in enumerate(GRAPHS):
        # the direction first, as TriG's reader orders a graph's triples
        # (by their terms): [TRIPLES n] reads an instant's in line order
        lines += [f"<{EX}t{i}> <{EX}direction> <{EX}north> <{EX}g{i}> .",
                  f"<{EX}t{i}> <{EX}speed> \"{t}\" <{EX}g{i}> ."][-size:]
        lines.append(f"<{EX}g{i}> <{TIME}> {at(t)} .")
    path = tmp_path / "s.nq"
    path.write_text("\n".join(lines) + "\n")
    assert counts(read(path)) == EXPECTED


def test_ntriples_subject_with_its_time_is_one_event(tmp_path):
    lines = []
    for i, (t, size) in enumerate(GRAPHS):
        lines += [f"<{EX}t{i}> <{EX}direction> <{EX}north> .", f"<{EX}t{i}> <{EX}speed> \"{t}\" ."][-size:]
        lines.append(f"<{EX}t{i}> <{TIME}> {at(t)} .")
    path = tmp_path / "s.nt"
    path.write_text("\n".join(lines) + "\n")
    assert counts(read(path)) == EXPECTED


def test_each_row_of_a_table_is_an_event_and_a_repeated_row_is_two(tmp_path):
    rows = [{"s": f"<{EX}t1>", "p": f"<{EX}speed>", "o": '"1"', "t": 1000},
            {"s": f"<{EX}t2>", "p": f"<{EX}speed>", "o": '"2"', "t": 2000},
            {"s": f"<{EX}t2>", "p": f"<{EX}speed>", "o": '"2"', "t": 2000}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = counts(read(path))
    # the repeated record is two events: at 2 s the last two events are both of it
    assert [(s, e) for s, e, _ in got["events"]] == [(1, 1), (2, 2)]
    assert [(s, e) for s, e, _ in got["triples"]] == [(1, 1), (2, 2)]


def test_events_without_a_source_are_one_triple_each():
    ev = [Event(f"<{EX}t{t}>", f"<{EX}speed>", f'"{t}"', t * 1000, t * 1000) for t in (1, 2, 2)]
    got = counts(ev)
    assert [(s, e) for s, e, _ in got["events"]] == [(1, 1), (2, 2)]
