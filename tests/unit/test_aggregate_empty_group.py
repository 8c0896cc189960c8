"""An evaluation of a count window whose pattern has no solution is
SPARQL's over a graph where the pattern matches nothing: a grouped query
answers the empty group's row, with GROUP BY too (W3C agg-empty-group:
one row, the keys and MAX unbound), on the engine and the reference."""

from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

PREFIXES = "PREFIX : <http://e/>\n"
T = 1_767_225_600_000  # 2026-01-01T00:00:00Z
INT = "^^<http://www.w3.org/2001/XMLSchema#integer>"


def answers(query: str, events) -> list:
    parsed = parse_rules(PREFIXES + query)
    return sorted((a.start, a.end, tuple(sorted(a.bindings))) for a in checked_answers(parsed, events))


def tick(t):
    return Event("<http://e/t>", "<http://e/tick>", "<http://e/t>", t, t, stream="<http://e/s>")


WINDOW = "FROM STREAM <http://e/s> WINDOW ELEMS 1\n"


def test_grouped_by_a_key_over_no_solution_is_one_row_of_unbound_values():
    # the window holds the tick at T, and no :p: one row, ?x and ?max unbound
    query = f"SELECT ?x (MAX(?v) AS ?max) {WINDOW}WHERE {{ ?t :tick ?u OPTIONAL {{ ?x :p ?v }} FILTER(BOUND(?x)) }} GROUP BY ?x"
    assert answers(query, [tick(T)]) == [(T, T, ())]


def test_the_aggregates_of_the_empty_group():
    query = (f"SELECT (COUNT(*) AS ?n) (SUM(?v) AS ?sum) (MIN(?v) AS ?min) (GROUP_CONCAT(?v) AS ?all) "
             f"{WINDOW}WHERE {{ ?t :tick ?u FILTER(false) }}")
    assert answers(query, [tick(T), tick(T + 1000)]) == [
        (t, t, (("all", '""'), ("n", f'"0"{INT}'), ("sum", f'"0"{INT}'))) for t in (T, T + 1000)]


def test_having_can_drop_the_empty_group():
    query = f"SELECT (COUNT(*) AS ?n) {WINDOW}WHERE {{ ?t :tick ?u FILTER(false) }} HAVING (COUNT(*) > 0)"
    assert answers(query, [tick(T)]) == []


def test_a_count_window_with_solutions_is_unchanged():
    query = f"SELECT ?t (COUNT(*) AS ?n) {WINDOW}WHERE {{ ?t :tick ?u }} GROUP BY ?t"
    assert answers(query, [tick(T)]) == [(T, T, (("n", f'"1"{INT}'), ("t", "<http://e/t>")))]


def test_a_query_evaluated_by_a_groups_count_window_gives_the_empty_group_too():
    # the query is evaluated by its first group's window (ELEMS 1), which
    # holds the tick, and no :p joins it: the empty group's row, as over the query's
    # own count window (the property test of group windows found the
    # reference reading the query's time window here, and no evaluation at all)
    query = ("SELECT ?t (COUNT(?v) AS ?n) FROM STREAM <http://e/s> [RANGE 1s STEP 1s] "
             "WHERE { { ?t :tick ?u WINDOW ELEMS 1 } { ?t :p ?v WINDOW ELEMS 1 } } GROUP BY ?t")
    assert answers(query, [tick(T)]) == [(T, T, (("n", f'"0"{INT}'),))]
