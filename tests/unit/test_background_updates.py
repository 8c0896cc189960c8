"""DELETE/INSERT rules change the background graph while the stream runs
(docs/language.md, "Updating background knowledge"): hand-checked cases on
the in-process engine, each also checked against the reference."""

import pytest

from cep.background.knowledge import background_of
from cep.engine import Engine
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

EX = "http://example.org/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
PREFIX = f"PREFIX : <{EX}>\nPREFIX rdfs: <{RDFS}>\n"
ROADS = "REGISTER UPDATE closing AS DELETE { ?a :road ?b } WHERE { ?a :closed ?b }\n" \
        "REGISTER UPDATE opening AS INSERT { ?a :road ?b } WHERE { ?a :opened ?b }\n"


def iri(x):
    return f"<{RDF_TYPE}>" if x == "a" else f"<{RDFS}{x[5:]}>" if x.startswith("rdfs:") else f"<{EX}{x}>"


def ev(s, p, o, t):
    return Event(iri(s), iri(p), iri(o), t, t)


def run(rules: str, events, triples):
    background = background_of([tuple(iri(x) for x in t) for t in triples])
    got = checked_answers(parse_rules(PREFIX + rules, "<test>"), events, background)
    return [(a.query, a.start, {k: v.removeprefix(f"<{EX}").removesuffix(">") for k, v in a.bindings})
            for a in got]


def test_an_update_between_two_events_changes_the_second_detection_and_not_the_first():
    q = ROADS + "REGISTER QUERY next AS SELECT ?to WHERE { ?v :at ?p . ?p :road ?to }\n"
    got = run(q, [ev("van", "at", "a", 1), ev("a", "closed", "b", 2), ev("van", "at", "a", 3)],
              [("a", "road", "b"), ("a", "road", "c")])
    assert got == [("next", 1, {"to": "b"}), ("next", 1, {"to": "c"}), ("next", 3, {"to": "c"})]


def test_a_closed_road_reroutes_a_path_and_a_reopened_one_restores_it():
    q = ROADS + "REGISTER QUERY reach AS SELECT ?to WHERE { ?v :at ?p . ?p :road+ ?to }\n"
    events = [ev("a", "closed", "b", 1), ev("van", "at", "a", 2), ev("b", "opened", "d", 3),
              ev("a", "opened", "b", 4), ev("van", "at", "a", 5)]
    got = run(q, events, [("a", "road", "b"), ("b", "road", "c")])
    assert got == [("reach", 5, {"to": "b"}), ("reach", 5, {"to": "c"}), ("reach", 5, {"to": "d"})]


def test_the_pairs_an_instant_adds_to_a_path_stay_when_an_update_makes_them_background():
    # at 1 the road b -> c is an event (a path walks it with the background's
    # a -> b: a reaches c over [1, 1]) and an update that opens it for good;
    # at 2 the van at a reaches b and c by the background ([2, 2]), and c by
    # the pair of instant 1 too, which that later update does not take back
    q = ROADS + "REGISTER QUERY reach AS SELECT ?to WHERE { ?v :at ?p . ?p :road+ ?to }\n"
    events = [ev("b", "road", "c", 1), ev("b", "opened", "c", 1), ev("van", "at", "a", 2)]
    got = run(q, events, [("a", "road", "b")])
    assert sorted(got, key=lambda a: (a[1], a[2]["to"])) == [
        ("reach", 1, {"to": "c"}), ("reach", 2, {"to": "b"}), ("reach", 2, {"to": "c"})]


def test_an_update_is_seen_only_after_its_instant():
    # the closure at 2 and the question at 2 are simultaneous: the question sees the road
    q = ROADS + "REGISTER QUERY next AS SELECT ?to WHERE { ?v :at ?p . ?p :road ?to }\n"
    got = run(q, [ev("a", "closed", "b", 2), ev("van", "at", "a", 2), ev("van", "at", "a", 3)],
              [("a", "road", "b")])
    assert got == [("next", 2, {"to": "b"})]


def test_inserted_triples_bring_their_rdfs_entailments_and_deletions_take_them_away():
    rules = ("REGISTER UPDATE tag AS INSERT { ?x a :Buoy } WHERE { ?x :deployed ?y }\n"
             "REGISTER UPDATE untag AS DELETE { ?x a :Buoy } WHERE { ?x :retired ?y }\n"
             "REGISTER QUERY sensing AS SELECT ?x WHERE { ?x :reads ?v . ?x a :Sensor }\n")
    schema = [("Buoy", "rdfs:subClassOf", "Sensor"), ("hosts", "rdfs:domain", "Sensor")]
    events = [ev("b1", "reads", "v1", 1), ev("b1", "deployed", "sea", 2), ev("b1", "reads", "v2", 3),
              ev("b1", "retired", "sea", 4), ev("b1", "reads", "v3", 5)]
    got = run(rules, events, schema)
    assert got == [("sensing", 3, {"x": "b1"})]  # a Buoy, so a Sensor, between 2 and 4
    # a triple of the files' closure stays while another triple still entails it
    got = run(rules, events, schema + [("b1", "hosts", "p9")])
    assert got == [("sensing", 1, {"x": "b1"}), ("sensing", 3, {"x": "b1"}), ("sensing", 5, {"x": "b1"})]
    # deleting the only triple that entails it takes it away
    unhost = rules.replace("DELETE { ?x a :Buoy }", "DELETE { ?x :hosts :p9 }").replace(
        "INSERT { ?x a :Buoy } WHERE { ?x :deployed ?y }", "INSERT { ?x :near :p9 } WHERE { ?x :deployed ?y }")
    got = run(unhost, events, schema + [("b1", "hosts", "p9")])
    assert got == [("sensing", 1, {"x": "b1"}), ("sensing", 3, {"x": "b1"})]


def test_update_rules_answer_nothing_themselves_and_need_a_background():
    got = run(ROADS, [ev("a", "closed", "b", 1), ev("a", "opened", "b", 2)], [("a", "road", "b")])
    assert got == []
    with pytest.raises(QueryError, match=r"the update closing changes the background graph, and none is given"):
        Engine(parse_rules(PREFIX + ROADS, "<test>"))


@pytest.mark.parametrize("rules, message", [
    ("DELETE { ?a rdfs:subClassOf ?b } WHERE { ?a :p ?b }", "an update cannot change the schema"),
    ("INSERT { _:x :p ?b } WHERE { ?a :p ?b }", "a blank node cannot be in the INSERT template"),
    ("INSERT { [] :p ?b } WHERE { ?a :p ?b }", "a blank node cannot be in the INSERT template"),
    ("REGISTER QUERY x AS INSERT { ?a :p ?b } WHERE { ?a :p ?b }", "REGISTER UPDATE registers a DELETE/INSERT"),
    ("REGISTER UPDATE x AS SELECT * WHERE { ?a :p ?b }", "REGISTER UPDATE registers a DELETE/INSERT"),
    ("DELETE { } WHERE { ?a :p ?b }", "the update has no triple to delete or insert"),
])
def test_malformed_updates_are_reported_with_their_place(rules, message):
    with pytest.raises(QueryError, match=r"rules.rq:3:\d+: " + message):
        parse_rules(PREFIX + rules, "rules.rq")


def test_events_marked_updates_only_trigger_the_update_rules_alone():
    # the Spark engine gives such copies to the groups whose queries do not
    # read the event: the closure must apply there, and answer nothing
    import pyarrow as pa

    queries = parse_rules(PREFIX + ROADS + "REGISTER QUERY next AS SELECT ?to WHERE { ?v :at ?p . ?p :road ?to }\n"
                                           "REGISTER QUERY closures AS SELECT ?a WHERE { ?a :closed ?b }\n", "<test>")
    engine = Engine(queries, background=background_of([(iri("a"), iri("road"), iri("b")),
                                                       (iri("a"), iri("road"), iri("c"))]))
    events = [ev("van", "at", "a", 1), ev("a", "closed", "b", 2), ev("van", "at", "a", 3), ev("van", "at", "a", 4)]
    table = pa.table({"s": [e.s for e in events], "p": [e.p for e in events], "o": [e.o for e in events],
                      "start": [e.start for e in events], "end": [e.end for e in events],
                      "updates_only": [True, True, True, None]})
    got = engine.push_table(table).to_list() + engine.flush()
    assert [(a.query, a.start, dict(a.bindings)) for a in got] == [("next", 4, {"to": iri("c")})]


def test_an_update_stream_by_namespace_asserts_its_triples_into_the_background():
    # the docs' recipe: every event whose predicate is in bg: is also a background triple from then on
    rules = ("PREFIX bg: <http://example.org/bg/>\n"
             "REGISTER UPDATE feed AS INSERT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(STRSTARTS(STR(?p), STR(bg:))) }\n"
             "REGISTER QUERY near AS SELECT ?x WHERE { ?v :at ?p . ?p bg:near ?x } WITHIN \"PT0.001S\"\n")
    got = run(rules, [ev("van", "at", "a", 1), ev("a", "bg/near", "b", 2), ev("van", "at", "a", 3)], [])
    assert got == [("near", 3, {"x": "b"})]  # at 1 nothing was near a; the event at 2 is not within 0 s of 1


def test_a_window_reads_the_background_as_it_is_at_its_evaluation_time():
    # Hand-checked (RSP-QL evaluates the background at the evaluation time):
    # the van is at a at 2; the road a-b closes at 5. The tumbling window
    # (0, 10] is evaluated at 10, when the background has a-c and no a-b:
    # the van reaches c only (read at the event's time, 2, it would also
    # reach b). The road a-d opens at 12, after that evaluation: the window
    # (10, 20] holds no van, so nothing more.
    q = ROADS + ("REGISTER QUERY routes AS SELECT ?v ?to FROM STREAM <http://example.org/s> "
                 "[RANGE 10ms TUMBLING] WHERE { ?v :at ?p . ?p :road ?to }\n")
    got = run(q, [ev("van", "at", "a", 2), ev("a", "closed", "b", 5), ev("a", "opened", "d", 12)],
              [("a", "road", "b"), ("a", "road", "c")])
    assert got == [("routes", 0, {"v": "van", "to": "c"})]


def test_an_update_at_the_evaluation_time_is_read_and_one_after_it_is_not():
    # Hand-checked: windows [RANGE 10ms TUMBLING] evaluated at 10 and 20.
    # The van at a at 4 and at 14; a-b closes at 10 (the evaluation time:
    # the instant is complete, its update made, before the window closed at
    # 10 is evaluated) and reopens at 11 (after it). The window (0, 10]: c;
    # the window (10, 20]: b and c.
    q = ROADS + ("REGISTER QUERY routes AS SELECT ?to FROM STREAM <http://example.org/s> "
                 "[RANGE 10ms TUMBLING] WHERE { ?v :at ?p . ?p :road ?to }\n")
    got = run(q, [ev("van", "at", "a", 4), ev("a", "closed", "b", 10), ev("a", "opened", "b", 11),
                  ev("van", "at", "a", 14)],
              [("a", "road", "b"), ("a", "road", "c")])
    assert sorted(got, key=str) == sorted([("routes", 0, {"to": "c"}), ("routes", 10, {"to": "b"}),
                                           ("routes", 10, {"to": "c"})], key=str)
