"""Resuming a Spark checkpoint (`cep run --checkpoint`, cep.spark.checkpoint):
a run resumes only the run that made its checkpoint (the same rules,
options, input and output); any other, and a damaged or moved checkpoint,
exits 2 with a message that names the checkpoint and what differs, never
"internal error" nor answers computed from another rule set's state."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from cep import cli

pytestmark = pytest.mark.spark
EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PAIRS = f"""REGISTER QUERY pairs AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT2S"^^xsd:duration)
"""
DROPS = f"""REGISTER QUERY drops AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :a ?y }} FILTER (?y < ?x - 5 && getDURATION() < "PT1S"^^xsd:duration)
"""
COUNTS = f"""REGISTER QUERY counts AS
SELECT ?k (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 10s STEP 5s] WHERE {{ ?k :a ?x }} GROUP BY ?k
"""
PREFIXES = f"PREFIX : <{EX}>\nPREFIX xsd: <{XSD}>\n"


def cep(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write_events(path: Path, part: int, n: int = 300) -> None:
    """JSON Lines of :a and :b events over 7 keys, 100 ms apart; part p
    follows part p - 1 in time."""
    lines = []
    for i in range(part * n, (part + 1) * n):
        lines.append(json.dumps({"s": f"<{EX}k{i % 7}>", "p": f"<{EX}{'ab'[i * 5 // 7 % 2]}>",
                                 "o": f'"{i * 37 % 21}"^^<{XSD}integer>', "t": 1_767_225_600_000 + 100 * i}))
    path.write_text("\n".join(lines) + "\n")


def file_answers(spark, out: Path) -> Counter:
    return Counter(r["value"] for r in spark.read.text(str(out)).where("kind = 'answer'").collect())


def test_a_checkpoint_resumes_only_the_run_that_made_it(spark, capsys, tmp_path):
    """A first run over part 0; part 1 comes. A rerun that differs in its
    rules (queries reordered, a constant changed, a window added: a state
    of another layout), in an option that shapes the state or the output
    (--lateness, --policy, --out, --format, --events), or whose folder now
    holds events of a type the checkpoint's run does not read, exits 2
    naming the checkpoint and the difference; so does the checkpoint
    copied elsewhere, and a new checkpoint with the first run's --out
    (whose file sink would skip the batches it lists). None of them
    touches the checkpoint: the same run then resumes, and its answers are
    the local engine's over both parts."""
    rules = tmp_path / "r.rq"
    rules.write_text(PREFIXES + PAIRS + DROPS)
    variants = {"reordered": PREFIXES + DROPS + PAIRS, "constant": PREFIXES + PAIRS + DROPS.replace("- 5", "- 6"),
                "windowed": PREFIXES + PAIRS + DROPS + COUNTS}
    for name, text in variants.items():
        (tmp_path / f"{name}.rq").write_text(text)
    events, checkpoint, out = tmp_path / "in", tmp_path / "c", tmp_path / "o"
    events.mkdir()
    write_events(events / "part0.jsonl", 0)
    common = ["--events", events, "--lateness", "1 second", "-q"]
    code, _, err = cep(["run", rules, *common, "--checkpoint", checkpoint, "--out", out], capsys)
    assert code == 0, err
    write_events(events / "part1.jsonl", 1)
    (events / "part2.csv").write_text("s,p,o,t\n")
    moved = tmp_path / "moved"
    shutil.copytree(checkpoint, moved)
    refused = [
        (["run", tmp_path / "reordered.rq", *common, "--checkpoint", checkpoint, "--out", out], "the rules differ"),
        (["run", tmp_path / "constant.rq", *common, "--checkpoint", checkpoint, "--out", out], "the rules differ"),
        (["run", tmp_path / "windowed.rq", *common, "--checkpoint", checkpoint, "--out", out], "the rules differ"),
        (["run", rules, *common, "--lateness", "2 seconds", "--checkpoint", checkpoint, "--out", out],
         "--lateness differs: was '1 second', now '2 seconds'"),
        (["run", rules, *common, "--policy", "chronological", "--checkpoint", checkpoint, "--out", out],
         "--policy differs: was none, now chronological"),
        (["run", rules, *common, "--checkpoint", checkpoint, "--out", tmp_path / "o2"],
         f"--out differs: was {out}, now {tmp_path / 'o2'}"),
        (["run", rules, *common, "--checkpoint", checkpoint, "--out", out, "--format", "csv"],
         "--format differs: was jsonl, now csv"),
        (["run", rules, *common, "--checkpoint", checkpoint], f"--out differs: was {out}, now standard output"),
        (["run", rules, "--events", events / "part1.jsonl", *common[2:], "--checkpoint", checkpoint, "--out", out],
         f"--events differs: was {events}, now {events / 'part1.jsonl'}"),
        (["run", rules, *common, "--checkpoint", checkpoint, "--out", out, "--follow"],
         f"{events}: holds .csv event files (part2.csv ...) now, which the run of checkpoint {checkpoint} "
         "does not read"),
        (["run", rules, *common, "--checkpoint", moved, "--out", out],
         f"checkpoint {moved} was made at {checkpoint} and cannot be moved"),
        (["run", rules, *common, "--checkpoint", tmp_path / "new", "--out", out],
         f"--out {out}: holds the answers of an earlier run"),
    ]
    for argv, message in refused:
        code, _, err = cep(argv, capsys)
        assert code == 2 and message in err and "internal error" not in err, (argv, err)
    (events / "part2.csv").unlink()
    code, _, err = cep(["run", rules, *common, "--checkpoint", checkpoint, "--out", out], capsys)
    assert code == 0, err
    code, local, err = cep(["run", rules, "--events", events, "--engine", "local", "-q"], capsys)
    assert code == 0, err
    expected = Counter(local.splitlines())
    assert sum(expected.values()) > 100 and file_answers(spark, out) == expected


def _latest(folder: Path) -> Path:
    return max((p for p in folder.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])


def _spoil_state(checkpoint: Path) -> None:
    """Every state file of the last version: bytes that are no state."""
    deltas = list((checkpoint / "state").rglob("*.delta"))
    last = max(int(p.stem) for p in deltas)
    for p in deltas:
        if int(p.stem) == last:
            p.write_bytes(b"\xff" * max(64, len(p.read_bytes())))


def test_a_damaged_checkpoint_is_named(spark, capsys, tmp_path):
    """A truncated offsets file, metadata file or source log, and state
    files of garbage: each exits 2 naming the checkpoint (and the file,
    where one can be checked before Spark starts), not as an internal
    error."""
    rules = tmp_path / "r.rq"
    rules.write_text(PREFIXES + PAIRS + DROPS)
    events, checkpoint = tmp_path / "in", tmp_path / "c"
    events.mkdir()
    write_events(events / "part0.jsonl", 0)
    argv = ["run", rules, "--events", events, "--lateness", "1 second", "-q", "--checkpoint", checkpoint]
    code, _, err = cep(argv, capsys)
    assert code == 0, err
    write_events(events / "part1.jsonl", 1)
    kept = tmp_path / "kept"
    shutil.copytree(checkpoint, kept)
    offsets = _latest(checkpoint / "offsets").relative_to(checkpoint)
    damages = [
        (lambda: _truncate(checkpoint / offsets), f"checkpoint {checkpoint}: {offsets} is damaged"),
        (lambda: _truncate(checkpoint / "metadata"), f"checkpoint {checkpoint}: metadata is damaged"),
        (lambda: _truncate(checkpoint / "sources" / "0" / "0"), f"checkpoint {checkpoint}: sources/0/0 is damaged"),
        (lambda: _spoil_state(checkpoint), f"checkpoint {checkpoint}: its state (under {checkpoint}/state) "
                                           "cannot be read"),
    ]
    for damage, message in damages:
        shutil.rmtree(checkpoint)
        shutil.copytree(kept, checkpoint)  # in its place: a checkpoint cannot move
        damage()
        code, _, err = cep(argv, capsys)
        assert code == 2 and message in err and "internal error" not in err, (message, err)
