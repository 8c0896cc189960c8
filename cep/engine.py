"""The in-process engine: a compiled rule set running in this process's
SWI-Prolog, fed with batches of events.

    engine = Engine(queries)
    answers = engine.push(events)   # answers of every timestamp now complete
    answers += engine.flush()       # end of stream: close the last timestamp

`push_table` is the engine's entry: it takes an events table (cep.events.
EVENTS, what the readers give) and gives an AnswerBatch, which holds the
answers as the rules wrote them and gives them as an answer table
(`answers()`, cep.events.ANSWERS, what the writers take, on both engines),
a table per query (`tables()`), or Answer objects (`to_list()`). `push`
and `flush` go through them with Event and Answer objects (tests, small
programs).

Events are processed in order of their end time (a solution is detected when
its last event ends); events that end at the same instant are simultaneous.
Within a push the order does not matter (a rule set with a consumption
policy takes an instant's events in a fixed order, see _instant_order);
across pushes, events must come in non-decreasing order of their *end* time (sort interval events by end, not
by start, before pushing them in several batches).
Because more events of the latest instant may still come in the next batch,
`push` holds them back until a later instant arrives or `flush` is called.
An event that ends before an instant already processed is late: it is not
processed and is reported in `late` (the Spark engine handles lateness with
a watermark).
"""

from __future__ import annotations

import itertools
import json
import math
import numbers
import time
import zlib
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from cep import terms
from cep.algebra import ops
from cep.background.knowledge import run_background
from cep.compile import compile_queries
from cep.compile.windows import empty_rows
from cep.events import (ANSWERS, EVENTS, SURROGATE, TRIPLE, Answer, Reject, answers_of, events_table,
                        late_rejects)
from cep.errors import EngineError
from cep.io import check
from cep.io.tables import checked_rows
from cep.limits import Limits
from cep.runtime.batch import table_text
from cep.runtime.modifiers import modify
from cep.runtime.session import session
from cep.service.maintenance import Services
from cep.user_prolog import ensure_loaded, load_user_prolog

# an events table (cep.events.EVENTS) and updates_only: the event triggers
# the rule set's update rules alone (the Spark engine's copies of events for
# groups whose queries do not read them). Stream: the IRI (N-Triples text) of
# the event's stream, null for none (an event of every stream:
# docs/language.md, "Windows and aggregates")
SCHEMA = EVENTS.append(pa.field("updates_only", pa.bool_()))
COLUMNS = tuple(SCHEMA.names)


_instances = itertools.count()


class Engine:
    def __init__(self, queries, background=None, compiled=None, prolog=None, limits=None, services=None):
        """`background`: a cep.background.Background the queries read (RDFS
        entailment and background triples), loaded once per process; by
        default the files the queries name by FROM.
        `prolog`: the user's Prolog files whose predicates the queries'
        expressions call (paths, or a cep.user_prolog.UserProlog), loaded
        once per process. `compiled`: the queries' CompiledRules, compiled
        elsewhere (the Spark engine ships them to its workers; their
        background and Prolog files must then be loaded already,
        Session.load_background, cep.user_prolog.load_sources).
        `limits`: a cep.limits.Limits (default: its defaults).
        `services`: a cep.service.options.ServiceOptions, how the queries'
        SERVICE patterns are evaluated (their endpoints must be in its
        allow-list; default: none is)."""
        user = load_user_prolog(prolog)  # a file that does not load stops here
        self.limits = limits if limits is not None else Limits()
        if compiled is None:
            queries = tuple(queries)
            background = run_background(queries, background)  # with the files the queries name by FROM
        self.compiled = (compiled if compiled is not None
                         else compile_queries(queries, background, user, self.limits))
        self.session = session()
        if background is not None:
            self.session.load_background(background.module, background.facts())
            if any(q.form == "update" for q in self.compiled.queries):  # they read the files' triples
                self.session.load_instances(background.module, background.instance_facts())
        if self.compiled.user_module is not None:
            ensure_loaded(self.compiled.user_module)
        # a module of its own: two engines of the same rules never share goals
        self._module = f"{self.compiled.module}_{next(_instances)}"
        self.session.load_rules(self.module, self.compiled.program(self.module))
        self.session.set_limits(self.module, self.limits)
        # SERVICE patterns: their views pulled now, maintained at each evaluation (cep.service)
        self.services = Services.of(self.compiled.plan, self.module, services)
        self.layouts = self.compiled.layouts
        self._descriptions = {}  # DESCRIBE: subject -> its description in the background (static)
        self.orders = [binding_order(lay) for lay in self.layouts]
        # windowed queries are evaluated, and NOTSEQ deadlines fire, as event
        # time passes them: the close step (cep_window:cep_close/3) runs
        # after each push and at the end of the stream
        windows = [w for q in self.compiled.queries for w in q.windows]
        absence = any(getattr(n, "op", None) is ops.SeqAbsence for n in self.compiled.plan.nodes)
        self.windowed = any(q.evaluated for q in self.compiled.queries)
        self.timed = self.windowed or absence
        # queries whose empty windows give a row (COUNT(*) 0): their evaluations
        # begin at the stream's first instant, and a long gap may be cut (warned)
        self._empty_rows = any(empty_rows(q) for q in self.compiled.queries if q.evaluated)
        self.counting = any(w.count is not None for w in windows)  # count windows count instants' triples, events
        self.count_streams = self.compiled.count_streams if self.counting else None
        self.streamed = self.compiled.streamed
        # windowed CONSTRUCTs whose triples are read: a window's triples are
        # fed back at its evaluation time, so the events after it wait until
        # it is evaluated (_process splits a batch at every multiple of this)
        # Likewise where updates change the background: a window reads it as
        # the instants up to its evaluation time left it (a count window is
        # evaluated at every instant); a query whose groups have windows of
        # their own is evaluated when its leading parts' windows are
        producers = self.compiled.chaining.producers
        changing = any(q.form == "update" for q in self.compiled.queries)
        everies = [_evaluation_grid(out.query, w) for out in self.compiled.plan.outputs
                   if out.query.window is not None and (out.query.name in producers or changing)
                   for w in out.evaluated_by]
        if self.services is not None and self.services.period is not None:
            everies.append(self.services.period)  # a SERVICE view is maintained at each evaluation
        self._feed_every = math.gcd(*everies) if everies else None
        self._order = _instant_order(self.compiled.queries)
        self.late: list[Reject] = []
        self.rejects: list[Reject] = []  # pushed rows that cannot be used (push_table)
        # what the run should know but is no error, each said once (cep run
        # prints them as they come): a REGEX that PCRE gave up on
        self.warnings: list[str] = []
        self._static_warned = False  # _no_first_instant said so
        if self.services is not None:  # its QoS alerts (freshness below alpha) are warnings too
            self.services.alerts = self.warnings
        self._regex = "cep_regex(" in self.compiled.body  # whether a query calls REGEX
        self._regex_warned: set = set()
        self._held = SCHEMA.empty_table()
        self._last = None  # end time of the last processed group

    @property
    def module(self) -> str:
        """The Prolog module of this engine's rules and state."""
        if self._module is None:
            raise RuntimeError("this engine is closed (Engine.close): make a new one")
        return self._module

    def close(self):
        """Unload this engine's rules and state from the process's Prolog,
        so that a process making engine after engine (a step per
        micro-batch) does not grow. Answers not flushed are dropped; the
        engine cannot be used after. Closing twice does nothing; `with
        Engine(...) as engine:` closes it at the end of the block."""
        if self._module is not None:
            self.session.unload_rules(self._module)
            self._module = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def push(self, events) -> list[Answer]:
        """push_table for a list of Events, its answers as Answers. An event
        that no events table can hold (times that are not integers of 64
        bits, Arrow's; a term that is not text, Unicode's) is set aside in
        `rejects` here; the rest are named by their row in the list."""
        events = list(events)
        unusable = [_unusable(e) for e in events]
        if any(unusable):
            self.rejects.extend(_pushed_reject(i, vars(e), why) for i, (e, why) in enumerate(zip(events, unusable))
                                if why)
            events = [e if e.source else replace(e, source=f"row {i} of the pushed events")
                      for i, (e, why) in enumerate(zip(events, unusable)) if not why]
        return self.push_table(events_table(events)).to_list()

    def flush(self) -> list[Answer]:
        """End of stream: process the instant held back, evaluate the
        windows of windowed queries until they hold nothing (every window
        that holds a solution reports), and fire every NOTSEQ deadline (no
        event can cancel it any more)."""
        return self.flush_table(final=True).to_list()

    def push_table(self, table: pa.Table, *, checked: bool = False) -> AnswerBatch:
        """Process a batch of events, a table with columns s, p, o
        (N-Triples text), start, end (epoch ms; or Arrow timestamps or
        dates, their instants: _conform) and optionally
        source, updates_only (true: the event triggers only the update
        rules) and stream (the IRI of the event's stream, `<...>`; null:
        none), as the readers give it (cep.events.EVENTS); returns the
        answers of every instant that is complete (all but the batch's
        latest). A row that cannot be used (a malformed term, no time, an
        end before its start) is set aside in `rejects`, and the others go
        on. `checked=True`: the rows come checked and canonical (cep.io's
        readers, cep.io.tables.checked_rows) and are not checked again; a
        row without a start or end time then breaks that promise, and
        raises ValueError (no row of the table is processed)."""
        self.module  # a closed engine says so: the instant held back would take the rows silently
        table, notes = _conform(table)
        if not checked:
            table = self._checked(table, notes)
        elif notes or table["start"].null_count or table["end"].null_count:
            i = min(notes) if notes else pc.index(pc.and_(pc.is_valid(table["start"]), pc.is_valid(table["end"])),
                                                  False).as_py()
            raise ValueError(f"Engine.push_table(checked=True): row {i} has no start or end time, or a value no "
                             "event has (checked rows have neither); push unchecked rows with checked=False, and "
                             "such a row is set aside in `rejects`")
        if self._held.num_rows:
            table = pa.concat_tables([self._held, table])
        if not table.num_rows:
            return self._batch(b"")
        ends = table["end"].to_numpy()
        if len(self._order) > 1 or (ends[1:] < ends[:-1]).any():  # (most inputs come in time order)
            table = table.sort_by(self._order)
            ends = table["end"].to_numpy()
        held = int(np.searchsorted(ends, ends[-1]))  # the latest instant's events, the table's last rows
        self._held = table.slice(held)
        return self._process(table.slice(0, held))

    def flush_table(self, *, final: bool) -> AnswerBatch:
        """Process the instant held back, as an AnswerBatch. `final=True`:
        the stream has ended, as flush() says (windows report and NOTSEQ
        deadlines fire); `final=False`: more events may come (the Spark
        engine flushes each micro-batch so). Every call says which: a
        default would lose the end-of-stream answers of a caller that
        meant the end."""
        held, self._held = self._held, SCHEMA.empty_table()
        batch = self._process(held)
        if final and self._last is None:
            self._no_first_instant()
        if final and self.timed and self._last is not None:
            closing = self._batch(*self._close("final", self._last))
            batch = batch + closing
        return batch

    def _process(self, table: pa.Table) -> AnswerBatch:
        if not table.num_rows:
            return self._batch(b"")
        if self._last is not None:
            late = pc.less(table["end"], self._last)
            if pc.any(late).as_py():
                self._reject_late(table.filter(late))
                table = table.filter(pc.invert(late))
                if not table.num_rows:
                    return self._batch(b"")
        lines = []
        if self._last is None:  # the first instant: the solutions of the background alone, once
            lines.append(self.session.static(self.module, table["end"][0].as_py()))
            if self._empty_rows:  # their windows are evaluated from the stream's first instant
                lines.append(self.session.close(self.module, "begin", table["end"][0].as_py()))
        self._last = table["end"][-1].as_py()
        copies = _copy_indexes(table) if self.compiled.copies else None
        if len(self._order) > 1:
            table, copies = _distinct_events(table, self._order, copies)
        for start, stop in _chunks(table["end"].to_numpy(), self._feed_every):
            part = table.slice(start, stop - start)
            if self.counting:  # an instant's counted events first, in the order they came (cep_arrival/1)
                part = part.take(pc.sort_indices(pa.table({"end": part["end"], "later": pc.invert(self._counted(part))}),
                                                 [("end", "ascending"), ("later", "ascending")]))
            if self._feed_every is not None:  # the windows before the part's events, fed back first
                lines += self._close("now", part["end"][0].as_py())
            if self.services is not None:  # the SERVICE views maintained before the part's joins
                self.services.before_push(part["end"][0].as_py())
                began = time.monotonic()
            lines.append(self.session.push(self.module, table_text(
                part["s"], part["p"], part["o"], part["start"], part["end"], part["updates_only"],
                part["stream"] if self.streamed else None,
                copies[start:stop] if copies is not None else None)))
            if self.services is not None:
                self.services.evaluated(time.monotonic() - began)
            if self.timed:  # every instant of the part is complete: windows up to its last close
                lines += self._close("now", part["end"][-1].as_py() + 1, part,
                                     copies[start:stop] if copies is not None else None)
        batch = self._batch(*lines)
        # A batch's text and its intermediate columns are transient and large
        # (tens of MB for 100,000 events); Arrow's allocator (mimalloc) keeps
        # what they freed and its footprint creeps up over a long stream, while
        # the memory Arrow holds stays level. Hand the freed pages back: it
        # costs a fraction of a millisecond.
        pa.default_memory_pool().release_unused()
        return batch

    def _close(self, how: str, time_ms: int, part=None, copies=None) -> list[bytes]:
        """The answer texts of a close (Session.close): `how` "now" or
        "final", `part` the events just pushed and `copies` their copy
        indexes (for count windows)."""
        counts = ()
        if self.counting and part is not None:
            counted = self._counted(part)
            counts = _instant_counts(part.filter(counted), copies.filter(counted) if copies is not None else None)
        if self.services is None:
            return [self.session.close(self.module, how, time_ms, counts)]
        # Each evaluation of a query that joins its SERVICE views gets its own
        # maintenance before it (the seed's Algorithm 1): a close that would
        # make several (the end of the stream, a gap in event time) is made
        # one such evaluation at a time
        texts = []
        while (due := self.session.window_due(self.module, how, time_ms)) is not None:
            texts.append(self._maintained_close("now", due + 1, counts))
            counts = ()
        texts.append(self._maintained_close(how, time_ms, counts))
        return texts

    def _maintained_close(self, how: str, time_ms: int, counts) -> bytes:
        """A close, after the SERVICE views are maintained for the windows
        about to report; its time is their evaluations' latency."""
        self.services.before_windows(time_ms if how == "now" else time_ms + 1)
        began = time.monotonic()
        lines = self.session.close(self.module, how, time_ms, counts)
        self.services.evaluated(time.monotonic() - began)
        return lines

    def _counted(self, part: pa.Table) -> pa.Array:
        """Which events the count windows count: those of their streams (or
        of none) that trigger more than the update rules."""
        counted = pc.invert(pc.fill_null(part["updates_only"], False))
        if self.count_streams is not None:
            of = pc.is_in(part["stream"], pa.array(sorted(self.count_streams), pa.string()))
            counted = pc.and_(counted, pc.or_(pc.is_null(part["stream"]), pc.fill_null(of, False)))
        return counted

    def _batch(self, *texts: bytes) -> AnswerBatch:
        """The answers of calls of the rules (every call's lines come here),
        in order. Each call's text is read on its own: joined, the texts of
        a batch are tens of MB, a fresh allocation whose pages the kernel
        zeroes at every batch (on W2 that cost more than reading them)."""
        if self._regex:
            self._regex_warnings()
        if self._empty_rows:
            self._skipped_warnings()
        tables = [_read_lines(text, self.compiled.width) for text in texts if text]
        table = (pa.concat_tables(tables) if len(tables) > 1 else tables[0] if tables
                 else _read_lines(b"", self.compiled.width))
        return AnswerBatch(self, _clamped(modify(table, self.layouts, self.compiled.queries)))

    def _no_first_instant(self):
        """A warning when the stream ended without an event and a query over
        static data alone is in the rule set: its answers are made at the
        stream's first instant, which never came (once per run)."""
        names = [q.name for q in self.compiled.queries if q.over_static_data]
        if names and not self._static_warned:
            self._static_warned = True
            self.warnings.append(
                f"{', '.join(names)}: over static data alone (FROM <file>, no stream), answered at the "
                f"stream's first instant; the stream had no event, so no answer (docs/language.md, "
                f"\"Queries over static data\")")

    def _regex_warnings(self):
        """A warning per query whose REGEX PCRE gave up on (the solution
        failed the filter: cep_values:cep_regex/4), once per query."""
        for where in self.session.regex_gave_up():
            new = [i for i in (where or [None]) if i not in self._regex_warned]
            self._regex_warned.update(new)
            names = [self.layouts[i].name if i is not None else "a query" for i in new]
            if names:
                self.warnings.append(
                    f"{', '.join(names)}: REGEX or REPLACE gave up on a value (PCRE's match limit: the pattern "
                    f"backtracks too much on that text); that call is SPARQL's error value (a FILTER "
                    f"drops the solution, a SELECT expression leaves its variable unbound), and the run "
                    f"goes on (said once per query)")

    def _skipped_warnings(self):
        """A warning per run of evaluations over empty windows that the
        engine cut (cep_window:empty_run_limit/1): which, and from when."""
        for index, first, last, count in self.session.window_skipped(self.module):
            self.warnings.append(
                f"{self.layouts[index].name}: its window was empty at {count:,} evaluations in a row, from "
                f"{terms.format_datetime_ms(first)} to {terms.format_datetime_ms(last)} (a gap in event time); "
                f"the evaluations after that are skipped, without their rows (COUNT 0), until its window "
                f"holds a solution again")

    def _checked(self, table: pa.Table, notes: dict) -> pa.Table:
        """The usable rows of a pushed table; the others go to `rejects`,
        named by their source or else by their row in the table. `notes`:
        the reasons of rows whose value _conform could not take (null
        there, so the check refuses them too)."""
        usable, bad = checked_rows(table, ("start", "end"))
        if bad:
            rows = table.take(pa.array([i for i, _ in bad], pa.int64())).to_pylist()
            self.rejects.extend(_pushed_reject(i, row, notes.get(i, reason)) for row, (i, reason) in zip(rows, bad))
        return usable

    def _reject_late(self, table):
        self.late.extend(late_rejects(table, self._last, "which was already processed"))

    def instantiate(self, layout, values):
        """CONSTRUCT: the template with the answer's values (its blank nodes
        among them, named in Prolog: cep_runtime:cep_skolem/2)."""
        query = self.compiled.queries[layout.index]
        env = dict(zip(layout.fields, values))
        return ops.described(ops.instantiate(query.template, env, env.get), self.description)

    def description(self, subject: str) -> list:
        """DESCRIBE: the concise bounded description of a resource (an IRI
        or a blank node, N-Triples) in the background graph loaded into
        Prolog (cep_runtime:cep_describe/4), sorted; [] without one."""
        module = self.compiled.background_module
        if module is None:
            return []
        if subject not in self._descriptions:
            kind, name = terms.split(subject)[:2]
            text, = self.session.call("cep_describe", "cep_runtime", [("atom", module), ("atom", kind),
                                                                      ("atom", name)])
            self._descriptions[subject] = sorted(tuple(line.split("\t")) for line in text.splitlines())
        return self._descriptions[subject]

    def close_windows(self, now_ms: int) -> AnswerBatch:
        """Event time has reached now_ms (a watermark, a clock): evaluate
        the windows of windowed queries due before it, and give the NOTSEQ
        answers whose deadline is before it, whether or not an event has
        come since. Call it after flush_table, and only when no event
        before now_ms will come."""
        if self._held.num_rows:
            raise ValueError("Engine.close_windows() with an instant held back: flush first")
        if not self.timed:
            return self._batch(b"")
        return self._batch(*self._close("now", now_ms))

    def advance(self, now_ms: int) -> bool:
        """Event time has reached now_ms with no event to process (a
        watermark): drop the partial matches past their window. Returns
        whether any partial match remains, or anything the windows of
        windowed queries still need. Call it after flush_table (and
        close_windows)."""
        if self._held.num_rows:
            raise ValueError("Engine.advance() with an instant held back: flush first")
        pending = self.session.advance(self.module, now_ms)
        return pending or self.windowed and self.session.window_status(self.module)[1]

    def next_due(self) -> int | None:
        """The next time at which a window of a windowed query can report,
        or a NOTSEQ deadline fires (once event time passes it), or None."""
        return self.session.window_status(self.module)[0] if self.timed else None

    def state(self) -> bytes:
        """Everything the engine remembers between batches, as bytes: its
        partial matches (Prolog's goal stores), the last instant
        processed, and the entries of its SERVICE views that the stream
        needed, with their maintenance (the rest is as the initial pull
        made it). Call it after flush_table (the instant
        held back by push is not part of it)."""
        if self._held.num_rows:
            raise ValueError("Engine.state() with an instant held back: flush first")
        return self._state()

    def state_size(self) -> int:
        """The size in bytes of state() (what bench/memory.py measures),
        taken also while push holds an instant back (it is not part of it
        yet). It serializes the state: its cost grows with the state."""
        return len(self._state())

    def _state(self) -> bytes:
        goals = self.session.dump(self.module)
        # the rules it is of, and a checksum of the goals: SWI-Prolog reads
        # its serialized terms unchecked, and damaged bytes abort the process
        fields = {"last": self._last, "rules": self.compiled.module, "crc32": zlib.crc32(goals)}
        if self.services is not None:  # the part of the SERVICE views the stream needed (cep.service)
            fields["services"] = self.services.state()
        header = json.dumps(fields).encode()
        return header + b"\n" + goals

    def restore(self, state: bytes):
        """Continue from a state() of an engine of the same rules. Bytes
        that are no such state (of other rules, damaged, of a version of
        the engine whose states had no checksum) are an EngineError."""
        header, newline, goals = bytes(state).partition(b"\n")
        try:
            fields = json.loads(header)
        except ValueError:
            fields = None
        if not isinstance(fields, dict) or not {"last", "rules", "crc32"} <= fields.keys() or not newline:
            raise EngineError("Engine.restore: not a state of an engine (Engine.state()) of this version")
        if fields["rules"] != self.compiled.module:
            raise EngineError("Engine.restore: a state of an engine of other rules")
        if fields["crc32"] != zlib.crc32(goals):
            raise EngineError("Engine.restore: the state is damaged (its checksum differs)")
        self.session.restore(self.module, goals)
        self._last = fields["last"]
        if self.services is not None:
            self.services.restore(fields["services"])
        self._held = SCHEMA.empty_table()


def _pushed_reject(i: int, row: dict, reason: str) -> Reject:
    """A pushed event set aside (push, push_table): named by its source,
    else by its row `i` in what was pushed; its text s p o start end, the
    times as Python writes them (a time given as a string shows quoted)."""
    source = row["source"] if isinstance(row["source"], str) else None
    return Reject(source or f"row {i} of the pushed events", reason,
                  f"{row['s']} {row['p']} {row['o']} {row['start']!r} {row['end']!r}")


def _evaluation_grid(query, w) -> int:
    """A period whose multiples are all the evaluation times of a windowed
    query evaluated by window w: every instant for a count window, else its
    period (COMPUTED EVERY, else the step), counted from the first close
    with RSP-QL's t0."""
    if w.count is not None:
        return 1
    every = query.every_ms or w.step_ms
    return math.gcd(every, w.first_close_ms % every)


def _instant_counts(table: pa.Table, copies=None) -> list:
    """(instant, triples, events, events once) of each instant of a table
    sorted by end, for count windows (cep_window:cutoff/6). An event is a
    timestamped graph: the triples of one record (a TriG or N-Quads named
    graph, an N-Triples subject, a table's row), which share their source,
    interval and stream; a triple without a source is an event of its
    own. A record repeated (another graph, line or row with the same
    triples: another source) is two events (a stream is a multiset,
    cep.algebra.copies); rows with the same source are one record. Events
    once: those of a query that reads the stream as a set (a consumption
    policy), the records with a triple that is no copy (`copies`: the copy
    index of each row, none when no query of the rule set reads copies)."""
    if not table.num_rows:
        return []
    first = pa.array(np.ones(table.num_rows, bool)) if copies is None else pc.equal(copies, 0)
    records = pa.table({
        "end": table["end"], "start": table["start"], "stream": pc.fill_null(table["stream"], ""),
        "record": _records(table), "first": first,
    }).group_by(["end", "start", "stream", "record"]).aggregate([("first", "any")])
    instants, triples = np.unique(table["end"].to_numpy(), return_counts=True)
    events = dict(zip(*np.unique(records["end"].to_numpy(), return_counts=True)))
    once = dict(zip(*np.unique(records.filter(records["first_any"])["end"].to_numpy(), return_counts=True)))
    return [(t, n, int(events[t]), int(once.get(t, 0))) for t, n in zip(instants.tolist(), triples.tolist())]


def _copy_indexes(table: pa.Table) -> pa.Array:
    """The copy index of each event of a table (cep.algebra.copies): 0
    for the first record of its triple, interval and stream, 1 for the
    second... An event's records are the rows that hold it with distinct
    sources (a row without a source is a record of its own); rows of one
    record (one source) are one event, as a graph is a set of triples. An
    event for the update rules alone has index 0 (updates are sets)."""
    n = table.num_rows
    if n < 2:
        return pa.array(np.zeros(n, np.int64))
    updates = np.asarray(pc.fill_null(table["updates_only"], False).to_numpy(zero_copy_only=False), dtype=bool)
    # each column as integer codes (terms by dictionary), sorted by all of them at once
    codes = [_codes(table[name]) for name in ("s", "p", "o", "stream")]
    codes += [table[name].to_numpy() for name in ("start", "end")] + [updates.astype(np.int64)]
    source = _records(table)
    order = np.lexsort([source] + codes[::-1])  # by the event, then by the record
    new_event = np.zeros(n, bool)
    new_event[0] = True
    for column in codes:
        ranked = column[order]
        new_event[1:] |= ranked[1:] != ranked[:-1]
    ranked = source[order]
    new_record = new_event.copy()
    new_record[1:] |= ranked[1:] != ranked[:-1]
    records = np.cumsum(new_record)  # records counted from the first row
    first = np.maximum.accumulate(np.where(new_event, np.arange(n), 0))  # each event's first row
    index = records - records[first]
    index[updates[order]] = 0
    out = np.empty(n, np.int64)
    out[order] = index
    return pa.array(out)


def _records(table: pa.Table) -> np.ndarray:
    """The record of each row of a table, as an integer code: rows with
    one source share it; a row without a source is a record of its own."""
    source = _codes(pc.if_else(pc.equal(table["source"], ""), pa.scalar(None, pa.string()), table["source"]))
    return np.where(source < 0, -1 - np.arange(table.num_rows), source)


def _codes(column) -> np.ndarray:
    """A string column as integer codes, equal for equal strings, -1 for null."""
    encoded = pc.dictionary_encode(column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column)
    return np.asarray(pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _instant_order(queries) -> list:
    """How a push sorts its events: by end time; with a consumption policy
    other than unrestricted, an instant's events then by start and by
    their terms' text, so that which partial match is "most recent" or
    "oldest" among those of one instant (the order they were stored in)
    does not depend on the order they arrived in (docs/language.md,
    "Consumption policies")."""
    if all(q.option("policy", "unrestricted") == "unrestricted" for q in queries):
        return [("end", "ascending")]
    return [(name, "ascending") for name in ("end", "start", "s", "p", "o", "updates_only", "stream")]


def _distinct_events(table: pa.Table, order, copies=None):
    """(table, copies) without repeated rows: a query with a consumption
    policy reads the stream as a set of occurrences, so a repeat is the
    same event, which a consuming policy must not use twice. The copies of
    an event (copy index K >= 1, `copies` given: a query of the rule set
    reads the stream as a multiset) are kept for the queries that read
    them (only their rules take '$copy'(K, P)); a row that repeats its
    event's copy (the same record) goes, and so does a repeat of an event
    for the update rules alone (updates are sets). (Without a policy, an
    event pattern's answers are deduplicated and repeats cost nothing
    else.) `table` is sorted by `order` (_instant_order)."""
    if table.num_rows < 2:
        return table, copies
    names = ["s", "p", "o", "start", "end", "updates_only", "stream"]
    if copies is not None:  # an event's copies in order, the table's order kept otherwise
        table = table.append_column("$copy", copies).sort_by(list(order) + [("$copy", "ascending")])
        names.append("$copy")
    same = None
    for name in names:
        column = table[name].combine_chunks()
        if name == "updates_only":
            column = pc.fill_null(column, False)
        elif name == "stream":
            column = pc.fill_null(column, "")
        equal = pc.equal(column.slice(1), column.slice(0, len(column) - 1))
        same = equal if same is None else pc.and_(same, equal)
    table = table.filter(pa.concat_arrays([pa.array([True]), pc.invert(same)]))
    if copies is None:
        return table, None
    return table.drop_columns(["$copy"]), table["$copy"].combine_chunks()


CHUNK_EVENTS = 25_000


def _chunks(ends, every=None) -> list[tuple[int, int]]:
    """(start, stop) rows of the Prolog calls for events sorted by end:
    about CHUNK_EVENTS each, never splitting an instant (its events are
    simultaneous). A call's answers are one list in Prolog: measured on
    W2, calls of 100,000 events cost 30% more per event than calls of
    10,000, and one of 400,000 overflowed Prolog's 1 GB stack; calls of
    25,000 cost 4% less than those of 10,000 on W2 and 8% less on W1
    (each call's fixed costs: the kernels of its text, its answers'
    reader). `every`:
    no call holds events on both sides of a multiple of it (a window
    evaluation that feeds its triples back)."""
    n = len(ends)
    if every is not None and n:
        slot = -(-ends // every)  # the evaluation each event precedes (or is at)
        cuts = set((np.flatnonzero(np.diff(slot)) + 1).tolist())
        bounds = sorted(cuts.union(*_chunks(ends)))
        return list(zip(bounds[:-1], bounds[1:]))
    if n <= CHUNK_EVENTS:
        return [(0, n)]
    starts = np.flatnonzero(np.diff(ends)) + 1  # where an instant begins
    out, start = [], 0
    while start < n:
        k = np.searchsorted(starts, start + CHUNK_EVENTS)
        stop = int(starts[k]) if k < len(starts) else n
        out.append((start, stop))
        start = stop
    return out


def _epoch_ms(time) -> bool:
    """Whether `time` can be an event's time: an integer of 64 bits."""
    return isinstance(time, numbers.Integral) and not isinstance(time, bool) and -2**63 <= time < 2**63


def _clamped(table: pa.Table) -> pa.Table:
    """The answer table with each start and end an instant events may have
    (cep.io.check.clamped), after the modifiers, which take an evaluation's
    answers by their end."""
    for name in ("start", "end"):
        column = table[name]
        low, high = pc.min_max(column).values()
        if low.is_valid and (low.as_py() < check.TIME_MIN_MS or high.as_py() > check.TIME_MAX_MS):
            column = pc.min_element_wise(pc.max_element_wise(column, check.TIME_MIN_MS), check.TIME_MAX_MS)
            table = table.set_column(table.schema.get_field_index(name), name, column)
    return table


def _unusable(event) -> str | None:
    """Why an Event cannot be a row of an events table, or None (what the
    row says is checked after: cep.io.tables.checked_rows)."""
    if not (_epoch_ms(event.start) and _epoch_ms(event.end)):
        return "its times are not epoch milliseconds, integers of 64 bits"
    for name in ("s", "p", "o", "source", "stream"):
        value = getattr(event, name)
        if value is not None and not isinstance(value, str):
            return f"its {name} is {type(value).__name__}, not text"
        if value and not value.isascii() and SURROGATE.search(value):
            return f"its {name} is not Unicode text: it holds a lone surrogate"
    return None


def _conform(table: pa.Table) -> tuple[pa.Table, dict[int, str]]:
    """A pushed table in the engine's columns (SCHEMA), and the reason for
    each row with a value no column of them can hold (a time that is not
    an integer of 64 bits, bytes that are not UTF-8), null there. Times
    may come as integers of any width, floats with integer values, or
    timestamps and dates (their epoch milliseconds, floored); a column of
    another type (text for a time, a list, a struct) is a TypeError."""
    names = table.column_names
    missing = [name for name in ("s", "p", "o", "start") if name not in names]
    if missing:
        raise ValueError(f"Engine.push_table: the table has no column {', '.join(missing)} (events have s, p, "
                         f"o, start and optionally end, source, stream: cep.events.EVENTS)")
    if "end" not in names:
        table = table.append_column("end", table["start"])
    for name in ("source", "updates_only", "stream"):
        if name not in names:
            table = table.append_column(name, pa.nulls(table.num_rows, SCHEMA.field(name).type))
    notes: dict[int, str] = {}
    columns = [_times(table[name], name, notes) if name in ("start", "end")
               else _texts(table[name], name, notes) if SCHEMA.field(name).type == pa.string()
               else _cast(table[name], name, SCHEMA.field(name).type) for name in COLUMNS]
    table = pa.table(columns, schema=SCHEMA)
    stream = table["stream"]
    if stream.null_count < table.num_rows:  # "" is no stream; a bare IRI is written <...>
        stream = pc.if_else(pc.equal(stream, ""), pa.scalar(None, pa.string()), stream)
        bare = pc.and_(pc.is_valid(stream), pc.invert(pc.starts_with(stream, "<")))
        stream = pc.if_else(bare, pc.binary_join_element_wise("<", stream, ">", ""), stream)
        table = table.set_column(COLUMNS.index("stream"), "stream", stream)
    return table, notes


def _cast(column, name: str, to: pa.DataType):
    try:
        return pc.cast(column, to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise TypeError(f"Engine.push_table: column {name} is {column.type}, which cannot be {to} ({exc})") from None


def _times(column, name: str, notes: dict) -> pa.ChunkedArray:
    """A column of times as epoch milliseconds (int64); a value that is
    none is null, with its reason in `notes`."""
    kind = column.type
    if pa.types.is_date(kind):
        return _cast(_cast(column, name, pa.date64()), name, pa.int64())  # date64 counts milliseconds
    if pa.types.is_timestamp(kind):
        per_ms = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}[kind.unit]
        raw = _cast(column, name, pa.int64())
        if per_ms is None:  # seconds, times 1000 as doubles: past int64's milliseconds, a reject, not an overflow
            return _unfit(pc.multiply(pc.cast(raw, pa.float64()), 1000.0), name, notes)
        whole = pc.divide(raw, per_ms)  # toward zero: before 1970, a partial millisecond goes one back
        return pc.subtract(whole, pc.cast(pc.and_(pc.less(raw, 0), pc.not_equal(pc.multiply(whole, per_ms), raw)),
                                          pa.int64()))
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return _unfit(column, name, notes)
    if pa.types.is_null(kind):
        return pc.cast(column, pa.int64())
    raise TypeError(f"Engine.push_table: column {name} is {kind}, not times (epoch milliseconds: integers, "
                    f"or timestamps)")


def _unfit(column, name: str, notes: dict) -> pa.ChunkedArray:
    """Numbers as int64, those that are no integer of 64 bits null (noted)."""
    if pa.types.is_floating(column.type):
        fit = pc.and_(pc.and_(pc.is_finite(column), pc.equal(pc.floor(column), column)),
                      pc.and_(pc.greater_equal(column, -2.0**63), pc.less(column, 2.0**63)))
    elif column.type == pa.uint64():
        fit = pc.less_equal(column, pa.scalar(2**63 - 1, pa.uint64()))
    else:
        return pc.cast(column, pa.int64())
    fit = pc.fill_null(fit, True)
    if pc.all(fit).as_py():
        return pc.cast(column, pa.int64())
    for i in np.nonzero(~np.asarray(fit.to_numpy(zero_copy_only=False), dtype=bool))[0]:
        notes.setdefault(int(i), f"{name} is {column[int(i)].as_py()!r}, not epoch milliseconds, an integer of 64 bits")
    return pc.cast(pc.if_else(fit, column, pa.scalar(None, column.type)), pa.int64(), safe=False)


def _texts(column, name: str, notes: dict) -> pa.ChunkedArray:
    """A column of text (string, large_string, dictionary, UTF-8 bytes...)
    as string; bytes that are not UTF-8 null (noted)."""
    try:
        return pc.cast(column, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if not pa.types.is_binary(column.type) and not pa.types.is_large_binary(column.type):
            raise TypeError(f"Engine.push_table: column {name} is {column.type}, not text") from None
    values = []
    for i, raw in enumerate(column.to_pylist()):
        try:
            values.append(None if raw is None else raw.decode("utf-8"))
        except UnicodeDecodeError:
            values.append(None)
            notes.setdefault(i, f"column {name} is not UTF-8 text")
    return pa.chunked_array([pa.array(values, pa.string())])


# Bytes of answer lines parsed by one call of Arrow's CSV reader, whose block
# (a line must fit in one) is at most 2 GiB. A longer line (a SELECT of
# tens of thousands of expressions, or of long values) is split in Python.
ANSWER_BLOCK = 1 << 30


def _read_lines(data: bytes, width: int) -> pa.Table:
    """Answer lines (cep_runtime.pl: QueryIndex TAB Start TAB End, then
    `width` fields, empty when unbound) -> a table q, start, end, f0...
    N-Triples text has no raw tab, newline or carriage return, and its
    quotes are not CSV quotes. The text is UTF-8 by construction
    (Session.push), so it is not validated again. Any line length: the text is read in pieces
    of whole lines of at most ANSWER_BLOCK bytes, a longer line alone."""
    names = ["q", "start", "end"] + [f"f{i}" for i in range(width)]
    types = {"q": pa.int32(), "start": pa.int64(), "end": pa.int64()}
    types.update({f"f{i}": pa.string() for i in range(width)})
    schema = pa.schema([(n, types[n]) for n in names])
    if not data:
        return schema.empty_table()
    buffer, pieces, start, n = pa.py_buffer(data), [], 0, len(data)
    while start < n:
        stop = min(start + ANSWER_BLOCK, n)
        if stop < n:
            cut = data.rfind(b"\n", start, stop)
            if cut < start:  # one line longer than a block
                end = data.find(b"\n", stop)
                end = n if end < 0 else end
                pieces.append(_long_line(data[start:end], schema))
                start = end + 1
                continue
            stop = cut + 1
        pieces.append(pacsv.read_csv(
            buffer.slice(start, stop - start),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False,
                                           block_size=max(1 << 20, stop - start + 1)),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False,
                                             newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=[""],
                                                 strings_can_be_null=True, check_utf8=False)))
        start = stop
    return pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0]


def _long_line(line: bytes, schema: pa.Schema) -> pa.Table:
    """One answer line as a table of one row."""
    fields = line.decode("utf-8").split("\t")
    if len(fields) != len(schema):
        raise EngineError(f"an answer line of the rules has {len(fields)} fields, not {len(schema)}")
    return pa.table([pa.array([int(v)] if i < 3 else [v or None], schema.field(i).type)
                     for i, v in enumerate(fields)], schema=schema)


class AnswerBatch:
    """The answers of one push: one table, in the order they were found
    (instant by instant), with columns q (the query's index), start, end
    (epoch ms) and f0, f1, ... (N-Triples text of the query's fields, null
    when unbound)."""

    def __init__(self, engine: Engine, table: pa.Table):
        self.engine = engine
        self.table = table
        self._answers = self._selected = None  # answers() and select_columns(), made once

    def __len__(self) -> int:
        return self.table.num_rows

    def __add__(self, other: AnswerBatch) -> AnswerBatch:
        """The answers of this batch, then those of `other` (the same engine's)."""
        return AnswerBatch(self.engine, pa.concat_tables([self.table, other.table]))

    def select_columns(self) -> tuple[str, list[str], pa.Table] | None:
        """(query, variables, table) when every answer of the batch is one
        SELECT query's and binds each of its variables (the usual batch):
        the table holds start, end, then a column per variable (name
        order, as answers() lists a binding's variables), which a writer
        reads as it is, without the maps answers() makes of them. None
        for any other batch, and an empty one."""
        if self._selected is None:
            self._selected = (self._select_columns(),)
        return self._selected[0]

    def _select_columns(self):
        table = self.table
        if not table.num_rows:
            return None
        bounds = pc.min_max(table["q"])
        first = bounds["min"].as_py()
        if bounds["max"].as_py() != first:  # several queries' answers
            return None
        layout, order = next((lay, o) for lay, o in zip(self.engine.layouts, self.engine.orders)
                             if lay.index == first)
        if layout.form != "select":
            return None
        columns = [table[f"f{i - 3}"] for _, i in order]
        if any(c.null_count or pc.any(pc.equal(c, "")).as_py() for c in columns):  # unbound: left out of a map
            return None
        return layout.name, [name for name, _ in order], pa.table([table["start"], table["end"], *columns],
                                                                 names=["start", "end"] + [f"v{j}" for j in
                                                                                          range(len(columns))])

    def tables(self) -> dict[str, pa.Table]:
        """A table per query that answered: start, end and a column per
        variable (SELECT: the projection; CONSTRUCT: the template's
        variables, whose triples to_list() instantiates)."""
        out = {}
        for layout in self.engine.layouts:
            rows = self.table.filter(pc.equal(self.table["q"], layout.index))
            if rows.num_rows:
                columns = ["start", "end"] + [f"f{i}" for i in range(len(layout.fields))]
                out[layout.name] = rows.select(columns).rename_columns(["start", "end", *layout.fields])
        return out

    def to_list(self) -> list[Answer]:
        """The answers as Answer objects, in order."""
        return answers_of(self.answers())

    def answers(self) -> pa.Table:
        """The answers as an answer table (cep.events.ANSWERS), in the order
        they were found. SELECT bindings are made column-wise; CONSTRUCT
        templates are instantiated answer by answer (an answer whose
        template gives no triple is none)."""
        if self._answers is None:
            self._answers = self._answer_table()
        return self._answers

    def _answer_table(self) -> pa.Table:
        table = self.table
        if not table.num_rows:
            return ANSWERS.empty_table()
        engine, parts = self.engine, []
        for layout, order in zip(engine.layouts, engine.orders):
            where = pc.indices_nonzero(pc.equal(table["q"], layout.index))
            if not len(where):
                continue
            rows = table if len(where) == table.num_rows else table.take(where)  # one query's: no copy
            n = rows.num_rows
            if layout.form == "select":
                bindings, triples = _bindings(rows, order), pa.nulls(n, pa.list_(TRIPLE))
            elif layout.form == "ask":  # neither: "true" (cep.events.ANSWERS)
                bindings, triples = pa.nulls(n, ANSWERS.field("bindings").type), pa.nulls(n, pa.list_(TRIPLE))
            else:
                made = [engine.instantiate(layout, values) for values in
                        zip(*(rows[f"f{i}"].to_pylist() for i in range(len(layout.fields))))] \
                    if layout.fields else [engine.instantiate(layout, ())] * n
                keep = pa.array([bool(t) for t in made])
                rows, where = rows.filter(keep), where.filter(keep)
                n = rows.num_rows
                triples = pa.array([[{"s": s, "p": p, "o": o} for s, p, o in t] for t in made if t],
                                   pa.list_(TRIPLE))
                bindings = pa.nulls(n, ANSWERS.field("bindings").type)
            parts.append((where, pa.table({
                "query": pa.repeat(pa.scalar(layout.name, pa.string()), n), "start": rows["start"],
                "end": rows["end"], "bindings": bindings, "triples": triples}, schema=ANSWERS)))
        if not parts:
            return ANSWERS.empty_table()
        if len(parts) == 1 and len(parts[0][0]) == table.num_rows:  # every row one query's, in order already
            return parts[0][1]
        found = pa.concat_tables([t for _, t in parts])
        return found.take(pc.sort_indices(pa.concat_arrays([w for w, _ in parts])))


def binding_order(layout) -> list[tuple[str, int]]:
    """A query's bindings as its answers' maps list them: (variable name,
    column of the answer line: 3 + its field's position), in name order."""
    return sorted((name, 3 + i) for i, name in enumerate(layout.fields))


def _bindings(rows: pa.Table, order) -> pa.MapArray:
    """map<variable, term> of each answer row, the unbound variables left
    out: the field columns laid out row by row, their nulls dropped."""
    n, k = rows.num_rows, len(order)
    if not k:
        return pa.MapArray.from_arrays(pa.array(np.zeros(n + 1), pa.int32()), pa.array([], pa.string()),
                                       pa.array([], pa.string()))
    columns = [rows[f"f{i - 3}"].combine_chunks() for _, i in order]
    bound = np.stack([np.asarray(pc.is_valid(c).to_numpy(zero_copy_only=False), dtype=bool) for c in columns],
                     axis=1)  # n x k
    flat = (np.arange(k)[None, :] * n + np.arange(n)[:, None])[bound]  # row-major, into the columns laid end to end
    values = pa.concat_arrays(columns).take(pa.array(flat, pa.int64()))
    names = pa.array([name for name, _ in order], pa.string()).take(pa.array(flat // n, pa.int64()))
    offsets = np.concatenate([[0], np.cumsum(bound.sum(axis=1))])
    return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), names, values)
