"""`cep run --follow` on the in-process engine (cep.io.follow): a growing
file, or standard input, read as it grows; events held until the watermark
(--lateness) passes them, then processed in time order; each answer
written once the watermark passes the event that completes it; Ctrl-C
ends the input (the events held are processed) and the run, with one line."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cep import cli
from cep.events import Event, events_of, events_table
from cep.io.follow import Watermark

ROOT = Path(__file__).resolve().parents[2]
EX = "http://example.org/"
RULES = f"""PREFIX : <{EX}>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
REGISTER QUERY pairs AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT1H"^^xsd:duration)
"""
GUARD = 120.0  # seconds: a guard against a hang, not a timed assertion


def line(k: str, p: str, o: int, t: int) -> str:
    return json.dumps({"s": f"<{EX}{k}>", "p": f"<{EX}{p}>", "o": f'"{o}"', "t": t}) + "\n"


def start(tmp_path, events, *options, stdin=None):
    rules = tmp_path / "pairs.rq"
    rules.write_text(RULES)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "cep", "run", str(rules), "--events", str(events), "--follow",
                             *options], cwd=ROOT, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)


def next_line(stream) -> str:
    """The next line the run writes to `stream`, waiting for it."""
    ready, _, _ = select.select([stream], [], [], GUARD)
    assert ready, f"nothing written within {GUARD:.0f} s"
    return stream.readline()


def test_a_growing_file_answers_as_its_events_arrive_and_ctrl_c_stops_with_one_line(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text(line("k1", "a", 1, 1000))
    run = start(tmp_path, events, "--lateness", "0 seconds")  # an instant waits for a later one
    try:
        assert next_line(run.stderr).startswith("cep: running in this process")
        with events.open("a") as out:  # the event that completes the answer, appended while the run waits,
            out.write(line("k1", "b", 2, 2000) + line("k9", "c", 0, 2001))  # and one that passes it
        answer = json.loads(next_line(run.stdout))
        assert answer["query"] == "pairs" and answer["bindings"]["y"]["value"] == "2"
        assert answer["end"] == "1970-01-01T00:00:02Z"
        with events.open("a") as out:  # a line written in two parts is read once it is whole
            out.write(line("k2", "a", 3, 3000) + line("k2", "b", 4, 4000)[:20])
            out.flush()
            time.sleep(0.5)
            out.write(line("k2", "b", 4, 4000)[20:] + line("k9", "c", 0, 4001))
        assert json.loads(next_line(run.stdout))["bindings"]["x"]["value"] == "3"
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=GUARD)
    finally:
        run.kill()
    assert run.returncode == cli.EXIT_INTERRUPTED
    assert out == ""
    assert err == "cep: interrupted; 6 events processed, 2 answers written\n"


def test_standard_input_is_followed_until_it_ends(tmp_path):
    run = start(tmp_path, "-", "--events-format", "jsonl", "--rejects", tmp_path / "rejects.jsonl",
                "--lateness", "0 seconds", stdin=subprocess.PIPE)
    try:
        run.stdin.write(line("k1", "a", 1, 5000) + line("k1", "b", 2, 6000) + line("k9", "c", 0, 6001))
        run.stdin.flush()
        assert json.loads(next_line(run.stdout))["bindings"]["y"]["value"] == "2"
        # late, then a bad record: the run goes on, and ends with its input
        out, err = run.communicate(line("k1", "b", 3, 4000) + "not json\n", timeout=GUARD)
    finally:
        run.kill()
    assert run.returncode == 0, err
    assert out == ""
    rejects = {r["source"]: r["reason"] for r in map(json.loads, (tmp_path / "rejects.jsonl").read_text().splitlines())}
    assert sorted(rejects) == ["<stdin>:4", "<stdin>:5"]
    assert rejects["<stdin>:4"].startswith("late: ends at 1970-01-01T00:00:04Z, before 1970-01-01T00:00:06.001Z, "
                                           "where the watermark was")


@pytest.mark.parametrize("name, reason", [
    ("events.trig", "--follow {path}: trig cannot be followed a line at a time (a TriG statement may span lines)"),
    ("events.nq.gz", "--follow {path}: a gzip file cannot be followed as it grows"),
])
def test_what_cannot_be_followed_is_refused_with_the_reason(tmp_path, capsys, name, reason):
    events = tmp_path / name
    events.write_bytes(b"")
    rules = tmp_path / "pairs.rq"
    rules.write_text(RULES)
    code = cli.main(["run", str(rules), "--events", str(events), "--follow"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_ERROR
    assert err.startswith("cep: error: " + reason.format(path=events)), err


def test_the_watermark_gives_events_in_time_order_once_it_passes_them_and_sets_aside_those_before_it():
    late = []
    watermark = Watermark(2000, late)
    ends = lambda table: [e.end for e in events_of(table)]  # noqa: E731
    batch = lambda *times: events_table(Event(f"<{EX}k>", f"<{EX}a>", f'"{t}"', t, t, f"f:{t}") for t in times)  # noqa: E731
    assert ends(watermark.ready(batch(5000, 3000, 4000))) == []  # the watermark: 3000
    assert ends(watermark.ready(batch(7000, 2500, 3500))) == [3000, 3500, 4000]  # 5000; 2500 late
    assert [r.source for r in late] == ["f:2500"]
    assert late[0].reason.startswith("late: ends at 1970-01-01T00:00:02.5Z, before 1970-01-01T00:00:03Z")
    assert ends(watermark.rest()) == [5000, 7000]
    assert ends(watermark.rest()) == []


SHUFFLED_RULES = RULES + f"""
REGISTER QUERY counts AS
SELECT ISTREAM (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 10s TUMBLING] WHERE {{ ?k :a ?x }}
"""


def test_events_out_of_order_within_the_lateness_give_the_answers_of_the_same_events_in_order(tmp_path):
    # k2's and k3's events come in the wrong order (within the 5 s lateness): processed as they
    # came, k2:a and k3:a would be late and their pairs lost
    first = [line("k1", "a", 1, 1000), line("k2", "b", 2, 3000), line("k1", "b", 3, 2000), line("k2", "a", 4, 1500)]
    then = [line("k3", "b", 5, 9000), line("k4", "a", 6, 8000), line("k3", "a", 7, 7000), line("k4", "b", 8, 12000)]
    # the last part passes k5's pair, which the run then answers, and holds k6:b (the watermark:
    # 107 s less 5 s) until Ctrl-C, which ends the input
    last = [line("k5", "a", 9, 100000), line("k5", "b", 10, 100001), line("k6", "a", 11, 101000),
            line("k6", "b", 12, 102000), line("k9", "c", 0, 107000)]
    rules = tmp_path / "pairs.rq"
    rules.write_text(SHUFFLED_RULES)
    in_order = tmp_path / "in_order.jsonl"
    in_order.write_text("".join(sorted(first + then + last, key=lambda text: json.loads(text)["t"])))
    expected = subprocess.run([sys.executable, "-m", "cep", "run", str(rules), "--events", str(in_order), "-q"],
                              cwd=ROOT, capture_output=True, text=True, timeout=GUARD, check=True).stdout
    assert [json.loads(a)["bindings"]["x"]["value"] for a in expected.splitlines() if '"pairs"' in a] == \
        ["1", "4", "7", "6", "9", "11"]
    events = tmp_path / "events.jsonl"
    events.write_text("".join(first))
    progress = tmp_path / "progress.jsonl"
    run = subprocess.Popen([sys.executable, "-m", "cep", "run", str(rules), "--events", str(events), "--follow",
                            "--lateness", "5 seconds", "-q", "--progress-json", str(progress)], cwd=ROOT,
                           stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        with events.open("a") as out:
            out.write("".join(then))
            out.flush()
            out.write("".join(last))
        written = ""  # read from the pipe itself: several answers may come in one write
        while '"value": "9"' not in written:
            assert select.select([run.stdout], [], [], GUARD)[0], f"nothing written within {GUARD:.0f} s"
            part = os.read(run.stdout.fileno(), 1 << 16).decode()
            assert part, f"the run ended: {run.stderr.read()}"
            written += part
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=GUARD)
    finally:
        run.kill()
    assert run.returncode == cli.EXIT_INTERRUPTED, err
    # the same answers; a window reports once the watermark passes it, before the end of the input
    assert sorted((written + out).splitlines()) == sorted(expected.splitlines())
    # the progress records carry the watermark: the latest end read (k9:c, 107 s) less the lateness
    watermarks = [json.loads(record)["watermark"] for record in progress.read_text().splitlines()]
    assert None not in watermarks and watermarks == sorted(watermarks)
    assert watermarks[-1] == "1970-01-01T00:01:42.000Z"
