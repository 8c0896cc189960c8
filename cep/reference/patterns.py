"""Graph patterns over a finite RDF stream, evaluated literally as in the
paper's formal semantics (section 4.2).

The stream is a set of occurrences (s, p, o, start, end); a solution is a
triple (mu, ts, te) with mu a frozenset of (variable name, term) items; the
result of every operator is a set of solutions. Nothing here is clever: each
operator is the set comprehension of its definition, over all pairs.

Background knowledge (docs/language.md): the stream holds, besides each
event, every triple the event entails under the background's RDFS schema,
with the event's interval, and every triple of the background's RDFS
closure as a timeless occurrence (start and end None). A merge takes the
interval of its timed parts; a solution with no timed part is timeless.
The temporal operators never relate a timeless solution, a filter that
reads its interval is an error (false), and a query's timeless solutions
are no answers: only events trigger detections.
"""

from __future__ import annotations

from cep import terms
from cep.algebra import ops
from cep.reference.expressions import holds


def stream_of(events, background=None, graph=None) -> frozenset:
    """The stream as a set of occurrences; identical events collapse.
    With background knowledge (cep.background.Background), the entailed
    occurrences and the timeless background triples too: those of `graph`
    when given (the background as updates changed it), else its own."""
    events = {(terms.canonical(e.s), terms.canonical(e.p), terms.canonical(e.o), e.start, e.end)
              for e in events}
    if background is None:
        return frozenset(events)
    from cep.background import rdfs

    schema = {t for t in background.triples if t[1] in rdfs.SCHEMA_PREDICATES}
    closed = rdfs.closure(schema)
    out = {(s, p, o, None, None) for s, p, o in (background.triples if graph is None else graph)}
    for s, p, o, start, end in events:
        out |= {(*t, start, end) for t in (rdfs.closure(schema | {(s, p, o)}) - closed) | {(s, p, o)}}
    return frozenset(out)


def solutions(pattern, stream) -> set:
    """The solutions of `pattern` over `stream` (events, or a stream_of set)."""
    if not isinstance(stream, frozenset):
        stream = stream_of(stream)
    return _eval(pattern, stream)


# ------------------------------------------------------------ solutions


def compatible(a, b) -> bool:
    """Every variable bound in both is bound to the same term."""
    mu = dict(a[0])
    return all(mu.get(k, v) == v for k, v in b[0])


def merge(a, b):
    """<mu1, ts1, te1> |x| <mu2, ts2, te2> = <mu1 u mu2, min ts, max te>
    (a timeless side adds no time)."""
    if a[1] is None or b[1] is None:
        timed = b if a[1] is None else a
        return (a[0] | b[0], timed[1], timed[2])
    return (a[0] | b[0], min(a[1], b[1]), max(a[2], b[2]))


def satisfies(cond, solution) -> bool:
    """F under mu with getDURATION() = te - ts, getSTARTTIME() = ts,
    getENDTIME() = te has effective boolean value true (None: no condition)."""
    mu, ts, te = solution
    return holds(cond, dict(mu), ts, te)


# ------------------------------------------------------------- operators


def _eval(op, S) -> set:
    if isinstance(op, ops.Triple):
        return _bgp((op,), S)
    if isinstance(op, ops.BGP):
        return _bgp(op.triples, S)
    if isinstance(op, ops.Filter):
        return {x for x in _eval(op.pattern, S) if satisfies(op.cond, x)}
    if isinstance(op, ops.Union_):
        return _eval(op.left, S) | _eval(op.right, S)
    if isinstance(op, ops.Join):
        return _joins(_eval(op.left, S), _eval(op.right, S), lambda a, b: True)
    if isinstance(op, ops.SeqJoin):
        return _joins(_timed(op.left, S), _timed(op.right, S), lambda a, b: a[2] < b[1])
    if isinstance(op, ops.EqJoin):
        return _joins(_timed(op.left, S), _timed(op.right, S), _same_interval)
    if isinstance(op, ops.LeftJoin):
        # the optional part ends no later than the mandatory one
        return _optional(_timed(op.left, S), _timed(op.right, S), op.cond, lambda m, o: o[2] <= m[2])
    if isinstance(op, ops.SeqRightJoin):
        # `left` is the optional part; it ends strictly before the mandatory one starts
        return _optional(_timed(op.right, S), _timed(op.left, S), op.cond, lambda m, o: o[2] < m[1])
    if isinstance(op, ops.EqLeftJoin):
        return _optional(_timed(op.left, S), _timed(op.right, S), op.cond, _same_interval)
    raise TypeError(f"not an algebra operator: {op!r}")


def _timed(op, S) -> set:
    """The solutions of an operand of a temporal operator: the timeless
    ones relate to nothing in time."""
    return {x for x in _eval(op, S) if x[1] is not None}


def _same_interval(a, b) -> bool:
    return a[1] == b[1] and a[2] == b[2]


def _match(slot, term, mu: dict) -> bool:
    if isinstance(slot, ops.Path):  # a path's own occurrences (_path_occurrences)
        return slot == term
    if isinstance(slot, ops.Var):
        if slot.name in mu:
            return mu[slot.name] == term
        mu[slot.name] = term
        return True
    return terms.canonical(slot) == term


def _bgp(triples, S) -> set:
    """mu binds exactly the variables of the list; every triple pattern picks
    any occurrence of its instantiated triple, independently of the others;
    ts is the least start and te the greatest end of the picked occurrences."""
    if not triples:
        raise ValueError("the paper gives an empty BGP no interval: nothing to evaluate")
    partial = {(frozenset(), None, None)}
    for tp in triples:
        grown = set()
        occurrences = _path_occurrences(tp, S) if isinstance(tp.p, ops.Path) else S
        for mu, ts, te in partial:
            for s, p, o, start, end in occurrences:
                m = dict(mu)
                if _match(tp.s, s, m) and _match(tp.p, p, m) and _match(tp.o, o, m):
                    grown.add((
                        frozenset(m.items()),
                        start if ts is None else ts if start is None else min(ts, start),
                        end if te is None else te if end is None else max(te, end),
                    ))
        partial = grown
    return partial


def _path_occurrences(tp, S) -> set:
    """A property path's solutions as timeless occurrences (s, path, o):
    SPARQL's evaluation (18.5) over the background graph (the timeless
    triples of S), the path evaluated on its own and then joined. An end
    given as a constant term is where the path starts, and reaches itself
    by length zero even outside the graph; a variable end ranges over the
    graph's nodes."""
    graph = {(s, p, o) for s, p, o, start, _ in S if start is None}
    nodes = {s for s, _, _ in graph} | {o for _, _, o in graph}
    if not isinstance(tp.s, ops.Var):
        pairs = {(tp.s, y) for y in _ends(tp.p, tp.s, graph, nodes)}
    elif not isinstance(tp.o, ops.Var):
        pairs = {(x, tp.o) for x in nodes | {tp.o} if tp.o in _ends(tp.p, x, graph, nodes)}
    else:
        pairs = {(x, y) for x in nodes for y in _ends(tp.p, x, graph, nodes)}
    return {(x, tp.p, y, None, None) for x, y in pairs}


def _ends(path, x, graph, nodes) -> set:
    """{y | x path y}, by the definition of each path form."""
    if isinstance(path, str):
        return {o for s, p, o in graph if s == x and p == path}
    op, args = path.op, path.args
    if op == "^":
        return {y for y in nodes | {x} if x in _ends(args[0], y, graph, nodes)}
    if op == "/":
        here = {x}
        for step in args:
            here = {z for y in here for z in _ends(step, y, graph, nodes)}
        return here
    if op == "|":
        return set().union(*(_ends(a, x, graph, nodes) for a in args))
    if op == "?":
        return {x} | _ends(args[0], x, graph, nodes)
    reached = _ends(args[0], x, graph, nodes)  # + and *: to a fixpoint
    while True:
        more = reached | {z for y in reached for z in _ends(args[0], y, graph, nodes)}
        if more == reached:
            break
        reached = more
    return reached | {x} if op == "*" else reached


def _joins(left, right, when) -> set:
    return {merge(a, b) for a in left for b in right if compatible(a, b) and when(a, b)}


def _optional(mandatory, optional, cond, when) -> set:
    """The merges of compatible pairs that satisfy `when` and the condition
    (evaluated on the merge), plus every mandatory solution that has no such
    partner."""
    out = set()
    for m in mandatory:
        matched = False
        for o in optional:
            if compatible(m, o) and when(m, o):
                joined = merge(m, o)
                if satisfies(cond, joined):
                    out.add(joined)
                    matched = True
        if not matched:
            out.add(m)
    return out
