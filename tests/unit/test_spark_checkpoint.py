"""What a Spark run checks before it resumes a checkpoint, and what a
followed run says of files it does not read (cep.spark.checkpoint,
cep.spark.job), without Spark: tests/spark/test_checkpoint.py has the
runs themselves."""

from __future__ import annotations

import pytest

from cep.spark import checkpoint, job, sources


@pytest.mark.parametrize("name, text, sources_count, good", [
    ("metadata", '{"id":"5f0c"}', None, True),
    ("metadata", '{"id":', None, False),
    ("metadata", "", None, False),
    ("1", 'v1\n{"batchWatermarkMs":0}\n{"logOffset":0}\n-', 2, True),
    ("1", 'v1\n{"batchWatermarkMs":0}\n{"logOffset":0}', 2, False),  # a source's line cut off
    ("1", 'v1\n{"batchWatermarkMs":0}\n{"logOff', 1, False),
    ("1", "", 1, False),
    ("1", 'v1\n{"nextBatchWatermarkMs":0}', None, True),
    ("1", "v1\n", None, True),  # Spark reads a commit with no line as committed
    ("1", '{"path":"file:///x"}', None, False),  # no version line
    ("0", 'v1\n{"path":"file:///x","timestamp":1,"batchId":0}\n{"pa', None, False),
])
def test_a_log_file_is_checked_as_spark_writes_it(tmp_path, name, text, sources_count, good):
    path = tmp_path / name
    path.write_text(text)
    assert checkpoint._well_formed(path, sources_count) is good


def _record(**changes):
    was = {"checkpoint": "/c", "rules": "r1", "policy": None, "ontology": None, "prolog": None,
           "lateness": "10 seconds", "buckets": 8, "state": "s", "events": ["/in"], "streams": [],
           "out": "/o", "format": "jsonl", "times": None}
    return {**was, **changes}


@pytest.mark.parametrize("changes, said", [
    ({}, []),
    ({"lateness": "10000 ms"}, []),  # the same interval, written otherwise
    ({"lateness": "1 minute"}, ["--lateness differs: was '10 seconds', now '1 minute'"]),
    ({"rules": "r2"}, ["the rules differ (their queries, the queries' order or their text)"]),
    ({"rules": "r2", "policy": "chronological"}, ["--policy differs: was none, now chronological"]),
    ({"rules": "r2", "ontology": "cep_bg_2"}, ["the background knowledge differs (the --ontology files, or the "
                                               "files the rules read by FROM)"]),
    ({"prolog": "cep_user_2"}, ["the --prolog files differ"]),
    ({"out": None, "format": None}, ["--out differs: was /o, now standard output"]),
    ({"format": "csv"}, ["--format differs: was jsonl, now csv"]),
    ({"events": ["/in", "/more"]}, ["--events differs: was /in, now /in /more"]),
    ({"buckets": 4}, ["the buckets differ: was 8, now 4"]),
    ({"times": ["<g>", "<s>", "<e>"]}, ["the time predicates differ (--time-predicate, --start-predicate, "
                                        "--end-predicate, --interval-predicate): was PROV, now <g> <s> <e>"]),
    ({"state": "t"}, ["the state's layout differs (the checkpoint was made by another version of cep)"]),
])
def test_what_differs_from_the_run_that_made_a_checkpoint(changes, said):
    assert checkpoint._differences(_record(), _record(**changes)) == said


def test_a_followed_run_says_once_when_files_of_a_type_it_does_not_read_appear(tmp_path):
    (tmp_path / "a.jsonl").write_text("")
    streams = sources.sources([tmp_path], follow=True)
    assert [s.fmt for s in streams] == ["jsonl"]
    said = []
    job._warn_unread(streams, set(), said.append)
    assert said == []
    told = set()
    (tmp_path / "b.csv").write_text("")
    (tmp_path / "sub.csv").mkdir()  # not a file: not an event file of the folder
    for _ in range(2):
        job._warn_unread(streams, told, said.append)
    assert said == [f"warning: {tmp_path}: .csv event files have appeared (b.csv ...), which this run does not "
                    "read: it reads the folder's .jsonl files, the types it held when the run began; give them "
                    "to a run of their own"]


def test_a_checkpoint_is_taken_as_new_until_spark_has_planned_a_batch(tmp_path):
    """A checkpoint whose run stopped before Spark planned a batch holds no
    state: another run may take it (and records itself). Once there is an
    offsets file, only the same run may; a Spark checkpoint with offsets
    and no record is refused, and so is a damaged Spark metadata file."""
    from cep.errors import CheckpointError

    folder = tmp_path / "c"
    folder.mkdir()
    first = _record(checkpoint=str(folder), out=None, format=None)
    assert checkpoint.resume(folder, first) is None
    other = {**first, "lateness": "1 minute"}
    assert checkpoint.resume(folder, other) is None  # no batch yet: taken, and recorded
    (folder / "offsets").mkdir()
    (folder / "offsets" / "0").write_text('v1\n{"batchWatermarkMs":0}\n{"logOffset":0}\n')
    assert checkpoint.resume(folder, other) == []
    with pytest.raises(CheckpointError, match="--lateness differs: was '1 minute', now '10 seconds'"):
        checkpoint.resume(folder, first)
    (folder / checkpoint.RECORD).unlink()
    with pytest.raises(CheckpointError, match="no record of the run that made it"):
        checkpoint.resume(folder, first)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "metadata").write_text('{"id":')
    with pytest.raises(CheckpointError, match="metadata is damaged"):
        checkpoint.resume(fresh, {**first, "checkpoint": str(fresh)})


def test_a_checkpoint_records_the_interval_predicate(tmp_path):
    """A run that reads intervals through a node (--interval-predicate) and
    one that does not time events differently: the record tells them apart."""
    from types import SimpleNamespace

    from cep.io.event_time import time_predicates

    def made(times):
        options = SimpleNamespace(policy=None, background=None, prolog=None, lateness="10 seconds", times=times,
                                  buckets=8, events=[], out=None, fmt="jsonl")
        return checkpoint.record(SimpleNamespace(rules_hash="r1"), options, [], tmp_path)

    ex = "http://example.org/"
    plain = made(time_predicates(None, ex + "startsAt", ex + "endsAt"))
    through = made(time_predicates(None, ex + "startsAt", ex + "endsAt", ex + "validBetween"))
    assert through["times"] == plain["times"] + [f"<{ex}validBetween>"]
    assert checkpoint._differences(plain, through) == [
        "the time predicates differ (--time-predicate, --start-predicate, --end-predicate, --interval-predicate): "
        f"was <http://www.w3.org/ns/prov#generatedAtTime> <{ex}startsAt> <{ex}endsAt>, now "
        f"<http://www.w3.org/ns/prov#generatedAtTime> <{ex}startsAt> <{ex}endsAt> <{ex}validBetween>"]
