"""What runs in Spark's Python workers: one group's detection per call.

A group is (query class, bucket of partition keys) (cep/spark/routing.py).
Its engine (cep.engine.Engine, in this process's SWI-Prolog) is kept in this
module between calls: Spark reuses its Python workers, and this module is
imported there, not pickled with the function (../shared/FACTS.md: a cache
in the function's globals would be fresh in every task and load the rules
again and again).

Spark's state store is the truth. After each batch a group writes to it, as
one value: its engine's state (Engine.state: the goal stores, serialized in
one Prolog call), the events still waiting for the watermark (Arrow IPC
bytes), how far event time has been processed, and a version (a random
token). A worker that still holds the engine it left at that version uses
it as it is; any other worker (or the same one after a failed task) restores
the engine from the state first. So a restarted query resumes from its
checkpoint with nothing lost and nothing answered twice.
"""

from __future__ import annotations

import json
import uuid

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.engine import Engine
from cep.io.tables import checked_rows

# (rules hash, class, bucket) -> [engine, initial state, version or None]
_ENGINES: dict = {}

EVENT_COLUMNS = ["s", "p", "o", "start", "end", "source"]
EVENT_SCHEMA = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()),
                          ("start", pa.int64()), ("end", pa.int64()), ("source", pa.string())])
OUTPUT_COLUMNS = ["kind", "query", "bindings", "triples", "start", "end", "s", "p", "o", "source", "reason",
                  "text"]
OUTPUT_DDL = ("kind string, query string, bindings string, triples string, start long, end long, "
              "s string, p string, o string, source string, reason string, text string")
STATE_DDL = "version string, engine binary, waiting binary, processed long"
END = "end"  # the value of column ctl on the rows that mark the end of the input


def _engine(spec, cls: int, bucket: int):
    key = (spec.rules_hash, cls, bucket)
    entry = _ENGINES.get(key)
    if entry is None:
        engine = Engine(list(spec.classes[cls].queries), bnode_prefix=f"c{cls}b{bucket}x")
        entry = _ENGINES[key] = [engine, engine.state(), None]
    return entry


def _events(pdfs, rows: list) -> tuple[pa.Table, bool]:
    """The usable events of a group's input (a reject row for each of the
    others) and whether the input ends here."""
    tables, ended = [], False
    for pdf in pdfs:
        if not len(pdf):
            continue
        if "ctl" in pdf.columns:
            marks = pdf["ctl"].notna()
            ended = ended or bool((pdf["ctl"] == END).any())
            pdf = pdf[~marks]
        if "reason" in pdf.columns:  # records the reader could not use
            rejected = pdf["reason"].notna()
            for source, reason, text in pdf.loc[rejected, ["source", "reason", "text"]].itertuples(index=False):
                rows.append(("reject", None, None, None, None, None, None, None, None, source, reason, text))
            pdf = pdf[~rejected]
        if "source" not in pdf.columns:
            pdf = pdf.assign(source=None)
        tables.append(pa.Table.from_pandas(pdf[EVENT_COLUMNS], schema=EVENT_SCHEMA, preserve_index=False))
    if not tables:
        return EVENT_SCHEMA.empty_table(), ended
    given = pa.concat_tables(tables)
    table, bad = checked_rows(given)
    if bad:
        raw = given.take(pa.array([i for i, _ in bad], pa.int64())).to_pylist()
        for e, (_, reason) in zip(raw, bad):
            rows.append(_event_row("reject", e, reason))
    return table, ended


def _event_row(kind: str, e: dict, reason: str) -> tuple:
    return (kind, None, None, None, e["start"], e["end"], e["s"], e["p"], e["o"], e["source"], reason,
            f"{e['s']} {e['p']} {e['o']}")


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, EVENT_SCHEMA) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def _answer_rows(engine: Engine, batches) -> list:
    rows = []
    for batch in batches:
        for a in batch.to_list():
            if a.triples:
                triples = json.dumps([{"s": s, "p": p, "o": o} for s, p, o in a.triples])
                rows.append(("answer", a.query, None, triples, a.start, a.end, None, None, None, None, None, None))
            else:
                rows.append(("answer", a.query, json.dumps(dict(a.bindings)), None, a.start, a.end,
                             None, None, None, None, None, None))
    return rows


def _frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=OUTPUT_COLUMNS).astype({"start": "Int64", "end": "Int64"})


def detect_static(spec, key, pdf: pd.DataFrame) -> pd.DataFrame:
    """A batch DataFrame's group: all its events, in time order, then the end."""
    cls, bucket = (int(x) for x in key)
    entry = _engine(spec, cls, bucket)
    engine, initial = entry[0], entry[1]
    entry[2] = None
    engine.restore(initial)
    rows = []
    events, _ = _events([pdf], rows)
    rows += _answer_rows(engine, [engine.push_table(events), engine.flush_table()])
    return _frame(rows)


def detect_streaming(spec, lateness_ms: int, key, pdfs, state):
    """A streaming group's micro-batch (applyInPandasWithState): buffer the
    new events, report those that come after their time was processed,
    process, in time order, the events that the watermark has passed (all
    of them when the input ends), prune the goals past their window at the
    watermark, and forget the group when nothing is left in it."""
    cls, bucket = (int(x) for x in key)
    entry = _engine(spec, cls, bucket)
    engine = entry[0]
    if state.exists:
        version, saved, waiting, processed = state.get
        if entry[2] != version:
            engine.restore(bytes(saved))
        waiting = _from_ipc(bytes(waiting))
    else:
        processed = None
        engine.restore(entry[1])  # a new group: the engine as loaded
        waiting = EVENT_SCHEMA.empty_table()
    entry[2] = None  # until this call has finished, the engine matches no saved version

    rows = []
    new, ended = _events(pdfs, rows)
    # Late: before the watermark of this micro-batch (Spark's rule), or
    # before what the group already processed (after the end of an input).
    watermark = state.getCurrentWatermarkMs() or None
    horizon = max(x for x in (watermark, processed, -2**63) if x is not None)
    if new.num_rows:
        late = pc.less(new["end"], horizon)
        for e in new.filter(late).to_pylist():
            rows.append(_event_row("late", e, f"late: ends at {terms.format_datetime_ms(e['end'])}, before "
                                              f"{terms.format_datetime_ms(horizon)}, where the watermark was "
                                              "(or where its group's input had ended)"))
        new = new.filter(pc.invert(late))
    waiting = pa.concat_tables([waiting, new]) if new.num_rows else waiting

    # Ready: what Spark's watermark has passed, or what ends more than the
    # lateness before the latest event of this group (the order within a
    # group is all its answers depend on), so that what waits is one
    # lateness of events, not a whole micro-batch.
    target = watermark
    if waiting.num_rows:
        own = pc.max(waiting["end"]).as_py() - lateness_ms
        target = own if target is None else max(target, own)
    if ended and waiting.num_rows:
        ready = pa.array([True] * waiting.num_rows)
        processed = max(horizon, pc.max(waiting["end"]).as_py() + 1)
    elif target is not None and (processed is None or target > processed):
        ready = pc.less(waiting["end"], target)
        processed = target
    else:
        ready = None
    if ready is not None:
        rows += _answer_rows(engine, [engine.push_table(waiting.filter(ready)), engine.flush_table()])
        waiting = waiting.filter(pc.invert(ready))
    pending = engine.advance(processed) if processed is not None else True

    if not waiting.num_rows and not pending and not engine.fresh_bnodes and processed <= (watermark or -2**63):
        # Nothing waits and no partial match is left: forget the group. (It
        # stays while CONSTRUCT has numbered blank nodes: a new group would
        # number them from 0 again.)
        state.remove()
        entry[2] = None
    else:
        version = uuid.uuid4().hex
        state.update((version, engine.state(), _ipc(waiting), processed))
        entry[2] = version
    yield _frame(rows)
