"""RSP-QL's report policies, t0 and windows of infinite width on the Spark
engine (docs/language.md, "Report policies", "A window's start",
"Windows of infinite width"): what a group keeps between micro-batches
(the content last reported, the folded panes of an unbounded window)
gives the in-process engine's answers. (The golden cases run on a batch
DataFrame in tests/spark/test_equivalence.py.)"""

from __future__ import annotations

from collections import Counter

import pytest

from cep.rules import parse_rules
from tests.spark.support import micro_batch_answers
from tests.unit.test_windows import PREFIX, price

pytestmark = pytest.mark.spark

RULES = """
REGISTER QUERY changed AS
SELECT ?c (COUNT(*) AS ?n) FROM STREAM <http://e/s> [RANGE 30m STEP 10m REPORT ON CHANGE]
WHERE { ?c :price ?p } GROUP BY ?c

REGISTER QUERY since AS
SELECT ?c (COUNT(*) AS ?n) (MAX(?p) AS ?m)
FROM STREAM <http://e/s> [RANGE UNBOUNDED STEP 20m START "1970-01-01T00:05:00Z"]
WHERE { ?c :price ?p } GROUP BY ?c
"""


def test_policies_and_unbounded_windows_over_micro_batches(spark, tmp_path):
    queries = parse_rules(PREFIX + RULES, "policies.rq")
    stream = [price("acme", 1, 10), price("bolt", 2, 12), price("acme", 3, 31), price("acme", 4, 47),
              price("bolt", 5, 52), price("acme", 6, 95)]
    closing = [price("zeta", 0, 200)]  # moves the watermark past the windows
    horizon = 150 * 60_000  # what the watermark has passed; the closing event's own windows are not yet due
    chunks = [stream[:2], stream[2:4], stream[4:], closing]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, chunks, horizon)
    assert {a.query for a in expected} == {"changed", "since"}
    assert Counter(answers) == Counter(expected)
