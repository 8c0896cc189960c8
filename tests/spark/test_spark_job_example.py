"""examples/spark_job.py, the README's embedding example, runs and finds
what the in-process engine finds on the same sample."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from cep.engine import Engine
from cep.events import events_of
from cep.io import read_events
from cep.rules import load_rules

pytestmark = pytest.mark.spark
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "spark_job.py"


def test_spark_job_example_gives_the_in_process_answers(tmp_path):
    spec = importlib.util.spec_from_file_location("spark_job", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    rows = example.main(tmp_path)

    events, _ = read_events([EXAMPLE.parent / "stock" / "ticks.trig"])
    engine = Engine(load_rules([str(example.RULES)]))
    expected = sorted((a.query, tuple(sorted(dict(a.bindings).items()))) for a in engine.push(events_of(events)) + engine.flush())
    got = sorted((r["query"], tuple(sorted(r["bindings"].asDict().items()))) for r in rows)
    assert len(expected) == 2 and got == expected
