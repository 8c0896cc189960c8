"""C-SPARQL's timestamp(?v [, <stream>]) for the compiled engine: a rewrite
of a query's algebra that makes the timestamps it reads ordinary (hidden)
variables.

    capture_ends(query) -> Query

C-SPARQL (Barbieri et al., EDBT 2010, sections 2.7 and 3.3) defines
ts(v, P) = max TS_set(v, P): the latest timestamp of the stream triples
that matched a triple pattern of P that mentions v; undefined (an error)
when no stream triple did. An event here is an interval, and its timestamp
is its end (docs/language.md).

The rewrite gives every triple pattern that mentions a variable some
timestamp() call reads a hidden variable `_:endN` (Triple.end), which the
compiled leaf rule binds to the end of the event it matched; a match in
the background graph leaves it unbound. Each call timestamp(?v) becomes
timestamp(?v, ?_:endI, ...), listing the hidden variables of the patterns
that mention ?v within its scope: the pattern its FILTER constrains, both
operands of an optional operator for its condition, the whole pattern for
a SELECT expression; a grouped subquery's rows show none (each is a group
over [t, t], as the reference's). The compiled call takes the latest of those that are
bound (cep_values:cep_timestamp/2). As each hidden variable belongs to one
triple pattern, the joins never compare them; they only tell apart
solutions whose variables were bound by different events.

The reference evaluator (cep/reference/patterns.py) reads the same
definition off the triple occurrences a solution used, without this
rewrite.
"""

from __future__ import annotations

import dataclasses
import itertools

from cep.algebra import ops

NAME = "timestamp"


def capture_ends(query: ops.Query) -> ops.Query:
    watched = set()
    for e in _expressions(query.pattern, query.projection):
        watched |= timestamp_vars(e)
    if not watched:
        return query
    counter = itertools.count()
    pattern, ends = _rewrite(query.pattern, watched, lambda: ops.Var(f"_:end{next(counter)}"))
    projection = query.projection
    if projection is not None:
        projection = tuple(dataclasses.replace(p, expr=_resolve(p.expr, ends)) if p.expr is not None else p
                           for p in projection)
    return dataclasses.replace(query, pattern=pattern, projection=projection)


def timestamp_vars(expr) -> set:
    """The timestamps `expr` reads: (variable, stream IRI or None for any)."""
    if not isinstance(expr, ops.Call):
        return set()
    out = {_key(expr)} if expr.name == NAME else set()
    for a in expr.args:
        out |= timestamp_vars(a)
    return out


def _key(call: ops.Call) -> tuple:
    """(variable, stream IRI or None) of a timestamp() call as written."""
    return call.args[0], call.args[1].term if len(call.args) > 1 else None


def _expressions(op, projection=None):
    for item in projection or ():
        if item.expr is not None:
            yield item.expr
    if getattr(op, "cond", None) is not None:  # a FILTER's, an optional operator's
        yield op.cond
    if isinstance(op, ops.Extend):
        yield op.expr
    for child in ops.children(op):
        yield from _expressions(child)


def _rewrite(op, watched: set, fresh):
    """(op with hidden end variables and resolved calls, {timestamp key:
    its patterns' end variables in op})."""
    if isinstance(op, ops.Triple):
        mentioned = {key for key in watched if key[0] in ops.slots_vars(op)}
        if not mentioned or isinstance(op.p, ops.Path):  # a path's solution is no matched event
            return op, {}
        end = fresh() if any(stream is None for _, stream in mentioned) else None
        streams = sorted({stream for _, stream in mentioned if stream is not None})
        stream_ends = tuple((stream, fresh()) for stream in streams)
        of = dict(stream_ends)
        return (dataclasses.replace(op, end=end, stream_ends=stream_ends),
                {(v, stream): [end if stream is None else of[stream]] for v, stream in mentioned})
    if isinstance(op, ops.Unit):  # matches no triple
        return op, {}
    if isinstance(op, ops.BGP):
        triples, ends = [], {}
        for t in op.triples:
            t, found = _rewrite(t, watched, fresh)
            triples.append(t)
            _add(ends, found)
        return dataclasses.replace(op, triples=tuple(triples)), ends
    if isinstance(op, ops.Filter):
        pattern, ends = _rewrite(op.pattern, watched, fresh)
        return dataclasses.replace(op, cond=_resolve(op.cond, ends), pattern=pattern), ends
    if isinstance(op, ops.Extend):
        pattern, ends = _rewrite(op.pattern, watched, fresh)
        return dataclasses.replace(op, expr=_resolve(op.expr, ends), pattern=pattern), ends
    if isinstance(op, ops.Project):
        pattern, ends = _rewrite(op.pattern, watched, fresh)
        if op.grouping is not None:  # a group's row, over [t, t], matched no event: no end to show
            return dataclasses.replace(op, pattern=pattern), {}
        ends = {k: e for k, e in ends.items() if k[0] in op.vars}  # the projected variables' ends stay visible
        hidden = tuple(dict.fromkeys(x for e in ends.values() for x in e))
        return dataclasses.replace(op, pattern=pattern, vars=op.vars + hidden), ends
    if isinstance(op, (ops.Values, ops.Service)):
        return op, {}
    left, ends = _rewrite(op.left, watched, fresh)
    right, found = _rewrite(op.right, watched, fresh)
    _add(ends, found)
    changes = {"left": left, "right": right}
    if getattr(op, "cond", None) is not None:
        changes["cond"] = _resolve(op.cond, ends)  # evaluated on the joined solution
    return dataclasses.replace(op, **changes), ends


def _add(ends: dict, more: dict):
    for v, xs in more.items():
        ends.setdefault(v, []).extend(xs)


def _resolve(expr, ends: dict):
    if not isinstance(expr, ops.Call):
        return expr
    if expr.name == NAME:  # timestamp(?v, its ends...): the stream is in the ends chosen
        return ops.Call(expr.name, expr.args[0], *ends.get(_key(expr), []), pos=expr.pos)
    return ops.Call(expr.name, *[_resolve(a, ends) for a in expr.args], pos=expr.pos)
