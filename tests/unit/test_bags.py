"""SPARQL's solutions are a multiset (cep/algebra/bags.py): equal solutions
that UNION's two operands or two rows of VALUES make are two answers, on
the engine and on the reference evaluator, without a window and in one;
DISTINCT collapses them. The W3C cases bind07 and values5 in small."""

from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

PREFIXES = "PREFIX : <http://e/>\n"
T = 1_767_225_600_000  # 2026-01-01T00:00:00Z
WINDOW = "FROM STREAM <http://s> [RANGE 10s STEP 10s]\n"


def rows(query: str, events) -> list:
    """The sorted bindings of the query's answers (checked against the reference)."""
    parsed = parse_rules(PREFIXES + query)
    return sorted(tuple(sorted(a.bindings)) for a in checked_answers(parsed, events))


def ev(s, p, o, t=T):
    return Event(f"<http://e/{s}>", f"<http://e/{p}>", o, t, t, stream="<http://s>")


ONE = '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'
K1 = "<http://e/k1>"


def test_a_union_whose_operands_give_the_same_solution_answers_twice():
    events = [ev("k1", "a", ONE), ev("k1", "b", ONE)]
    query = "SELECT ?s ?x WHERE { { ?s :a ?x } UNION { ?s :b ?x } }"
    assert rows(query, events) == [(("s", K1), ("x", ONE))] * 2
    assert rows(query.replace("SELECT", "SELECT DISTINCT"), events) == [(("s", K1), ("x", ONE))]


def test_a_windowed_union_counts_each_operand():
    events = [ev("k1", "a", ONE, T + 1000), ev("k1", "b", ONE, T + 1000)]
    query = f"SELECT (COUNT(*) AS ?n) {WINDOW}WHERE {{ {{ ?s :a ?x }} UNION {{ ?s :b ?x }} }}"
    empty, row = rows(query, events)  # sorted: the next window, empty (COUNT 0), first
    assert row == (("n", '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'),)
    assert empty == (("n", '"0"^^<http://www.w3.org/2001/XMLSchema#integer>'),)


def test_two_rows_of_values_that_join_a_solution_into_the_same_one_answer_twice():
    # values5: (UNDEF 1) and (:k1 UNDEF) both join { ?s :a 1 }
    events = [ev("k1", "a", ONE)]
    query = "SELECT ?s ?x WHERE { ?s :a ?x } VALUES (?s ?x) { (UNDEF 1) (:k1 UNDEF) }"
    assert rows(query, events) == [(("s", K1), ("x", ONE))] * 2
    windowed = f"SELECT ?s ?x {WINDOW}WHERE {{ ?s :a ?x }} VALUES (?s ?x) {{ (UNDEF 1) (:k1 UNDEF) }}"
    assert rows(windowed, [ev("k1", "a", ONE, T + 1000)]) == [(("s", K1), ("x", ONE))] * 2


def test_equal_rows_of_values_are_two_rows():
    query = "SELECT ?s WHERE { ?s :a ?x VALUES ?x { 1 1 } }"
    assert rows(query, [ev("k1", "a", ONE)]) == [(("s", K1),)] * 2


def test_a_union_of_binds_in_a_window_is_inline_data_joined_with_its_group():
    # bind07 over a window: each BIND's group reads no ?o (SPARQL's scope), so
    # ?z is unbound, and each operand gives one solution: two per triple
    events = [ev("k1", "a", ONE, T + 1000)]
    query = (f"SELECT ?s ?z {WINDOW}WHERE {{ ?s :a ?o "
             "{ BIND(?o + 1 AS ?z) } UNION { BIND(?o + 2 AS ?z) } }")
    assert rows(query, events) == [(("s", K1),)] * 2
