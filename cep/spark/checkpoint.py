"""Resuming a Spark checkpoint (`cep run --checkpoint DIR`): what the run
that made it was, and what stops a run from resuming it, as messages.

A checkpoint holds the partial matches of one compiled rule set, its
events' positions in the input files, and absolute paths (of its own
folder, the input and the file sink). A run that resumes it with other
rules or options would give wrong answers silently (Spark checks only the
shape of the state, not its meaning), so the first run writes a record of
what shapes the state and the output (RECORD, in the checkpoint), and a
later run with a different one stops, naming what differs. Damage (a
truncated log, an unreadable state file) is found before the query starts
where a file can be checked (check_logs), or recognised in Spark's error
(cep.spark.failures: the state files); either way the message names the
checkpoint.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from cep.errors import CheckpointError, UsageError

RECORD = "cep-run.json"
START_AGAIN = "start again with a new --checkpoint folder (and a new --out)"


def record(spec, options, streams, checkpoint: Path) -> dict:
    """What shapes a run's state and output: the compiled rule set, the
    options the state depends on, the input streams, and where the
    answers go."""
    from cep.io.event_time import PROV_TIMES
    from cep.spark import worker

    return {
        "checkpoint": str(checkpoint),
        "rules": spec.rules_hash,
        "policy": options.policy,
        "ontology": options.background.module if options.background is not None else None,
        "prolog": options.prolog.module if options.prolog is not None else None,
        "lateness": options.lateness,
        "times": list(options.times.all) if options.times is not None and options.times != PROV_TIMES else None,
        "buckets": options.buckets,
        "state": worker.STATE_DDL,
        "events": [_absolute(e) for e in options.events],
        "streams": [asdict(s) for s in streams],
        "out": str(Path(options.out).resolve()) if options.out else None,
        "format": options.fmt if options.out else None,
    }


def _absolute(given) -> str:
    """An --events argument with its path made absolute."""
    from cep.io.readers import split_stream

    from cep.io.readers import SOCKET

    stream, raw = split_stream(given)
    return (f"{stream}=" if stream else "") + (raw if raw.startswith(SOCKET) else str(Path(raw).resolve()))


def resume(checkpoint: Path, now: dict) -> list | None:
    """Check that the run `now` (record()) may resume `checkpoint`; raise
    CheckpointError (or UsageError, for --out) when not. Returns the input
    streams the checkpoint was made with (cep.spark.sources.Source), or
    None for a new checkpoint (one where Spark has not planned a batch),
    whose record it writes."""
    from cep.spark.sources import Source, unread

    path = checkpoint / RECORD
    started = any((checkpoint / "offsets").glob("[0-9]*"))  # Spark planned a batch: there is state
    if not (path.exists() and started):
        if started:
            raise CheckpointError(f"checkpoint {checkpoint}: a Spark checkpoint with no record of the run that "
                                  f"made it ({RECORD}: made by an older cep, or not by `cep run`): {START_AGAIN}")
        check_logs(checkpoint, len(now["streams"]) + 1)  # Spark's metadata, which it may have written
        _check_new_out(now["out"])
        path.write_text(json.dumps(now, indent=1) + "\n")
        return None
    try:
        was = json.loads(path.read_text())
        was_streams = [Source(**s) for s in was["streams"]]
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise CheckpointError(f"checkpoint {checkpoint}: {RECORD} is damaged ({exc}): {START_AGAIN}") from None
    if was.get("checkpoint") != now["checkpoint"]:
        raise CheckpointError(
            f"checkpoint {checkpoint} was made at {was.get('checkpoint')} and cannot be moved (Spark's checkpoint "
            f"holds absolute paths): move it back to {was.get('checkpoint')}, or {START_AGAIN}")
    differences = _differences(was, now)
    if differences:
        raise CheckpointError(f"checkpoint {checkpoint} was made by a different run: " + "; ".join(differences)
                              + ". A checkpoint resumes the run that made it, with its rules and options: "
                              f"give them again, or {START_AGAIN}")
    new_types = unread(was_streams)
    if new_types:
        folder, fmt, first = new_types[0]
        raise CheckpointError(f"{folder}: holds .{fmt} event files ({first.name} ...) now, which the run of "
                              f"checkpoint {checkpoint} does not read: {reads(was_streams, folder)}. Move them to "
                              f"another folder (and give it to a new run), or {START_AGAIN}")
    check_logs(checkpoint, len(was_streams) + 1)
    return was_streams


def reads(streams, folder: str) -> str:
    """What the streams of a run read of a folder, in words."""
    held = ", ".join(f".{s.fmt}" for s in streams if s.path == folder)
    return f"it reads the folder's {held} files, the types it held when the run began"


def _differences(was: dict, now: dict) -> list[str]:
    from cep.spark import interval_ms

    def shown(value, none="none"):
        return none if value is None else " ".join(value) if isinstance(value, list) else str(value)

    out = []
    for key, option, none in (("events", "--events", ""), ("out", "--out", "standard output"),
                              ("format", "--format", ""), ("policy", "--policy", "none")):
        if was.get(key) != now[key] and (key != "format" or was.get("out") == now["out"]):
            out.append(f"{option} differs: was {shown(was.get(key), none)}, now {shown(now[key], none)}")
    if interval_ms(str(was.get("lateness"))) != interval_ms(now["lateness"]):
        out.append(f"--lateness differs: was '{was.get('lateness')}', now '{now['lateness']}'")
    if was.get("ontology") != now["ontology"]:
        out.append("the background knowledge differs (the --ontology files, or the files the rules read by FROM)")
    if was.get("prolog") != now["prolog"]:
        out.append("the --prolog files differ")
    if was.get("times") != now["times"]:
        out.append(f"the time predicates differ (--time-predicate, --start-predicate, --end-predicate, "
                   f"--interval-predicate): was "
                   f"{shown(was.get('times'), 'PROV')}, now {shown(now['times'], 'PROV')}")
    if was.get("buckets") != now["buckets"]:
        out.append(f"the buckets differ: was {shown(was.get('buckets'))}, now {shown(now['buckets'])}")
    if was.get("state") != now["state"]:
        out.append("the state's layout differs (the checkpoint was made by another version of cep)")
    if was.get("rules") != now["rules"] and not any(d.startswith(("--policy", "the background", "the --prolog"))
                                                    for d in out):
        out.append("the rules differ (their queries, the queries' order or their text)")
    return out


def _check_new_out(out: str | None) -> None:
    """A new run's --out must not hold a file sink's log: Spark's file sink
    skips the batches that log lists as written, so a new run would write
    nothing for them."""
    if out is None:
        return
    log = Path(out) / "_spark_metadata"
    if log.is_dir() and any(not p.name.startswith(".") for p in log.iterdir()):
        raise UsageError(f"--out {out}: holds the answers of an earlier run ({log}), which a new run would not "
                         "replace: give a new --out folder (or remove this one), or resume the earlier run with "
                         "its --checkpoint")


def check_logs(checkpoint: Path, sources: int) -> None:
    """The files of Spark's logs that a restart reads (its metadata, the
    last offsets and commit, each source's files from its last compaction
    on) hold what Spark writes: a version line, then JSON lines (offsets:
    one per source, "-" for none); CheckpointError naming the first file
    that does not."""
    logs = [checkpoint / "metadata"]
    for name in ("offsets", "commits"):
        batches = [p for p in (checkpoint / name).glob("*") if p.name.isdigit()]
        if batches:
            logs.append(max(batches, key=lambda p: int(p.name)))
    for folder in sorted((checkpoint / "sources").glob("*")):
        batches = {p: int(p.name.split(".")[0]) for p in folder.glob("*")
                   if p.name.split(".")[0].isdigit() and p.suffix in ("", ".compact")}
        since = max((n for p, n in batches.items() if p.suffix == ".compact"), default=0)
        logs += sorted((p for p, n in batches.items() if n >= since), key=batches.get)
    for path in logs:
        if path.exists() and not _well_formed(path, sources if path.parent.name == "offsets" else None):
            raise CheckpointError(f"checkpoint {checkpoint}: {path.relative_to(checkpoint)} is damaged (truncated, "
                                  f"or not what Spark writes): the run cannot resume from it; {START_AGAIN}")


def _well_formed(path: Path, sources: int | None) -> bool:
    """Whether a log file is a version line and JSON lines (an offsets
    file: one for the batch, then one per source, "-" for none; the
    metadata file: JSON alone)."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.name == "metadata":
            json.loads(text)
            return True
        version, *lines = text.splitlines() or [""]
        if not (version[:1] == "v" and version[1:].isdigit()):
            return False
        if sources is not None and len(lines) != 1 + sources:
            return False
        for i, line in enumerate(lines):
            if not (sources is not None and i > 0 and line == "-"):
                json.loads(line)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return True
