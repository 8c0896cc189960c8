"""The Spark engine gives the in-process engine's answers: the same
multiset (CONSTRUCT's blank nodes compared by shape) on every golden case
and on seeded random rule sets and streams, on a batch DataFrame and on a
stream, whether the stream comes in one micro-batch or many, and whatever
the arrival order within the lateness.

The in-process engine is the oracle here: tests/golden and
tests/property check it against the hand-checked matches and against the
reference evaluator of the paper's semantics.

Random cases come from the strategies of tests/property, drawn by
hypothesis from the seed the property tests print (CEP_SEED replays it;
CEP_EXAMPLES_SCALE draws more). A Spark job costs seconds, so the cases of a
test are drawn first and evaluated together (one Spark job for all the
batch cases, one streaming query per run of a stream case, six running at
once); there is no shrinking, and a failure shows each failing case whole.

Two tests keep bugs these tests found from coming back: DISTINCT answers
found in several buckets came out once per bucket, and the workers' engine
cache confused rule sets that differ only in names.
"""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from cep.events import Event
from tests.golden.support import read_matches, read_stream
from tests.golden.test_golden import CASES, background, golden_names, parse_case, path, renamed
from tests.property.strategies import (
    SEED, closure_is_finite, construct_queries, examples, expression_queries, projected_queries, query_sets, seeded,
    seq_filter_queries, streams, typed_streams,
)
from tests.spark.support import (
    batch_answers, describe, difference, event_rows, in_process, multiset, process_all, split_rows,
    start_stream, write_files,
)

pytestmark = pytest.mark.spark

REPLAY = f"replay: CEP_SEED={SEED}"


def draw_cases(strategy, n: int, keep=None) -> list:
    """n examples of `strategy`, drawn by hypothesis from the property
    tests' seed (no test runs on them here: they are evaluated together
    afterwards). `keep`: a test on an example; the others are redrawn."""
    cases = []

    @seeded
    @settings(max_examples=examples(n), phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(case):
        assume(keep is None or keep(case))
        cases.append(case)

    collect()
    return cases


# ------------------------------------------------------------- strategies


def _named(queries) -> list:
    """Distinct names (q0, q1, ...) for the queries of one rule set."""
    return [dataclasses.replace(q, name=f"q{i}") for i, q in enumerate(queries)]


@st.composite
def rule_sets(draw):
    """A rule set for one engine: queries around a shared pattern
    (query_sets), and sometimes projected and CONSTRUCT queries."""
    queries = list(draw(query_sets()))
    queries += draw(st.lists(st.one_of(projected_queries(), construct_queries()), max_size=2))
    queries = _named(queries)
    assume(closure_is_finite(queries))  # a pattern's variable predicate reads every rule's triples
    assume(_supported(queries))
    return queries


def _supported(queries) -> bool:
    """Whether the engine takes the rule set (NOTSEQ with rule chaining,
    for one, it refuses with a message)."""
    from cep.compile import compile_queries
    from cep.errors import QueryError

    try:
        compile_queries(queries)
    except QueryError:
        return False
    return True


@st.composite
def typed_rule_sets(draw):
    """Expressions over values of every datatype, and filters across SEQ."""
    return _named(draw(st.lists(st.one_of(expression_queries(), seq_filter_queries()), min_size=1, max_size=3)))


batch_cases = st.one_of(
    st.tuples(rule_sets(), streams(), st.sampled_from([1, 2, 3, 8])),
    st.tuples(typed_rule_sets(), typed_streams(), st.sampled_from([1, 3])),
)


@st.composite
def longer_streams(draw):
    """One to three streams() one after another (each 13 ms after the
    last's start): a watermark with a few ms of lateness passes part of the
    stream in every micro-batch."""
    events = []
    for i in range(draw(st.integers(1, 3))):
        events += [Event(e.s, e.p, e.o, e.start + 13 * i, e.end + 13 * i) for e in draw(streams())]
    return events


@dataclasses.dataclass
class StreamCase:
    queries: list
    events: list
    lateness: int  # ms
    files: int  # how many files the stream is split into, in the many-files run
    order: int  # seed of the arrival order and of the cuts between files
    buckets: int


stream_cases = st.builds(StreamCase, rule_sets(), longer_streams(), st.sampled_from([0, 2, 5]),
                         st.integers(3, 6), st.integers(0, 2**32 - 1), st.sampled_from([1, 3]))


def _answers_something(case) -> bool:
    """Whether the in-process engine answers anything on a case (a
    StreamCase, or (queries, events)): Spark time goes to cases where
    answers can be missed, not only made up."""
    queries, events = (case.queries, case.events) if isinstance(case, StreamCase) else case
    return bool(in_process(queries, events))


# ------------------------------------------------------------------- tests


def test_golden_cases_on_a_batch_dataframe(spark):
    """Every golden case, all in one Spark job: the Spark engine's answers
    are the in-process engine's, and the hand-checked matches."""
    cases = []
    for case in CASES:
        queries = list(renamed(parse_case(case), golden_names(case)))
        cases.append((queries, read_stream(path("streams", case))))
    backgrounds = [background(case) for case in CASES]
    got = batch_answers(spark, cases, buckets=3, backgrounds=backgrounds)
    failures = []
    for i, (name, (queries, events)) in enumerate(zip(CASES, cases)):
        answers, others = got[i]
        assert others == [], f"{name}: rows that are not answers: {others}"
        expected = multiset(in_process(queries, events, backgrounds[i]))
        assert expected == multiset(read_matches(path("matches", name))), f"{name}: the in-process engine"
        if problem := difference(expected, multiset(answers)):
            failures.append(f"golden case {name}:\n{problem}")
    assert sum(len(a) for a, _ in got.values()) > 50  # the cases answer something
    assert not failures, "\n\n".join(failures)


def test_random_rule_sets_on_batch_dataframes(spark):
    """Random rule sets (queries sharing sub-patterns, projections,
    CONSTRUCT, expressions over every datatype) over random streams (ties,
    interval events), partitioned in 1 to 8 buckets: the in-process
    engine's answers."""
    drawn = draw_cases(batch_cases, 16, keep=lambda case: _answers_something(case[:2]))
    got = batch_answers(spark, [(q, e) for q, e, _ in drawn], buckets=[b for _, _, b in drawn])
    failures = []
    for i, (queries, events, buckets) in enumerate(drawn):
        answers, others = got[i]
        problem = difference(multiset(in_process(queries, events)), multiset(answers))
        if others:
            problem += f"\nrows that are not answers: {others}"
        if problem:
            failures.append(f"case {i} ({buckets} buckets):\n{describe(queries, events)}\n{problem}")
    assert len(drawn) == examples(16)
    assert not failures, f"{REPLAY}\n\n" + "\n\n".join(failures)


# Closing files: copies of every triple of the data, far later in time, go
# to every group that holds data (routing depends on the triple alone).
# The first moves the watermark past the data; in the second's micro-batch
# every such group runs and processes all the data. Answers that end at or
# after CLOSING[0] involve closing events; Spark may or may not have
# processed the first closing file, never the second.
CLOSING = (1_000, 2_000)


def arrival(case: StreamCase, files: int) -> list[list[tuple]]:
    """The case's events as files of rows, in an arrival order shuffled
    within the lateness: an event arrives after no event that ends more
    than `lateness` ms after it, so none is late (Spark's watermark for a
    micro-batch is the latest end seen before it, minus the lateness).
    Within a file, rows are in random order. Then the closing files."""
    rng = random.Random(case.order)
    rows = sorted(event_rows(case.events),
                  key=lambda r: (r[4] + rng.randint(0, case.lateness), rng.random()))
    cuts = sorted(rng.sample(range(1, len(rows)), min(files - 1, len(rows) - 1)))
    chunks = [rows[a:b] for a, b in zip([0] + cuts, cuts + [len(rows)])]
    for chunk in chunks:
        rng.shuffle(chunk)
    triples = sorted({r[:3] for r in rows})
    return chunks + [[(s, p, o, t, t, None) for s, p, o in triples] for t in CLOSING]


def _watermark_ms(query) -> int:
    marks = [p["eventTime"].get("watermark") for p in query.recentProgress]
    return max((round(datetime.fromisoformat(m).timestamp() * 1000) for m in marks if m), default=0)


def run_streams(spark, tmp_path, drawn, at_once: int = 6) -> list:
    """Every case as one file and as case.files files, a streaming query
    each, `at_once` queries running together: [(case index, files, query,
    its output rows)]."""
    jobs = [(i, files) for i, case in enumerate(drawn) for files in (1, case.files)]
    runs = []
    for wave in range(0, len(jobs), at_once):
        started = []
        try:
            for i, files in jobs[wave:wave + at_once]:
                case, folder = drawn[i], tmp_path / f"case{i}-{files}"
                write_files(folder / "in", arrival(case, files))
                started.append((i, files, *start_stream(spark, folder, case.queries,
                                                        f"{case.lateness} milliseconds", case.buckets)))
            for _, _, query, _ in started:
                process_all(query)
        finally:
            for _, _, query, _ in started:
                query.stop()
        runs += [(i, files, query, spark.sql(f"select * from {table}").collect())
                 for i, files, query, table in started]
    return runs


def test_random_streams_in_one_or_many_micro_batches(spark, tmp_path):
    """Random rule sets over random streams read as Parquet files, one a
    micro-batch, with arrival order shuffled within the lateness (within
    and across files): the stream as one file and as 3 to 6 files gives
    the in-process engine's answers, and no event is late."""
    drawn = draw_cases(stream_cases, 3, keep=lambda case: len(case.events) >= 10 and _answers_something(case))
    failures = []
    for i, files, query, rows in run_streams(spark, tmp_path, drawn):
        case = drawn[i]
        answers, others = split_rows(rows)
        closing = [Event(s, p, o, t, t) for chunk in arrival(case, 1)[-len(CLOSING):] for s, p, o, t, *_ in chunk]
        beyond = multiset(answers) - multiset(in_process(case.queries, case.events + closing))
        watermark, batches = _watermark_ms(query), len(query.recentProgress)
        problems = [
            f"rows that are not answers: {others}" if others else "",
            # the harness itself: a micro-batch per file, and the closing
            # files moved the watermark past the data
            f"{batches} micro-batches" if batches < files + len(CLOSING) else "",
            f"the watermark stayed at {watermark} ms" if watermark <= max(e.end for e in case.events) else "",
            difference(multiset(in_process(case.queries, case.events)),
                       multiset(a for a in answers if a.end < CLOSING[0])),
            # answers with closing events in them: answers of the data and closing events
            f"not answers of the data and closing events: {sorted(beyond.elements())}" if beyond else "",
        ]
        if any(problems):
            failures.append(f"case {i} in {files} file(s), lateness {case.lateness} ms, {case.buckets} buckets, "
                            f"order {case.order}:\n{describe(case.queries, case.events)}\n"
                            + "\n".join(p for p in problems if p))
    assert len(drawn) == examples(3)
    assert not failures, f"{REPLAY}\n\n" + "\n\n".join(failures)


def test_distinct_answers_that_several_buckets_find(spark):
    """SELECT DISTINCT ?x over ?k :a ?x: the answer ?x = 1 at 5 ms comes
    from six keys, once; the keys fall in different buckets."""
    from cep.rules import parse_rules

    ex, integer = "http://example.org/", "http://www.w3.org/2001/XMLSchema#integer"
    queries = list(parse_rules(f"PREFIX : <{ex}>\nREGISTER QUERY d AS\n"
                                   "SELECT DISTINCT ?x WHERE { ?k :a ?x }\n", "distinct.rq"))
    events = [Event(f"<{ex}k{i}>", f"<{ex}a>", f'"1"^^<{integer}>', 5, 5) for i in range(6)]
    answers, others = batch_answers(spark, [(queries, events)], buckets=3)[0]
    assert others == []
    assert multiset(answers) == multiset(in_process(queries, events))


def test_rule_sets_that_differ_only_in_names_keep_their_names():
    """What a Python worker does for two jobs in a row (no Spark needed):
    `pairs` over ?k, then `seq` over ?s, the same pattern otherwise."""
    import pandas as pd
    import pyarrow as pa

    from cep.rules import parse_rules
    from cep.spark import plan, worker
    from tests.unit.worker_harness import outputs

    ex = "http://example.org/"

    def rules(name, var):
        return list(parse_rules(f"PREFIX : <{ex}>\nREGISTER QUERY {name} AS\n"
                                f"SELECT ?{var} ?x ?y WHERE {{ ?{var} :a ?x }} SEQ {{ ?{var} :b ?y }}\n", "r.rq"))

    events = pd.DataFrame({"s": [f"<{ex}k1>"] * 2, "p": [f"<{ex}a>", f"<{ex}b>"], "o": ['"1"', '"2"'],
                           "start": [1000, 2000], "end": [1000, 2000]})
    worker.detect_static(plan(rules("pairs", "k"), buckets=1), (0, 0), events)
    spec = plan(rules("seq", "s"), buckets=1)
    out = outputs(spec, pa.Table.from_pandas(worker.detect_static(spec, (0, 0), events),
                                             schema=worker.raw_schema(spec), preserve_index=False))
    assert [(r["query"], sorted(k for k, _ in r["bindings"])) for r in out.to_pylist()] == [("seq", ["s", "x", "y"])]
