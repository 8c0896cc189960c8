"""A query over static data (Streaming SPARQL's Listing 1.2) on the Spark
engine: its graph's solutions once, at the stream's first instant, in the
one group that sees every event, and its events' answers as they come,
as the in-process engine gives them (tests/unit/test_static_queries.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from cep.rules import load_rules
from tests.spark.support import batch_answers, in_process
from tests.unit.test_static_queries import GRAPH, LISTING_12, power

pytestmark = pytest.mark.spark


def test_listing_12_on_a_batch_dataframe(spark, tmp_path):
    (tmp_path / "graph.ttl").write_text(GRAPH)
    rq = tmp_path / "q.rq"
    rq.write_text(LISTING_12)
    queries = list(load_rules([rq]))
    events = [power("y3", 8, 2000), power("y2", 7, 1000), power("y4", 9, 3000)]
    (answers, others), = batch_answers(spark, [(queries, events)], buckets=3).values()
    assert others == []
    expected = in_process(queries, events)
    assert sum(1 for a in expected if a.start == a.end == 1000) == 3  # the graph's two, y2's
    assert Counter(answers) == Counter(expected)
