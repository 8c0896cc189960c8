"""C-SPARQL's timestamp(?v) (sections 2.7 and 3.3; docs/language.md): the
end of the latest event that matched a triple pattern mentioning ?v, an
error when no event did. Hand-checked small streams, each run on the
in-process engine and asserted equal to the reference evaluator
(tests/unit/support.checked_answers); times are whole seconds."""

from __future__ import annotations

from cep import terms
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers, turtle_background

EX = "http://example.org/"
HEAD = f"PREFIX : <{EX}>\n"


def iri(name: str) -> str:
    return f"<{EX}{name}>"


def at(seconds: int) -> str:
    """The dateTime literal of a time in seconds."""
    return terms.datetime_literal(seconds * 1000)


def ev(s, p, o, start, end=None) -> Event:
    o = o if o.startswith('"') else iri(o)
    return Event(iri(s), iri(p), o, start * 1000, (start if end is None else end) * 1000)


def rows(text: str, events, background=None, prolog=None) -> list:
    """The answers' bindings with their intervals in seconds, sorted."""
    queries = parse_rules(HEAD + text, "ts.rq")
    answers = checked_answers(queries, events, background, prolog)
    return [(a.start // 1000, a.end // 1000, dict(a.bindings))
            for a in sorted(answers, key=lambda a: (a.start, a.end, a.bindings))]


def test_a_variable_in_two_triples_takes_the_later_event():
    # ?car is in both patterns: registered at 2, speed at 5 -> 5; ?cam and
    # ?s are in one each. The later event is the first pattern's in the
    # second stream: the latest, not the last pattern's.
    query = """SELECT ?car (timestamp(?car) AS ?tc) (timestamp(?cam) AS ?tm) (timestamp(?s) AS ?ts)
               WHERE { ?cam :registers ?car . ?car :speed ?s }"""
    speed = '"90"^^<http://www.w3.org/2001/XMLSchema#integer>'
    got = rows(query, [ev("cam1", "registers", "car1", 2), ev("car1", "speed", speed, 5)])
    assert got == [(2, 5, {"car": iri("car1"), "tc": at(5), "tm": at(2), "ts": at(5)})]
    got = rows(query, [ev("car1", "speed", speed, 1), ev("cam1", "registers", "car1", 4)])
    assert got == [(1, 4, {"car": iri("car1"), "tc": at(4), "tm": at(4), "ts": at(1)})]


def test_seq_and_the_c_sparql_example_filter():
    # C-SPARQL 2.7: the car seen by camera 2 before camera 1. ?a and ?b
    # are bound by one event each; the SEQ would order them anyway, the
    # FILTER picks the pairs in the other order from the join.
    seq = """SELECT ?a ?b (timestamp(?a) AS ?ta) (timestamp(?b) AS ?tb)
             WHERE { ?a :passes :gate1 } SEQ { ?b :passes :gate2 }"""
    events = [ev("car1", "passes", "gate1", 1), ev("car1", "passes", "gate2", 3),
              ev("car2", "passes", "gate2", 4), ev("car2", "passes", "gate1", 6)]
    assert rows(seq, events) == [
        (1, 3, {"a": iri("car1"), "b": iri("car1"), "ta": at(1), "tb": at(3)}),
        (1, 4, {"a": iri("car1"), "b": iri("car2"), "ta": at(1), "tb": at(4)}),
    ]
    join = """SELECT ?a WHERE { ?a :passes :gate1 . ?b :passes :gate2
              FILTER (timestamp(?a) > timestamp(?b) && ?a = ?b) }"""
    assert rows(join, events) == [(4, 6, {"a": iri("car2")})]


def test_a_variable_bound_by_background_knowledge_only_has_no_timestamp(tmp_path_factory):
    # ?street is bound by a background triple (timeless): timestamp(?street)
    # is an error, so the SELECT leaves ?t unbound and the FILTER drops all;
    # ?cam is also in the event's pattern, so it has the event's time
    background = turtle_background(tmp_path_factory, "cams.ttl",
                                   HEAD.replace("PREFIX", "@prefix") + ".\n:cam1 :monitors :oak .\n")
    events = [ev("cam1", "registers", "car1", 3)]
    select = """SELECT ?street (timestamp(?street) AS ?t) (timestamp(?cam) AS ?tc)
                (COALESCE(timestamp(?street), "none") AS ?c)
                WHERE { ?cam :monitors ?street . ?cam :registers ?car }"""
    assert rows(select, events, background) == [(3, 3, {"street": iri("oak"), "tc": at(3), "c": '"none"'})]
    filtered = """SELECT * WHERE { ?cam :monitors ?street . ?cam :registers ?car
                  FILTER (timestamp(?street) < "2100-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>) }"""
    assert rows(filtered, events, background) == []


def test_optional_part_that_did_not_match_adds_no_timestamp():
    # at 4 car1 exits with no payment before: ?amount unbound, ?car's
    # timestamp is the exit's; car2 paid at 6 and exited at 7: ?amount's
    # timestamp is 6, ?car's the later 7
    query = """SELECT ?car (timestamp(?car) AS ?tc) (timestamp(?amount) AS ?ta)
               WHERE { ?car :exits :gate OPTIONAL { ?car :paid ?amount } }"""
    fee = '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'
    events = [ev("car1", "exits", "gate", 4), ev("car2", "paid", fee, 6), ev("car2", "exits", "gate", 7)]
    assert rows(query, events) == [
        (4, 4, {"car": iri("car1"), "tc": at(4)}),
        (6, 7, {"car": iri("car2"), "tc": at(7), "ta": at(6)}),
    ]


def test_an_interval_event_has_its_end_as_timestamp():
    query = """SELECT (timestamp(?car) AS ?t) (getSTARTTIME() AS ?s) WHERE { ?car :parks :lot1 }"""
    assert rows(query, [ev("car1", "parks", "lot1", 3, 8)]) == [(3, 8, {"t": at(8), "s": at(3)})]


def test_a_filter_reads_the_triples_of_its_own_group():
    # in the left group ?car was bound at 2 only; over the whole pattern
    # it would be 10, and the filter would drop the answer
    query = """SELECT ?car WHERE { { ?car :enters :gate FILTER (timestamp(?car) < getENDTIME() + "PT1S"^^<http://www.w3.org/2001/XMLSchema#duration>) }
               SEQ { ?car :exits :gate } FILTER (timestamp(?car) = getENDTIME()) }"""
    assert rows(query, [ev("car1", "enters", "gate", 2), ev("car1", "exits", "gate", 10)]) == [
        (2, 10, {"car": iri("car1")})]


def test_solutions_bound_by_different_events_are_different_solutions():
    # the same triple at 1 and 2: {?x :p ?y . ?x :p ?z} has the solution
    # over [1, 2] twice, once with ?y from the event at 1 and once from
    # the one at 2, told apart by timestamp(?y) (without timestamp() they
    # are one solution)
    query = "SELECT ?x (timestamp(?y) AS ?t) WHERE { ?x :p ?y . ?x :p ?z }"
    got = rows(query, [ev("a", "p", "b", 1), ev("a", "p", "b", 2)])
    assert got == [(1, 1, {"x": iri("a"), "t": at(1)}), (1, 2, {"x": iri("a"), "t": at(1)}),
                   (1, 2, {"x": iri("a"), "t": at(2)}), (2, 2, {"x": iri("a"), "t": at(2)})]
    assert len(rows("SELECT ?x WHERE { ?x :p ?y . ?x :p ?z }", [ev("a", "p", "b", 1), ev("a", "p", "b", 2)])) == 3


def test_in_a_construct_subselect():
    query = """CONSTRUCT { ?car :seenAt ?t } WHERE { SELECT ?car (timestamp(?car) AS ?t)
               WHERE { ?car :passes ?gate } }"""
    queries = parse_rules(HEAD + query, "ts.rq")
    answers = checked_answers(queries, [ev("car1", "passes", "gate1", 5)])
    assert [a.triples for a in answers] == [((iri("car1"), iri("seenAt"), at(5)),)]


def test_a_user_predicate_named_timestamp_is_not_called(tmp_path):
    # SPARQL functions come first: timestamp is C-SPARQL's even when a
    # --prolog file defines timestamp/2
    pl = tmp_path / "ts.pl"
    pl.write_text("timestamp(_, 42).\n")
    got = rows("SELECT (timestamp(?car) AS ?t) WHERE { ?car :parks :lot1 }",
               [ev("car1", "parks", "lot1", 3)], prolog=[pl])
    assert got == [(3, 3, {"t": at(3)})]


def test_the_rewrite_lists_the_end_variables_in_each_calls_scope():
    from cep.algebra import ops
    from cep.algebra.timestamps import capture_ends

    (query,) = parse_rules(HEAD + """SELECT (timestamp(?car) AS ?t) WHERE {
        { ?car :enters ?g FILTER (timestamp(?car) > timestamp(?g)) } SEQ { ?car :exits ?h . ?h :near ?x } }""", "ts.rq")
    out = capture_ends(query)
    car, g, e0, e1 = ops.Var("car"), ops.Var("g"), ops.Var("_:end0"), ops.Var("_:end1")
    left, right = out.pattern.left, out.pattern.right
    assert left.pattern.triples[0].end == e0
    assert left.cond == ops.Call(">", ops.Call("timestamp", car, e0), ops.Call("timestamp", g, e0))
    # ?h :near ?x mentions no variable read by timestamp(): no end variable
    assert [t.end for t in right.triples] == [e1, None]
    assert out.projection[0].expr == ops.Call("timestamp", car, e0, e1)
    plain = ops.Query("q", "select", query.pattern.right)
    assert capture_ends(plain) is plain  # no timestamp(): unchanged


OAK, PALM = "<http://streams.org/oak>", "<http://streams.org/palm>"
STREAMS = f"""FROM STREAM {OAK} [RANGE 10s TUMBLING]
FROM STREAM {PALM} [RANGE 10s TUMBLING]
"""


def on(stream, s, p, o, second) -> Event:
    return Event(iri(s), iri(p), iri(o), second * 1000, second * 1000, stream=stream)


def test_timestamp_of_a_stream_reads_that_streams_events():
    """C-SPARQL's timestamp(?v, <stream>): the latest event of that stream
    that bound ?v; an event of no stream is of every stream.

    Hand-checked, window (0 s, 10 s]. car1: Palm at 1, Oak at 3: the
    solution (c1 = oak event, c2 = palm event) has oak 3 > palm 1, kept
    (and its mirror, c1 = palm, c2 = oak: DISTINCT makes them one). car2:
    Oak at 2, Palm at 4: 2 > 4 is false in every solution; the solutions
    that use one event twice lack the other stream's timestamp (an error:
    false). car3: Oak only. car4: an event of no stream at 6 and Palm at 7:
    oak 6 (the stream-less event) against palm 7, or 6 against 6: false.
    car5: Oak at 8, then an event of no stream at 9: (oak event, no-stream
    event) gives oak max(8, 9) = 9 and palm 9: false; (oak, oak) has no
    palm; so the no-stream event makes no car pass on its own."""
    events = [on(PALM, "p", "registers", "car1", 1), on(OAK, "o", "registers", "car1", 3),
              on(OAK, "o", "registers", "car2", 2), on(PALM, "p", "registers", "car2", 4),
              on(OAK, "o", "registers", "car3", 5),
              on("", "x", "registers", "car4", 6), on(PALM, "p", "registers", "car4", 7),
              on(OAK, "o", "registers", "car5", 8), on("", "x", "registers", "car5", 9)]
    got = rows(f"""SELECT DISTINCT ?car {STREAMS}
WHERE {{ ?c1 :registers ?car . ?c2 :registers ?car
         FILTER (timestamp(?car, {OAK}) > timestamp(?car, {PALM})) }}""", events)
    assert got == [(0, 10, {"car": iri("car1")})]
    # selected: the latest of each stream; with no stream, the latest of all
    got = rows(f"""SELECT ?car (timestamp(?car, {OAK}) AS ?oak) (timestamp(?car, {PALM}) AS ?palm)
                          (timestamp(?car) AS ?any) {STREAMS}
WHERE {{ ?c1 :registers ?car . ?c2 :registers ?car FILTER (?c1 != ?c2) }}""", events[:2] + events[5:7])
    both = {"oak": at(3), "palm": at(1), "any": at(3), "car": iri("car1")}
    mixed = {"oak": at(6), "palm": at(7), "any": at(7), "car": iri("car4")}
    assert got == [(0, 10, both), (0, 10, both), (0, 10, mixed), (0, 10, mixed)]



def grouped_passes(where: str, window: str = "", outer: str = "*") -> list:
    """(start, end, car, ?n, timestamp(?car) if selected) of a query that
    joins each car's passes with a subquery counting `where`'s solutions per
    car. car1 passes at 2, car2 at 2 and 5."""
    events = [ev("car1", "passes", "gate", 2), ev("car2", "passes", "gate", 2), ev("car2", "passes", "gate", 5)]
    got = rows(f"""SELECT {outer} {window} WHERE {{ ?car :passes ?g
               {{ SELECT ?car (COUNT(*) AS ?n) WHERE {{ {where} }} GROUP BY ?car }} }}""", events)
    return [(ts, te, b["car"][len(EX) + 1:-1], int(b["n"].split('"')[1]), b.get("t")) for ts, te, b in got]


def test_timestamp_inside_a_grouped_subquery_reads_its_own_patterns():
    """A grouped subquery's row is a group over [t, t], matched by no event:
    the ends its timestamp() calls read stay inside it (its row shows none,
    as the reference's), whether the call stands in an OPTIONAL's FILTER or
    a FILTER, with a window or without; an outer timestamp(?car) reads the
    outer pattern's event only. At 5 car2's solutions are x@5 with y@5, y@2
    or none (its timestamp is 5 with any partner); outer passes at 2 and 5
    meet the rows of 2 and 5."""
    optional = "?car :passes ?x OPTIONAL {{ ?car :passes ?y FILTER (timestamp(?car) {} " + at(3) + ") }}"
    assert grouped_passes(optional.format("<")) == [
        (2, 2, "car1", 1, None), (2, 2, "car2", 1, None), (2, 5, "car2", 1, None), (2, 5, "car2", 1, None),
        (5, 5, "car2", 1, None)]
    assert sorted(grouped_passes(optional.format(">"))) == [
        (2, 2, "car1", 1, None), (2, 2, "car2", 1, None), (2, 5, "car2", 1, None), (2, 5, "car2", 2, None),
        (5, 5, "car2", 2, None)]
    assert sorted(grouped_passes(f"?car :passes ?x FILTER (timestamp(?car) > {at(3)})")) == [
        (2, 2, "car1", 0, None), (2, 2, "car2", 0, None), (2, 5, "car2", 0, None), (2, 5, "car2", 1, None),
        (5, 5, "car2", 1, None)]
    assert sorted(grouped_passes(optional.format("<"), outer="?car ?n (timestamp(?car) AS ?t)")) == [
        (2, 2, "car1", 1, at(2)), (2, 2, "car2", 1, at(2)), (2, 5, "car2", 1, at(2)), (2, 5, "car2", 1, at(5)),
        (5, 5, "car2", 1, at(5))]
    # over a window's content (0 s, 10 s]: the rows of the instants 2 and 5 it holds
    assert grouped_passes(optional.format("<"), window="FROM STREAM <http://s.org/s> [RANGE 10s TUMBLING]") == [
        (0, 10, "car1", 1, None)] + [(0, 10, "car2", 1, None)] * 4


def test_a_bind_reads_the_timestamp_of_its_pattern():
    # BIND (timestamp(?car) AS ?t): the pattern's event binds ?car, at the
    # top level and inside a grouped subquery (grouped by it)
    got = rows("SELECT * WHERE { ?car :passes ?g BIND (timestamp(?car) AS ?t) }",
               [ev("car1", "passes", "gate", 2), ev("car1", "passes", "gate", 5)])
    assert got == [(2, 2, {"car": iri("car1"), "g": iri("gate"), "t": at(2)}),
                   (5, 5, {"car": iri("car1"), "g": iri("gate"), "t": at(5)})]
    assert sorted(grouped_passes("?car :passes ?x BIND (timestamp(?car) AS ?t) FILTER (?t > " + at(3) + ")")) == [
        (2, 2, "car1", 0, None), (2, 2, "car2", 0, None), (2, 5, "car2", 0, None), (2, 5, "car2", 1, None),
        (5, 5, "car2", 1, None)]


def test_an_event_of_no_stream_and_its_copy_in_the_named_stream_are_one_solution():
    """`:s1 :q 0` at 0 given with no stream (of every stream) and in stream
    <s>: one triple at one time, so one solution, with timestamp(?s, <s>)
    as without it (CEP_SEED=2395111961: the reference told the two apart
    by their stream, which no call there could read)."""
    events = [Event(iri("s1"), iri("q"), iri("o"), 0, 0),
              Event(iri("s1"), iri("q"), iri("o"), 0, 0, stream=iri("s"))]
    got = rows(f"SELECT ?s (timestamp(?s, <{EX}s>) AS ?t) FROM STREAM <{EX}s> WINDOW ELEMS 1 WHERE {{ ?s :q ?x }}",
               events)
    assert got == [(0, 0, {"s": iri("s1"), "t": at(0)})]
