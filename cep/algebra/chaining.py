"""Rule chaining: which queries read the triples that CONSTRUCT rules derive,
and in which order an instant's derivations are made (the paper's Q-closure,
section 4.2).

The triples of a CONSTRUCT answer occur in the stream with the answer's
interval, and every query of the run reads them as it reads events (the
engine feeds them back at the instant they end at; docs/language.md,
"Rule chaining"). From the queries alone this module finds:

- the edges producer -> consumer: a template triple of the producer can
  match one of the consumer's triple patterns (with background knowledge,
  entail a triple that matches one);
- which edges act *at the same instant*: the pattern can end where the
  consumer's solution ends. A pattern in the left operand of a SEQ (or the
  optional left operand of an OPTIONALSEQ) ends strictly before the
  solution does, so a triple derived now reaches that consumer's answers
  only at a later instant;
- which of those go through the optional part of an OPTIONAL or
  EQUALSOPTIONAL: there the consumer's answer depends on the *absence* of
  the triple, so the consumer must be evaluated after its producer is done
  (negation);
- the strata: the order in which an instant's optional checks run. A query
  is in a stratum no lower than those of the queries it reads at the same
  instant, and higher than those it reads through an optional part. A rule
  set where a query reads, through an optional part, triples that depend on
  its own answers at the same instant has no such order (it is not
  stratified) and is refused: its answers would depend on the order of
  evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass

from cep import terms
from cep.algebra import ops
from cep.errors import QueryError
from cep.graphs import components


@dataclass(frozen=True)
class Edge:
    producer: str  # query names
    consumer: str
    predicates: tuple  # the producer's template predicates the consumer reads (N-Triples, or "?v")
    same_instant: bool  # read where the consumer's solution ends
    negative: bool  # ... and through an optional part (OPTIONAL, EQUALSOPTIONAL)


@dataclass(frozen=True)
class Chaining:
    edges: tuple  # Edge
    strata: tuple  # (query name, stratum) in query order

    @property
    def producers(self) -> frozenset:
        """The CONSTRUCT queries whose triples some query reads."""
        return frozenset(e.producer for e in self.edges)

    def order(self) -> list:
        """The query names with every producer before the queries that read
        its triples (a cycle's queries together, in query order)."""
        return [n for c in _components([n for n, _ in self.strata], self.edges) for n in c]

    def stratum(self, name: str) -> int:
        return dict(self.strata)[name]

    def cycles(self) -> list[tuple[tuple, bool]]:
        """The cycles of the dependency graph, as (queries in the cycle,
        whether it closes at one instant), one per strongly connected
        component with a cycle."""
        out = []
        for component in _components([n for n, _ in self.strata], self.edges):
            inner = [e for e in self.edges if e.producer in component and e.consumer in component]
            if len(component) > 1 or inner:
                now = [e for e in inner if e.same_instant]
                out.append((tuple(component), any(len(c) > 1 or _loops(c, now) for c in _components(component, now))))
        return out

    def explain(self) -> str:
        """What `cep explain` says of chaining: the dependency graph and its
        cycles."""
        if not self.edges:
            return "no query reads the triples of a CONSTRUCT rule"
        lines = []
        for e in self.edges:
            when = "at the instant they are derived" if e.same_instant else "at later instants"
            how = ", in an optional part" if e.negative else ""
            lines.append(f"{e.producer} -> {e.consumer}  ({' '.join(e.predicates)}; read {when}{how})")
        for names, now in self.cycles():
            loop = " -> ".join(names + (names[0],))
            if now:
                lines.append(f"warning: cycle {loop} within one instant: it ends when a round derives no "
                             "new triple (a triple derived again with the same interval is not derived "
                             "again); a cycle that computes a new value each round stops the run with an "
                             "error after the limit of rounds")
            else:
                lines.append(f"warning: cycle {loop} across instants: each derivation ends after what it "
                             "reads, so it goes on only while events come")
        if any(s for _, s in self.strata):
            lines.append("strata (the order of each instant's optional checks): " + ", ".join(
                f"{n} {s}" for n, s in self.strata))
        return "\n".join(lines)


def analyse(queries, schema=None) -> Chaining:
    """The chaining of a rule set; `schema` (cep.background.rdfs.Schema):
    a derived triple also reads as what it entails. Raises a QueryError
    when the rule set is not stratified."""
    queries = list(queries)
    edges = []
    for producer in queries:
        if not producer.feeds_back:
            continue
        for consumer in queries:
            # an empty group's content is what the report policies that read it read (a query's
            # own triples are fed back after its evaluation: not into it)
            windowed = consumer.window is not None and consumer.window.policy in ("nonempty", "change") \
                and consumer is not producer
            found = {}  # (same_instant, negative) -> predicates
            for triple, last, negative in _positions(consumer.pattern, windowed=windowed):
                for t in producer.template:
                    if reads(t, triple, schema):
                        p = str(t.p) if isinstance(t.p, ops.Var) else t.p
                        found.setdefault((last, last and negative), set()).add(p)
            if found:
                now = any(last for last, _ in found)
                negative = any(neg for _, neg in found)
                predicates = tuple(sorted(set().union(*found.values())))
                edges.append(Edge(producer.name, consumer.name, predicates, now, negative))
    return Chaining(tuple(edges), _strata(queries, edges))


def _positions(op, last=True, negative=False, windowed=False):
    """(triple pattern, whether it can end where the pattern's solution
    ends, whether it is then in an optional part) for each triple pattern.
    `windowed`: the pattern is read over a window's content by a report
    policy, where an empty group reads every event of its streams (the
    content the policy reads: docs/language.md, "The empty group")."""
    if isinstance(op, ops.Triple):
        yield op, last, negative
    elif isinstance(op, ops.BGP):
        for t in op.triples:
            yield t, last, negative
    elif isinstance(op, (ops.Filter,) + ops.UNARY):
        yield from _positions(op.pattern, last, negative, windowed)
    elif isinstance(op, ops.Unit) and windowed:
        yield ops.Triple(ops.Var("_:s"), ops.Var("_:p"), ops.Var("_:o"), stream=op.stream), last, negative
    elif isinstance(op, (ops.Values, ops.Service, ops.Unit)):  # no triple pattern of the stream
        return
    else:  # a binary operator: its operands' places (Operator.ends_last); the optional or negated is negative
        spec = op.spec
        for child, ends_last, must in zip((op.left, op.right), spec.ends_last, spec.mandatory):
            yield from _positions(child, last and ends_last, negative or not (must or spec.alternative), windowed)


def _may_equal(template_slot, pattern_slot) -> bool:
    """Whether a template's term can be a term the pattern matches (a
    template blank node is a new node: only a variable matches it)."""
    if isinstance(template_slot, ops.Var) or isinstance(pattern_slot, ops.Var):
        return True
    if template_slot.startswith("_:"):
        return False
    return template_slot == pattern_slot


def reads(t: ops.Triple, pattern: ops.Triple, schema) -> bool:
    """Whether a triple the template t derives can match `pattern` (with
    a schema, also by what it entails: conservatively, any subproperty,
    any property with a domain or range for a type pattern)."""
    if isinstance(pattern.p, ops.Path):  # the background graph, or without one each instant's, derived triples too
        return schema is None
    if all(_may_equal(a, b) for a, b in ((t.s, pattern.s), (t.p, pattern.p), (t.o, pattern.o))):
        return True
    if schema is None or isinstance(t.p, ops.Var) or isinstance(pattern.p, ops.Var):
        return False
    if pattern.p != terms.RDF_TYPE:
        return t.p in schema.subproperties(pattern.p) and _may_equal(t.s, pattern.s) and _may_equal(t.o, pattern.o)
    if schema.domains(t.p) or schema.ranges(t.p):
        return True
    return (t.p == terms.RDF_TYPE and isinstance(pattern.o, str) and isinstance(t.o, str)
            and t.o in schema.subclasses(pattern.o))


def _strata(queries, edges) -> tuple:
    names = [q.name for q in queries]
    now = [e for e in edges if e.same_instant]
    component_of = {}
    components = _components(names, now)  # in topological order: producers first
    for i, component in enumerate(components):
        for name in component:
            component_of[name] = i
    by_name = {q.name: q for q in queries}
    for e in now:
        if e.negative and component_of[e.producer] == component_of[e.consumer]:
            cycle = components[component_of[e.consumer]]
            raise QueryError(
                f"{e.consumer} reads in an optional part the triples that {e.producer} derives at the "
                f"same instant, and these depend on {e.consumer}'s own answers at that instant "
                f"(cycle {' -> '.join(cycle + [cycle[0]])}): the answers would depend on the order of "
                f"evaluation (the rule set is not stratified). Let the optional part end before the "
                f"derived triple (put it in the left operand of a SEQ), or break the cycle",
                by_name[e.consumer].pos)
    level = [0] * len(components)
    for i, component in enumerate(components):
        for e in now:
            if component_of[e.consumer] == i and component_of[e.producer] != i:
                level[i] = max(level[i], level[component_of[e.producer]] + (1 if e.negative else 0))
    return tuple((name, level[component_of[name]]) for name in names)


def _loops(component, edges) -> bool:
    return any(e.producer == e.consumer for e in edges if e.producer in component)


def _components(names, edges) -> list[list]:
    """Strongly connected components, producers before consumers."""
    succ = {n: [] for n in names}
    for e in edges:
        if e.producer in succ and e.consumer in succ:
            succ[e.producer].append(e.consumer)
    found = [sorted(c, key=names.index) for c in components(names, succ)]
    return found[::-1]  # components() gives consumers first
