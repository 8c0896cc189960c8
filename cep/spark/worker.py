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

import dataclasses
import functools
import json
import sys
import uuid

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.engine import AnswerBatch, Engine
from cep.errors import for_terminal
from cep.events import ANSWERS
from cep.io.tables import checked_rows
from cep.runtime.session import session
from cep.spark import routing
from cep.user_prolog import load_sources

# (rules hash, class, bucket, limits) -> [engine, initial state, version or None,
#   the SERVICE reports of its construction, until a call has returned them (_service_rows)]
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
        services = spec.services
        if services is not None:  # the group loads the part of each SERVICE view its keys need
            services = dataclasses.replace(services, part=view_part(spec, cls, bucket))
        engine = Engine(None, compiled=spec.compiled[cls], limits=spec.limits, services=services)
        made = engine.services.reports[:] if engine.services is not None else []  # a failed initial pull
        entry = _ENGINES[key] = [engine, engine.state(), None, made]
    _forget_reports(entry[0])  # those of a call that failed: its evaluations are made again
    return entry


def view_part(spec, cls: int, bucket: int):
    """Which entries of its SERVICE views the group (cls, bucket) holds
    (ServiceOptions.part): per view spec, keep(key), or None for all.
    Where a view's join key holds its query's partition variable, the
    entries whose value there the router sends to this bucket (the events
    with other values go to other groups, so no solution of this group
    needs them); a literal value is kept (a non-canonical lexical form in
    an event could join it from another bucket)."""
    buckets = spec.buckets[cls]
    if buckets == 1:
        return None
    c = spec.classes[cls]
    partition = {q.name: name for q, name in zip(c.queries, c.key)}

    def part(view_spec):
        at = [i for i, v in enumerate(view_spec.key) if v.name == partition.get(view_spec.query)]
        if not at:
            return None
        return lambda key: key[at[0]].startswith('"') or _bucket_of(key[at[0]], buckets) == bucket
    return part


# the buckets of view keys, computed once per process: each group of the
# worker reads the same keys of the initial pull (View.pull)
_bucket_of = functools.lru_cache(maxsize=1 << 18)(routing.bucket_of)


def _forget_reports(engine: Engine):
    if engine.services is not None:
        engine.services.reports.clear()


def _service_rows(spec, entry, cls: int, bucket: int) -> list:
    """The QoS reports of the SERVICE evaluations the group's engine made
    in this call (and at its construction), as `service` output rows
    (query, start = end = the evaluation time, text = the JSON line of
    `cep run --service-report`, with the group's class and bucket) when
    the run asks for them (Spec.service_reports); the engine then forgets
    them, so that a long run does not accumulate them."""
    engine = entry[0]
    if engine.services is None:
        return []
    from cep.service.maintenance import report_json

    reports = entry[3] + engine.services.reports
    entry[3] = []
    _forget_reports(engine)
    if not spec.service_reports:
        return []
    return [("service", r.query, None, None, r.time, r.time, None, None, None, None, None,
             report_json(r, group=cls, bucket=bucket)) for r in reports]


def _say_warnings(engine: Engine):
    """The engine's new warnings (a REGEX that PCRE gave up on, once per
    query and engine) on the worker's stderr, which Spark passes on to
    its log (in local mode, the console)."""
    for warning in engine.warnings:
        print(f"cep: warning: {for_terminal(warning)}", file=sys.stderr, flush=True)
    engine.warnings.clear()


def _events(pdfs, rows: list) -> tuple[pa.Table, bool]:
    """The usable events of a group's input (a reject row for each of the
    others) and whether the input ends here."""
    tables, ended = [], False
    for pdf in pdfs:
        if not len(pdf):
            continue
        table = _arrow_columns(pdf)
        ctl = table.column("ctl") if "ctl" in table.column_names else None
        if ctl is not None and ctl.null_count < len(ctl):  # marks, not events
            ended = ended or pc.any(pc.equal(ctl, END)).as_py()
            table = table.filter(pc.is_null(ctl))
        reason = table.column("reason") if "reason" in table.column_names else None
        if reason is not None and reason.null_count < len(reason):  # records the reader could not use
            rejected = pc.is_valid(reason)
            for r in table.filter(rejected).select(["source", "reason", "text"]).to_pylist():
                rows.append(("reject", None, None, None, None, None, None, None, None,
                             r["source"], r["reason"], r["text"]))
            table = table.filter(pc.invert(rejected))
        tables.append(table.select(EVENT_COLUMNS))
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


def _arrow_columns(pdf: pd.DataFrame) -> pa.Table:
    """The columns of a group's input frame that the worker reads, as
    Arrow (EVENT_SCHEMA's, null where the frame has none, then ctl,
    reason and text where it has them), taken column by column: PySpark's
    frames hold Arrow-backed strings (pandas 3), which convert without a
    copy of the terms, and the frame's other columns are never touched."""
    n = len(pdf)
    columns = {f.name: _arrow_column(pdf[f.name], f.type) if f.name in pdf.columns else pa.nulls(n, f.type)
               for f in EVENT_SCHEMA}
    for name in ("ctl", "reason", "text"):
        if name in pdf.columns:
            columns[name] = _arrow_column(pdf[name], pa.string())
    return pa.table(columns)


def _arrow_column(series: pd.Series, type: pa.DataType) -> pa.Array:
    """A frame's column as Arrow of `type`: an Arrow-backed one's array as
    it is (pa.array of the Series goes through pandas' checks first, a
    few times the cost), another converted."""
    values = series.array
    column = pa.array(values) if hasattr(values, "__arrow_array__") else pa.array(series, from_pandas=True)
    return column if column.type == type else column.cast(type)


def _push(engine: Engine, table: pa.Table):
    """The events to the engine (checked by _events, or state made of
    such), the copies for the update rules marked."""
    return engine.push_table(table.append_column("updates_only", pc.is_valid(table["copy"])), checked=True)


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


# The columns of a row that is not an answer (late, reject, service),
# which an answer leaves null: the workers send them as one JSON text
# (column detail, null on an answer row), which cep.spark.run reads back
# in the JVM. PySpark's output step costs per cell (under pandas 3 it makes
# every column Python objects and back), and most rows are answers.
DETAIL_COLUMNS = ["kind", "s", "p", "o", "source", "reason", "text"]
DETAIL_DDL = ", ".join(f"{c} string" for c in DETAIL_COLUMNS)


def raw_schema(spec) -> pa.Schema:
    """The rows a worker returns to Spark, which cep.spark.run makes
    OUTPUT_SCHEMA's rows in the JVM: query; in place of the bindings map,
    a SELECT answer's fields as the engine gives them, a column each (f0,
    f1, ...: the terms of the query's variables in its order, null when
    unbound; as many as the widest SELECT of the rule set has), and the
    triples only when a query constructs; start and end; and detail, the
    rest of a row that is not an answer (DETAIL_COLUMNS). PySpark converts
    a map or list column from pandas row by row in Python; text columns it
    takes whole."""
    layouts = [layout for c in spec.compiled for layout in c.layouts]
    width = max((len(layout.fields) for layout in layouts if layout.form == "select"), default=0)
    fields = [pa.field(f"f{i}", pa.string()) for i in range(width)]
    if any(layout.form == "construct" for layout in layouts):
        fields.append(OUTPUT_SCHEMA.field("triples"))
    return pa.schema([OUTPUT_SCHEMA.field("query"), *fields, OUTPUT_SCHEMA.field("start"),
                      OUTPUT_SCHEMA.field("end"), pa.field("detail", pa.string())])


def raw_ddl(spec) -> str:
    """raw_schema(spec) as Spark's DDL."""
    ddl = dict(f.split(" ", 1) for f in OUTPUT_DDL.split(", "))
    return ", ".join(f"{f.name} {ddl.get(f.name, 'string')}" for f in raw_schema(spec))


def _answer_tables(engine: Engine, batch) -> list[pa.Table]:
    """A batch's answers as raw output rows (raw_schema): SELECT's with the
    field columns of the engine's batch as they are, CONSTRUCT's and ASK's
    from its answer table (triples; neither). Each form's answers keep
    the order they were found in."""
    table = batch.table
    if not table.num_rows:
        return []
    selects = [layout for layout in engine.layouts if layout.form == "select"]
    is_select = pc.is_in(table["q"], pa.array([layout.index for layout in selects], table["q"].type))
    found = table.filter(is_select)
    names = pc.take(pa.array([layout.name for layout in selects], pa.string()),
                    pc.index_in(found["q"], pa.array([layout.index for layout in selects], table["q"].type)))
    out = [found.drop_columns(["q"]).append_column("query", names)]
    if found.num_rows < table.num_rows:
        out.append(AnswerBatch(engine, table.filter(pc.invert(is_select))).answers().drop_columns(["bindings"]))
    return [t for t in out if t.num_rows]


def _frame(schema: pa.Schema, rows: list, tables: list) -> pd.DataFrame:
    """The output: rows (tuples of OUTPUT_COLUMNS, not answers) and tables
    (answers: some of the columns of `schema`, raw_schema's) as one pandas
    frame."""
    if rows:
        tables = tables + [pa.Table.from_pylist([_raw_row(dict(zip(OUTPUT_COLUMNS, r))) for r in rows], schema)]
    whole = [pa.table({c: t[c] if c in t.column_names else pa.nulls(t.num_rows, schema.field(c).type)
                       for c in schema.names}, schema=schema) for t in tables]
    if not any(t.num_rows for t in whole):
        return pd.DataFrame(columns=schema.names).astype({"start": "Int64", "end": "Int64"})
    # Columns of Python values: PySpark's output step concatenates the
    # frames a group returns with an empty frame of object columns, which
    # makes every column object dtype before it converts it to Arrow. A
    # frame given so is concatenated as it is; typed (Arrow-backed
    # strings, Int64) each column was cast cell by cell there, at about
    # a fifth of the output step's cost.
    combined = pa.concat_tables(whole)
    return pd.DataFrame({c: _values(combined[c]) for c in schema.names}, dtype=object)


def _values(column: pa.ChunkedArray) -> np.ndarray:
    """A column as a NumPy array of its Python values (None for null)."""
    if column.null_count and not (pa.types.is_string(column.type) or pa.types.is_nested(column.type)):
        return np.array(column.to_pylist(), dtype=object)  # (to_numpy: NaN for a null number)
    return column.to_numpy(zero_copy_only=False)


def _raw_row(row: dict) -> dict:
    """A row that is not an answer as raw_schema's: its DETAIL_COLUMNS
    as one JSON text."""
    detail = {c: row[c] for c in DETAIL_COLUMNS if row[c] is not None}
    return {"query": row["query"], "start": row["start"], "end": row["end"],
            "detail": json.dumps(detail, ensure_ascii=False)}


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
    rows += _service_rows(spec, entry, cls, bucket)
    return _frame(raw_schema(spec), rows, answers)


def detect_streaming(spec, lateness_ms: int, key, pdfs, state):
    """A streaming group's micro-batch (applyInPandasWithState), in the
    steps below: take the group's engine and waiting events from its state
    (resume_group), set aside the new events that come after their time
    was processed (set_aside_late), choose the waiting events to process
    now (ready_events), process them in time order and evaluate the windows
    event time has passed (process_ready), prune the goals past their
    window at the watermark, then keep the group in state or forget it
    when nothing is left in it (keep_group). With windows or NOTSEQ, a
    kept group also asks to be called when the watermark passes its next
    window or deadline (timeout_at), so that they close even if no row
    reaches the group. The steps take the watermark and the group state
    as arguments: tests/unit/worker_harness.py drives them without Spark."""
    cls, bucket = (int(x) for x in key)
    entry = _engine(spec, cls, bucket)
    engine = entry[0]
    waiting, processed = resume_group(entry, state)
    rows, answers = [], []
    new, ended = _events(pdfs, rows)
    watermark = state.getCurrentWatermarkMs() or None
    new, late = set_aside_late(new, late_horizon(watermark, processed))
    rows += late
    waiting = pa.concat_tables([waiting, new]) if new.num_rows else waiting
    ready, processed = ready_events(waiting, watermark, processed, ended,
                                    None if spec.update_routes else lateness_ms)
    if ready is not None:
        answers, waiting = process_ready(engine, waiting, ready, ended, processed)
    pending = engine.advance(processed) if processed is not None else True
    _say_warnings(engine)
    rows += _service_rows(spec, entry, cls, bucket)
    keep_group(entry, state, spec, waiting, processed, pending, watermark)
    yield _frame(raw_schema(spec), rows, answers)


# A profile of this process's group calls (profiled), kept between calls
_PROFILE: list = []


def profiled(folder: str, function, *args):
    """`function(*args)`, a group's call, under cProfile counting CPU
    time; the process's profile of all its calls so far is written to
    `folder` (one file per process) after each. For finding where the
    workers spend their time (cep.spark.run does this when
    CEP_WORKER_PROFILE names a folder; bench/spark.py --profile)."""
    import cProfile
    import os
    import time

    if not _PROFILE:
        _PROFILE.append(cProfile.Profile(time.process_time))
    profile = _PROFILE[0]
    profile.enable()
    try:
        frames = list(function(*args))
    finally:
        profile.disable()
        profile.dump_stats(os.path.join(folder, f"{os.getpid()}.pstats"))
    yield from frames


def resume_group(entry, state) -> tuple[pa.Table, int | None]:
    """The group's engine as its state left it (restored unless this
    worker's engine is still at the saved version; as loaded for a new
    group), and the group's (waiting events, time processed so far)."""
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
    return waiting, processed


def late_horizon(watermark: int | None, processed: int | None) -> int:
    """The time before which a new event is late: the watermark of this
    micro-batch (Spark's rule), or what the group already processed (past
    the watermark after the end of an input)."""
    return max(x for x in (watermark, processed, -2**63) if x is not None)


def set_aside_late(new: pa.Table, horizon: int) -> tuple[pa.Table, list]:
    """(the events that end at or after `horizon`, a `late` output row for
    each of the others that reports itself: a quiet copy does not)."""
    if not new.num_rows or pc.min(new["end"]).as_py() >= horizon:  # none late (the usual micro-batch): no copy
        return new, []
    late = pc.less(new["end"], horizon)
    rows = [_event_row("late", e, f"late: ends at {terms.format_datetime_ms(e['end'])}, before "
                                  f"{terms.format_datetime_ms(horizon)}, where the watermark was "
                                  "(or where its group's input had ended)")
            for e in new.filter(late).to_pylist() if e["copy"] != COPY_QUIET]
    return new.filter(pc.invert(late)), rows


def ready_events(waiting: pa.Table, watermark: int | None, processed: int | None, ended: bool,
                 lateness_ms: int | None) -> tuple[pa.Array | None, int | None]:
    """Which waiting events to process now (a mask; None: none, and no
    flush), and the time processed once they are.

    Ready: what Spark's watermark has passed, or what ends more than the
    lateness before the latest waiting event of this group (the order
    within a group is all its answers depend on), so that what waits is
    one lateness of events, not a whole micro-batch. `lateness_ms` None
    (with update rules): the watermark alone, the same for every group:
    every group must take or refuse as late the same events of the update
    rules, or their backgrounds would differ. When the input has ended:
    every event, and a flush even with nothing waiting (the windows still
    open report)."""
    target = watermark
    if waiting.num_rows and lateness_ms is not None:
        own = pc.max(waiting["end"]).as_py() - lateness_ms
        target = own if target is None else max(target, own)
    if ended:
        if waiting.num_rows:
            processed = max(late_horizon(watermark, processed), pc.max(waiting["end"]).as_py() + 1)
        return pa.array([True] * waiting.num_rows, pa.bool_()), processed
    if target is not None and (processed is None or target > processed):
        return pc.less(waiting["end"], target), target
    return None, processed


def process_ready(engine: Engine, waiting: pa.Table, ready, ended: bool,
                  processed: int | None) -> tuple[list, pa.Table]:
    """Push the ready events to the engine and flush it (finally when the
    input has ended); unless it has, close the windows before `processed`,
    which event time has reached. Returns (the answers as output tables,
    the events still waiting)."""
    answers = _answer_tables(engine, _push(engine, waiting.filter(ready)))
    answers += _answer_tables(engine, engine.flush_table(final=ended))
    if not ended:
        answers += _answer_tables(engine, engine.close_windows(processed))
    return answers, waiting.filter(pc.invert(ready))


def keep_group(entry, state, spec, waiting: pa.Table, processed: int | None, pending: bool,
               watermark: int | None) -> None:
    """Save the group's engine and waiting events in its state under a new
    version (and its timeout: timeout_at), or remove the state when nothing
    waits, no partial match is left and the watermark has reached what was
    processed. (A group stays with update rules, whose changes of the
    background are in its state.)"""
    engine = entry[0]
    if (not waiting.num_rows and not pending and not spec.update_routes
            and processed <= (watermark or -2**63)):
        state.remove()
        entry[2] = None
        return
    version = uuid.uuid4().hex
    state.update((version, engine.state(), _ipc(waiting), processed))
    entry[2] = version
    if engine.timed:
        due = timeout_at(engine.next_due(), waiting, watermark)
        if due is not None:
            state.setTimeoutTimestamp(due)


def timeout_at(next_due: int | None, waiting: pa.Table, watermark: int | None) -> int | None:
    """When a timed group (windows, NOTSEQ) asks to be called again: once
    the watermark passes its next window or NOTSEQ deadline (`next_due`)
    or its earliest waiting event, whether or not rows come (Spark times a
    group out when the watermark passes its timeout). Never before the
    watermark, which Spark refuses, nor at or before 1970-01-01T00:00Z,
    which PySpark refuses: one due there waits for the watermark to pass
    1 ms, which changes no answer (any event before it is late already).
    None: nothing is due."""
    due = [t for t in (next_due, pc.min(waiting["end"]).as_py() if waiting.num_rows else None) if t is not None]
    return max(min(due), watermark or 0, 1) if due else None
