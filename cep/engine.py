"""The in-process engine: a compiled rule set running in this process's
SWI-Prolog, fed with batches of events.

    engine = Engine(queries)
    answers = engine.push(events)   # answers of every timestamp now complete
    answers += engine.flush()       # end of stream: close the last timestamp

Events are processed in order of their end time (a solution is detected when
its last event ends); events that end at the same instant are simultaneous.
Because more events of the latest instant may still come in the next batch,
`push` holds them back until a later instant arrives or `flush` is called.
An event that ends before an instant already processed is late: it is not
processed and is reported in `late` (the Spark engine handles lateness with
a watermark).
"""

from __future__ import annotations

import itertools

from cep import terms
from cep.compile import compile_queries
from cep.events import Answer, Event, Reject
from cep.runtime.session import session


class Engine:
    def __init__(self, queries):
        self.compiled = compile_queries(queries)
        self.session = session()
        self.session.load_rules(self.compiled.module, self.compiled.text)
        self.layouts = self.compiled.layouts
        self.late: list[Reject] = []
        self._held: list[Event] = []
        self._last = None  # end time of the last processed group
        self._bnodes = itertools.count()

    def push(self, events) -> list[Answer]:
        batch = self._held + list(events)
        if not batch:
            return []
        batch.sort(key=lambda e: e.end)
        cut = batch[-1].end
        ready = [e for e in batch if e.end < cut]
        self._held = [e for e in batch if e.end == cut]
        return self._process(ready)

    def flush(self) -> list[Answer]:
        held, self._held = self._held, []
        return self._process(held)

    def _process(self, events) -> list[Answer]:
        if not events:
            return []
        lines = []
        for e in events:
            if self._last is not None and e.end < self._last:
                self.late.append(Reject(e.source, f"late: ends at {terms.format_datetime_ms(e.end)}, "
                                                  f"before {terms.format_datetime_ms(self._last)} "
                                                  "which was already processed", f"{e.s} {e.p} {e.o}"))
                continue
            lines.append("e(%s,%s,%s,%d,%d).\n" % (
                terms.prolog_text(e.s), terms.prolog_text(e.p), terms.prolog_text(e.o), e.start, e.end))
        if not lines:
            return []
        self._last = events[-1].end
        out = self.session.push(self.compiled.module, "".join(lines))
        return self.decode(out)

    def decode(self, text: str) -> list[Answer]:
        answers = []
        for line in text.splitlines():
            fields = line.split("\t")
            layout = self.layouts[int(fields[0])]
            start, end = int(fields[1]), int(fields[2])
            values = fields[3:]
            if layout.form == "select":
                bindings = tuple(sorted((n, v) for n, v in zip(layout.fields, values) if v))
                answers.append(Answer(layout.name, start, end, bindings=bindings))
            else:
                triples = self._instantiate(layout, values)
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
