"""A stream is a multiset (docs/language.md, "Repeated events"): the
rewrite of a query's algebra that lets its solutions tell apart the
copies of a repeated event.

    capture_copies(query) -> Query

An event given twice (two records of the input with the same triple,
interval and stream) is two events for a query evaluated over a window
(or grouped without one): a COUNT counts both, a plain SELECT gives a row
for each (SPARQL's bag semantics; Streaming SPARQL's multiset algebra;
RSP-QL evaluates SPARQL over the window's content). The engine gives the
k-th copy of an event (k >= 1) to the rules with its predicate wrapped
('$copy'(K, P), cep.runtime.batch), and the rewrite gives every triple
pattern of such a query a hidden variable `_:copyN` (Triple.copy), which
the compiled leaf rule binds to the copy index of the event it matched (0
for the first). As each hidden variable belongs to one triple pattern, the
joins never compare them (as timestamp()'s hidden ends, timestamps.py):
they only tell apart solutions that matched different copies, so a
solution of a join of events repeated m1 and m2 times is there m1 * m2
times, and SELECT DISTINCT (which does not project them) collapses them.

The other queries (EP-SPARQL's event patterns, whose semantics, paper
section 4.2, is over sets of event occurrences) read no copy: their
answers are those of the stream as a set, and so are those of a query
with a consumption policy (reads_copies). Left as sets too: a `[TRIPLES n]`
window (its n triples), a property path (a closure is a set of pairs), and
a DISTINCT subquery. A group with a window of its own (Streaming SPARQL's
window in a graph pattern, RSP-QL's WINDOW :w { }) reads the copies as
the query's window does: its solutions keep their hidden variables, which
the join of the groups never compares (each belongs to one pattern).

The reference evaluator (cep/reference/patterns.py) binds the same
hidden variables from the copies of each occurrence, without this rewrite.
"""

from __future__ import annotations

import dataclasses
import itertools

from cep.algebra import ops
from cep.algebra.hidden import thread

PREFIX = "_:copy"


def reads_copies(query: ops.Query) -> bool:
    """Whether the query reads the stream as a multiset (above). Not over
    `[TRIPLES n]`: C-SPARQL's window of the last n triples holds triples,
    and a triple repeated in an instant is one of them, at its later place
    (docs/language.md, "Count windows"). Not under a consumption policy: it
    takes and consumes occurrences, and the copies of one are that one
    (docs/language.md, "Repeated events", a choice)."""
    by_triples = query.window is not None and query.window.count is not None and query.window.counts == "triples"
    consuming = query.option("policy", "unrestricted") != "unrestricted"
    return query.evaluated and not by_triples and not consuming


def capture_copies(query: ops.Query) -> ops.Query:
    if not reads_copies(query):
        return query
    counter = itertools.count()
    pattern, _ = _rewrite(query.pattern, lambda: ops.Var(f"{PREFIX}{next(counter)}"))
    return dataclasses.replace(query, pattern=pattern)


def _rewrite(op, fresh):
    """(op with a hidden copy variable per triple pattern, those of its
    solutions: the variables a subquery's projection keeps)."""
    def own(op, in_triples=False):
        if isinstance(op, ops.Project) and op.window is not None:
            # a group's window overrides the one around it: one of [TRIPLES n] holds triples,
            # a repeated one once, as the query with that window reads them (reads_copies)
            counted = op.window.count is not None and op.window.counts == "triples"
            pattern, hidden = thread(op.pattern, lambda x: own(x, counted))
            return dataclasses.replace(op, pattern=pattern, vars=op.vars + hidden), hidden
        if in_triples and isinstance(op, (ops.Triple, ops.BGP)):
            return op, ()
        if isinstance(op, ops.Triple) and not isinstance(op.p, ops.Path):
            copy = fresh()
            return dataclasses.replace(op, copy=copy), (copy,)
        if isinstance(op, ops.BGP):
            triples = [thread(t, own) for t in op.triples]
            return (dataclasses.replace(op, triples=tuple(t for t, _ in triples)),
                    tuple(v for _, vs in triples for v in vs))
        return None
    return thread(op, own)
