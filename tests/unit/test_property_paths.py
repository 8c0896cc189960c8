"""SPARQL 1.1 property paths (p+ p* p? ^p p/q p|q) over the background
graph, the graph of each instant, and their union, joined with events, on
the in-process engine, with hand-checked answers; the reference evaluator
(SPARQL's evaluation of paths) must give the same."""

import pytest

from cep.algebra import sexpr
from cep.background.knowledge import load_background
from cep.engine import Engine
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers, turtle_background

EX = "http://example.org/"
# a one-way ring a -> b -> c -> a, a spur c -> d, a tram line d ~ e, and e
# a dead end: roads are directed, the tram goes both ways (declared once)
ROADS = """\
@prefix : <http://example.org/> .
:a :road :b .
:b :road :c .
:c :road :a .
:c :road :d .
:d :tram :e .
:depot :serves :a .
"""
PREFIX = "PREFIX : <http://example.org/>\n"


@pytest.fixture(scope="module")
def background(tmp_path_factory):
    return turtle_background(tmp_path_factory, "roads.ttl", ROADS)


def ev(s, p, o, t):
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", f"<{EX}{o}>", t, t)


def run(query: str, events, background):
    got = checked_answers(parse_rules(PREFIX + query, "<test>"), events, background)
    return sorted((tuple(sorted((k, v.removeprefix(f"<{EX}").removesuffix(">")) for k, v in a.bindings)),
                   a.start, a.end) for a in got)


def test_one_or_more_steps_follow_cycles_and_end(background):
    got = run("SELECT ?to WHERE { ?v :at ?from . ?from :road+ ?to }", [ev("van", "at", "a", 5)], background)
    assert got == [((("to", "a"),), 5, 5), ((("to", "b"),), 5, 5), ((("to", "c"),), 5, 5),
                   ((("to", "d"),), 5, 5)]


def test_zero_or_more_steps_include_the_start(background):
    got = run("SELECT ?to WHERE { ?v :at ?from . ?from :road* ?to }", [ev("van", "at", "d", 5)], background)
    assert got == [((("to", "d"),), 5, 5)]  # d has no road out: only itself


def test_zero_or_one_step(background):
    got = run("SELECT ?to WHERE { ?v :at ?from . ?from :road? ?to }", [ev("van", "at", "c", 2)], background)
    assert [dict(b)["to"] for b, _, _ in got] == ["a", "c", "d"]


def test_inverse_path_and_alternatives_inside_a_closure(background):
    # from e, backwards along roads or trams: e <- d <- c <- b <- a <- c ...
    got = run("SELECT ?from WHERE { ?v :at ?to . ?from (:road|:tram)+ ?to }", [ev("van", "at", "e", 1)],
              background)
    assert [dict(b)["from"] for b, _, _ in got] == ["a", "b", "c", "d"]
    got = run("SELECT ?x WHERE { ?v :at ?p . ?p (^:road)+ ?x }", [ev("van", "at", "d", 1)], background)
    assert [dict(b)["x"] for b, _, _ in got] == ["a", "b", "c"]


def test_a_sequence_inside_a_closure(background):
    # two roads at a time: a -> c -> b -> a ... and c -> d has no second step
    got = run("SELECT ?x WHERE { ?v :at ?p . ?p (:road/:road)+ ?x }", [ev("van", "at", "a", 1)], background)
    assert [dict(b)["x"] for b, _, _ in got] == ["a", "b", "c", "d"]


def test_the_end_of_a_path_bound_by_the_event_side(background):
    # is there a route? both ends come from the event's bindings
    q = "SELECT ?v WHERE { ?v :from ?x . ?v :to ?y . ?x :road+ ?y }"
    got = run(q, [ev("v1", "from", "a", 1), ev("v1", "to", "d", 1), ev("v2", "from", "d", 2),
                  ev("v2", "to", "a", 2)], background)
    assert got == [((("v", "v1"),), 1, 1)]  # from d there is no road back


def test_a_constant_end_reaches_itself_by_length_zero_even_outside_the_graph(background):
    got = run("SELECT ?v WHERE { ?v :at :nowhere . :nowhere :road* :nowhere }",
              [ev("van", "at", "nowhere", 3)], background)
    assert got == [((("v", "van"),), 3, 3)]
    # a variable end ranges over the graph's nodes (SPARQL 18.5): :d is
    # the background's (timeless), :nowhere that of the instant's graph,
    # which holds the event that names it: the pair is the instant's
    got = run("SELECT ?v WHERE { ?v :at ?p . ?p :road* ?p }", [ev("van", "at", "nowhere", 3),
                                                               ev("car", "at", "d", 4)], background)
    assert got == [((("v", "car"),), 4, 4), ((("v", "van"),), 3, 3)]
    # ... and a node of no graph matches nothing: :nowhere is not in the
    # graph of instant 4, whose events the path reads (its IRIs' only)
    got = run("SELECT ?v WHERE { ?v :at ?p . ?p :road+ ?p }", [ev("van", "at", "nowhere", 3),
                                                               ev("car", "at", "a", 4)], background)
    assert got == [((("v", "car"),), 4, 4)]


def test_simple_paths_are_rewritten_and_match_events_too(background):
    # ^p, p/q and p|q are SPARQL's rewritings into triple patterns: an event can match them
    q = parse_rules(PREFIX + "SELECT * WHERE { ?x ^:at/:near|:by ?y }", "<t>")[0]
    text = sexpr.query(q)
    assert "(union" in text and "<http://example.org/at>" in text and "+" not in text
    got = run("SELECT ?x ?y WHERE { ?x ^:at ?y }", [ev("van", "at", "b", 4)], background)
    assert got == [((("x", "b"), ("y", "van")), 4, 4)]
    got = run("SELECT ?y WHERE { :van :at/:road ?y }", [ev("van", "at", "c", 4)], background)
    assert [dict(b)["y"] for b, _, _ in got] == ["a", "d"]  # the event, then the background road
    got = run("SELECT ?y WHERE { :van :at|:near ?y }", [ev("van", "near", "c", 4), ev("van", "at", "b", 6)],
              background)
    assert got == [((("y", "b"),), 6, 6), ((("y", "c"),), 4, 4)]


def test_rdf_type_in_a_path(background, tmp_path):
    path = tmp_path / "classes.ttl"
    path.write_text("@prefix : <http://example.org/> .\n"
                    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                    ":Van :kindOf :Vehicle . :Vehicle :kindOf :Thing .\n")
    bg = load_background([path])
    got = run("SELECT ?k WHERE { ?x a/:kindOf* ?k }", [Event(f"<{EX}v1>",
              "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{EX}Van>", 1, 1)], bg)
    assert [dict(b)["k"] for b, _, _ in got] == ["Thing", "Van", "Vehicle"]


def test_a_path_alone_fires_only_at_instants_whose_events_add_pairs(background):
    # the background's pairs are timeless: no answer; the :road event of
    # instant 2 adds d -> x, so every node that reaches d reaches x
    assert run("SELECT * WHERE { ?x :road+ ?y }", [ev("van", "at", "a", 1)], background) == []
    got = run("SELECT * WHERE { ?x :road+ ?y }", [ev("van", "at", "a", 1), ev("d", "road", "x", 2)], background)
    assert got == [((("x", n), ("y", "x")), 2, 2) for n in "abcd"]


def test_a_path_walks_the_graph_of_each_instant():
    # no background: the path reads the events of one instant, and its
    # solution spans them, from their least start to the instant
    events = [ev("a", "road", "b", 1), ev("b", "road", "c", 1), ev("c", "road", "d", 2),
              Event(f"<{EX}d>", f"<{EX}road>", f"<{EX}e>", 0, 2)]
    assert run("SELECT ?to WHERE { :a :road+ ?to }", events, None) == [
        ((("to", "b"),), 1, 1), ((("to", "c"),), 1, 1)]  # c -> d is at 2, without a -> b
    assert run("SELECT ?to WHERE { :c :road+ ?to }", events, None) == [
        ((("to", "d"),), 0, 2), ((("to", "e"),), 0, 2)]
    # a constant end reaches itself at each instant
    assert run("SELECT ?to WHERE { :z :road* ?to }", events, None) == [
        ((("to", "z"),), 0, 2), ((("to", "z"),), 1, 1)]


def test_a_path_over_every_node_reads_every_event_of_the_instant():
    # ?x :road* ?x between two variables ranges over every node of the
    # instant's graph (SPARQL 18.5), whatever the predicate that names it
    events = [ev("a", "road", "b", 1), ev("van", "at", "c", 1)]
    got = run("SELECT ?x WHERE { ?x :road* ?x }", events, None)
    assert [dict(b)["x"] for b, _, _ in got] == ["a", "b", "c", "van"]


def test_with_background_knowledge_a_path_walks_the_background_and_the_instant(background):
    # the ring of roads is background; the :road events of instant 7 (one
    # from 5 to 7) join it: c -> d -> x -> y. A pair the background has is
    # timeless (the van's own interval); one that needs the instant's
    # roads spans [the least start of the instant's roads, 7]; the road
    # y -> z of instant 9 is not walked at 7
    events = [Event(f"<{EX}d>", f"<{EX}road>", f"<{EX}x>", 5, 7), ev("x", "road", "y", 7),
              ev("van", "at", "c", 7), ev("y", "road", "z", 9)]
    got = run("SELECT ?to WHERE { ?v :at ?from . ?from :road+ ?to }", events, background)
    assert got == [((("to", "a"),), 7, 7), ((("to", "b"),), 7, 7), ((("to", "c"),), 7, 7), ((("to", "d"),), 7, 7),
                   ((("to", "x"),), 5, 7), ((("to", "y"),), 5, 7)]
    # from a bound end backwards, through the background to the instant's roads
    got = run("SELECT ?from WHERE { ?v :at ?to . ?from :road+ ?to }", [ev("van", "at", "y", 7)] + events[:2],
              background)
    assert got == [((("from", n),), 5, 7) for n in "abcdx"]


def test_the_instants_triples_are_walked_with_what_they_entail(tmp_path):
    # :lane is a subproperty of :road: a :lane event is a :road triple of the instant
    path = tmp_path / "lanes.ttl"
    path.write_text(ROADS + "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                    ":lane rdfs:subPropertyOf :road .\n")
    got = run("SELECT ?to WHERE { :c :road+ ?to }", [ev("d", "lane", "x", 3)], load_background([path]))
    assert got == [((("to", "x"),), 3, 3)]


def test_a_path_in_a_construct_template_is_an_error():
    with pytest.raises(QueryError, match=r"rules.rq:2:16: a property path cannot be in a CONSTRUCT template"):
        parse_rules(PREFIX + "CONSTRUCT { ?x :road+ ?y } WHERE { ?x :road ?y }", "rules.rq")


def test_in_a_window_a_path_walks_the_windows_content_as_one_graph(background):
    # RSP-QL: the window (60 s, 120 s] is one graph of a -> b (70 s),
    # b -> c (100 s) and d -> e (110 s); c -> d (50 s to 110 s) started
    # before it. The closure chains a -> b -> c across instants (engine
    # and reference alike, checked_answers); the window's interval is its
    # answers'. With the background's ring a -> b -> c -> a -> ... -> d,
    # what the background alone connects is timeless, no answer: the
    # window's x -> a adds x's pairs, its d -> e the pairs into e
    events = [Event(f"<{EX}{s}>", f"<{EX}road>", f"<{EX}{o}>", start, end)
              for s, o, start, end in [("x", "a", 30_000, 30_000), ("a", "b", 70_000, 70_000),
                                       ("b", "c", 100_000, 100_000), ("c", "d", 50_000, 110_000),
                                       ("d", "e", 110_000, 110_000)]]
    query = "SELECT ?x ?y FROM STREAM <http://example.org/s> [RANGE 60s TUMBLING] WHERE { ?x :road+ ?y }"
    assert [(b[0][1] + b[1][1], s, e) for b, s, e in run(query, events, None)] == [
        ("ab", 60_000, 120_000), ("ac", 60_000, 120_000), ("bc", 60_000, 120_000), ("de", 60_000, 120_000),
        ("xa", 0, 60_000)]
    got = run(query, events, background)
    assert sorted(b[0][1] + b[1][1] for b, s, e in got if s == 0) == ["xa", "xb", "xc", "xd"]
    assert sorted(b[0][1] + b[1][1] for b, s, e in got if s == 60_000) == ["ae", "be", "ce", "de"]


def test_in_a_group_with_a_window_of_its_own_a_path_walks_its_windows_content():
    # RSP-QL's eval over each named window's content, one graph: :short
    # (60 s, 120 s] holds a -> b (70 s), b -> c (100 s) and c -> d (110 s),
    # so its closure chains them across instants (a -> c, a -> d, b -> d
    # too); :long (0, 120] holds the three roads, joined on ?y. Engine and
    # reference alike (checked_answers); the first part is evaluated the same
    # way as a later one (the groups swapped)
    events = [ev("a", "road", "b", 70_000), ev("b", "road", "c", 100_000), ev("c", "road", "d", 110_000)]
    windows = ("SELECT ?x ?y ?z FROM NAMED WINDOW :short ON STREAM <http://example.org/s> [RANGE 60s TUMBLING] "
               "FROM NAMED WINDOW :long ON STREAM <http://example.org/s> [RANGE 120s TUMBLING] ")
    for where in ("WHERE { WINDOW :short { ?x :road+ ?y } WINDOW :long { ?y :road ?z } }",
                  "WHERE { WINDOW :long { ?y :road ?z } WINDOW :short { ?x :road+ ?y } }"):
        got = run(windows + where, events, None)
        assert [tuple(dict(b)[v] for v in "xyz") for b, _, _ in got] == [
            ("a", "b", "c"), ("a", "c", "d"), ("b", "c", "d")], where


def test_in_a_group_with_a_count_window_a_path_walks_the_last_events():
    # Streaming SPARQL's `WINDOW ELEMS 3` on a group: the last three events
    # of the stream, one graph. At 110 s they are b -> c (90 s), c -> d
    # (100 s) and the van's at b: b reaches c, and d across two instants.
    # At 120 s a -> b (70 s) has long left the window (c -> d, the van at
    # b, the van at a): a reaches nothing. Engine and reference alike
    # (checked_answers)
    events = [ev("a", "road", "b", 70_000), ev("b", "road", "c", 90_000), ev("c", "road", "d", 100_000),
              ev("van", "at", "b", 110_000), ev("van", "at", "a", 120_000)]
    query = ("SELECT ?from ?to FROM STREAM <http://example.org/s> WINDOW RANGE 1 S SLIDE 1 S "
             "WHERE { ?v :at ?from . { ?from :road+ ?to WINDOW ELEMS 3 } }")
    assert [(dict(b)["from"], dict(b)["to"], e) for b, _, e in run(query, events, None)] == [
        ("b", "c", 110_000), ("b", "d", 110_000)]


def test_a_sequence_path_in_the_first_group_joins_links_of_different_instants():
    # the first group's window :short (60 s, 120 s] holds k road m (70 s)
    # and m tram n (100 s): k road/tram n, though no instant holds both
    # links (the query is evaluated at 120 s all the same); :long (-60 s,
    # 120 s] holds n at cafe (10 s). Engine and reference alike (checked_answers)
    events = [ev("k", "road", "m", 70_000), ev("m", "tram", "n", 100_000), ev("n", "at", "cafe", 10_000)]
    query = ("SELECT ?x ?y ?c FROM NAMED WINDOW :short ON STREAM <http://example.org/s> [RANGE 60s TUMBLING] "
             "FROM NAMED WINDOW :long ON STREAM <http://example.org/s> [RANGE 180s STEP 60s] "
             "WHERE { WINDOW :short { ?x :road/:tram ?y } WINDOW :long { ?y :at ?c } }")
    assert run(query, events, None) == [((("c", "cafe"), ("x", "k"), ("y", "n")), 60_000, 120_000)]


def test_a_groups_count_window_drops_the_links_it_no_longer_holds():
    # WINDOW ELEMS 3 on the path's group: the road links kept for its walks
    # are those of its last three events, whatever the stream's length
    engine = Engine(parse_rules(PREFIX + "SELECT ?from ?to FROM STREAM <http://example.org/s> "
                                "WINDOW RANGE 1 S SLIDE 1 S "
                                "WHERE { ?v :at ?from . { ?from :road+ ?to WINDOW ELEMS 3 } }", "<test>"))
    for chunk in range(3):
        engine.push([ev(f"n{i}", "road", f"n{i + 1}", i * 1000) for i in range(chunk * 100, chunk * 100 + 100)])
        engine.flush_table(final=False)
        assert engine.state().count(b"$wsol") <= 10
