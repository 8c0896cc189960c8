"""The reference evaluator: the paper's formal semantics (section 4.2),
evaluated naively over a finite stream. It is the test oracle of the engine.

    evaluate(queries, events) -> list[Answer]
    solutions(pattern, events) -> set of (frozenset(mu.items()), ts, te)
    multiset(answers) -> Counter   the form in which answers are compared

`evaluate` takes queries (cep.algebra.ops.Query) and events (cep.events.Event)
and returns every answer of every query over the whole stream, in a fixed
order (query, end, start, content). SELECT answers form a multiset: one per
solution of the pattern, DISTINCT keeps one per (bindings, start, end).
CONSTRUCT gives one answer per distinct values of the template's variables
and interval that instantiate at least one template triple; template blank
nodes are named per rule, values and interval (`_:r0`, `_:r1`, ...), so
compare CONSTRUCT answers modulo blank node renaming.

Constructed triples are fed back into the stream: queries are evaluated
over the paper's Q-closure, instant by instant and stratum by stratum
(_by_instant). Only the paper's semantics is evaluated: a query with
an event consumption policy other than `unrestricted` is refused.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import cmp_to_key

from cep import terms
from cep.algebra import ops, query_limits
from cep.algebra.chaining import analyse
from cep.algebra.copies import reads_copies
from cep.events import Answer, Event
from cep.io import check
from cep.reference.patterns import stamped_solutions, timestamp_vars, with_timestamps  # timestamp()
from cep.reference.expressions import NUMERIC as NUMERIC_KINDS
from cep.reference.expressions import SOLUTION, USER_PROLOG, ExprError, ebv, value
from cep.reference.expressions import _cmp as compare
from cep.reference.expressions import parse as parse_value
from cep.reference.patterns import (BACKGROUND, BACKGROUND_AT, CONTENT, COPIES, HORIZON, SERVICES, compatible,
                                    copies_of, merge, solutions, stream_of, streams_of)
from cep.reference.windows import derived_source, window_answers

__all__ = ["evaluate", "solutions", "answers", "multiset", "stream_of", "compatible", "merge"]


@query_limits.deep
def evaluate(queries, events, background=None, prolog=None, until=None, services=None) -> list[Answer]:
    """`background`: a cep.background.Background (see patterns.py).
    `services`: for SERVICE, each endpoint's graph (endpoint IRI -> its
    triples, N-Triples text), which does not change during the stream:
    a SERVICE's solutions are its pattern's over that graph, timeless.
    `prolog`: the user's Prolog files whose predicates the expressions call
    (paths or a cep.user_prolog.UserProlog; expressions.py). `until`: event
    time has reached it, for the windows (reference/windows.py) and NOTSEQ's
    deadlines (those before it have passed; without it, those up to the
    last event's end)."""
    from cep.user_prolog import load_user_prolog

    queries = list(queries)
    chaining = analyse(queries, background.schema if background is not None else None)
    out = []
    if any(_has_absence(q.pattern) for q in queries) and (
            chaining.producers or any(q.form == "update" for q in queries)):
        raise ValueError("the reference does not evaluate NOTSEQ with rule chaining or updates")
    token = USER_PROLOG.set(load_user_prolog(prolog))
    horizon = HORIZON.set(None if until is None else until - 1)
    known = BACKGROUND.set(background is not None)
    history = BACKGROUND_AT.set(None)  # set by _by_instant where updates change the background
    snapshots = SERVICES.set(services)
    try:
        fed = [q.name for q in queries if q.window is not None and q.name in chaining.producers]
        if not fed:
            return _clamped(modified(_evaluate(queries, events, background, chaining, until, ()), queries))
        # windows whose triples are read: their triples are events over the
        # window, and what the rules answer over the stream with them; no
        # cycle goes through a window, so adding them until nothing new
        # comes ends (each round settles one more window of the chain):
        # a round more than the windows is an error, not a hang
        extra = ()
        for _ in range(len(fed) + 2):
            out = _evaluate(queries, events, background, chaining, until, extra)
            new = tuple(sorted({Event(s, p, o, a.start, a.end, derived_source(a.query))
                                for a in out if a.query in fed for s, p, o in a.triples},
                               key=lambda e: (e.end, e.start, e.s, e.p, e.o)))
            if new == extra:
                return _clamped(modified(out, queries))
            extra = new
        raise ValueError(f"the triples the windows of {', '.join(fed)} feed back do not settle")
    finally:
        USER_PROLOG.reset(token)
        HORIZON.reset(horizon)
        BACKGROUND.reset(known)
        BACKGROUND_AT.reset(history)
        SERVICES.reset(snapshots)


def _clamped(answers) -> list[Answer]:
    """Each answer with its start and end instants events may have: a
    window or a NOTSEQ deadline reaching past them is given at the nearest
    (docs/language.md, "Times")."""
    return [a if a.start == check.clamped(a.start) and a.end == check.clamped(a.end)
            else a._replace(start=check.clamped(a.start), end=check.clamped(a.end)) for a in answers]


def _evaluate(queries, events, background, chaining, until, extra) -> list[Answer]:
    """evaluate() with `extra`, the events the windows of fed CONSTRUCTs
    give: read by the patterns, not counted by the windows."""
    out = []
    windowed = [q for q in queries if q.evaluated]
    stream_events = list(events) + list(extra)
    skolem = {}
    if chaining.producers or any(q.form == "update" for q in queries):
        out, stream, stream_at = _by_instant([q for q in queries if not q.evaluated], stream_events,
                                             background, chaining)
    else:
        stream = stream_of(stream_events, background)
        stream_at = lambda tau: stream  # noqa: E731 (the background never changes)
        first = min((e.end for e in events), default=None)
        for q in queries:
            if not q.evaluated:
                out += answers(q, stream, skolem, static_at=first if q.over_static_data else None)
    for q in windowed:
        own, q_stream, q_at = derived_source(q.name), stream, stream_at
        if any(e.source == own for e in extra):
            # its own triples fed back are no solution of its own (docs/language.md, "Window results
            # fed back"): no pattern of it reads them (a cycle through a window is refused), but its
            # empty groups would have a solution at their instants, its subqueries a row there, and
            # the evaluations after them would feed again (fed triples: a rule set with producers,
            # evaluated by instant above)
            mine = [e for e in stream_events if e.source != own]
            _, q_stream, q_at = _by_instant([x for x in queries if not x.evaluated], mine, background, chaining)
        if q.windows[1:]:  # groups with windows of their own: each part solved apart, over its window's content
            watch = timestamp_vars(q.pattern, q.projection)
            copies = copies_of(events, background) if reads_copies(q) else None

            def solve_part(pattern, inside=None, tau=None, at=(), as_set=False, watch=watch, copies=copies,
                           stream=q_stream, stream_at=q_at):
                """The solutions of the part of the pattern at position `at`;
                `as_set`: over a [TRIPLES n] window, which holds triples (a
                repeated one once, as a query with that window reads them)."""
                return _solver(pattern, watch, stream, stream_at, None if as_set else copies)(inside, tau, at)
            out += window_answers(dataclasses.replace(q, pattern=streams_of(q)), None, events,
                                  _row_maker(q, skolem), until, solve_part=solve_part,
                                  occurrences=lambda e: stream_of([e], background), fed=extra)
        else:
            copies = copies_of(events, background) if reads_copies(q) else None
            solve = _solver(streams_of(q), timestamp_vars(q.pattern, q.projection), q_stream, q_at, copies)
            out += window_answers(q, solve, events, _row_maker(q, skolem), until,
                                  max((o[3] for o in q_stream if o[3] is not None), default=None),
                                  occurrences=lambda e: stream_of([e], background), fed=extra)
    return _described(out, background)


def _described(out, background) -> list[Answer]:
    """The answers of DESCRIBE queries with each resource's marker triple
    (ops.DESCRIBED) replaced by its concise bounded description in the
    background graph: the triples with it as subject, and those of each
    blank node object they reach, recursively (sorted); an answer left
    without a triple is none."""
    if not any(t[1] == ops.DESCRIBED for a in out for t in a.triples):
        return out
    by_subject = {}
    for t in background.triples if background is not None else ():
        by_subject.setdefault(t[0], []).append(t)

    def description(subject):
        found, todo, seen = [], [subject], {subject}
        while todo:
            for t in by_subject.get(todo.pop(), ()):
                found.append(t)
                if t[2].startswith("_:") and t[2] not in seen:
                    seen.add(t[2])
                    todo.append(t[2])
        return sorted(found)
    kept = []
    for a in out:
        triples = ops.described(a.triples, description)
        if triples:
            kept.append(a._replace(triples=triples))
    return kept


def _solver(pattern, watch, stream, stream_at, copies=None):
    """solve(inside, tau, at): the timed solutions of a query's pattern (its
    streams read, streams_of; `watch` its timestamp() variables) over
    the occurrences that `inside(start, end, occurrence)` says a window holds, and the
    background as it is at the evaluation time tau (stream_at(tau)), as
    RSP-QL's eval(SDS, SE, t) evaluates a pattern over a window's content
    (patterns.CONTENT), the solutions' own intervals in it; inside None:
    over the whole stream, with the stream's semantics (a query grouped
    without a window). `copies`: the copies of the input's repeated
    events (patterns.copies_of), for a query that reads the stream as a
    multiset (cep/algebra/copies.py); `at`: the pattern's position in the
    query's (a part of it solved apart, stamped_solutions)."""
    def solve(inside, tau=None, at=()):
        multiset = COPIES.set(copies)
        try:
            if inside is None:
                return [s for s in stamped_solutions(pattern, stream, watch, at) if s[1] is not None]
            content = frozenset(o for o in stream_at(tau) if o[3] is None or inside(o[3], o[4], o))
            token = CONTENT.set(inside)
            try:
                found = stamped_solutions(pattern, content, watch, at)
            finally:
                CONTENT.reset(token)
            return [s for s in found if s[1] is not None and inside(s[1], s[2])]
        finally:
            COPIES.reset(multiset)
    return solve


def _has_absence(op) -> bool:
    return isinstance(op, ops.SeqAbsence) or any(_has_absence(c) for c in ops.children(op))


def _row_maker(query, skolem):
    """A solution's row in a window: its projected bindings, or its
    CONSTRUCT triples (blank nodes named as answers() names them)."""
    names = [n for n in ops.template_fields(query.template) if not n.startswith("_:")]

    def row(mu, ts, te, stamps):
        if query.form != "construct":
            return _project(query, mu, ts, te, stamps)
        for item in query.projection or ():
            if item.expr is not None:
                _extend(mu, item, ts, te, stamps)
        values = tuple(mu.get(n) for n in names)
        return ops.instantiate(query.template, mu, lambda label: skolem.setdefault(
            (query.name, label, values, ts, te), f"_:r{len(skolem)}"))
    return row


def _by_instant(queries, events, background, chaining) -> list[Answer]:
    """Evaluation instant by instant, for rule sets whose rules change the
    stream or the background (docs/language.md):

    - rule chaining, the paper's Q-closure: the triples of a CONSTRUCT
      answer that ends at t occur with its interval, and every query reads
      them. At each instant the CONSTRUCT rules are applied until nothing
      new is derived, stratum by stratum (cep.algebra.chaining), so a rule
      that reads a triple in an optional part sees all that the lower
      strata derive at that instant;
    - updates of the background: the solutions that end at t are those
      over the background as the updates of the instants before t left
      it, that is closure(schema + B) with B the files' instance triples,
      changed at the end of each instant by the updates' solutions that
      end then (all deletions, then all insertions, as SPARQL's
      DELETE/INSERT).

    Returns (answers, the whole stream, stream_at): stream_at(tau) is the
    stream with the background as the updates of the instants up to tau
    left it, which a window evaluated at tau reads (RSP-QL)."""
    from cep.background import rdfs

    if background is not None:
        schema = {t for t in background.triples if t[1] in rdfs.SCHEMA_PREDICATES}
        instances = set(background.instances)
        graph = rdfs.closure(schema | instances)
    else:
        graph = None
    out = []
    skolem = {}
    derived, seen = [], set()
    strata = {}  # stratum -> the rules whose triples some query reads
    for q in queries:
        if q.name in chaining.producers:
            strata.setdefault(chaining.stratum(q.name), []).append(q)
    stream = None  # made again only when the stream or the instances change
    history = [(None, graph)]  # (instant, the background its updates left)
    if background is not None:  # the pairs an instant's paths add to the background the instants before left
        BACKGROUND_AT.set(lambda t: [g for at, g in history if at is None or at < t][-1])
    first = min((e.end for e in events), default=None)
    for t in sorted({e.end for e in events}):
        for _, rules in sorted(strata.items()):
            while True:
                if stream is None:
                    stream = stream_of(list(events) + derived, background, graph)
                new = []
                for q in rules:
                    for a in answers(q, stream, skolem, at=t):
                        for s, p, o in a.triples:
                            if (s, p, o, a.start, a.end) not in seen:
                                seen.add((s, p, o, a.start, a.end))
                                new.append(Event(s, p, o, a.start, a.end, derived_source(q.name)))
                if not new:
                    break
                derived += new
                stream = None
        if stream is None:
            stream = stream_of(list(events) + derived, background, graph)
        deletions, insertions = set(), set()
        for q in queries:
            if q.form != "update":
                out += answers(q, stream, skolem, at=t, static_at=t if t == first and q.over_static_data else None)
                continue
            for mu, ts, te in solutions(q.pattern, stream):
                if te == t and ts is not None:
                    mu = dict(mu)
                    deletions |= set(ops.instantiate(q.deletions, mu))
                    insertions |= set(ops.instantiate(q.template, mu))
        if background is not None:
            changed = (instances - deletions) | {x for x in insertions if x[1] not in rdfs.SCHEMA_PREDICATES}
            if changed != instances:
                instances, graph, stream = changed, rdfs.closure(schema | changed), None
                history.append((t, graph))
    if stream is None:
        stream = stream_of(list(events) + derived, background, graph)
    streams = {}

    def stream_at(tau):
        at = [g for t, g in history if t is None or t <= tau][-1]
        if at is graph:
            return stream
        if id(at) not in streams:
            streams[id(at)] = stream_of(list(events) + derived, background, at)
        return streams[id(at)]
    return out, stream, stream_at


def answers(query: ops.Query, stream, skolem=None, at=None, static_at=None) -> list[Answer]:
    """The answers of one query over a stream (events or a stream_of set);
    `at`: only those that end at that time; `static_at`: the first instant
    of the stream, where the solutions of the background alone (no event
    in them, so none detects them) of a query over static data are
    answered, once (docs/language.md, "Queries over static data"). A CONSTRUCT query gives one
    answer per distinct values of its template's variables and interval
    (its result is a set of triple occurrences); `skolem` names the
    template's blank nodes by the rule, the label, the values and the
    interval (the same derivation names the same node)."""
    skolem = skolem if skolem is not None else {}
    policy = query.option("policy", "unrestricted")
    if policy != "unrestricted":
        raise ValueError(f"query {query.name}: the reference evaluates the paper's semantics only "
                         f"(policy unrestricted), not @policy {policy}")
    watch = timestamp_vars(query.pattern, query.projection)
    timed = [s for s in stamped_solutions(streams_of(query), stream, watch)
             if s[1] is not None and (at is None or s[2] == at)  # only events detect
             or s[1] is None and static_at is not None]
    timed = [s if s[1] is not None else (s[0], static_at, static_at, s[3]) for s in timed]
    ordered = sorted(timed, key=lambda s: (s[2], s[1], sorted(s[0])))
    out = []
    seen = set()
    names = [n for n in ops.template_fields(query.template) if not n.startswith("_:")]
    for mu, ts, te, stamps in ordered:
        if query.form == "construct":
            mu = dict(mu)
            for item in query.projection or ():  # a sub-select's expressions
                if item.expr is not None:
                    _extend(mu, item, ts, te, stamps)
            values = tuple(mu.get(n) for n in names)
            if (values, ts, te) in seen:
                continue
            seen.add((values, ts, te))
            triples = ops.instantiate(query.template, mu, lambda label: skolem.setdefault(
                (query.name, label, values, ts, te), f"_:r{len(skolem)}"))
            if triples:
                out.append(Answer(query.name, ts, te, triples=triples))
            continue
        bindings = _project(query, dict(mu), ts, te, stamps)
        if query.distinct:
            if (bindings, ts, te) in seen:
                continue
            seen.add((bindings, ts, te))
        out.append(Answer(query.name, ts, te, bindings=bindings))
    return out


def modified(answers, queries) -> list[Answer]:
    """SPARQL's solution modifiers on a stream (docs/language.md, "Solution
    modifiers"): the answers of each query that end at one instant are
    one evaluation, ordered by ORDER BY (15.1) and cut by OFFSET and
    LIMIT; the other answers are left as they are. An ASK answers once
    per evaluation that has a solution: true, over the earliest start."""
    by_name = {q.name: q for q in queries}
    groups, out = {}, []
    for a in answers:
        query = by_name.get(a.query)
        if query is not None and (query.modified or query.form == "ask"):
            groups.setdefault((a.query, a.end), []).append(a)
        else:
            out.append(a)
    for (name, _), group in groups.items():
        query = by_name[name]
        if query.form == "ask":
            out.append(Answer(name, min(a.start for a in group), group[0].end, boolean=True))
            continue
        # the keys' values, and the answers without the hidden fields ORDER BY adds
        names, hidden = ops.sort_fields(query)
        hidden = {var.name for var, _ in hidden}
        rows = [(tuple(a.binding(n) for n in names),
                 a._replace(bindings=tuple(b for b in a.bindings if b[0] not in hidden)))
                for a in group]
        rows.sort(key=lambda r: (r[1].start, r[1].bindings))  # ties: by start, then bindings
        for i in reversed(range(len(query.order))):  # the last key first: Python's sort is stable
            rows.sort(key=cmp_to_key(lambda a, b, i=i: _order_compare(a[0][i], b[0][i])),
                      reverse=query.order[i].descending)
        group = [a for _, a in rows]
        if query.distinct and hidden:  # SPARQL: ORDER BY, then the projection, then DISTINCT
            seen = set()
            group = [a for a in group if not ((a.start, a.bindings) in seen or seen.add((a.start, a.bindings)))]
        stop = None if query.limit is None else query.offset + query.limit
        out += group[query.offset:stop]
    return out




_CATEGORY = ("numeric", "string", "lang", "boolean", "dateTime")


def _order_compare(a, b) -> int:
    """-1, 0 or 1: SPARQL 1.1's ORDER BY order of two terms (None:
    unbound): unbound < blank nodes < IRIs < literals; literals of one
    category by `<` where SPARQL defines it, else by their text."""
    def rank(t):
        if t is None:
            return (0, "")
        val = parse_value(t)
        if val.kind in ("bnode", "iri"):
            return (1 if val.kind == "bnode" else 2, "")
        if val.kind in NUMERIC_KINDS:
            return (3, 0)
        return (3, _CATEGORY.index(val.kind)) if val.kind in _CATEGORY else (3, 5)
    ra, rb = rank(a), rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if a is None:
        return 0
    va, vb = parse_value(a), parse_value(b)
    if va.kind in ("bnode", "iri") or ra[1] == 5:
        x, y = (va.v if va.kind in ("bnode", "iri") else terms.split(a)[2:0:-1],
                vb.v if vb.kind in ("bnode", "iri") else terms.split(b)[2:0:-1])
    else:
        try:
            less = ebv(compare("<")(va, vb))
            if less or ebv(compare("<")(vb, va)):
                return -1 if less else 1
        except ExprError:  # no `<` between them (language-tagged strings): by their text
            pass
        x, y = terms.split(a)[1::2], terms.split(b)[1::2]
    return (x > y) - (x < y)


def _extend(mu: dict, item: ops.ProjectItem, ts, te, stamps=frozenset()):
    """SELECT (expr AS ?v): ?v is bound to the value, or left unbound on an
    error. Later items see the variables of earlier ones. `stamps`: the
    solution's (patterns.stamped_solutions), which timestamp() reads."""
    try:
        mu[item.var.name] = value(with_timestamps(item.expr, stamps), mu, ts, te)
    except ExprError:
        mu.pop(item.var.name, None)


def _project(query, mu: dict, ts, te, stamps=frozenset()) -> tuple:
    """A solution's bindings: the projection's, then the hidden fields
    ORDER BY sorts by (ops.sort_fields; modified() drops them)."""
    items = [ops.ProjectItem(var, expr) for var, expr in ops.sort_fields(query)[1]]
    if query.projection is None:
        out = {k: v for k, v in mu.items() if not k.startswith("_:")}
    else:
        out, items = {}, list(query.projection) + items
    token = SOLUTION.set(dict(mu))
    try:
        for item in items:
            if item.expr is not None:
                _extend(mu, item, ts, te, stamps)
            if item.var.name in mu:
                out[item.var.name] = mu[item.var.name]
    finally:
        SOLUTION.reset(token)
    return tuple(sorted(out.items()))


def rename_bnodes(triples) -> tuple:
    """Blank nodes relabelled _:b0, _:b1, ... in order of first appearance."""
    labels = {}

    def fix(term):
        if term.startswith("_:"):
            return labels.setdefault(term, f"_:b{len(labels)}")
        return term

    return tuple(tuple(fix(t) for t in triple) for triple in triples)


def multiset(answers) -> Counter:
    """Answers as a multiset of (query, bindings, start, end, triples, boolean), with
    the triples of a CONSTRUCT answer modulo blank node labels: the form in
    which two evaluations of the same queries are compared."""
    return Counter((a.query, a.bindings, a.start, a.end, rename_bnodes(a.triples), a.boolean) for a in answers)
