"""Streaming SPARQL's windows in graph patterns on the Spark engine
(docs/language.md, "A window per pattern"): a group's own count window and
the stream's time window, kept apart in a group's state across
micro-batches, give the in-process engine's answers. (Listing 1.1 as
printed is a golden case, which tests/spark/test_equivalence.py runs.)"""

from __future__ import annotations

from collections import Counter

import pytest

from cep.rules import parse_rules
from tests.spark.support import micro_batch_answers
from tests.unit.test_streaming_sparql import (COUNT_LEAD, COUNT_UNION, FEED_GROUPS, IDENTITY_STREAM, MIN,
                                             MINUS_IN_GROUP, MINUS_STREAM, PREFIX, SINCE_START, SINCE_STREAM,
                                             SUBQUERY_IN_UNION, TURBINES, UNION_FIRST, UNION_SLIDES, UNION_STREAM,
                                             UNION_UNBOUNDED, count, kab, table, value)

pytestmark = pytest.mark.spark


def test_group_windows_over_micro_batches(spark, tmp_path):
    queries = parse_rules(PREFIX + TURBINES, "turbines.rq")
    stream = [count("t1", "StrCnt", 3, 1), count("t2", "StrCnt", 7, 6), count("t1", "StopCnt", 1, 9),
              count("t1", "StrCnt", 4, 15), count("t2", "StopCnt", 5, 18)]
    closing = [count("z", "other", 0, 40)]  # moves the watermark past the windows
    chunks = [stream[:2], stream[2:4], stream[4:], closing]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 30 * MIN)
    # as tests/unit/test_streaming_sparql.py reasons it out
    assert table(expected, "x", "y", "z") == [(0, 10, "t1", "3", "1"), (0, 10, "t2", "7", None),
                                              (10, 20, "t1", "4", None)]
    assert Counter(answers) == Counter(expected)


def test_an_optional_inside_a_group_window_over_micro_batches(spark, tmp_path):
    # OPTIONAL inside a group with its own count window: its sides kept in
    # that window apart, in a group's state across micro-batches
    text = """SELECT ?x ?y ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
              WHERE { ?x :s ?y { ?x :a ?a OPTIONAL { ?x :b ?b } WINDOW ELEMS 2 } }"""
    queries = parse_rules(PREFIX + text, "inner.rq")
    stream = [count("k", "s", 1, 1), count("k", "b", 5, 2), count("z", "c", 0, 3), count("k", "a", 2, 4),
              count("j", "s", 3, 12), count("j", "a", 4, 13), count("j", "b", 6, 14)]
    closing = [count("z", "other", 0, 40)]  # moves the watermark past the windows
    chunks = [stream[:2], stream[2:5], stream[5:], closing]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 30 * MIN)
    # as tests/unit/test_streaming_sparql.py reasons it out
    assert table(expected, "x", "y", "a", "b") == [(0, 10, "k", "1", "2", None), (10, 20, "j", "3", "4", "6")]
    assert Counter(answers) == Counter(expected)


def test_minus_inside_a_group_window_over_micro_batches(spark, tmp_path):
    # MINUS inside a group with its own count window, evaluated over that
    # window's content: its operands' solutions kept per window in a group's
    # state across micro-batches, the cancellation in a later batch than the
    # solution it removes
    queries = parse_rules(PREFIX + MINUS_IN_GROUP, "minus.rq")
    closing = [count("z", "other", 0, 40)]  # moves the watermark past the windows
    chunks = [MINUS_STREAM[:4], MINUS_STREAM[4:6], MINUS_STREAM[6:], closing]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 30 * MIN)
    # as tests/unit/test_streaming_sparql.py reasons it out
    assert table(expected, "x", "y", "a") == [(0, 10, "j", "3", "4"), (10, 20, "j", "5", "4")]
    assert Counter(answers) == Counter(expected)


OPERATORS = """
REGISTER QUERY minus AS SELECT ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
WHERE { ?a :p ?b MINUS { ?a :q ?c WINDOW ELEMS 2 } }
REGISTER QUERY union AS SELECT ?a ?b ?c ?d FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
WHERE { ?a :p ?b { { ?a :q ?c WINDOW ELEMS 2 } UNION { ?a :r ?d WINDOW RANGE 20 MINUTE SLIDE 10 MINUTE } } }
REGISTER QUERY start AS SELECT ?a ?c (STR(getSTARTTIME()) AS ?t) FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
WHERE { ?a :p ?b { ?a :q ?c WINDOW ELEMS 2 } FILTER(getDURATION() > "PT1M"^^<http://www.w3.org/2001/XMLSchema#duration>) }
REGISTER QUERY optional AS SELECT ?a ?b ?d FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED
WHERE { ?a :p ?b { OPTIONAL { ?a :r ?d } WINDOW ELEMS 3 } }
"""


def test_operators_between_group_windows_over_micro_batches(spark, tmp_path):
    # UNION, MINUS, a FILTER and a projection that read the time, and an
    # OPTIONAL that starts a group, between groups with windows of their
    # own: each group's solutions kept in its window in a group's state
    # across micro-batches, combined at each evaluation
    queries = parse_rules(PREFIX + OPERATORS, "operators.rq")
    stream = [count("k", "p", 1, 5), count("k", "q", 2, 8), count("j", "p", 3, 12), count("j", "r", 5, 14),
              count("k", "p", 6, 16), count("k", "q", 7, 18)]
    closing = [count("z", "other", 0, 40)]  # moves the watermark past the windows
    chunks = [stream[:2], stream[2:5], stream[5:], closing]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 30 * MIN)
    # as tests/golden/rules/window_group_operators.rq reasons it out (in minutes here): the last two
    # events at 10 are k q 2, at 20 k q 7; the 20-minute window at 20 holds j r 5
    of = lambda q: [a for a in expected if a.query == q]
    assert table(of("minus"), "a", "b") == [(10, 20, "j", "3")]
    assert table(of("union"), "a", "b", "c", "d") == [(0, 10, "k", "1", "2", None), (10, 20, "j", "3", None, "5"),
                                                      (10, 20, "k", "6", "7", None)]
    # the span of the two groups' solutions: 5 to 8 (3 minutes), 16 to 18 (2)
    assert table(of("start"), "a", "c", "t") == [(0, 10, "k", "2", "1970-01-01T00:05:00Z"),
                                                 (10, 20, "k", "7", "1970-01-01T00:16:00Z")]
    # {} that OPTIONAL starts from holds no time; the group is evaluated on its own: at 20 it is j r 5
    assert table(of("optional"), "a", "b", "d") == [(0, 10, "k", "1", None), (10, 20, "j", "3", "5")]
    assert Counter(answers) == Counter(expected)


def test_on_change_with_a_later_empty_group_over_micro_batches(spark, tmp_path):
    # REPORT ON CHANGE read per window (an empty group after the first
    # group): the content each window held at the last report is kept in a
    # group's state across micro-batches. As
    # tests/golden/rules/window_group_empty_change.rq reasons it out (in
    # minutes, ten times as long): the windows' contents change at 10, 20,
    # 40 and 50 (and at 80, with no rows), not at 30, 60 or 70
    text = """SELECT ?k ?x ?v FROM STREAM <http://e/td> [RANGE 30m STEP 10m REPORT ON CHANGE]
              WHERE { ?k ?p ?x . { {} UNION { ?k :a ?v } WINDOW ELEMS 2 } }"""
    queries = parse_rules(PREFIX + text, "changes.rq")
    stream = [count("k", "b", 1, 5), count("k", "a", 2, 11), count("j", "a", 3, 12), count("j", "a", 4, 42)]
    closing = [count("z", "other", 0, 200)]  # moves the watermark past the windows
    chunks = [stream[:2], stream[2:3], stream[3:], closing]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 150 * MIN)
    assert sorted({a.end // MIN for a in expected}) == [10, 20, 40, 50]
    assert Counter(answers) == Counter(expected)


def test_a_union_of_the_first_group_over_micro_batches(spark, tmp_path):
    # the UNION's other group's window schedules evaluations too, in a group's state across
    # micro-batches: at 20 the first group's window holds nothing, and j's :b answers. (The query runs
    # in a group per key; the evaluations at 30, after the input's last event, are left out here: a
    # group per key that only a timeout reaches there does not report them in this setup, whatever
    # the query; tests/unit/test_streaming_sparql.py checks them in process.)
    queries = parse_rules(PREFIX + UNION_FIRST, "union.rq")
    chunks = [UNION_STREAM[:1], UNION_STREAM[1:2], UNION_STREAM[2:], [count("z", "other", 0, 60)]]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 30 * MIN)
    assert table(expected, "x", "a", "b") == [(0, 10, "k", "1", None), (10, 20, "j", None, "2")]
    assert Counter(answers) == Counter(expected)


def test_a_union_of_the_first_group_with_another_slide_over_micro_batches(spark, tmp_path):
    # the :b group's fifteen minutes schedule evaluations between the first group's ten, in a
    # group's state across micro-batches: at 15 (k 1 and j 2) and 20 (j 2 alone); as
    # tests/unit/test_streaming_sparql.py reasons it out (the evaluations after the input's last
    # event are left out, as in the test above)
    queries = parse_rules(PREFIX + UNION_SLIDES, "union.rq")
    chunks = [UNION_STREAM[:1], UNION_STREAM[1:2], UNION_STREAM[2:], [count("z", "other", 0, 60)]]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 25 * MIN)
    assert table(expected, "x", "a", "b") == [(0, 10, "k", "1", None), (0, 15, "j", None, "2"),
                                              (0, 15, "k", "1", None), (10, 20, "j", None, "2")]
    assert Counter(answers) == Counter(expected)


def test_a_union_of_the_first_group_with_an_optional_after_joins_identity_over_micro_batches(spark, tmp_path):
    # { OPTIONAL { P WINDOW ELEMS 2 } } has a solution at every evaluation of the first group's
    # window, {} where P has none: the empty rows come from the groups' shared schedule, in a
    # group's state across micro-batches; as tests/unit/test_streaming_sparql.py reasons it out (the
    # evaluations after the input's last event are left out, as in the tests above)
    text = ("SELECT ?x ?a ?b FROM STREAM <http://e/td> WINDOW RANGE 10 MINUTE FIXED "
            "WHERE { { ?x :a ?a } UNION { OPTIONAL { ?x :b ?b WINDOW ELEMS 2 } } }")
    queries = parse_rules(PREFIX + text, "identity.rq")
    chunks = [IDENTITY_STREAM[:1], IDENTITY_STREAM[1:2], IDENTITY_STREAM[2:], [count("z", "other", 0, 60)]]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 35 * MIN)
    assert sorted((a.start // MIN, a.end // MIN, *(value(a, n) or "" for n in "xab")) for a in expected) == [
        (0, 10, "", "", ""), (0, 10, "k", "1", ""), (10, 20, "j", "", "2"), (20, 30, "j", "", "2"),
        (20, 30, "k", "3", "")]
    assert Counter(answers) == Counter(expected)


def test_a_union_of_the_first_group_with_a_window_of_infinite_width_over_micro_batches(spark, tmp_path):
    # the :b group's unbounded window schedules evaluations at 20, 35, ... and holds j's :b at
    # each, in a group's state across micro-batches, until its last at 35 and the ten minutes'
    # at 40 (the input's last event is at 25, and the last chunk's event at 60 moves event time
    # past them); as tests/unit/test_streaming_sparql.py reasons it out
    queries = parse_rules(PREFIX + UNION_UNBOUNDED, "union.rq")
    chunks = [UNION_STREAM[:1], UNION_STREAM[1:2], UNION_STREAM[2:], [count("z", "other", 0, 60)]]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 45 * MIN)
    assert table(expected, "x", "a", "b") == [(0, 10, "k", "1", None), (10, 20, "j", None, "2"),
                                              (20, 30, "j", None, "2"), (20, 30, "k", "3", None),
                                              (20, 35, "j", None, "2"), (20, 35, "k", "3", None),
                                              (30, 40, "j", None, "2")]
    assert Counter(answers) == Counter(expected)


def test_a_union_of_a_count_window_first_group_over_micro_batches(spark, tmp_path):
    # the first group's count window is evaluated at every instant it counts, the other group's
    # tumbling 4 minutes at 4, 8, 12, ..., in one group's state across micro-batches; through the
    # gap before the last chunk's event at 60 the last 2 events still hold :a j, answered at each
    # of the time window's closes; as tests/unit/test_streaming_sparql.py reasons it out
    queries = parse_rules(PREFIX + COUNT_UNION, "union.rq")
    chunks = [COUNT_LEAD[:1], COUNT_LEAD[1:3], COUNT_LEAD[3:], [count("z", "other", 0, 60)]]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 20 * MIN)
    assert kab(expected) == [
        (1, 1, "k", "1", "-"), (1, 3, "k", "1", "-"), (1, 4, "k", "-", "2"), (1, 4, "k", "1", "-"),
        (3, 6, "j", "3", "-"), (3, 6, "k", "-", "2"), (3, 8, "j", "3", "-"), (6, 9, "j", "3", "-"),
        (6, 12, "j", "3", "-"), (6, 16, "j", "3", "-")]
    assert Counter(answers) == Counter(expected)


def test_a_group_window_of_infinite_width_over_micro_batches(spark, tmp_path):
    queries = parse_rules(PREFIX + SINCE_START, "since.rq")
    chunks = [SINCE_STREAM[:2], SINCE_STREAM[2:4], SINCE_STREAM[4:], [count("z", "other", 0, 60)]]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 50 * MIN)
    # as tests/unit/test_streaming_sparql.py reasons it out
    assert table(expected, "x", "a", "b") == [(10, 20, "k", "1", "6"), (20, 30, "j", "2", None),
                                              (30, 40, "k", "3", "6")]
    assert Counter(answers) == Counter(expected)


def test_a_construct_with_group_windows_fed_back_over_micro_batches(spark, tmp_path):
    # its triples fed back at each evaluation of its leading groups' windows, in the group that
    # derived them, before the reader's evaluation at the same time, across micro-batches
    queries = parse_rules(PREFIX + FEED_GROUPS, "feed.rq")
    chunks = [UNION_STREAM[:1], UNION_STREAM[1:2], UNION_STREAM[2:], [count("z", "other", 0, 60)]]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 30 * MIN)
    # as tests/unit/test_streaming_sparql.py reasons it out (those up to 20)
    assert table([a for a in expected if a.query == "counted"], "x", "n") == [
        (-10, 10, "k", "1"), (0, 20, "j", "1"), (0, 20, "k", "1")]
    assert Counter(answers) == Counter(expected)


def test_a_constructs_fed_triples_are_no_instant_of_its_subquery_over_micro_batches(spark, tmp_path):
    # the first group's subquery makes no row at the instants of its query's own triples fed back
    # (10 and 20), with a repeated event, the group's state across micro-batches
    reader = "REGISTER QUERY after AS SELECT ?x ?c ?s WHERE { ?x :seen ?c } SEQ { ?s :b ?o }"
    queries = parse_rules(PREFIX + SUBQUERY_IN_UNION + reader, "feed.rq")
    chunks = [[count("k", "a", 1, 5), count("k", "a", 1, 5)], [count("j", "b", 7, 25)], [count("z", "other", 0, 60)]]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, 30 * MIN)
    # as tests/unit/test_streaming_sparql.py reasons it out (those before 30)
    assert sorted((a.end // MIN, a.triples[0][2]) for a in expected if a.query == "seen") == [
        (10, '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'), (20, '"2"^^<http://www.w3.org/2001/XMLSchema#integer>')]
    assert table([a for a in expected if a.query == "after"], "x", "c", "s") == [
        (10, 25, "k", "2", "j"), (20, 25, "k", "2", "j")]
    assert Counter(answers) == Counter(expected)
