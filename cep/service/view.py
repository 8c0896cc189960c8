"""The local view of a SERVICE pattern (the seed's R, section 4.2): its
solutions at the endpoint, one entry per join key (the seed's one-to-one
class; a key with several solutions keeps them all, a key the endpoint
no longer knows keeps an entry with none), each with its best-before
time tau. The view lives twice: here, with what maintenance reads
(refresh times, observed changes), and in Prolog as facts
(prolog/cep_service.pl), which the rules join with.

ServiceSpec says what a SERVICE pattern of a compiled plan is: its node,
endpoint, pattern, the variables of its view, its join key (the variables
it shares with the pattern it is joined with), and the window of its
query, or of its group in a query whose groups have windows of their own
(width omega, slide beta, in ms; omega is math.inf for RANGE UNBOUNDED;
None for a query without one), and the query's evaluation times: phase
+ k beta of each window it is evaluated by (RSP-QL's t0 moves them off
the multiples of beta; such a query is evaluated at each leading group's
window's).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Optional

from cep import prolog as pl
from cep import terms
from cep.algebra import ops
from cep.binarize import Plan, Unary, node_children
from cep.compile.services import service_of
from cep.errors import QueryError
from cep.runtime.session import session
from cep.service import endpoint
from cep.service.options import policy_fields

# (endpoint, pull query) -> (snapshot, rows, {key positions: rows by key}):
# the latest initial pull of a pattern made under a named snapshot in this
# process (View.pull), which every engine of the process under that
# snapshot reads (a Spark worker's groups), grouped by join key once. One
# per pattern: a later snapshot replaces it.
_PULLS: dict = {}


@dataclass(frozen=True)
class ServiceSpec:
    node: int  # the plan's Unary node of the SERVICE: its view's number in Prolog
    op: ops.Service
    key: tuple  # of Var: the join variables, in the order of op.vars
    query: str  # the name of the query it is part of
    # (omega, beta) in ms, omega math.inf for an unbounded window; None for a query without a window or
    # evaluated by a count window (its views maintained at each call of the rules)
    window: Optional[tuple] = None
    phase: int = 0  # the window closes at phase + k * beta (0 <= phase < beta)
    # (beta, phase) of each window whose evaluation times are the query's: its own, or (groups with
    # windows of their own) each leading group's, at each of which its group reads the window it closed last
    grids: tuple = ()
    policy: dict = field(default_factory=dict, compare=False)  # the query's @service settings (policy_fields)

    @property
    def endpoint(self) -> str:
        return self.op.endpoint

    def positions(self) -> list[int]:
        """The arguments (from 1) of a view row that make its key."""
        return [self.op.vars.index(v) + 1 for v in self.key]

    def pattern_text(self, names: dict, bound: dict) -> str:
        """The pattern as SPARQL text (its triples, then its OPTIONAL groups;
        its FILTER is the engine's, not sent), the variables in `bound`
        replaced by their values (N-Triples text is SPARQL text), the others
        named by `names`."""
        def slot(x):
            if isinstance(x, ops.Var):
                return bound[x] if x in bound else names[x]
            return x

        def block(triples):
            return " . ".join(f"{slot(t.s)} {slot(t.p)} {slot(t.o)}" for t in triples)
        return " ".join([block(self.op.triples)] + [f"OPTIONAL {{ {block(part)} }}" for part in self.op.optional])

    def pull_query(self) -> str:
        """The whole pattern (the seed's initial pull)."""
        names = {v: f"?v{i}" for i, v in enumerate(self.op.vars)}
        return f"SELECT {' '.join(names.values()) or '*'} WHERE {{ {self.pattern_text(names, {})} }}"

    def refresh_query(self, key: tuple) -> str:
        """The pattern for one join key (SPARQL 1.0: the key's values
        written in the pattern, no VALUES): one query per entry, as the
        seed assumes."""
        bound = dict(zip(self.key, key))
        names = {v: f"?v{i}" for i, v in enumerate(self.op.vars)}
        free = [names[v] for v in self.op.vars if v not in bound]
        return f"SELECT {' '.join(free) or '*'} WHERE {{ {self.pattern_text(names, bound)} }}"


def _grid(query, w) -> tuple:
    """(beta, phase): a time-based window's evaluation times phase + k beta."""
    beta = query.every_ms or w.step_ms
    return beta, w.first_close_ms % beta


def service_specs(plan: Plan) -> list[ServiceSpec]:
    """The SERVICE patterns of a plan, in node order."""
    owner = {}  # node -> (query, the window it reads in: its part's in a query with parts)
    for out in plan.outputs:  # the query each node is part of (the first, if shared)
        for part in out.parts or (None,):
            stack = [out.root if part is None else part.root]
            while stack:
                n = stack.pop()
                if n not in owner:
                    owner[n] = (out, out.query.window if part is None else part.window)
                    stack += node_children(plan.node(n))
    specs = []
    for node in plan.nodes:
        op = service_of(node.op) if isinstance(node, Unary) else None
        if op is not None:
            child = set(plan.node(node.child).vars)
            out, w = owner[node.id]
            query = out.query
            # a query whose groups have windows of their own is evaluated at the times of each of its
            # leading parts' windows (Output.evaluated_by): its views are maintained at all of them; one
            # whose first group counts events is evaluated at every instant, and its views are maintained
            # at each call of the rules, as a query's over a count window
            leads = out.evaluated_by if out.parts else (w,)
            timed = w is not None and w.count is None and all(x.count is None for x in leads)
            if out.parts and w.count is not None and all(x.count is None for x in leads):
                raise QueryError("SERVICE in a group whose window counts events, in a query evaluated at the "
                                 "times of time-based windows, is not supported with groups that have windows "
                                 "of their own: its view would be maintained at those times, with the entries "
                                 "a count window's solutions need, which no time bounds; give the group a "
                                 "time-based window", op.pos)
            grids = tuple(_grid(query, x) for x in leads) if timed else ()
            window = (math.inf if w.unbounded else w.range_ms, _grid(query, w)[0]) if timed else None
            policy = policy_fields(query.option("service", ""), "@service")
            loose = [v for v in op.vars if v in child and v not in op.certain]
            if loose:  # a view is indexed by its join key: every solution must bind it
                raise QueryError(f"SERVICE <{op.endpoint}>: its join key {loose[0]} is bound only in its "
                                 f"OPTIONAL part; the view is kept one join key at a time, so the key must be "
                                 f"bound by its triple patterns", op.pos)
            specs.append(ServiceSpec(node.id, op, tuple(v for v in op.vars if v in child),
                                     query.name, window, _grid(query, w)[1] if timed else 0, grids, policy))
    return specs


@dataclass
class Entry:
    id: int
    key: tuple  # the join key's values, N-Triples text
    rows: tuple  # the solutions, a tuple of N-Triples text per variable of the view
    best_before: Optional[int] = None  # tau (ms); None until the first evaluation
    refreshed: Optional[int] = None  # the event time of the last refresh (or the pull)
    first: Optional[int] = None  # the event time it was first seen at
    changes: int = 0  # refreshes that found other rows
    refreshes: int = 0  # refreshes since the first pull
    needed: Optional[int] = None  # t_i: the latest end of a stream solution that needed it


@dataclass
class View:
    """A SERVICE pattern's view in one engine (`module`: the engine's rules
    module, whose facts prolog/cep_service.pl keeps apart)."""

    spec: ServiceSpec
    module: str
    entries: dict = field(default_factory=dict)  # key -> Entry
    by_id: dict = field(default_factory=dict)
    pulled: Optional[dict] = None  # key -> rows of the initial pull (what a restored view starts from)
    keep: Optional[object] = None  # key -> whether this engine holds the key's entry (ServiceOptions.part)

    def __post_init__(self):
        self._define()

    def _define(self):
        self._call("cep_service_define", " ".join(str(p) for p in self.spec.positions()))

    def _call(self, name: str, *args):
        return session().call(name, "cep_service", [("atom", self.module), str(self.spec.node), *args],
                              outputs=1 if name == "cep_service_touched" else 0)

    # ---- reading the endpoint

    def pull(self, timeout: float, snapshot: Optional[str] = None) -> Optional[float]:
        """The initial pull (or, without a view, each evaluation's): every
        solution of the pattern, the view replaced by them; the seconds
        the request took, or None when the rows came from this process's
        pull under the same `snapshot` (the initial pull of a Spark run:
        the worker's groups share one download). Raises EndpointError."""
        began = time.monotonic()
        query = self.spec.pull_query()
        shared = _PULLS.get((self.spec.endpoint, query)) if snapshot is not None else None
        if shared is not None and shared[0] == snapshot:
            rows, seconds = shared[1], None
        else:
            rows = self._solutions(*endpoint.select(self.spec.endpoint, query, timeout), {})
            seconds = time.monotonic() - began
            shared = (snapshot, rows, {})
            if snapshot is not None:
                _PULLS[(self.spec.endpoint, query)] = shared
        positions = tuple(p - 1 for p in self.spec.positions())
        if positions not in shared[2]:
            shared[2][positions] = by_key = {}
            for row in rows:
                by_key.setdefault(tuple(row[p] for p in positions), []).append(row)
        grouped = shared[2][positions]
        # the part of the view this engine's stream can need (a Spark group's), no other loaded
        grouped = {key: rows for key, rows in grouped.items() if self.keep is None or self.keep(key)}
        for key in list(self.entries):  # gone from the endpoint: the key stays, with no solution
            grouped.setdefault(key, [])
        self._store([(key, tuple(grouped[key])) for key in sorted(grouped)], None)  # ids in key order
        if self.pulled is None:
            self.pulled = {key: entry.rows for key, entry in self.entries.items()}
        return seconds

    def fetch(self, entry: Entry, timeout: float) -> tuple:
        """The endpoint's current solutions of one entry's key (one query,
        SPARQL 1.0). Raises EndpointError."""
        if any(x.startswith("_:") or "\\u" in x or "\\U" in x for x in entry.key):
            # a blank node cannot be named in a query; an escape \uXXXX is read by SPARQL before
            # the query is parsed (SPARQL 1.1, 19.2), so such a term may not say what it says here
            return entry.rows
        names, rows = endpoint.select(self.spec.endpoint, self.spec.refresh_query(entry.key), timeout)
        return tuple(self._solutions(names, rows, dict(zip(self.spec.key, entry.key))))

    def _solutions(self, names: list, rows: list, bound: dict) -> list:
        """The rows of an answer, whose variables are named ?v0, ?v1... as
        the query asked (in whatever order the endpoint lists them), as
        solutions of the pattern's variables, with the values of `bound`
        (a refresh's key); EndpointError unless each binds every variable
        of the pattern's triples (those of its OPTIONAL groups only may be
        unbound)."""
        at = {n: i for i, n in enumerate(names)}
        out = [tuple(bound[v] if v in bound else row[at[f"v{i}"]] if f"v{i}" in at else None
                     for i, v in enumerate(self.spec.op.vars)) for row in rows]
        certain = [i for i, v in enumerate(self.spec.op.vars) if v in self.spec.op.certain]
        if any(row[i] is None for row in out for i in certain):
            raise endpoint.EndpointError(self.spec.endpoint, "malformed",
                                         "malformed SPARQL results: a solution leaves a variable of the "
                                         "pattern unbound")
        return out

    # ---- changing it

    def replace(self, updates: list, now: int):
        """Each (entry, rows) made the entry's solutions, refreshed at `now`."""
        self._store([(e.key, rows) for e, rows in updates], now)

    def _store(self, items: list, now: Optional[int]):
        text = []
        for key, rows in items:
            rows = tuple(sorted(set(rows), key=str))
            entry = self.entries.get(key)
            if entry is None:
                entry = Entry(len(self.by_id), key, rows, first=now, refreshed=now)
                self.entries[key] = entry
                self.by_id[entry.id] = entry
            else:
                if now is not None and entry.refreshed is not None:
                    entry.refreshes += 1
                    entry.changes += rows != entry.rows
                entry.rows = rows
                if now is not None:
                    entry.refreshed = now
            text.append(pl.Struct("e", entry.id, _key_term(key), pl.PList([
                pl.Struct("v", *[pl.Var("_") if x is None else terms.to_prolog(x) for x in row]) if row
                else pl.Atom("v") for row in rows])))
        if text:
            self._call("cep_service_set", pl.write(pl.PList(text)))

    def silent_empty(self, empty: bool):
        """SERVICE SILENT with nothing in its view and a failed endpoint:
        its one empty solution (true), or its view again (false)."""
        self._call("cep_service_silent", "true" if empty else "false")

    # ---- an engine's state (cep.engine.Engine.state): the part its keys need

    def state(self) -> list:
        """The entries the stream solutions needed, with what maintenance
        knows of them, as JSON values; the other entries are as pulled."""
        needed = {}
        for line in self._call("cep_service_touched", str(-(2**62)))[0].splitlines():
            i, t = line.split()
            needed[int(i)] = int(t)
        return [[list(e.key), [list(r) for r in e.rows], e.best_before, e.refreshed, e.first, e.changes,
                 e.refreshes, needed[e.id]] for e in sorted(self.entries.values(), key=lambda e: e.id) if e.id in needed]

    def restore(self, saved: list):
        """The view as the initial pull made it, with the entries of a
        state() over it."""
        self.entries, self.by_id = {}, {}
        self._define()
        self._store(sorted((key, rows) for key, rows in (self.pulled or {}).items()), None)
        self._store([(tuple(key), tuple(tuple(r) for r in rows)) for key, rows, *_ in saved], None)
        lines = []
        for key, _, best_before, refreshed, first, changes, refreshes, needed in saved:
            entry = self.entries[tuple(key)]
            entry.best_before, entry.refreshed, entry.first = best_before, refreshed, first
            entry.changes, entry.refreshes = changes, refreshes
            lines.append(f"{entry.id} {needed}")
        if lines:
            self._call("cep_service_needed", "\n".join(lines))

    def read_needed(self, since: Optional[int]):
        """Each entry's t_i from the rules: the latest end of a stream
        solution that needed it, after `since` (earlier ones forgotten;
        None: every one, an unbounded window's)."""
        for entry in self.entries.values():
            entry.needed = None
        for line in self._call("cep_service_touched", str(-(2**62) if since is None else since))[0].splitlines():
            i, t = line.split()
            self.by_id[int(i)].needed = int(t)


def _key_term(key: tuple):
    values = [terms.to_prolog(x) for x in key]
    if not values:
        return pl.Atom("k")
    return values[0] if len(values) == 1 else pl.Struct("k", *values)
