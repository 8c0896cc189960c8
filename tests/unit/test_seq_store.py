"""The plain goal stores of SEQ (cep/compile/steps.py, _seq: an unrestricted
SEQ without a band): kept by the C library (prolog/cep_fast.c, c_seq_add/7)
where it is built, else as dynamic facts (prolog/cep_fast.pl). Both must
give the reference's answers, keep their goals across a state dump and
restore (the Spark engine's path, and a state written by one read by the
other), drop them once they are past the window, and leave nothing once
the engine is closed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cep.engine import Engine
from cep.events import Event
from cep.rules import parse_rules

ROOT = Path(__file__).resolve().parents[2]

EX, XSD = "http://example.org/", "http://www.w3.org/2001/XMLSchema#"

# The shapes that use the plain store: a windowed SEQ whose left side may
# leave the join variable unbound (the UNION's second branch: a goal that
# meets every key), an unwindowed chain of two SEQs (generation 0, kept
# for the stream), and a filter whose left part is hoisted into the goal
# with no band (!= has no order). Seeded events over four keys, some
# repeated at the same instant (one solution, stored once).
SCRIPT = r'''
import random, sys
from cep import reference
from cep.engine import Engine
from cep.events import Event
from cep.rules import parse_rules

EX, XSD = "http://example.org/", "http://www.w3.org/2001/XMLSchema#"
queries = parse_rules(f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
REGISTER QUERY any AS
SELECT ?k ?j ?x ?y WHERE {{ {{ ?k :a ?x }} UNION {{ ?j :c ?x }} }} SEQ {{ ?k :b ?y }}
FILTER (getDURATION() < "PT20S"^^xsd:duration)
REGISTER QUERY chain AS
SELECT ?k ?x ?y ?z WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} SEQ {{ ?k :c ?z }}
REGISTER QUERY hoisted AS
SELECT ?k ?x ?y WHERE {{ ?k :b ?x }} SEQ {{ ?k :a ?y }} FILTER (?y != ?x + 1 && getDURATION() < "PT30S"^^xsd:duration)
""", "q.rq")
rng = random.Random(5)
events = []
for i in range(140):
    t = i * 2_000 + rng.choice([0, 0, 1])
    e = Event(f"<{EX}k{rng.randrange(4)}>", f"<{EX}{rng.choice('abc')}>", f'"{rng.randrange(5)}"^^<{XSD}integer>', t, t)
    events.append(e)
    if rng.random() < 0.1:
        events.append(e)
events.sort(key=lambda e: e.end)
half = len(events) // 2
# argv: "whole", or "first STATE" / "second STATE", the halves in two
# processes, the state handed over in the file STATE
part, state = (sys.argv[1:] + ["whole", ""])[:2]
got = []
if part in ("whole", "first"):
    first = Engine(queries)
    assert "cep_seq_goal" in first.compiled.program(first.module)
    got = first.push(events[:half]) + first.flush()
    if part == "first":
        open(state, "wb").write(first.state())
        sys.exit(0)
second = Engine(queries)
second.restore(first.state() if part == "whole" else open(state, "rb").read())
got += second.push(events[half:]) + second.flush()
if part == "second":
    first = Engine(queries)
    got = first.push(events[:half]) + first.flush() + got
expected = reference.evaluate(queries, events)
assert reference.multiset(got) == reference.multiset(expected), "the engine and the reference differ"
for a in sorted((a.query, a.start, a.end, sorted(a.bindings)) for a in got):
    print(a)
'''


def run(foreign: bool, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "CEP_NO_FOREIGN"}
    if not foreign:
        env["CEP_NO_FOREIGN"] = "1"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_seq_joins_answer_alike_in_c_and_in_prolog():
    in_c, in_prolog = run(True), run(False)
    assert in_c == in_prolog
    for query in ("'any'", "'chain'", "'hoisted'"):
        assert in_c.count(query) > 5


@pytest.mark.parametrize("first_in_c", [True, False], ids=["c-then-prolog", "prolog-then-c"])
def test_a_state_written_with_or_without_the_c_library_is_read_by_the_other(tmp_path, first_in_c):
    """A group's state moves between Spark executors, one of which may
    lack the C library: the second half answers as in one process (the
    reference is checked inside the script)."""
    state = str(tmp_path / "state")
    run(first_in_c, "first", state)
    assert run(not first_in_c, "second", state) == run(True)


PAIRS = parse_rules(f"""PREFIX : <{EX}>
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT10S"^^<{XSD}duration>)""", "q.rq")


def _event(p, k, t):
    return Event(f"<{EX}k{k}>", f"<{EX}{p}>", f'"{t}"^^<{XSD}integer>', t, t)


def _goals(engine, module=None):
    """The plain stores' goals: the C library's, or the facts without it."""
    m = f"'{module or engine.module}'"
    return list(engine.session.prolog.query(
        f"cep_fast:cep_seq_goals({m}, Fs0), findall(F, (current_predicate({m}:'$seq_store'/1), "
        f"{m}:'$seq_store'(S), functor(F, S, 5), {m}:F), Fs1), append(Fs0, Fs1, Fs)"))[0]["Fs"]


def test_goals_past_the_window_are_dropped_and_a_closed_engine_keeps_none():
    engine = Engine(PAIRS)
    assert "cep_seq_goal" in engine.compiled.program(engine.module)
    engine.push([_event("a", k, 1_000 + k) for k in range(5)])
    engine.flush()
    assert len(_goals(engine)) == 5
    assert engine.advance(60_000) is False              # past the window: no partial match left
    assert _goals(engine) == []
    engine.push([_event("a", 1, 70_000)])
    engine.flush()
    assert len(_goals(engine)) == 1
    module = engine.module
    engine.close()
    assert _goals(engine, module) == []


def test_two_engines_of_the_same_seq_join_keep_their_own_goals():
    first, second = Engine(PAIRS), Engine(PAIRS)
    first.push([_event("a", 0, 1)])
    first.flush()
    assert second.push([_event("b", 0, 2)]) + second.flush() == []   # the goal is the first engine's
    assert len(first.push([_event("b", 0, 3)]) + first.flush()) == 1
