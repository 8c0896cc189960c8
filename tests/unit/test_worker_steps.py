"""The streaming worker (cep.spark.worker.detect_streaming) without Spark:
its steps one by one, and whole micro-batch sequences replayed by
tests/unit/worker_harness.py (watermarks, late rows, timeouts, restores,
the end of input), checked against the in-process engine's answers.
tests/spark/test_worker_harness_spark.py runs the same sequences on a real
Spark, so that the harness cannot drift from it silently."""

from __future__ import annotations

import random
from collections import Counter

import pyarrow as pa
import pytest

from cep.engine import Engine
from cep.rules import parse_rules
from cep.spark import worker
from tests.unit.worker_harness import EX, Harness, ev

PAIRS = f"""PREFIX : <{EX}>
REGISTER QUERY pairs AS
SELECT ?k ?x ?y WHERE {{ {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} }} WITHIN "PT0.05S"
"""
WINDOWS = f"""PREFIX : <{EX}>
REGISTER QUERY per_key AS
SELECT ?k (COUNT(*) AS ?n) (SUM(?x) AS ?total)
FROM STREAM <{EX}s> [RANGE 20ms STEP 10ms]
WHERE {{ ?k :a ?x }} GROUP BY ?k
"""
UNCONFIRMED = f"""PREFIX : <{EX}>
REGISTER QUERY unconfirmed AS
SELECT ?k WHERE {{ ?k :a ?t }} NOTSEQ "PT0.01S" {{ ?k :b ?c }}
"""


def in_process(rules, events) -> Counter:
    engine = Engine(parse_rules(rules, "rules.rq"))
    return Counter(engine.push(sorted(events, key=lambda e: e.end)) + engine.flush())


def by_key(event) -> tuple:
    """Two groups: key k0 in bucket 0, every other key in bucket 1."""
    return (0, 0 if event.s == f"<{EX}k0>" else 1)


def table(events) -> pa.Table:
    return pa.Table.from_pylist([{"s": e.s, "p": e.p, "o": e.o, "start": e.start, "end": e.end, "source": e.source,
                                  "copy": c, "stream": None} for e, c in events], worker.EVENT_SCHEMA)


# -- the steps, one by one


def test_an_event_ending_at_the_horizon_is_on_time_one_before_it_late():
    on_time, rows = worker.set_aside_late(table([(ev("k", "a", 1, 99, source="f:1"), None),
                                                 (ev("k", "a", 2, 100), None)]), 100)
    assert on_time["end"].to_pylist() == [100]
    assert [(r[0], r[9]) for r in rows] == [("late", "f:1")]
    assert "before 1970-01-01T00:00:00.1Z, where the watermark was" in rows[0][10]


def test_a_micro_batch_with_nothing_late_is_kept_whole():
    given = table([(ev("k", "a", 1, 100), None), (ev("k", "b", 2, 100, 130), worker.COPY_QUIET)])
    on_time, rows = worker.set_aside_late(given, 100)
    assert on_time.equals(given) and rows == []


def test_a_late_quiet_copy_is_dropped_without_a_row_and_one_that_reports_gives_one():
    on_time, rows = worker.set_aside_late(table([(ev("k", "a", 1, 5), worker.COPY_QUIET),
                                                 (ev("k", "a", 2, 6), worker.COPY_REPORTS)]), 100)
    assert not on_time.num_rows and [r[4] for r in rows] == [6]


def test_the_late_horizon_is_the_later_of_the_watermark_and_what_was_processed():
    assert worker.late_horizon(None, None) == -2**63
    assert worker.late_horizon(50, None) == 50
    assert worker.late_horizon(50, 80) == 80  # past the watermark after an end of input
    assert worker.late_horizon(90, 80) == 90


def test_ready_events_by_the_watermark_by_the_groups_own_lateness_and_at_the_end():
    waiting = table([(ev("k", "a", i, t), None) for i, t in enumerate((10, 20, 30, 100))])
    ready, processed = worker.ready_events(waiting, 25, None, False, None)  # the watermark alone
    assert ready.to_pylist() == [True, True, False, False] and processed == 25
    ready, processed = worker.ready_events(waiting, 25, None, False, 50)  # 100 - 50 is later
    assert ready.to_pylist() == [True, True, True, False] and processed == 50
    assert worker.ready_events(waiting, 25, 50, False, None) == (None, 50)  # nothing new: no flush
    ready, processed = worker.ready_events(waiting, 25, 50, True, None)
    assert ready.to_pylist() == [True] * 4 and processed == 101
    ready, processed = worker.ready_events(waiting.slice(0, 0), None, None, True, 10)
    assert ready.to_pylist() == [] and processed is None  # the end with nothing waiting: still a flush


def test_the_timeout_is_the_next_due_time_or_waiting_event_never_before_the_watermark_nor_the_epoch():
    waiting = table([(ev("k", "a", 1, 40), None)])
    assert worker.timeout_at(30, waiting, 10) == 30
    assert worker.timeout_at(None, waiting, 10) == 40
    assert worker.timeout_at(30, waiting, 35) == 35  # Spark refuses a timeout before its watermark
    assert worker.timeout_at(0, waiting.slice(0, 0), None) == 1  # PySpark refuses one at the epoch
    assert worker.timeout_at(None, waiting.slice(0, 0), 10) is None


# -- micro-batch sequences


def test_a_late_event_is_a_late_row_and_changes_no_answer():
    h = Harness(PAIRS, lateness_ms=0)
    first = [ev("k0", "a", 1, 100), ev("k0", "b", 2, 110)]
    out = h.batch(first)
    out += h.batch([ev("k0", "b", 3, 200)])  # the watermark is now 110
    late = h.batch([ev("k0", "b", 4, 105, source="in.jsonl:7")])  # before the watermark: late
    out += h.batch(end=True)
    assert [(r["source"], r["end"]) for r in late.late] == [("in.jsonl:7", 105)]
    assert "where the watermark was" in late.late[0]["reason"] and not late.answers
    assert Counter(out.answers) == in_process(PAIRS, first + [ev("k0", "b", 3, 200)])


def test_an_event_at_the_watermark_is_on_time_with_and_without_timeouts():
    for rules in (PAIRS, WINDOWS):
        h = Harness(rules, lateness_ms=10)
        events = [ev("k0", "a", 1, 100), ev("k0", "a", 2, 150)]
        out = h.batch(events[:1]) + h.batch(events[1:])
        assert h.watermark == 140
        at = ev("k0", "b" if rules is PAIRS else "a", 3, 140)
        out += h.batch([at])
        out += h.batch(end=True)
        assert not out.late, rules
        assert Counter(out.answers) == in_process(rules, events + [at])


def test_a_group_without_rows_times_out_and_answers_its_windows():
    h = Harness(WINDOWS, lateness_ms=10, buckets=2, route=by_key)
    mine = [ev("k0", "a", i, 100 + 7 * i) for i in range(5)]
    out = h.batch(mine)
    others = [[ev("k1", "a", 1, 200)], [ev("k1", "a", 2, 300)]]
    for events in others:
        out += h.batch(events)
    assert ((0, 0), True) in h.calls  # called by its timeout, with no row
    expected = Counter(a for a in in_process(WINDOWS, mine + others[0] + others[1])
                       if a.binding("k") == f"<{EX}k0>")
    assert len(expected) == 5 and Counter(a for a in out.answers if a.binding("k") == f"<{EX}k0>") == expected


def test_a_notseq_deadline_fires_on_a_timeout():
    h = Harness(UNCONFIRMED, lateness_ms=5, buckets=2, route=by_key)
    out = h.batch([ev("k0", "a", 1, 100)])
    out += h.batch([ev("k1", "x", 1, 200)])
    assert not out.answers
    out += h.batch([ev("k1", "x", 2, 300)])  # the watermark (194) passes k0's deadline (110)
    assert h.calls[-1] == ((0, 0), True)
    assert [(a.binding("k"), a.start, a.end) for a in out.answers] == [(f"<{EX}k0>", 100, 110)]


def test_a_group_with_nothing_left_is_removed_and_starts_afresh():
    h = Harness(WINDOWS, lateness_ms=10, buckets=2, route=by_key)
    out = h.batch([ev("k0", "a", 1, 100), ev("k0", "a", 2, 101)])
    assert (0, 0) in h.store
    out += h.batch([ev("k1", "a", 1, 200)])
    out += h.batch([ev("k1", "a", 1, 300)])  # k0 times out: its windows close, nothing is left
    assert (0, 0) not in h.store
    again = [ev("k0", "a", 5, 400)]
    out += h.batch(again)
    out += h.batch(end=True)
    mine = [a for a in out.answers if a.binding("k") == f"<{EX}k0>"]
    five = '"5"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert sorted((a.start, a.end, a.binding("total")) for a in mine if a.start >= 300) == [
        (380, 400, five), (390, 410, five)]  # the new event's windows, with it alone
    assert Counter(mine) == Counter(a for a in in_process(WINDOWS, [ev("k0", "a", 1, 100), ev("k0", "a", 2, 101),
                                                                    *again]))


def test_state_restored_by_another_worker_gives_the_same_answers():
    """Every batch on a worker process that has not seen the group (its
    engine restored from the state's bytes) answers as one worker does."""
    events = stream(300, seed=2)
    batches = [events[i:i + 40] for i in range(0, len(events), 40)]
    same = Harness(PAIRS, lateness_ms=20).run(batches, end=True)
    h, moved = Harness(PAIRS, lateness_ms=20), None
    for events_ in batches:
        worker._ENGINES.clear()  # another process: a new engine, restored from the state
        moved = h.batch(events_) if moved is None else moved + h.batch(events_)
    worker._ENGINES.clear()
    moved += h.batch(end=True)
    assert Counter(moved.answers) == Counter(same.answers) == in_process(PAIRS, events)


def test_a_batch_run_again_from_the_checkpoint_answers_as_it_did():
    """A failed task's batch runs again from the state before it, on a worker
    whose engine went on past that state: the engine is restored, so nothing
    is answered twice or lost."""
    events = stream(200, seed=4)
    h = Harness(PAIRS, lateness_ms=20)
    out = h.batch(events[:100])
    before = h.checkpoint()
    first = h.batch(events[100:])
    h.restart(before)
    again = h.batch(events[100:])
    assert first.answers and Counter(again.answers) == Counter(first.answers)
    out += again
    out += h.batch(end=True)
    assert Counter(out.answers) == in_process(PAIRS, events)


def test_the_end_of_input_processes_what_waits_and_flushes_the_open_windows():
    h = Harness(WINDOWS, lateness_ms=1000)  # everything waits for the lateness
    events = [ev("k0", "a", i, 100 + 3 * i) for i in range(10)]
    out = h.batch(events)
    assert not out.answers
    out += h.batch(end=True)
    assert Counter(out.answers) == in_process(WINDOWS, events) and len(out.answers) == 5
    after = h.batch([ev("k0", "a", 1, 110)])  # past what the group processed at the end: late
    assert [r["end"] for r in after.late] == [110] and "input had ended" in after.late[0]["reason"]


def test_rejected_records_pass_through_as_reject_rows():
    h = Harness(PAIRS)
    bad = ev("k0", "a", 1, 100)
    bad = type(bad)("<not an iri", bad.p, bad.o, 100, 100, source="in.jsonl:2")
    out = h.batch([ev("k0", "a", 1, 100), bad], rejects=[("in.jsonl:3", "column t is empty", "x y z")])
    assert sorted((r["source"], r["reason"][:9]) for r in out.rejects) == [("in.jsonl:2", "column s:"),
                                                                         ("in.jsonl:3", "column t ")]


@pytest.mark.parametrize("rules", [PAIRS, WINDOWS, UNCONFIRMED], ids=["seq", "window", "notseq"])
@pytest.mark.parametrize("seed", range(4))
def test_random_micro_batches_give_the_in_process_answers(rules, seed):
    """Streams cut into random micro-batches, each shuffled within the
    lateness, over two groups, in frames of a few rows (as Arrow batches
    come): with the end of input, the in-process engine's answers."""
    rng = random.Random(seed)
    events = stream(250, seed)
    cuts = sorted(rng.sample(range(1, len(events)), 6))
    batches = [events[i:j] for i, j in zip([0, *cuts], [*cuts, len(events)])]
    for b in batches:
        b.sort(key=lambda e: e.end + rng.randint(-10, 10))  # out of order within the lateness
    h = Harness(rules, lateness_ms=20, buckets=2, route=by_key, rows_per_frame=rng.choice((3, 1000)))
    out = h.run(batches, end=True)
    print("seed", seed)
    assert not out.late and not out.rejects
    assert Counter(out.answers) == in_process(rules, events)


def stream(n: int, seed: int) -> list:
    """Events of keys k0..k3, :a and :b, every 3 ms or so, ties included."""
    rng = random.Random(seed)
    return [ev(f"k{rng.randint(0, 3)}", rng.choice("ab"), rng.randint(1, 9), 1000 + i // 2 * 3 + rng.randint(0, 1))
            for i in range(n)]


EMPTY_ROWS = f"""PREFIX : <{EX}>
REGISTER QUERY counted AS
SELECT (COUNT(*) AS ?n) (SUM(?x) AS ?total)
FROM STREAM <{EX}s> [RANGE 20ms STEP 10ms]
WHERE {{ ?k :a ?x }}
"""


def test_aggregates_without_group_by_answer_their_empty_windows_across_micro_batches():
    # docs/language.md, "Empty windows": the group keeps a timeout at its next
    # evaluation, so the windows of a gap report COUNT 0 as the watermark
    # passes them, and the answers are the in-process engine's
    h = Harness(EMPTY_ROWS, lateness_ms=10)
    batches = [[ev("k0", "a", 1, 100), ev("k1", "a", 2, 105)], [ev("k0", "a", 3, 300)], [ev("k2", "b", 1, 400)]]
    out = h.batch(batches[0])
    for events in batches[1:]:
        out += h.batch(events)
    out += h.batch(end=True)
    expected = in_process(EMPTY_ROWS, [e for b in batches for e in b])
    zero = '"0"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert sum(1 for a in expected.elements() if a.binding("n") == zero) > 20  # the gap's windows
    assert Counter(out.answers) == expected


def test_an_answer_row_carries_its_query_fields_and_times_and_nothing_else():
    """PySpark's output step costs per cell (under pandas 3 every cell
    becomes a Python object and back): a worker's raw row holds the
    answer's query, fields and times, and the columns of a row that is
    not an answer only as one text (detail), null on an answer."""
    spec = Harness(PAIRS).spec
    assert worker.raw_schema(spec).names == ["query", "f0", "f1", "f2", "start", "end", "detail"]


def test_a_workers_frame_holds_python_values_that_read_back_as_its_rows():
    """PySpark's output step makes every column of a returned frame
    object dtype (it concatenates it with an empty frame of such columns)
    before it converts it to Arrow: the worker gives its frame so, and
    the frame reads back as the raw rows, nulls and nested triples kept."""
    schema = pa.schema([worker.OUTPUT_SCHEMA.field("query"), pa.field("f0", pa.string()),
                        worker.OUTPUT_SCHEMA.field("triples"), worker.OUTPUT_SCHEMA.field("start"),
                        worker.OUTPUT_SCHEMA.field("end"), pa.field("detail", pa.string())])
    triples = [{"s": f"<{EX}a>", "p": f"<{EX}p>", "o": '"x"'}]
    answers = pa.table({"query": ["q", "c"], "f0": [f"<{EX}k>", None], "start": pa.array([1, 2], pa.int64()),
                        "end": pa.array([3, 4], pa.int64()),
                        "triples": pa.array([None, triples], schema.field("triples").type)})
    reject = ("reject", None, None, None, None, None, None, None, None, "in:1", "bad", "text")
    frame = worker._frame(schema, [reject], [answers])
    assert all(dtype == object for dtype in frame.dtypes)
    assert pa.Table.from_pandas(frame, schema=schema, preserve_index=False).to_pylist() == [
        {"query": "q", "f0": f"<{EX}k>", "triples": None, "start": 1, "end": 3, "detail": None},
        {"query": "c", "f0": None, "triples": triples, "start": 2, "end": 4, "detail": None},
        {"query": None, "f0": None, "triples": None, "start": None, "end": None,
         "detail": '{"kind": "reject", "source": "in:1", "reason": "bad", "text": "text"}'}]


def test_a_rejected_record_keeps_its_text_exactly_through_the_raw_row():
    h = Harness(PAIRS)
    text = 'k\t"caf\u00e9 \U0001F600"\n{"t": null} \\ \u2028 end'
    out = h.batch([ev("k0", "a", 1, 100)], rejects=[("in.jsonl:3", "column t is empty", text)])
    assert [(r["kind"], r["source"], r["reason"], r["text"], r["s"], r["query"]) for r in out.rejects] == [
        ("reject", "in.jsonl:3", "column t is empty", text, None, None)]


def test_a_profiled_group_call_gives_its_frames_and_leaves_the_processes_profile(tmp_path):
    import os
    import pstats

    frames = list(worker.profiled(str(tmp_path), lambda first: iter([first, first + 1]), 1))
    assert frames == [1, 2]
    functions = pstats.Stats(str(tmp_path / f"{os.getpid()}.pstats")).stats
    assert any(name == "<lambda>" for _, _, name in functions)


def test_a_workers_warnings_reach_the_terminal_with_their_control_characters_escaped(capsys):
    """A warning may quote the input (a query's name, a value); a worker
    writes it on its stderr, which Spark passes on to the console, escaped
    as `cep` escapes its own reports (cep.errors.for_terminal)."""
    engine = Engine(parse_rules(PAIRS, "rules.rq"))
    engine.warnings.append("q\x1b]0;owned\x07: REGEX gave up on \x1b[2J\x9b")
    worker._say_warnings(engine)
    err = capsys.readouterr().err
    assert err == "cep: warning: q\\x1b]0;owned\\x07: REGEX gave up on \\x1b[2J\\x9b\n"
    assert engine.warnings == []
