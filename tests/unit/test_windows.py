"""Windows, aggregates and report operators (docs/language.md, "Windows and
aggregates"), hand-checked; each case is also the reference evaluator's."""

import pytest

from cep import reference, terms
from cep.engine import Engine
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

MIN = 60_000
PREFIX = "PREFIX : <http://e/>\n"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
DEC = "<http://www.w3.org/2001/XMLSchema#decimal>"


def price(company, value, minute):
    return Event(f"<http://e/{company}>", "<http://e/price>", f'"{value}"^^{INT}', minute * MIN, minute * MIN)


def run(text, events):
    return checked_answers(parse_rules(PREFIX + text), events)


def table(answers, *names):
    """(window start minute, evaluation minute, values...) per answer, sorted."""
    def val(term):
        if term is None:
            return None
        if term.startswith("<"):
            return term[len("<http://e/"):-1]
        return terms.lexical_form(term) if hasattr(terms, "lexical_form") else term.split('"')[1]
    return sorted((a.start // MIN, a.end // MIN, *(val(a.binding(n)) for n in names)) for a in answers)


STREAM = [price("acme", 10, 10), price("acme", 20, 40), price("acme", 30, 70),
          price("acme", 31, 75), price("bolt", 5, 60)]


def test_sliding_window_aggregates_per_group():
    got = run("""SELECT ?c (COUNT(*) AS ?n) (SUM(?p) AS ?s) (AVG(?p) AS ?a) (MIN(?p) AS ?lo) (MAX(?p) AS ?hi)
                 FROM STREAM <http://e/ticks> [RANGE 1h STEP 30m]
                 WHERE { ?c :price ?p } GROUP BY ?c""", STREAM)
    # windows (c - 60, c] at c = 30, 60, 90, 120 minutes; at the end of the
    # stream the evaluations go on while a window holds a solution: the
    # last is (60, 120], which holds 70 and 75
    assert table(got, "c", "n", "s", "a", "lo", "hi") == [
        (-30, 30, "acme", "1", "10", "10.0", "10", "10"),
        (0, 60, "acme", "2", "30", "15.0", "10", "20"),
        (0, 60, "bolt", "1", "5", "5.0", "5", "5"),     # 60 is in (0, 60]
        (30, 90, "acme", "3", "81", "27.0", "20", "31"),
        (30, 90, "bolt", "1", "5", "5.0", "5", "5"),
        (60, 120, "acme", "2", "61", "30.5", "30", "31"),  # bolt's 60 is not in (60, 120]
    ]


def test_grouping_without_a_window_groups_the_answers_of_one_instant():
    stream = STREAM + [price("acme", 11, 10), price("bolt", 6, 10)]
    got = run("""SELECT ?c (COUNT(*) AS ?n) (SUM(?p) AS ?s) WHERE { ?c :price ?p }
                 GROUP BY ?c HAVING (COUNT(*) < 3)""", stream)
    # one evaluation per instant, over the solutions that end at it
    assert table(got, "c", "n", "s") == [
        (10, 10, "acme", "2", "21"), (10, 10, "bolt", "1", "6"), (40, 40, "acme", "1", "20"),
        (60, 60, "bolt", "1", "5"), (70, 70, "acme", "1", "30"), (75, 75, "acme", "1", "31")]


def test_grouping_without_a_window_groups_a_sequence_at_its_end():
    got = run("""SELECT (COUNT(*) AS ?n) (MIN(?p) AS ?lo) WHERE { { ?c :price ?p } SEQ { ?c :price ?q } }""",
              [price("acme", 1, 0), price("acme", 2, 1), price("acme", 3, 2)])
    # the sequences ending at minute 1 (1 then 2) and at minute 2 (1 then 3, 2 then 3)
    assert table(got, "n", "lo") == [(1, 1, "1", "1"), (2, 2, "2", "1")]


def test_count_distinct_star_counts_distinct_solutions():
    got = run("""SELECT (COUNT(*) AS ?n) (COUNT(DISTINCT *) AS ?d) FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING]
                 WHERE { ?c :price ?p }""", [price("acme", 10, 10), price("acme", 20, 20), price("acme", 10, 30)])
    # three solutions (two of them with the same bindings, at two instants);
    # (60, 120], the first window past the stream's last instant, is empty: its
    # one group (no GROUP BY) counts 0
    assert table(got, "n", "d") == [(0, 60, "3", "2"), (60, 120, "0", "0")]


def test_group_by_an_expression_groups_by_its_value():
    stream = [price("acme", 10, 10), price("bolt", 11, 10), price("cork", 20, 10), price("acme", 1, 20)]
    got = run("""SELECT ?tens (COUNT(*) AS ?n) WHERE { ?c :price ?p } GROUP BY (FLOOR(?p / 10) AS ?tens)""",
              stream)
    # FLOOR writes a whole decimal without a point (XSD 1.1, W3C floor01)
    assert table(got, "tens", "n") == [(10, 10, "1", "2"), (10, 10, "2", "1"), (20, 20, "0", "1")]
    # an expression without a name; an error is one more group, whose key is unbound
    got = run("""SELECT (SUM(?p) AS ?s) WHERE { ?c :price ?p } GROUP BY (?p < 15) (1 / (?p - 20))""", stream)
    assert table(got, "s") == [(10, 10, "10"), (10, 10, "11"), (10, 10, "20"), (20, 20, "1")]


def test_tumbling_window_holds_an_event_at_its_close_and_not_the_next():
    got = run("""SELECT ?c (COUNT(*) AS ?n) FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING]
                 WHERE { ?c :price ?p } GROUP BY ?c""", STREAM)
    assert table(got, "c", "n") == [
        (0, 60, "acme", "2"), (0, 60, "bolt", "1"),   # bolt at exactly 60: the window (0, 60]
        (60, 120, "acme", "2"),                       # and not (60, 120]
    ]


def test_sliding_and_tumbling_differ_on_the_same_stream():
    sliding = run("""SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/ticks> [RANGE 1h STEP 30m]
                     WHERE { ?c :price ?p }""", STREAM)
    tumbling = run("""SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING]
                      WHERE { ?c :price ?p }""", STREAM)
    # without GROUP BY, the first window past the last instant (75) is
    # evaluated too, empty: COUNT 0
    assert table(sliding, "n") == [(-30, 30, "1"), (0, 60, "3"), (30, 90, "4"), (60, 120, "2"), (90, 150, "0")]
    assert table(tumbling, "n") == [(0, 60, "3"), (60, 120, "2"), (120, 180, "0")]


def test_a_window_of_triples_holds_exactly_the_last_n():
    events = [price("a", 1, 1), price("b", 2, 2), price("c", 3, 2), price("d", 4, 3)]
    got = run("""SELECT (COUNT(*) AS ?n) (SUM(?p) AS ?s) FROM STREAM <http://e/ticks> [TRIPLES 2]
                 WHERE { ?c :price ?p }""", events)
    # at minute 2 the last two triples are both of minute 2; at minute 3 the
    # last two are d and, of minute 2, the one that came last: c (3 + 4)
    assert table(got, "n", "s") == [(1, 1, "1", "1"), (2, 2, "2", "5"), (2, 3, "2", "7")]
    # in the other order, b came last
    got = run("""SELECT (COUNT(*) AS ?n) (SUM(?p) AS ?s) FROM STREAM <http://e/ticks> [TRIPLES 2]
                 WHERE { ?c :price ?p }""", [events[0], events[2], events[1], events[3]])
    assert table(got, "n", "s")[-1] == (2, 3, "2", "6")


def test_a_window_of_triples_on_a_group_of_its_own_holds_exactly_the_last_n():
    # its part is evaluated over the triples the window holds (RSP-QL), as
    # a query with that one window is: a join inside it needs all its
    # triples among the last n, of the oldest instant those that came last
    def ev(s, p, o, second):
        return Event(f"<http://e/{s}>", f"<http://e/{p}>", f'"{o}"^^{INT}', second * 1000, second * 1000)
    events = [ev("k", "a", 0, 5), ev("j", "a", 0, 6), ev("k", "b", 1, 20), ev("j", "b", 3, 40),
              ev("j", "c", 4, 40), ev("k", "c", 2, 50)]
    text = """SELECT ?x ?z ?w FROM STREAM <http://e/s> [RANGE 1m TUMBLING]
FROM NAMED STREAM <http://e/u> [TRIPLES {n}]
WHERE {{ ?x :a ?y GRAPH <http://e/u> {{ ?x :b ?z . ?x :c ?w }} }}"""
    # at 1 minute, (0, 1m] holds both :a; the last 3 triples are both of
    # second 40 and k c 2 (50): j's b and c, not k's (its b is 20 s)
    assert table(run(text.format(n=3), events), "x", "z", "w") == [(0, 1, "j", "3", "4")]
    # the last 2: k c 2 and, of second 40, j c 4, which came after j b 3
    assert run(text.format(n=2), events) == []


def test_a_window_of_triples_on_a_group_of_its_own_holds_a_repeated_triple_once():
    # each event is given twice (two records): the time window's pattern
    # reads both copies of :a (a repeated event is two events), the window
    # of the last 2 triples holds k :b 1, repeated in its instant, once (a
    # triple, as a query with that window reads it): 2 x 1 solutions
    def ev(s, p, second):
        return Event(f"<http://e/{s}>", f"<http://e/{p}>", f'"1"^^{INT}', second * 1000, second * 1000)
    text = """SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/s> [RANGE 1m TUMBLING]
FROM NAMED STREAM <http://e/u> [TRIPLES 2]
WHERE { ?x :a ?y GRAPH <http://e/u> { ?x :b ?z } }"""
    got = run(text, [ev("k", "a", 5), ev("k", "a", 5), ev("k", "b", 10), ev("k", "b", 10)])
    assert table(got, "n")[0] == (0, 1, "2")


GROUPED_SUBQUERY = """SELECT ?x ?n FROM STREAM <http://e/s> [{window}] WHERE {{ ?x :p ?y
  {{ SELECT ?x (COUNT(*) AS ?n) WHERE {{ {inner} }} GROUP BY ?x }} }}"""


def test_a_grouped_subquery_over_a_windows_content_makes_its_rows_at_each_instant_it_holds():
    # OPTIONAL inside the subquery: its pattern is evaluated over the window's
    # content, then grouped per instant, as outside a window. In (0, 60]:
    # the :q 0 and :q 1 of minute 1 each join the two :p (minute 1, 4 and
    # minute 2, 4), the :q 3 of minute 2 too; a solution ends at the later
    # of its events, so instant 1 has 2 solutions and instant 2 has 4 (the
    # rows (a, 2) and (a, 4), each joined with the two :p outside); instant
    # 3 (the :s) has none: the empty group's row, ?x unbound and COUNT(*) 0
    # (W3C agg-empty-group), joined with the two :p. In (60, 120] the :q 7
    # of minute 71 joins the :p of minute 70: one row, (a, 1), joined with
    # that :p; instant 70 has no solution that ends then: (a, 0).
    events = [Event("<http://e/a>", f"<http://e/{p}>", f'"{i}"^^{INT}', t * MIN, t * MIN)
              for i, (p, t) in enumerate([("q", 1), ("q", 1), ("p", 1), ("q", 2), ("p", 2), ("s", 3),
                                          ("p", 70), ("q", 71)])]
    inner = "?x :q ?z OPTIONAL { ?x :p ?w }"
    got = run(GROUPED_SUBQUERY.format(window="RANGE 1h TUMBLING", inner=inner), events)
    assert table(got, "x", "n") == ([(0, 60, "a", "0")] * 2 + [(0, 60, "a", "2")] * 2 + [(0, 60, "a", "4")] * 2
                                    + [(60, 120, "a", "0"), (60, 120, "a", "1")])
    # without GROUP BY every instant the window holds has its row, COUNT(*)
    # 0 where none of the solutions ends: minute 3 (the :s) in (0, 60]; in
    # (60, 120] minute 70 has none and minute 71 has one
    got = run("""SELECT ?y ?n FROM STREAM <http://e/s> [RANGE 1h TUMBLING] WHERE { ?x :p ?y
                 { SELECT (COUNT(*) AS ?n) WHERE { ?x :q ?z OPTIONAL { ?x :p ?w } } } }""", events)
    assert table(got, "y", "n") == sorted(
        [(0, 60, y, n) for y in ("2", "4") for n in ("2", "4", "0")] + [(60, 120, "6", n) for n in ("0", "1")])


def test_a_subquery_over_a_windows_content_makes_rows_at_the_ends_of_the_events_it_holds():
    # (0, 2] holds :q 2 (minute 1), not :q 1 (minutes 0 to 2, which starts
    # before it): its instants are minute 1 alone, COUNT(*) 1 there; no row
    # at minute 2, where only an event outside the window ends
    events = [Event("<http://e/a>", "<http://e/q>", f'"1"^^{INT}', 0, 2 * MIN),
              Event("<http://e/a>", "<http://e/q>", f'"2"^^{INT}', MIN, MIN)]
    got = run("""SELECT ?n FROM STREAM <http://e/s> [RANGE 2m TUMBLING]
                 WHERE { SELECT (COUNT(*) AS ?n) WHERE { ?x :q ?v OPTIONAL { ?x :r ?w } } }""", events)
    assert table(got, "n") == [(0, 2, "1")]


def test_a_subquery_over_a_windows_content_counts_each_solution_once():
    # the path :p+ spans the window's :p triples, [1, 2]: joined with :p 0 of
    # minute 1 and with :p 0 of minute 2 it makes the same solution (same
    # values, same interval [1, 2]) twice, which is one solution (a set),
    # counted once at minute 2; minute 1 has none
    events = [Event("<http://e/a>", "<http://e/p>", f'"0"^^{INT}', t * MIN, t * MIN) for t in (1, 2)]
    got = run("""SELECT ?n FROM STREAM <http://e/s> [RANGE 2m TUMBLING]
                 WHERE { SELECT (COUNT(*) AS ?n) WHERE { ?s :p ?x . ?s :p+ ?o } }""", events)
    assert table(got, "n") == [(0, 2, "0"), (0, 2, "1")]


def test_a_subquery_made_per_instant_inside_a_time_window_gives_its_rows_values():
    # evaluated per instant, its rows over [t, t] are held by the window as any
    # solution: in (0, 60] a :q twice at minute 1 and once at 2, each row joined
    # with each of the two :p; (60, 120] holds a :p, and instant 70 has no :q:
    # the empty group's row (?x unbound, COUNT(*) 0), joined with that :p
    events = [Event("<http://e/a>", f"<http://e/{p}>", f'"{i}"^^{INT}', t * MIN, t * MIN)
              for i, (p, t) in enumerate([("q", 1), ("q", 1), ("p", 1), ("q", 2), ("p", 2), ("p", 70)])]
    got = run(GROUPED_SUBQUERY.format(window="RANGE 1h TUMBLING", inner="?x :q ?z"), events)
    assert table(got, "x", "n") == [(0, 60, "a", "1")] * 2 + [(0, 60, "a", "2")] * 2 + [(60, 120, "a", "0")]


def test_count_windows_of_different_sizes_in_one_rule_set_keep_what_each_needs():
    events = [price(c, i, i) for i, c in enumerate("abcabcab", start=1)]
    got = run("""REGISTER QUERY last1 AS SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/t> [TRIPLES 1]
                 WHERE { ?c :price ?p }
                 REGISTER QUERY last3 AS SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/t> [TRIPLES 3]
                 WHERE { ?c :price ?p }""", events)
    # one event a minute: the shorter window must not drop the counts the
    # longer one still needs
    assert [a.binding("n") for a in sorted(got, key=lambda a: a.end) if a.query == "last3"] == [
        f'"{n}"^^{INT}' for n in (1, 2, 3, 3, 3, 3, 3, 3)]
    assert len([a for a in got if a.query == "last1"]) == 8


def test_distinct_aggregates_and_having():
    events = [price("acme", 10, 1), price("acme", 10, 2), price("acme", 20, 3), price("bolt", 7, 4)]
    got = run("""SELECT ?c (COUNT(DISTINCT ?p) AS ?n) (SUM(DISTINCT ?p) AS ?s)
                 FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING]
                 WHERE { ?c :price ?p } GROUP BY ?c HAVING (COUNT(*) > 1)""", events)
    assert table(got, "c", "n", "s") == [(0, 60, "acme", "2", "30")]


def test_group_concat_joins_the_str_of_the_values_in_the_order_of_their_text():
    def ev(subject, o, minute):
        return Event(f"<http://e/{subject}>", "<http://e/price>", o, minute * MIN, minute * MIN)
    events = [ev("acme", f'"10"^^{INT}', 10), ev("acme", '"x"@en', 20), ev("acme", f'"10"^^{INT}', 40),
              ev("acme", f'"9"^^{INT}', 45), ev("acme", "<http://e/i>", 50)]
    got = run("""SELECT (GROUP_CONCAT(?p) AS ?all) (GROUP_CONCAT(DISTINCT ?p; SEPARATOR = ", ") AS ?set)
                 (SAMPLE(?p) AS ?one)
                 FROM STREAM <http://e/ticks> [RANGE 1h STEP 30m] WHERE { ?c :price ?p }""", events)
    # each window merges the aggregates of its panes (the solutions that
    # share their windows); the values in the order of their N-Triples text
    assert sorted((a.start // MIN, a.binding("all"), a.binding("set"), a.binding("one")) for a in got) == [
        (-30, '"10 x"', '"10, x"', f'"10"^^{INT}'),
        (0, '"10 10 9 x http://e/i"', '"10, 9, x, http://e/i"', f'"10"^^{INT}'),
        (30, '"10 9 http://e/i"', '"10, 9, http://e/i"', f'"10"^^{INT}'),
        (60, '""', '""', None),  # the first window past the stream, empty: "" and SAMPLE unbound
    ]


def test_group_concat_is_an_error_where_a_value_is():
    def ev(subject, o, minute):
        return Event(f"<http://e/{subject}>", "<http://e/price>", o, minute * MIN, minute * MIN)
    events = [ev("acme", '"a"', 1), ev("acme", "_:b", 2), ev("bolt", '"b"', 3), ev("bolt", f'"0"^^{INT}', 4),
              ev("cork", '"c"', 5)]
    got = run("""SELECT ?c (GROUP_CONCAT(?p) AS ?g) (GROUP_CONCAT(DISTINCT 1 / ?p) AS ?q) (COUNT(*) AS ?n)
                 FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING] WHERE { ?c :price ?p } GROUP BY ?c""", events)
    # a blank node has no STR; 1 / "a" and 1 / 0 are errors: the aggregate
    # is unbound, its row is still there
    assert table(got, "c", "g", "q", "n") == [
        (0, 60, "acme", None, None, "2"), (0, 60, "bolt", "0 b", None, "2"), (0, 60, "cork", "c", None, "1")]


def test_aggregate_of_non_numbers_is_unbound_and_count_skips_errors():
    events = [price("acme", 10, 1), Event("<http://e/acme>", "<http://e/price>", '"n/a"', 2 * MIN, 2 * MIN)]
    got = run("""SELECT ?c (SUM(?p) AS ?s) (COUNT(?p + 0) AS ?n) (MAX(?p) AS ?hi)
                 FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING]
                 WHERE { ?c :price ?p } GROUP BY ?c""", events)
    # SUM: one value is not a number, so the sum is an error; COUNT counts the
    # values without error; MAX of 10 and "n/a" does not compare: an error
    assert table(got, "c", "s", "n", "hi") == [(0, 60, "acme", None, "1", None)]


def test_csparql_aggregate_extends_each_solution():
    events = [price("acme", 10, 1), price("acme", 20, 2), price("bolt", 5, 3)]
    got = run("""SELECT DISTINCT ?c ?n ?total FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING]
                 WHERE { ?c :price ?p }
                 AGGREGATE { (?n, COUNT, {?c}) FILTER (?n > 1) }
                 AGGREGATE { (?total, SUM(?p), ?c) }""", events)
    assert table(got, "c", "n", "total") == [(0, 60, "acme", "2", "30")]


def test_istream_and_dstream_report_what_changes():
    events = [price("acme", 1, 10), price("bolt", 1, 40), price("bolt", 2, 70)]
    text = """SELECT {op} ?c FROM STREAM <http://e/ticks> [RANGE 1h STEP 30m] WHERE {{ ?c :price ?p }} GROUP BY ?c"""
    r = run(text.format(op="RSTREAM"), events)
    i = run(text.format(op="ISTREAM"), events)
    d = run(text.format(op="DSTREAM"), events)
    # windows: 30 {acme}, 60 {acme, bolt}, 90 {bolt}, 120 {bolt}, 150 {}
    assert table(r, "c") == [(-30, 30, "acme"), (0, 60, "acme"), (0, 60, "bolt"), (30, 90, "bolt"),
                             (60, 120, "bolt")]
    assert table(i, "c") == [(-30, 30, "acme"), (0, 60, "bolt")]
    assert table(d, "c") == [(30, 90, "acme"), (90, 150, "bolt")]


def test_computed_every_evaluates_the_last_closed_window():
    got = run("""REGISTER QUERY every COMPUTED EVERY 15m AS
                 SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/ticks> [RANGE 1h STEP 30m]
                 WHERE { ?c :price ?p }""", STREAM)
    # evaluated at 15, 30, ..., 150, from the first multiple of 15 at or
    # after the first instant (10) to the first whose window is past the last
    # (75): the windows closed at 0 and 150 are empty, COUNT 0; at 45 the
    # window is still the one closed at 30
    assert table(got, "n") == [(-60, 15, "0"), (-30, 30, "1"), (-30, 45, "1"), (0, 60, "3"), (0, 75, "3"),
                               (30, 90, "4"), (30, 105, "4"), (60, 120, "2"), (60, 135, "2"), (90, 150, "0")]


def test_a_window_closes_when_event_time_passes_it_without_an_event_of_its_key():
    engine = Engine(parse_rules(PREFIX + """SELECT ?c (COUNT(*) AS ?n)
        FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING] WHERE { ?c :price ?p } GROUP BY ?c"""))
    assert engine.push([price("acme", 1, 10), price("bolt", 1, 50)]) == []
    # an event of another key past the close: acme's window is answered now,
    # not at the end of the stream
    got = engine.push([price("bolt", 2, 61), price("bolt", 3, 62)])
    assert table(got, "c", "n") == [(0, 60, "acme", "1"), (0, 60, "bolt", "1")]


def test_window_state_survives_a_restore():
    rules = parse_rules(PREFIX + """SELECT (SUM(?p) AS ?s)
        FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING] WHERE { ?c :price ?p }""")
    first = Engine(rules)
    first.push([price("acme", 1, 10), price("acme", 2, 20)])
    first.flush_table(final=False)
    state = first.state()
    second = Engine(rules)
    second.restore(state)
    got = second.push([price("acme", 4, 30)]) + second.flush()
    assert table(got, "s") == [(0, 60, "7"), (60, 120, "0")]  # then the empty window past the stream


def test_windowed_construct_answers_triples_per_window():
    got = run("""CONSTRUCT { ?c :seen ?p } FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING]
                 WHERE { ?c :price ?p }""", [price("acme", 1, 10), price("acme", 1, 20)])
    # the two solutions give the same triple: the window's result is a set,
    # at the evaluation time (a CONSTRUCT's triples are a stream of instants)
    assert [(a.start // MIN, a.end // MIN, a.triples) for a in got] == [
        (60, 60, (("<http://e/acme>", "<http://e/seen>", f'"1"^^{INT}'),))]


@pytest.mark.parametrize("text, message", [
    ("SELECT ?c WHERE { ?c :p ?p } GROUP BY (?p + 1 AS ?c)",
     "x.rq:2:50: GROUP BY binds ?c, which the pattern already binds"),
    ("SELECT (COUNT(*) AS ?n) WHERE { ?c :p ?p } GROUP BY (getDURATION())",
     "x.rq:2:53: GROUP BY groups by the values of a solution's variables"),
    ("SELECT ?c ?n WHERE { ?c :p ?p } AGGREGATE { (?n, COUNT, {?c}) }",
     "x.rq:2:33: AGGREGATE needs a window over the stream"),
    ("SELECT ?c ?p (AVG(?p) AS ?a) FROM STREAM <http://s> [RANGE 1h STEP 5m] WHERE { ?c :p ?p } GROUP BY ?c",
     "x.rq:2:1: ?p is selected but neither grouped by nor aggregated"),
    ("SELECT ?c WHERE { ?c :p ?p FILTER(COUNT(?p) > 1) }",
     "x.rq:2:35: an aggregate stands only in the SELECT clause or HAVING of a query"),
    ("SELECT ISTREAM ?c WHERE { ?c :p ?p }",
     "x.rq:2:8: ISTREAM reports the evaluations of a query over a window"),
    ("SELECT ?c FROM STREAM <http://s> [RANGE 0m STEP 5m] WHERE { ?c :p ?p }",
     "x.rq:2:41: a time span must be positive, not 0m"),
    ("SELECT ?c FROM STREAM <http://s> [RANGE 10x STEP 5m] WHERE { ?c :p ?p }",
     "x.rq:2:41: unexpected '10' — expected a time span"),
    ("SELECT ?c FROM STREAM <http://s> [TRIPLES 0] WHERE { ?c :p ?p }",
     "x.rq:2:43: a count-based window holds at least one event"),
    ("REGISTER QUERY x COMPUTED EVERY 1m AS SELECT ?c WHERE { ?c :p ?p }",
     "x.rq:2:18: COMPUTED EVERY sets how often a query over a time-based window is evaluated"),
    ("SELECT ?c FROM STREAM <http://s> [RANGE 1h STEP 5m] FROM STREAM <http://t> [RANGE 2h STEP 5m] "
     "WHERE { ?c :p ?p }", "x.rq:2:53: the streams the patterns outside GRAPH read have one window"),
    ("SELECT ?c (SUM(?p) AS ?s) FROM STREAM <http://s> [RANGE 1h STEP 5m] WHERE { ?c :p ?p } "
     "GROUP BY ?c HAVING (?p > 1)", "x.rq:2:100: ?p is used outside an aggregate but not grouped by"),
    ("SELECT ?c (SUM(?p) AS ?s) FROM STREAM <http://s> [RANGE 1h STEP 5m] WHERE { ?c :p ?p } "  # the second condition
     "GROUP BY ?c HAVING (SUM(?p) > 1) (?p > 1)", "x.rq:2:100: ?p is used outside an aggregate but not grouped by"),
    ("SELECT ?c ?n FROM STREAM <http://s> [RANGE 1h STEP 5m] WHERE { ?c :p ?p } "
     "AGGREGATE { (?n, SUM, ?c) }", "x.rq:2:92: SUM in AGGREGATE takes the variable to aggregate"),
])
def test_window_and_aggregate_errors_name_their_place(text, message):
    with pytest.raises(QueryError) as err:
        parse_rules(PREFIX + text, "x.rq")
    assert str(err.value).startswith(message), str(err.value)


AVERAGES = """REGISTER STREAM averaged AS
CONSTRUCT { ?c :average ?a } FROM STREAM <http://e/t> [RANGE 10m TUMBLING]
WHERE { SELECT ?c (AVG(?p) AS ?a) WHERE { ?c :price ?p } GROUP BY ?c }
"""


def test_a_windowed_construct_feeds_its_triples_back_at_its_evaluation():
    """Averages per 10 minutes (a grouped CONSTRUCT over a window) are
    events at their evaluation time, read by a SEQ with a later price: acme's
    averages are 15 over (0, 10] (prices 10 at 5 and 20 at 10) and 40 over
    (10, 20] (40 at 12). A price above the previous window's average:
    40 at 12 (after the window closing at 10: 40 > 15), 30 at 25 (> 15,
    and not > 40)."""
    events = [price("acme", 10, 5), price("acme", 20, 10), price("acme", 40, 12), price("acme", 30, 25)]
    got = run(AVERAGES + """REGISTER QUERY above AS
        SELECT ?c ?a ?p WHERE { { ?c :average ?a } SEQ { ?c :price ?p } FILTER (?p > ?a) }""", events)
    assert table([a for a in got if a.query == "above"], "c", "a", "p") == [
        (10, 12, "acme", "15.0", "40"), (10, 25, "acme", "15.0", "30")]
    # the derived triples themselves: one per window with prices, at its evaluation time
    assert sorted((a.start // MIN, a.end // MIN) for a in got if a.query == "averaged") == [
        (10, 10), (20, 20), (30, 30)]


def test_a_windowed_construct_feeds_another_window():
    """A chain of windows: the highest 10-minute average of the last 30
    minutes, every 10 minutes. The averages are 15 at 10, 40 at 20, 30 at
    30 and 50 at 40 (each at its evaluation time); a window's start is
    open, so the window (10, 40] holds the last three only, and the window
    (30, 60] the last one."""
    events = [price("acme", v, m) for v, m in ((10, 5), (20, 10), (40, 12), (30, 25), (50, 31))]
    got = run(AVERAGES + """REGISTER QUERY highest AS
        SELECT ?c (MAX(?a) AS ?m) FROM STREAM <http://e/t> [RANGE 30m STEP 10m]
        WHERE { ?c :average ?a } GROUP BY ?c""", events)
    assert table([a for a in got if a.query == "highest"], "c", "m") == [
        (-20, 10, "acme", "15.0"), (-10, 20, "acme", "40.0"), (0, 30, "acme", "40.0"),
        (10, 40, "acme", "50.0"), (20, 50, "acme", "50.0"), (30, 60, "acme", "50.0")]


@pytest.mark.parametrize("reader", ["", "REGISTER QUERY after AS SELECT ?c ?p WHERE { ?c :seen ?n } SEQ { ?c :price ?p }"],
                         ids=["alone", "read"])
def test_a_constructs_fed_triples_are_no_instant_of_its_subquery(reader):
    """A subquery in a window makes its rows at each instant the window
    holds; the query's own triples fed back are no event of its window
    (docs/language.md, "Window results fed back"), so they make no
    instant there, and its answers are the same whether or not a query
    reads them. Over (c - 30, c], c every 10 minutes, two prices at 5 (a
    repeated event: two events) and one at 45:
    - 10, 20, 30: the window holds the instant 5 alone, COUNT(*) 2: acme
      seen 2 (its own triples fed at 10 and 20 made instants with
      COUNT(*) 0 there, acme seen 0 too: in the engine from the next
      evaluation on, in the reference at their own evaluation already)
    - 40: (10, 40] holds no price; 50, 60, 70: the instant 45, COUNT(*) 1
    after reads the triples of 10, 20 and 30 before the price at 45."""
    events = [price("acme", 10, 5), price("acme", 10, 5), price("acme", 30, 45)]
    got = run("""REGISTER STREAM seen AS
        CONSTRUCT { ?c :seen ?n } FROM STREAM <http://e/t> [RANGE 30m STEP 10m]
        WHERE { ?c :price ?p { SELECT (COUNT(*) AS ?n) WHERE { ?d :price ?q } } }
        """ + reader, events)
    assert sorted((a.end // MIN, a.triples[0][2]) for a in got if a.query == "seen") == [
        (10, f'"2"^^{INT}'), (20, f'"2"^^{INT}'), (30, f'"2"^^{INT}'), (50, f'"1"^^{INT}'), (60, f'"1"^^{INT}'),
        (70, f'"1"^^{INT}')]
    assert table([a for a in got if a.query == "after"], "c", "p") == (
        [(10, 45, "acme", "30"), (20, 45, "acme", "30"), (30, 45, "acme", "30")] if reader else [])


def test_a_window_reads_what_another_window_feeds_through_a_rule_whatever_their_order():
    """The window `highest` reads :relayed, which a plain rule derives from
    the averages another window feeds back; written first, it is still
    evaluated after the window it depends on, at each evaluation time."""
    events = [price("acme", v, m) for v, m in ((10, 5), (20, 10), (40, 12), (30, 25), (50, 31))]
    got = run("""REGISTER QUERY highest AS
        SELECT ?c (MAX(?a) AS ?m) FROM STREAM <http://e/t> [RANGE 30m STEP 10m]
        WHERE { ?c :relayed ?a } GROUP BY ?c
        CONSTRUCT { ?c :relayed ?a } WHERE { ?c :average ?a }
        """ + AVERAGES, events)
    assert table([a for a in got if a.query == "highest"], "c", "m") == [
        (-20, 10, "acme", "15.0"), (-10, 20, "acme", "40.0"), (0, 30, "acme", "40.0"),
        (10, 40, "acme", "50.0"), (20, 50, "acme", "50.0"), (30, 60, "acme", "50.0")]


@pytest.mark.parametrize("text, message", [
    ("""CONSTRUCT { ?c :seen ?p } FROM STREAM <http://e/t> [TRIPLES 3] WHERE { ?c :price ?p }
        SELECT ?c WHERE { ?c :seen ?p }""", "only time-based windows feed their results back"),
    ("""CONSTRUCT { ?c :seen [ :at ?p ] } FROM STREAM <http://e/t> [RANGE 1h TUMBLING] WHERE { ?c :price ?p }
        SELECT ?c WHERE { ?c :seen ?p }""", "its template may not hold blank nodes"),
    ("""CONSTRUCT { ?c :seen ?p } FROM STREAM <http://e/t> [RANGE 1h TUMBLING] WHERE { ?c :price ?p }
        SELECT ?c WHERE { { ?c :price ?p } OPTIONAL { ?c :seen ?q } }""", "in an optional part"),
    ("""CONSTRUCT { ?c :price ?p } FROM STREAM <http://e/t> [RANGE 1h TUMBLING] WHERE { ?c :price ?p }""",
     "is in the cycle"),
])
def test_a_windowed_construct_feeds_only_where_the_order_holds(text, message):
    with pytest.raises(QueryError, match=message):
        Engine(parse_rules(PREFIX + text, "x.rq"))


def test_spark_buckets_a_windowed_query_only_where_each_bucket_answers_alone():
    from cep.spark import routing
    rules = parse_rules(PREFIX + """
        SELECT ?c (COUNT(*) AS ?n) FROM STREAM <http://e/t> [RANGE 1h TUMBLING] WHERE { ?c :price ?p } GROUP BY ?c
        SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/t> [RANGE 1h TUMBLING] WHERE { ?c :price ?p }
        SELECT ?p (COUNT(*) AS ?n) FROM STREAM <http://e/t> [RANGE 1h TUMBLING] WHERE { ?c :price ?p } GROUP BY ?p
        SELECT ISTREAM ?p FROM STREAM <http://e/t> [RANGE 1h TUMBLING] WHERE { ?c :price ?p }
        SELECT ?c ?p FROM STREAM <http://e/t> [RANGE 1h TUMBLING] WHERE { ?c :price ?p }
        SELECT ?c (COUNT(*) AS ?n) FROM STREAM <http://e/t> [TRIPLES 5] WHERE { ?c :price ?p } GROUP BY ?c""")
    bucketed = [routing.QueryClass(0, (q,), (routing.partition_key(q),), routing._routes(q, routing.partition_key(q)))
                .bucketed for q in rules]
    # grouped by the key: yes; one group of all: no; grouped by another
    # variable: no; rows as sets without the key: no; a multiset of rows:
    # yes; a count window counts every event: one group, that gets them all
    assert bucketed == [True, False, False, False, True, False]
    assert routing.Route((), None) in routing._routes(rules[-1], "c")


def test_reference_and_engine_agree_on_grouped_queries_over_a_long_stream():
    import random
    rng = random.Random(7)
    events = sorted((price(rng.choice("abc"), rng.randint(1, 9), rng.randint(0, 600)) for _ in range(200)),
                    key=lambda e: e.end)
    queries = parse_rules(PREFIX + """
        SELECT ?c (AVG(?p) AS ?a) (COUNT(DISTINCT ?p) AS ?n) FROM STREAM <http://e/t> [RANGE 1h STEP 5m]
        WHERE { ?c :price ?p } GROUP BY ?c
        SELECT ISTREAM ?c ?p FROM STREAM <http://e/t> [RANGE 20m STEP 7m] WHERE { ?c :price ?p }
        SELECT DSTREAM (MAX(?p) AS ?hi) FROM STREAM <http://e/t> [TRIPLES 5] WHERE { ?c :price ?p }""")
    got = checked_answers(queries, events)
    assert len(got) > 100
    assert reference.multiset(got)  # the comparison above is what counts


def test_windows_close_on_a_watermark_without_any_event():
    rules = parse_rules(PREFIX + """SELECT ?c (COUNT(*) AS ?n)
        FROM STREAM <http://e/ticks> [RANGE 1h STEP 30m] WHERE { ?c :price ?p } GROUP BY ?c""")
    events = [price("acme", 1, 10), price("acme", 2, 50)]
    engine = Engine(rules)
    assert engine.push(events) == []
    got = engine.flush_table(final=False).to_list()  # the instant held back; the stream goes on
    assert table(got, "c", "n") == [(-30, 30, "acme", "1")]
    got += engine.close_windows(121 * MIN).to_list()  # event time passed 02:00
    assert table(got, "c", "n") == [(-30, 30, "acme", "1"), (0, 60, "acme", "2"), (30, 90, "acme", "1")]
    expected = reference.evaluate(rules, events, until=121 * MIN)
    assert reference.multiset(got) == reference.multiset(expected)


def test_cep_run_reports_each_window_of_the_stock_sample(tmp_path, capsys):
    import json
    from pathlib import Path

    from cep import cli
    rules = tmp_path / "avg.rq"
    rules.write_text(PREFIX.replace("http://e/", "http://example.org/") + """
        SELECT ?company (AVG(?price) AS ?average) (COUNT(*) AS ?n)
        FROM STREAM <http://example.org/ticker> [RANGE 10d STEP 5d]
        WHERE { ?company :hasStockPrice ?price } GROUP BY ?company""")
    ticks = Path(__file__).resolve().parents[2] / "examples/stock/ticks.trig"
    assert cli.main(["run", str(rules), "--events", str(ticks), "--engine", "local"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    first = [(a["bindings"]["company"]["value"][len("http://example.org/"):], a["bindings"]["n"]["value"])
             for a in lines if a["end"] == "2026-01-07T00:00:00Z"]
    # the window (Dec 28, Jan 7] holds ACME's 100 (Jan 5) and Globex's 50 (Jan 6)
    assert sorted(first) == [("ACME", "1"), ("Globex", "1")]
    assert {a["start"] for a in lines if a["end"] == "2026-01-07T00:00:00Z"} == {"2025-12-28T00:00:00Z"}


def test_timestamp_in_a_window_without_grouping_and_refused_with_aggregates():
    events = [price("acme", 1, 10), price("acme", 2, 20), price("bolt", 3, 70)]
    got = run("""SELECT ?c (timestamp(?p) AS ?t) FROM STREAM <http://e/ticks> [RANGE 1h TUMBLING]
                 WHERE { ?c :price ?p }""", events)
    assert sorted((a.end // MIN, a.binding("t")) for a in got) == [
        (60, terms.datetime_literal(10 * MIN)), (60, terms.datetime_literal(20 * MIN)),
        (120, terms.datetime_literal(70 * MIN))]
    for text in ["SELECT (MAX(timestamp(?p)) AS ?m) FROM STREAM <http://s> [RANGE 1h TUMBLING] "
                 "WHERE { ?c :price ?p }",
                 "SELECT ?c ?n FROM STREAM <http://s> [RANGE 1h TUMBLING] WHERE { ?c :price ?p } "
                 "AGGREGATE { (?n, COUNT, ?c) FILTER (timestamp(?p) > ?n) }"]:
        with pytest.raises(QueryError, match="timestamp\\(\\) reads the events of one solution"):
            parse_rules(PREFIX + text, "x.rq")
