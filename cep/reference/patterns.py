"""Graph patterns over a finite RDF stream, evaluated literally as in the
paper's formal semantics (section 4.2).

The stream is a set of occurrences (s, p, o, start, end, stream), `stream`
the IRI of the event's stream or None (no stream: an event of every stream;
a background triple); a solution is a
triple (mu, ts, te) with mu a frozenset of (variable name, term) items; the
result of every operator is a set of solutions. Nothing here is clever: each
operator is the set comprehension of its definition, over all pairs.

Background knowledge (docs/language.md): the stream holds, besides each
event, every triple the event entails under the background's RDFS schema,
with the event's interval, and every triple of the background's RDFS
closure as a timeless occurrence (start and end None). A merge takes the
interval of its timed parts; a solution with no timed part is timeless.
The temporal operators never relate a timeless solution (OPTIONAL,
MINUS and [NOT] EXISTS, not temporal, do: _optional_part_ends_first,
_within), a filter that
reads its interval is an error (false), and a query's timeless solutions
are no answers: only events trigger detections.

C-SPARQL's timestamp(?v) (sections 2.7 and 3.3): ts(v, P) = max
TS_set(v, P), the latest timestamp of the stream triple occurrences that
matched a triple pattern t of P with v in dom(t), undefined if none did.
The timestamp of an occurrence is its end. So that it can be read, a
solution carries a fourth part: for each triple pattern of P that mentions
a watched variable (one that some timestamp() of the query reads) and
matched a timed occurrence, (the pattern's position in P, its watched
variables, the occurrence's end, its stream). timestamp(?v, <s>) reads
those of stream s (and those of no stream, which are of every stream). Solutions that differ there are two
solutions; with nothing watched it is always empty. A stamp keeps its
stream as what the query can read of it: the set of the streams that the
query's timestamp(?v, <s>) calls name (("stream", s) among the watched
names) and that can read it. So an occurrence of no stream and one of a
stream that no call tells apart, same triple and end, are one solution,
as without timestamp().

The empty group (ops.Unit, a WHERE or group with no triple pattern that
is not dropped as join's identity) has one solution per instant: the
empty binding over [t, t] for each end t of a timed occurrence; over a
window's content, one solution, at the window's close (UNIT_AT).

Streams (C-SPARQL's FROM STREAM and GRAPH): a triple pattern (or Unit) whose `stream`
is a set of IRIs (streams_of, from the query) matches the occurrences of
those streams and those of no stream; one whose `stream` is None matches
every occurrence.
"""

from __future__ import annotations

import dataclasses
from contextvars import ContextVar

from cep import terms
from cep.algebra import ops
from cep.algebra.bags import PREFIX as ALT_PREFIX
from cep.algebra.copies import PREFIX as COPY_PREFIX
from cep.reference.expressions import ExprError, holds, make, value


# How far event time is known to have gone, for NOTSEQ's deadlines: None
# for the end of the stream (every deadline has passed); evaluate(until=t)
# sets it to t - 1 (event time reached t: every instant before it passed)
HORIZON: ContextVar = ContextVar("horizon", default=None)
# Over a window's content (RSP-QL's eval(SDS, SE, t), reference/windows.py),
# the test of an interval's being in the window, else None: the content is
# one RDF graph, so OPTIONAL, MINUS and [NOT] EXISTS relate solutions
# wherever they are in it (SPARQL's operators), the temporal ones keep
# their relations, and every part's solutions are those in the window (a
# NOTSEQ's that runs to a deadline after the window's end is not)
CONTENT: ContextVar = ContextVar("content", default=None)
# Over a window's content, the instant of the empty group's one solution:
# the window's close (reference/windows.py); None: it has none there
UNIT_AT: ContextVar = ContextVar("unit_at", default=None)
# Whether the run has background knowledge: a property path then walks
# the background graph and its union with the graph of each instant, else
# the graph of each instant alone (_path_occurrences)
BACKGROUND: ContextVar = ContextVar("background", default=False)
# With updates of the background: instant t -> the background graph (a set
# of triples) as the updates of the instants before t left it, which the
# path's pairs of instant t are added to (_path_occurrences); else None,
# the background of the stream's timeless triples
BACKGROUND_AT: ContextVar = ContextVar("background_at", default=None)
# SERVICE: endpoint IRI -> the triples of its graph (a snapshot), for the
# evaluation under way (cep.reference.evaluate's `services`)
SERVICES: ContextVar = ContextVar("services", default=None)
# For a query that reads the stream as a multiset (cep/algebra/copies.py):
# occurrence -> its number of copies (copies_of), else None (a set). A
# triple pattern then binds a hidden variable, one per pattern, to the
# copy it matched, so that solutions of different copies are different
# solutions (the compiled rules' `_:copyN`)
COPIES: ContextVar = ContextVar("copies", default=None)


def stream_of(events, background=None, graph=None) -> frozenset:
    """The stream as a set of occurrences; identical events collapse
    (their copies are counted by copies_of).
    With background knowledge (cep.background.Background), the entailed
    occurrences and the timeless background triples too: those of `graph`
    when given (the background as updates changed it), else its own."""
    events = {_occurrence(e) for e in events}
    if background is None:
        return frozenset(events)
    out = {(s, p, o, None, None, None) for s, p, o in (background.triples if graph is None else graph)}
    for occurrence in events:
        out |= _entailed(occurrence, background)
    return frozenset(out)


def copies_of(events, background=None) -> dict:
    """The number of copies of each occurrence of the events (the stream
    as a multiset, cep/algebra/copies.py): the records that hold it, rows
    with distinct sources (an event without a source is a record of its
    own; a record's rows are a graph, a set of triples). An occurrence
    entailed by the background is there as many times as the event with
    most copies that entails it. Occurrences not listed are there once."""
    records = {}
    for i, e in enumerate(events):
        records.setdefault(_occurrence(e), set()).add(e.source or i)
    out = {}
    for occurrence, sources in records.items():
        for x in (_entailed(occurrence, background) if background is not None else (occurrence,)):
            out[x] = max(out.get(x, 1), len(sources))
    return out


def _occurrence(e) -> tuple:
    return (terms.canonical(e.s), terms.canonical(e.p), terms.canonical(e.o), e.start, e.end,
            _stream_iri(getattr(e, "stream", "")))


def _entailed(occurrence, background) -> set:
    """An event's occurrence and those it entails with the background's
    RDFS schema, over its interval."""
    from cep.background import rdfs

    s, p, o, start, end, g = occurrence
    schema = {t for t in background.triples if t[1] in rdfs.SCHEMA_PREDICATES}
    closed = rdfs.closure(schema)
    return {(*t, start, end, g) for t in (rdfs.closure(schema | {(s, p, o)}) - closed) | {(s, p, o)}}


def _stream_iri(text):
    """An event's stream as N-Triples text, or None for none."""
    if not text:
        return None
    return text if text.startswith("<") else f"<{text}>"


def streams_of(query: ops.Query):
    """The query's pattern with each triple pattern's `stream` the set of
    streams it reads: the GRAPH's one; outside GRAPH, the query's FROM
    STREAM (not NAMED) streams; None (every occurrence) for a query
    without FROM STREAM."""
    def read(op):
        if isinstance(op, (ops.Triple, ops.Unit)):
            if op.stream is not None:
                return dataclasses.replace(op, stream=frozenset({op.stream}))
            if not query.streams:
                return op
            return dataclasses.replace(op, stream=frozenset(i for i, named in query.streams if not named))
        if isinstance(op, ops.BGP):
            return dataclasses.replace(op, triples=tuple(read(t) for t in op.triples))
        if isinstance(op, (ops.Filter,) + ops.UNARY):
            return dataclasses.replace(op, pattern=read(op.pattern))
        if isinstance(op, (ops.Values, ops.Service)):
            return op
        return dataclasses.replace(op, left=read(op.left), right=read(op.right))
    return read(query.pattern)


def solutions(pattern, stream) -> set:
    """The solutions of `pattern` over `stream` (events, or a stream_of set)."""
    return {x[:3] for x in stamped_solutions(pattern, stream, timestamp_vars(pattern))}


def stamped_solutions(pattern, stream, watch, at: tuple = ()) -> set:
    """The solutions (mu, ts, te, stamps) of `pattern`, stamps being the
    matches that bound the variables (names) of `watch` (see above); `at`:
    the pattern's position in its query's, for a part solved apart (which
    names its triple patterns' copies and stamps)."""
    if not isinstance(stream, frozenset):
        stream = stream_of(stream)
    return _eval(pattern, stream, at, frozenset(watch))


def timestamp_vars(pattern, projection=()) -> set:
    """The names of the variables whose timestamp the pattern's conditions,
    its BINDs and the projection's expressions read, and ("stream", s) for
    each stream s one of them names."""
    exprs = [item.expr for item in projection or () if item.expr is not None]
    todo = [pattern]
    while todo:
        op = todo.pop()
        if getattr(op, "cond", None) is not None:
            exprs.append(op.cond)
        if isinstance(op, ops.Extend):  # BIND (timestamp(?v) AS ?t)
            exprs.append(op.expr)
        todo += ops.children(op)
    out = set()
    while exprs:
        e = exprs.pop()
        if isinstance(e, ops.Call):
            if e.name == "timestamp":
                out.add(e.args[0].name)
                if len(e.args) > 1:
                    out.add(("stream", e.args[1].term))
            exprs += e.args
    return out


def with_timestamps(expr, stamps):
    """`expr` with each timestamp(?v) that the solution defines replaced by
    its value, max TS_set(v, P) as a dateTime; an undefined one is left to
    the evaluator, where it is an error."""
    if not isinstance(expr, ops.Call):
        return expr
    if expr.name == "timestamp":  # timestamp(?v, <s>): the occurrences of s (or of no stream: of every one)
        of = expr.args[1].term if len(expr.args) > 1 else None
        ends = [end for _, names, end, readers in stamps if expr.args[0].name in names and (of is None or of in readers)]
        return ops.Const(make("dateTime", max(ends)).term) if ends else expr
    return ops.Call(expr.name, *[with_timestamps(a, stamps) for a in expr.args], pos=expr.pos)


# ------------------------------------------------------------ solutions


def compatible(a, b) -> bool:
    """Every variable bound in both is bound to the same term."""
    mu = dict(a[0])
    return all(mu.get(k, v) == v for k, v in b[0])


def merge(a, b):
    """<mu1, ts1, te1> |x| <mu2, ts2, te2> = <mu1 u mu2, min ts, max te>
    (a timeless side adds no time); the stamps, where solutions carry
    them, are those of both."""
    if a[1] is None or b[1] is None:
        timed = b if a[1] is None else a
        out = (a[0] | b[0], timed[1], timed[2])
    else:
        out = (a[0] | b[0], min(a[1], b[1]), max(a[2], b[2]))
    return out + tuple(x | y for x, y in zip(a[3:], b[3:]))


def satisfies(cond, solution) -> bool:
    """F under mu with getDURATION() = te - ts, getSTARTTIME() = ts,
    getENDTIME() = te and timestamp(?v) = ts(v, P) has effective boolean
    value true (None: no condition)."""
    mu, ts, te, stamps = solution
    return holds(with_timestamps(cond, stamps), dict(mu), ts, te)


# ------------------------------------------------------------- operators


def _eval(op, S, at: tuple, watch) -> set:
    """`at`: the position of op in the query's pattern (child indexes)."""
    out = _eval_op(op, S, at, watch)
    inside = CONTENT.get()
    if inside is None:
        return out
    return {x for x in out if x[1] is None or inside(x[1], x[2])}


def _eval_op(op, S, at: tuple, watch) -> set:
    if isinstance(op, ops.Triple):
        return _bgp([(at, op)], S, watch)
    if isinstance(op, ops.BGP):
        return _bgp([(at + (i,), t) for i, t in enumerate(op.triples)], S, watch)
    if isinstance(op, ops.Unit):
        return _unit(op, S)
    if isinstance(op, ops.Filter):
        return {x for x in _eval(op.pattern, S, at + (0,), watch) if satisfies(op.cond, x)}
    if isinstance(op, ops.Service):  # its pattern over the endpoint's snapshot: timeless solutions
        graph = (SERVICES.get() or {}).get(op.endpoint)
        if graph is None:
            raise ValueError(f"SERVICE <{op.endpoint}>: the reference needs a snapshot of the endpoint's graph")
        occurrences = {(s, p, o, None, None, None) for s, p, o in graph}

        def matches(triples):
            return {(mu, None, None, frozenset()) for mu, _, _, _ in _bgp(list(enumerate(triples)), occurrences,
                                                                           frozenset())}
        out = matches(op.triples)
        for part in op.optional:  # SPARQL's LeftJoin, in order
            found = matches(part)
            out = {y for x in out for y in ([merge(x, z) for z in found if compatible(x, z)] or [x])}
        if op.filter is not None:  # the group's FILTER, over its solutions alone
            out = {x for x in out if satisfies(op.filter, x)}
        return out
    if isinstance(op, ops.Values):  # rows: a multiset, each of several numbered (cep/algebra/bags.py)
        alt = ((f"{ALT_PREFIX}{at}",) if len(op.rows) > 1 else ())
        return {(frozenset((v, t) for v, t in zip([v.name for v in op.vars] + list(alt), row + (_number(i),))
                           if t is not None), None, None, frozenset())
                for i, row in enumerate(op.rows, 1)}
    if isinstance(op, ops.Extend):
        return {_extended(x, op) for x in _eval(op.pattern, S, at + (0,), watch)}
    if isinstance(op, ops.Project) and op.evaluated:
        return _subquery(op, _eval(op.pattern, S, at + (0,), watch), S)
    if isinstance(op, ops.Project):
        names = {v.name for v in op.vars}
        hidden = (ALT_PREFIX,) + ((COPY_PREFIX,) if COPIES.get() is not None else ())
        keep = (lambda k: k in names) if op.distinct else \
            (lambda k: k in names or k.startswith(hidden))  # the copies and operands tell its solutions apart
        return {(frozenset((k, t) for k, t in x[0] if keep(k)), x[1], x[2],
                 frozenset(s for s in x[3] if s[1] & names))
                for x in _eval(op.pattern, S, at + (0,), watch)}
    left, right = (at + (0,), op.left), (at + (1,), op.right)
    if isinstance(op, ops.Union_):  # a multiset union: each side's solutions marked as its own
        return {_marked(x, at, side) for side, (where, operand) in enumerate((left, right), 1)
                for x in _eval(operand, S, where, watch)}
    if isinstance(op, ops.Join):
        return _joins(_eval(op.left, S, left[0], watch), _eval(op.right, S, right[0], watch),
                      lambda a, b: True)
    if isinstance(op, (ops.LeftJoin, ops.Minus, ops.Exists, ops.NotExists)):
        # background solutions take part (_optional_part_ends_first, _within)
        left, right = _eval(op.left, S, left[0], watch), _eval(op.right, S, right[0], watch)
    else:
        left, right = _timed(*left, S, watch), _timed(*right, S, watch)
    if type(op) in RELATIONS:
        return _joins(left, right, RELATIONS[type(op)])
    if type(op) in OPTIONALS:
        side, when = OPTIONALS[type(op)]
        mandatory, optional = (right, left) if side == "left" else (left, right)
        return _optional(mandatory, optional, op.cond, when)
    if isinstance(op, ops.SeqAbsence):
        return _absence(left, right, op, S)
    if isinstance(op, (ops.Minus, ops.Exists, ops.NotExists)):
        return _minus(left, right, op)
    raise TypeError(f"not an algebra operator: {op!r}")


def _subquery(op: ops.Project, sols, S) -> set:
    """A subquery with its own aggregation or cut (docs/language.md,
    "Subqueries"): evaluated at each instant t of the stream (each end of
    an occurrence) over the solutions of its pattern that end at t and
    those of the background alone, which are there at every instant (as
    solutions over [t, t]): a set, so a background solution that one of
    the instant's equals (a triple of the background that an event at t
    entails too) is there once, as it is in a join (the graph of the
    instant is a set of triples)."""
    from cep.reference.windows import subquery_rows

    timeless = [(mu, stamps) for mu, ts, _, stamps in sols if ts is None]
    evaluations = {end: {(mu, end, end, stamps) for mu, stamps in timeless}
                   for *_, start, end, _ in S if start is not None}
    for x in sols:
        if x[1] is not None:
            evaluations[x[2]].add(x)
    out = set()
    for t, content in evaluations.items():
        out |= subquery_rows(op, content, t)
    return out


def _number(i: int) -> str:
    return terms.literal(str(i), terms.XSD_INTEGER)


def _marked(x, at, side: int):
    """A solution of UNION's operand `side` with the hidden variable that
    tells it from the other's (cep/algebra/bags.py)."""
    return (x[0] | {(f"{ALT_PREFIX}{at}", _number(side))},) + x[1:]


def _extended(x, op: ops.Extend):
    """BIND: the solution with op.var bound to the value of op.expr under
    it (its interval for the time functions; none for a solution of inline
    data), unchanged where that is an error."""
    mu, ts, te, stamps = x
    try:
        term = value(with_timestamps(op.expr, stamps), dict(mu), ts, te)
    except ExprError:
        return x
    return (mu | {(op.var.name, term)}, ts, te, stamps)


def _same_interval(a, b) -> bool:
    return a[1] == b[1] and a[2] == b[2]


# The temporal joins: the merges of the compatible pairs (a left solution
# a, a right one b, both with an interval) whose intervals are related so
RELATIONS = {
    ops.SeqJoin: lambda a, b: a[2] < b[1],
    ops.EqJoin: _same_interval,
    # Allen's relations of a's interval to b's (docs/language.md)
    ops.During: lambda a, b: b[1] < a[1] and a[2] < b[2],
    ops.Starts: lambda a, b: a[1] == b[1] and a[2] < b[2],
    ops.Finishes: lambda a, b: a[2] == b[2] and b[1] < a[1],
    ops.Meets: lambda a, b: a[2] == b[1],
    ops.Overlaps: lambda a, b: a[1] < b[1] < a[2] < b[2],
}
def _optional_part_ends_first(m, o) -> bool:
    """OPTIONAL: the optional part ends no later than the mandatory one. A
    timeless (background) optional solution is there at every instant;
    a timeless mandatory one relates to timeless ones only (no event can
    withdraw its solution alone). Over a window's content, any (CONTENT)."""
    if o[1] is None or CONTENT.get() is not None:
        return True
    return m[1] is not None and o[2] <= m[2]


# The optional operators: (the optional operand, the relation of a
# mandatory solution m and an optional one o for them to be joined)
OPTIONALS = {
    ops.LeftJoin: ("right", _optional_part_ends_first),
    # the optional left part ends strictly before the mandatory one starts
    ops.SeqRightJoin: ("left", lambda m, o: o[2] < m[1]),
    ops.EqLeftJoin: ("right", _same_interval),
}


def _timed(at, op, S, watch) -> set:
    """The solutions of an operand of a temporal operator: the timeless
    ones relate to nothing in time."""
    return {x for x in _eval(op, S, at, watch) if x[1] is not None}


def _unit(op, S) -> set:
    """The empty group: the empty binding over [t, t] at each instant t at
    which an occurrence of the pattern's streams ends (docs/language.md,
    "The empty group"); background triples are no instants. Over a
    window's content, one solution whatever the window holds (RSP-QL's
    eval of the empty pattern), at the window's close (UNIT_AT)."""
    if CONTENT.get() is not None:
        at = UNIT_AT.get()
        return set() if at is None else {(frozenset(), at, at, frozenset())}
    return {(frozenset(), end, end, frozenset()) for _, _, _, start, end, g in S
            if start is not None and (g is None or op.stream is None or g in op.stream)}


def _match(slot, term, mu: dict) -> bool:
    if isinstance(slot, ops.Path):  # a path's own occurrences (_path_occurrences)
        return slot == term
    if isinstance(slot, ops.Var):
        if slot.name in mu:
            return mu[slot.name] == term
        mu[slot.name] = term
        return True
    return terms.canonical(slot) == term


def _bgp(triples, S, watch) -> set:
    """mu binds exactly the variables of the list; every triple pattern picks
    any occurrence of its instantiated triple, independently of the others;
    ts is the least start and te the greatest end of the picked occurrences.
    `triples`: (position, triple pattern) pairs; a pattern with watched
    variables that picks a timed occurrence adds its stamp."""
    if not triples:
        raise ValueError("the paper gives an empty BGP no interval: nothing to evaluate")
    partial = {(frozenset(), None, None, frozenset())}
    for position, tp in triples:
        grown = set()
        occurrences = _path_occurrences(tp, S) if isinstance(tp.p, ops.Path) else S
        # a path's solution is no matched event: timestamp() does not read it
        watched = frozenset() if isinstance(tp.p, ops.Path) else frozenset(watch & {v.name for v in ops.slots_vars(tp)})
        copies = COPIES.get() if not isinstance(tp.p, ops.Path) else None  # a path's pairs are a set
        named = frozenset(x[1] for x in watch if isinstance(x, tuple))  # the streams timestamp() names
        for mu, ts, te, stamps in partial:
            for occurrence in occurrences:
                s, p, o, start, end, g = occurrence
                if g is not None and tp.stream is not None and g not in tp.stream:
                    continue  # an occurrence of another stream
                m = dict(mu)
                if not (_match(tp.s, s, m) and _match(tp.p, p, m) and _match(tp.o, o, m)):
                    continue
                for k in range(copies.get(occurrence, 1)) if copies is not None else (None,):
                    if k is not None:
                        m[f"{COPY_PREFIX}{position}"] = str(k)
                    grown.add((
                        frozenset(m.items()),
                        start if ts is None else ts if start is None else min(ts, start),
                        end if te is None else te if end is None else max(te, end),
                        stamps | {(position, watched, end, named if g is None else named & {g})}
                        if watched and start is not None else stamps,
                    ))
        partial = grown
    return partial


def _path_occurrences(tp, S) -> set:
    """A property path's solutions as occurrences (s, path, o): SPARQL's
    evaluation (18.5), the path evaluated on its own and then joined
    (docs/language.md, "Property paths"), over the graph of each instant
    t: the triples that occur at t (of the pattern's streams, whose
    predicate is one of the path's IRIs, or all for
    Path.reads_every_event), each pair an occurrence over [the least
    start of those triples, t]. With background knowledge, over the
    union of that graph and the background graph (the timeless triples of
    S) instead: a pair of the background graph alone is a timeless
    occurrence, and one that only the union has, an occurrence over
    [the least start of the instant's triples, t]; with updates of the
    background, the union with the background as it was at t
    (BACKGROUND_AT), which later updates do not change.

    Over a window's content (CONTENT), which RSP-QL evaluates as one RDF
    graph, over all of its triples at once, whatever their instants, and
    the background as it is at the evaluation time (S's timeless triples):
    a pair only the union has is an occurrence over [the least start, the
    greatest end] of the content's triples the walk reads."""
    background = {(s, p, o) for s, p, o, start, _, _ in S if start is None} if BACKGROUND.get() else None
    content = CONTENT.get() is not None
    background_at = None if content else BACKGROUND_AT.get()
    out, instants = set(), {}
    every, iris = tp.p.reads_every_event(tp.s, tp.o), tp.p.iris()
    for s, p, o, start, end, g in S:
        if start is not None and (g is None or tp.stream is None or g in tp.stream) and (every or p in iris):
            instants.setdefault(end, []).append((s, p, o, start))
    if content and instants:
        instants = {max(instants): [x for occurring in instants.values() for x in occurring]}
    timeless = set() if background is None else _path_pairs(tp, background)
    out = {(x, tp.p, y, None, None, None) for x, y in timeless}
    for t, occurring in instants.items():
        first = min(start for _, _, _, start in occurring)
        then, before = (background, timeless) if background_at is None else (background_at(t), None)
        if before is None:
            before = _path_pairs(tp, then)
        graph = {x[:3] for x in occurring} | (then or set())
        out |= {(x, tp.p, y, first, t, None) for x, y in _path_pairs(tp, graph) - before}
    return out


def _path_pairs(tp, graph) -> set:
    """The (s, o) pairs of the path triple pattern tp over `graph`. An end
    given as a constant term is where the path starts, and reaches itself
    by length zero even outside the graph; a variable end ranges over the
    graph's nodes."""
    nodes = {s for s, _, _ in graph} | {o for _, _, o in graph}
    if not isinstance(tp.s, ops.Var):
        pairs = {(tp.s, y) for y in _ends(tp.p, tp.s, graph, nodes)}
    elif not isinstance(tp.o, ops.Var):
        pairs = {(x, tp.o) for x in nodes | {tp.o} if tp.o in _ends(tp.p, x, graph, nodes)}
    else:
        pairs = {(x, y) for x in nodes for y in _ends(tp.p, x, graph, nodes)}
    return pairs


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


def _absence(left, right, op, S) -> set:
    """NOTSEQ: each solution a of the left operand with no compatible
    solution b of the right one such that a ends before b starts, b ends by
    a's deadline (end + d) and the condition holds on their merge gives a
    solution over [a's start, the deadline], once event time is known to
    have passed the deadline (HORIZON); at the end of the stream (no
    HORIZON) every deadline has passed: no event can come any more."""
    horizon = HORIZON.get()
    out = set()
    for a in left:
        deadline = a[2] + op.deadline_ms
        if horizon is not None and deadline > horizon:
            continue
        if any(compatible(a, b) and a[2] < b[1] and b[2] <= deadline and satisfies(op.cond, merge(a, b))
               for b in right):
            continue
        out.add((a[0], a[1], deadline) + a[3:])
    return out


def _within(a, b) -> bool:
    """MINUS and [NOT] EXISTS: b lies within a's interval (a's start <=
    b's start, b's end <= a's end). A timeless (background) b lies within
    every interval; a timeless a relates to timeless ones only (as
    OPTIONAL's mandatory part, _optional_part_ends_first). Over a
    window's content, any (CONTENT)."""
    if b[1] is None or CONTENT.get() is not None:
        return True
    return a[1] is not None and a[1] <= b[1] and b[2] <= a[2]


def _minus(left, right, op) -> set:
    """MINUS and FILTER NOT EXISTS: each solution a of the left operand
    with no solution b of the right one within it (_within) that is
    compatible with it, satisfies the condition on their merge and, for
    MINUS, shares a variable with it (SPARQL 18.5: dom(a) and dom(b)
    meet). FILTER EXISTS: each one with such a b."""
    def matched(a):
        return any(compatible(a, b) and (not isinstance(op, ops.Minus) or dict(a[0]).keys() & dict(b[0]).keys())
                   and _within(a, b) and satisfies(op.cond, merge(a, b)) for b in right)
    return {a for a in left if matched(a) == isinstance(op, ops.Exists)}


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
