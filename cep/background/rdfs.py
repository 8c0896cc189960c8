"""RDFS entailment over background knowledge: a graph -> its closure and its schema.

Takes triples of canonical N-Triples text (cep.background.load) and returns
the graph with everything the RDFS entailment rules of RDF 1.1 Semantics
(section 9.2.1) rdfs2 (domain), rdfs3 (range), rdfs5 (subPropertyOf is
transitive), rdfs7 (a subproperty's triples hold of its superproperties),
rdfs9 (instances of a class are instances of its superclasses) and rdfs11
(subClassOf is transitive) entail, to a fixpoint; and the Schema the engine
asks while it matches events: super- and subclasses, super- and
subproperties, and the classes a property's domains and ranges give.

The other rules (rdf1, rdfs1, rdfs4a/b, rdfs6, rdfs8, rdfs10, rdfs12,
rdfs13) and the axiomatic triples are left out: they hold of every graph
(every node is an rdfs:Resource, every class its own subclass, every
predicate an rdf:Property) and would only fill the background with triples
that tell a query nothing. So `C rdfs:subClassOf C` is in the closure only
when the graph says so or C lies on a subClassOf cycle (rdfs11 entails it
there).

Subproperties of the vocabulary itself are followed to the fixpoint: from
`ex:broader rdfs:subPropertyOf rdfs:subClassOf` and `A ex:broader B`, rdfs7
gives `A rdfs:subClassOf B`, which then acts as any other subClassOf triple;
the same holds for subproperties of rdf:type, rdfs:subPropertyOf,
rdfs:domain and rdfs:range. The rules run over generalized triples, as the
Semantics does: a range may type a literal (`"5" rdf:type C`), which can
entail more through the superproperties or ranges of rdf:type; such
triples are kept while the rules run and left out of the result, since a
literal cannot be a subject in RDF.
"""

from __future__ import annotations

from collections import defaultdict

from cep import terms
from cep.graphs import components

RDFS = "http://www.w3.org/2000/01/rdf-schema#"
TYPE = terms.RDF_TYPE
SUBCLASSOF = terms.iri(RDFS + "subClassOf")
SUBPROPERTYOF = terms.iri(RDFS + "subPropertyOf")
DOMAIN = terms.iri(RDFS + "domain")
RANGE = terms.iri(RDFS + "range")
SCHEMA_PREDICATES = frozenset((SUBCLASSOF, SUBPROPERTYOF, DOMAIN, RANGE))


def closure(triples) -> set[tuple[str, str, str]]:
    """The triples and all that rdfs2, 3, 5, 7, 9 and 11 entail from them.

    The rules run in rounds, each with the schema (the subClassOf and
    subPropertyOf hierarchies, domains and ranges) fixed as the round found
    it, so that transitive closures are computed once per round and not
    triple by triple; a round that derives a schema triple the schema lacked
    (only possible through subproperties of the vocabulary) is followed by
    another."""
    return _saturate(triples)[0]


def _saturate(triples) -> tuple[set, _Round]:
    """The closure, and the last round, whose schema is the closure's."""
    graph = set(triples)
    while True:
        rules = _Round(graph)
        if not rules.run(graph):
            break
    if rules.type_literals:  # the schema only grows: no earlier round typed literals either
        graph = {t for t in graph if not _is_literal(t[0])}
    return graph, rules


def _is_literal(term: str) -> bool:
    return term[0] == '"'


class _Round:
    """The schema of a graph as it stands, and one pass of the rules with it."""

    def __init__(self, graph):
        tables = {p: defaultdict(set) for p in SCHEMA_PREDICATES}
        for s, p, o in graph:
            table = tables.get(p)
            if table is not None:
                table[s].add(o)
        self.subproperty_edges, self.subclass_edges = tables[SUBPROPERTYOF], tables[SUBCLASSOF]
        self.superproperties = reach(self.subproperty_edges)
        self.superclasses = reach(self.subclass_edges)
        self.domains = tables[DOMAIN]
        self.ranges = tables[RANGE]
        # a typed literal entails something about other nodes only through
        # the superproperties or ranges of rdf:type; otherwise rdfs3 skips literals
        self.type_literals = TYPE in self.superproperties or TYPE in self.ranges

    def run(self, graph: set) -> bool:
        """Add to `graph` what the rules entail with this round's schema;
        True when a schema triple it lacked was among them."""
        superproperties, superclasses = self.superproperties, self.superclasses
        domains, ranges, type_literals = self.domains, self.ranges, self.type_literals
        premises = {*superproperties, *domains, *ranges, TYPE}  # predicates some rule applies to
        todo = [t for t in graph if t[1] in premises]
        for ups, predicate in ((superproperties, SUBPROPERTYOF), (superclasses, SUBCLASSOF)):  # rdfs5, rdfs11
            pairs = [(a, predicate, b) for a, bs in ups.items() for b in bs]
            if predicate in premises:
                todo.extend(t for t in pairs if t not in graph)
            graph.update(pairs)
        grew = False
        while todo:
            s, p, o = todo.pop()
            if p not in premises:
                continue
            found = [(s, q, o) for q in superproperties.get(p, ()) if not _is_literal(q)]  # rdfs7
            found.extend((s, TYPE, c) for c in domains.get(p, ()))  # rdfs2
            if type_literals or not _is_literal(o):
                found.extend((o, TYPE, c) for c in ranges.get(p, ()))  # rdfs3
            if p == TYPE:
                found.extend((s, TYPE, c) for c in superclasses.get(o, ()))  # rdfs9
            for t in found:
                if t not in graph:
                    graph.add(t)
                    todo.append(t)
                    # the schema triples this round's closures imply are all in
                    # the graph already: a new one changes the schema
                    grew = grew or t[1] in SCHEMA_PREDICATES
        return grew


def reach(edges: dict) -> dict[str, frozenset]:
    """For each node with an edge out, the nodes reachable from it by one
    edge or more (a node on a cycle reaches itself).

    The strongly connected components (cep.graphs) are finished each after
    every component it reaches, so a component's set is the union
    of its successors' sets, each computed once. Successors are taken largest
    set first: one already in the union brings nothing new (its set is part
    of the set that brought it), which keeps an already transitive relation
    linear."""
    out: dict[str, frozenset] = {}

    def finish(component):
        if len(component) == 1:
            node = component[0]
            successors = edges.get(node, ())
            cyclic = node in successors
            if cyclic:
                successors = set(successors) - {node}
        else:
            members = set(component)
            cyclic = True
            successors = {nxt for node in component for nxt in edges.get(node, ()) if nxt not in members}
        found: set = set()
        if len(successors) > 1:
            successors = sorted(successors, key=lambda n: len(out.get(n, ())), reverse=True)
        for nxt in successors:
            if nxt not in found:
                found.add(nxt)
                found.update(out.get(nxt, ()))
        if cyclic:
            found.update(component)
        if found:
            shared = frozenset(found)
            for node in component:
                out[node] = shared

    for component in components(edges, edges):
        finish(component)
    return out


_EMPTY = frozenset()


def _strict(ups: dict) -> dict:
    """`reach` without each node itself (which a node on a cycle reaches)."""
    return {node: found - {node} if node in found else found for node, found in ups.items()}


def _reversed(edges: dict) -> dict:
    back = defaultdict(set)
    for node, targets in edges.items():
        for target in targets:
            back[target].add(node)
    return back


class Schema:
    """The class and property hierarchies of a background graph's RDFS
    closure, and the classes domains and ranges give: what the engine asks
    about a triple it has not seen.

    Every answer is strict and transitive: a class is never among its own
    superclasses or subclasses, even on a subClassOf cycle, whose classes
    are equivalent (each is in the others' sets). The closed graph is kept
    as `graph`."""

    def __init__(self, triples):
        graph, rules = _saturate(triples)
        self.graph = frozenset(graph)
        # the last round's closures are the closed graph's relations
        self._superclasses = _strict(rules.superclasses)
        self._superproperties = _strict(rules.superproperties)
        self._edges = {SUBCLASSOF: rules.subclass_edges, SUBPROPERTYOF: rules.subproperty_edges}
        self._below: dict = {}  # subclasses and subproperties, built when first asked for
        self._direct = {DOMAIN: rules.domains, RANGE: rules.ranges}
        self._entailed = {DOMAIN: {}, RANGE: {}}

    def classes(self) -> frozenset:
        """The classes that have a superclass."""
        return frozenset(c for c, up in self._superclasses.items() if up)

    def properties(self) -> frozenset:
        """The properties that have a superproperty, a domain or a range."""
        found = {p for p, up in self._superproperties.items() if up}
        return frozenset(found.union(*(d.keys() for d in self._direct.values())))

    def superclasses(self, c: str) -> frozenset:
        return self._superclasses.get(c, _EMPTY)

    def subclasses(self, c: str) -> frozenset:
        return self._downward(SUBCLASSOF).get(c, _EMPTY)

    def superproperties(self, p: str) -> frozenset:
        return self._superproperties.get(p, _EMPTY)

    def subproperties(self, p: str) -> frozenset:
        return self._downward(SUBPROPERTYOF).get(p, _EMPTY)

    def _downward(self, predicate: str) -> dict:
        if predicate not in self._below:
            self._below[predicate] = _strict(reach(_reversed(self._edges[predicate])))
        return self._below[predicate]

    def domains(self, p: str) -> frozenset:
        """Every class D such that `x p y` entails `x rdf:type D`: the
        domains of p and of its superproperties, their superclasses, and,
        since x then has a type, the classes rdf:type's own domains give.

        When rdf:type is among p's superproperties, `x p y` also entails
        `x rdf:type y`, which depends on y and is not in this set. A triple
        that itself extends the schema (p rdfs:subClassOf, rdfs:domain, ...
        or a subproperty of one) entails more than this; such triples belong
        in the background, not in a stream."""
        return self._types(DOMAIN, p)

    def ranges(self, p: str) -> frozenset:
        """Every class R such that `x p y` entails `y rdf:type R`, for a y
        that is not a literal; built as domains() is."""
        return self._types(RANGE, p)

    def properties_with_domain(self, c: str) -> frozenset:
        """The properties p whose triples `x p y` entail `x rdf:type c`."""
        return frozenset(p for p in self.properties() if c in self.domains(p))

    def properties_with_range(self, c: str) -> frozenset:
        """The properties p whose triples `x p y` entail `y rdf:type c`
        (y not a literal)."""
        return frozenset(p for p in self.properties() if c in self.ranges(p))

    def _types(self, kind: str, p: str) -> frozenset:
        memo = self._entailed[kind]
        found = memo.get(p)
        if found is None:
            classes = self._declared(kind, p)
            if classes:
                classes |= self._declared(DOMAIN, TYPE)
            found = memo[p] = frozenset(classes)
        return found

    def _declared(self, kind: str, p: str) -> set:
        """The `kind` (domain or range) classes of p and its superproperties,
        with their superclasses."""
        classes = set()
        for q in (p, *self.superproperties(p)):
            for c in self._direct[kind].get(q, ()):
                classes.add(c)
                classes |= self.superclasses(c)
        return classes
