"""SPARQL's scoping of graph patterns in answers (issue 19): which FILTER
sees which variables, OPTIONAL over background knowledge. Each case runs
on the in-process engine and the reference evaluator (checked_answers)."""

from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

EX = "http://e/"
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
