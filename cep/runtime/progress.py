"""Progress of an in-process run as JSON lines (`cep run --progress-json
FILE` on the local engine), for a monitoring agent to tail: one object per
input batch, with the fields of the Spark engine's records
(cep.spark.progress) that mean the same thing here, under the same names:

    {"time": "2026-11-25T15:02:11.204Z", "run": "5f0c...", "batch": 0, "rows": 50000,
     "input_rows_per_second": 41210.3, "processed_rows_per_second": 61728.4,
     "duration_ms": 810, "answers": 12, "late": 0, "rejected": 1}

time: when the batch came in (UTC); run: an id of the run, new for each run
(the records of several runs may be appended to one file); batch: 0, 1, ...;
rows: the events of the batch; input_rows_per_second: rows over the time
since the previous record (reading, sorting or waiting for the input
included, as Spark's rate counts the time between its micro-batches);
duration_ms and processed_rows_per_second: the time the engine and the
answer writer took for the batch, and rows over it; answers, late and
rejected: the answers written, the events refused as late, and the input
records rejected, since the previous record.

The end of the input (instants and windows closed at its end) and, with
--follow, a pause that completed answers or found late events, have a
record of their own with rows 0. There is no watermark, no state size and
no dropped_by_watermark: the local engine reads its input in time order,
and its state's size is not known without serializing the state.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta, timezone


class ProgressLog:
    """Appends a record to `path` for each batch noted (see the module's
    docstring)."""

    def __init__(self, path):
        self.handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self.run = str(uuid.uuid4())
        self.batch = 0
        self.last = time.monotonic()  # when the previous record was written (or the run began)
        self.late = self.rejected = 0  # the totals so far

    def note(self, rows: int, began: float, answers: int, late: int, rejected: int, always: bool = True) -> None:
        """A batch of `rows` events, whose processing began at `began`
        (time.monotonic()) and has just ended, gave `answers`; `late` and
        `rejected` are the run's totals so far. `always`: False writes no
        record for a batch that read, found and gave nothing (a pause)."""
        now = time.monotonic()
        new_late, new_rejected = late - self.late, rejected - self.rejected
        if not (always or rows or answers or new_late or new_rejected):
            return
        seconds, interval = now - began, now - self.last
        record = {
            "time": (datetime.now(timezone.utc) - timedelta(seconds=seconds)).isoformat(timespec="milliseconds")
                    .replace("+00:00", "Z"),
            "run": self.run, "batch": self.batch, "rows": rows,
            "input_rows_per_second": round(rows / interval, 1) if interval > 0 else None,
            "processed_rows_per_second": round(rows / seconds, 1) if seconds > 0 else None,
            "duration_ms": round(seconds * 1000),
            "answers": answers, "late": new_late, "rejected": new_rejected,
        }
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()
        self.batch += 1
        self.last, self.late, self.rejected = now, late, rejected

    def close(self) -> None:
        self.handle.close()
