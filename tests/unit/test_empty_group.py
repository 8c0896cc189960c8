"""The empty group (SPARQL's one empty solution, ops.Unit) on a stream:
one solution per instant at which events arrive, the empty binding over
[t, t] (docs/language.md, "The empty group"). Hand-checked answers on
the in-process engine, which must agree with the reference evaluator
(checked_answers); the Spark engine runs the golden case empty_group."""

import pytest

from cep.algebra import sexpr
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from cep.spark import routing
from tests.unit.support import checked_answers

EX = "http://example.org/"
PREFIX = "PREFIX : <http://example.org/>\n"
INT = "^^<http://www.w3.org/2001/XMLSchema#integer>"


def ev(s, p, o, t, stream=""):
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", o if o.startswith('"') else f"<{EX}{o}>", t, t, stream=stream)


# two events at 1, one at 2, one at 5: three instants
STREAM = [ev("a", "p", '"1"' + INT, 1), ev("b", "q", "x", 1), ev("c", "p", '"2"' + INT, 2), ev("d", "q", "y", 5)]


def run(query: str, events=STREAM):
    got = checked_answers(parse_rules(PREFIX + query, "<test>"), events)
    def short(v):
        return v[len(EX) + 1:-1] if v.startswith(f"<{EX}") else v
    return sorted((tuple(sorted((k, short(v)) for k, v in a.bindings)), a.start, a.end) for a in got)


def algebra(query: str) -> str:
    return sexpr.pattern(parse_rules(PREFIX + query, "<test>")[0].pattern)


def test_an_empty_where_answers_once_per_instant():
    assert run("SELECT * WHERE {}") == [((), 1, 1), ((), 2, 2), ((), 5, 5)]


def test_an_expression_over_the_empty_group():
    assert run("SELECT (2 * 3 AS ?x) {}") == [((("x", '"6"' + INT),), t, t) for t in (1, 2, 5)]


def test_a_filter_alone_filters_the_empty_solution():
    assert run("SELECT * { FILTER(getENDTIME() > \"1970-01-01T00:00:00.001Z\"^^<http://www.w3.org/2001/XMLSchema#dateTime>) }") \
        == [((), 2, 2), ((), 5, 5)]
    assert run("SELECT * { FILTER(false) }") == []


def test_optional_in_an_empty_group_is_a_left_join_with_each_instant():
    # LeftJoin({}, P): at each instant, every solution of P that ended by
    # then (OPTIONAL's e2 <= e1), spanning to the instant; none yet: the
    # empty solution
    assert algebra("SELECT * { OPTIONAL { ?s :p ?v } }") == \
        "(leftjoin\n  (unit)\n  (bgp\n    (triple ?s <http://example.org/p> ?v)))"
    one, two = (("s", "a"), ("v", '"1"' + INT)), (("s", "c"), ("v", '"2"' + INT))
    assert run("SELECT * { OPTIONAL { ?s :p ?v } }") == [
        (one, 1, 1), (one, 1, 2), (one, 1, 5), (two, 2, 2), (two, 2, 5)]
    assert run("SELECT * { OPTIONAL { ?s :nothing ?v } }") == [((), 1, 1), ((), 2, 2), ((), 5, 5)]


def test_union_with_an_empty_group():
    assert run("SELECT * { {} UNION { ?s :q ?o } }") == [
        ((), 1, 1), ((), 2, 2), ((), 5, 5), ((("o", "x"), ("s", "b")), 1, 1), ((("o", "y"), ("s", "d")), 5, 5)]


def test_a_filter_only_group_joined_with_a_pattern_filters_it():
    # SPARQL: join(P, Filter(F, {})): F sees none of P's variables, so it
    # keeps P whole or drops it, and P's solutions keep their intervals
    assert run("SELECT ?s { ?s :q ?o { FILTER(!bound(?o)) } }") == [((("s", "b"),), 1, 1), ((("s", "d"),), 5, 5)]
    assert run("SELECT ?s { ?s :p ?v { FILTER(?v = 1) } }") == []  # W3C filter-nested-2
    assert run("SELECT ?s { { FILTER(true) } ?s :q ?o }") == [((("s", "b"),), 1, 1), ((("s", "d"),), 5, 5)]


def test_juxtaposed_empty_groups_are_dropped():
    assert algebra("SELECT * { {} ?s :q ?o {} }") == "(bgp\n  (triple ?s <http://example.org/q> ?o))"


@pytest.mark.parametrize("query, message", [
    ("SELECT * WHERE { {} SEQ { ?x ?x ?x } }", "<test>:2:18: an empty group cannot be an operand of SEQ"),
    ("SELECT * WHERE { ?x ?x ?x } EQUALSOPTIONAL {}",
     "<test>:2:44: an empty group cannot be an operand of EQUALSOPTIONAL"),
])
def test_refused(query, message):
    with pytest.raises(QueryError) as info:
        parse_rules(PREFIX + query, "<test>")
    assert str(info.value) == message


def test_on_change_with_empty_groups_in_two_windows_reports_when_either_windows_events_change():
    # RSP-QL's content change read per window (an empty group after the
    # first group: its solution is at each close, so the solutions would
    # change at every evaluation). The first window (tau - 4, tau] holds
    # a b | a b c at 2, 3, 4 | c d | d at 6 .. 8 | none at 9; the group's
    # (tau - 1, tau]: a b | c | none | none | d | none from 6. Changes at 1,
    # 2, 3 (c leaves the group's window alone: the first window's events
    # did not change), 5, 6 and 9; not at 4, 7, 8
    text = ("SELECT * FROM STREAM <http://e/s> [RANGE 4ms STEP 1ms REPORT ON CHANGE] "
            "WHERE { { {} UNION { ?x :q ?z } } { {} UNION { ?x :p ?y } WINDOW RANGE 1 SLIDE 1 } }")
    assert sorted({end for _, _, end in run(text)}) == [1, 2, 3, 5, 6, 9]


def test_a_query_with_an_empty_group_runs_in_one_group_that_sees_every_event():
    q = parse_rules(PREFIX + "SELECT * { ?s :q ?o OPTIONAL { ?s :p ?v } } UNION {}", "<test>")[0]
    assert routing.partition_key(q) is None
    assert routing.Route((), None) in routing.classes([q])[0].routes


WINDOW_OPTIONAL = "SELECT ?v FROM STREAM <http://e/s> [RANGE 2ms TUMBLING{policy}] WHERE {{ OPTIONAL {{ ?s :p ?v }} }}"


def test_in_a_window_the_empty_group_has_one_solution_per_evaluation():
    # RSP-QL's eval of { OPTIONAL { ?s :p ?v } } over each window, evaluated
    # from 2 (the first close at or after the first instant) to 8, the first
    # window (6, 8] that starts at or after the last instant (5): (0, 2] holds
    # both :p; (2, 4], (4, 6] (only the :q at 5) and (6, 8] hold none, and
    # give the empty row
    assert run(WINDOW_OPTIONAL.format(policy="")) == [
        ((), 2, 4), ((), 4, 6), ((), 6, 8), ((("v", '"1"' + INT),), 0, 2), ((("v", '"2"' + INT),), 0, 2)]


def test_report_non_empty_reads_the_windows_events_not_the_empty_groups_solution():
    # the windows that hold an event: (0, 2] and (4, 6] (the :q at 5, no :p:
    # the empty row); (2, 4] and (6, 8] are empty and do not report
    assert run(WINDOW_OPTIONAL.format(policy=" REPORT NON EMPTY")) == [
        ((), 4, 6), ((("v", '"1"' + INT),), 0, 2), ((("v", '"2"' + INT),), 0, 2)]


# [TRIPLES 2] over streams s and t, {} read in GRAPH <t>: its content is
# the triples of t among the last two (C-SPARQL's triples, in the order
# they came), which can be part of an instant's
TRIPLES_OF_T = ("SELECT ?k ?v FROM STREAM <http://example.org/s> [TRIPLES 2{policy}] "
                "FROM NAMED STREAM <http://example.org/t> [TRIPLES 2{policy}] "
                "WHERE {{ GRAPH <http://example.org/t> {{ OPTIONAL {{ ?k :a ?v }} }} }}")
S, T = f"<{EX}s>", f"<{EX}t>"
TRIPLES_STREAM = [
    ev("k", "a", '"1"' + INT, 1, T), ev("j", "a", '"2"' + INT, 1, T), ev("m", "b", '"3"' + INT, 2, S),
    ev("n", "b", '"4"' + INT, 3, S), ev("k", "a", '"5"' + INT, 4, T), ev("m", "b", '"6"' + INT, 4, S),
    ev("j", "a", '"7"' + INT, 5, T), ev("x", "b", '"8"' + INT, 5, S), ev("y", "b", '"9"' + INT, 6, S)]


def test_a_triples_window_reports_by_the_triples_of_the_empty_groups_stream_it_holds():
    # Evaluated at each instant over [its oldest instant, the instant]; the
    # last two triples and those of t among them:
    #   1: k1 j2 -> {k1 j2}: k 1, j 2      4: k5 m6 -> {k5}: k 5
    #   2: j2 m3 -> {j2}:    j 2           5: j7 x8 -> {j7}: j 7
    #   3: m3 n4 -> {}: the empty row      6: x8 y9 -> {} (j7 came before x8 at 5): the empty row
    one = lambda v: (("k", v[0]), ("v", f'"{v[1:]}"' + INT))  # noqa: E731
    every = [(one("k1"), 1, 1), (one("j2"), 1, 1), (one("j2"), 1, 2), ((), 2, 3), (one("k5"), 4, 4),
             (one("j7"), 5, 5), ((), 5, 6)]
    assert run(TRIPLES_OF_T.format(policy=""), TRIPLES_STREAM) == sorted(every)
    # REPORT NON EMPTY: the windows that hold a triple of t; not 3, nor 6,
    # whose oldest instant 5 has its triple of t outside the window
    assert run(TRIPLES_OF_T.format(policy=" REPORT NON EMPTY"), TRIPLES_STREAM) == sorted(
        a for a in every if a[1:] not in ((2, 3), (5, 6)))
    # REPORT ON CHANGE: every evaluation; at 2, k1 left the window while
    # j2, of the same instant, stayed; at 6, j7 left
    assert run(TRIPLES_OF_T.format(policy=" REPORT ON CHANGE"), TRIPLES_STREAM) == sorted(every)


@pytest.mark.parametrize("reader", ["", "REGISTER QUERY reader AS\nSELECT ?y WHERE { ?x :seen ?y }\n"],
                         ids=["alone", "read"])
def test_a_windows_own_fed_triples_are_never_its_content(reader):
    # seen reads its empty group's content under REPORT NON EMPTY over the
    # windows (c - 10, c], c every 5 minutes; readings at minutes 2 and 7.
    # Its own triples (fed back at c only when another query reads them)
    # are never its content: 5 (2), 10 (2, 7) and 15 (7) report; 20,
    # whose window (10, 20] holds only its own triple of 15, does not,
    # whether or not reader is there, and the stream ends there (each own
    # triple read would call for one more window; docs/language.md, "The
    # empty group")
    rules = parse_rules(PREFIX + """REGISTER STREAM seen AS
CONSTRUCT { :watch :seen ?t }
FROM STREAM <http://example.org/s> [RANGE 10m STEP 5m REPORT NON EMPTY]
WHERE { BIND(NOW() AS ?t) }
""" + reader)
    events = [ev("k", "reads", "1", 2 * 60_000), ev("k", "reads", "5", 7 * 60_000)]
    got = checked_answers(rules, events)
    assert sorted(a.end // 60_000 for a in got if a.query == "seen") == [5, 10, 15]
    assert sorted(a.end // 60_000 for a in got if a.query == "reader") == ([5, 10, 15] if reader else [])
