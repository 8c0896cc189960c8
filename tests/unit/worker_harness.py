"""Spark's part around the streaming worker, without Spark: a driver that
replays micro-batches, watermarks and timeouts through
cep.spark.worker.detect_streaming, as Flink's NFATestHarness drives an NFA.

The worker sees what it sees on Spark: per group, an iterator of pandas
frames of its rows, and a pyspark GroupState (PySpark's own class, which is
plain Python: its checks of timeouts are Spark's). The harness plays the
JVM's part of applyInPandasWithState as cep.spark.run sets it up
(event time = an event's end + 1 ms, watermark delay = lateness + 1 ms):

- a micro-batch's watermark is the one the previous batches left: the
  latest event time seen less the delay, never going back, 0 at first;
- with event-time timeouts (a query with a window or a NOTSEQ), rows at
  or before the watermark are dropped before the groups see them;
- the groups with rows are called first, then each other group whose
  timeout is before the watermark (hasTimedOut, no rows); a call
  removes the group's timeout unless it sets a new one;
- state is written back as Spark writes it (a removed group is gone);
- after the last batch of data, Spark runs batches without data while
  the watermark moves (drain).

Rows are routed to groups by `route` (event -> (class, bucket); by default
every event to (0, 0)); an end of input (cep.spark.end_input) gives every
group of the plan a row with ctl = END.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType

from cep.engine import binding_order
from cep.events import Event, answers_of
from cep.rules import parse_rules
from cep.spark import plan, sinks, worker

NO_TIMESTAMP = GroupState.NO_TIMESTAMP
_TYPES = {"string": StringType(), "binary": BinaryType(), "long": LongType()}
# the state's schema (worker.STATE_DDL; Spark parses it in the JVM)
STATE_SCHEMA = StructType([StructField(name, _TYPES[kind])
                           for name, kind in (f.split() for f in worker.STATE_DDL.split(","))])


@dataclass
class Stored:
    """A group's entry in Spark's state store."""

    value: tuple | None  # as Spark keeps it: STATE_SCHEMA.toInternal
    timeout: int = NO_TIMESTAMP


@dataclass
class Output:
    """A micro-batch's output rows, by kind."""

    answers: list = field(default_factory=list)  # cep.events.Answer
    late: list = field(default_factory=list)  # output rows (dicts) of kind "late"
    rejects: list = field(default_factory=list)  # of kind "reject"

    def __add__(self, other: Output) -> Output:
        return Output(self.answers + other.answers, self.late + other.late, self.rejects + other.rejects)



class Harness:
    """One streaming query of a rule set (cep.spark.run's), its micro-batches
    given one by one (batch) or as a sequence (run)."""

    def __init__(self, rules, lateness_ms: int = 0, buckets: int = 1, route=None, rows_per_frame: int = 10_000,
                 services=None):
        queries = parse_rules(rules, "rules.rq") if isinstance(rules, str) else list(rules)
        self.spec = plan(queries, buckets, services=services)
        self.lateness_ms = lateness_ms
        # as cep.spark.run: event time end + 1 ms, delay lateness + 1 ms
        self.delay_ms = lateness_ms + 1
        self.timeouts = self.spec.timed
        self.route = route or (lambda event: (0, 0))
        self.rows_per_frame = rows_per_frame
        self.watermark = 0  # Spark's, before any row
        self.watermark_used = 0  # the watermark of the last batch run
        self.latest = None  # the latest event time seen (ms)
        self.store: dict[tuple, Stored] = {}
        self.calls: list[tuple] = []  # (group, timed out), in the order of the calls

    def checkpoint(self) -> tuple:
        """What Spark's checkpoint holds after the last batch: its state
        store and watermark (restart() runs on from it, as Spark re-runs a
        micro-batch whose task failed, or a query restarted)."""
        return copy.deepcopy((self.store, self.watermark, self.watermark_used, self.latest))

    def restart(self, checkpoint: tuple) -> None:
        self.store, self.watermark, self.watermark_used, self.latest = copy.deepcopy(checkpoint)

    def groups(self) -> list[tuple]:
        return [(c.index, b) for c, n in zip(self.spec.classes, self.spec.buckets) for b in range(n)]

    def batch(self, events=(), end: bool = False, rejects=()) -> Output:
        """One micro-batch: `events` (cep.events.Event), `rejects` (source,
        reason, text) of records the reader could not use, and with `end`
        the end of the input."""
        watermark = self.watermark
        rows: dict[tuple, list[dict]] = {}
        for e in events:
            at = e.end + 1
            self.latest = at if self.latest is None else max(self.latest, at)
            if self.timeouts and at <= watermark:  # Spark drops it unseen
                continue
            rows.setdefault(self.route(e), []).append(
                {"s": e.s, "p": e.p, "o": e.o, "start": e.start, "end": e.end, "source": e.source or None,
                 "copy": None, "stream": e.stream or None, "reason": None, "text": None, "ctl": None})
        blank = dict.fromkeys(("s", "p", "o", "start", "end", "copy", "stream", "reason", "text", "ctl"))
        for source, reason, text in rejects:  # to the first group, as cep.spark._routed sends them
            rows.setdefault(self.groups()[0], []).append({**blank, "source": source, "reason": reason,
                                                          "text": text})
        if end:
            for group in self.groups():
                rows.setdefault(group, []).append({**blank, "source": None, "ctl": worker.END})
        out = Output()
        for group, group_rows in rows.items():
            out += self._call(group, self._frames(group, group_rows), watermark, timed_out=False)
        for group, stored in list(self.store.items()):
            if group not in rows and stored.timeout != NO_TIMESTAMP and stored.timeout < watermark:
                out += self._call(group, iter(()), watermark, timed_out=True)
        self.watermark_used = watermark
        if self.latest is not None:
            self.watermark = max(self.watermark, self.latest - self.delay_ms)
        return out

    def drain(self) -> Output:
        """Spark's batches without data after the last one with data: run
        while the watermark has moved past the last batch's (with
        event-time timeouts; without, Spark runs none)."""
        out = Output()
        while self.timeouts and self.watermark > self.watermark_used:
            out += self.batch()
        return out

    def run(self, batches, end: bool = False) -> Output:
        """Micro-batches of events, one after the other, then Spark's batches
        without data; with `end`, then the end of the input and its drain."""
        out = Output()
        for events in batches:
            out += self.batch(events)
        out += self.drain()
        if end:
            out += self.batch(end=True)
            out += self.drain()
        return out

    def _frames(self, group, group_rows):
        cls, bucket = group
        pdf = pd.DataFrame([{"cls": cls, "bucket": bucket, **r} for r in group_rows])
        pdf = pdf.astype({"start": "Int64", "end": "Int64"})
        return (pdf.iloc[i:i + self.rows_per_frame] for i in range(0, len(pdf), self.rows_per_frame))

    def _call(self, group, frames, watermark: int, timed_out: bool) -> Output:
        stored = self.store.get(group)
        state = GroupState(
            optionalValue=STATE_SCHEMA.fromInternal(stored.value) if stored and stored.value is not None else None,
            batchProcessingTimeMs=0, eventTimeWatermarkMs=watermark,
            timeoutConf=GroupStateTimeout.EventTimeTimeout if self.timeouts else GroupStateTimeout.NoTimeout,
            hasTimedOut=timed_out, watermarkPresent=True,
            defined=stored is not None and stored.value is not None, updated=False, removed=False,
            timeoutTimestamp=NO_TIMESTAMP,  # a call resets the group's timeout
            keyAsUnsafe=b"", valueSchema=STATE_SCHEMA)
        self.calls.append((group, timed_out))
        out = Output()
        for pdf in worker.detect_streaming(self.spec, self.lateness_ms, group, frames, state):
            # as the sinks read Spark's output: Arrow of the output schema
            raw = outputs(self.spec, pa.Table.from_pandas(pdf, schema=worker.raw_schema(self.spec),
                                                          preserve_index=False))
            out.answers += answers_of(sinks.answers(raw))
            for row in raw.filter(pc.not_equal(raw["kind"], "answer")).to_pylist():
                (out.late if row["kind"] == "late" else out.rejects).append(row)
        # what Spark writes back (FlatMapGroupsWithStateExec)
        timeout = state._timeout_timestamp
        if state._removed and timeout == NO_TIMESTAMP:
            self.store.pop(group, None)
        elif state._updated or state._removed or (stored.timeout if stored else NO_TIMESTAMP) != timeout:
            self.store[group] = Stored(STATE_SCHEMA.toInternal(state._value) if state.exists else None, timeout)
        return out


def outputs(spec, raw: pa.Table) -> pa.Table:
    """The workers' rows (worker.raw_schema) as cep.spark.run makes them in
    Spark (worker.OUTPUT_SCHEMA): a SELECT answer's bindings a map of its
    field columns, in binding_order, the unbound left out."""
    layouts = {layout.name: layout for c in spec.compiled for layout in c.layouts}
    rows = raw.to_pylist()
    for r in rows:
        detail = json.loads(r.pop("detail")) if r["detail"] is not None else {"kind": "answer"}
        r.update({c: detail.get(c) for c in worker.DETAIL_COLUMNS})
        layout = layouts.get(r["query"])
        r["bindings"] = ([(name, r[f"f{i - 3}"]) for name, i in binding_order(layout) if r[f"f{i - 3}"] is not None]
                         if r["kind"] == "answer" and layout.form == "select" else None)
    return pa.Table.from_pylist(rows, worker.OUTPUT_SCHEMA)


EX = "http://example.org/"


def ev(s: str, p: str, o, start: int, end: int | None = None, source: str = "") -> Event:
    """An event of terms of EX: s and p local names, o an integer (a
    literal) or a local name."""
    obj = f'"{o}"^^<http://www.w3.org/2001/XMLSchema#integer>' if isinstance(o, int) else f"<{EX}{o}>"
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", obj, start, start if end is None else end, source=source)
