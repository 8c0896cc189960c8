"""The `cep` command: help, exit codes and messages, and the run loop
(with a stand-in engine and rule loader where the real ones are not the
subject)."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import cep.compile
import cep.engine
import cep.spark.routing
from cep import cli, terms
from cep.algebra.ops import ProjectItem, Query, Var
from cep.errors import EngineError
from cep.events import Answer, Reject, answers_table, events_of
from tests.unit.support import policy_case

ROOT = Path(__file__).resolve().parents[2]
STOCK_RULES = ROOT / "rules/stock.rq"
STOCK_EVENTS = ROOT / "examples/stock/ticks.trig"
EX = "http://example.org/"
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")


def run(argv, capsys):
    """`cep ARGV` in this process; `run` on the local engine unless told
    (tests/spark has the Spark engine's command-line tests)."""
    argv = [str(a) for a in argv]
    if argv[:1] == ["run"] and "--engine" not in argv:
        argv += ["--engine", "local"]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def select(name="q", variables=("x",), warnings=()):
    return Query(name, "select", None, projection=tuple(ProjectItem(Var(v)) for v in variables),
                 warnings=tuple(warnings))


def construct(name="c"):
    return Query(name, "construct", None)


@pytest.fixture
def rules(monkeypatch, tmp_path):
    """Stand-in cep.rules whose load_rules returns the queries set here."""
    state = types.SimpleNamespace(queries=[select()], loaded=None)
    module = types.ModuleType("cep.rules")

    def load_rules(paths, policy=None, allow_from=()):
        state.loaded, state.policy, state.allow_from = list(paths), policy, list(allow_from)
        return list(state.queries)

    module.load_rules = load_rules
    monkeypatch.setitem(sys.modules, "cep.rules", module)
    monkeypatch.setattr(cep.compile, "state_warnings", lambda queries: [])  # the stand-ins have no pattern
    state.path = tmp_path / "r.rq"
    state.path.write_text("# stand-in\n")
    return state


class FakeEngine:
    """Answers every event at once: SELECT ?x = the event's subject."""

    instances = []

    def __init__(self, queries, background=None, prolog=None, limits=None, services=None):
        self.queries = list(queries)
        self.batches = []
        self.warnings = []
        self.late = [Reject("late.jsonl:9", "late: ends before an instant already processed", "x")]
        FakeEngine.instances.append(self)

    def push_table(self, events, checked=False):
        assert checked  # the readers checked the rows
        self.batches.append(events.num_rows)
        return self._batch([self._answer(e) for e in events_of(events)])

    def flush_table(self, final=False):
        return self._batch([])

    def state_size(self):
        return 100 * sum(self.batches)  # a state that grows with the events

    @staticmethod
    def _batch(answers):
        return types.SimpleNamespace(answers=lambda: answers_table(answers))

    def _answer(self, e):
        q = self.queries[0]
        if q.form == "construct":
            return Answer(q.name, e.start, e.end, triples=((e.s, e.p, e.o),))
        return Answer(q.name, e.start, e.end, bindings=(("x", e.s),))


@pytest.fixture
def engine(monkeypatch):
    FakeEngine.instances = []
    monkeypatch.setattr(cep.engine, "Engine", FakeEngine)
    return FakeEngine


def events_file(tmp_path, n=5, bad=0, name="e.jsonl"):
    lines = [json.dumps({"s": f"<{EX}s{i}>", "p": f"<{EX}p>", "o": f"<{EX}o>", "t": T0 + (n - i)})
             for i in range(n)]
    lines += ['{"s": "broken"'] * bad
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


# ---------------------------------------------------------------- help


def test_help_teaches_every_subcommand_and_format(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    assert "complex event processing engine for RDF streams" in out
    for text in ("run", "explain", "compile", "cep run rules/stock.rq --events examples/stock/ticks.trig",
                 "cep explain rules/stock.rq", "cep compile rules/stock.rq -o stock.pl",
                 ".trig", ".jsonl", ".csv", ".parquet", "prov:generatedAtTime", "--format", "exit status"):
        assert text in out, text


@pytest.mark.parametrize("command", ["run", "explain", "compile"])
def test_each_subcommand_has_help_with_an_example(capsys, command):
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0
    assert f"cep {command} rules/stock.rq" in out


def test_no_command_is_a_usage_error(capsys):
    code, _, err = run([], capsys)
    assert code == 2 and "usage: cep" in err


def test_python_dash_m_cep():
    done = subprocess.run([sys.executable, "-m", "cep", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and "explain" in done.stdout


# ----------------------------------------------------------- exit codes


def assert_clean_error(code, err, *fragments):
    assert code == 2
    assert err.startswith("cep: error: ") or err.startswith("usage:"), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_missing_events_path(capsys, rules, engine, tmp_path):
    code, out, err = run(["run", rules.path, "--events", tmp_path / "nope.trig"], capsys)
    assert_clean_error(code, err, f"{tmp_path / 'nope.trig'}: no such file or directory")
    assert out == "" and engine.instances == []


def test_unknown_events_file_type(capsys, rules, engine, tmp_path):
    path = tmp_path / "events.xml"
    path.write_text("<x/>")
    code, _, err = run(["run", rules.path, "--events", path], capsys)
    assert_clean_error(code, err, "unknown event file type .xml", ".trig, .nq, .nt, .jsonl, .csv, .parquet")


def test_missing_rules_file(capsys, rules, engine, tmp_path):
    code, _, err = run(["run", tmp_path / "none.rq", "--events", events_file(tmp_path)], capsys)
    assert_clean_error(code, err, "none.rq: no such rules file")


@pytest.mark.parametrize("option, fragment", [
    (["--format", "xml"], "invalid choice: 'xml'"),
    (["--engine", "flink"], "invalid choice: 'flink'"),
    (["--checkpoint", "ckpt"], "--checkpoint: options of the spark engine, not of --engine local"),
    (["--conf", "spark.cores.max=2"], "--conf: options of the spark engine, not of --engine local"),
    (["--conf", "spark.cores.max"], "argument --conf: expected KEY=VALUE, not 'spark.cores.max'"),
    (["--format", "parquet"], "--format parquet writes a file: give --out FILE.parquet"),
    (["--batch-size", "0"], "--batch-size must be at least 1, not 0"),
    (["--batch-size", "many"], "invalid int value"),
])
def test_bad_options(capsys, rules, engine, tmp_path, option, fragment):
    code, _, err = run(["run", rules.path, "--events", events_file(tmp_path)] + option, capsys)
    assert code == 2 and fragment in err and "Traceback" not in err


def test_csv_format_with_a_construct_query_fails_before_any_work(capsys, rules, engine, tmp_path):
    rules.queries = [select("s1"), construct("make_alert")]
    code, out, err = run(["run", rules.path, "--events", events_file(tmp_path), "--format", "csv"], capsys)
    assert_clean_error(code, err, "--format csv writes SELECT answers only", "make_alert is a CONSTRUCT query")
    assert out == "" and engine.instances == []


def test_trig_format_with_a_select_query(capsys, rules, engine, tmp_path):
    code, _, err = run(["run", rules.path, "--events", events_file(tmp_path), "--format", "trig"], capsys)
    assert_clean_error(code, err, "--format trig writes CONSTRUCT answers only", "q is a SELECT query")


def test_engine_error_exits_2_and_a_bug_exits_1(capsys, rules, monkeypatch, tmp_path):
    class Failing(FakeEngine):
        def push_table(self, events, checked=False):
            raise self.error

    monkeypatch.setattr(cep.engine, "Engine", Failing)
    Failing.error = EngineError("the Prolog runtime said no")
    code, _, err = run(["run", rules.path, "--events", events_file(tmp_path)], capsys)
    assert_clean_error(code, err, "cep: error: the Prolog runtime said no")

    Failing.error = RuntimeError("boom")
    code, _, err = run(["run", rules.path, "--events", events_file(tmp_path)], capsys)
    assert code == 1
    assert "internal error" in err and "Traceback" in err and "RuntimeError: boom" in err


def test_bad_query_file_exits_2_with_its_position(capsys, tmp_path):
    pytest.importorskip("cep.rules", reason="cep.rules (the rule loader) is not written yet")
    bad = tmp_path / "bad.rq"
    bad.write_text("PREFIX : <http://example.org/>\n"
                   "REGISTER QUERY broken AS\n"
                   "SELECT ?x WHERE { ?x :p ?y SEQ }\n")
    for argv in (["run", bad, "--events", STOCK_EVENTS], ["explain", bad], ["compile", bad]):
        code, out, err = run(argv, capsys)
        assert_clean_error(code, err, "bad.rq")
        assert out == ""
        assert err.count("\n") <= 8, err  # a message, not a dump


# -------------------------------------------------------------- cep run


def test_run_writes_jsonl_answers_in_batches_and_a_summary(capsys, rules, engine, tmp_path):
    rules.queries = [select(warnings=["r.rq:3:1: ?y is never bound"])]
    events = events_file(tmp_path, n=5)
    code, out, err = run(["run", rules.path, "--events", events, "--batch-size", "2"], capsys)
    assert code == 0, err
    assert rules.loaded == [str(rules.path)]
    assert engine.instances[0].batches == [2, 2, 1]
    answers = [json.loads(line) for line in out.splitlines()]
    # events reach the engine sorted by time: the file lists them newest first
    assert [a["bindings"]["x"]["value"] for a in answers] == [f"{EX}s{i}" for i in (4, 3, 2, 1, 0)]
    assert answers[0] == {"query": "q", "bindings": {"x": {"type": "uri", "value": f"{EX}s4"}},
                          "start": "2026-01-01T00:00:00.001Z", "end": "2026-01-01T00:00:00.001Z"}
    assert "cep: warning: r.rq:3:1: ?y is never bound" in err
    assert "5 events read from 1 file, 1 rejected (1 late)" in err
    assert "answers: q 5" in err
    assert "events/s" in err
    assert "cep: rejected late.jsonl:9: late:" in err


def test_run_quiet_prints_no_summary(capsys, rules, engine, tmp_path):
    code, _, err = run(["run", rules.path, "--events", events_file(tmp_path), "-q"], capsys)
    assert code == 0 and "events read" not in err


def test_run_progress_json_has_a_record_per_batch_named_as_sparks(capsys, rules, engine, tmp_path):
    from pyspark.sql.streaming.listener import StreamingQueryProgress

    from cep.spark.progress import progress_record
    from tests.unit.test_spark_progress import PROGRESS

    events, progress = events_file(tmp_path, n=5, bad=2), tmp_path / "progress.jsonl"
    progress.write_text("")  # appended to, as on Spark
    code, out, err = run(["run", rules.path, "--events", events, "--batch-size", "2", "--progress-json", progress],
                         capsys)
    assert code == 0, err
    records = [json.loads(line) for line in progress.read_text().splitlines()]
    assert [r["batch"] for r in records] == [0, 1, 2, 3]  # three batches and the end of the input
    assert [r["rows"] for r in records] == [2, 2, 1, 0]
    assert [r["answers"] for r in records] == [2, 2, 1, 0]
    # the readers' two rejects and the stand-in engine's late event come with the first batch
    assert [(r["late"], r["rejected"]) for r in records] == [(1, 2), (0, 0), (0, 0), (0, 0)]
    assert len({r["run"] for r in records}) == 1 and all(r["time"].endswith("Z") for r in records)
    assert all(r["duration_ms"] >= 0 for r in records)
    spark = progress_record(StreamingQueryProgress.fromJson(PROGRESS))
    assert set(records[0]) == set(spark) - {"query", "dropped_by_watermark"}  # Spark's names, where they mean the same
    # no watermark without --follow: the input is read whole in time order; one engine holds the state
    assert all(r["watermark"] is None and r["state_groups"] == 1 for r in records)
    assert records[0]["state_bytes"] == 200


def test_run_progress_json_gives_the_state_size_bench_memory_measures(capsys, tmp_path, monkeypatch):
    from cep.engine import Engine
    from cep.io import event_batches, in_time_order, inputs, time_ordered
    from cep.runtime import progress as local_progress

    monkeypatch.setattr(local_progress, "STATE_SPACING", 0)  # measured for every record
    progress = tmp_path / "progress.jsonl"
    code, out, err = run(["run", STOCK_RULES, "--events", STOCK_EVENTS, "--batch-size", "4",
                          "--progress-json", progress], capsys)
    assert code == 0, err
    records = [json.loads(line) for line in progress.read_text().splitlines()]
    engine = Engine(cli.load_queries([STOCK_RULES]))  # the same run, as bench/memory.py measures it
    files = inputs([str(STOCK_EVENTS)], None)
    sizes = []
    for batch in time_ordered(event_batches(files, [], 4), 4, in_time_order(files, 4)):
        engine.push_table(batch)
        sizes.append(engine.state_size())
    engine.flush_table(final=True)
    sizes.append(len(engine.state()))
    assert [r["state_bytes"] for r in records] == sizes and len(set(sizes)) > 2


def test_run_progress_json_of_the_engine_counts_its_answers(capsys, tmp_path):
    progress = tmp_path / "progress.jsonl"
    code, out, err = run(["run", STOCK_RULES, "--events", STOCK_EVENTS, "--batch-size", "3",
                          "--progress-json", progress], capsys)
    assert code == 0, err
    records = [json.loads(line) for line in progress.read_text().splitlines()]
    assert sum(r["rows"] for r in records) == int(err.split(" events read")[0].split()[-1])
    assert sum(r["answers"] for r in records) == len(out.splitlines()) == 2
    assert records[-1]["rows"] == 0 and len(records) > 2 and all(0 < r["rows"] <= 3 for r in records[:-1])


def test_run_out_and_rejects_files(capsys, rules, engine, tmp_path):
    events = events_file(tmp_path, n=3, bad=2)
    out_path, rejects_path = tmp_path / "answers.jsonl", tmp_path / "rejects.jsonl"
    code, out, err = run(["run", rules.path, "--events", events, "--out", out_path,
                          "--rejects", rejects_path], capsys)
    assert code == 0 and out == ""
    assert len(out_path.read_text().splitlines()) == 3
    rejected = [json.loads(line) for line in rejects_path.read_text().splitlines()]
    assert [r["source"] for r in rejected] == [f"{events}:4", f"{events}:5", "late.jsonl:9"]
    assert rejected[0]["reason"].startswith("not JSON")
    assert rejected[0]["text"] == '{"s": "broken"'
    assert "cep: rejected" not in err
    assert "3 events read from 1 file, 3 rejected" in err


def test_run_shows_the_first_20_rejects_then_a_count(capsys, rules, engine, tmp_path):
    events = events_file(tmp_path, n=1, bad=25)
    code, _, err = run(["run", rules.path, "--events", events], capsys)
    assert code == 0
    assert err.count("cep: rejected ") == 20
    assert f"cep: rejected {events}:2: not JSON" in err
    assert "... and 6 more rejected records (use --rejects FILE to keep them all)" in err


def test_run_csv_output(capsys, rules, engine, tmp_path):
    rules.queries = [select("q", ("x", "y"))]
    code, out, _ = run(["run", rules.path, "--events", events_file(tmp_path, n=2), "--format", "csv"], capsys)
    assert code == 0
    assert out.splitlines() == [
        "query,start,end,x,y",
        f"q,2026-01-01T00:00:00.001Z,2026-01-01T00:00:00.001Z,<{EX}s1>,",
        f"q,2026-01-01T00:00:00.002Z,2026-01-01T00:00:00.002Z,<{EX}s0>,",
    ]


def test_run_trig_output_reads_back_as_events(capsys, rules, engine, tmp_path):
    from cep.io import read_events

    rules.queries = [construct("c")]
    out_path = tmp_path / "answers.trig"
    code, _, err = run(["run", rules.path, "--events", events_file(tmp_path, n=3), "--format", "trig",
                        "--out", out_path], capsys)
    assert code == 0, err
    events, rejects = read_events([out_path])
    assert rejects == [] and events.num_rows == 3


def test_unwritable_out_is_a_usage_error(capsys, rules, engine, tmp_path):
    code, _, err = run(["run", rules.path, "--events", events_file(tmp_path), "--out",
                        tmp_path / "no" / "dir" / "a.jsonl"], capsys)
    assert_clean_error(code, err, "cannot write the answers")


# ------------------------------------------------------ explain, compile


def test_explain_and_compile(capsys, rules, monkeypatch, tmp_path):
    monkeypatch.setattr(cep.compile, "explain", lambda qs, background=None, prolog=None, limits=None: "== algebra\n" + " ".join(q.name for q in qs))
    monkeypatch.setattr(cep.compile, "compile_rules", lambda qs, background=None, prolog=None, limits=None: ":- module(rules, []).\n")
    monkeypatch.setattr(cep.spark.routing, "explain", lambda qs, schema=None: "q: partitioned by ?x (class 0)")
    code, out, _ = run(["explain", rules.path], capsys)
    assert (code, out) == (0, "== algebra\nq\n== partitioning (spark engine)\nq: partitioned by ?x (class 0)\n")
    code, out, _ = run(["compile", rules.path], capsys)
    assert (code, out) == (0, ":- module(rules, []).\n")
    target = tmp_path / "rules.pl"
    code, out, _ = run(["compile", rules.path, "-o", target], capsys)
    assert (code, out) == (0, "")
    assert target.read_text() == ":- module(rules, []).\n"


def test_policy_reaches_the_rule_loader_of_every_command(capsys, rules, engine, monkeypatch, tmp_path):
    monkeypatch.setattr(cep.compile, "explain", lambda qs, background=None, prolog=None, limits=None: "")
    monkeypatch.setattr(cep.compile, "compile_rules", lambda qs, background=None, prolog=None, limits=None: "")
    monkeypatch.setattr(cep.spark.routing, "explain", lambda qs, schema=None: "")
    for argv in (["run", rules.path, "--events", events_file(tmp_path)], ["explain", rules.path],
                 ["compile", rules.path]):
        assert run(argv + ["--policy", "recent"], capsys)[0] == 0
        assert rules.policy == "recent"
        assert run(argv, capsys)[0] == 0
        assert rules.policy is None
    code, _, err = run(["explain", rules.path, "--policy", "newest"], capsys)
    assert code == 2 and "invalid choice: 'newest'" in err


# ------------------------------------------------------ the real engine


@pytest.mark.parametrize("policy, plain", [
    (None, [(1, 3), (1, 4), (2, 3), (2, 4)]),
    ("unrestricted", [(1, 3), (1, 4), (2, 3), (2, 4)]),
    ("recent", [(2, 3), (2, 4)]),
    ("chronological", [(1, 3), (2, 4)]),
])
def test_policy_option_is_the_default_and_an_annotation_wins(capsys, tmp_path, policy, plain):
    """a1 a2 b3 b4 on one key: --policy decides the query without @policy;
    the one annotated unrestricted keeps every pair."""
    rules_path, events = policy_case(tmp_path)
    code, out, err = run(["run", rules_path, "--events", events] + (["--policy", policy] if policy else []), capsys)
    assert code == 0, err
    got = {"plain": [], "annotated": []}
    for a in map(json.loads, out.splitlines()):
        got[a["query"]].append(tuple(int(a["bindings"][v]["value"][len(EX) + 1:]) for v in "xy"))
    assert sorted(got["plain"]) == plain
    assert sorted(got["annotated"]) == [(1, 3), (1, 4), (2, 3), (2, 4)]
    code, out, _ = run(["explain", rules_path] + (["--policy", policy] if policy else []), capsys)
    assert f"-- plain (policy {policy or 'unrestricted'})" in out and "-- annotated (policy unrestricted)" in out



def test_run_with_the_real_engine_loses_no_interval_event(capsys, rules, tmp_path):
    """Intervals pushed in small batches: none is late, every one answers."""
    from cep.algebra.ops import BGP, Triple

    rules.queries = [Query("all", "select", BGP((Triple(Var("s"), f"<{EX}p>", Var("o")),)),
                           projection=(ProjectItem(Var("s")),))]
    spans = [(0, 100), (1, 99), (10, 20), (11, 11), (30, 30), (5, 200)]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps({"s": f"<{EX}s{i}>", "p": f"<{EX}p>", "o": f"<{EX}o>",
                                        "t": T0 + a, "t_end": T0 + b}) + "\n"
                            for i, (a, b) in enumerate(spans)))
    rejects_path = tmp_path / "rejects.jsonl"
    code, out, err = run(["run", rules.path, "--events", path, "--batch-size", "2",
                          "--rejects", rejects_path], capsys)
    assert code == 0, err
    assert rejects_path.read_text() == ""
    got = sorted((a["bindings"]["s"]["value"], a["start"], a["end"]) for a in map(json.loads, out.splitlines()))
    assert got == sorted((f"{EX}s{i}", terms.format_datetime_ms(T0 + a), terms.format_datetime_ms(T0 + b))
                         for i, (a, b) in enumerate(spans))



def test_make_run_finds_the_two_readme_answers(capsys):
    pytest.importorskip("cep.rules", reason="cep.rules (the rule loader) is not written yet")
    code, out, err = run(["run", STOCK_RULES, "--events", STOCK_EVENTS], capsys)
    assert code == 0, err
    answers = sorted((a["bindings"]["price1"]["value"], a["bindings"]["price2"]["value"],
                      a["bindings"]["price3"]["value"], a["start"], a["end"])
                     for a in map(json.loads, out.splitlines()))
    assert answers == [
        ("100", "65.80", "106", "2026-01-05T10:00:00Z", "2026-01-25T10:00:00Z"),
        ("97.5", "65.80", "106", "2026-01-09T10:00:00Z", "2026-01-25T10:00:00Z"),
    ]
    assert "answers: crash_recovery 2" in err
