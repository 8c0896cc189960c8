"""Golden cases by stage: the same case name in every folder.

    rules/<case>.rq        EP-SPARQL rule file (comments say why the answers are what they are)
    streams/<case>.trig    the input stream (RSP-QL TriG: one timestamped named graph per event group)
    algebra/<case>.sexpr   per query `-- NAME` and its algebra text (cep.algebra.sexpr.query)
    matches/<case>.jsonl   the expected answers, HAND-CHECKED from the semantics (paper, section 4.2)
    background/<case>.ttl  optional: the case's background knowledge (as --ontology gives it)

What is checked, per case:
- the parser's algebra equals the algebra file (CEP_GOLDEN_UPDATE=1 rewrites the
  algebra files from the parser; the matches are never rewritten);
- the reference evaluator, on the algebra file and on the parsed rules, gives the matches
  (a case whose queries carry a consumption policy, which the reference does
  not model: its matches are among the reference's unrestricted answers);
- the engine gives the matches;
- timewise monotonicity of the reference on the case's stream;
- no orphan files: a case is in all four folders or in none (a background
  file belongs to a case).

Answers are compared as multisets of (query, bindings, start, end, triples),
CONSTRUCT triples modulo blank node labels. Queries are matched by position
in the rule file: the i-th query's answers are named with the i-th NAME of
the algebra file, whatever name the parser gives it.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import functools
import os
from pathlib import Path

import pytest

from cep import reference
from cep.algebra import ops, sexpr
from cep.events import events_of
from cep.io import read_trig
from cep.rules import parse_rules
from tests.golden.support import (
    algebra_text, answer_to_json, read_algebra, read_matches, read_stream,
)

GOLDEN = Path(__file__).parent
REPO = GOLDEN.parent.parent
FOLDERS = {"rules": ".rq", "streams": ".trig", "algebra": ".sexpr", "matches": ".jsonl"}
CASES = sorted(p.stem for p in (GOLDEN / "rules").glob("*.rq"))
UPDATE = os.environ.get("CEP_GOLDEN_UPDATE") == "1"


BACKGROUND = ("background", ".ttl")  # optional per case


def path(folder: str, case: str) -> Path:
    return GOLDEN / folder / (case + FOLDERS[folder])


@functools.cache
def background(case: str):
    """The case's background knowledge (a cep.background.Background), or None."""
    from cep.background.knowledge import load_background

    file = GOLDEN / BACKGROUND[0] / (case + BACKGROUND[1])
    return load_background([file]) if file.exists() else None


# ------------------------------------------------------------------ loading


def algebra_queries(case: str) -> list[ops.Query]:
    return [sexpr.read_query(name, text) for name, text in read_algebra(path("algebra", case))]


def with_policy(queries) -> bool:
    return any(q.option("policy", "unrestricted") != "unrestricted" for q in queries)


def unrestricted(queries) -> list[ops.Query]:
    """The queries without their @policy: what the reference evaluates."""
    return [dataclasses.replace(q, options=tuple(o for o in q.options if o[0] != "policy")) for q in queries]


def golden_names(case: str) -> list[str]:
    return [name for name, _ in read_algebra(path("algebra", case))]


def parse_case(case: str) -> list[ops.Query]:
    """The rules file through the project's parser."""
    rq = path("rules", case)
    return list(parse_rules(rq.read_text(), str(rq)))


def renamed(queries, names) -> list[ops.Query]:
    assert len(queries) == len(names), (
        f"the rules give {len(queries)} queries, the algebra file names {len(names)}")
    return [dataclasses.replace(q, name=n) for q, n in zip(queries, names)]


def run_engine(queries, events, background=None):
    from cep.engine import Engine

    engine = Engine(queries, background=background)
    ordered = sorted(events, key=lambda e: (e.end, e.start))
    return engine.push(ordered) + engine.flush()


def assert_answers(got, case: str, who: str):
    expected = read_matches(path("matches", case))
    want, have = reference.multiset(expected), reference.multiset(got)
    if want == have:
        return

    def lines(counter):
        out = []
        for (query, bindings, start, end, triples, boolean), n in sorted(counter.items(), key=str):
            from cep.events import Answer
            a = Answer(query, start, end, bindings=bindings, triples=triples, boolean=boolean)
            out += [json.dumps(answer_to_json(a), sort_keys=True)] * n
        return out

    diff = "\n".join(difflib.unified_diff(lines(want), lines(have), "matches", who, lineterm="", n=0))
    pytest.fail(f"{who} disagrees with matches/{case}.jsonl:\n{diff}")


# -------------------------------------------------------------------- tests


def test_no_orphan_files():
    present = {}
    problems = []
    for folder, ext in FOLDERS.items():
        present[folder] = set()
        for f in (GOLDEN / folder).iterdir():
            if f.name.startswith(".") or f.name == "README.md":
                continue
            if f.suffix != ext:
                problems.append(f"{folder}/{f.name}: not a {ext} file")
            else:
                present[folder].add(f.stem)
    cases = set().union(*present.values())
    for case in sorted(cases):
        missing = [f"{folder}/{case}{FOLDERS[folder]}" for folder in FOLDERS if case not in present[folder]]
        if missing:
            problems.append(f"case {case}: missing {', '.join(missing)}")
    folder, ext = BACKGROUND
    for f in (GOLDEN / folder).iterdir():
        if f.suffix != ext or f.stem not in cases:
            problems.append(f"{folder}/{f.name}: the background of no case")
    assert not problems, "\n".join(problems)
    assert cases, "no golden cases found"


@pytest.mark.parametrize("case", CASES)
def test_reference_on_algebra_gives_the_matches(case):
    events = read_stream(path("streams", case))
    queries = algebra_queries(case)
    if not with_policy(queries):
        assert_answers(reference.evaluate(queries, events, background(case)), case, "reference on algebra")
        return
    # A policy only chooses among the combinations the unrestricted
    # semantics makes (these cases have no optional operator, where an
    # optional part a policy left out would let the mandatory one stand alone),
    # of the stream as a set: a query with a policy reads each occurrence once
    # (docs/language.md, "Repeated events"); the others read it as it is
    assert not any(_uses(q.pattern, ops.OPTIONAL_OPS) for q in queries)
    occurrences = list({(e.s, e.p, e.o, e.start, e.end, e.stream): e for e in events}.values())
    everything = (reference.multiset(reference.evaluate(unrestricted(queries), events, background(case)))
                  | reference.multiset(reference.evaluate(unrestricted(queries), occurrences, background(case))))
    extra = reference.multiset(read_matches(path("matches", case))) - everything
    assert not extra, f"matches/{case}.jsonl has answers no combination gives: {sorted(extra)}"


@pytest.mark.parametrize("case", CASES)
def test_parser_gives_the_algebra(case):
    queries = parse_case(case)
    names = golden_names(case)
    names += [q.name for q in queries[len(names):]]
    text = algebra_text(list(zip(names, queries)))
    file = path("algebra", case)
    old = file.read_text()
    if UPDATE:
        file.write_text(text)
        return
    if old != text:
        diff = "\n".join(difflib.unified_diff(old.splitlines(), text.splitlines(),
                                              f"algebra/{case}.sexpr", "parser", lineterm=""))
        pytest.fail(f"the parser's algebra differs (CEP_GOLDEN_UPDATE=1 rewrites the file):\n{diff}")


@pytest.mark.parametrize("case", CASES)
def test_reference_on_parsed_rules_gives_the_matches(case):
    queries = renamed(parse_case(case), golden_names(case))
    if with_policy(queries):
        pytest.skip("the reference has no consumption policies (the parsed rules give the algebra file's)")
    events = read_stream(path("streams", case))
    assert_answers(reference.evaluate(queries, events, background(case)), case, "reference on parsed rules")


@pytest.mark.parametrize("case", CASES)
def test_engine_gives_the_matches(case):
    queries = renamed(parse_case(case), golden_names(case))
    events = read_stream(path("streams", case))
    assert_answers(run_engine(queries, events, background(case)), case, "engine")


@pytest.mark.parametrize("case", CASES)
def test_reference_is_timewise_monotone_on_the_stream(case):
    """Answers over the events that end before t are exactly the answers
    over the whole stream that end before t (so they are never withdrawn).
    By start time, the same inclusion holds when all events are points or
    no query has OPTIONAL or EQUALSOPTIONAL. A window's answers end when it
    is evaluated: over the events before t, as event time reaches t."""
    queries = unrestricted(algebra_queries(case))
    events = read_stream(path("streams", case))
    known = background(case)
    whole = reference.evaluate(queries, events, known)
    times = sorted({e.start for e in events} | {e.end for e in events})
    cuts = times + [times[-1] + 1]
    points = all(e.start == e.end for e in events)
    right_optional = tuple(cls for cls in ops.BINARY if cls.spec.optional == "right")  # OPTIONAL, EQUALSOPTIONAL
    left_joins = any(_uses(q.pattern, right_optional) for q in queries)
    for t in cuts:
        # event time has reached t: the windows before it are evaluated
        prefix = reference.evaluate(queries, [e for e in events if e.end < t], known, until=t)
        assert reference.multiset(prefix) == reference.multiset(a for a in whole if a.end < t), t
        if points or not left_joins:
            by_start = reference.multiset(reference.evaluate(queries, [e for e in events if e.start < t], known,
                                                             until=t))
            assert not (by_start - reference.multiset(whole)), t


def _uses(op, classes) -> bool:
    return isinstance(op, classes) or any(_uses(c, classes) for c in ops.children(op))


@pytest.mark.parametrize("case", CASES)
def test_project_trig_reader_reads_the_streams_alike(case):
    rejects = []
    theirs = events_of(read_trig(path("streams", case), rejects))
    assert rejects == []
    key = lambda e: (e.s, e.p, e.o, e.start, e.end)  # noqa: E731
    mine = read_stream(path("streams", case))
    assert sorted(map(key, theirs)) == sorted(map(key, mine))


PAPER = {f"paper_q{n}": REPO / "rules" / "paper" / f"q{n}.rq" for n in range(1, 7)}


@pytest.mark.parametrize("case", sorted(PAPER))
def test_paper_cases_use_the_shipped_rule_text(case):
    """The golden paper queries must be the text shipped in rules/paper/
    (comments aside)."""
    shipped = PAPER[case]

    def body(p: Path):
        return [line.rstrip() for line in p.read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]

    assert body(path("rules", case)) == body(shipped)


# ------------------------------------------------ the algebra text reader


def _round_trip_cases():
    from hypothesis import strategies as st

    from tests.property.strategies import construct_queries, projected_queries, queries, windowed_queries

    plain_construct = construct_queries().map(lambda q: dataclasses.replace(q, projection=None))
    return st.one_of(queries(), projected_queries(), plain_construct, windowed_queries())


def test_algebra_reader_inverts_sexpr_query():
    from hypothesis import given, settings

    @settings(max_examples=300, deadline=None)
    @given(_round_trip_cases())
    def round_trip(q):
        assert sexpr.read_query(q.name, sexpr.query(q)) == q

    round_trip()


def test_rule_sets_load_without_prolog_warnings():
    """Loading a compiled rule set says nothing on standard error: SWI-Prolog
    warns of clauses of one predicate that are not together (the leaves' copy
    rules, cleaf/7, beside each leaf rule) or of singleton variables, which
    a user would take for a fault. In a process of its own, as each rule set
    is loaded once per process."""
    import subprocess
    import sys

    script = ("import sys\n"
              "from cep.engine import Engine\n"
              "from tests.golden.test_golden import CASES, background, golden_names, parse_case, renamed\n"
              "for case in CASES:\n"
              "    print('--', case, file=sys.stderr, flush=True)\n"
              "    Engine(renamed(parse_case(case), golden_names(case)), background=background(case))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if not line.startswith("-- ")]
    assert not said, "\n".join(done.stderr.splitlines()[:40])
