"""SPARQL graph patterns in answers (issue 19): which FILTER sees which
variables, RDF collections. Each case runs on the in-process engine and
the reference evaluator (checked_answers)."""

from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

EX = "http://e/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
H = f"PREFIX : <{EX}>\n"
T = 1_767_225_600_000


def ev(s, p, o, t=T):
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", o if o.startswith('"') else f"<{EX}{o}>", t, t)


def rows(answers, *names):
    return sorted(tuple(a.binding(n) for n in names) for a in answers)


def run(text, events, background=None):
    return checked_answers(parse_rules(H + text, "rules/x.rq"), events, background)


def test_a_filter_in_a_group_nested_in_an_optional_group_does_not_see_the_outer_variables():
    """Issue 19, item 2 (dawg-optional-filter-005-not-simplified): the inner
    group's FILTER reads ?title, which that group does not bind: an error,
    so the optional part never matches, and every title answers alone."""
    events = [ev("b1", "title", '"TITLE 1"'), ev("b1", "price", '"10"'),
              ev("b2", "title", '"TITLE 2"'), ev("b2", "price", '"20"')]
    got = run('SELECT ?title ?price WHERE { ?book :title ?title . '
              'OPTIONAL { { ?book :price ?price . FILTER(?title = "TITLE 2") } } }', events)
    assert rows(got, "title", "price") == [('"TITLE 1"', None), ('"TITLE 2"', None)]
    # the optional group's own FILTER is the condition: it sees ?title
    got = run('SELECT ?title ?price WHERE { ?book :title ?title . '
              'OPTIONAL { ?book :price ?price . FILTER(?title = "TITLE 2") } }', events)
    assert rows(got, "title", "price") == [('"TITLE 1"', None), ('"TITLE 2"', '"20"')]


def test_a_collection_matches_an_rdf_list():
    """`( ?v ?w )` is a list of blank nodes linked by rdf:first and
    rdf:rest, ending in rdf:nil (W3C list-1 .. list-4)."""
    first, rest, nil = (f"<{RDF}{n}>" for n in ("first", "rest", "nil"))
    events = [Event(f"<{EX}x>", f"<{EX}p>", "_:l1", T, T), Event("_:l1", first, '"1"', T, T),
              Event("_:l1", rest, "_:l2", T, T), Event("_:l2", first, '"2"', T, T),
              Event("_:l2", rest, nil, T, T), Event(f"<{EX}x>", f"<{EX}q>", nil, T, T)]
    got = run("SELECT ?p ?v ?w WHERE { :x ?p (?v ?w) }", events)
    assert rows(got, "p", "v", "w") == [(f"<{EX}p>", '"1"', '"2"')]
    assert rows(run("SELECT ?p WHERE { :x ?p () }", events), "p") == [(f"<{EX}q>",)]
    assert run("SELECT ?v WHERE { :x :p (?v) }", events) == []


def test_a_negated_property_set_matches_events_by_their_predicate():
    events = [ev("a", "p1", "b"), ev("a", "p2", "c"), ev("a", "p3", "d"), ev("e", "p1", "a")]
    got = run("SELECT ?x WHERE { :a !(:p1|:p2) ?x }", events)
    assert rows(got, "x") == [(f"<{EX}d>",)]
    got = run("SELECT ?x WHERE { :a !(:p3|^:p2) ?x }", events)
    assert rows(got, "x") == [(f"<{EX}b>",), (f"<{EX}c>",), (f"<{EX}e>",)]
