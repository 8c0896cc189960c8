"""Streaming SPARQL's windows (Bolles, Grawunder, Jacobi, section 2): the
syntax `WINDOW RANGE v [unit] SLIDE [v [unit]]`, `WINDOW RANGE v FIXED` and
`WINDOW ELEMS n`, in FROM STREAM and at the end of the WHERE group, read as
the engine's windows (docs/language.md, "Windows"); hand-checked, and each
run is also the reference evaluator's."""

import pytest

from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

PREFIX = "PREFIX : <http://e/>\n"
S = "<http://e/s>"
MIN, HOUR, DAY = 60_000, 3_600_000, 86_400_000


def window(clause: str, where: str = "{ ?s ?p ?o }"):
    """(range ms, step ms, count) of the one query's window."""
    (q,) = parse_rules(f"{PREFIX}SELECT * FROM STREAM {S} {clause} WHERE {where}", "x.rq")
    return q.window.range_ms, q.window.step_ms, q.window.count


@pytest.mark.parametrize("clause, spec", [
    # milliseconds unless a unit is written (section 2)
    ("WINDOW RANGE 1500 SLIDE 500", (1500, 500, None)),
    # SLIDE alone moves the window by 1 of RANGE's unit
    ("WINDOW RANGE 30 MINUTE SLIDE", (30 * MIN, MIN, None)),
    ("WINDOW RANGE 1000 SLIDE", (1000, 1, None)),
    ("WINDOW RANGE 2 WEEK SLIDE", (14 * DAY, 7 * DAY, None)),
    ("WINDOW RANGE 10 S SLIDE 2 S", (10_000, 2000, None)),
    ("window range 2 week slide 1 day", (14 * DAY, DAY, None)),  # keywords in any case
    ("WINDOW RANGE 90 MINUTE SLIDE 1 HOUR", (90 * MIN, HOUR, None)),
    ("WINDOW RANGE 100 MS SLIDE 7", (100, 7, None)),
    # FIXED: the slide is the range (a tumbling window)
    ("WINDOW RANGE 1 HOUR FIXED", (HOUR, HOUR, None)),
    ("WINDOW RANGE 2 DAY FIXED", (2 * DAY, 2 * DAY, None)),
    # ELEMS: the last n elements, C-SPARQL's [TRIPLES n]
    ("WINDOW ELEMS 1500", (None, None, 1500)),
])
def test_the_window_clause_reads_as_the_engines_window(clause, spec):
    assert window(clause) == spec


def test_the_same_window_in_either_syntax_is_the_same_query():
    streaming = parse_rules(f"{PREFIX}SELECT * FROM STREAM {S} WINDOW RANGE 1 HOUR SLIDE 5 MINUTE "
                            f"WHERE {{ ?s ?p ?o }}", "x.rq")
    csparql = parse_rules(f"{PREFIX}SELECT * FROM STREAM {S} [RANGE 1h STEP 5m] WHERE {{ ?s ?p ?o }}", "x.rq")
    assert streaming == csparql


def test_a_window_at_the_end_of_the_where_group_replaces_the_streams():
    # "only the more special window of the graph pattern is evaluated" (section 2)
    assert window("WINDOW RANGE 1 HOUR FIXED", "{ ?s ?p ?o WINDOW ELEMS 3 }") == (None, None, 3)
    assert window("[RANGE 1h STEP 1m]", "{ ?s ?p ?o . ?o ?q ?r . WINDOW RANGE 10 S SLIDE }") == (10_000, 1000, None)


def event(s, p, o, minute):
    return Event(f"<http://e/{s}>", f"<http://e/{p}>", f"<http://e/{o}>", minute * MIN, minute * MIN)


STREAM = [event("k", "a", "x", 1), event("k", "a", "y", 12), event("j", "a", "x", 25), event("j", "a", "z", 26)]


def rows(answers):
    return sorted((a.start // MIN, a.end // MIN, a.binding("o")[len("<http://e/"):-1]) for a in answers)


def test_a_fixed_window_runs_as_its_c_sparql_twin():
    text = "SELECT ?o FROM STREAM <http://e/s> WINDOW RANGE 10 MINUTE FIXED WHERE { ?s :a ?o }"
    got = checked_answers(parse_rules(PREFIX + text), STREAM)
    # tumbling windows (0, 10], (10, 20], (20, 30]: each event in exactly one
    assert rows(got) == [(0, 10, "x"), (10, 20, "y"), (20, 30, "x"), (20, 30, "z")]
    twin = "SELECT ?o FROM STREAM <http://e/s> [RANGE 10m TUMBLING] WHERE { ?s :a ?o }"
    assert rows(checked_answers(parse_rules(PREFIX + twin), STREAM)) == rows(got)


def test_an_element_window_holds_the_last_n_events():
    text = "SELECT ?o FROM STREAM <http://e/s> WINDOW ELEMS 2 WHERE { ?s :a ?o }"
    got = checked_answers(parse_rules(PREFIX + text), STREAM)
    # evaluated at each event's instant over the last two events: its start
    # is the oldest instant in it
    assert rows(got) == [(1, 1, "x"), (1, 12, "x"), (1, 12, "y"), (12, 25, "x"), (12, 25, "y"),
                         (25, 26, "x"), (25, 26, "z")]


@pytest.mark.parametrize("text, message", [
    ("SELECT * FROM STREAM <http://e/s> WINDOW ELEMS 0 WHERE { ?s ?p ?o }",
     "x.rq:1:48: a count-based window holds at least one event: WINDOW ELEMS 1"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW ELEMS 2.5 WHERE { ?s ?p ?o }",
     "x.rq:1:48: a window's size is a whole number, not 2.5"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW RANGE 0 SLIDE WHERE { ?s ?p ?o }",
     "x.rq:1:48: a window's RANGE and SLIDE must be positive, not 0"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW RANGE 10 S SLIDE 0 S WHERE { ?s ?p ?o }",
     "x.rq:1:59: a window's RANGE and SLIDE must be positive, not 0"),
    ("SELECT * WHERE { ?s ?p ?o WINDOW ELEMS 5 }",
     "x.rq:1:27: a window applies to the streams the query reads, and it reads none: add "
     "FROM STREAM <iri> WINDOW ... before WHERE"),
])
def test_a_window_that_cannot_be_is_an_error_at_its_place(text, message):
    with pytest.raises(QueryError) as info:
        parse_rules(text, "x.rq")
    assert str(info.value) == message
