"""Progress of an in-process run as JSON lines (`cep run --progress-json
FILE` on the local engine), for a monitoring agent to tail: one object per
input batch, with the fields of the Spark engine's records
(cep.spark.progress) that mean the same thing here, under the same names:

    {"time": "2026-11-25T15:02:11.204Z", "run": "5f0c...", "batch": 0, "rows": 50000,
     "input_rows_per_second": 41210.3, "processed_rows_per_second": 61728.4,
     "duration_ms": 810, "watermark": "2026-01-05T10:00:00.000Z",
     "state_groups": 1, "state_bytes": 120295, "answers": 12, "late": 0, "rejected": 1}

time: when the batch came in (UTC); run: an id of the run, new for each run
(the records of several runs may be appended to one file); batch: 0, 1, ...;
rows: the events of the batch; input_rows_per_second: rows over the time
since the previous record (reading, sorting or waiting for the input
included, as Spark's rate counts the time between its micro-batches);
duration_ms and processed_rows_per_second: the time the engine and the
answer writer took for the batch, and rows over it; watermark: with
--follow, the latest event end read less --lateness, once an event is read
(cep.io.follow), else null: a run without --follow reads its whole input in
time order and has none, as a batch query in Spark has none; state_groups:
1 (one engine holds the whole stream's state, where Spark keeps a state per
group); state_bytes: the size of the engine's state (Engine.state_size, as
bench/memory.py measures it); answers, late and rejected: the answers
written, the events refused as late, and the input records rejected, since
the previous record.

Measuring the state serializes it, which costs more as it grows (about 7%
of the engine's time for a 7 MB state, measured at every batch of 50,000
events): it is measured again only once the run has gone on for
STATE_SPACING times what the last measure cost, and a record between two
measures repeats the last (at most about 2% of the run's time).

The end of the input (instants and windows closed at its end) and, with
--follow, a pause that completed answers or found late events, have a
record of their own with rows 0. There is no dropped_by_watermark: the
local engine drops nothing itself, it reports late events (late).
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta, timezone


# the run goes on this many times what a measure of the state cost before the next one
STATE_SPACING = 50


class ProgressLog:
    """Appends a record to `path` for each batch noted (see the module's
    docstring); `state_size`: a function giving the engine's state size in
    bytes (Engine.state_size)."""

    def __init__(self, path, state_size):
        self.handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self.run = str(uuid.uuid4())
        self.batch = 0
        self.last = time.monotonic()  # when the previous record was written (or the run began)
        self.late = self.rejected = 0  # the totals so far
        self.state_size = state_size
        self.state = None  # the last measure of the state's size
        self.measure_due = 0.0  # when (time.monotonic()) to measure it again

    def note(self, rows: int, began: float, answers: int, late: int, rejected: int, watermark: int | None = None,
             always: bool = True) -> None:
        """A batch of `rows` events, whose processing began at `began`
        (time.monotonic()) and has just ended, gave `answers`; `late` and
        `rejected` are the run's totals so far; `watermark` (ms) the
        followed run's. `always`: False writes no record for a batch that
        read, found and gave nothing (a pause)."""
        now = time.monotonic()
        new_late, new_rejected = late - self.late, rejected - self.rejected
        if not (always or rows or answers or new_late or new_rejected):
            return
        if now >= self.measure_due:
            self.state = self.state_size()
            cost = time.monotonic() - now
            self.measure_due = now + STATE_SPACING * cost
        seconds, interval = now - began, now - self.last
        record = {
            "time": _utc(datetime.now(timezone.utc) - timedelta(seconds=seconds)),
            "run": self.run, "batch": self.batch, "rows": rows,
            "input_rows_per_second": round(rows / interval, 1) if interval > 0 else None,
            "processed_rows_per_second": round(rows / seconds, 1) if seconds > 0 else None,
            "duration_ms": round(seconds * 1000),
            "watermark": None if watermark is None else _watermark(watermark),
            "state_groups": 1, "state_bytes": self.state,
            "answers": answers, "late": new_late, "rejected": new_rejected,
        }
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()
        self.batch += 1
        self.last, self.late, self.rejected = now, late, rejected

    def close(self) -> None:
        self.handle.close()


def _utc(moment: datetime) -> str:
    """A time as Spark's progress writes it: 2026-11-25T11:37:15.917Z."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _watermark(ms: int) -> str:
    try:
        return _utc(datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms))
    except OverflowError:  # beyond the years datetime holds: XSD's form
        from cep.terms import format_datetime_ms

        return format_datetime_ms(ms)
