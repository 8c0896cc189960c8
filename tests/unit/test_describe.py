"""DESCRIBE (docs/language.md, "DESCRIBE") and @feedback off: a DESCRIBE's
answer is, per solution, the triples of the solution's events about each
described resource and the resource's concise bounded description in the
background; like the triples of a CONSTRUCT with @feedback off, they are
output only and never fed back into the stream. Each case is also the
reference evaluator's (checked_answers)."""

import pytest

from cep.algebra import sexpr
from cep.algebra.chaining import analyse
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers, turtle_background

EX = "http://example.org/"
PREFIX = "PREFIX : <http://example.org/>\n"
ONTOLOGY = """\
@prefix : <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:b1 :locatedIn :pacific ; :owner [ :name "NOAA" ; :part [ :name "PMEL" ] ] .
:b9 :locatedIn :atlantic .
"""


@pytest.fixture(scope="module")
def background(tmp_path_factory):
    return turtle_background(tmp_path_factory, "buoys.ttl", ONTOLOGY)


def ev(s, p, o, t):
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", f"<{EX}{o}>", t, t)


def short(term):
    return term.removeprefix(f"<{EX}").removesuffix(">") if term.startswith("<") else term


def run(text, events, background=None):
    """(start, end, the answer's triples shortened, sorted) per answer."""
    got = checked_answers(parse_rules(PREFIX + text, "x.rq"), events, background)
    return sorted((a.start, a.end, tuple(sorted(tuple(short(x) for x in t) for t in a.triples))) for a in got)


EVENTS = [ev("b1", "height", "h1", 1), ev("b1", "alarm", "on", 1), ev("h1", "unit", "mm", 1),
          ev("b9", "height", "h2", 2)]


def test_describe_gives_the_solutions_events_about_the_resource():
    got = run("DESCRIBE ?b WHERE { ?b :height ?h . ?h :unit ?u }", EVENTS)
    # b1's :alarm is no event of the solution; ?h's :unit is about ?h
    assert got == [(1, 1, (("b1", "height", "h1"),))]
    got = run("DESCRIBE ?b ?h WHERE { ?b :height ?h . ?h :unit ?u }", EVENTS)
    assert got == [(1, 1, (("b1", "height", "h1"), ("h1", "unit", "mm")))]


def test_describe_adds_the_concise_bounded_description_in_the_background(background):
    got = run("DESCRIBE ?b WHERE { ?b :height ?h }", EVENTS, background)
    b1, b9 = got
    assert b1[:2] == (1, 1) and b9 == (2, 2, (("b9", "height", "h2"), ("b9", "locatedIn", "atlantic")))
    # b1's owner is a blank node: its triples and its part's come along
    owner = {t[2] for t in b1[2] if t[1] == "owner"}.pop()
    part = {t[2] for t in b1[2] if t[1] == "part"}.pop()
    assert sorted(b1[2]) == sorted([("b1", "height", "h1"), ("b1", "locatedIn", "pacific"), ("b1", "owner", owner),
                                    (owner, "name", '"NOAA"'), (owner, "part", part), (part, "name", '"PMEL"')])
    # an IRI alone: the background's description at each instant of the stream
    got = run("DESCRIBE :b9", EVENTS, background)
    assert got == [(1, 1, (("b9", "locatedIn", "atlantic"),)), (2, 2, (("b9", "locatedIn", "atlantic"),))]


def test_describe_star_describes_every_variable_and_its_template_shows_the_markers():
    (query,) = parse_rules(PREFIX + "DESCRIBE * WHERE { ?b :height [ :unit ?u ] }")
    assert sexpr.query(query) == (
        "(construct ((triple ?b <http://example.org/height> ?.described.b0) "
        "(triple ?b <urn:cep:describe> ?b) (triple ?u <urn:cep:describe> ?u))\n"
        "  (options (feedback off))\n  (bgp\n    (triple ?b <http://example.org/height> ?.described.b0)\n"
        "    (triple ?.described.b0 <http://example.org/unit> ?u)))")
    assert run("DESCRIBE * WHERE { ?b :height [ :unit ?u ] }", EVENTS) == [(1, 1, (("b1", "height", "h1"),))]


def test_describe_and_construct_with_feedback_off_are_not_fed_back():
    construct = "CONSTRUCT { ?b :high ?h } WHERE { ?b :height ?h }\n"
    reader = "SELECT ?b WHERE { ?b :high ?h }\n"
    assert [a.bindings for a in checked_answers(parse_rules(PREFIX + construct + reader), EVENTS)
            if a.query.endswith("#2")] == [(("b", f"<{EX}b1>"),), (("b", f"<{EX}b9>"),)]
    queries = parse_rules(PREFIX + "@feedback off\n" + construct + reader)
    assert not analyse(queries).producers
    assert [a for a in checked_answers(queries, EVENTS) if a.query.endswith("#2")] == []
    queries = parse_rules(PREFIX + "DESCRIBE ?b WHERE { ?b :height ?h }\nSELECT ?b WHERE { ?b :height ?h }\n")
    assert not analyse(queries).producers


@pytest.mark.parametrize("text, message", [
    ("@feedback off\nSELECT ?b WHERE { ?b :height ?h }", "x.rq:3:1: @feedback says whether a CONSTRUCT's triples"),
    ("@feedback on\nDESCRIBE ?b WHERE { ?b :height ?h }", "x.rq:3:1: @feedback says whether a CONSTRUCT's triples"),
    ("@feedback maybe\nCONSTRUCT { ?b :p ?h } WHERE { ?b :height ?h }", "x.rq:2:1: @feedback maybe: the value"),
    ("DESCRIBE * WHERE { :b1 :height :h1 }", "x.rq:2:10: DESCRIBE * describes the variables of the pattern"),
    ("DESCRIBE ?b WHERE { ?b :height ?h } ORDER BY ?h", "x.rq:2:37: ORDER BY in a DESCRIBE query is not supported"),
])
def test_describe_and_feedback_errors(text, message):
    with pytest.raises(QueryError) as err:
        parse_rules(PREFIX + text, "x.rq")
    assert str(err.value).startswith(message)
