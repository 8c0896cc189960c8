"""Drawn rule sets of every strategy load without a word from SWI-Prolog on
standard error (a warning such as "Test is always false: nonvar(X4)" is
a fault the user sees). In a process of its own, whose standard error is
read: pytest's capture would hide it."""

import os
import subprocess
import sys
from pathlib import Path

from tests.property.strategies import SEED, examples

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from hypothesis import HealthCheck, given, seed, settings
from cep.engine import Engine
from cep.errors import CepError
from cep.rules import parse_rules
import tests.property.strategies as S

DRAWN = {
    "queries": S.queries(), "unary": S.unary_queries(), "projected": S.projected_queries(),
    "construct": S.construct_queries(), "chained": S.chained_rule_sets(), "query sets": S.query_sets(),
    "expressions": S.expression_queries(), "paths": S.path_queries(), "updates": S.update_cases(windowed=True),
    "windows": S.windowed_queries(), "window content": S.windowed_queries(content=True),
    "group windows": S.group_windowed_queries(), "grouped subqueries": S.grouped_subquery_queries(content=True),
    "named windows": S.named_window_queries(), "modifiers": S.modified_queries(),
}


def rules(drawn):
    if isinstance(drawn, str):  # query text
        return parse_rules(drawn, "q.rq")
    if isinstance(drawn, tuple):  # (rules, background)
        return drawn[0]
    return drawn if isinstance(drawn, list) else [drawn]


for name, strategy in DRAWN.items():
    @seed(int(sys.argv[1]))
    @settings(max_examples=int(sys.argv[2]), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def load(drawn):
        try:
            queries = rules(drawn)
            print("--", name, [str(q) for q in queries], file=sys.stderr, flush=True)
            Engine(queries).close()
        except CepError:  # refused, with its reason: no load
            pass
    load()
"""


def test_drawn_rule_sets_load_with_nothing_on_standard_error():
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(SEED), str(examples(25))], cwd=REPO,
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stderr.splitlines()
    said = [i for i, line in enumerate(lines) if not line.startswith("-- ")]
    assert not said, f"CEP_SEED={SEED}\n" + "\n".join(lines[max(0, said[0] - 1):said[0] + 6])
