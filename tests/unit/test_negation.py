"""SPARQL 1.1's MINUS and FILTER [NOT] EXISTS on a stream (docs/language.md,
"MINUS", "FILTER EXISTS and NOT EXISTS"): the right side is judged within
the left solution's interval, with SPARQL's conditions (compatible, for
MINUS sharing a variable bound in both; for EXISTS the group's FILTER
reading the solution's bindings); each case is also the reference
evaluator's."""

import pytest

from cep.algebra import sexpr
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

PREFIX = "PREFIX : <http://e/>\n"


def ev(s, p, o, t):
    return Event(f"<http://e/{s}>", f"<http://e/{p}>", f"<http://e/{o}>", t, t)


def run(text, events):
    return sorted((a.end, tuple(sorted((k, v[len("<http://e/"):-1]) for k, v in a.bindings)))
                  for a in checked_answers(parse_rules(PREFIX + text), events))


def test_minus_removes_the_compatible_solutions_of_the_same_instant():
    got = run("SELECT ?s ?o WHERE { ?s :p ?o MINUS { ?s :q ?o } }",
              [ev("a", "p", "x", 1), ev("a", "q", "x", 1), ev("b", "p", "x", 1), ev("b", "q", "y", 1),
               ev("c", "p", "x", 2), ev("c", "q", "x", 1)])
    # a is removed; b's ?o differs; c's :q is before c's solution
    assert got == [(1, (("o", "x"), ("s", "b"))), (2, (("o", "x"), ("s", "c")))]


def test_minus_needs_a_variable_bound_on_both_sides():
    events = [ev("a", "p", "x", 1), ev("x", "r", "z", 1), ev("w", "q", "z", 1), ev("b", "p", "y", 1)]
    # the only shared variable, ?z, is unbound in b's solution: nothing removes it
    got = run("SELECT ?s WHERE { ?s :p ?o OPTIONAL { ?o :r ?z } MINUS { ?w :q ?z } }", events)
    assert got == [(1, (("s", "b"),))]
    # no shared variable: MINUS removes nothing
    got = run("SELECT ?s WHERE { ?s :p ?o MINUS { ?w :q ?z } }", events)
    assert got == [(1, (("s", "a"),)), (1, (("s", "b"),))]


def test_the_filter_of_a_minus_group_sees_its_own_variables_only():
    events = [ev("a", "p", "x", 1), ev("a", "q", "x", 1)]
    # ?o is not bound inside the group: the filter is an error, so nothing is removed
    got = run("SELECT ?s WHERE { ?s :p ?o MINUS { ?s :q ?v FILTER(?v = ?o) } }", events)
    assert got == [(1, (("s", "a"),))]


def test_minus_needs_a_pattern_before_it():
    with pytest.raises(QueryError) as err:
        parse_rules(PREFIX + "SELECT * WHERE { MINUS { ?s :q ?o } ?s :p ?o }", "x.rq")
    assert str(err.value).startswith("x.rq:2:18: MINUS needs a pattern before it")


EXISTING = [ev("a", "p", "x", 1), ev("a", "q", "x", 1), ev("b", "p", "y", 1), ev("b", "q", "z", 1),
            ev("c", "p", "x", 2), ev("c", "q", "x", 1), ev("x", "r", "o2", 1)]


def test_filter_exists_keeps_the_solutions_with_a_match_within_their_interval():
    got = run("SELECT ?s WHERE { ?s :p ?o FILTER EXISTS { ?s :q ?w } }", EXISTING)
    assert got == [(1, (("s", "a"),)), (1, (("s", "b"),))]  # c's :q is before c's solution
    # the group's FILTER reads the solution's ?o (substitution), and a
    # solution matched twice is kept once
    got = run("SELECT ?s WHERE { ?s :p ?o FILTER EXISTS { ?s :q ?w FILTER(?w = ?o) } }",
              EXISTING + [ev("a", "q", "x2", 1)])
    assert got == [(1, (("s", "a"),))]


def test_filter_not_exists_among_conditions_and_nested():
    got = run("SELECT ?s WHERE { ?s :p ?o FILTER(?o != :z && NOT EXISTS { ?s :q ?o }) }", EXISTING)
    assert got == [(1, (("s", "b"),)), (2, (("s", "c"),))]
    # nested: a's :q ?w has a :r; b's has none
    got = run("SELECT ?s WHERE { ?s :p ?o FILTER EXISTS { ?s :q ?w FILTER NOT EXISTS { ?w :r ?u } } }",
              EXISTING)
    assert got == [(1, (("s", "b"),))]
    # !EXISTS is NOT EXISTS; with no shared variable it tests the instant's events as a whole
    got = run("SELECT ?s WHERE { ?s :p ?o FILTER(!EXISTS { ?x :nothing ?y }) }", EXISTING)
    assert [s for _, ((_, s),) in got] == ["a", "b", "c"]


def test_the_conditions_beside_not_exists_stay_a_filter():
    (query,) = parse_rules(PREFIX + "SELECT ?s WHERE { ?s :p ?o FILTER(BOUND(?o) && NOT EXISTS { ?s :q ?o }) }",
                           "x.rq")
    assert sexpr.query(query) == (
        "(select (?s)\n  (notexists\n    (filter (bound ?o)\n      (bgp\n"
        "        (triple ?s <http://e/p> ?o)))\n    (bgp\n      (triple ?s <http://e/q> ?o))))")


def test_not_exists_inside_an_expression_is_a_value():
    """[NOT] EXISTS inside a FILTER's expression (`?o = :z || NOT EXISTS
    { ... }`, W3C negation subset-02) is the same test as FILTER NOT
    EXISTS: the events within the solution's interval."""
    events = EXISTING + [ev("d", "p", "z", 1), ev("d", "q", "z", 1)]
    got = run("SELECT ?s WHERE { ?s :p ?o FILTER(?o = :z || NOT EXISTS { ?s :q ?o }) }", events)
    # a has its :q; c's :q is before c's solution; d's has one, but ?o = :z
    assert got == [(1, (("s", "b"),)), (1, (("s", "d"),)), (2, (("s", "c"),))]
    got = run("SELECT ?s WHERE { ?s :p ?o FILTER(IF(EXISTS { ?s :q ?w }, ?o = :x, false)) }", events)
    assert got == [(1, (("s", "a"),))]
    # two in one expression, one of them beside a plain FILTER
    got = run("SELECT ?s WHERE { ?s :p ?o FILTER(?o != :y) "
              "FILTER(!EXISTS { ?s :q ?o } || EXISTS { ?o :r ?u } && ?s = :a) }", events)
    assert got == [(1, (("s", "a"),)), (2, (("s", "c"),))]


def test_exists_inside_an_expression_reads_a_hidden_variable_select_star_leaves_out():
    (query,) = parse_rules(PREFIX + "SELECT * WHERE { ?s :p ?o FILTER(?o = :z || NOT EXISTS { ?s :q ?o }) }")
    assert sexpr.query(query) == (
        '(select (*)\n  (filter (or (= ?o <http://e/z>) ?_:b0)\n    (union\n'
        '      (extend ?_:b0 "false"^^<http://www.w3.org/2001/XMLSchema#boolean>\n'
        '        (exists\n          (bgp\n            (triple ?s <http://e/p> ?o))\n'
        '          (bgp\n            (triple ?s <http://e/q> ?o))))\n'
        '      (extend ?_:b0 "true"^^<http://www.w3.org/2001/XMLSchema#boolean>\n'
        '        (notexists\n          (bgp\n            (triple ?s <http://e/p> ?o))\n'
        '          (bgp\n            (triple ?s <http://e/q> ?o)))))))')
    got = run("SELECT * WHERE { ?s :p ?o FILTER(?o = :z || NOT EXISTS { ?s :q ?o }) }", EXISTING)
    assert got == [(1, (("o", "y"), ("s", "b"))), (2, (("o", "x"), ("s", "c")))]


def test_exists_stays_refused_in_a_select_expression():
    with pytest.raises(QueryError) as err:
        parse_rules(PREFIX + "SELECT (EXISTS { ?s :q ?o } AS ?e) WHERE { ?s :p ?o }", "x.rq")
    assert "EXISTS inside an expression is not supported" in str(err.value)
