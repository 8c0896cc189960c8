"""The in-process engine: a compiled rule set running in this process's
SWI-Prolog, fed with batches of events.

    engine = Engine(queries)
    answers = engine.push(events)   # answers of every timestamp now complete
    answers += engine.flush()       # end of stream: close the last timestamp

Events are processed in order of their end time (a solution is detected when
its last event ends); events that end at the same instant are simultaneous.
Within a push the order does not matter; across pushes, events must come in
non-decreasing order of their *end* time (sort interval events by end, not
by start, before pushing them in several batches).
Because more events of the latest instant may still come in the next batch,
`push` holds them back until a later instant arrives or `flush` is called.
An event that ends before an instant already processed is late: it is not
processed and is reported in `late` (the Spark engine handles lateness with
a watermark).
"""

from __future__ import annotations

import itertools

import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.compile import compile_queries
from cep.events import Answer, Event, Reject
from cep.runtime.batch import table_text
from cep.runtime.session import session

COLUMNS = ("s", "p", "o", "start", "end", "source")
SCHEMA = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()),
                    ("start", pa.int64()), ("end", pa.int64()), ("source", pa.string())])


def events_table(events) -> pa.Table:
    events = list(events)
    return pa.table({
        "s": [e.s for e in events], "p": [e.p for e in events], "o": [e.o for e in events],
        "start": [e.start for e in events], "end": [e.end for e in events],
        "source": [e.source for e in events],
    }, schema=SCHEMA)


_instances = itertools.count()


class Engine:
    def __init__(self, queries):
        self.compiled = compile_queries(queries)
        self.session = session()
        # a module of its own: two engines of the same rules never share goals
        self.module = f"{self.compiled.module}_{next(_instances)}"
        self.session.load_rules(self.module, self.compiled.program(self.module))
        self.layouts = self.compiled.layouts
        # per query: (variable name, field position) in name order, for bindings
        self._orders = [sorted((name, 3 + i) for i, name in enumerate(lay.fields)) for lay in self.layouts]
        self.late: list[Reject] = []
        self._held = SCHEMA.empty_table()
        self._last = None  # end time of the last processed group
        self._bnodes = itertools.count()

    def push(self, events) -> list[Answer]:
        """Process a batch of Events; returns the answers of every instant
        that is complete (all but the batch's latest)."""
        return self.push_table(events_table(events))

    def push_table(self, table: pa.Table) -> list[Answer]:
        """Like push, for a table with columns s, p, o (canonical N-Triples
        text), start, end (epoch ms) and optionally source."""
        table = _conform(table)
        if self._held.num_rows:
            table = pa.concat_tables([self._held, table])
        if not table.num_rows:
            return []
        table = table.sort_by("end")
        cut = pc.max(table["end"]).as_py()
        at_cut = pc.equal(table["end"], cut)
        self._held = table.filter(at_cut)
        return self._process(table.filter(pc.invert(at_cut)))

    def flush(self) -> list[Answer]:
        """End of stream: process the instant held back."""
        held, self._held = self._held, SCHEMA.empty_table()
        return self._process(held)

    def _process(self, table: pa.Table) -> list[Answer]:
        if not table.num_rows:
            return []
        if self._last is not None:
            late = pc.less(table["end"], self._last)
            if pc.any(late).as_py():
                self._reject_late(table.filter(late))
                table = table.filter(pc.invert(late))
                if not table.num_rows:
                    return []
        self._last = table["end"][-1].as_py()
        text = table_text(table["s"], table["p"], table["o"], table["start"], table["end"])
        return self.decode(self.session.push(self.module, text))

    def _reject_late(self, table):
        for row in table.to_pylist():
            self.late.append(Reject(
                row["source"] or "",
                f"late: ends at {terms.format_datetime_ms(row['end'])}, before "
                f"{terms.format_datetime_ms(self._last)}, which was already processed",
                f"{row['s']} {row['p']} {row['o']}"))

    def decode(self, text: str) -> list[Answer]:
        """Answer lines (cep_runtime.pl) -> Answers."""
        answers = []
        orders = self._orders
        for line in text.splitlines():
            fields = line.split("\t")
            index = int(fields[0])
            layout = self.layouts[index]
            start, end = int(fields[1]), int(fields[2])
            if layout.form == "select":
                bindings = tuple((name, fields[i]) for name, i in orders[index] if fields[i])
                answers.append(Answer(layout.name, start, end, bindings=bindings))
            else:
                triples = self._instantiate(layout, fields[3:])
                if triples:
                    answers.append(Answer(layout.name, start, end, triples=triples))
        return answers

    def _instantiate(self, layout, values):
        """CONSTRUCT: the template with the answer's values; blank nodes of
        the template are fresh for every answer (SPARQL 16.2)."""
        query = self.compiled.queries[layout.index]
        env = dict(zip(layout.fields, values))
        fresh = {}
        out = []
        for t in query.template:
            triple = []
            for slot in (t.s, t.p, t.o):
                if hasattr(slot, "name"):
                    triple.append(env.get(slot.name) or None)
                elif slot.startswith("_:"):
                    if slot not in fresh:
                        fresh[slot] = f"_:c{next(self._bnodes)}"
                    triple.append(fresh[slot])
                else:
                    triple.append(slot)
            s, p, o = triple
            if s is None or p is None or o is None or s.startswith('"') or not p.startswith("<"):
                continue
            out.append((s, p, o))
        return tuple(out)


def _conform(table: pa.Table) -> pa.Table:
    names = table.column_names
    if "end" not in names:
        table = table.append_column("end", table["start"])
    if "source" not in names:
        table = table.append_column("source", pa.nulls(table.num_rows, pa.string()))
    return table.select(list(COLUMNS)).cast(SCHEMA)
