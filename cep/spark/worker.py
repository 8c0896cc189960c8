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

import sys
import uuid

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.engine import Engine
from cep.events import ANSWERS
from cep.io.tables import checked_rows
from cep.runtime.session import session
from cep.user_prolog import load_sources

# (rules hash, class, bucket, limits) -> [engine, initial state, version or None]
_ENGINES: dict = {}

EVENT_COLUMNS = ["s", "p", "o", "start", "end", "source", "copy", "stream"]
EVENT_SCHEMA = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()),
                          ("start", pa.int64()), ("end", pa.int64()), ("source", pa.string()),
                          ("copy", pa.string()), ("stream", pa.string())])
# column stream: the IRI of the event's stream (<...>), null for none
# column copy: null for a group's own events; for the copy of an event that
# the group gets for its update rules alone (cep.spark._routed), whether
# this copy reports the event when it is late or malformed
COPY_REPORTS, COPY_QUIET = "reports", "quiet"
OUTPUT_COLUMNS = ["kind", "query", "bindings", "triples", "start", "end", "s", "p", "o", "source", "reason",
                  "text"]
OUTPUT_DDL = ("kind string, query string, bindings map<string,string>, "
              "triples array<struct<s:string,p:string,o:string>>, start long, end long, "
              "s string, p string, o string, source string, reason string, text string")
STATE_DDL = "version string, engine binary, waiting binary, processed long"
END = "end"  # the value of column ctl on the rows that mark the end of the input


def _engine(spec, cls: int, bucket: int):
    key = (spec.rules_hash, cls, bucket, spec.limits)
    entry = _ENGINES.get(key)
    if entry is None:
        if spec.background_module is not None:  # once per process (Session.load_background)
            session().load_background(spec.background_module, spec.facts.value)
            if spec.instances is not None:  # what the update rules delete from
                session().load_instances(spec.background_module, spec.instances.value)
        if spec.user_module is not None:  # once per process (prolog/cep_user.pl)
            load_sources(spec.user_module, spec.user_files.value)
        engine = Engine(None, compiled=spec.compiled[cls], limits=spec.limits)
        entry = _ENGINES[key] = [engine, engine.state(), None]
    return entry


def _say_warnings(engine: Engine):
    """The engine's new warnings (a REGEX that PCRE gave up on, once per
    query and engine) on the worker's stderr, which Spark passes on to
    its log (in local mode, the console)."""
    for warning in engine.warnings:
        print(f"cep: warning: {warning}", file=sys.stderr, flush=True)
    engine.warnings.clear()


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
        for name in ("source", "copy", "stream"):
            if name not in pdf.columns:
                pdf = pdf.assign(**{name: None})
        tables.append(pa.Table.from_pandas(pdf[EVENT_COLUMNS], schema=EVENT_SCHEMA, preserve_index=False))
    if not tables:
        return EVENT_SCHEMA.empty_table(), ended
    given = pa.concat_tables(tables)
    table, bad = checked_rows(given)
    if bad:
        raw = given.take(pa.array([i for i, _ in bad], pa.int64())).to_pylist()
        for e, (_, reason) in zip(raw, bad):
            if e["copy"] != COPY_QUIET:
                rows.append(_event_row("reject", e, reason))
    return table, ended


def _push(engine: Engine, table: pa.Table):
    """The events to the engine, the copies for the update rules marked."""
    return engine.push_table(table.append_column("updates_only", pc.is_valid(table["copy"])))


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


OUTPUT_SCHEMA = pa.schema([ANSWERS.field(c) if c in ANSWERS.names else pa.field(c, pa.string())
                           for c in OUTPUT_COLUMNS])


def _answer_tables(engine: Engine, batch) -> list[pa.Table]:
    """A batch's answers as output rows: its answer table (cep.events.
    ANSWERS: bindings a map of N-Triples terms, triples a list of structs),
    typed here once, which Spark's columns and every sink take as it is."""
    answers = batch.answers()
    if not answers.num_rows:
        return []
    return [answers.append_column("kind", pa.array(["answer"] * answers.num_rows, pa.string()))]


def _frame(rows: list, tables: list) -> pd.DataFrame:
    """The output: rows (tuples of OUTPUT_COLUMNS) and tables (some of its
    columns) as one pandas frame."""
    if rows:
        tables = tables + [pa.Table.from_pylist([dict(zip(OUTPUT_COLUMNS, r)) for r in rows], OUTPUT_SCHEMA)]
    whole = [pa.table({c: t[c] if c in t.column_names else pa.nulls(t.num_rows, OUTPUT_SCHEMA.field(c).type)
                       for c in OUTPUT_COLUMNS}, schema=OUTPUT_SCHEMA) for t in tables]
    if not any(t.num_rows for t in whole):
        return pd.DataFrame(columns=OUTPUT_COLUMNS).astype({"start": "Int64", "end": "Int64"})
    # one chunk per column: PySpark reads a pandas column backed by a
    # chunked Arrow array back as a ChunkedArray, which it cannot send; a
    # map column as Python dicts, the form PySpark converts
    combined = pa.concat_tables(whole).combine_chunks()
    return combined.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get, maps_as_pydicts="strict")


def detect_static(spec, key, pdf: pd.DataFrame) -> pd.DataFrame:
    """A batch DataFrame's group: all its events, in time order, then the end."""
    cls, bucket = (int(x) for x in key)
    entry = _engine(spec, cls, bucket)
    engine, initial = entry[0], entry[1]
    entry[2] = None
    engine.restore(initial)
    rows = []
    events, _ = _events([pdf], rows)
    answers = (_answer_tables(engine, _push(engine, events))
               + _answer_tables(engine, engine.flush_table(final=True)))
    _say_warnings(engine)
    return _frame(rows, answers)


def detect_streaming(spec, lateness_ms: int, key, pdfs, state):
    """A streaming group's micro-batch (applyInPandasWithState): buffer the
    new events, report those that come after their time was processed,
    process, in time order, the events that the watermark has passed (all
    of them when the input ends), evaluate the windows event time has
    passed, prune the goals past their window at the watermark, and forget
    the group when nothing is left in it. With windows, a group also asks
    to be called when the watermark passes its next window (an event-time
    timeout), so that the window closes even if no row reaches the group."""
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

    rows, answers = [], []
    new, ended = _events(pdfs, rows)
    # Late: before the watermark of this micro-batch (Spark's rule), or
    # before what the group already processed (after the end of an input).
    watermark = state.getCurrentWatermarkMs() or None
    horizon = max(x for x in (watermark, processed, -2**63) if x is not None)
    if new.num_rows:
        late = pc.less(new["end"], horizon)
        for e in new.filter(late).to_pylist():
            if e["copy"] == COPY_QUIET:
                continue
            rows.append(_event_row("late", e, f"late: ends at {terms.format_datetime_ms(e['end'])}, before "
                                              f"{terms.format_datetime_ms(horizon)}, where the watermark was "
                                              "(or where its group's input had ended)"))
        new = new.filter(pc.invert(late))
    waiting = pa.concat_tables([waiting, new]) if new.num_rows else waiting

    # Ready: what Spark's watermark has passed, or what ends more than the
    # lateness before the latest event of this group (the order within a
    # group is all its answers depend on), so that what waits is one
    # lateness of events, not a whole micro-batch. With update rules the
    # watermark alone, the same for every group: every group must take or
    # refuse as late the same events of the update rules, or their
    # backgrounds would differ.
    target = watermark
    if waiting.num_rows and not spec.update_routes:
        own = pc.max(waiting["end"]).as_py() - lateness_ms
        target = own if target is None else max(target, own)
    if ended:  # every event, then the final flush, even with nothing waiting: the windows still open report
        ready = pa.array([True] * waiting.num_rows, pa.bool_())
        if waiting.num_rows:
            processed = max(horizon, pc.max(waiting["end"]).as_py() + 1)
    elif target is not None and (processed is None or target > processed):
        ready = pc.less(waiting["end"], target)
        processed = target
    else:
        ready = None
    if ready is not None:
        answers += _answer_tables(engine, _push(engine, waiting.filter(ready)))
        answers += _answer_tables(engine, engine.flush_table(final=ended))
        waiting = waiting.filter(pc.invert(ready))
        if not ended:  # event time has reached `processed`: the windows before it close
            answers += _answer_tables(engine, engine.close_windows(processed))
    pending = engine.advance(processed) if processed is not None else True
    _say_warnings(engine)

    if (not waiting.num_rows and not pending and not spec.update_routes
            and processed <= (watermark or -2**63)):
        # Nothing waits and no partial match is left: forget the group. (It
        # stays with update rules, whose changes of the background are in
        # its state.)
        state.remove()
        entry[2] = None
    else:
        version = uuid.uuid4().hex
        state.update((version, engine.state(), _ipc(waiting), processed))
        entry[2] = version
        if engine.timed:
            # called again once the watermark passes the next window, NOTSEQ
            # deadline or waiting event, whether or not rows come (Spark
            # times a group out when the watermark passes its timeout;
            # PySpark refuses a timeout at or before 1970-01-01T00:00Z, so
            # one due there waits for the watermark to pass 1 ms, which
            # changes no answer: any event before it is late already)
            due = [t for t in (engine.next_due(),
                               pc.min(waiting["end"]).as_py() if waiting.num_rows else None) if t is not None]
            if due:
                state.setTimeoutTimestamp(max(min(due), watermark or 0, 1))
    yield _frame(rows, answers)
