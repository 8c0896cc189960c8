"""Rule chaining (the paper's Q-closure): CONSTRUCT triples fed back as
events (cep/algebra/chaining.py, cep/compile/derivations.py,
prolog/cep_runtime.pl). The golden cases chain_* and paper_q4_q2 hold the
hand-checked answers; the property test compares random rule sets with the
reference."""

import pytest

from cep.algebra.chaining import analyse
from cep.background.knowledge import background_of
from cep.compile import explain
from cep.engine import Engine
from cep.errors import EngineError, QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

EX = "http://example.org/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
PREFIX = f"PREFIX : <{EX}>\nPREFIX rdfs: <{RDFS}>\n"


def iri(x):
    return f"<{RDFS}{x[5:]}>" if x.startswith("rdfs:") else f"<{EX}{x}>"


def num(n):
    return f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'


def ev(s, p, o, t):
    return Event(iri(s), iri(p), o if o.startswith('"') else iri(o), t, t)


def rules(text):
    return parse_rules(PREFIX + text, "rules/chain.rq")


def test_a_rule_set_that_reads_its_own_answers_in_an_optional_part_at_the_same_instant_is_refused():
    with pytest.raises(QueryError) as err:
        analyse(rules("""REGISTER STREAM odd AS
            CONSTRUCT { ?s :seen ?x } WHERE { { ?s :temp ?x } EQUALSOPTIONAL { ?s :seen ?y } }"""))
    assert str(err.value).startswith("rules/chain.rq:3:")
    assert "not stratified" in str(err.value) and "cycle odd -> odd" in str(err.value)


def test_reading_derived_triples_only_in_the_past_is_no_cycle_at_one_instant():
    # the paper's query (5) reads its own points, which end before the price it joins
    text = open("rules/paper/q5.rq").read()
    chaining = analyse(parse_rules(text, "q5.rq"))
    (edge,) = chaining.edges
    assert edge.producer == edge.consumer == "q5" and not edge.same_instant
    assert chaining.cycles() == [(("q5",), False)]
    assert "cycle q5 -> q5 across instants" in chaining.explain()


def test_explain_shows_the_dependency_graph_and_warns_about_cycles():
    text = explain(rules("""
        REGISTER STREAM knows AS CONSTRUCT { ?a :knows ?b } WHERE { ?a :follows ?b }
        REGISTER STREAM back AS CONSTRUCT { ?b :follows ?a } WHERE { ?a :knows ?b }
        REGISTER QUERY flagged AS SELECT * WHERE { { ?a :temp ?t } EQUALSOPTIONAL { ?a :knows ?b } }"""))
    section = text.split("== rule chaining")[1].split("== Prolog")[0]
    assert "knows -> back  (<http://example.org/knows>; read at the instant they are derived)" in section
    assert "back -> knows" in section
    assert "knows -> flagged  (<http://example.org/knows>; read at the instant they are derived, in an optional part)" in section
    assert "warning: cycle knows -> back -> knows within one instant" in section
    assert "strata (the order of each instant's optional checks): knows 0, back 0, flagged 1" in section


def test_a_cycle_that_computes_a_new_value_each_round_stops_with_an_error():
    engine = Engine(rules("""REGISTER STREAM count AS
        CONSTRUCT { ?s :n ?m } { SELECT ?s (?k + 1 AS ?m) { ?s :n ?k } }"""))
    with pytest.raises(EngineError, match=r"at 1970-01-01T00:00:00\+00:00 the CONSTRUCT rules count "
                                          r"\(1,001 new triples\) derived new triples for 1,000 rounds"):
        engine.push([ev("a", "n", num(0), 5)])
        engine.flush()


def test_blank_nodes_are_named_by_the_derivation_so_a_cycle_through_them_ends():
    # each round derives _:x :p 1 again: the same rule, values and interval
    got = checked_answers(rules("REGISTER STREAM copy AS CONSTRUCT { _:x :p ?o } WHERE { ?s :p ?o }"),
                          [ev("a", "p", num(1), 1), ev("b", "p", num(1), 2)])
    assert [(a.start, len(a.triples)) for a in got] == [(1, 1), (2, 1)]
    (s1, _, _), = got[0].triples
    (s2, _, _), = got[1].triples
    assert s1.startswith("_:sk") and s1 != s2  # one node per interval


def test_equal_template_values_over_one_interval_are_one_answer():
    # two ratings give the same downrating over the same interval: one answer
    got = checked_answers(rules("""REGISTER STREAM down AS
        CONSTRUCT { ?c :down _:d . _:d :by ?a } WHERE { ?r :rated ?c ; :by ?a ; :kind ?k }"""),
                          [ev("r1", "rated", "acme", 1), ev("r1", "by", "moodys", 1), ev("r1", "kind", "long", 1),
                           ev("r1", "kind", "short", 1)])
    assert len(got) == 1 and len(got[0].triples) == 2


def test_derived_triples_are_read_with_their_rdfs_entailments():
    background = background_of([(iri("downgrade"), iri("rdfs:subPropertyOf"), iri("rating"))])
    got = checked_answers(rules("""
        REGISTER STREAM down AS CONSTRUCT { ?c :downgrade ?a } WHERE { ?a :cut ?c }
        REGISTER QUERY ratings AS SELECT ?c ?a WHERE { ?c :rating ?a }"""),
                          [ev("moodys", "cut", "acme", 1)], background)
    assert [(a.query, dict(a.bindings).get("a")) for a in got] == [("down", None), ("ratings", iri("moodys"))]


def test_the_fed_back_triples_are_those_the_answer_shows():
    # the derived blank node is read back by a query that projects it
    # (the reference names its blank nodes otherwise: compared by hand)
    engine = Engine(rules("""
        REGISTER STREAM mint AS CONSTRUCT { _:e :about ?s } WHERE { ?s :temp ?t }
        REGISTER QUERY about AS SELECT ?e ?s WHERE { ?e :about ?s }"""))
    got = engine.push([ev("a", "temp", num(3), 1)]) + engine.flush()
    mint, about = sorted(got, key=lambda a: a.query, reverse=True)
    assert (mint.query, about.query) == ("mint", "about")
    assert dict(about.bindings)["e"] == mint.triples[0][0]


def test_a_rule_reading_its_own_triples_through_during_derives_each_solution_once():
    # the property test's falsifying example: the derived :p and :q triples
    # over many intervals of one instant are read again, so one solution of
    # each step had many derivations; stored each, they multiplied the
    # matches of every later step until the Prolog stack overflowed
    c0 = rules("""REGISTER STREAM c0 AS
        CONSTRUCT { ?s :p ?x . ?s :q ?x } WHERE {
            { ?t :p ?x } DURING { ?s :q ?z . ?s :q ?x } . ?s ?p ?x . ?s :p ?x . FILTER(bound(?x)) }""")
    spans = [("s2", "q", 0, 3, 3), ("s2", "q", 2, 1, 1), ("s2", "p", 2, 3, 4), ("s2", "p", 0, 5, 6),
             ("s2", "q", 1, 6, 8), ("s2", "p", 1, 5, 5), ("s1", "q", 0, 3, 7), ("s1", "q", 0, 7, 11),
             ("s2", "q", 0, 2, 2), ("s2", "q", 0, 0, 2), ("s2", "p", 2, 2, 2), ("s2", "p", 1, 8, 8),
             ("s1", "p", 0, 1, 3), ("s2", "q", 0, 7, 9), ("s2", "q", 1, 4, 4), ("s2", "p", 0, 7, 7)]
    events = [Event(iri(s), iri(p), num(o), ts, te) for s, p, o, ts, te in spans]
    got = checked_answers(c0, events)
    assert len(got) == 39
