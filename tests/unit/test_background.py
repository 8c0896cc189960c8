"""Events matched modulo an RDFS ontology and joined with background
triples, on the in-process engine, with hand-checked answers; the
reference evaluator (the paper's semantics with background occurrences)
must give the same."""

from pathlib import Path

import pytest

from cep.background.knowledge import load_background
from cep.engine import Engine
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers, turtle_background

EX = "http://example.org/"
ONTOLOGY = """\
@prefix : <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:DartBuoy rdfs:subClassOf :Buoy .
:Buoy rdfs:subClassOf :Sensor .
:Ocean rdfs:subClassOf :Region .
:waterHeight rdfs:subPropertyOf :reading .
:waterHeight rdfs:domain :Buoy .
:locatedIn rdfs:range :Region .
:b9 :locatedIn :atlantic .
:b1 :locatedIn :pacific .
:pacific a :Ocean .
"""
PREFIX = "PREFIX : <http://example.org/>\n"


@pytest.fixture(scope="module")
def background(tmp_path_factory):
    return turtle_background(tmp_path_factory, "sensors.ttl", ONTOLOGY)


def ev(s, p, o, t):
    obj = f'"{o}"^^<http://www.w3.org/2001/XMLSchema#integer>' if isinstance(o, int) else f"<{EX}{o}>"
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", obj, t, t)


def run(query: str, events, background):
    got = checked_answers(parse_rules(PREFIX + query, "<test>"), events, background)
    return [(dict(b), s, e) for b, s, e in sorted((a.bindings, a.start, a.end) for a in got)]


def short(bindings):
    return {k: v.removeprefix(f"<{EX}").removesuffix(">") for k, v in bindings.items()}


def test_an_instance_of_a_subclass_matches_its_superclasses(background):
    got = run("SELECT ?x WHERE { ?x a :Sensor }", [ev("b2", "type", "DartBuoy", 5)], background)
    assert [(short(b), s, e) for b, s, e in got] == []  # :type is not rdf:type
    events = [Event(f"<{EX}b2>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{EX}DartBuoy>", 5, 5)]
    got = run("SELECT ?x WHERE { ?x a :Sensor }", events, background)
    assert [(short(b), s, e) for b, s, e in got] == [({"x": "b2"}, 5, 5)]


def test_a_class_variable_takes_the_class_and_every_superclass(background):
    events = [Event(f"<{EX}b2>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{EX}DartBuoy>", 5, 5)]
    got = run("SELECT ?c WHERE { :b2 a ?c }", events, background)
    assert sorted(short(b)["c"] for b, _, _ in got) == ["Buoy", "DartBuoy", "Sensor"]


def test_a_subproperty_event_matches_the_superproperty(background):
    got = run("SELECT ?s ?v WHERE { ?s :reading ?v }", [ev("b2", "waterHeight", 7, 3)], background)
    assert got == [({"s": f"<{EX}b2>", "v": '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'}, 3, 3)]


def test_domain_and_range_type_an_events_subject_and_object(background):
    got = run("SELECT ?x WHERE { ?x a :Sensor }", [ev("b2", "waterHeight", 7, 3)], background)
    assert [short(b) for b, _, _ in got] == [{"x": "b2"}]  # domain Buoy, a Sensor
    got = run("SELECT ?r WHERE { ?r a :Region }", [ev("b2", "locatedIn", "arctic", 4)], background)
    assert [(short(b), s) for b, s, _ in got] == [({"r": "arctic"}, 4)]


def test_a_literal_is_not_typed_by_a_range(tmp_path):
    path = tmp_path / "r.ttl"
    path.write_text("@prefix : <http://example.org/> .\n"
                    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                    ":waterHeight rdfs:range :Height .\n")
    got = run("SELECT ?h WHERE { ?h a :Height }", [ev("b2", "waterHeight", 7, 3)], load_background([path]))
    assert got == []


def test_background_triples_join_an_event_and_keep_its_interval(background):
    query = "SELECT ?x ?v ?r WHERE { ?x :waterHeight ?v . ?x :locatedIn ?r . ?r a :Region }"
    got = run(query, [ev("b1", "waterHeight", 7, 10), ev("b9", "waterHeight", 8, 12)], background)
    # atlantic is a Region by the range of :locatedIn, pacific as an Ocean
    assert sorted((short(b)["x"], short(b)["r"], s, e) for b, s, e in got) == [
        ("b1", "pacific", 10, 10), ("b9", "atlantic", 12, 12)]


def test_a_pattern_group_that_only_background_matches_never_fires(background):
    assert run("SELECT ?x ?r WHERE { ?x :locatedIn ?r }", [ev("b2", "waterHeight", 7, 3)], background) == []
    query = "SELECT ?x WHERE { ?x :locatedIn ?r } SEQ { ?x :waterHeight ?v }"
    assert run(query, [ev("b1", "waterHeight", 7, 3)], background) == []


def test_an_event_and_a_background_triple_of_the_same_pattern_are_two_solutions(background):
    # ?x :locatedIn ?r is matched by the background (timeless) and by the
    # event at 2: two solutions, with different intervals
    query = "SELECT ?x ?r WHERE { ?x :locatedIn ?r . ?x :waterHeight ?v }"
    events = [ev("b1", "locatedIn", "pacific", 2), ev("b1", "waterHeight", 7, 6)]
    got = run(query, events, background)
    assert [(short(b), s, e) for b, s, e in got] == [
        ({"x": "b1", "r": "pacific"}, 2, 6), ({"x": "b1", "r": "pacific"}, 6, 6)]


def test_no_background_changes_nothing():
    queries = parse_rules(PREFIX + "SELECT ?x WHERE { ?x a :Sensor }", "<test>")
    events = [Event(f"<{EX}b2>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{EX}DartBuoy>", 5, 5)]
    engine = Engine(queries)
    assert engine.push(events) + engine.flush() == []


def test_cep_run_with_an_ontology_and_a_malformed_one(tmp_path, capsys):
    from cep import cli

    rules = tmp_path / "sensors.rq"
    rules.write_text("PREFIX sosa: <http://www.w3.org/ns/sosa/>\n"
                     "PREFIX : <http://example.org/sensors#>\n"
                     "SELECT ?platform ?sensor WHERE { ?platform a sosa:Platform . ?platform sosa:hosts ?sensor . "
                     "?x :reports ?sensor }\n")
    events = tmp_path / "events.jsonl"
    events.write_text('{"s": "<http://example.org/sensors#obs1>", "p": "<http://example.org/sensors#reports>", '
                      '"o": "<http://example.org/sensors#bpr21418>", "t": "2011-03-11T05:46:00Z"}\n')
    sensors = str(Path(__file__).resolve().parents[2] / "ontologies" / "sensors.ttl")
    code = cli.main(["run", str(rules), "--events", str(events), "--engine", "local", "-q", "--ontology", sensors])
    out, err = capsys.readouterr()
    assert code == 0, err
    # the station is a Platform through DARTBuoy < TsunamiBuoy < Buoy < Platform, and hosts the recorder
    assert '"platform": {"type": "uri", "value": "http://example.org/sensors#station21418"}' in out
    assert out.count("\n") == 1

    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix : <http://example.org/> .\n:a :b :c .\n:d :e .\n")
    code = cli.main(["run", str(rules), "--events", str(events), "--engine", "local", "--ontology", str(bad)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert f"{bad}:3:" in err and "Turtle syntax error" in err
    assert "event" not in err  # stopped before reading any event


def test_a_duration_bound_fails_a_background_group_but_not_a_join_it_is_part_of(background):
    # the group { ?x :locatedIn ?r } alone is background: its duration is an
    # error, so its FILTER fails it; the same bound over the whole join
    # measures the event's interval and passes
    inner = ("SELECT ?x ?r WHERE { ?x :waterHeight ?v { ?x :locatedIn ?r "
             'FILTER (getDURATION() < "PT1S"^^<http://www.w3.org/2001/XMLSchema#duration>) } }')
    assert run(inner, [ev("b1", "waterHeight", 7, 10)], background) == []
    outer = ("SELECT ?x ?r WHERE { ?x :waterHeight ?v . ?x :locatedIn ?r "
             'FILTER (getDURATION() < "PT1S"^^<http://www.w3.org/2001/XMLSchema#duration>) }')
    got = run(outer, [ev("b1", "waterHeight", 7, 10)], background)
    assert [(short(b), s, e) for b, s, e in got] == [({"x": "b1", "r": "pacific"}, 10, 10)]


def test_an_optional_part_found_in_the_background_binds_and_keeps_the_mandatory_interval(background):
    """Issue 19, item 6: an optional label looked up in the ontology."""
    query = "SELECT ?x ?r WHERE { ?x :waterHeight ?v OPTIONAL { ?x :locatedIn ?r } }"
    got = run(query, [ev("b1", "waterHeight", 7, 10), ev("b2", "waterHeight", 8, 12)], background)
    assert [(short(b), s, e) for b, s, e in got] == [
        ({"x": "b1", "r": "pacific"}, 10, 10), ({"x": "b2"}, 12, 12)]


def test_an_optional_group_over_the_background_alone_is_joined_with_events(background):
    """OPTIONAL over background triples only is SPARQL's over the
    background graph; joined with an event, the solution takes its
    interval. The optional part only sees the pattern it extends: ?r bound
    by the event after it does not steer it (W3C join-scope-1)."""
    query = ("SELECT ?x ?r ?c WHERE { ?e :waterHeight ?v . "
             "{ ?x :locatedIn ?r OPTIONAL { ?r a ?c FILTER(?c = :Ocean) } } }")
    got = run(query, [ev("b1", "waterHeight", 7, 10)], background)
    assert [(short(b), s, e) for b, s, e in got] == [
        ({"x": "b1", "r": "pacific", "c": "Ocean"}, 10, 10), ({"x": "b9", "r": "atlantic"}, 10, 10)]
    query = "SELECT ?x ?y WHERE { ?e :waterHeight ?v . ?y :locatedIn :pacific { ?x a :Buoy OPTIONAL { ?y :locatedIn :atlantic } } }"
    # the optional part binds ?y to b9, which the join with ?y = b1 rejects
    assert run(query, [ev("b1", "waterHeight", 7, 10)], background) == []


def test_a_background_mandatory_part_takes_no_optional_part_from_events(background):
    """A solution of background triples alone is there at every instant:
    an event cannot withdraw its solution without the optional part, so it
    takes the background's optional parts only (docs/language.md)."""
    query = "SELECT ?x ?v WHERE { ?e :waterHeight ?h . { ?x :locatedIn ?r OPTIONAL { ?x :depth ?v } } }"
    got = run(query, [ev("b1", "depth", 3, 5), ev("b1", "waterHeight", 7, 10)], background)
    assert [(short(b), s, e) for b, s, e in got] == [({"x": "b1"}, 10, 10), ({"x": "b9"}, 10, 10)]


def test_minus_and_exists_look_their_right_side_up_in_the_background(background):
    """MINUS and FILTER [NOT] EXISTS whose right side matches background
    triples only: a background solution is there at every instant, so
    within every left solution's interval (docs/language.md, "MINUS")."""
    events = [ev("b1", "waterHeight", 7, 10), ev("b2", "waterHeight", 8, 12)]
    got = run("SELECT ?x WHERE { ?x :waterHeight ?v MINUS { ?x :locatedIn :pacific } }", events, background)
    assert [(short(b), s, e) for b, s, e in got] == [({"x": "b2"}, 12, 12)]
    got = run("SELECT ?x WHERE { ?x :waterHeight ?v FILTER EXISTS { ?x :locatedIn ?r } }", events, background)
    assert [(short(b), s, e) for b, s, e in got] == [({"x": "b1"}, 10, 10)]
    # the group's filter reads the solution's bindings; the region's class is entailed
    got = run("SELECT ?x WHERE { ?x :waterHeight ?v FILTER NOT EXISTS { ?x :locatedIn ?r . ?r a :Region } }",
              events, background)
    assert [(short(b), s, e) for b, s, e in got] == [({"x": "b2"}, 12, 12)]


def test_not_exists_inside_an_expression_looks_the_background_up(background):
    events = [ev("b1", "waterHeight", 7, 10), ev("b2", "waterHeight", 8, 12), ev("b9", "waterHeight", 9, 12)]
    got = run("SELECT ?x WHERE { ?x :waterHeight ?v FILTER(?v > 8 || NOT EXISTS { ?x :locatedIn ?r }) }",
              events, background)
    assert [(short(b), s, e) for b, s, e in got] == [({"x": "b2"}, 12, 12), ({"x": "b9"}, 12, 12)]


def test_a_right_side_of_events_and_background_is_judged_within_the_interval(background):
    """A right side joining an event with background triples is timed by
    the event: it removes a left solution only within its interval."""
    query = "SELECT ?x WHERE { ?x :waterHeight ?v MINUS { ?x :locatedIn ?r . ?r :alert ?a } }"
    events = [ev("pacific", "alert", "tsunami", 9), ev("b1", "waterHeight", 7, 10),
              ev("pacific", "alert", "tsunami", 12), ev("b1", "waterHeight", 7, 12), ev("b9", "waterHeight", 7, 12)]
    got = run(query, events, background)
    assert [(short(b), s, e) for b, s, e in got] == [({"x": "b1"}, 10, 10), ({"x": "b9"}, 12, 12)]


def test_negation_over_the_background_alone_is_joined_with_events(background):
    """MINUS and [NOT] EXISTS over background triples only are SPARQL's
    over the background graph; joined with an event, a solution takes
    its interval. A background left solution is tested against the
    background only: an event cannot withdraw it (as OPTIONAL's
    mandatory part, docs/language.md)."""
    tick = [ev("b1", "depth", 3, 10), ev("e", "waterHeight", 7, 10)]
    for group, xs in [("?x :locatedIn ?r MINUS { ?r a :Ocean }", ["b9"]),
                      ("?x :locatedIn ?r FILTER EXISTS { ?r a :Ocean }", ["b1"]),
                      ("?x :locatedIn ?r FILTER NOT EXISTS { ?r a ?c FILTER(?c = :Ocean) }", ["b9"]),
                      ("?x :locatedIn ?r MINUS { ?x :depth ?d }", ["b1", "b9"])]:
        got = run(f"SELECT ?x WHERE {{ ?e :waterHeight ?h . {{ {group} }} }}", tick, background)
        assert [(short(b), s, e) for b, s, e in got] == [({"x": x}, 10, 10) for x in xs], group
