"""The leaf rules: an event (S, P, O) matches a triple pattern, directly
or by what it entails with the background's RDFS schema, and is a solution
of the plan's leaf; with FROM STREAM, only an event of the leaf's streams.
The empty group's leaf (ops.Unit: one solution per instant), and the
property paths' (the instant's events kept, walked at its end, with the
paths as the terms prolog/cep_paths.pl interprets)."""

from __future__ import annotations

from cep import prolog as pl
from cep import terms
from cep.algebra import ops
from cep.binarize import Leaf, Plan
from cep.compile.clauses import LIVE, PATHS, VALUES, A, F, Vars, resource, tuple_term
from cep.compile.expr import q
from cep.compile.expr import Scope
from cep.errors import QueryError
from cep.runtime.batch import STREAM_EVENT  # an event of a stream: its predicate wrapped, '$in'(Stream, P)


def _leaf_rule(leaf: Leaf, slots=None, body=()) -> list:
    """leaf(P, S, O, Ts, Te, A): the event (S, P, O) matches the leaf's
    triple pattern (or `slots`, what the event must look like for it to
    entail a triple that matches), then `body`. A leaf of a query that
    reads a repeated event's copies (cep.algebra.copies) binds its hidden
    copy variable to 0, and has a second rule cleaf(P, S, O, Ts, Te, A, K)
    for the K-th copy of an event (cep_event/6 takes '$copy'(K, P) apart)."""
    vs = Vars(Scope())  # no expressions
    pattern = [vs.of(x) if isinstance(x, ops.Var) else terms.to_prolog(x)
               for x in (leaf.triple.s, leaf.triple.p, leaf.triple.o)]
    ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
    event = pattern if slots is None else slots(vs, pattern)
    head = pl.Struct("uleaf" if leaf.updates else "leaf", event[1], event[0], event[2], ts, te, ans)
    goals = body(vs, pattern) if callable(body) else body
    if leaf.triple.end is not None:  # read by timestamp() (cep.algebra.timestamps)
        goals = (*goals, pl.Struct("=", vs.of(leaf.triple.end), te))
    for stream, end in leaf.triple.stream_ends:  # timestamp(?v, <stream>): StreamOf is stream_rules'
        goals = (*goals, q(VALUES, "cep_stream_end", pl.Var("StreamOf"), terms.to_prolog(stream), te, vs.of(end)))
    solution = pl.Struct(f"n{leaf.id}", tuple_term(vs, leaf.vars), ts, te, ans)
    if leaf.triple.copy is None:
        rule = pl.Clause(head, (*goals, solution))
        if not leaf.later_copies:
            return [rule]
        return [rule, pl.Clause(pl.Struct(COPY_LEAF, *head.args, pl.Var("_")), (*goals, solution))]
    copy, k = vs.of(leaf.triple.copy), pl.Var("K")
    return [pl.Clause(head, (*goals, pl.Struct("=", copy, 0), solution)),
            pl.Clause(pl.Struct(COPY_LEAF, *head.args, k), (*goals, pl.Struct("=", copy, k), solution))]


COPY_LEAF = "cleaf"  # cleaf(P, S, O, Ts, Te, A, K): the K-th copy of a repeated event (K >= 1)


def leaf_rules(leaf: Leaf, background) -> list:
    """The leaf rule, and with background knowledge those of the events
    that entail a matching triple by the RDFS rules (rdfs2, 3, 7, 9 over
    the closed schema): an event `x p y` matches `?x q ?y` when p is a
    subproperty of q, `?x rdf:type D` when p has a domain under D (or a
    range, for y), and an event `x rdf:type C` matches it when C is a
    subclass of D. The schema is compiled in, restricted to what the
    patterns name: an event costs one indexed lookup more, not a walk up
    the hierarchy. (The Schema's sets are strict: a class is not among
    its own sub- or superclasses.)"""
    if isinstance(leaf.triple, ops.Unit):
        return unit_rules(leaf)
    if isinstance(leaf.triple.p, ops.Path):  # each instant's graph (and the background's: steps._timeless)
        return path_rules(leaf, background)
    rules = _leaf_rule(leaf)
    if background is None:
        return rules
    schema = background.schema
    t = leaf.triple
    if isinstance(t.p, ops.Var):
        # any predicate: every entailed triple, from tables of the whole schema
        table = f"$entails{leaf.id}"
        rules += _leaf_rule(leaf, lambda vs, pat: [pl.Var("S0"), pl.Var("P0"), pl.Var("O0")], lambda vs, pat: [
            pl.Struct(table, pl.Var("S0"), pl.Var("P0"), pl.Var("O0"), *pat)])
        return rules + entailment_table(table, schema)
    if t.p != terms.RDF_TYPE:
        for sub in sorted(schema.subproperties(t.p)):
            rules += _leaf_rule(leaf, lambda vs, pat, sub=sub: [pat[0], terms.to_prolog(sub), pat[2]])
        return rules
    # rdf:type: by subclass, by domain, by range
    cls = pl.Var("C0")
    if isinstance(t.o, ops.Var):
        sup = f"$superclass{leaf.id}"
        rules += _leaf_rule(leaf, lambda vs, pat: [pat[0], pat[1], cls],
                            lambda vs, pat: [pl.Struct(sup, cls, pat[2])])
        rules += _table(sup, 2, [(c, d) for c in sorted(schema.classes()) for d in sorted(schema.superclasses(c))])
        typed = [(p, d) for p in sorted(schema.properties()) for d in sorted(schema.domains(p))]
        ranged = [(p, r) for p in sorted(schema.properties()) for r in sorted(schema.ranges(p))]
    else:
        subclasses = sorted(schema.subclasses(t.o))
        if subclasses:  # one rule: D and its subclasses in one indexed table
            sub = f"$subclass{leaf.id}"
            rules = _leaf_rule(leaf, lambda vs, pat: [pat[0], pat[1], cls], [pl.Struct(sub, cls)])
            rules += _table(sub, 1, [(c,) for c in [t.o, *subclasses]])
        typed = [(p, t.o) for p in sorted(schema.properties_with_domain(t.o))]
        ranged = [(p, t.o) for p in sorted(schema.properties_with_range(t.o))]
    for p, d in typed:
        rules += _leaf_rule(leaf, lambda vs, pat, p=p: [pat[0], terms.to_prolog(p), pl.Var("_")],
                            lambda vs, pat, d=d: [pl.Struct("=", pat[2], terms.to_prolog(d))])
    for p, r in ranged:  # a literal is of no class (rdfs3 applies to resources)
        rules += _leaf_rule(leaf, lambda vs, pat, p=p: [pl.Var("_"), terms.to_prolog(p), pat[0]],
                            lambda vs, pat, r=r: [resource(pat[0]), pl.Struct("=", pat[2], terms.to_prolog(r))])
    return rules


def unit_store(leaf: Leaf) -> str:
    """The store of the instant at which the empty group's leaf has given
    its solution (one fact, dropped at the instant's end: '$end_group')."""
    return f"$unit{leaf.id}"


def unit_rules(leaf: Leaf) -> list:
    """The empty group (ops.Unit): the first event of an instant (of the
    leaf's streams, stream_rules) makes its one solution, the empty
    binding over [Te, Te]; the instant's other events make none."""
    p, te, ans = pl.Var("P"), pl.Var("Te"), pl.Var("A")
    seen = pl.Struct(unit_store(leaf), te)
    head = pl.Struct("uleaf" if leaf.updates else "leaf", p, pl.Var("_"), pl.Var("_"), pl.Var("_"), te, ans)
    return [pl.Clause(head, (pl.Struct("\\+", seen), pl.Struct("assertz", seen),
                             pl.Struct(f"n{leaf.id}", tuple_term(None, ()), te, te, ans)))]


PATH_EVENTS = "$pathev"  # '$pathev'(Node, S, P, O, Start, End): a triple of the instant a path reads


def path_rules(leaf: Leaf, background) -> list:
    """A property path walks the graph of each instant, with background
    knowledge its union with the background graph (docs/language.md,
    "Property paths"): the triples of the instant's events (of the leaf's
    streams), with background knowledge those they entail too, whose
    predicate is one of the path's IRIs, or all of them for a path that
    ranges over every node (Path.reads_every_event), are kept in
    '$pathev'/6 until the instant's end, when the path's check
    (path_check) walks them. The rules are those of a leaf `?s ?p ?o`
    (leaf_rules) whose solutions are kept."""
    t = leaf.triple
    every = Leaf(f"{leaf.id}_graph", ops.Triple(*(ops.Var(n) for n in "spo")), tuple(ops.Var(n) for n in "spo"),
                 updates=leaf.updates, streams=leaf.streams, later_copies=leaf.later_copies)
    s, p, o, ts, te = (pl.Var(n) for n in ("S", "P", "O", "Ts", "Te"))
    mine = () if t.p.reads_every_event(t.s, t.o) else (
        pl.Struct("memberchk", p, pl.PList([terms.to_prolog(x) for x in sorted(t.p.iris())])),)
    keep = pl.Clause(pl.Struct(f"n{every.id}", pl.Struct("v", s, p, o), ts, te, pl.Var("_")), (
        *mine, pl.Struct("assertz", pl.Struct(PATH_EVENTS, leaf.id, s, p, o, ts, te)), F))
    return leaf_rules(every, background) + [keep]


def path_check(leaf: Leaf, scope, graph) -> pl.Clause:
    """'$check'(N, Te, A) of a path leaf N (path_rules), at an instant's end:
    the pairs the path connects in the instant's graph, each a solution
    over [the least start of the instant's triples, the instant]. With
    background knowledge (`graph`: its module, or LIVE for the rules' own
    t/3), the pairs it connects in the union of the instant's graph and
    the background graph that the background alone does not connect: those
    the background connects are timeless solutions (steps._timeless)."""
    vs = Vars(scope)
    t = leaf.triple
    s, o = (vs.of(x) if isinstance(x, ops.Var) else terms.to_prolog(x) for x in (t.s, t.o))
    ends = A("vars" if isinstance(t.s, ops.Var) and isinstance(t.o, ops.Var) else "term")
    ts, te, ans, module, first = (pl.Var(n) for n in ("Ts", "Te", "A", "M", "T0"))
    instant = pl.Struct("instant", module, leaf.id)
    if graph is None:
        walk = q(PATHS, "cep_path", instant, path_term(t.p), ends, s, o)
    else:
        walk = q(PATHS, "cep_path_added", module if graph == LIVE else A(graph), instant, path_term(t.p), ends, s, o)
    return pl.Clause(pl.Struct("$check", leaf.id, pl.Var("_"), ans), (
        pl.Struct("once", pl.Struct(PATH_EVENTS, leaf.id, *(pl.Var("_") for _ in range(4)), te)),
        pl.Struct("aggregate_all", pl.Struct("min", first),
                  pl.Struct(PATH_EVENTS, leaf.id, pl.Var("_"), pl.Var("_"), pl.Var("_"), first, pl.Var("_")), ts),
        pl.Struct("context_module", module),
        walk,
        pl.Struct(f"n{leaf.id}", tuple_term(vs, leaf.vars), ts, te, ans)))


def is_streamed(plan: Plan) -> bool:
    """Whether a leaf of the plan takes the events of some streams only
    (GRAPH, FROM STREAM): the events that name a stream then reach the
    rules with their predicate wrapped as '$in'(Stream, P)."""
    return any(isinstance(n, Leaf) and n.streams is not None for n in plan.nodes)


def reads_copies(plan: Plan) -> bool:
    """Whether a leaf of the plan tells apart the copies of a repeated
    event (cep.algebra.copies): the engine then gives the rules the K-th
    copy of an event with its predicate wrapped as '$copy'(K, P)."""
    return any(isinstance(n, Leaf) and isinstance(n.triple, ops.Triple) and n.triple.copy is not None
               for n in plan.nodes)


def count_streams(plan: Plan):
    """The streams whose events the count windows of the plan count
    (a frozenset of IRIs), or None for every event: a rule set counts
    events once for all its count windows, so their queries must read the
    same streams."""
    seen = {}
    for out in plan.outputs:
        q = out.query
        if any(w.count is not None for w in q.windows):
            streams = frozenset(iri for iri, _ in q.streams)
            seen.setdefault(streams, q)
    if len(seen) > 1:
        first, second = list(seen.values())[:2]
        raise QueryError(f"{second.name}: the count windows of one rule set count the events of "
                         f"the same streams, and {first.name} reads other streams: run them in "
                         f"separate rule sets", second.pos)
    return next(iter(seen), None)


def stream_rules(rules: list, streams) -> list:
    """A leaf's rules in a rule set with streams: an event without a
    stream (its predicate as it is) is of every stream and takes them as
    they are; an event of a stream ('$in'(G, P)) takes the copies whose
    first goal checks G (none when the leaf reads every stream). The
    stream is an atom compared with memberchk/2, never called."""
    out = []
    stream = pl.Var("StreamOf")
    for rule in rules:
        head = rule.head
        if not isinstance(head, pl.Struct) or head.functor not in ("leaf", "uleaf", COPY_LEAF):
            out.append(rule)  # the tables of entailment
            continue
        if isinstance(head.args[0], pl.Var):  # any predicate, but not an event of a stream
            guard = pl.Struct("\\+", pl.Struct("=", head.args[0], pl.Struct(STREAM_EVENT, pl.Var("_"), pl.Var("_"))))
            out.append(pl.Clause(head, (guard, *rule.body)))
        else:
            out.append(rule)
        wrapped = pl.Struct(head.functor, pl.Struct(STREAM_EVENT, stream, head.args[0]), *head.args[1:])
        check = () if streams is None else (pl.Struct("memberchk", stream, pl.PList(
            [terms.to_prolog(iri) for iri in sorted(streams)])),)
        out.append(pl.Clause(wrapped, check + tuple(rule.body)))
    return out


def _table(name: str, arity: int, rows) -> list:
    """Facts name(Term, ...) of rows of N-Triples terms; an empty table is
    one clause that fails, so that calling it is no existence error."""
    if not rows:
        return [pl.Clause(pl.Struct(name, *(pl.Var("_") for _ in range(arity))), (F,))]
    return [pl.Clause(pl.Struct(name, *(terms.to_prolog(x) for x in row))) for row in rows]


def entailment_table(name, schema) -> list:
    """name(S0, P0, O0, S, P, O): the event (S0, P0, O0) entails (S, P, O)
    by rdfs2, 3, 7 or 9, other than itself."""
    S, P, O, X = pl.Var("S"), pl.Var("P"), pl.Var("O"), pl.Var("X")
    rdf_type = terms.to_prolog(terms.RDF_TYPE)
    items = []
    for p in sorted(schema.properties()):
        pp = terms.to_prolog(p)
        for q in sorted(schema.superproperties(p)):
            items.append(pl.Clause(pl.Struct(name, S, pp, O, S, terms.to_prolog(q), O)))
        for d in sorted(schema.domains(p)):
            items.append(pl.Clause(pl.Struct(name, S, pp, pl.Var("_"), S, rdf_type, terms.to_prolog(d))))
        for r in sorted(schema.ranges(p)):
            items.append(pl.Clause(pl.Struct(name, pl.Var("_"), pp, X, X, rdf_type, terms.to_prolog(r)),
                                   (resource(X),)))
    for c in sorted(schema.classes()):
        for d in sorted(schema.superclasses(c)):
            items.append(pl.Clause(pl.Struct(name, S, rdf_type, terms.to_prolog(c), S, rdf_type, terms.to_prolog(d))))
    if not items:
        items.append(pl.Clause(pl.Struct(name, *(pl.Var("_") for _ in range(6))), (F,)))
    return items


PATH_FUNCTORS = {"+": "plus", "*": "star", "?": "opt", "^": "inv", "/": "seq", "|": "alt"}


def path_term(path) -> pl.Term:
    """A property path as the term prolog/cep_paths.pl interprets."""
    if isinstance(path, str):
        return pl.Struct("iri", terms.to_prolog(path))
    path = _one_closure(path)
    args = [path_term(a) for a in path.args]
    if path.op in ("/", "|"):
        return pl.Struct(PATH_FUNCTORS[path.op], pl.PList(args))
    return pl.Struct(PATH_FUNCTORS[path.op], *args)


def _one_closure(path):
    """A closure of a closure as one closure, so that nesting them costs
    nothing (each would run its inner closure from every node it
    reaches): closures are sets of pairs, so (p+)+ is p+, (p?)? is p?,
    and any other two, such as (p+)* or (p?)+, make p*."""
    if path.op not in ops.PATH_CLOSURES or isinstance(path.args[0], str):
        return path
    inner = _one_closure(path.args[0])
    if inner.op in ops.PATH_CLOSURES:
        return ops.Path(path.op if path.op == inner.op else "*", inner.args)
    return ops.Path(path.op, (inner,))
