"""`cep run --engine spark` end to end on a real local Spark: the answers of
the in-process engine, exactly-once file output across a stop and a
SIGKILL, and state that stops growing once the window is full."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from cep import cli
from tests.spark.support import write_files
from tests.unit.support import policy_case

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]
STOCK_RULES = ROOT / "rules" / "stock.rq"
STOCK_EVENTS = ROOT / "examples" / "stock" / "ticks.trig"
EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PAIR_EVENTS = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()), ("t", pa.int64())])
PAIRS = f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
REGISTER QUERY pairs AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT2S"^^xsd:duration)
"""


def cep(argv, capsys):
    """`cep ARGV` in this process; `run` on the Spark engine unless told
    (event files alone would run in process)."""
    argv = [str(a) for a in argv]
    if argv[:1] == ["run"] and "--engine" not in argv:
        argv += ["--engine", "spark"]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_spark_engine_prints_the_local_engines_answers_and_reports_rejects(spark, capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"s": "<http://example.org/ACME>", "p": "<http://example.org/hasStockPrice>", '
                   '"o": "\\"x\\"^^<http://www.w3.org/2001/XMLSchema#integer>", "t": "yesterday"}\n')
    code, local, _ = cep(["run", STOCK_RULES, "--events", STOCK_EVENTS, bad, "--engine", "local"], capsys)
    assert code == 0
    code, out, err = cep(["run", STOCK_RULES, "--events", STOCK_EVENTS, bad], capsys)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(local.splitlines()) and len(out.splitlines()) == 2
    assert f"rejected {bad}:1:" in err and "yesterday" in err
    assert "answers: crash_recovery 2" in err and "batch 0:" in err
    assert "cep: Spark UI off (spark.ui.enabled=false)\n" in err  # the test session's (TEST_CONF)


# Two runs in one fresh process (this one's session has the UI off: TEST_CONF),
# its Spark stopped between them so that the second starts its own.
UI_RUNS = """
import sys, urllib.request
from pyspark.sql import SparkSession
from cep import cli
for extra in ([], ["--conf", "spark.ui.enabled=false"]):
    assert cli.main(["run", sys.argv[1], "--events", sys.argv[2], "--engine", "spark", *extra]) == 0
    spark = SparkSession.builder.getOrCreate()
    url = spark.sparkContext.uiWebUrl
    served = url and urllib.request.urlopen(url + "/jobs/", timeout=30).status
    print("ui", spark.sparkContext.getConf().get("spark.ui.enabled", "unset"), url, served, file=sys.stderr)
    spark.stop()
"""


def test_the_spark_ui_keeps_sparks_default_and_the_conf_option_turns_it_off(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_SUBMIT", "SPARK_CONF"))}
    run = subprocess.run([sys.executable, "-c", UI_RUNS, STOCK_RULES, STOCK_EVENTS], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    urls = [line.split("Spark UI: ", 1)[1] for line in run.stderr.splitlines() if line.startswith("cep: Spark UI: ")]
    reports = [line.split() for line in run.stderr.splitlines() if line.startswith("ui ")]
    assert len(urls) == 1 and urls[0].startswith("http://"), run.stderr[-3000:]
    assert reports[0] == ["ui", "unset", urls[0], "200"]  # Spark's own default, serving its pages
    assert "cep: Spark UI off (spark.ui.enabled=false)" in run.stderr
    assert reports[1] == ["ui", "false", "None", "None"]


def write_pairs(folder: Path, files: int, per_file: int = 400, keys: int = 20) -> None:
    """Files of :a/:b events in time order, 10 ms apart, over `keys` keys."""
    chunks = [[(f"<{EX}k{i % keys}>", f"<{EX}{'ab'[(i // keys) % 2]}>", f'"{i}"^^<{XSD}integer>',
                1_767_225_600_000 + 10 * i) for i in range(f * per_file, (f + 1) * per_file)]
              for f in range(files)]
    write_files(folder, chunks, PAIR_EVENTS)


def answer_lines(spark, out: Path) -> Counter:
    """The JSON lines of a file sink's answers, read as Spark reads a file
    sink's output (through its log: files of unfinished batches are not in it)."""
    rows = spark.read.text(str(out)).where("kind = 'answer'").collect()
    return Counter(r["value"] for r in rows)


def cep_process(argv, log: Path):
    return subprocess.Popen([sys.executable, "-m", "cep", *map(str, argv)], cwd=ROOT, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def commits(checkpoint: Path) -> int:
    folder = checkpoint / "commits"
    return len([p for p in folder.iterdir() if p.name.isdigit()]) if folder.exists() else 0


def wait_for_commits(proc, checkpoint: Path, n: int, log: Path, limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while commits(checkpoint) < n:
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["stopped", "killed"])
def test_a_run_stopped_or_killed_resumes_from_its_checkpoint_exactly_once(spark, capsys, tmp_path, stop):
    """A followed run reading one file per micro-batch is stopped (SIGINT)
    or its driver killed (SIGKILL) after two micro-batches; a rerun with
    the same checkpoint finishes the input. Its output equals an
    uninterrupted run's: no answer missing, none twice."""
    rules = tmp_path / "pairs.rq"
    rules.write_text(PAIRS)
    events = tmp_path / "in"
    write_pairs(events, files=6)
    common = ["run", rules, "--events", events, "--files-per-batch", "1", "--lateness", "1 second"]

    code, _, err = cep(common + ["--out", tmp_path / "whole", "--checkpoint", tmp_path / "c-whole"], capsys)
    assert code == 0, err
    expected = answer_lines(spark, tmp_path / "whole")
    assert sum(expected.values()) > 500

    out, checkpoint, log = tmp_path / "out", tmp_path / "c", tmp_path / "first.log"
    proc = cep_process(common + ["--follow", "--out", out, "--checkpoint", checkpoint], log)
    try:
        wait_for_commits(proc, checkpoint, 2, log)
        # SIGKILL: the driver, Python and its JVM; SIGINT: Ctrl-C, which a
        # terminal sends to the whole process group: cep stops its query
        os.killpg(proc.pid, stop)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    if stop == signal.SIGINT:  # one line and the documented status, no traceback
        said = log.read_text()
        assert proc.returncode == cli.EXIT_INTERRUPTED, said
        assert said.strip().splitlines()[-1] == (f"cep: interrupted; the query stopped; run again with "
                                                 f"--checkpoint {checkpoint} to resume"), said
        assert "Traceback" not in said and "pandas" not in said, said
    first = answer_lines(spark, out)
    assert 0 < sum(first.values()) < sum(expected.values())  # it was stopped mid-stream

    code, _, err = cep(common + ["--out", out, "--checkpoint", checkpoint], capsys)
    assert code == 0, err
    assert answer_lines(spark, out) == expected
    assert not list((tmp_path / "whole").glob("kind=late/*.txt"))


# A query whose Python worker, holding its batch, is cut off by a stop on
# Ctrl-C (cep.spark.job._await) and writes its answers after it: the write
# to the socket Spark closed fails, and PySpark's daemon prints its
# traceback on the JVM's standard error. Marks in a folder order the steps.
CUT_OFF = """
import os, signal, sys, threading, time
from pathlib import Path
from cep.spark import job
marks = Path(sys.argv[1])
(marks / "in").mkdir()
(marks / "in" / "e.json").write_text("".join('{"n": %d}\\n' % i for i in range(5000)))
# the worker cut off is left to write (Spark kills it 2 s after a cancel by default)
spark = job.session("local[1]", {"spark.ui.enabled": "false", "spark.python.task.killTimeout": "600s"})

def answers(batches):
    for batch in batches:
        (marks / "started").write_text(str(os.getpid()))
        while not (marks / "stopped").exists():
            time.sleep(0.1)
        yield batch.assign(pad="x" * 1000)  # 5 MB: more than the socket takes once closed

def ctrl_c():
    while not (marks / "started").exists():
        time.sleep(0.1)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=ctrl_c, daemon=True).start()
query = (spark.readStream.schema("n long").json(str(marks / "in")).mapInPandas(answers, "n long, pad string")
         .writeStream.format("noop").option("checkpointLocation", str(marks / "c")).start())
signals = job._Signals()
signals.arm()
try:
    job._await(query, None, signals)
except KeyboardInterrupt:
    (marks / "stopped").write_text("")
worker = int((marks / "started").read_text())
while os.path.exists(f"/proc/{worker}"):  # it writes, fails and exits
    time.sleep(0.1)
time.sleep(3)  # what it printed passes the JVM
spark.stop()
print("stopped", file=sys.stderr)
"""


def test_a_worker_cut_off_by_ctrl_c_prints_no_traceback(tmp_path):
    run = subprocess.run([sys.executable, "-c", CUT_OFF, tmp_path], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0 and run.stderr.endswith("stopped\n"), run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "BrokenPipeError" not in run.stderr, run.stderr[-3000:]
    assert "Using Spark's default log4j profile" in run.stderr  # the JVM's other lines are passed on


CTRL_C_AT_START = """
import os, signal, sys, threading
import cep.spark
from cep import cli

planned = cep.spark.plan

def plan(queries, buckets, background, spark, **options):
    # Ctrl-C while the run waits on a call to the JVM, before the query starts
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    spark.sparkContext._jvm.java.lang.Thread.sleep(3000)
    return planned(queries, buckets, background, spark, **options)

cep.spark.plan = plan
sys.exit(cli.main(sys.argv[1:]))
"""


def test_ctrl_c_while_the_run_starts_stops_it_without_a_traceback(tmp_path):
    """From the session's start, a signal is noted and the run stops between
    two calls to the JVM: raised inside one (SparkContext's own handler),
    py4j logged 'KeyboardInterrupt while sending command' with a traceback."""
    run = subprocess.run([sys.executable, "-c", CTRL_C_AT_START, "run", STOCK_RULES, "--events", STOCK_EVENTS,
                          "--engine", "spark", "--conf", "spark.ui.enabled=false"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert run.returncode == cli.EXIT_INTERRUPTED, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "KeyboardInterrupt" not in run.stderr, run.stderr[-3000:]
    assert run.stderr.splitlines()[-1].startswith("cep: interrupted"), run.stderr[-3000:]
    assert run.stdout == ""


def state_sizes(spark, tmp_path, rules: str, files: int) -> list[int]:
    """The state store's size after each micro-batch of a run of `rules`
    over `files` files (one per micro-batch), as Spark reports it."""
    from cep.spark import detect

    folder = tmp_path / "in"
    if not folder.exists():
        write_pairs(folder, files)
    events = (spark.readStream.schema("s string, p string, o string, t long")
              .option("maxFilesPerTrigger", 1).parquet(str(folder)))
    query = (detect(events, rules, lateness="1 second", buckets=2).writeStream.format("noop")
             .option("checkpointLocation", str(tmp_path / f"ckpt-{len(rules)}"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    sizes = []
    for p in query.recentProgress:
        if p["numInputRows"]:
            op = p["stateOperators"][0]
            sizes.append(int(op["customMetrics"]["stateOnCurrentVersionSizeBytes"]))
    return sizes


def test_state_stops_growing_once_the_window_is_full(spark, tmp_path):
    """20 files of 4 s of events each against a 2 s window: after the
    first files the state store holds one window of goals and stays level.
    The same stream without the window keeps every goal: its state grows
    (the measure can see growth)."""
    windowed = state_sizes(spark, tmp_path, PAIRS, files=20)
    assert len(windowed) == 20
    level = max(windowed[2:5])
    assert max(windowed[5:]) <= 1.25 * level, windowed
    unbounded = state_sizes(spark, tmp_path, PAIRS.replace(
        'FILTER (getDURATION() < "PT2S"^^xsd:duration)', ""), files=20)
    assert unbounded[-1] > 2 * max(unbounded[2:5]), unbounded
    print(json.dumps({"windowed": windowed, "unbounded": unbounded}))


def test_spark_engine_with_an_ontology_prints_the_local_engines_answers(spark, capsys, tmp_path):
    """`--ontology` on both engines: a stream read as Spark's file stream,
    events matched modulo the ontology and joined with its triples."""
    rules = tmp_path / "sensors.rq"
    rules.write_text("PREFIX sosa: <http://www.w3.org/ns/sosa/>\nPREFIX : <http://example.org/sensors#>\n"
                     "REGISTER QUERY platforms AS SELECT ?p WHERE { ?p a sosa:Platform }\n"
                     "REGISTER QUERY hosted AS\n"
                     "SELECT ?obs ?station WHERE { ?obs sosa:madeBySensor ?s . ?station sosa:hosts ?s }\n")
    events = tmp_path / "events.jsonl"
    lines = []
    for i, (s, p, o) in enumerate([(":b7", "rdf:type", ":DARTBuoy"), (":o1", "sosa:madeBySensor", ":bpr21418"),
                                   (":b8", "sosa:hosts", ":x"), (":o2", "sosa:madeBySensor", ":x"),
                                   (":o3", "sosa:madeBySensor", ":nothing")]):
        full = {":": "http://example.org/sensors#", "sosa:": "http://www.w3.org/ns/sosa/",
                "rdf:": "http://www.w3.org/1999/02/22-rdf-syntax-ns#"}
        iri = [f"<{full[t[:t.index(':') + 1]]}{t[t.index(':') + 1:]}>" for t in (s, p, o)]
        lines.append(f'{{"s": "{iri[0]}", "p": "{iri[1]}", "o": "{iri[2]}", "t": {1000 * (i + 1)}}}')
    events.write_text("\n".join(lines) + "\n")
    ontology = ROOT / "ontologies" / "sensors.ttl"
    code, local, err = cep(["run", rules, "--events", events, "--ontology", ontology, "--engine", "local"], capsys)
    assert code == 0, err
    # b7 (a DARTBuoy) and b8 (hosts, domain Platform); o1 by station21418's recorder, o2 by b8's
    assert len(local.splitlines()) == 4
    code, out, err = cep(["run", rules, "--events", events, "--ontology", ontology], capsys)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(local.splitlines())


def test_spark_engine_scopes_optional_parts_as_the_local_engine(spark, capsys, tmp_path):
    """Issue 19, items 2 and 6 on both engines: an optional label found in
    the background binds; a FILTER in a group nested in an optional group
    cannot see the outer variables."""
    rules = tmp_path / "optional.rq"
    rules.write_text(f"PREFIX : <{EX}>\n"
                     "REGISTER QUERY labelled AS SELECT ?x ?l WHERE { ?x :v ?v OPTIONAL { ?x :label ?l } }\n"
                     "REGISTER QUERY nested AS SELECT ?x ?w WHERE { ?x :v ?v "
                     "OPTIONAL { { ?x :w ?w FILTER(?v = 1) } } }\n")
    ontology = tmp_path / "labels.ttl"
    ontology.write_text(f'@prefix : <{EX}> .\n:a :label "A" .\n')
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps({"s": f"<{EX}{s}>", "p": f"<{EX}{p}>", "o": o, "t": 1000 * t}) + "\n"
                              for s, p, o, t in (("a", "w", f"<{EX}x>", 1), ("a", "v", f'"1"^^<{XSD}integer>', 2),
                                                 ("b", "v", f'"2"^^<{XSD}integer>', 3))))
    code, local, err = cep(["run", rules, "--events", events, "--ontology", ontology, "--engine", "local"], capsys)
    assert code == 0, err
    answers = sorted((a["query"], json.dumps(a["bindings"], sort_keys=True)) for a in map(json.loads, local.splitlines()))
    assert answers == [
        ("labelled", json.dumps({"l": {"type": "literal", "value": "A"}, "x": {"type": "uri", "value": f"{EX}a"}},
                                sort_keys=True)),
        ("labelled", json.dumps({"x": {"type": "uri", "value": f"{EX}b"}}, sort_keys=True)),
        ("nested", json.dumps({"x": {"type": "uri", "value": f"{EX}a"}}, sort_keys=True)),
        ("nested", json.dumps({"x": {"type": "uri", "value": f"{EX}b"}}, sort_keys=True))]
    code, out, err = cep(["run", rules, "--events", events, "--ontology", ontology], capsys)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(local.splitlines())


def test_spark_engine_with_prolog_prints_the_local_engines_answers(spark, capsys, tmp_path):
    """`--prolog` on both engines: the file's text travels with the job and
    is loaded once per worker process; a test and a function, in a keyed
    SEQ condition and a SELECT expression."""
    geo = ROOT / "tests" / "unit" / "user_prolog" / "geo.pl"
    rules = tmp_path / "geo.rq"
    rules.write_text(f"PREFIX : <{EX}>\n"
                     "REGISTER QUERY near_meetings AS\n"
                     "SELECT ?a ?b WHERE { ?a :meets ?b } FILTER (near(?a, ?b))\n"
                     "REGISTER QUERY trips AS\n"
                     "SELECT ?who ?from ?to (distance_km(?from, ?to) AS ?km)\n"
                     "WHERE { ?who :at ?from } SEQ { ?who :at ?to } FILTER (distance_km(?from, ?to) < 50)\n")
    towns = ["milano", "monza", "bergamo", "roma", "nowhere"]
    lines = []
    for i in range(40):
        a, b = towns[i % 5], towns[(i * 3 + 1) % 5]
        lines.append(json.dumps({"s": f"<{EX}{a}>", "p": f"<{EX}meets>", "o": f"<{EX}{b}>", "t": 1000 * i}))
        lines.append(json.dumps({"s": f"<{EX}p{i % 4}>", "p": f"<{EX}at>", "o": f"<{EX}{b}>", "t": 1000 * i + 500}))
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join(lines) + "\n")
    code, local, err = cep(["run", rules, "--events", events, "--prolog", geo, "--engine", "local"], capsys)
    assert code == 0, err
    queries = Counter(json.loads(line)["query"] for line in local.splitlines())
    assert queries["near_meetings"] > 0 and queries["trips"] > 0
    code, out, err = cep(["run", rules, "--events", events, "--prolog", geo], capsys)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(local.splitlines())


def test_spark_engine_honours_the_policy_option(spark, capsys, tmp_path):
    """a1 a2 then b3 b4 on one key, with --policy chronological: the pairs
    (1,3) and (2,4), as on the local engine; the query annotated
    unrestricted keeps all four pairs."""
    rules, events = policy_case(tmp_path)
    argv = ["run", rules, "--events", events, "--policy", "chronological", "-q"]
    code, local, _ = cep(argv + ["--engine", "local"], capsys)
    assert code == 0
    code, out, err = cep(argv, capsys)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(local.splitlines())
    assert Counter(json.loads(line)["query"] for line in out.splitlines()) == {"plain": 2, "annotated": 4}


def test_answers_written_inside_the_input_folder_are_not_read_as_input(spark, capsys, tmp_path):
    """--out inside the events' folder (issue 17, item 6): the paper's
    query (1) on its stream, whose first answer is written before the
    input ends. With --events naming the file, Spark reads that file
    alone; with --events naming the folder, its own event files alone, as
    the local engine does: not a subfolder's (the answers of the first
    run, whose name ends in .jsonl, nor old.csv/), nor the sink's CSV
    files as they are written. Both give the local engine's answers."""
    import csv

    from cep.events import events_of
    from cep.io.readers import read_file

    folder = tmp_path / "d"
    (folder / "old.csv").mkdir(parents=True)
    rejects = []
    rows = [(e.s, e.p, e.o, e.start) for e in events_of(read_file(STOCK_EVENTS, rejects))]
    assert rows and not rejects
    for path, chosen in ((folder / "ticks.csv", rows), (folder / "old.csv" / "more.csv", rows[:4])):
        with path.open("w", newline="") as handle:
            csv.writer(handle).writerows([("s", "p", "o", "t"), *chosen])

    def spark_answers(out: Path, fmt: str) -> list:
        assert not list(out.glob("kind=[!a]*"))  # no late or rejected record
        if fmt == "jsonl":
            return sorted(r["value"] for r in spark.read.text(str(out)).collect())
        table = spark.read.csv(str(out), header=True).drop("kind", "source", "reason", "text")
        return sorted(",".join(v or "" for v in r) for r in table.collect())

    for events, fmt, out in ((folder / "ticks.csv", "jsonl", folder / "answers.jsonl"),
                             (folder, "csv", folder / "answers.csv")):
        code, local, err = cep(["run", STOCK_RULES, "--events", folder / "ticks.csv", "--engine", "local",
                                "--format", fmt, "-q"], capsys)
        assert code == 0, err
        local = local.splitlines()
        if fmt == "csv":  # the header aside; Spark writes times to the millisecond
            local = [",".join(r) for r in csv.reader(line.replace(":00Z", ":00.000Z") for line in local[1:])]
        assert len(local) == 2
        code, _, err = cep(["run", STOCK_RULES, "--events", events, "--format", fmt, "--out", out, "-q"], capsys)
        assert code == 0, err
        assert spark_answers(out, fmt) == sorted(local)


WINDOW_AT_THE_END = f"""PREFIX : <{EX}>
REGISTER QUERY per_key AS
SELECT ?k (COUNT(*) AS ?n) (SUM(?x) AS ?total)
FROM STREAM <{EX}s> [RANGE 10m STEP 1m]
WHERE {{ ?k :a ?x }} GROUP BY ?k
REGISTER QUERY unanswered AS
SELECT ?k ?x WHERE {{ {{ ?k :a ?x }} NOTSEQ "PT2M" {{ ?k :b ?y }} }}
"""


def test_windows_and_deadlines_after_the_last_watermark_answer_at_the_end_of_input(spark, capsys, tmp_path):
    """Issue 17, item 5: 300 events of 5 keys, k0's in the first 2.5
    minutes, the others' over 30. The windows (10 minutes, every minute)
    and NOTSEQ deadlines (2 minutes) of the keys' last events close after
    the last watermark, in groups where nothing waits for it any more: the
    end of the input must still evaluate them, as the local engine does at
    the end of its stream."""
    rules = tmp_path / "w.rq"
    rules.write_text(WINDOW_AT_THE_END)
    events = tmp_path / "events.jsonl"
    start = 1_767_225_600_000
    events.write_text("".join(json.dumps({
        "s": f"<{EX}k{i % 5}>", "p": f"<{EX}a>", "o": f'"{i}"^^<{XSD}integer>',
        "t": start + (i * 6_000 if i % 5 else i * 500)}) + "\n" for i in range(300)))
    code, local, err = cep(["run", rules, "--events", events, "--engine", "local", "-q"], capsys)
    assert code == 0, err
    last = start + 299 * 6_000
    closing = Counter(json.loads(line)["query"] for line in local.splitlines()
                      if cli_time(json.loads(line)["end"]) > last)
    assert closing["per_key"] >= 4 * 9 and closing["unanswered"] > 0  # what the end of input alone answers
    code, out, err = cep(["run", rules, "--events", events, "-q"], capsys)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(local.splitlines())


def cli_time(text: str) -> int:
    """Epoch ms of an answer's xsd:dateTime text."""
    from datetime import datetime

    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def test_csv_columns_of_variables_named_like_the_fixed_ones_stay_apart(spark, capsys, tmp_path):
    # a variable ?text, ?start or ?kind is a column ?text, ?start, ?kind
    rules = tmp_path / "names.rq"
    rules.write_text(f"PREFIX : <{EX}>\nSELECT ?text ?start ?kind ?x WHERE {{ ?text :a ?start . ?text :a ?kind . "
                     f"?text :a ?x }}\n")
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({"s": f"<{EX}k>", "p": f"<{EX}a>", "o": f"<{EX}v>", "t": 1_767_225_600_000}) + "\n")
    out = tmp_path / "out"
    code, _, err = cep(["run", rules, "--events", events, "--format", "csv", "--out", out], capsys)
    assert code == 0, err
    rows = spark.read.option("header", "true").csv(str(out)).where("kind = 'answer'").collect()
    assert [r.asDict() for r in rows] == [{
        "query": "names", "start": "2026-01-01T00:00:00.000Z", "end": "2026-01-01T00:00:00.000Z",
        "?text": f"<{EX}k>", "?start": f"<{EX}v>", "?kind": f"<{EX}v>", "x": f"<{EX}v>",
        "source": None, "reason": None, "text": None, "kind": "answer"}]


def test_a_local_parquet_file_holds_the_spark_engines_answer_rows_in_detects_schema(spark, capsys, tmp_path):
    # SELECT and CONSTRUCT answers in one file (the schema holds both), and a record rejected
    rules = tmp_path / "mixed.rq"
    rules.write_text(PAIRS + f"REGISTER STREAM made AS CONSTRUCT {{ ?k :c ?x }} WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} "
                             f'FILTER (getDURATION() < "PT2S"^^xsd:duration)\n')
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps({"s": f"<{EX}k{k}>", "p": f"<{EX}{p}>", "o": f'"{k}{p}"', "t": t}) + "\n"
                              for k, p, t in [(1, "a", 1000), (2, "a", 1500), (1, "b", 2000), (2, "b", 2500)])
                      + "not json\n")
    local = tmp_path / "answers.parquet"
    code, _, err = cep(["run", rules, "--events", events, "--out", local, "--engine", "local"], capsys)
    assert code == 0, err
    folder = tmp_path / "spark"
    code, _, err = cep(["run", rules, "--events", events, "--format", "parquet", "--out", folder], capsys)
    assert code == 0, err

    from cep.spark import detect

    mine = spark.read.parquet(str(local))
    assert mine.schema == detect(spark.read.json(str(events)), rules).schema  # detect's columns and types
    theirs = spark.read.parquet(str(folder)).where("kind = 'answer'").select(*mine.columns)
    assert theirs.schema == mine.schema
    key = lambda row: repr(row)  # noqa: E731
    assert sorted(theirs.collect(), key=key) == sorted(mine.collect(), key=key)
    assert Counter(r.query for r in mine.collect()) == {"pairs": 2, "made": 2}
    # read without Spark too: the same Parquet types (timestamps as int64 microseconds, UTC)
    import pyarrow.parquet as pq

    answers = pq.read_table(folder / "kind=answer").schema
    assert answers.remove_metadata() == pq.read_schema(local).remove(0).remove_metadata()
