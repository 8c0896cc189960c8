"""Solution modifiers on the Spark engine (docs/language.md, "Solution
modifiers"): a modified query runs in one group, so the answers of an
instant are cut together even when its events come in several
micro-batches and would fall in several buckets by their key. (ASK, which
runs in one group too, is in the golden cases that tests/spark/
test_equivalence.py runs.)"""

from __future__ import annotations

from collections import Counter

import pytest

from cep.rules import parse_rules
from tests.spark.support import micro_batch_answers
from tests.unit.test_solution_modifiers import H, MIN, STREAM, reading

pytestmark = pytest.mark.spark

RULES = H + """REGISTER QUERY top2 AS
SELECT ?x ?v WHERE { ?x :p ?v } ORDER BY DESC(?v) LIMIT 2
"""


def _on_spark_and_in_process(spark, tmp_path, queries, stream):
    """The answers before minute 30 on Spark, with the first two events of
    `stream` in one micro-batch, the others in a second and one event that
    moves the watermark past them in a third (3 buckets); and the answers
    of the in-process engine over the same events."""
    closing = [reading("z", 0, 30)]
    return micro_batch_answers(spark, tmp_path, queries, [stream[:2], stream[2:], closing], 30 * MIN)


def test_an_instant_split_over_micro_batches_is_cut_as_a_whole(spark, tmp_path):
    queries = parse_rules(RULES, "modifiers.rq")
    # the instant at minute 1 comes in two files, each with answers of its own
    answers, expected = _on_spark_and_in_process(spark, tmp_path, queries, STREAM)
    assert [(a.end // MIN, a.binding("x")) for a in expected] == [
        (1, "<http://e/a2>"), (1, "<http://e/a3>"), (2, "<http://e/b1>"), (2, "<http://e/b0>")]
    assert Counter(answers) == Counter(expected)


GROUPED = H + """REGISTER QUERY overall AS
SELECT (COUNT(*) AS ?n) (MAX(?v) AS ?top) WHERE { ?x :p ?v }

REGISTER QUERY per_key AS
SELECT ?x (SUM(?v) AS ?s) WHERE { ?x :p ?v } GROUP BY ?x
"""


def test_grouping_without_a_window_groups_an_instant_split_over_micro_batches(spark, tmp_path):
    """A grouped query without a window groups the answers of one instant
    (docs/language.md, "Aggregates: GROUP BY and HAVING"): on Spark, once
    the watermark has passed the instant, whatever micro-batches and
    buckets its events came in."""
    queries = parse_rules(GROUPED, "grouped.rq")
    stream = STREAM + [reading("a0", 4, 1)]  # a second reading of a0 at minute 1
    answers, expected = _on_spark_and_in_process(spark, tmp_path, queries, stream)
    overall = sorted((a.end // MIN, a.binding("n"), a.binding("top")) for a in expected if a.query == "overall")
    assert [(m, n.split('"')[1], top.split('"')[1]) for m, n, top in overall] == [(1, "5", "10"), (2, "2", "2")]
    assert Counter(answers) == Counter(expected)


COMPUTED = H + """REGISTER QUERY nearest AS
SELECT ?x WHERE { ?x :p ?v } ORDER BY ABS(?v - 8) LIMIT 2

REGISTER QUERY listed AS
SELECT (GROUP_CONCAT(?v; SEPARATOR = ",") AS ?all) WHERE { ?x :p ?v }
"""


def test_order_by_an_expression_and_group_concat_on_spark(spark, tmp_path):
    """ORDER BY an expression sorts by a hidden field of the rules' answer
    lines, which no answer written by the sink holds; GROUP_CONCAT joins
    an instant's values in the order of their N-Triples text, whatever
    micro-batches they came in."""
    queries = parse_rules(COMPUTED, "computed.rq")
    answers, expected = _on_spark_and_in_process(spark, tmp_path, queries, STREAM)
    got = sorted((a.query, a.end // MIN, a.bindings) for a in answers)
    assert got == [
        ("listed", 1, (("all", '"10,3,5,7"'),)), ("listed", 2, (("all", '"1,2"'),)),
        ("nearest", 1, (("x", "<http://e/a2>"),)), ("nearest", 1, (("x", "<http://e/a3>"),)),
        ("nearest", 2, (("x", "<http://e/b0>"),)), ("nearest", 2, (("x", "<http://e/b1>"),))]
    assert Counter(answers) == Counter(expected)


SUBQUERIES = H + """REGISTER QUERY above_mean AS
SELECT ?x ?v ?mean WHERE { { ?x :p ?v } EQUALS { SELECT (AVG(?w) AS ?mean) WHERE { ?y :p ?w } } FILTER (?v > ?mean) }

REGISTER QUERY top2 AS
SELECT ?x WHERE { { SELECT ?x WHERE { ?x :p ?v } ORDER BY DESC(?v) LIMIT 2 } }
"""


def test_subqueries_with_their_own_aggregates_and_cut_on_spark(spark, tmp_path):
    """A subquery with its own aggregation or cut is evaluated over the
    solutions of an instant (docs/language.md, "Subqueries"): on Spark its
    query runs in one group, which sees the instant whole, whatever
    micro-batches and buckets its events came in."""
    queries = parse_rules(SUBQUERIES, "subqueries.rq")
    answers, expected = _on_spark_and_in_process(spark, tmp_path, queries, STREAM)
    assert sorted((a.query, a.end // MIN, a.binding("x")) for a in expected) == [
        ("above_mean", 1, "<http://e/a2>"), ("above_mean", 1, "<http://e/a3>"), ("above_mean", 2, "<http://e/b1>"),
        ("top2", 1, "<http://e/a2>"), ("top2", 1, "<http://e/a3>"),
        ("top2", 2, "<http://e/b0>"), ("top2", 2, "<http://e/b1>")]
    assert Counter(answers) == Counter(expected)
