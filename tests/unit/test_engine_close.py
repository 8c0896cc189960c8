"""Engine.close: an engine's rules and state leave the process's Prolog.

Each engine loads its rules into a Prolog module of its own; a job that
makes an engine per micro-batch must be able to drop them, or the process
grows with every engine (about 20 kB for a one-pattern query, more with
its partial matches)."""

import pyarrow as pa
import pytest

from cep.engine import Engine
from cep.rules import parse_rules

EX = "http://example.org/"
# a SEQ whose goals wait in a band store (prolog/cep_fast.c), beside a
# windowed query (its evaluation schedule is kept per rule set in cep_window)
RULES = f"""PREFIX : <{EX}>
REGISTER QUERY drop AS
SELECT ?c ?p1 ?p2 WHERE {{ ?c :price ?p1 }} SEQ {{ ?c :price ?p2 }} FILTER (?p2 < ?p1 * 0.5 && getDURATION() < "PT1H"^^<http://www.w3.org/2001/XMLSchema#duration>)
REGISTER QUERY ticks AS
SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 1m STEP 1m] WHERE {{ ?c :price ?p }}
"""


def _events(prices, first=0):
    rows = [(f"<{EX}c{i % 3}>", f"<{EX}price>", f'"{p}"^^<http://www.w3.org/2001/XMLSchema#decimal>',
             (first + i) * 1000) for i, p in enumerate(prices)]
    return pa.table({"s": [r[0] for r in rows], "p": [r[1] for r in rows], "o": [r[2] for r in rows],
                     "start": [r[3] for r in rows], "end": [r[3] for r in rows]})


def _answers(engine, tables):
    rows = []
    for t in tables:
        rows += engine.push_table(t).to_list()
    rows += engine.flush_table(final=True).to_list()
    return sorted((a.query, a.start, a.end, a.bindings) for a in rows)


def _holds(engine, module, goal):
    return bool(list(engine.session.prolog.query(goal.replace("M", f"'{module}'"))))


def test_a_closed_engine_leaves_no_module_no_goals_and_no_facts_of_its_own():
    engine = Engine(parse_rules(RULES))
    engine.push_table(_events([10 + i % 7 for i in range(300)]))
    module = engine.module
    assert list(engine.session.prolog.query(f"cep_fast:c_band_count('{module}', N)"))[0]["N"] > 0
    # what cep_window keeps per rule set while the end of a stream is closed in steps
    assert _holds(engine, module, "assertz(cep_window:end_limit(M, 0, 60000))")
    engine.close()
    assert not _holds(engine, module, "current_module(M)")
    assert list(engine.session.prolog.query(f"cep_fast:c_band_count('{module}', N)"))[0]["N"] == 0
    assert not _holds(engine, module, "cep_window:end_limit(M, _, _)")
    assert module not in engine.session.loaded


def test_closing_one_engine_leaves_another_of_the_same_rules_as_it_was():
    rules = parse_rules(RULES)
    first, second = [_events([40, 15, 30, 12, 50, 20]), _events([9, 60, 25, 3], first=6)]
    expected = _answers(Engine(rules), [first, second])
    assert any(q == "drop" for q, *_ in expected)
    kept, closed = Engine(rules), Engine(rules)
    kept_rows = kept.push_table(first).to_list()
    closed.push_table(first)
    closed.close()
    kept_rows += kept.push_table(second).to_list() + kept.flush_table(final=True).to_list()
    assert sorted((a.query, a.start, a.end, a.bindings) for a in kept_rows) == expected


def test_a_closed_engine_says_so_and_a_with_block_closes_it():
    with Engine(parse_rules(RULES)) as engine:
        module = engine.module
    assert not _holds(engine, module, "current_module(M)")
    with pytest.raises(RuntimeError, match="closed"):
        engine.push_table(_events([1]))
    engine.close()  # twice: nothing more to do


def test_an_engine_made_again_after_close_answers_as_the_first():
    rules = parse_rules(RULES)
    tables = [_events([40, 15, 30, 12, 50, 20])]
    once = Engine(rules)
    expected = _answers(once, tables)
    once.close()
    for _ in range(3):
        with Engine(rules) as engine:
            assert _answers(engine, tables) == expected


def test_a_closed_engine_of_a_query_without_windows_refuses_a_push():
    """A push after close is an error whatever the rules: a query without
    windows read nothing of the closed engine's Prolog before the instant
    held back took the row, and a push answered nothing, silently."""
    engine = Engine(parse_rules(RULES.split("REGISTER QUERY ticks")[0]))
    engine.close()
    with pytest.raises(RuntimeError, match="closed"):
        engine.push_table(_events([1]))
