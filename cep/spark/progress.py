"""Progress of a streaming query, from Spark's own listener bus.

A StreamingQueryListener (Spark's interface for monitoring) receives each
micro-batch's StreamingQueryProgress; `ProgressListener` turns it into one
readable line on standard error and, on request, one JSON object per line
in a file (`cep run --progress-json FILE`), for a monitoring agent to tail:

    {"time": "2026-11-25T11:37:17.944Z", "query": "cep", "run": "0a19...", "batch": 1,
     "rows": 15, "input_rows_per_second": 4.1, "processed_rows_per_second": 15.8,
     "duration_ms": 951, "watermark": "2026-11-25T11:37:15.917Z",
     "state_groups": 8, "state_bytes": 41234, "answers": 3, "late": 0, "rejected": 0,
     "dropped_by_watermark": 0}

rows: the input rows of the micro-batch; watermark: the engine's (null
before the first event); state_*: the stateful operator's groups and
their size; answers, late and rejected: the output rows of each kind,
counted by an observation on the query's output (`observed`);
dropped_by_watermark: rows Spark itself dropped as late (only a rule set
with windows or NOTSEQ lets it: cep.spark.run).

The same listener serves a `cep.spark.detect` job of one's own:

    from cep.spark.progress import ProgressListener, observed
    out = observed(detect(events, "rules.rq"))
    spark.streams.addListener(ProgressListener(json_path="progress.jsonl"))
"""

from __future__ import annotations

import json
import threading
import time

from pyspark.sql.streaming import StreamingQueryListener

OBSERVATION = "cep"  # the name of the observed metrics in a progress (observedMetrics)
KINDS = ("answer", "late", "reject")  # the output rows counted, as the JSON line names them:
COUNTED = {"answer": "answers", "late": "late", "reject": "rejected"}


def observed(out):
    """The output of detect (or cep.spark.run) with its rows counted by
    kind in every micro-batch's progress (observedMetrics[OBSERVATION])."""
    from pyspark.sql import functions as F

    return out.observe(OBSERVATION, *(F.count(F.when(F.col("kind") == kind, 1)).alias(COUNTED[kind])
                                      for kind in KINDS))


def progress_record(p) -> dict:
    """The JSON line of a StreamingQueryProgress (see the module's docstring)."""
    state = list(p.stateOperators or [])
    watermark = (p.eventTime or {}).get("watermark")
    metrics = (p.observedMetrics or {}).get(OBSERVATION)
    counts = metrics.asDict() if metrics is not None else {}
    return {
        "time": p.timestamp, "query": p.name, "run": str(p.runId), "batch": p.batchId,
        "rows": p.numInputRows,
        "input_rows_per_second": _rate(p.inputRowsPerSecond),
        "processed_rows_per_second": _rate(p.processedRowsPerSecond),
        "duration_ms": (p.durationMs or {}).get("triggerExecution"),
        # Spark's watermark starts at the epoch: no event has set it yet
        "watermark": None if not watermark or watermark.startswith("1970-01-01T00:00:00") else watermark,
        "state_groups": sum(op.numRowsTotal for op in state) if state else None,
        "state_bytes": sum(_state_bytes(op) for op in state) if state else None,
        **{name: counts.get(name) for name in COUNTED.values()},
        "dropped_by_watermark": sum(op.numRowsDroppedByWatermark for op in state) if state else None,
    }


def _rate(value) -> float | None:
    return None if value is None or value != value else round(float(value), 1)  # NaN: no time elapsed


def _state_bytes(op) -> int:
    """The state's size: on RocksDB what it holds on disk, else its memory."""
    return int((op.customMetrics or {}).get("stateOnCurrentVersionSizeBytes", op.memoryUsedBytes))


def progress_line(record: dict) -> str:
    """The readable line of a progress record (progress_record)."""
    seconds = (record["duration_ms"] or 0) / 1000
    line = f"batch {record['batch']}: {record['rows']:,} row{'s' if record['rows'] != 1 else ''} in {seconds:.1f} s"
    if record["rows"] >= 1000 and record["processed_rows_per_second"]:  # a rate of a few rows says nothing
        line += f" ({record['processed_rows_per_second']:,.0f} rows/s)"
    counts = [f"{record[name]:,} {name}" for name in COUNTED.values() if record[name]]
    if record["dropped_by_watermark"]:
        counts.append(f"{record['dropped_by_watermark']:,} dropped as late by Spark")
    if counts:
        line += "; " + ", ".join(counts)
    if record["state_groups"] is not None:
        line += f"; state {record['state_groups']:,} groups, {record['state_bytes'] / 1e6:,.1f} MB"
    if record["watermark"]:
        line += f"; watermark {record['watermark']}"
    return line


class ProgressListener(StreamingQueryListener):
    """Progress lines of the streaming queries of a session: `say` (a
    function of a line; None: no lines) for each micro-batch that read
    rows or gave output (a window closed by the watermark), and every micro-batch's record as a JSON line
    appended to `json_path`. Spark calls it from its listener thread,
    after the micro-batch: `wait` lets the driver catch up before its
    summary. `rows` and `batches`: the totals of the batches said."""

    def __init__(self, say=None, json_path=None):
        super().__init__()
        self.say = say
        self.json = open(json_path, "a", encoding="utf-8") if json_path else None  # noqa: SIM115 - closed by close()
        self.rows = 0
        self.batches = 0
        self.done = {}  # query run id -> the last batch id seen
        self.changed = threading.Condition()

    def onQueryStarted(self, event):
        pass

    def onQueryProgress(self, event):
        p = event.progress
        record = progress_record(p)
        if self.json is not None:
            self.json.write(json.dumps(record) + "\n")
            self.json.flush()
        if record["rows"] or any(record[name] for name in COUNTED.values()):  # not an idle trigger
            self.rows += record["rows"]
            self.batches += 1
            if self.say is not None:
                self.say(progress_line(record))
        with self.changed:
            self.done[record["run"]] = p.batchId
            self.changed.notify_all()

    def onQueryIdle(self, event):
        pass

    def onQueryTerminated(self, event):
        pass

    def wait(self, query, timeout: float = 30.0) -> None:
        """Until the progress of the query's last micro-batch has been
        received (Spark posts it to the listener asynchronously), or
        `timeout` seconds."""
        last = query.lastProgress
        if last is None:
            return
        run, batch = str(query.runId), last["batchId"]
        deadline = time.monotonic() + timeout
        with self.changed:
            while self.done.get(run, -1) < batch and time.monotonic() < deadline:
                self.changed.wait(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self.json is not None:
            self.json.close()
            self.json = None
