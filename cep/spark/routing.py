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
match (cep.compile.program, _leaf_rules): a pattern on :q takes the events
of q's subproperties, `?x a :D` those of D's subclasses and of the
properties whose domain (x in the event's subject) or range (x in its
object) is under D. Background triples need no routing: every worker
holds them all.

Update rules (DELETE/INSERT) change the background that every group
reads, so every group runs them on every event they read: a group gets
such an event as a copy for its update rules alone (cep.spark._routed)
unless the event is one of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from cep import terms
from cep.algebra import ops

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

    @property
    def bucketed(self) -> bool:
        """Whether the class can run in many groups: each of its queries has
        a key, in the same slot of every pattern, so an event goes to one
        bucket; and each DISTINCT query keeps its key in its answers (else
        two buckets could give the same answer, each once)."""
        slots = {r.key_slot for r in self.routes}
        return (all(k is not None for k in self.key) and len(slots) == 1 and slots <= set(SLOTS)
                and all(_keeps_key(q, k) for q, k in zip(self.queries, self.key)))


def _keeps_key(query, key: str) -> bool:
    if not getattr(query, "distinct", False) or query.projection is None:
        return True
    return any(item.var.name == key and item.expr is None for item in query.projection)


def triples(op) -> list:
    """The triple patterns an event can match (a property path matches
    the background graph only)."""
    if isinstance(op, ops.Triple):
        return [] if isinstance(op.p, ops.Path) else [op]
    out = []
    for child in ops.children(op):
        out += triples(child)
    return out


def partition_key(query: ops.Query) -> str | None:
    """The name of a variable bound by every triple pattern of the query
    (the first such one, in the order of the first pattern's slots), or
    None."""
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
    a match too."""
    groups: dict = {}
    for q in queries:
        key = partition_key(q)
        routes = _routes(q, key, schema)
        # a query without a key is a class of its own (one group each)
        signature = frozenset(routes) if key is not None else ("unkeyed", q.name)
        groups.setdefault(signature, []).append((q, key, routes))
    return [QueryClass(i, tuple(q for q, _, _ in members), tuple(k for _, k, _ in members), members[0][2])
            for i, members in enumerate(groups.values())]


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


def explain(queries, schema=None) -> str:
    """What `cep explain` says of partitioning."""
    lines = []
    for c in classes([q for q in queries if q.form != "update"], schema):
        for q, key in zip(c.queries, c.key):
            if key is None:
                lines.append(f"{q.name}: no partition key (no variable is bound by every triple pattern): "
                             "it runs in a single group, on one core, with all its partial matches in one state")
            else:
                lines.append(f"{q.name}: partitioned by ?{key} (class {c.index})")
    for q in queries:
        if q.form == "update":
            lines.append(f"{q.name}: updates the background: every group runs it, on a copy of each event it reads")
    return "\n".join(lines)
