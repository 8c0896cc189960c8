"""A new user's first minute with `cep run` (issue 22, item 6): the engine
a user expects when none is asked for (in process for event files, Spark
for a folder of events or a Spark option), said on stderr; rule files
before or after the options; `cep --version`."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from cep import cli

ROOT = Path(__file__).resolve().parents[2]
STOCK_RULES = ROOT / "rules" / "stock.rq"
STOCK_EVENTS = ROOT / "examples" / "stock" / "ticks.trig"


def cep(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_event_files_run_in_process_by_default_and_say_so(capsys):
    code, out, err = cep(["run", STOCK_RULES, "--events", STOCK_EVENTS], capsys)
    assert code == 0, err
    assert err.splitlines()[0] == "cep: running in this process (event files; --engine spark runs on Spark)"
    assert [json.loads(line)["query"] for line in out.splitlines()] == ["crash_recovery"] * 2
    code, chosen, err = cep(["run", STOCK_RULES, "--events", STOCK_EVENTS, "--engine", "local"], capsys)
    assert code == 0 and chosen == out
    assert "running in" not in err  # the user chose it


def test_rule_files_may_follow_the_options(capsys):
    code, before, _ = cep(["run", STOCK_RULES, "--events", STOCK_EVENTS, "-q"], capsys)
    assert code == 0
    code, after, err = cep(["run", "-q", "--events", STOCK_EVENTS, STOCK_RULES], capsys)
    assert code == 0, err
    assert after == before and after


def test_a_run_without_rules_says_so(capsys):
    code, out, err = cep(["run", "--events", STOCK_EVENTS], capsys)
    assert code == 2 and out == ""
    assert err == "cep: error: no rule file given (RULES.rq, before --events or after it)\n"


@pytest.mark.parametrize("options, engine, reason", [
    ([], "local", "event files"),
    (["--engine", "spark"], "spark", "--engine"),
    (["--master", "spark://h:7077"], "spark", "--master"),
    (["--conf", "spark.cores.max=2"], "spark", "--conf"),
    (["--follow"], "local", "event files"),  # followed as it grows, in process (cep.io.follow)
    (["--progress-json", "p.jsonl"], "local", "event files"),  # both engines write it
    (["--checkpoint", "ckpt"], "spark", "--checkpoint"),
    (["--format", "parquet", "--out", "o.parquet"], "local", "event files"),  # written in process too
])
def test_the_default_engine(options, engine, reason):
    args = cli.build_parser().parse_args(["run", str(STOCK_RULES), "--events", str(STOCK_EVENTS), *options])
    assert cli._engine(args) == (engine, reason)


def test_a_folder_of_events_is_a_stream_for_spark(tmp_path):
    args = cli.build_parser().parse_args(["run", str(STOCK_RULES), "--events", str(STOCK_EVENTS), str(tmp_path)])
    assert cli._engine(args) == ("spark", "a folder of events")
    named = cli.build_parser().parse_args(["run", str(STOCK_RULES), "--events", f"http://ex.org/s={tmp_path}"])
    assert cli._engine(named) == ("spark", "a folder of events")


def test_version(capsys):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    code, out, _ = cep(["--version"], capsys)
    assert code == 0 and out == f"cep {version} (the ep-sparql distribution)\n"


@pytest.mark.parametrize("argv, command", [
    (["run", STOCK_RULES, "--events", STOCK_EVENTS, "--bogus"], "cep run"),
    (["explain", STOCK_RULES, "--bogus"], "cep explain"),
    (["--bogus"], "cep"),
])
def test_an_unknown_option_is_reported_for_its_command(capsys, argv, command):
    code, out, err = cep(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"usage: {command} ")
    assert err.endswith(f"{command}: error: unrecognized arguments: --bogus\n")


def test_lateness_without_follow_says_it_has_no_effect(tmp_path, capsys):
    """A run in this process without --follow reads its input whole in time
    order (as a batch query, where Spark ignores a watermark): an event far
    behind a later one is not late, and an explicit --lateness is said to
    do nothing there."""
    rules = tmp_path / "r.rq"
    rules.write_text("PREFIX ex: <http://example.org/>\nSELECT ?o WHERE { ?s ex:p ?o }\n")
    time = '"2026-01-01T00:00:{:02d}Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    events = tmp_path / "e.nq"
    events.write_text("".join(f'<http://example.org/s> <http://example.org/p> "{i}" <http://example.org/g{i}> .\n'
                              f"<http://example.org/g{i}> <http://www.w3.org/ns/prov#generatedAtTime> "
                              f"{time.format(s)} .\n" for i, s in ((1, 30), (2, 0))))  # 30 s out of order
    code, plain, err = cep(["run", rules, "--events", events, "-q", "--strict"], capsys)
    assert code == 0 and err == ""
    assert [json.loads(line)["bindings"]["o"]["value"] for line in plain.splitlines()] == ["2", "1"]
    code, out, err = cep(["run", rules, "--events", events, "-q", "--strict", "--lateness", "1 second"], capsys)
    assert code == 0 and out == plain  # nothing is late
    assert err == ("cep: warning: --lateness '1 second' has no effect without --follow in this process: the input "
                   "is read whole and processed in time order, so no event is late\n")
    code, out, err = cep(["run", rules, "--events", events, "-q", "--lateness", "1 fortnight"], capsys)
    assert code == 2 and "unknown unit 'fortnight'" in err
