"""Streaming SPARQL's windows (Bolles, Grawunder, Jacobi, section 2): the
syntax `WINDOW RANGE v [unit] SLIDE [v [unit]]`, `WINDOW RANGE v FIXED` and
`WINDOW ELEMS n`, in FROM STREAM and at the end of the WHERE group, read as
the engine's windows (docs/language.md, "Windows"); hand-checked, and each
run is also the reference evaluator's."""

import re

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


# ------------------------------------------- RSP-QL's options after the window


def options(clause: str, where: str = "{ ?s ?p ?o }"):
    """(report policy, period ms, t0 ms) of the one query's window."""
    (q,) = parse_rules(f"{PREFIX}SELECT * FROM STREAM {S} {clause} WHERE {where}", "x.rq")
    return q.window.policy, q.window.period_ms, q.window.t0_ms


T0 = 1_772_445_300_000  # 2026-03-02T09:55:00Z


@pytest.mark.parametrize("clause, where, spec", [
    ("WINDOW RANGE 30 MINUTE SLIDE 10 MINUTE REPORT ON CHANGE", "{ ?s ?p ?o }", ("change", None, None)),
    ("WINDOW RANGE 30 MINUTE SLIDE REPORT NON EMPTY TICK TIME", "{ ?s ?p ?o }", ("nonempty", None, None)),
    ("WINDOW RANGE 1 HOUR FIXED REPORT ON CLOSE", "{ ?s ?p ?o }", ("close", None, None)),
    # REPORT EVERY's period is a value and unit as RANGE's (milliseconds without one)
    ("WINDOW RANGE 30 MINUTE SLIDE 10 MINUTE REPORT EVERY 15 MINUTE", "{ ?s ?p ?o }", ("every", 15 * MIN, None)),
    ("WINDOW RANGE 3000 SLIDE 1000 REPORT EVERY 1500", "{ ?s ?p ?o }", ("every", 1500, None)),
    ('WINDOW RANGE 20 MINUTE FIXED START "2026-03-02T09:55:00Z"', "{ ?s ?p ?o }", (None, None, T0)),
    ("WINDOW ELEMS 3 REPORT ON CHANGE TICK BATCH", "{ ?s ?p ?o }", ("change", None, None)),
    # the WHERE group's window takes the stream's options, or gives its own
    ("WINDOW RANGE 1 HOUR FIXED REPORT ON CHANGE", "{ ?s ?p ?o WINDOW ELEMS 3 }", ("change", None, None)),
    ("WINDOW RANGE 1 HOUR FIXED", "{ ?s ?p ?o WINDOW ELEMS 3 REPORT NON EMPTY }", ("nonempty", None, None)),
    ("[RANGE 1h STEP 1m REPORT ON CHANGE]", "{ ?s ?p ?o WINDOW RANGE 10 S SLIDE REPORT ON CHANGE }",
     ("change", None, None)),
])
def test_start_report_and_tick_follow_a_streaming_window(clause, where, spec):
    assert options(clause, where) == spec


def test_the_options_in_either_syntax_are_the_same_query():
    streaming = parse_rules(f'{PREFIX}SELECT * FROM STREAM {S} WINDOW RANGE 30 MINUTE SLIDE 10 MINUTE '
                            f'START "2026-03-02T09:55:00Z" REPORT EVERY 15 MINUTE TICK TIME WHERE {{ ?s ?p ?o }}',
                            "x.rq")
    csparql = parse_rules(f'{PREFIX}SELECT * FROM STREAM {S} [RANGE 30m STEP 10m START "2026-03-02T09:55:00Z" '
                          f'REPORT EVERY 15m TICK TIME] WHERE {{ ?s ?p ?o }}', "x.rq")
    assert streaming == csparql


def test_a_streaming_window_reports_on_change_as_its_c_sparql_twin():
    # the last 2 events of :a; :b's events change no solution, so ON CHANGE
    # skips their instants where ON CLOSE answers again
    stream = [event("k", "a", "x", 1), event("k", "b", "y", 2), event("k", "a", "z", 3)]
    text = "SELECT ?o FROM STREAM <http://e/s> WINDOW ELEMS 3 REPORT ON CHANGE WHERE { ?s :a ?o }"
    got = checked_answers(parse_rules(PREFIX + text), stream)
    assert rows(got) == [(1, 1, "x"), (1, 3, "x"), (1, 3, "z")]
    twin = "SELECT ?o FROM STREAM <http://e/s> [TRIPLES 3 REPORT ON CHANGE] WHERE { ?s :a ?o }"
    assert rows(checked_answers(parse_rules(PREFIX + twin), stream)) == rows(got)
    closing = "SELECT ?o FROM STREAM <http://e/s> WINDOW ELEMS 3 WHERE { ?s :a ?o }"
    assert (1, 2, "x") in rows(checked_answers(parse_rules(PREFIX + closing), stream))


@pytest.mark.parametrize("text, message", [
    ('SELECT * FROM STREAM <http://e/s> WINDOW ELEMS 3 START "2026-03-02T09:55:00Z" WHERE { ?s ?p ?o }',
     "x.rq:1:50: START gives the time a sequence of time-based windows starts at; a count window holds "
     "the last events, whenever they came"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW ELEMS 3 REPORT EVERY 5 S WHERE { ?s ?p ?o }",
     "x.rq:1:50: REPORT EVERY reports a time-based window periodically; a count window is evaluated at "
     "every instant of the stream: use a time-based window ([RANGE ... STEP ...], WINDOW RANGE ... SLIDE ...)"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW ELEMS 3 TICK TIME WHERE { ?s ?p ?o }",
     "x.rq:1:55: a count window's content changes only when events come: it is evaluated at each instant "
     "(TICK BATCH), not as time passes"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW RANGE 10 S SLIDE TICK BATCH WHERE { ?s ?p ?o }",
     "x.rq:1:64: a time-based window closes as event time passes its close, with or without an event "
     "there (TICK TIME); evaluating it only at the instants of events is not supported"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW RANGE 10 S SLIDE REPORT EVERY 0 S WHERE { ?s ?p ?o }",
     "x.rq:1:72: REPORT EVERY's period must be positive, not 0"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW RANGE 1 HOUR FIXED REPORT ON CHANGE "
     "WHERE { ?s ?p ?o WINDOW ELEMS 3 REPORT NON EMPTY }",
     "x.rq:1:110: the WHERE group's window replaces the window on <http://e/s>, whose report policy "
     "differs from its own: give the report policy on one of them"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW RANGE 1 HOUR FIXED WHERE { ?s <http://e/a> ?o { ?s <http://e/b> ?p "
     "WINDOW ELEMS 2 REPORT ON CHANGE } }",
     "x.rq:1:124: a report policy belongs to the query's window (the query is evaluated when that window "
     "is): give it after FROM STREAM ... WINDOW ... or on the WHERE group's window, not on a group's own "
     "window"),
    ("SELECT * FROM STREAM <http://e/s> WINDOW RANGE 1 HOUR FIXED WHERE { ?s <http://e/a> ?o { ?s <http://e/b> ?p "
     "WINDOW RANGE UNBOUNDED SLIDE 5 S } }",
     "x.rq:1:122: RANGE UNBOUNDED holds everything from the window's start t0 to each evaluation: give "
     "START \"...\"^^xsd:dateTime"),
])
def test_an_option_a_window_cannot_take_is_an_error_at_its_place(text, message):
    with pytest.raises(QueryError) as info:
        parse_rules(text, "x.rq")
    assert str(info.value) == message


# ------------------------------------------------------ a window per pattern


def count(s, p, n, minute):
    return Event(f"<http://e/{s}>", f"<http://e/{p}>", f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>',
                 minute * MIN, minute * MIN)


def value(answer, name):
    term = answer.binding(name)
    return None if term is None else short(term)


def short(term):
    """An IRI of http://e/ by its local name, a literal by its lexical form."""
    return term[len("<http://e/"):-1] if term.startswith("<") else term.split('"')[1]


def table(answers, *names):
    """(window start minute, evaluation minute, values...) per answer, sorted."""
    return sorted((a.start // MIN, a.end // MIN, *(value(a, n) for n in names)) for a in answers)


TURBINES = """SELECT ?x ?y ?z FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { ?x :StrCnt ?y . OPTIONAL { ?x :StopCnt ?z . WINDOW ELEMS 1 } }"""


def test_an_optional_group_with_an_element_window_is_read_over_its_own_window():
    # Listing 1.1's shape with small windows: starts over a tumbling window
    # of 10 minutes, stops over the last element of the stream
    got = checked_answers(parse_rules(PREFIX + TURBINES), [
        count("t1", "StrCnt", 3, 1), count("t1", "StopCnt", 1, 4), count("t2", "StrCnt", 7, 6),
        count("t1", "StopCnt", 2, 12)])
    # evaluated when the first group's window is: at 10 and 20 (and no more:
    # the window (20, 30] holds no start)
    # - at 10, (0, 10] holds t1's and t2's starts; the last element up to 10
    #   is t2's start (minute 6), no stop: both without ?z, although t1's
    #   stop at 4 is in the stream (it is not in its group's window)
    # - at 20, (10, 20] holds no start: no answer, whatever the last element
    assert table(got, "x", "y", "z") == [(0, 10, "t1", "3", None), (0, 10, "t2", "7", None)]


def test_the_optional_group_binds_where_its_window_holds_a_match():
    got = checked_answers(parse_rules(PREFIX + TURBINES), [
        count("t1", "StrCnt", 3, 1), count("t2", "StrCnt", 7, 6), count("t1", "StopCnt", 1, 9),
        count("t1", "StrCnt", 4, 15), count("t2", "StopCnt", 5, 18)])
    # - at 10: starts t1 3, t2 7; the last element up to 10 is t1's stop 1
    # - at 20: start t1 4; the last element up to 20 is t2's stop (18),
    #   which t1 does not match
    assert table(got, "x", "y", "z") == [(0, 10, "t1", "3", "1"), (0, 10, "t2", "7", None),
                                         (10, 20, "t1", "4", None)]


def test_an_optional_inside_a_group_with_its_own_window_is_evaluated_over_that_window():
    # RSP-QL: inside a window, OPTIONAL is evaluated over the window's content
    text = """SELECT ?x ?y ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { ?x :s ?y { ?x :a ?a OPTIONAL { ?x :b ?b } WINDOW ELEMS 2 } }"""
    got = checked_answers(parse_rules(PREFIX + text), [
        count("k", "s", 1, 1), count("k", "b", 5, 2), count("z", "c", 0, 3), count("k", "a", 2, 4),
        count("j", "s", 3, 12), count("j", "a", 4, 13), count("j", "b", 6, 14)])
    # - at 10: s k 1 in (0, 10]; the last 2 events up to 10 are c z (3) and
    #   a k 2 (4): a k 2 with ?b unbound, although b k 5 (2) is in the
    #   stream (not in the group's window)
    # - at 20: s j 3 in (10, 20]; the last 2 events are a j 4 and b j 6
    assert table(got, "x", "y", "a", "b") == [(0, 10, "k", "1", "2", None), (10, 20, "j", "3", "4", "6")]


MINUS_IN_GROUP = """SELECT ?x ?y ?a FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
                    WHERE { ?x :s ?y { ?x :a ?a MINUS { ?x :c ?c } WINDOW ELEMS 3 } }"""
MINUS_STREAM = [count("k", "s", 1, 1), count("j", "s", 3, 2), count("j", "c", 0, 3), count("k", "a", 2, 7),
                count("k", "c", 0, 8), count("j", "a", 4, 9), count("j", "s", 5, 12)]


def test_minus_inside_a_group_with_its_own_window_is_evaluated_over_that_window():
    # RSP-QL: inside a window, MINUS is evaluated over the window's content
    got = checked_answers(parse_rules(PREFIX + MINUS_IN_GROUP), MINUS_STREAM)
    # - at 10: s k 1 and s j 3 in (0, 10]; the last 3 events up to 10 are
    #   a k 2 (7), c k (8) and a j 4 (9): k is cancelled in the window
    #   (after its :a: over the stream a cancellation must lie within the
    #   :a's interval, and none would remove it), j's cancellation (3) is
    #   not in the window: j alone
    # - at 20: s j 5 in (10, 20]; the last 3 events up to 20 are c k, a j 4
    #   and s j 5: j again
    assert table(got, "x", "y", "a") == [(0, 10, "j", "3", "4"), (10, 20, "j", "5", "4")]


def test_operators_inside_a_group_with_its_own_window_are_evaluated_over_that_window():
    # what a group's window does not hold decides nothing: an OPTIONAL under
    # BIND, a grouped subquery and FILTER EXISTS see the last 2 events only
    where = {"bind": "?x :a ?a OPTIONAL { ?x :b ?b } BIND (COALESCE(?b, 0) AS ?z)",
             "subquery": "?x :a ?a { SELECT ?x (COUNT(*) AS ?z) WHERE { ?x :b ?b } GROUP BY ?x }",
             "exists": "?x :a ?a BIND (1 AS ?z) FILTER EXISTS { ?x :b ?b }"}
    stream = [count("k", "s", 1, 1), count("k", "b", 5, 2), count("k", "a", 2, 4), count("k", "b", 6, 5)]
    got = {}
    for name, inner in where.items():
        text = f"""SELECT ?x ?a ?z FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
                   WHERE {{ ?x :s ?y {{ {inner} WINDOW ELEMS 2 }} }}"""
        got[name] = table(checked_answers(parse_rules(PREFIX + text), stream), "x", "a", "z")
    # at 10: s k 1 in (0, 10]; the last 2 events are a k 2 (4) and b k 6 (5)
    assert got["bind"] == [(0, 10, "k", "2", "6")]  # not b k 5 (2), outside
    # the subquery's rows at each instant the window holds: 0 at 4 (the
    # empty group's, ?x unbound), k 1 at 5 (b k 5 at 2 is outside)
    assert got["subquery"] == [(0, 10, "k", "2", "0"), (0, 10, "k", "2", "1")]
    assert got["exists"] == [(0, 10, "k", "2", "1")]


def test_a_first_group_with_its_own_window_is_evaluated_over_that_windows_content():
    # the query is evaluated when its first group's window is, and that
    # group's solutions are those over its window's content: FILTER EXISTS
    # finds the :b that comes after the :a there (over the stream none lies
    # within the :a's interval, and the group would have no solution)
    text = """SELECT ?x ?c FROM STREAM <http://e/td> WINDOW ELEMS 2
              WHERE { { ?x :a ?a FILTER EXISTS { ?x :b ?b } WINDOW RANGE 10 MINUTE FIXED }
                      OPTIONAL { ?x :c ?c } }"""
    got = checked_answers(parse_rules(PREFIX + text), [count("k", "a", 1, 1), count("k", "b", 2, 5),
                                                         count("k", "c", 3, 6)])
    # at 10: (0, 10] holds a k 1 and b k 2; the last 2 events b k 2 and c k 3
    assert table(got, "x", "c") == [(0, 10, "k", "3")]


def test_an_optional_inside_a_group_with_its_own_window_gives_a_set_of_solutions():
    # as inside a query's one window, the group's solutions over its
    # window's content are a set: :a 1 and :b 2 of k at minutes 1 and 2 give
    # [1, 1], [2, 2] and [1, 2] (a at 1 with b at 2, and a at 2 with b at 1:
    # one solution), not four
    text = """SELECT ?x ?w FROM STREAM <http://e/td> WINDOW ELEMS 1
              WHERE { ?x :s ?y { ?x :a ?v OPTIONAL { ?x :b ?w } WINDOW RANGE 10 MINUTE FIXED } }"""
    got = checked_answers(parse_rules(PREFIX + text), [
        count("k", "a", 1, 1), count("k", "b", 2, 1), count("k", "a", 1, 2), count("k", "b", 2, 2),
        count("k", "s", 0, 12)])
    # at 12: the last element is s k 0; the group's window (0, 10] closed last
    assert table(got, "x", "w") == [(12, 12, "k", "2")] * 3


def test_a_first_group_with_its_own_window_filters_its_optional_over_that_window():
    # starts with no stop in the last 10 minutes (the first group: the query
    # is evaluated when its window is), then :c among the last 2 events
    text = """SELECT ?x ?a ?c FROM STREAM <http://e/td> WINDOW ELEMS 2
              WHERE { { ?x :a ?a OPTIONAL { ?x :b ?b } FILTER (!BOUND(?b)) WINDOW RANGE 10 MINUTE FIXED }
                      OPTIONAL { ?x :c ?c } }"""
    got = checked_answers(parse_rules(PREFIX + text), [
        count("k", "a", 1, 1), count("k", "b", 5, 2), count("j", "a", 2, 3), count("j", "c", 7, 4),
        count("i", "a", 3, 5), count("i", "b", 6, 12), count("k", "c", 8, 13), count("m", "a", 4, 14)])
    # - at 10, (0, 10] holds a k 1, a j 2, a i 3 and b k 5: k has a stop,
    #   j and i none (b i 6 at 12 is past the window); the last 2 events up
    #   to 10 are c j 7 (4) and a i 3 (5): j with ?c 7, i without
    # - at 20, (10, 20] holds a m 4 and b i 6: m has no stop; the last 2
    #   events are c k 8 (13) and a m 4 (14): m without ?c
    # - (20, 30] holds no start: no more evaluations
    assert table(got, "x", "a", "c") == [(0, 10, "i", "3", None), (0, 10, "j", "2", "7"),
                                         (10, 20, "m", "4", None)]


def test_two_groups_with_time_windows_of_different_sizes_are_joined_at_each_evaluation():
    text = """SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 5 MINUTE SLIDE 5 MINUTE
              WHERE { ?x :a ?a . { ?x :b ?b WINDOW RANGE 20 MINUTE SLIDE } }"""
    got = checked_answers(parse_rules(PREFIX + text), [
        count("k", "b", 1, 2), count("k", "a", 10, 14), count("k", "a", 11, 24), count("j", "a", 12, 24)])
    # evaluated every 5 minutes over (c - 5, c] for :a; :b over the last
    # 20 minutes at that time, (c - 20, c]:
    # - at 15: a 10 (14); b 1 (2) is in (-5, 15]: joined
    # - at 25: a 11 and 12 (24); b 1 at 2 is not in (5, 25]: no join
    assert table(got, "x", "a", "b") == [(10, 15, "k", "10", "1")]


def test_the_stream_window_is_the_default_of_the_groups_without_their_own():
    text = """SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW ELEMS 1
              WHERE { ?x :a ?a . { ?x :b ?b WINDOW RANGE 1 HOUR SLIDE 1 MINUTE } }"""
    got = checked_answers(parse_rules(PREFIX + text), [
        count("k", "b", 1, 2), count("k", "a", 10, 4), count("k", "a", 11, 7), count("k", "c", 0, 9)])
    # evaluated at each instant (its first group, :a, has the stream's
    # count window): :a is the last element, :b over the last hour
    # - at 2: the last element is b: no :a
    # - at 4 and 7: a 10, then a 11, each with b 1 of minute 2
    # - at 9: the last element is c: no :a
    assert table(got, "x", "a", "b") == [(4, 4, "k", "10", "1"), (7, 7, "k", "11", "1")]


def test_a_filter_over_groups_with_their_own_windows_reads_both():
    text = """SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { ?x :a ?a . { ?x :b ?b WINDOW ELEMS 2 } FILTER (?a < ?b) }"""
    got = checked_answers(parse_rules(PREFIX + text), [
        count("k", "a", 5, 1), count("k", "b", 4, 2), count("k", "b", 6, 3)])
    # at 10: a 5; the last two elements are b 4 and b 6: only 6 is larger
    assert table(got, "x", "a", "b") == [(0, 10, "k", "5", "6")]


@pytest.mark.parametrize("group", [
    "{ ?x :b ?b FILTER (NOW() >= \"1970-01-01T00:03:00Z\"^^xsd:dateTime) WINDOW ELEMS 3 }",
    "{ ?x :b ?b FILTER (getENDTIME() >= \"1970-01-01T00:03:00Z\"^^xsd:dateTime) WINDOW ELEMS 3 }",
    # OPTIONAL's own FILTER is its condition, read on the joined solutions (below): in a group
    # inside it, the group's
    "OPTIONAL { { ?x :b ?b FILTER (NOW() >= \"1970-01-01T00:03:00Z\"^^xsd:dateTime) } WINDOW ELEMS 3 }",
])
def test_a_filter_inside_a_group_with_its_own_window_reads_the_time_of_its_solutions(group):
    # the FILTER is the group's: it is evaluated over the group's window
    # (RSP-QL), on each of the group's solutions, whose time (NOW(): the
    # end of the solution, docs/language.md) is its event's, not that of
    # the solutions the groups are joined into
    text = f"""SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE {{ ?x :a ?a . {group} }}"""
    got = checked_answers(parse_rules(PREFIX + "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n" + text), [
        count("k", "b", 4, 2), count("k", "b", 6, 3), count("k", "a", 5, 4)])
    # at 10: a 5 (minute 4); the last three elements hold b 4 (minute 2)
    # and b 6 (minute 3): only b 6 is at or after minute 3. Read on the
    # joined solutions, which end with a 5 at 4, the FILTER would keep both
    assert table(got, "x", "a", "b") == [(0, 10, "k", "5", "6")]


@pytest.mark.parametrize("condition, expected", [
    # b 4 at minute 2 and b 6 at 3, each joined with a 5 at 4: the joined
    # solutions span [2, 4] and [3, 4]
    ('getSTARTTIME() >= "1970-01-01T00:03:00Z"^^xsd:dateTime', [(0, 10, "k", "5", "6")]),
    ('getDURATION() < "PT2M"^^xsd:duration', [(0, 10, "k", "5", "6")]),  # 2 and 1 minutes
    # both end at 4 (a 5's end): read on the OPTIONAL group's own solutions
    # (ends 2 and 3) it would keep neither
    ('getENDTIME() > "1970-01-01T00:03:00Z"^^xsd:dateTime', [(0, 10, "k", "5", "4"), (0, 10, "k", "5", "6")]),
    # none holds: a 5 alone, as LeftJoin gives a solution no right one extends
    ('NOW() >= "1970-01-01T00:05:00Z"^^xsd:dateTime', [(0, 10, "k", "5", None)]),
])
def test_an_optional_groups_filter_reads_the_time_of_the_joined_solutions(condition, expected):
    # OPTIONAL { P FILTER(F) } is LeftJoin(_, P, F) (SPARQL 1.1, 18.2.2):
    # F is read on each joined solution, whose interval spans its parts',
    # each in its own window at the evaluation (RSP-QL): at 10 the tumbling
    # window holds a 5 (minute 4), the last three elements b 4 (2) and b 6 (3)
    text = f"""SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE {{ ?x :a ?a OPTIONAL {{ ?x :b ?b FILTER ({condition}) WINDOW ELEMS 3 }} }}"""
    got = checked_answers(parse_rules(PREFIX + "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n" + text), [
        count("k", "b", 4, 2), count("k", "b", 6, 3), count("k", "a", 5, 4)])
    assert table(got, "x", "a", "b") == expected


def test_an_optional_groups_filter_after_the_empty_group_reads_the_span_to_the_close():
    # { OPTIONAL { P FILTER(F) WINDOW ELEMS 3 } }: the first part is {}, the
    # empty solution at the close of the query's window (10); joined with b 4
    # (minute 2) it spans 8 minutes, with b 6 (3) 7: only b 6 passes; at 20
    # (the first window to start at or after the last instant, 4) they span
    # 18 and 17 minutes: the empty solution alone
    text = """SELECT ?x ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { OPTIONAL { ?x :b ?b FILTER (getDURATION() <= "PT7M"^^xsd:duration) WINDOW ELEMS 3 } }"""
    got = checked_answers(parse_rules(PREFIX + "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n" + text), [
        count("k", "b", 4, 2), count("k", "b", 6, 3), count("k", "a", 5, 4)])
    assert table(got, "x", "b") == [(0, 10, "k", "6"), (10, 20, None, None)]


def test_a_grouped_query_aggregates_the_joined_solutions():
    text = """SELECT ?x (COUNT(*) AS ?n) FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { ?x :a ?a . OPTIONAL { ?x :b ?b WINDOW ELEMS 2 } } GROUP BY ?x"""
    got = checked_answers(parse_rules(PREFIX + text), [
        count("k", "a", 5, 1), count("k", "a", 6, 2), count("k", "b", 4, 3), count("k", "b", 7, 4)])
    # at 10: two :a, each with the two :b of the last two elements: 4 solutions
    assert table(got, "x", "n") == [(0, 10, "k", "4")]


def test_the_instants_of_another_stream_are_time_passing_for_groups_with_windows():
    # COUNT without GROUP BY gives a row at every evaluation, an empty
    # window's too, up to the first empty window past the last instant of
    # the stream; as for a query with one time window, an event of another
    # stream is time passing (it ends at minute 3): the rows are those of
    # the query with one window, :a 5 at minute 1 in (0, 2] and the empty
    # windows (2, 4] and (4, 6], the first to start at or after minute 3
    text = """SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/td> WINDOW RANGE 2 MINUTE SLIDE 2 MINUTE WHERE """
    other = count("k", "b", 6, 3)
    events = [count("k", "a", 5, 1), Event(other.s, other.p, other.o, other.start, other.end, stream="http://e/other")]
    one = checked_answers(parse_rules(PREFIX + text + "{ ?x :a ?a }"), events)
    assert table(one, "n") == [(0, 2, "1"), (2, 4, "0"), (4, 6, "0")]
    groups = checked_answers(parse_rules(PREFIX + text + "{ { ?x :a ?a WINDOW RANGE 2 MINUTE SLIDE 2 MINUTE } "
                                         "{ ?x :a ?a WINDOW ELEMS 1 } }"), events)
    assert table(groups, "n") == table(one, "n")


def test_groups_with_windows_over_a_stream_without_events_give_the_empty_windows_rows():
    # no event is of the query's stream: the two events (one twice) of
    # another at minute 3 are time passing alone. COUNT without GROUP BY
    # gives the empty window's row, 0, at the evaluation at minute 4,
    # (2, 4] (the first at or after minute 3), and at (4, 6], the first
    # window to start at or after it; the query with one window gives
    # these rows, and so does the one whose groups have windows of their own
    text = ("SELECT (COUNT(DISTINCT ?x) AS ?n) FROM STREAM <http://e/td> WINDOW RANGE 2 MINUTE SLIDE 2 MINUTE "
            "WHERE ")
    other = count("k", "a", 5, 3)
    events = [Event(other.s, other.p, other.o, other.start, other.end, stream="http://e/other")] * 2
    one = checked_answers(parse_rules(PREFIX + text + "{ ?x :a ?a }"), events)
    assert table(one, "n") == [(2, 4, "0"), (4, 6, "0")]
    groups = checked_answers(parse_rules(PREFIX + text + "{ ?x :a ?a . { ?x :a ?a WINDOW ELEMS 1 } }"), events)
    assert table(groups, "n") == table(one, "n")


def test_a_group_solution_without_the_shared_variable_joins_every_solution():
    # the parts are joined by lookups on their shared variables (?x): a
    # solution of the group that leaves ?x unbound (the UNION's :c side)
    # is compatible with every :a, as SPARQL's join says
    text = """SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { ?x :a ?a . { { ?x :b ?b } UNION { ?y :c ?b } WINDOW ELEMS 3 } }"""
    got = checked_answers(parse_rules(PREFIX + text), [
        count("k", "a", 5, 1), count("j", "a", 6, 2), count("k", "b", 4, 3), count("m", "c", 7, 4)])
    # at 10: a 5 (k) and 6 (j); the last three elements hold b 4 of k and
    # c 7 of m: k with b 4 and with c 7, j with c 7 alone
    assert table(got, "x", "a", "b") == [(0, 10, "j", "6", "7"), (0, 10, "k", "5", "4"), (0, 10, "k", "5", "7")]


def test_the_optional_group_is_looked_up_by_what_the_first_group_binds():
    # the first part is read in full; the optional one is indexed on ?x
    # (the variable it shares with the first) and looked up per solution,
    # not scanned per solution, nor the first part indexed on a variable
    # that is unbound when it is read
    from cep.compile import compile_queries
    body = compile_queries(parse_rules(PREFIX + TURBINES)).body
    combine = body[body.index("'$wcombine'(0,[_G1,_G2]"):]
    combine = combine[:combine.index(".\n")]
    assert "cep_part_index(_G2," in combine and "cep_part_index(_G1," not in combine
    # (X3, X4: the hidden copy variables of the groups' triple patterns, cep.algebra.copies)
    index = re.search(r"cep_part_index\(_G2,s\(v\(_G\d+,_G\d+,_G\d+\),_,_\),k\(_G\d+\),(_G\d+)\)", combine).group(1)
    assert re.search(r"member\(s\(v\(X0,X1,X\d+\),_G\d+,_G\d+\),_G1\)", combine)
    assert f"cep_part_member({index},k(X0)," in combine


COUNT_LEAD = [count("k", "a", 1, 1), count("k", "b", 2, 3), count("j", "a", 3, 6), count("j", "c", 4, 9)]

COUNT_UNION = """SELECT ?k ?a ?b FROM STREAM <http://e/td> WINDOW ELEMS 2
                 WHERE { { ?k :a ?a } UNION { ?k :b ?b WINDOW RANGE 4 MINUTE FIXED } }"""


def kab(answers):
    """(window start minute, evaluation minute, ?k, ?a, ?b) per answer, sorted, "-" for unbound."""
    return sorted((a.start // MIN, a.end // MIN, *(value(a, n) or "-" for n in "kab")) for a in answers)


def test_a_union_of_a_count_window_first_group_and_a_time_window_group_is_evaluated_at_both_times():
    """Hand-checked (RSP-QL's eval(SDS, SE, t) at every evaluation time of
    every leading window): the first group reads the last 2 events, which
    change at every instant an event comes (1, 3, 6, 9); the other the
    tumbling 4 minutes, closed at 4, 8, 12, 16. The query is evaluated at
    the union of those times, each group's window taken then, an answer
    over the first group's window [cut, tau]: at 1 :a k (the time window
    (-4, 0] is empty); at 3 :a k (still (-4, 0]); at 4 :a k and, in (0, 4],
    :b k; at 6 the last two hold :b and :a j, and (0, 4] still :b k; at 8
    :a j ((4, 8] is empty); at 9 :a j over [6, 9]. The end: the count
    window's last evaluation is the last instant, 9; the time window's the
    first that starts at or after it, (12, 16]: the query is evaluated up
    to 16, at 12 and 16 too, where the last two events still hold :a j."""
    got = checked_answers(parse_rules(PREFIX + COUNT_UNION, "x.rq"), COUNT_LEAD)
    assert kab(got) == [
        (1, 1, "k", "1", "-"), (1, 3, "k", "1", "-"), (1, 4, "k", "-", "2"), (1, 4, "k", "1", "-"),
        (3, 6, "j", "3", "-"), (3, 6, "k", "-", "2"), (3, 8, "j", "3", "-"), (6, 9, "j", "3", "-"),
        (6, 12, "j", "3", "-"), (6, 16, "j", "3", "-")]


def test_a_time_window_first_group_in_a_union_with_a_count_window_group_is_evaluated_at_every_instant_too():
    """Hand-checked: the first group reads the tumbling 4 minutes, the
    other the last event. Evaluated at 4, 8, 12 and at the instants 1, 3,
    6, 9; an answer over the first group's window closed last at tau,
    [c - 4, tau]: at 1 nothing (the last event :a); at 3 the last event
    :b k over (-4, 0] (empty); at 4 :a k in (0, 4] and :b k still the
    last; at 6 :a k in (0, 4], the last event :a j; at 8 :a j in (4, 8];
    at 9 :a j, the last event :c. The end: the count window's at 9, the
    time window's first starting at or after 9 is (12, 16]: at 12 (8, 12]
    and the last event hold nothing of the query."""
    text = (PREFIX + "SELECT ?k ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 4 MINUTE FIXED "
            "WHERE { { ?k :a ?a } UNION { ?k :b ?b WINDOW ELEMS 1 } }")
    got = checked_answers(parse_rules(text, "x.rq"), COUNT_LEAD)
    assert kab(got) == [
        (-4, 3, "k", "-", "2"), (0, 4, "k", "-", "2"), (0, 4, "k", "1", "-"), (0, 6, "k", "1", "-"),
        (4, 8, "j", "3", "-"), (4, 9, "j", "3", "-")]


def test_a_count_window_first_group_in_a_union_with_optional_after_joins_identity_answers_at_every_instant():
    """Hand-checked: { OPTIONAL { P WINDOW ELEMS 1 } } after the first group
    is LeftJoin({}, P): P's solutions in the last event, else the empty
    solution, at every evaluation. The first group's window counts: the
    query is evaluated at every instant (1, 3, 6, 9), over [cut, tau] of
    the last 2 events: at 1 :a k and {} (the last event is no :b); at 3 :a
    k and :b k; at 6 :a j and {} (:b at 3 is not the last event); at 9 :a
    j and {}. No evaluation after 9: the window counts no later instant."""
    text = (PREFIX + "SELECT ?k ?a ?b FROM STREAM <http://e/td> WINDOW ELEMS 2 "
            "WHERE { { ?k :a ?a } UNION { OPTIONAL { ?k :b ?b WINDOW ELEMS 1 } } }")
    got = checked_answers(parse_rules(text, "x.rq"), COUNT_LEAD)
    assert kab(got) == [
        (1, 1, "-", "-", "-"), (1, 1, "k", "1", "-"), (1, 3, "k", "-", "2"), (1, 3, "k", "1", "-"),
        (3, 6, "-", "-", "-"), (3, 6, "j", "3", "-"), (6, 9, "-", "-", "-"), (6, 9, "j", "3", "-")]


def test_the_counted_instants_of_a_union_with_a_count_window_are_forgotten():
    """State stays flat over a long stream: a query evaluated at every
    instant of its count window and on a time grid keeps the counts of
    the instants its windows still hold, not the stream's."""
    from cep.engine import Engine
    for first, other in (("WINDOW ELEMS 2", "WINDOW RANGE 4 MINUTE FIXED"),
                         ("WINDOW RANGE 4 MINUTE FIXED", "WINDOW ELEMS 2")):
        engine = Engine(parse_rules(PREFIX + f"SELECT ?k ?a ?b FROM STREAM <http://e/td> {first} "
                                    f"WHERE {{ {{ ?k :a ?a }} UNION {{ ?k :b ?b {other} }} }}", "x.rq"))
        sizes = []
        for chunk in range(4):
            engine.push([count("k", "ab"[i % 2], i, i) for i in range(chunk * 300, chunk * 300 + 300)])
            engine.flush_table(final=False)
            state = engine.state()
            # the last two instants (the count window), and the 4 minutes of the time window
            assert state.count(b"$wcount") <= 3 and state.count(b"$wsol") <= 8, (first, state.count(b"$wcount"))
            sizes.append(len(state))
        assert max(sizes) - min(sizes) < 200, sizes  # flat: not 300 events' worth more per chunk


@pytest.mark.parametrize("where, message", [
    ("{ { ?x :a ?a { ?x :b ?b WINDOW ELEMS 2 } } SEQ { ?x :d ?d } }",
     "x.rq:3:114: SEQ over groups with windows of their own is not supported: groups with different windows "
     "are combined by SPARQL's operators at each evaluation; give the groups under SEQ one window"),
])
def test_what_groups_with_windows_cannot_be_under_is_an_error(where, message):
    from cep.engine import Engine
    text = (f"{PREFIX}PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
            f"SELECT * FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED WHERE {where}")
    with pytest.raises(QueryError) as info:
        Engine(parse_rules(text, "x.rq"))
    assert str(info.value) == message


def test_a_group_with_a_window_of_its_own_reads_the_background_as_updates_leave_it_at_the_evaluation():
    # RSP-QL evaluates a window at tau over the background as it is then;
    # the optional group over the last 3 events reads it so too. :b1 :k is
    # 1 at :x's :b (minute 1) and 2 from minute 3 (the update). At 10
    # (the first part's (0, 10]: :a 5) the last 3 events hold :x :b :b1:
    # v 2, not 1; at 20 ((10, 20]: :a 6) they hold no :b: :a 6 alone
    from cep.background.knowledge import background_of
    text = (f"{PREFIX}SELECT ?a ?b ?v FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED "
            "WHERE { ?x :a ?a OPTIONAL { ?x :b ?b . ?b :k ?v WINDOW ELEMS 3 } }\n"
            "DELETE { ?x :k ?v } INSERT { ?x :k ?w } WHERE { ?x :k ?v . ?x :set ?w }")
    e = "<http://e/{}>".format
    background = background_of([(e("b1"), e("k"), '"1"^^<http://www.w3.org/2001/XMLSchema#integer>')])
    number = '"{}"^^<http://www.w3.org/2001/XMLSchema#integer>'.format
    events = [Event(e("x"), e("b"), e("b1"), MIN, MIN), Event(e("b1"), e("set"), number(2), 3 * MIN, 3 * MIN),
              Event(e("x"), e("a"), number(5), 4 * MIN, 4 * MIN), Event(e("x"), e("a"), number(6), 13 * MIN, 13 * MIN),
              Event(e("b1"), e("set"), number(3), 15 * MIN, 15 * MIN)]
    got = checked_answers(parse_rules(text, "x.rq"), events, background)
    assert sorted((a.end // MIN, dict(a.bindings)) for a in got) == [
        (10, {"a": number(5), "b": e("b1"), "v": number(2)}), (20, {"a": number(6)})]


def of_stream(e, stream):
    """The event e as one of the named stream `stream`."""
    return Event(e.s, e.p, e.o, e.start, e.end, stream=stream)


def test_a_named_stream_with_a_window_of_its_own_is_read_through_graph_in_that_window():
    # the windows of the streams of one query may differ: a GRAPH group
    # reads its stream's window (Streaming SPARQL, algorithm 1: a pattern
    # without a group window takes its stream's)
    text = """SELECT ?x ?a ?b
              FROM STREAM <http://e/s> WINDOW RANGE 10 MINUTE FIXED
              FROM NAMED STREAM <http://e/t> WINDOW ELEMS 1
              WHERE { ?x :a ?a . OPTIONAL { GRAPH <http://e/t> { ?x :b ?b } } }"""
    (q,) = parse_rules(PREFIX + text)
    got = checked_answers([q], [
        of_stream(count("k", "a", 1, 2), "http://e/s"), of_stream(count("k", "b", 5, 3), "http://e/t"),
        of_stream(count("j", "a", 2, 12), "http://e/s"), of_stream(count("j", "b", 6, 13), "http://e/t"),
        of_stream(count("k", "b", 7, 14), "http://e/t")])
    # - at 10: a k 1; the last element up to 10 (of either stream: events of
    #   every stream are counted as the count windows of the rule set count
    #   them, those of the query's streams) is b k 5 (minute 3): joined
    # - at 20: a j 2; the last element is b k 7 (14): j has none
    assert table(got, "x", "a", "b") == [(0, 10, "k", "1", "5"), (10, 20, "j", "2", None)]


def test_a_group_window_overrides_the_window_of_the_stream_of_a_graph_inside_it():
    text = """SELECT * FROM STREAM <http://e/s> WINDOW RANGE 10 MINUTE FIXED
              FROM NAMED STREAM <http://e/t> WINDOW ELEMS 1
              WHERE { ?x :a ?a . { GRAPH <http://e/t> { ?x :b ?b } WINDOW ELEMS 3 } }"""
    (q,) = parse_rules(PREFIX + text)
    assert [w.count for w in q.windows] == [None, 3]


FEED_GROUPS = """REGISTER STREAM seen AS
                 CONSTRUCT { ?x :seen :it } FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
                 WHERE { { ?x :a ?a } UNION { ?x :b ?b WINDOW RANGE 20 MINUTE SLIDE 10 MINUTE } }
                 REGISTER QUERY counted AS
                 SELECT ?x (COUNT(*) AS ?n) FROM STREAM <http://e/td> WINDOW RANGE 20 MINUTE SLIDE 10 MINUTE
                 WHERE { ?x :seen ?it } GROUP BY ?x"""


def test_a_construct_with_group_windows_feeds_its_triples_back_at_each_evaluation():
    got = checked_answers(parse_rules(PREFIX + FEED_GROUPS), UNION_STREAM)
    # seen is evaluated every 10 minutes (both leading groups' windows), its triples fed back at tau:
    # - 10: (0, 10] holds a k 1: k; 20: (10, 20] holds no :a, the 20 minutes (0, 20] b j 2: j;
    #   30: (20, 30] a k 3 and (10, 30] still b j 2: k and j; 40: nothing
    assert sorted((a.end // MIN, a.triples[0][0]) for a in got if a.query == "seen") == [
        (10, "<http://e/k>"), (20, "<http://e/j>"), (30, "<http://e/j>"), (30, "<http://e/k>")]
    # counted's 20 minutes, each holding the triples fed up to its close (seen is evaluated first):
    # (-10, 10] k@10; (0, 20] k@10, j@20; (10, 30] j@20, k@30, j@30; (20, 40] k@30, j@30
    assert table([a for a in got if a.query == "counted"], "x", "n") == [
        (-10, 10, "k", "1"), (0, 20, "j", "1"), (0, 20, "k", "1"), (10, 30, "j", "2"), (10, 30, "k", "1"),
        (20, 40, "j", "1"), (20, 40, "k", "1")]


SUBQUERY_IN_UNION = """REGISTER STREAM seen AS
CONSTRUCT { ?x :seen ?c } FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
WHERE { { ?x :a ?a { SELECT (COUNT(*) AS ?c) WHERE { ?y :a ?b } } WINDOW RANGE 30 MINUTE SLIDE 10 MINUTE }
        UNION { ?x :b ?c WINDOW RANGE 10 MINUTE FIXED } }
"""


@pytest.mark.parametrize("reader", ["", "REGISTER QUERY after AS SELECT ?x ?c ?s WHERE { ?x :seen ?c } SEQ { ?s :b ?o }"],
                         ids=["alone", "read"])
def test_a_constructs_fed_triples_are_no_instant_of_a_subquery_in_a_group_under_union(reader):
    # shrunk from the property test (CEP_SEED=3742186835): the subquery of the first group makes
    # its rows at each instant its window holds; its query's own triples fed back are no event of
    # that window (docs/language.md, "Window results fed back"), so they make no instant there and
    # seen's answers are the same whether or not a query reads them. Both windows close every 10:
    # - 10: (-20, 10] holds a k 1 twice at 5 (a repeated event, two events): COUNT(*) 2 at 5: k seen 2
    # - 20: (-10, 20] holds the same: k seen 2 (its own k seen 2 fed at 10 is no instant: a row
    #   COUNT(*) 0 at 10 gave k seen 0 too, the first group's solutions counted again)
    # - 30: (0, 30] holds 5 and b j 7 at 25, an instant with no :a: COUNT(*) 2 at 5 and 0 at 25,
    #   k seen 2 and k seen 0; the group (20, 30] gives j seen 7
    # - 40: (10, 40] holds no :a, (30, 40] no :b: nothing
    # after reads the triples fed at 10 and 20 before b j 7 at 25 (those at 30 come after it)
    events = [count("k", "a", 1, 5), count("k", "a", 1, 5), count("j", "b", 7, 25)]
    got = checked_answers(parse_rules(PREFIX + SUBQUERY_IN_UNION + reader), events)
    assert sorted((a.end // MIN, short(a.triples[0][0]), short(a.triples[0][2]))
                  for a in got if a.query == "seen") == [
        (10, "k", "2"), (20, "k", "2"), (30, "j", "7"), (30, "k", "0"), (30, "k", "2")]
    assert table([a for a in got if a.query == "after"], "x", "c", "s") == (
        [(10, 25, "k", "2", "j"), (20, 25, "k", "2", "j")] if reader else [])


def test_a_constructs_fed_triples_give_the_empty_group_of_its_first_group_no_solution():
    """Hand-checked: the first group, an empty group with a COUNT(*)
    subquery, is evaluated every 10 minutes over its window, joined with
    the last event (ELEMS 1). At 10, (0, 10] holds k: n = 1, fed back at 10;
    at 20, (10, 20] holds no event: no evaluation (its own triple fed at
    10 is no solution of its empty group, in the engine as in the
    reference, which made it one and never settled); at 30, (20, 30] holds
    j: n = 1. The fed triple at 10 precedes j at 25 (SEQ)."""
    text = """REGISTER STREAM producer AS
              CONSTRUCT { :fed :fedp ?n } FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { { {} { SELECT (COUNT(*) AS ?n) WHERE { ?s :p ?x } } WINDOW RANGE 10 MINUTE SLIDE 10 MINUTE }
                      { ?s :p ?x WINDOW ELEMS 1 } }
              REGISTER QUERY consumer AS SELECT ?f ?s WHERE { :fed :fedp ?f } SEQ { ?s :p ?x }"""
    got = checked_answers(parse_rules(PREFIX + text), [count("k", "p", 1, 1), count("j", "p", 2, 25)])
    assert sorted((a.end // MIN, a.triples[0][2]) for a in got if a.query == "producer") == [
        (10, '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'), (30, '"1"^^<http://www.w3.org/2001/XMLSchema#integer>')]
    assert table([a for a in got if a.query == "consumer"], "f", "s") == [(10, 25, "1", "j")]


def test_a_constructs_fed_triples_are_not_the_content_of_the_empty_group_of_its_later_group():
    # ON CHANGE reads each window's content; the group { WINDOW ELEMS 1 } holds the last event: e1
    # at 1 and at 2 (its own triple fed back at 1 is no event of its content, as for the query's own
    # window's empty group), so the content at 2 is the content at 1 and seen reports once
    text = """REGISTER STREAM seen AS
              CONSTRUCT { ?x :seen :it } FROM STREAM <http://e/td> WINDOW RANGE 2 MINUTE SLIDE 1 MINUTE
              REPORT ON CHANGE WHERE { ?x :a ?a { WINDOW ELEMS 1 } }
              REGISTER QUERY reader AS SELECT ?x WHERE { ?x :seen ?o }"""
    got = checked_answers(parse_rules(PREFIX + text), [Event("<http://e/k>", "<http://e/a>", '"1"', MIN // 2, MIN // 2)])
    assert sorted((a.query, a.end // MIN) for a in got) == [("reader", 1), ("seen", 1)]


def test_a_construct_evaluated_by_a_count_window_of_its_groups_cannot_feed_its_triples_back():
    from cep.engine import Engine
    # a count window is evaluated at every instant: only time-based windows feed back
    text = """REGISTER STREAM stops AS
              CONSTRUCT { ?x :stopped ?z } FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { { ?x :StopCnt ?z WINDOW ELEMS 5 } ?x :StrCnt ?y }
              REGISTER QUERY reader AS SELECT ?x WHERE { ?x :stopped ?z }"""
    with pytest.raises(QueryError) as info:
        Engine(parse_rules(PREFIX + text, "x.rq"))
    assert str(info.value).startswith("x.rq:4:40:")  # at the count window
    assert "a CONSTRUCT evaluated when a count window of its groups is (the last 5 events)" in str(info.value)
    # with a time-based first group, the count window of another group is read at each evaluation
    Engine(parse_rules(PREFIX + text.replace("{ ?x :StopCnt ?z WINDOW ELEMS 5 } ?x :StrCnt ?y",
                                             "?x :StrCnt ?y { ?x :StopCnt ?z WINDOW ELEMS 5 }"), "x.rq"))


def test_the_first_groups_window_is_the_one_whose_evaluations_are_limited():
    from cep.engine import Engine
    # evaluated when its first group's window is: every ms over an hour
    text = """SELECT * FROM STREAM <http://e/td> WINDOW RANGE 1 HOUR FIXED
              WHERE { { ?x :a ?a WINDOW RANGE 3600000 SLIDE } ?x :b ?b }"""
    with pytest.raises(QueryError) as info:
        Engine(parse_rules(PREFIX + text, "x.rq"))
    assert "is evaluated 3,600,000 times with each instant in it (RANGE 1h / STEP 1ms)" in str(info.value)
    # the same window on a later group is read at the first one's evaluations only
    Engine(parse_rules(PREFIX + text.replace("{ { ?x :a ?a WINDOW RANGE 3600000 SLIDE } ?x :b ?b }",
                                             "{ ?x :b ?b { ?x :a ?a WINDOW RANGE 3600000 SLIDE } }"), "x.rq"))
    # a UNION around the first group is evaluated when each operand's window is: every ms here
    with pytest.raises(QueryError) as info:
        Engine(parse_rules(PREFIX + text.replace(
            "{ { ?x :a ?a WINDOW RANGE 3600000 SLIDE } ?x :b ?b }",
            "{ { ?x :b ?b } UNION { ?x :a ?a WINDOW RANGE 3600000 SLIDE } }"), "x.rq"))
    assert str(info.value).startswith("x.rq:3:") and "evaluated 3,600,000 times" in str(info.value)


T0 = '"1970-01-01T00:05:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'  # minute 5


def test_a_group_window_takes_a_start_and_an_infinite_width():
    # RSP-QL's t0 and l = infinity after a group's Streaming SPARQL window (RANGE UNBOUNDED SLIDE v)
    (q,) = parse_rules(f"{PREFIX}SELECT * FROM STREAM {S} WINDOW RANGE 1 HOUR FIXED WHERE {{ ?s :a ?o "
                       f"{{ ?s :b ?p WINDOW RANGE UNBOUNDED SLIDE 5 MINUTE START {T0} }} }}", "x.rq")
    assert [(w.range_ms, w.step_ms, w.t0_ms) for w in q.windows] == [(HOUR, HOUR, None), (None, 5 * MIN, 5 * MIN)]
    # a group with the query's window but another START has a window of its own
    (q,) = parse_rules(f"{PREFIX}SELECT * FROM STREAM {S} WINDOW RANGE 1 HOUR FIXED WHERE {{ ?s :a ?o "
                       f"{{ ?s :b ?p WINDOW RANGE 1 HOUR FIXED START {T0} }} }}", "x.rq")
    assert [w.t0_ms for w in q.windows] == [None, 5 * MIN]


def test_a_graph_group_reads_its_named_streams_window_from_its_start():
    # FROM NAMED STREAM <t> [RANGE 10m TUMBLING START minute 5]: GRAPH <t>'s
    # windows are (5, 15], (15, 25], ..., read at the query's evaluations
    # (each 10 minutes, while (c - 10, c] holds an :a of <s>)
    text = f"""SELECT ?x ?a ?b
              FROM STREAM <http://e/s> [RANGE 10m TUMBLING]
              FROM NAMED STREAM <http://e/t> [RANGE 10m TUMBLING START {T0}]
              WHERE {{ ?x :a ?a . OPTIONAL {{ GRAPH <http://e/t> {{ ?x :b ?b }} }} }}"""
    (q,) = parse_rules(PREFIX + text)
    got = checked_answers([q], [
        of_stream(count("k", "b", 5, 3), "http://e/t"), of_stream(count("k", "a", 1, 8), "http://e/s"),
        of_stream(count("k", "b", 6, 14), "http://e/t"), of_stream(count("k", "a", 2, 18), "http://e/s"),
        of_stream(count("k", "a", 3, 24), "http://e/s")])
    # - at 10: a k 1; no window of <t> has closed (its first closes at 15):
    #   k 1 alone (without START, (0, 10] would hold b 5)
    # - at 20: a k 2; (5, 15] holds b 6 (14)
    # - at 30: a k 3; (15, 25] holds no :b: k 3 alone
    assert table(got, "x", "a", "b") == [(0, 10, "k", "1", None), (10, 20, "k", "2", "6"), (20, 30, "k", "3", None)]


def test_a_graph_group_over_a_window_of_infinite_width_reads_everything_from_its_start():
    # [RANGE UNBOUNDED STEP 10m START minute 5]: (5, 15], (5, 25], (5, 35], ...
    text = f"""SELECT ?x ?a (COUNT(?b) AS ?n)
              FROM STREAM <http://e/s> [RANGE 10m TUMBLING]
              FROM NAMED STREAM <http://e/t> [RANGE UNBOUNDED STEP 10m START {T0}]
              WHERE {{ ?x :a ?a . OPTIONAL {{ GRAPH <http://e/t> {{ ?x :b ?b }} }} }} GROUP BY ?x ?a"""
    (q,) = parse_rules(PREFIX + text)
    got = checked_answers([q], [
        of_stream(count("k", "b", 5, 3), "http://e/t"), of_stream(count("k", "b", 6, 7), "http://e/t"),
        of_stream(count("k", "a", 1, 18), "http://e/s"), of_stream(count("k", "b", 7, 22), "http://e/t"),
        of_stream(count("k", "a", 2, 38), "http://e/s")])
    # - at 20: a k 1; (5, 15] holds b 6 (b 5 at 3 is before the start): 1
    # - at 40: a k 2; (5, 35] holds b 6 and b 7: 2
    assert table(got, "x", "a", "n") == [(10, 20, "k", "1", "1"), (30, 40, "k", "2", "2")]


def test_an_empty_group_has_no_solution_before_its_windows_first_close():
    # { BIND(NOW() AS ?t) WINDOW RANGE 2 MINUTE FIXED START minute 5 }: its
    # windows are (5, 7], (7, 9], ...; the query is evaluated each minute
    # that holds a :b (2, 6, 8). At 2 and 6 no window of the group has
    # closed: no solution, so no join; at 8, (5, 7] has: t its close, 7
    text = (f"SELECT ?s ?t FROM STREAM {S} WINDOW RANGE 1 MINUTE SLIDE WHERE {{ ?s :b ?p "
            f"{{ BIND(NOW() AS ?t) WINDOW RANGE 2 MINUTE FIXED START {T0} }} }}")
    got = checked_answers(parse_rules(PREFIX + text), [count("k", "b", 1, 2), count("k", "b", 2, 6),
                                                       count("k", "b", 3, 8)])
    assert [(a.start // MIN, a.end // MIN, a.binding("t")) for a in got] == [
        (7, 8, '"1970-01-01T00:07:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>')]


UNION_FIRST = """SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
                 WHERE { { ?x :a ?a } UNION { ?x :b ?b WINDOW RANGE 20 MINUTE SLIDE 10 MINUTE } }"""
UNION_STREAM = [count("k", "a", 1, 1), count("j", "b", 2, 12), count("k", "a", 3, 25)]


def test_a_union_of_the_first_group_is_evaluated_at_either_windows_times():
    got = checked_answers(parse_rules(PREFIX + UNION_FIRST), UNION_STREAM)
    # every 10 minutes (both windows slide by 10), each over the first group's window:
    # - 10: (0, 10] holds a k 1; the 20 minutes (-10, 10] no :b
    # - 20: (10, 20] holds no :a, but (0, 20] holds b j 2: answered
    # - 30: (20, 30] a k 3, and (10, 30] still b j 2
    # - 40: neither window holds a solution
    assert table(got, "x", "a", "b") == [(0, 10, "k", "1", None), (10, 20, "j", None, "2"),
                                         (20, 30, "j", None, "2"), (20, 30, "k", "3", None)]


IDENTITY_STREAM = [count("k", "a", 1, 1), count("j", "b", 2, 12), count("k", "a", 3, 25), count("m", "b", 4, 33)]


@pytest.mark.parametrize("operand, expected", [
    # the last 2 events at each evaluation: at 10 only a k 1, no :b, so {}; at 20 b j 2; at 30
    # b j 2 still; at 40 and 50 b m 4
    ("{ OPTIONAL { ?x :b ?b WINDOW ELEMS 2 } }", [(0, 10, "", "", ""), (0, 10, "k", "1", ""), (10, 20, "j", "", "2"),
                        (20, 30, "j", "", "2"), (20, 30, "k", "3", ""), (30, 40, "m", "", "4"),
                        (40, 50, "m", "", "4")]),
    # the 5 minutes before each evaluation (5, 10], (15, 20], ... hold no :b (12 and 33 are
    # outside them): {} alone beside the :a; the 5-minute closes (15, 35) are no evaluation times,
    # or b j 2 and b m 4 would answer there
    *[(operand, [(0, 10, "", "", ""), (0, 10, "k", "1", ""), (10, 20, "", "", ""), (20, 30, "", "", ""),
                 (20, 30, "k", "3", ""), (30, 40, "", "", ""), (40, 50, "", "", "")])
      for operand in ("{ OPTIONAL { ?x :b ?b WINDOW RANGE 5 MINUTE FIXED } }",
                      # the window of the group the OPTIONAL is in: the same P over the same window
                      "{ OPTIONAL { ?x :b ?b } WINDOW RANGE 5 MINUTE FIXED }")],
])
def test_a_union_of_the_first_group_with_an_optional_after_joins_identity_answers_at_every_evaluation(
        operand, expected):
    # { OPTIONAL { P WINDOW ... } } is LeftJoin({}, P): P's solutions in its window, else {}, which
    # holds no event and so no time; the UNION has that operand's solutions at every evaluation of
    # the first group's window (10, 20, ...), its empty ones too (RSP-QL evaluates eval(SDS, SE, t) at
    # every close), and the operand adds no evaluation time. The evaluations go on up to the first
    # window that starts at or after the stream's last instant (33): (40, 50]. Each answer is over
    # the first group's window; the :a at 1 and 25 answer at 10 and 30.
    text = ("SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED "
            f"WHERE {{ {{ ?x :a ?a }} UNION {operand} }}")
    got = checked_answers(parse_rules(PREFIX + text), IDENTITY_STREAM)
    assert sorted((a.start // MIN, a.end // MIN, *(value(a, n) or "" for n in "xab")) for a in got) == expected
    # COUNT(*) counts them: a row at every evaluation
    counted = checked_answers(parse_rules(PREFIX + text.replace("SELECT ?x ?a ?b", "SELECT (COUNT(*) AS ?n)")),
                              IDENTITY_STREAM)
    assert table(counted, "n") == [(start, end, str(sum(1 for e in expected if e[1] == end)))
                                   for end, start in sorted({(e[1], e[0]) for e in expected})]


def test_a_union_of_the_first_group_with_inline_data_has_its_rows_at_every_evaluation():
    # (the algebra form: in SPARQL text a group of VALUES is an empty group joined with it)
    # the first group's window, 5 minutes tumbling, is the only one the query is evaluated by:
    # at 5, 10, ..., from the first after the stream's first instant (1) up to the first window
    # that starts at or after its last (33): (35, 40]. Every evaluation has the row of ?b 7, its
    # empty windows' too; (0, 5] and (20, 25] also the :a at 1 and 25
    from cep.algebra import sexpr
    text = """(select (?x ?a ?b)
      (window <http://e/td> (range 600000) (step 600000))
      (union
        (group-window <http://e/td> (range 300000) (step 300000)
          (bgp (triple ?x <http://e/a> ?a)))
        (values (?b) ("7"^^<http://www.w3.org/2001/XMLSchema#integer>))))"""
    got = checked_answers([sexpr.read_query("q", text)], IDENTITY_STREAM)
    assert sorted((a.start // MIN, a.end // MIN, *(value(a, n) or "" for n in "xab")) for a in got) == [
        (0, 5, "", "", "7"), (0, 5, "k", "1", ""), (5, 10, "", "", "7"), (10, 15, "", "", "7"),
        (15, 20, "", "", "7"), (20, 25, "", "", "7"), (20, 25, "k", "3", ""), (25, 30, "", "", "7"),
        (30, 35, "", "", "7"), (35, 40, "", "", "7")]


def test_inline_data_joined_with_a_group_in_a_union_of_the_first_group_leads_with_that_groups_window():
    # (the algebra form) the UNION's other operand joins ?c 7 with the :b group: the :b group's
    # window, 15 minutes tumbling, leads, not the query's (inline data has no window): evaluated
    # at 5, 10, 15, ...; (0, 15] holds b j 2 from 15 to 25, (30, 45] b m 4 from 45 to 55, each
    # over the first group's window; the :a at 1 and 25 answer at 5 and 25
    from cep.algebra import sexpr
    text = """(select (?x ?a ?b ?c)
      (window <http://e/td> (range 600000) (step 600000))
      (union
        (group-window <http://e/td> (range 300000) (step 300000)
          (bgp (triple ?x <http://e/a> ?a)))
        (join (values (?c) ("7"^^<http://www.w3.org/2001/XMLSchema#integer>))
          (group-window <http://e/td> (range 900000) (step 900000)
            (bgp (triple ?x <http://e/b> ?b))))))"""
    got = checked_answers([sexpr.read_query("q", text)], IDENTITY_STREAM)
    assert sorted((a.start // MIN, a.end // MIN, *(value(a, n) or "" for n in "xabc")) for a in got) == [
        (0, 5, "k", "1", "", ""), (10, 15, "j", "", "2", "7"), (15, 20, "j", "", "2", "7"),
        (20, 25, "j", "", "2", "7"), (20, 25, "k", "3", "", ""), (40, 45, "m", "", "4", "7"),
        (45, 50, "m", "", "4", "7"), (50, 55, "m", "", "4", "7")]


def test_dstream_over_a_union_of_the_first_group_reports_what_leaves_either_window():
    text = UNION_FIRST.replace("SELECT ?x", "SELECT DSTREAM ?x")
    # event time passes 69:59.999 (the last instant before 70) with no solution of either group
    late = Event("<http://e/z>", "<http://e/c>", "<http://e/z>", 70 * MIN - 1, 70 * MIN - 1)
    got = checked_answers(parse_rules(PREFIX + text), UNION_STREAM + [count("m", "b", 4, 47), late])
    # the solutions at each evaluation: 10 k 1; 20 j 2; 30 j 2, k 3; 40 none; 50 and 60 m 4
    # (the :b window of 20 minutes); 70 none. What leaves, over the first group's window:
    # - 20: k 1; 40: j 2 and k 3
    # - 70: m 4, though the first group's window held nothing at 60 or 70 (m 4 is in no
    #   window after 60 once event time is past 70's last instant)
    assert table(got, "x", "a", "b") == [(10, 20, "k", "1", None), (30, 40, "j", None, "2"),
                                         (30, 40, "k", "3", None), (60, 70, "m", None, "4")]


UNION_SLIDES = UNION_FIRST.replace("WINDOW RANGE 20 MINUTE SLIDE 10 MINUTE", "WINDOW RANGE 15 MINUTE FIXED")


def test_a_union_of_the_first_group_with_another_slide_is_evaluated_at_each_windows_times():
    got = checked_answers(parse_rules(PREFIX + UNION_SLIDES), UNION_STREAM + [count("m", "b", 4, 47)])
    # at 10, 20, 30, ... (the first group's ten minutes) and 15, 30, 45, ... (the :b group's
    # fifteen), each group over its window closed last, the answers over the first group's:
    # - 10: (0, 10] a k 1; 15: (0, 10] still, and (0, 15] b j 2; 20: (0, 15] still
    # - 30: (20, 30] a k 3, (15, 30] no :b; 40 and 45: nothing
    # - 60: (45, 60] b m 4; 70: (45, 60] still; 75: nothing
    assert table(got, "x", "a", "b") == [(0, 10, "k", "1", None), (0, 15, "j", None, "2"), (0, 15, "k", "1", None),
                                         (10, 20, "j", None, "2"), (20, 30, "k", "3", None),
                                         (50, 60, "m", None, "4"), (60, 70, "m", None, "4")]


def test_aggregates_over_a_union_of_the_first_group_with_another_slide_give_a_row_at_each_windows_times():
    text = UNION_SLIDES.replace("SELECT ?x ?a ?b", "SELECT (COUNT(*) AS ?n)")
    got = checked_answers(parse_rules(PREFIX + text), UNION_STREAM[:2])
    # from the first evaluation after the first instant (1) to the first at which each window starts
    # after the last (12): (20, 30] and (15, 30]; at 10 (0, 10] holds a k 1, at 15 also (0, 15] b j 2,
    # at 20 (0, 15] still, at 30 neither holds anything
    assert table(got, "n") == [(0, 10, "1"), (0, 15, "2"), (10, 20, "1"), (20, 30, "0")]


SINCE_START = f"""SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
                  WHERE {{ ?x :a ?a OPTIONAL {{ ?x :b ?b WINDOW RANGE UNBOUNDED SLIDE 10 MINUTE START {T0} }} }}"""
SINCE_STREAM = [count("k", "b", 5, 3), count("k", "b", 6, 7), count("k", "a", 1, 18), count("j", "a", 2, 26),
                count("k", "a", 3, 38)]


def test_a_group_window_of_infinite_width_holds_everything_from_its_start():
    got = checked_answers(parse_rules(PREFIX + SINCE_START), SINCE_STREAM)
    # the group's windows (5, 15], (5, 25], (5, 35] (b 5 at 3 is before its start):
    # - 20: a k 1; (5, 15] holds b k 6
    # - 30: a j 2; (5, 25] holds no :b of j: alone
    # - 40: a k 3; (5, 35] still holds b k 6
    assert table(got, "x", "a", "b") == [(10, 20, "k", "1", "6"), (20, 30, "j", "2", None),
                                         (30, 40, "k", "3", "6")]


UNION_UNBOUNDED = UNION_FIRST.replace("WINDOW RANGE 20 MINUTE SLIDE 10 MINUTE",
                                      f"WINDOW RANGE UNBOUNDED SLIDE 15 MINUTE START {T0}")


def test_a_union_of_the_first_group_with_a_window_of_infinite_width_ends_with_the_stream():
    got = checked_answers(parse_rules(PREFIX + UNION_UNBOUNDED), UNION_STREAM)
    # at 10, 20, 30, 40 (the first group's ten minutes) and 20, 35 (the :b group's windows
    # (5, 20], (5, 35], ...), each group over its window closed last, the answers over the
    # first group's; the last instant is 25: the ten minutes end at 40, (30, 40] the first
    # that starts after it, the :b group's at 35, (5, 35] holding it (not at 50: (5, 50]
    # holds what (5, 35] did)
    # - 10: (0, 10] a k 1; no :b window has closed
    # - 20: (10, 20] nothing; (5, 20] b j 2
    # - 30 and 35: (20, 30] a k 3; (5, 20] and (5, 35] b j 2
    # - 40: (30, 40] nothing; (5, 35] b j 2
    assert table(got, "x", "a", "b") == [(0, 10, "k", "1", None), (10, 20, "j", None, "2"),
                                         (20, 30, "j", None, "2"), (20, 30, "k", "3", None),
                                         (20, 35, "j", None, "2"), (20, 35, "k", "3", None),
                                         (30, 40, "j", None, "2")]


@pytest.mark.parametrize("pattern", [
    "(join (bgp (triple ?k <http://e/a> ?a)) (group-window <http://e/s> (range 120000) (step 120000) "
    "(bgp (triple ?k <http://e/b> ?b))))",
    "(group-window <http://e/s> (range 120000) (step 120000) (bgp (triple ?k <http://e/b> ?b)))"])
def test_group_windows_without_a_window_of_the_query_are_refused(pattern):
    """The algebra's text may give groups windows of their own and the
    query none, which the SPARQL form cannot: the query is evaluated when
    its window is, so there is nothing to evaluate it by. A QueryError
    saying so, where the engine raised a Prolog existence error ('$wstore'/4)
    or, for a lone group, answered with the variables' values swapped."""
    from cep.algebra import sexpr
    from cep.engine import Engine

    query = sexpr.read_query("q", f"(select (?k ?b) {pattern})")
    with pytest.raises(QueryError, match="needs a window of the query's stream"):
        Engine([query])
