"""Windowed queries, evaluated naively from their definitions (the test
oracle of prolog/cep_window.pl; docs/language.md, "Windows and aggregates").

At each evaluation time tau the window's content is the occurrences of
the stream that lie in it: for a time-based window of range l and step d,
those in (c - l, c] with c = floor(tau / d) * d (RSP-QL); for a
count-based one, those from the instant where the last n events
(timestamped graphs: the triples of one record) begin up to tau, or
exactly the last n triples ([TRIPLES n]: of that instant, those that came
last); background triples are in every window. The query's pattern is
evaluated over that content (RSP-QL's eval(SDS, SE, t): OPTIONAL, MINUS
and [NOT] EXISTS as SPARQL's, the temporal operators with their interval
relations), and its solutions whose interval lies in the window are the
window's. The solutions are then
rows (SPARQL 1.1 section 18.5 for GROUP BY and the aggregates; C-SPARQL
3.1 for AGGREGATE), and the report operator picks what is answered. A
window's report policy (RSP-QL) picks the evaluations that report: every
one (window close; periodic, as COMPUTED EVERY), those whose window holds
a solution (non-empty content), or those whose window's solutions differ
from the last reported ones' (content change).
Evaluation times: the multiples of the period (COMPUTED EVERY, else the
step) from the first event's, up to the last whose window holds a solution
and one more (the stream has ended: every window that holds a solution
reports, and DSTREAM reports the last rows leaving); or, with `until`,
those before it; for a count window, every instant of the stream. A query grouped without a
window is evaluated at every instant a solution ends at, over the solutions
that end at it (the answers of one instant), its rows at [tau, tau].
"""

from __future__ import annotations

import math
from functools import cmp_to_key

from cep import terms
from cep.algebra import ops
from cep.events import Answer
from cep.reference.expressions import ExprError, canonical_value, holds, parse, value
from cep.algebra.ops import is_table
from cep.reference.patterns import (UNIT_AT, _extended, _marked, compatible, merge, satisfies, stamped_solutions,
                                    stream_of, streams_of)

INTEGER = terms.XSD + "integer"


def window_answers(query: ops.Query, solve, events, project, until=None, latest=None,
                   solve_part=None, occurrences=None, fed=()) -> list[Answer]:
    """`solve(inside, tau)`: the timed solutions (mu, ts, te, stamps) of the
    query's pattern over the content `inside(start, end)` says a window
    holds (`inside(start, end, occurrence)` for an occurrence of the
    stream), with the background as it is at the evaluation time tau (None:
    over the whole stream); `events`: the stream's events
    (for the evaluation times and count
    windows); `project(mu, ts, te, stamps)`: a solution's row (its
    bindings, or its CONSTRUCT triples); `until`: event time is known to have reached it
    (a watermark), so the evaluations are those before it instead of those
    up to the first at or after the last event (the end of the stream);
    `latest`: the latest start of an occurrence the pattern reads (fed
    back triples included), else that of the last event (a window of
    infinite width reads the latest end of its solutions instead).
    `solve_part(pattern, inside=None, tau=None, at=(), as_set=False)`: the timed solutions
    of a part of the pattern, at position `at` in it (the query's streams
    read), over the content `inside` says a window holds (None: over the
    whole stream; `as_set`: as a set, a [TRIPLES n] window's), for a query
    whose groups have windows of their own (`solve` is then not read). `occurrences(event)`: the
    occurrences an event gives (itself and what it entails), for a
    [TRIPLES n] window (each is the triple of its event). `fed`: the
    events windows' CONSTRUCTs feed back: events of the stream as any
    other to an empty group's content (the report policies), though no
    evaluation time or count window reads them; never the query's own."""
    if solve_part is not None and query.windows[1:]:
        return _group_window_answers(query, events, project, until, solve_part, fed, occurrences)
    w = query.window
    if w is None:
        sols = solve(None)
        return _rows_of(query, [(tau, tau, tau, lambda ts, te, o=None, tau=tau: te == tau)
                                for tau in sorted({s[2] for s in sols}) if until is None or tau < until],
                        lambda inside, tau: [s for s in sols if inside(s[1], s[2])], project)
    if w.count is not None and query.streams:
        # a count window counts the events of the query's streams (and those of no stream)
        events = _of_streams(events, {i for i, _ in query.streams})
    if not events:
        return []
    ends = sorted({e.end for e in events})
    if w.unbounded and until is None:  # the latest end of a solution of the whole stream it reads
        latest = max((s[2] for s in solve(lambda ts, te, o=None: w.t0_ms < ts, math.inf)), default=None)
    places = _places(events, occurrences) if w.count is not None and w.counts == "triples" else {}
    read = _window_events(streams_of(query), events, fed, query.name)
    final = None
    if _empty_rows(query) and w.count is None and not w.unbounded and until is None:
        final = _last_empty(w, ends, solve(lambda ts, te, o=None: True, math.inf), _read_at_end(query, read))
    return _rows_of(query, _evaluations(query, w, ends, events, until, latest, places, final), solve, project,
                    read=read)


def _empty_rows(query) -> bool:
    """Aggregates without GROUP BY: one group, which an empty window holds
    too (SPARQL 1.1, 11.2 and 18.5), so every evaluation gives its row;
    an empty group, whose one solution every window holds; and with groups
    with windows of their own, a UNION operand beside the first group's
    that holds no group (_leading_groups), whose solutions every
    evaluation has."""
    if query.grouping is not None and query.grouping.keys == () or _has_unit(query):
        return True
    skipped = []
    if query.windows[1:]:
        _leading_groups(query.pattern, query.window, skipped=skipped)
    return bool(skipped)


def _has_unit(query) -> bool:
    return any(isinstance(op, ops.Unit) for op in ops.walk(query.pattern))


def _window_events(pattern, events, fed=(), name=None):
    """For a query whose window holds an empty group in `pattern` (its
    pattern, with streams_of's streams): `read(inside)`, the window's
    content that the report policies read, the events of the empty groups'
    streams in it, as triples with their intervals (RSP-QL: an empty
    window is empty content, whatever the empty group gives there; a
    [TRIPLES n] window holds some triples of its oldest instant, `inside`
    tells which from the occurrence): with the triples windows feed back
    (`fed`), but never the query's own (`name`): they are its output, fed
    back only when another query reads them, and would keep a sliding
    window reporting. None for any other query (they read its solutions)."""
    streams = [op.stream for op in ops.walk(pattern) if isinstance(op, ops.Unit)]
    if not streams:
        return None
    content = list(events) + list(fed)
    if None not in streams:
        content = _of_streams(content, frozenset().union(*streams))
    own = derived_source(name)
    read = [next(iter(stream_of([e]))) for e in content if e.source != own]
    return lambda inside, tau=None: frozenset(o[:5] for o in read if inside(o[3], o[4], o))


def _of_streams(events, streams) -> list:
    """The events of the streams (IRIs, with or without their brackets)
    and those of no stream, which are of every stream."""
    mine = {f"<{i.strip('<>')}>" for i in streams}
    return [e for e in events if not e.stream or f"<{e.stream.strip('<>')}>" in mine]


def derived_source(query: str) -> str:
    """The source of the triples a query's CONSTRUCT feeds back."""
    return f"derived by {query}"


def _read_at_end(query, read) -> frozenset:
    """The content the report policies of a query with an empty group read
    over the whole stream (REPORT NON EMPTY and ON CHANGE read it; the
    others report every evaluation): its streams' events and the triples
    other windows' CONSTRUCTs feed back, never its own (so they do not
    extend it). At the end of the stream the fed triples are instants of
    its stream as the events are (RSP-QL's R2S output is a stream): its
    windows go on while they hold one, as they do for a solution
    (docs/language.md, "Empty windows")."""
    if read is None or query.window.policy not in ("nonempty", "change"):
        return frozenset()
    return read(lambda ts, te, o=None: True)


def _last_empty(w, ends, sols, content=()):
    """The last evaluation of a query whose empty windows give a row, at
    the end of the stream: the first evaluation time whose window closed
    last, (c - l, c], starts at or after the stream's last instant and
    the end of every solution some window holds, and of every triple of
    `content` (occurrences (s, p, o, ts, te) the report policies read:
    _read_at_end), the first window after all of them; each later one is
    as empty."""
    phase = 0 if w.t0_ms is None else (w.t0_ms + w.range_ms) % w.step_ms
    first = None if w.t0_ms is None else w.t0_ms + w.range_ms

    def in_a_window(ts, te):  # the first close at or after te holds it if any does
        c = phase + -((phase - te) // w.step_ms) * w.step_ms
        c = c if first is None else max(c, first)
        return c - w.range_ms < ts

    end = max([ends[-1]] + [te for _, ts, te, _ in sols if in_a_window(ts, te)]
              + [o[4] for o in content if in_a_window(o[3], o[4])])
    close = phase + -((phase - end - w.range_ms) // w.step_ms) * w.step_ms
    return close if first is None else max(close, first)


def _rows_of(query, evaluations, solve, project, window=None, read=None) -> list[Answer]:
    """The answers of the evaluations (tau, the window's start, its close,
    test of an interval's being in the window), as the report operator
    picks them. `window`: the window the query is evaluated by, where not
    its own (its first group's, of a query whose groups have windows of
    their own); `read(inside)`: the content the report policies read,
    where not the solutions (_window_events; tau: the evaluation time)."""
    out, previous, seen = [], [], frozenset()
    policy = query.window.policy if query.window is not None else None
    for tau, start, close, inside in evaluations:
        token = UNIT_AT.set(close)
        try:
            content = solve(inside, tau)
        finally:
            UNIT_AT.reset(token)
        # RSP-QL's report policies: non-empty content reports the windows
        # that hold a solution; content change those whose solutions (with
        # their intervals) differ from the last reported (at first, none)
        held = content if read is None else read(inside, tau)
        if policy == "nonempty" and not held:
            continue
        if policy == "change":
            now = frozenset((mu, ts, te) for mu, ts, te, _ in content) if read is None else held
            if now == seen:
                continue
            seen = now
        rows = _rows(query, content, start, tau, project, window or query.window)
        if query.report == "rstream":
            chosen = rows
        else:
            new = sorted(set(rows))
            chosen = [r for r in new if r not in previous] if query.report == "istream" \
                else [r for r in previous if r not in new]
            previous = new
        for row in chosen:
            if query.form == "construct":  # a stream at the evaluation time (RSP-QL's R2S, C-SPARQL)
                out.append(Answer(query.name, tau, tau, triples=row))
            else:
                out.append(Answer(query.name, start, tau, bindings=row))
    return out


def _count_cut(w, ends, events, tau):
    """(cut, low) of a count window at tau: cut the oldest instant of the
    last n events (RSP-QL's timestamped graphs) or triples up to tau
    (w.counts). Events take it whole (low 0); triples hold exactly n: of
    its c triples, the last k that came, those whose place (_places) is at
    least low = c - k + 1 (0 when all c are in)."""
    counted, cut, low = 0, tau, 0
    for t in reversed([t for t in ends if t <= tau]):
        at = [e for e in events if e.end == t]
        here = len(at) if w.counts == "triples" else len(_records(at))
        cut = t
        if counted + here >= w.count:
            left = w.count - counted
            low = here - left + 1 if w.counts == "triples" and here > left else 0
            break
        counted += here
    return cut, low


def _places(events, occurrences) -> dict:
    """The place of each occurrence among the triples of its instant, in the
    order the events came (1, 2, ...): an event's own and those it
    entails share its place; a triple that came twice has its later place.
    A triple no event of the window gives (derived by a rule) has none, 0."""
    places, seen = {}, {}
    for e in events:
        seen[e.end] = place = seen.get(e.end, 0) + 1
        for o in occurrences(e):
            if o[3] is not None:
                places[o] = max(places.get(o, 0), place)
    return places


def _records(events) -> list:
    """The events (timestamped graphs) among triple occurrences: those of
    one record share its source, interval and stream; an occurrence
    without a source is one of its own; a record repeated is two."""
    named = {(e.source, e.start, e.end, e.stream) for e in events if e.source}
    return list(named) + [e for e in events if not e.source]


def _evaluations(query, w, ends, events, until, latest, places=None, final=None):
    """(tau, the window's start, its close, test of an interval or occurrence) per
    evaluation; `places`: those of a [TRIPLES n] window's occurrences;
    `final`: at the end of the stream, the evaluations are those up to
    the first at or after this close (_last_empty) instead. A time-based
    window is evaluated from the first evaluation time at or after the
    stream's first instant (and, with t0, its first close)."""
    if w.count is not None:
        for tau in ends:
            cut, low = _count_cut(w, ends, events, tau)
            yield tau, cut, tau, (lambda ts, te, o=None, cut=cut, tau=tau, low=low: ts >= cut and te <= tau and (
                o is None or o[4] > cut or low == 0 or places.get(o, 0) >= low))
        return
    period = query.every_ms or w.step_ms
    if w.unbounded:
        yield from _unbounded_evaluations(w, period, ends, until, latest)
        return
    # RSP-QL's t0: the windows (t0 + i*step, t0 + i*step + range], i >= 0,
    # and the evaluations every period from the first close t0 + range;
    # without it the closes and evaluations are the multiples of step and period
    first = None if w.t0_ms is None else w.t0_ms + w.range_ms
    phase, every_phase = (0, 0) if first is None else (first % w.step_ms, first % period)
    tau = every_phase - ((every_phase - ends[0]) // period) * period
    if first is not None:
        tau = max(tau, first)
    if until is not None:
        last = until - 1
    elif final is not None:
        last = every_phase - ((every_phase - final) // period) * period
    else:  # the last window close that holds an event, then one evaluation past it
        latest = max(e.start for e in events) if latest is None else latest
        last = phase - ((phase - latest - w.range_ms) // w.step_ms) * w.step_ms + period
    while tau <= last:
        c = phase + ((tau - phase) // w.step_ms) * w.step_ms
        yield tau, c - w.range_ms, c, (lambda ts, te, o=None, c=c: c - w.range_ms < ts and te <= c)
        tau += period


def _unbounded_evaluations(w, period, ends, until, latest):
    """A window of infinite width (RSP-QL's l = infinity, RANGE UNBOUNDED)
    from t0: the windows (t0, t0 + i*step], i >= 1, evaluated every
    period from the first close, each over the window closed last; at the
    end of the stream, up to the first evaluation whose window holds its
    last instant (its content never empties: nothing would end it) and
    `latest`, the latest end of its solutions (the triples of another
    window fed back after that instant; its own fed back triples are no
    solution of its own, so they do not extend it, whatever its period)."""
    first = w.t0_ms + w.step_ms
    phase, every_phase = first % w.step_ms, first % period
    tau = max(first, every_phase - ((every_phase - ends[0]) // period) * period)
    if until is not None:
        last = until - 1
    else:
        end = ends[-1] if latest is None else max(ends[-1], latest)
        close = max(first, phase - ((phase - end) // w.step_ms) * w.step_ms)
        last = every_phase - ((every_phase - close) // period) * period
    while tau <= last:
        c = phase + ((tau - phase) // w.step_ms) * w.step_ms
        yield tau, w.t0_ms, c, (lambda ts, te, o=None, c=c: w.t0_ms < ts and te <= c)
        tau += period


def _group_window_answers(query, events, project, until, solve, fed=(), occurrences=None) -> list[Answer]:
    """Streaming SPARQL's windows in graph patterns (Bolles et al., sections
    2 and 5): each group with a window of its own, `{ P WINDOW ... }`, is
    P over that window, and the patterns outside any such group are over
    the query's window. At each evaluation time tau every window is taken
    at tau (a time window closed last, (c - l, c] with c = floor(tau / d)
    * d; a count window the last n events up to tau), and the groups'
    solutions in them are combined at tau by the SPARQL operators above
    the groups, each on its operands' solutions (logical algebra: a join
    of elements valid at one time), a combined solution over the span of
    those it holds. Inside a group every operator is evaluated over its
    window's content (RSP-QL's eval(SDS, SE, t)), as over a query's one
    window. The query is evaluated when its first (leftmost) group's
    window is; the answers' interval is that window. `occurrences` as
    window_answers', for a [TRIPLES n] window."""
    # the events of every stream are time passing, as for a query with one
    # time window (window_answers), even when none is of the query's
    # streams; a count window counts its streams' events
    if not events:
        return []
    every, every_end = events, sorted({e.end for e in events})
    if query.streams:
        events = _of_streams(events, {i for i, _ in query.streams})
    ends = sorted({e.end for e in events})
    places = _places(events, occurrences) if occurrences is not None else {}

    def inside(w, tau, ts, te, o=None):  # an interval, or an occurrence o, in window w taken at tau
        if w.count is not None:
            cut, low = _count_cut(w, ends, events, tau)
            return ts >= cut and te <= tau and (o is None or o[4] > cut or low == 0 or places.get(o, 0) >= low)
        c = _close_at(w, tau)
        return c is not None and (w.t0_ms if w.unbounded else c - w.range_ms) < ts and te <= c

    def windowed(op):
        return any(isinstance(x, ops.Project) and x.window is not None for x in ops.walk(op))

    def over(op, w, tau, at=()) -> list:
        """The solutions of op at tau, its patterns read in window w unless a
        group says otherwise; `at`: op's position in the query's pattern
        (which tells apart the copies its triple patterns matched)."""
        if isinstance(op, ops.Project) and op.window is not None:
            if ops.opens_with_optional(op.pattern) and at + (0, 0) != first_at:
                return identity_optional(op.pattern, op.window, tau, at + (0,))
            return over(op.pattern, op.window, tau, at + (0,))
        if ops.opens_with_optional(op) and windowed(op) and at + (0,) != first_at:
            return identity_optional(op, w, tau, at)
        if is_table(op) and at != first_at:  # inline data after the first group: its rows, in every window
            return list(stamped_solutions(op, frozenset(), frozenset(), at))
        if not windowed(op):  # RSP-QL's eval over the window's content (solve_part)
            # an empty group's one solution there is at that window's close as taken at tau
            token = UNIT_AT.set(tau if w.count is not None else _close_at(w, tau))
            try:
                found = solve(op, lambda ts, te, o=None: inside(w, tau, ts, te, o), tau, at,
                              w.count is not None and w.counts == "triples")
            finally:
                UNIT_AT.reset(token)
            groups[at] = (op, w, found)
            return found
        if isinstance(op, ops.Filter):
            return [s for s in over(op.pattern, w, tau, at + (0,)) if satisfies(op.cond, s)]
        if isinstance(op, ops.Extend):
            return [_extended(s, op) for s in over(op.pattern, w, tau, at + (0,))]
        left, right = over(op.left, w, tau, at + (0,)), over(op.right, w, tau, at + (1,))
        if isinstance(op, ops.Join):
            return [merge(a, b) for a in left for b in right if compatible(a, b)]
        if isinstance(op, ops.Union_):  # each side's solutions marked as its own (a multiset union)
            return [_marked(s, at, side) for side, sols in ((1, left), (2, right)) for s in sols]
        if isinstance(op, (ops.Minus, ops.Exists, ops.NotExists)):  # SPARQL 18.5, over the windows' content
            def matched(a):
                return any(compatible(a, b) and (not isinstance(op, ops.Minus) or dict(a[0]).keys() & dict(b[0]).keys())
                           and (op.cond is None or satisfies(op.cond, merge(a, b))) for b in right)
            return [a for a in left if matched(a) == isinstance(op, ops.Exists)]
        if isinstance(op, ops.LeftJoin):
            out = []
            for a in left:
                matched = [m for m in (merge(a, b) for b in right if compatible(a, b))
                           if op.cond is None or satisfies(op.cond, m)]
                out += matched or [a]
            return out
        raise ValueError(f"the reference does not join groups with windows under {type(op).__name__}")

    def identity_optional(op, w, tau, at) -> list:
        """{ OPTIONAL { P } WINDOW ... } after the first group: {} is join's
        identity, the empty solution without time (docs/language.md, "A
        window per pattern"): P's solutions, else that one."""
        found = [s for s in over(op.right, w, tau, at + (1,)) if op.cond is None or satisfies(op.cond, s)]
        return found or [(frozenset(), None, None, frozenset())]

    first, pattern, first_at = query.window, query.pattern, ()  # the leftmost group's window
    while True:
        if isinstance(pattern, ops.Project) and pattern.window is not None:
            first, pattern, first_at = pattern.window, pattern.pattern, first_at + (0,)
        elif isinstance(pattern, (ops.Join, ops.LeftJoin, ops.Minus, ops.Exists, ops.NotExists)) or \
                isinstance(pattern, ops.Union_) and windowed(pattern):  # (a UNION of groups: its left one's)
            pattern, first_at = pattern.left, first_at + (0,)
        elif isinstance(pattern, (ops.Filter, ops.Extend)):
            pattern, first_at = pattern.pattern, first_at + (0,)
        else:
            break
    # the evaluation times: those of the windows of the groups that give the query solutions on their
    # own (the first, and the first of each other operand of a UNION above it), each up to one past the
    # last of its windows holding a solution of the group (all its pattern's); a group evaluated over
    # each window's content has solutions that are not the stream's: up to the last event's
    leads = _leading_groups(query.pattern, query.window)
    # a grouped query evaluated by a count window gives the empty group's row at its instants (_rows)
    empty_rows = _empty_rows(query) or query.grouping is not None and query.grouping.keys is not None \
        and first.count is not None
    # an empty group in the first group: the report policies read that window's events, as with one window
    read = _window_events(leads[0][0], events, fed, query.name)

    # with a leading group of infinite width, or a count window's, which never empties, every leading
    # group's evaluations end at its own last one, whatever it holds: a bounded window's first that starts
    # at or after the stream's last instant, an unbounded one's first that holds the whole stream, a count
    # window's at the last instant
    unbounded = len(leads) > 1 and any(w.unbounded or w.count is not None for _, w in leads)

    def lead_evaluations(i, part, w):
        sols, content = solve(part), _over_content(part, w)
        if not sols and until is None and not content and not empty_rows and not unbounded:
            return []
        # (a window of infinite width: the latest end, as window_answers reads it)
        latest = None if content else max((s[2 if w.unbounded else 1] for s in sols), default=None)
        final = None
        if (empty_rows or unbounded) and w.count is None and not w.unbounded and until is None:
            final = _last_empty(w, every_end, sols,
                                _read_at_end(query, read) if i == 0 and empty_rows else frozenset())
        return list(_evaluations(query, w, *((ends, events) if w.count is not None else (every_end, every)),
                                 until, latest, places, final=final))

    runs = [lead_evaluations(i, part, w) for i, (part, w) in enumerate(leads)]
    if len(runs) == 1:
        evaluations = runs[0]
    else:
        # the union of the leading groups' evaluation times, each one's from its first (the first at or after
        # the stream's first instant, and its first close; a count window's every instant it counts) up to
        # the last of any one's run: a group whose window holds nothing there still has its times, at which
        # the other windows are read
        end = max((run[-1][0] for run in runs if run), default=None)
        taus = sorted({e[0] for _, w in leads
                       for e in _evaluations(query, w, *((ends, events) if w.count is not None else (every_end, every)),
                                             end + 1, None)}
                      if end is not None else ())
        evaluations = [_first_window_at(first, tau, ends, events, places) for tau in taus]
    groups = {}  # at each evaluation, each group's position -> (its pattern, its window, its solutions)

    def solve_all(_, tau):
        groups.clear()
        groups[None] = over(query.pattern, query.window, tau)
        return groups[None]

    def read_windows(first_inside, tau):
        """REPORT ON CHANGE with an empty group in a group after the first:
        that group's solution is at each evaluation's close, so the query's
        solutions change at every evaluation; RSP-QL's content change is
        read per window instead (docs/language.md, "The empty group"): the
        content of each group's window at tau, its events (of the empty
        group's streams) where the group holds an empty group, else the
        group's solutions in it. Any other query: what it reads alone."""
        parts = {at: g for at, g in groups.items() if at is not None}
        later = [op for at, (op, _, _) in parts.items() if first_at[:len(at)] != at]  # after the first group
        if not any(isinstance(x, ops.Unit) for op in later for x in ops.walk(op)):
            return read(first_inside) if read is not None else frozenset(
                (mu, ts, te) for mu, ts, te, _ in groups[None])
        content = set()
        for at, (op, w, found) in parts.items():
            units = _window_events(op, events, fed, query.name)
            held = units(lambda ts, te, o=None: inside(w, tau, ts, te, o)) if units is not None else \
                frozenset((mu, ts, te) for mu, ts, te, _ in found)
            content |= {(at, x) for x in held}
        return frozenset(content)
    return _rows_of(query, evaluations, solve_all, project, first,
                    read=read_windows if query.window.policy == "change" else read)


def _leading_groups(pattern, window, first=True, skipped=None) -> list:
    """(pattern, window) of each group of a query whose groups have windows
    of their own that gives it solutions on its own (RSP-QL's eval is
    empty wherever all of theirs are), the first (leftmost) one first: a
    largest group under one window, on the left of every operator that
    needs its solutions, and on either side of a UNION. A UNION operand
    after the first group that is join's identity under OPTIONAL, or
    inline data, is no group: it has its solutions at every evaluation,
    and gives the query no evaluation time of its own (`first`: whether
    pattern holds the first group; each such operand is added to
    `skipped`)."""
    if not first:
        inner = pattern.pattern if isinstance(pattern, ops.Project) and pattern.window is not None else pattern
        windowed = any(isinstance(x, ops.Project) and x.window is not None for x in ops.walk(pattern))
        if is_table(pattern) or ops.opens_with_optional(inner) and windowed:
            if skipped is not None:
                skipped.append(pattern)
            return []
    if isinstance(pattern, ops.Project) and pattern.window is not None:
        return _leading_groups(pattern.pattern, pattern.window, first, skipped)
    if not any(isinstance(x, ops.Project) and x.window is not None for x in ops.walk(pattern)):
        return [(pattern, window)]
    if isinstance(pattern, ops.Union_):
        return _leading_groups(pattern.left, window, first, skipped) + \
            _leading_groups(pattern.right, window, False, skipped)
    if isinstance(pattern, ops.Join) and not first and is_table(pattern.left):  # its rows join the right's
        return _leading_groups(pattern.right, window, first, skipped)
    if isinstance(pattern, (ops.Join, ops.LeftJoin, ops.Minus, ops.Exists, ops.NotExists)):
        return _leading_groups(pattern.left, window, first, skipped)
    if isinstance(pattern, (ops.Filter, ops.Extend)):
        return _leading_groups(pattern.pattern, window, first, skipped)
    return [(pattern, window)]


def _first_window_at(first, tau, ends, events, places):
    """An evaluation at tau over the first group's window taken then (tau,
    its start, its close, test of an interval or occurrence): a count
    window's last n events up to tau, [cut, tau]; a time window's closed
    last, (c - l, c] or from t0 (RANGE UNBOUNDED), empty before its first
    close."""
    if first.count is not None:
        cut, low = _count_cut(first, ends, events, tau)
        return tau, cut, tau, (lambda ts, te, o=None: ts >= cut and te <= tau and (
            o is None or o[4] > cut or low == 0 or places.get(o, 0) >= low))
    phase = 0 if first.t0_ms is None else first.first_close_ms % first.step_ms
    c = phase + ((tau - phase) // first.step_ms) * first.step_ms
    shut = _close_at(first, tau) is None
    low = first.t0_ms if first.unbounded else c - first.range_ms
    return tau, low, c, (lambda ts, te, o=None: not shut and low < ts and te <= c)


def _close_at(w, tau):
    """The close of the time-based window w closed last at tau (RSP-QL):
    the multiples of its step, or with a t0 the closes from its first,
    t0 + range (t0 + step for an unbounded one) on; None before that
    first close (no window has closed: its content is empty)."""
    first = w.first_close_ms if w.t0_ms is not None else None
    phase = 0 if first is None else first % w.step_ms
    c = phase + ((tau - phase) // w.step_ms) * w.step_ms
    return None if first is not None and c < first else c


def _over_content(pattern, w) -> bool:
    """Whether a group's solutions over a window's content may be other
    than the stream's solutions that the window holds: a solution may be
    removed or left alone (MINUS, [NOT] EXISTS, the optional operators)
    or made (a path, a subquery's rows) by what the window does not hold,
    or ([TRIPLES n]) the window holds only some triples of an event."""
    return w.count is not None and w.counts == "triples" or any(
        isinstance(x, ops.OPTIONAL_OPS + (ops.Minus, ops.Exists, ops.NotExists))
        or isinstance(x, ops.Triple) and isinstance(x.p, ops.Path)
        or isinstance(x, ops.Project) and x.evaluated for x in ops.walk(pattern))


def _rows(query, content, start, tau, project, window=None, empty_group=False) -> list:
    g = query.grouping
    # no solution: no row, but the empty group's: that of aggregates without
    # GROUP BY over every window (_empty_rows), and with GROUP BY at a count
    # window's evaluation, which holds the events of its instants (SPARQL 1.1
    # 18.5.1 as the W3C test agg-empty-group reads it), and a grouped
    # subquery's at every instant (`empty_group`); a time window's GROUP BY
    # query with no solution gives no row (docs/language.md).
    # `window`: the one the query is evaluated by
    count_group = g is not None and g.keys is not None and window is not None and window.count is not None
    if not content and not (_empty_rows(query) or count_group or empty_group):
        return []
    if g is None:
        rows = [project(dict(mu), ts, te, stamps) for mu, ts, te, stamps in content]
        rows = [r for r in rows if r or query.form != "construct"]
    elif g.keys is not None:
        groups = {}
        for mu, ts, te, _ in content:
            key = tuple(_key_value(g, k, dict(mu), ts, te) for k in g.keys)
            groups.setdefault(key, []).append((dict(mu), ts, te))
        if not content:
            groups[tuple(None for _ in g.keys)] = []
        rows = [_row(query, {k.name: v for k, v in zip(g.keys, key) if v is not None},
                     [(var, agg, members) for var, agg in g.aggregates], start, tau)
                for key, members in groups.items()]
    else:
        def sharing(keys, mu):  # the solutions with mu's values of the keys
            return [(dict(m), s, e) for m, s, e, _ in content
                    if all(dict(m).get(k.name) == mu.get(k.name) for k in keys)]
        rows = []
        for mu, ts, te, _ in content:
            mu = dict(mu)
            rows.append(_row(query, mu, [(var, agg, sharing(keys, mu)) for var, agg, keys in g.extensions],
                             ts, te))
    rows = [r for r in rows if r is not None]
    if g is not None and query.form == "construct":  # a grouped row's bindings instantiate the template
        rows = [ops.instantiate(query.template, dict(r)) for r in rows]
        rows = [r for r in rows if r]
    if g is not None and g.keys is not None or query.distinct or query.form == "construct":
        return sorted(set(rows))
    return sorted(rows)


def subquery_rows(op: ops.Project, content, tau) -> set:
    """The solutions of a subquery with its own aggregation or cut
    (ops.Project.evaluated) evaluated at tau over `content`, the
    solutions (mu, ts, te, stamps) of its pattern that end then (docs/language.md, "Subqueries"): grouped, a row
    of each group over [tau, tau] (no solution is one group, the empty
    one, SPARQL 1.1, 11.2, with GROUP BY too, its keys unbound: the W3C
    test agg-empty-group), else each solution projected; ordered by
    ORDER BY as the top level's answers are (ties by start, then
    bindings), then OFFSET and LIMIT cut them."""
    from cep.reference import _order_compare, _project

    query = op.as_query()
    if op.grouping is not None:
        rows = {(r, tau, tau, frozenset()) for r in _rows(query, content, tau, tau, None, empty_group=True)}
    else:
        rows = {(_project(query, dict(mu), ts, te, stamps), ts, te, stamps) for mu, ts, te, stamps in content}
    names = {v.name for v in op.vars}
    keys = ops.sort_fields(query)[0]
    rows = sorted(rows, key=lambda r: (r[1], r[0]))
    for i in reversed(range(len(op.order))):  # the last key first: Python's sort is stable
        rows.sort(key=cmp_to_key(lambda a, b, i=i: _order_compare(dict(a[0]).get(keys[i]), dict(b[0]).get(keys[i]))),
                  reverse=op.order[i].descending)
    stop = None if op.limit is None else op.offset + op.limit
    return {(frozenset((k, t) for k, t in row if k in names), ts, te, frozenset(s for s in stamps if s[1] & names))
            for row, ts, te, stamps in rows[op.offset:stop]}


def _key_value(g, key, mu, ts, te):
    """A solution's value of a grouping key: its variable's, or for GROUP BY
    (expr [AS ?v]) the expression's (None where it is an error)."""
    computed = dict(g.computed)
    if key not in computed:
        return mu.get(key.name)
    try:
        return value(computed[key], mu, ts, te)
    except ExprError:
        return None


def _row(query, mu, aggregates, ts, te):
    """The aggregates' values (each over its solutions) bound in mu, then
    HAVING (or AGGREGATE's FILTERs) and the projection; None if rejected."""
    for var, agg, members in aggregates:
        result = aggregate(agg, members)
        if result is not None:
            mu[var.name] = result
    if not all(holds(c, mu, ts, te) for c in query.grouping.having):
        return None
    out = {}
    hidden = [ops.ProjectItem(var, expr) for var, expr in ops.sort_fields(query)[1]]  # ORDER BY's
    for item in list(query.projection or ()) + hidden:
        if item.expr is not None:
            try:
                mu[item.var.name] = value(item.expr, mu, ts, te)
            except ExprError:
                mu.pop(item.var.name, None)
        if item.var.name in mu:
            out[item.var.name] = mu[item.var.name]
    return tuple(sorted(out.items()))


def aggregate(agg: ops.Aggregate, members) -> str | None:
    """SPARQL 1.1 section 18.5.1 over a group's solutions; None for an error.
    COUNT, MIN, MAX and SAMPLE read the bound, error-free values; one error
    makes SUM, AVG and GROUP_CONCAT an error; DISTINCT reads each value
    once. GROUP_CONCAT joins the STR of the values in the order of their
    N-Triples text (SAMPLE takes the first in that order)."""
    values, errors = [], 0
    for mu, ts, te in members:
        if agg.arg is None:  # COUNT(*); with DISTINCT each solution once (its bindings, not the hidden ones)
            values.append(tuple(sorted((k, v) for k, v in mu.items() if not k.startswith("_:")))
                          if agg.distinct else terms.literal("1", INTEGER))
            continue
        try:
            values.append(value(agg.arg, mu, ts, te))
        except ExprError:
            errors += 1
    if agg.distinct:
        values = sorted(set(values))
    if agg.func == "count":
        return terms.literal(str(len(values)), INTEGER)
    if agg.func in ("sum", "avg"):
        if errors:
            return None
        total = terms.literal("0", INTEGER)
        try:
            for v in values:
                total = value(ops.Call("+", ops.Const(total), ops.Const(v)), {}, 0, 0)
            if agg.func == "sum":
                return total
            if not values:
                return terms.literal("0", INTEGER)
            n = terms.literal(str(len(values)), INTEGER)
            return value(ops.Call("/", ops.Const(total), ops.Const(n)), {}, 0, 0)
        except ExprError:
            return None
    if agg.func == "group_concat":
        if errors:
            return None
        try:
            texts = [terms.split(value(ops.Call("str", ops.Const(v)), {}, 0, 0))[1] for v in sorted(values)]
        except ExprError:
            return None
        return terms.literal(agg.separator.join(texts))
    if not values:
        return None
    if agg.func == "sample":
        return min(values)
    op = "<" if agg.func == "min" else ">"

    def tied(v, best) -> bool:
        """Whether v is equal to best and goes before it: of equal values
        (1 and 1.0E0, -0.0E0 and 0.0E0, a time in two zones) the one whose
        value's N-Triples text is the least, whatever their order."""
        if not value(ops.Call("=", ops.Const(v), ops.Const(best)), {}, 0, 0).startswith('"true"'):
            return False
        return canonical_value(parse(v)).term < canonical_value(parse(best)).term

    best = values[0]
    for v in values[1:]:
        try:
            better = value(ops.Call(op, ops.Const(v), ops.Const(best)), {}, 0, 0)
        except ExprError:
            if v != best:
                return None
            continue
        if better.startswith('"true"') or tied(v, best):
            best = v
    # a NaN among the numbers is the result, whatever their order (fn:min,
    # fn:max): < and > are false with it, so a fold kept it or not by where
    # it came; an xsd:double's NaN before an xsd:float's
    nans = [n for n in map(parse, values) if n.kind in ("float", "double") and math.isnan(n.v)]
    if nans:
        best = max(nans, key=lambda n: n.kind == "double").term
    return canonical_value(parse(best)).term  # a value, as XPath's fn:min and fn:max give

