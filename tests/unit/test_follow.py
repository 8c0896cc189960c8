"""`cep run --follow` on the in-process engine (cep.io.follow): a growing
file, or standard input, read as it grows; each answer written as soon as
the event that completes it is there; Ctrl-C ends the run with one line."""

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
    run = start(tmp_path, events)
    try:
        assert next_line(run.stderr).startswith("cep: running in this process")
        with events.open("a") as out:  # the event that completes the answer, appended while the run waits
            out.write(line("k1", "b", 2, 2000))
        answer = json.loads(next_line(run.stdout))
        assert answer["query"] == "pairs" and answer["bindings"]["y"]["value"] == "2"
        assert answer["end"] == "1970-01-01T00:00:02Z"
        with events.open("a") as out:  # a line written in two parts is read once it is whole
            out.write(line("k2", "a", 3, 3000) + line("k2", "b", 4, 4000)[:20])
            out.flush()
            time.sleep(0.5)
            out.write(line("k2", "b", 4, 4000)[20:])
        assert json.loads(next_line(run.stdout))["bindings"]["x"]["value"] == "3"
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=GUARD)
    finally:
        run.kill()
    assert run.returncode == cli.EXIT_INTERRUPTED
    assert out == ""
    assert err == "cep: interrupted; 4 events processed, 2 answers written\n"


def test_standard_input_is_followed_until_it_ends(tmp_path):
    run = start(tmp_path, "-", "--events-format", "jsonl", "--rejects", tmp_path / "rejects.jsonl",
                stdin=subprocess.PIPE)
    try:
        run.stdin.write(line("k1", "a", 1, 5000) + line("k1", "b", 2, 6000))
        run.stdin.flush()
        assert json.loads(next_line(run.stdout))["bindings"]["y"]["value"] == "2"
        # late, then a bad record: the run goes on, and ends with its input
        out, err = run.communicate(line("k1", "b", 3, 4000) + "not json\n", timeout=GUARD)
    finally:
        run.kill()
    assert run.returncode == 0, err
    assert out == ""
    rejects = {r["source"]: r["reason"] for r in map(json.loads, (tmp_path / "rejects.jsonl").read_text().splitlines())}
    assert sorted(rejects) == ["<stdin>:3", "<stdin>:4"]
    assert rejects["<stdin>:3"].startswith("late: ends at 1970-01-01T00:00:04Z")


@pytest.mark.parametrize("name, reason", [
    ("events.trig", "--follow {path}: trig cannot be followed a line at a time (a TriG file is parsed whole)"),
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
