"""Partition keys: which group of the Spark engine an event goes to.

A query's partition key is a variable that every one of its triple patterns
binds (for the paper's query (1), ?company). All the events of one answer
then share that variable's value, so the query can run in groups that each
hold the events and partial matches of one bucket of key values, and no
answer needs two groups. An event goes, for every triple pattern it can
match, to the bucket of the term in the pattern's key position.

Queries are gathered in *classes*: the queries of one class share their
routing (the same triple patterns in the same key positions) and run as one
compiled rule set, so they keep sharing their common steps. A query without
such a variable is a class alone that runs in a single group.

A class whose patterns hold the key in different positions (?x :p ?k and
?k :q ?y) runs in a single group too: an event could match its patterns in
two key positions and go to two buckets, and both groups could then find the
same answer (QueryClass.bucketed).

With background knowledge an event goes wherever a triple it entails could
match (cep.compile.leaves, leaf_rules): a pattern on :q takes the events
of q's subproperties, `?x a :D` those of D's subclasses and of the
properties whose domain (x in the event's subject) or range (x in its
object) is under D. Background triples need no routing: every worker
holds them all.

Rule chaining: the triples a CONSTRUCT rule derives are fed back inside
the group that derived them (cep.compile.derivations), so a
query that reads them runs in the rule's class. The class keeps many
groups only where a derived triple carries the rule's own key in the
class's key slot (it belongs to the group that derived it); otherwise it
runs in a single group.

Update rules (DELETE/INSERT) change the background that every group
reads, so every group runs them on every event they read: a group gets
such an event as a copy for its update rules alone (cep.spark._routed)
unless the event is one of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from cep import terms
from cep.algebra import ops
from cep.algebra.chaining import analyse, reads
from cep.compile.windows import empty_rows
from cep.errors import QueryError

SLOTS = ("s", "p", "o")


@dataclass(frozen=True)
class Route:
    """A triple pattern as a router sees it: the constant terms an event
    must have (slot -> N-Triples text), and the slot holding the key
    (None: the class has no key)."""

    constants: tuple  # ((slot, term or frozenset of terms), ...)
    key_slot: str | None


@dataclass(frozen=True)
class QueryClass:
    index: int
    queries: tuple  # ops.Query
    key: tuple  # per query: its key variable's name, or None
    routes: tuple  # Route, distinct
    local: bool = True  # every triple its rules derive and read goes to the group that derives it

    @property
    def bucketed(self) -> bool:
        """Whether the class can run in many groups: each of its queries has
        a key, in the same slot of every pattern, so an event goes to one
        bucket; and each DISTINCT query keeps its key in its answers (else
        two buckets could give the same answer, each once)."""
        slots = {r.key_slot for r in self.routes}
        return (self.local and all(k is not None for k in self.key) and len(slots) == 1 and slots <= set(SLOTS)
                and all(_keeps_key(q, k) for q, k in zip(self.queries, self.key)))


def _keeps_key(query, key: str) -> bool:
    """Whether each bucket's answers of the query are its own: a query over
    a window groups within a bucket (every group, and every solution an
    AGGREGATE reads, shares its key); where answers are sets (DISTINCT,
    and the rows of a window compared as sets: grouped, ISTREAM, DSTREAM,
    CONSTRUCT), an answer holds the key."""
    w = getattr(query, "window", None)
    if w is not None and (w.unbounded or w.policy in ("change", "nonempty")):
        # whether an evaluation reports (a content change, a non-empty
        # window) is decided over the whole window, not a bucket's share
        # of it; an unbounded window is evaluated up to the stream's end
        return False
    g = getattr(query, "grouping", None)
    if g is not None:
        groups = [g.keys] if g.keys is not None else [keys for _, _, keys in g.extensions]
        if not all(ops.Var(key) in keys for keys in groups):
            return False
    windowed = getattr(query, "evaluated", False)
    sets = getattr(query, "distinct", False) or windowed and (
        g is not None and g.keys is not None or query.report != "rstream" or query.form == "construct")
    if not sets:
        return True
    if query.form == "construct":
        return any(ops.Var(key) in ops.slots_vars(t) for t in query.template)
    if query.projection is None:
        return True
    return any(item.var.name == key and item.expr is None for item in query.projection)


def _reads_instants(query) -> bool:
    """Whether the query has an empty group (ops.Unit), whose solutions
    are the stream's instants, a subquery evaluated per instant (grouped
    or cut: ops.Project.evaluated), or a property path, which walks the
    graph of each instant (with background knowledge, its union with the
    background graph): one group must see them whole."""
    return bool(_instant_readers(query.pattern))


def _instant_readers(op) -> list:
    """The empty groups, evaluated subqueries and path triple patterns of
    a pattern."""
    out, todo = [], [op]
    while todo:
        op = todo.pop()
        if isinstance(op, ops.Unit) or isinstance(op, ops.Project) and op.evaluated \
                or isinstance(op, ops.Triple) and isinstance(op.p, ops.Path):
            out.append(op)
        todo += ops.children(op)
    return out


def triples(op) -> list:
    """The triple patterns an event can match as a triple (a property
    path walks the graph of an instant: _reads_instants)."""
    if isinstance(op, ops.Triple):
        return [] if isinstance(op.p, ops.Path) else [op]
    out = []
    for child in ops.children(op):
        out += triples(child)
    return out


def partition_key(query: ops.Query) -> str | None:
    """The name of a variable bound by every triple pattern of the query
    (the first such one, in the order of the first pattern's slots), or
    None. A query whose solution modifiers (ORDER BY, LIMIT, OFFSET)
    order or cut the answers of each evaluation, and an ASK, which
    answers once per evaluation, have none: they run in one group, which
    sees every solution of an evaluation; so has a query that reads
    whole instants (_reads_instants)."""
    if query.modified or query.form == "ask" or _reads_instants(query) or empty_rows(query):
        return None
    patterns = triples(query.pattern)
    if not patterns:
        return None
    common = None
    for t in patterns:
        names = {v.name for v in ops.slots_vars(t)}
        common = names if common is None else common & names
    for slot in SLOTS:
        x = getattr(patterns[0], slot)
        if isinstance(x, ops.Var) and x.name in common:
            return x.name
    return None


ENTAILED = "entailed"  # a key slot that no event holds as it is: the class runs in one group


def _routes(query: ops.Query, key: str | None, schema=None) -> tuple:
    out = []
    for t in triples(query.pattern):
        for route in _pattern_routes(t, key, schema):
            if route not in out:
                out.append(route)
    readers = _instant_readers(query.pattern)
    for t in readers:  # a path's events: those of its IRIs (the triples they entail too)
        if isinstance(t, ops.Triple) and not t.p.reads_every_event(t.s, t.o):
            for iri in sorted(t.p.iris()):
                for route in _pattern_routes(ops.Triple(ops.Var("s"), iri, ops.Var("o")), None, schema):
                    if route not in out:
                        out.append(route)
    if query.over_static_data or empty_rows(query) \
            or any(w.count is not None or w.unbounded for w in query.windows) or any(
            isinstance(t, (ops.Unit, ops.Project)) or t.p.reads_every_event(t.s, t.o) for t in readers):
        # a count window counts every event of the stream (an unbounded one is
        # evaluated up to the stream's last instant, and so is one whose empty
        # windows give a row, from its first: cep.compile.windows.empty_rows),
        # a query over static data
        # answers at its first instant; an empty group's
        # solutions are the instants of every event, as are the evaluations
        # of a grouped or cut subquery; and a path over every node reads
        # every event: its one group gets them all
        out.append(Route((), None))
    return tuple(out)


def _pattern_routes(t: ops.Triple, key: str | None, schema) -> list:
    """The routes of the events that match triple pattern t (or, with a
    schema, entail a triple that does)."""
    slots = {slot: getattr(t, slot) for slot in SLOTS}
    key_slot = None if key is None else next(slot for slot in SLOTS if slots[slot] == ops.Var(key))

    def route(event: dict, key_at):
        """event: slot -> the pattern's term it must hold (a Var: any)."""
        constants = []
        for slot in SLOTS:
            x = event.get(slot)
            if x is None or isinstance(x, ops.Var):
                continue
            constants.append((slot, x if isinstance(x, str) else (next(iter(x)) if len(x) == 1 else frozenset(x))))
        return Route(tuple(constants), key_at)

    if schema is None:
        return [route(slots, key_slot)]
    p, o = slots["p"], slots["o"]
    if isinstance(p, ops.Var):  # any event can entail a match: p and o unrestricted
        routes = [route({"s": slots["s"]}, key_slot)]
        if key_slot != "s" or any(schema.ranges(q) for q in schema.properties()):
            routes.append(Route((), None if key is None else ENTAILED))
        return routes
    if p != terms.RDF_TYPE:
        return [route({**slots, "p": {p} | schema.subproperties(p)}, key_slot)]
    if isinstance(o, ops.Var):  # ?x a ?c: any type event, and every domain or range
        routes = [route({"s": slots["s"], "p": p}, key_slot if key_slot != "o" else ENTAILED)]
        domains = {q for q in schema.properties() if schema.domains(q)}
        ranges = {q for q in schema.properties() if schema.ranges(q)}
    else:
        routes = [route({"s": slots["s"], "p": p, "o": {o} | schema.subclasses(o)}, key_slot)]
        domains, ranges = schema.properties_with_domain(o), schema.properties_with_range(o)
    moved = {"s": "s", "o": ENTAILED, None: None}[key_slot]
    if domains:  # x is the event's subject
        routes.append(route({"s": slots["s"], "p": domains}, moved))
    if ranges:  # x is the event's object
        routes.append(route({"o": slots["s"], "p": ranges}, "o" if key_slot == "s" else moved))
    return routes


def classes(queries, schema=None) -> list[QueryClass]:
    """The queries of a rule set gathered by routing, in query order;
    `schema` (cep.background.rdfs.Schema): route the events that entail
    a match too. Queries that read the triples of a CONSTRUCT rule are in
    its class."""
    groups: dict = {}
    for q in queries:
        # a query over static data answers the background's solutions at the
        # stream's first instant: in one group, which sees every event
        key = None if q.over_static_data else partition_key(q)
        routes = _routes(q, key, schema)
        # a query without a key is a class of its own (one group each)
        signature = frozenset(routes) if key is not None else ("unkeyed", q.name)
        groups.setdefault(signature, []).append((q, key, routes))
    members = list(groups.values())
    edges = analyse(queries, schema).edges
    for e in edges:  # union of the classes of a producer and a consumer
        a = next(m for m in members if any(q.name == e.producer for q, _, _ in m))
        b = next(m for m in members if any(q.name == e.consumer for q, _, _ in m))
        if a is not b:
            a += b
            members.remove(b)
    out = []
    for m in sorted(members, key=lambda m: min(queries.index(q) for q, _, _ in m)):
        m = sorted(m, key=lambda x: queries.index(x[0]))
        routes = tuple(dict.fromkeys(r for _, _, rs in m for r in rs))
        out.append(QueryClass(len(out), tuple(q for q, _, _ in m), tuple(k for _, k, _ in m), routes,
                              _derived_stay(m, routes, edges, schema)))
    return out


def _derived_stay(members, routes, edges, schema) -> bool:
    """Whether every triple a rule of the class derives, where a query of
    the class reads it, holds the rule's key in the class's key slot: it
    then goes to the group that derived it, where it is fed back."""
    slots = {r.key_slot for r in routes}
    if len(slots) != 1:
        return True  # one group anyway (QueryClass.bucketed)
    (slot,) = slots
    by_name = {q.name: (q, k) for q, k, _ in members}
    for e in edges:
        if e.producer not in by_name or e.consumer not in by_name:
            continue
        producer, key = by_name[e.producer]
        consumer, _ = by_name[e.consumer]
        for t in producer.template:
            if any(reads(t, pattern, schema) for pattern in triples(consumer.pattern)):
                if key is None or getattr(t, slot, None) != ops.Var(key):
                    return False
    return True


def refuse_derived_updates(queries, schema=None):
    """On Spark every group runs the update rules, but a derived triple is
    fed back only in the group that derived it: an update rule that reads
    the triples of a CONSTRUCT rule would change the background of that
    group alone."""
    for e in analyse(queries, schema).edges:
        consumer = next(q for q in queries if q.name == e.consumer)
        if consumer.form == "update":
            raise QueryError(f"the update {consumer.name} reads the triples that {e.producer} derives: "
                             f"the Spark engine cannot run it (every group runs the update rules, but a "
                             f"derived triple is fed back only in the group that derived it); run it "
                             f"in-process", consumer.pos)


def timed(query) -> bool:
    """Whether event time alone makes the query answer (a window that
    closes, a NOTSEQ deadline that passes): its groups need event-time
    timeouts, to be called when no row reaches them."""
    if query.evaluated:
        return True
    todo = [query.pattern]
    while todo:
        op = todo.pop()
        if isinstance(op, ops.SeqAbsence):
            return True
        todo += ops.children(op)
    return False


def update_routes(updates, schema=None) -> tuple:
    """The routes of the events that the update rules (DELETE/INSERT) read:
    every group gets them (cep.spark._routed), since every group's rules
    read the background those rules change."""
    out = []
    for q in updates:
        for route in _routes(q, None, schema):
            if route not in out:
                out.append(route)
    return tuple(out)


def single_group_reason(query) -> str:
    """Why the query has no partition key, in words for `cep explain`."""
    if query.over_static_data:
        return "a query over static data answers once, at the stream's first instant"
    if query.modified:
        return "its ORDER BY, LIMIT or OFFSET orders or cuts all the answers of an evaluation"
    if query.form == "ask":
        return "an ASK answers once per evaluation, over all its solutions"
    if _reads_instants(query):
        return ("it reads whole instants (an empty group, a subquery evaluated per instant, "
                "or a property path over the instant's graph)")
    if empty_rows(query):
        return "its aggregates without GROUP BY give a row at every evaluation, an empty window's too"
    return "no variable is bound by every triple pattern"


def explain(queries, schema=None) -> str:
    """What `cep explain` says of partitioning."""
    lines = []
    for c in classes([q for q in queries if q.form != "update"], schema):
        for q, key in zip(c.queries, c.key):
            if key is None:
                why = single_group_reason(q)
                lines.append(f"{q.name}: no partition key ({why}): "
                             "it runs in a single group, on one core, with all its partial matches in one state")
            elif not c.local:
                lines.append(f"{q.name}: runs in a single group, with the CONSTRUCT rules it shares class "
                             f"{c.index} with: a triple they derive does not hold their key where the "
                             f"class's events do, so it would belong to another group")
            elif not c.bucketed:
                lines.append(f"{q.name}: runs in a single group (class {c.index}): a query of the class "
                             f"holds ?{key} in different places of its patterns, or its answers over a "
                             f"bucket would not be its own (a DISTINCT or a window's rows without the key, "
                             f"a grouping by another variable, a count window)")
            else:
                lines.append(f"{q.name}: partitioned by ?{key} (class {c.index})")
    for q in queries:
        if q.form == "update":
            lines.append(f"{q.name}: updates the background: every group runs it, on a copy of each event it reads")
    return "\n".join(lines)


# ------------------------------------------------------------ buckets

def bucket_of(term: str, buckets: int) -> int:
    """The bucket of a key term, as the router computes it on Spark
    (pmod(xxhash64(term), buckets): XXH64 of the UTF-8 text, seed 42, as a
    signed long), for a worker that must know which keys its group gets
    (cep.spark.worker: a SERVICE view's part)."""
    h = xxh64(term.encode("utf-8"), 42)
    return (h - (1 << 64) if h >= 1 << 63 else h) % buckets


P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                      0x27D4EB2F165667C5)
M = (1 << 64) - 1


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & M, 31) * P1) & M


def _merge(acc, val):
    return ((acc ^ _round(0, val)) * P1 + P4) & M


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of `data` (the xxHash specification), unsigned."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M]
        while i + 32 <= n:
            for j in range(4):
                v[j] = _round(v[j], int.from_bytes(data[i + 8 * j:i + 8 * j + 8], "little"))
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
        for x in v:
            h = _merge(h, x)
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h = ((_rotl(h ^ _round(0, int.from_bytes(data[i:i + 8], "little")), 27) * P1) + P4) & M
        i += 8
    if i + 4 <= n:
        h = ((_rotl(h ^ (int.from_bytes(data[i:i + 4], "little") * P1) & M, 23) * P2) + P3) & M
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * P5) & M, 11) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    h ^= h >> 32
    return h
