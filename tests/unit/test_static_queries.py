"""Queries over static data alone (Streaming SPARQL's Listing 1.2): a
query that names its background with FROM <file> and reads no stream
answers the solutions of that data alone once, at the first instant of
the stream (docs/language.md, "Queries over static data"); the engine's
answers are the reference's (tests.unit.support.checked_answers)."""

from __future__ import annotations

from cep.background.knowledge import run_background
from cep.events import Event
from cep.rules import load_rules
from tests.unit.support import checked_answers

MY = "http://example.org/"
GRAPH = f"""@prefix my: <{MY}> .
my:w1 my:name "Anna" .
my:y1 my:power 5 .
"""
# the seed's Listing 1.2, its graph a local file
LISTING_12 = f"""PREFIX my: <{MY}>
SELECT ?w ?x ?y ?z
FROM <graph.ttl>
WHERE {{ {{ ?w my:name ?x }} UNION {{ ?y my:power ?z }} }}
"""


def run(tmp_path, text, events):
    (tmp_path / "graph.ttl").write_text(GRAPH)
    rq = tmp_path / "q.rq"
    rq.write_text(text)
    queries = list(load_rules([rq]))
    got = checked_answers(queries, events, run_background(queries))
    return sorted((tuple(sorted((k, v[len(MY) + 1:-1] if v.startswith(f"<{MY}") else v) for k, v in a.bindings)),
                   a.start, a.end) for a in got)


def power(s, o, t):
    return Event(f"<{MY}{s}>", f"<{MY}power>", f'"{o}"', t, t)


def test_listing_12_answers_its_graph_once_at_the_first_instant(tmp_path):
    events = [power("y2", 7, 1000), power("y3", 8, 2000)]
    assert run(tmp_path, LISTING_12, events) == [
        ((("w", "w1"), ("x", '"Anna"')), 1000, 1000),
        ((("y", "y1"), ("z", '"5"^^<http://www.w3.org/2001/XMLSchema#integer>')), 1000, 1000),
        ((("y", "y2"), ("z", '"7"')), 1000, 1000),  # the events answer as they come
        ((("y", "y3"), ("z", '"8"')), 2000, 2000),
    ]


def test_an_empty_stream_has_no_first_instant(tmp_path):
    assert run(tmp_path, LISTING_12, []) == []


def test_an_empty_stream_says_why_a_query_over_static_data_gave_no_answer(tmp_path, capsys):
    """Not silent: `cep run` warns that the first instant, when such a
    query answers, never came; a stream with an event says nothing."""
    from cep import cli

    (tmp_path / "graph.ttl").write_text(GRAPH)
    (tmp_path / "q.rq").write_text(LISTING_12)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert cli.main(["run", str(tmp_path / "q.rq"), "--events", str(empty)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "warning: q: over static data alone" in err and "the stream had no event" in err
    one = tmp_path / "one.jsonl"
    one.write_text(f'{{"s": "<{MY}y2>", "p": "<{MY}power>", "o": "\\"7\\"", "t": 1000}}\n')
    assert cli.main(["run", str(tmp_path / "q.rq"), "--events", str(one)]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 3 and "warning" not in err


def test_a_query_that_reads_a_stream_is_not_over_static_data(tmp_path):
    text = LISTING_12.replace("FROM <graph.ttl>", f"FROM <graph.ttl>\nFROM STREAM <{MY}s> [RANGE 1s TUMBLING]")
    # a window holds the events' solutions; those of the background alone are in none
    assert [b for b, _, _ in run(tmp_path, text, [power("y2", 7, 1000)])] == [(("y", "y2"), ("z", '"7"'))]


def test_a_join_with_events_keeps_their_times(tmp_path):
    text = f"""PREFIX my: <{MY}>
SELECT ?y ?n FROM <graph.ttl> WHERE {{ ?y my:power ?z . ?w my:name ?n }}
"""
    # y1's power is in the graph: with the name, a solution of the graph alone;
    # y2's is an event at 3000, joined with the graph's name
    got = run(tmp_path, text, [power("y2", 7, 3000)])
    assert got == [((("n", '"Anna"'), ("y", "y1")), 3000, 3000), ((("n", '"Anna"'), ("y", "y2")), 3000, 3000)]
