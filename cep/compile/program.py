"""A binarized plan -> the Prolog program of event-driven backward-chaining
rules (paper, section 5, rules (10)-(15)).

For every node N of the plan (cep.binarize) the program has
    n<N>(Values, Start, End, Answer)
                               a solution of N occurred: check N's window
                               and filters, then hand it to N's consumers;
for every binary step N
    s<N>_l/4, s<N>_r/4         what happens when a solution of the left or
                               right operand occurs: goal-insertion rules
                               (store a goal) and checking rules (combine
                               with stored goals);
    g<N>_l/5, g<N>_r/5         the goal stores: g(Key, Generation, Values,
                               Start, End), Key the join key's value or
                               hash, so lookups are indexed; Generation
                               End div (Window/4) for windowed stores (0
                               for others), so expiry drops whole ones;
    g<N>_l_bands/2             the bands of a range-indexed store (Band):
                               its Key is then a hash of the join key and
                               the band of a value stored in the goal;
and for the rule set
    cep_event/6                the entry point: an event triggers the leaf
                               rules (leaf/6, one clause per triple pattern,
                               indexed on the predicate; uleaf/6 those of
                               update rules);
    '$sweep'/2, '$end_group'/0, '$deferred'/1, '$instant_ends'/1,
    '$check'/1, '$project'/5,
    '$distinct'/1, '$clock'/2  used by prolog/cep_runtime.pl.

The rules are nondeterministic and their solutions are the answers: an
event's answers are all the ways cep_event/6 succeeds, each binding Answer
to ans(QueryIndex, Values, Start, End); side effects (storing goals) happen
on the way and every other path fails. The runtime collects a group's
answers with one findall/3, with no database traffic per answer.

Unbound SPARQL variables are unbound Prolog variables, so unifying a stored
goal with a new solution is exactly the paper's "compatible" test and the
merge of the two bindings.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cep import prolog as pl
from cep import terms
from cep.algebra import ops
from cep.background.rdfs import SCHEMA_PREDICATES
from cep.binarize import Leaf, Plan, Step
from cep.compile.expr import ExprCompiler, conj, for_queries, ite, q
from cep.compile.windows import window_items
from cep.errors import QueryError
from cep.limits import MATCH_VARIABLES
from cep.runtime.batch import UPDATES_ONLY  # an event for the update rules alone: its predicate wrapped

RUNTIME = "cep_runtime"
VALUES = "cep_values"
PATHS = "cep_paths"
BANDS = "_bands"  # suffix of a store's band list (see Band)
A, T, F = pl.Atom, pl.Atom("true"), pl.Atom("fail")
DEFAULT_SWEEP_MS = 1000


@dataclass(frozen=True)
class QueryLayout:
    """How a query's answer lines map back to names: the fields, in order."""

    index: int
    name: str
    form: str
    fields: tuple  # variable names of the fields


class _Vars:
    """Prolog variable names for one clause."""

    def __init__(self):
        self.names = {}
        self.count = 0

    def of(self, var: ops.Var) -> pl.Var:
        if var not in self.names:
            self.names[var] = pl.Var(f"X{len(self.names)}")
        return self.names[var]

    def fresh(self) -> pl.Var:
        self.count += 1
        return pl.Var(f"_G{self.count}")


def tuple_term(vs: _Vars, variables) -> pl.Term:
    if not variables:
        return A("v")
    return pl.Struct("v", *[vs.of(v) for v in variables])


def key_goal(vs: _Vars, key, h: pl.Var):
    """The index key of a store: the join variable's value where it is an
    atom (an IRI: indexed as it is), else a hash of the join values. Keys
    only pick candidates; unifying the stored values decides the match."""
    if not key:
        return pl.Struct("=", h, 0)
    if len(key) == 1:
        k = vs.of(key[0])
        return ite(pl.Struct("atom", k), pl.Struct("=", h, k), pl.Struct("term_hash", k, h))
    return pl.Struct("term_hash", pl.Struct("k", *[vs.of(v) for v in key]), h)


def ok_goal(node, vs: _Vars, ts: pl.Var, te: pl.Var, filters=None):
    """Window and filters of a node (or the filters given), on the solution
    (vars in vs, ts, te)."""
    goals = []
    if node.window is not None:
        goals.append(pl.Struct("=<", pl.Struct("-", te, ts), node.window))
    ec = ExprCompiler(dict(vs.names), ts, te, vs.fresh)
    for f in node.filters if filters is None else filters:
        goals.append(ec.filter_goal(f))
    return goals


# ------------------------------------------------------------ hoisting

TIME_FUNCTIONS = {"getDURATION", "getSTARTTIME", "getENDTIME"}


@dataclass(frozen=True)
class Hoist:
    """Parts of a SEQ step's filters that only depend on its left operand
    (`?price1 * 0.7` in `?price2 < ?price1 * 0.7`): computed once when a
    left solution is stored as a goal, not again for every right solution
    that meets it. `computed` pairs a stand-in variable with the
    subexpression it stands for; `checks` are the step's filters that use
    them (with the stand-ins), checked in the step's checking rule;
    `rest` are the other filters, checked by the node as usual."""

    computed: tuple
    checks: tuple
    rest: tuple
    band: "Band | None" = None


@dataclass(frozen=True)
class Band:
    """A range index on one value stored in a SEQ goal (a hoisted value or
    a left variable): a filter that compares a variable of the right
    operand with it (`?price2 < ?price1 * 0.7`, `?b > ?a`). The goals are
    stored by join key and band of the hoisted value (cep_values:cep_band),
    so a right solution visits only the goals whose band can pass the check
    (those `above` its own value's band, or `below`), not every pending goal
    of its key: the cost of a band join follows its matches, not the size
    of its window (prolog/cep_runtime.pl, cep_band_admits/3)."""

    hoisted: ops.Var
    probe: ops.Var
    direction: str  # "above" | "below"


_BAND_DIRECTION = {  # (operator, the hoisted value is its right argument) -> the side it must lie on
    ("<", True): "above", ("<=", True): "above", (">", True): "below", (">=", True): "below",
    ("<", False): "below", ("<=", False): "below", (">", False): "above", (">=", False): "above",
}


def _band(checks, hoisted: set, probes: set) -> Band | None:
    for c in checks:
        if not (isinstance(c, ops.Call) and len(c.args) == 2):
            continue
        a, b = c.args
        for stored, probe, right in ((b, a, True), (a, b, False)):
            if stored in hoisted and probe in probes and (c.name, right) in _BAND_DIRECTION:
                return Band(stored, probe, _BAND_DIRECTION[(c.name, right)])
    return None


def _hoist(plan, step) -> Hoist | None:
    if step.op != "seq" or step.policy != "unrestricted" or not step.filters:
        return None
    left, right = plan.node(step.left), plan.node(step.right)
    # values the merge cannot change: left-only variables and the join key
    fixed = (set(left.vars) - set(right.vars)) | set(step.key)
    computed = []

    def rewrite(e):
        if not isinstance(e, ops.Call):
            return e
        used = ops.expr_vars(e)
        if used and used <= fixed and not ops.expr_uses(e, TIME_FUNCTIONS):
            for var, sub in computed:
                if sub == e:
                    return var
            var = ops.Var(f".hoisted{len(computed)}")  # a name no query can write (ops.Var)
            computed.append((var, e))
            return var
        return ops.Call(e.name, *[rewrite(a) for a in e.args])

    checks, rest = [], []
    for f in step.filters:
        g = rewrite(f) if not ops.expr_vars(f) <= fixed else f
        (checks if g != f else rest).append(g)
    stored = {var for var, _ in computed} | (set(left.vars) - set(right.vars))
    band = _band(checks + rest, stored, set(right.vars) - fixed)
    if not computed and band is None:
        return None
    return Hoist(tuple(computed), tuple(checks), tuple(rest), band)


def compile_plan(plan: Plan, background=None, chaining=None) -> tuple[list, list]:
    """(program items, query layouts) for a plan; `background`
    (cep.background.Background) adds RDFS entailment to the leaf rules and
    background triples to the joins of basic graph patterns; `chaining`
    (cep.algebra.chaining.Chaining): the CONSTRUCT rules whose triples are
    fed back (_derivations) and the order of the optional checks."""
    paths = [n.triple for n in plan.nodes if isinstance(n, Leaf) and isinstance(n.triple.p, ops.Path)]
    if paths and background is None:
        raise QueryError(f"the property path {paths[0].p} is evaluated over the background graph, "
                         f"and none is given (load one with --ontology)", paths[0].pos)
    updates = [out.query for out in plan.outputs if out.query.form == "update"]
    if updates and background is None:
        raise QueryError(f"the update {updates[0].name} changes the background graph, and none is "
                         f"given (load one with --ontology, an empty file will do)", updates[0].pos)
    # the graph the rules read: the background's facts, or with updates the
    # live view of them in the rules' own module (_live_view)
    graph = None if background is None else LIVE if updates else background.module
    items = [
        pl.Directive(pl.Struct("discontiguous", pl.indicator("leaf", 6))),
        pl.Directive(pl.Struct("style_check", pl.Struct("-", A("singleton")))),
    ]
    dynamic = []
    sweeps, group_scoped, deferred, checks = [], [], [], []
    root_of = {}
    for out_index, out in enumerate(plan.outputs):
        root_of.setdefault(out.root, []).append(out_index)
    producers = chaining.producers if chaining is not None else frozenset()
    deriving = {i for i, out in enumerate(plan.outputs) if out.query.name in producers}
    absences = [n.id for n in plan.nodes if isinstance(n, Step) and n.op == "absence"]
    if absences and (deriving or updates):
        query = next(out.query for out in plan.outputs if _reaches(plan, out.root, absences[0]))
        what = "rule chaining (queries that read CONSTRUCT rules' triples)" if deriving else \
            "DELETE/INSERT updates"
        raise QueryError(f"{query.name}: NOTSEQ in a rule set with {what} is not supported yet: "
                         f"run them in separate rule sets", query.pos)

    # entry point: every event tries every leaf rule; with updates, a copy
    # of an event meant for the update rules alone (its predicate wrapped,
    # cep.runtime.batch.UPDATES_ONLY) tries only theirs (uleaf/6)
    S, P, O, Ts, Te, Ans = (pl.Var(n) for n in ("S", "P", "O", "Ts", "Te", "A"))
    leaf, uleaf = (pl.Struct(name, P, S, O, Ts, Te, Ans) for name in ("leaf", "uleaf"))
    if updates:
        items.append(pl.Directive(pl.Struct("discontiguous", pl.indicator("uleaf", 6))))
        items.append(pl.Clause(pl.Struct("cep_event", S, pl.Struct(UPDATES_ONLY, P), O, Ts, Te, Ans),
                               (A("!"), uleaf)))
        items.append(pl.Clause(pl.Struct("cep_event", S, P, O, Ts, Te, Ans), (pl.Struct(";", leaf, uleaf),)))
    else:
        items.append(pl.Clause(pl.Struct("cep_event", S, P, O, Ts, Te, Ans), (leaf,)))

    streamed = is_streamed(plan)
    count_streams(plan)  # the count windows' streams agree
    part_of = _part_of(plan)
    for node in plan.nodes:
        hoist = None if isinstance(node, Leaf) else _hoist(plan, node)
        with for_queries(part_of[node.id]):
            items += _emitter(plan, node, root_of.get(node.id, []), hoist, deriving, part_of[node.id])
            built = None if isinstance(node, Leaf) else _step(plan, node, hoist, graph)
        if isinstance(node, Leaf):
            rules = _leaf_rules(node, background)
            items += _stream_rules(rules, node.streams) if streamed else rules
        else:
            step_items, stores, scope, check = built
            items += step_items
            dynamic += stores
            if scope == "group":
                group_scoped += stores
            elif scope == "window":
                sweeps += [(s, node.window) for s in stores]
            if check:
                deferred.append(node.id)
                checks.append(check)

    for name, scope in (("leaf", False), ("uleaf", True)):
        if (scope and not updates) or any(isinstance(n, Leaf) and n.updates == scope
                                          and not isinstance(n.triple.p, ops.Path) for n in plan.nodes):
            continue
        items.append(pl.Clause(pl.Struct(name, *(pl.Var("_") for _ in range(6))), (F,)))
    for name in dynamic:
        items.insert(0, pl.Directive(pl.Struct("dynamic", _indicator(name))))
    items.insert(0, pl.Directive(pl.Struct("dynamic", pl.indicator("$clock", 2))))

    # periodic pruning of goals past their window (system-generated events)
    module, now = pl.Var("M"), pl.Var("Now")
    sweep_goals = [_sweep_goal(module, store.split("/")[0], window, now) for store, window in sweeps]
    items.append(pl.Clause(pl.Struct("$sweep", module, now), tuple(sweep_goals) or (T,)))
    if sweeps:
        items.insert(0, pl.Directive(pl.Struct("dynamic", pl.indicator("$expired", 2))))
    period = min((generation_ms(w) for _, w in sweeps), default=DEFAULT_SWEEP_MS)
    if absences:  # a sweep before every instant: deadlines passed by then fire first (cep_runtime.pl)
        period = 1
    items.append(pl.Clause(pl.Struct("$clock", -(2**62), max(period, 1))))

    if deriving:
        group_scoped.append("$derived/6")
    items.append(pl.Clause(A("$end_group"), tuple(
        pl.Struct("retractall", pl.Struct(s.split("/")[0], *(pl.Var("_") for _ in range(int(s.split("/")[1])))))
        for s in group_scoped) + ((A("$apply_updates"),) if updates else ()) or (T,)))
    strata = _strata(plan, deferred, chaining)
    if absences:
        # no chaining: one stratum, the checks and the firings of an
        # instant's deadlines bottom-up, so each node has its operands' all
        strata = [sorted(deferred + [pl.Struct("fire", n) for n in absences],
                         key=lambda x: x if isinstance(x, int) else x.args[0])]
    items.append(pl.Clause(pl.Struct("$deferred", pl.PList([pl.PList(s) for s in strata]))))
    items.append(pl.Clause(pl.Struct("$absence_nodes", pl.PList(list(absences)))))
    for name, arity in (("$absence_fire", 3), ("$absence_next", 2)):
        if absences:  # a clause per NOTSEQ node, each among its node's rules
            items.insert(0, pl.Directive(pl.Struct("discontiguous", pl.indicator(name, arity))))
        else:
            items.append(pl.Clause(pl.Struct(name, *(pl.Var("_") for _ in range(arity))), (F,)))
    items.append(pl.Clause(pl.Struct("$chaining", A("true" if deriving else "false"))))
    # whether the runtime must stop at the end of each instant at all
    ends = deferred or group_scoped or updates or absences
    items.append(pl.Clause(pl.Struct("$instant_ends", A("true" if ends else "false"))))
    if deriving:
        items += _derivations(plan, deriving, deferred)
    if updates:
        items += _live_view(background)
        items += [_update_clause(plan, i, out) for i, out in enumerate(plan.outputs) if out.query.form == "update"]
    items += checks
    if not checks:
        items.append(pl.Clause(pl.Struct("$check", pl.Var("_"), pl.Var("_")), (F,)))

    projections = []
    for i, out in enumerate(plan.outputs):
        with for_queries((i,)):
            projections.append(_projection(plan, i, out))
    layouts = [layout for _, layout in projections]
    width = answer_width(layouts)
    # a CONSTRUCT rule's result is a set of triple occurrences: equal
    # template values (with their blank nodes) over one interval are one answer
    distinct = [i for i, o in enumerate(plan.outputs) if o.query.distinct or o.query.form == "construct"]
    for project, _ in projections:
        items.append(_padded(project, width))
    for item in window_items(plan, chaining, _Vars):
        items.append(_padded(item, width) if isinstance(item, pl.Clause) and item.head.functor == "$wrow" else item)
    items += [pl.Clause(pl.Struct("$distinct", i)) for i in distinct]
    if not distinct:
        items.append(pl.Directive(pl.Struct("dynamic", pl.indicator("$distinct", 1))))
    return items, layouts


def _part_of(plan) -> dict:
    """Node id -> the indexes of the queries (outputs) it is part of."""
    part_of = {node.id: [] for node in plan.nodes}
    for index, out in enumerate(plan.outputs):
        todo, seen = [out.root], set()
        while todo:
            node = plan.node(todo.pop())
            if node.id in seen:
                continue
            seen.add(node.id)
            part_of[node.id].append(index)
            if not isinstance(node, Leaf):
                todo += [node.left, node.right]
    return part_of


def _reaches(plan, root, node_id) -> bool:
    todo = [root]
    while todo:
        node = plan.node(todo.pop())
        if node.id == node_id:
            return True
        if not isinstance(node, Leaf):
            todo += [node.left, node.right]
    return False


def _strata(plan, deferred, chaining) -> list:
    """The deferred checks (node ids) grouped by stratum, lowest first: a
    node's stratum is the lowest of the queries it is part of
    (cep.algebra.chaining)."""
    if not deferred:
        return []
    if chaining is None:
        return [deferred]
    level = {}
    for out in plan.outputs:
        stratum = chaining.stratum(out.query.name)
        todo = [out.root]
        while todo:
            node = plan.node(todo.pop())
            level[node.id] = min(level.get(node.id, stratum), stratum)
            if not isinstance(node, Leaf):
                todo += [node.left, node.right]
    strata = sorted({level[n] for n in deferred})
    return [[n for n in deferred if level[n] == s] for s in strata]


def _derivations(plan, deriving, deferred) -> list:
    """Rule chaining (the paper's Q-closure): an answer of a CONSTRUCT rule
    whose triples a query reads queues them ('$derive'), each once per
    instant with its interval ('$derived'); the runtime feeds the queue
    back as events before the instant's optional checks and after each
    stratum of them ('$waiting': a check has mandatory solutions left)."""
    Q, V, Ts, Te, Fs, Tr, S, P, O, M = (pl.Var(n) for n in ("Q", "V", "Ts", "Te", "Fs", "Tr", "S", "P", "O", "M"))
    items = [pl.Directive(pl.Struct("dynamic", pl.indicator(n, a))) for n, a in (("$derived", 6), ("$queued", 5))]
    # queued once per instant, counted against the limits (cep_runtime:cep_queue/7)
    items.append(pl.Clause(pl.Struct("$derive", Q, V, Ts, Te), (
        pl.Struct("$project", Q, V, Ts, Te, Fs), pl.Struct("$template", Q, Fs, Tr), pl.Struct("context_module", M),
        pl.Struct("forall", pl.Struct("member", pl.Struct("t", S, P, O), Tr),
                  q(RUNTIME, "cep_queue", M, Q, S, P, O, Ts, Te)))))
    items.append(pl.Clause(pl.Struct("$derivable", pl.Struct("t", S, P, O)), (
        pl.Struct("ground", pl.Struct("t", S, P, O)), pl.Struct("atom", P), _resource(S))))
    # the rules' names, for errors (cep_runtime:cep_queue/7)
    items += [pl.Clause(pl.Struct("$rule", i, pl.Str(plan.outputs[i].query.name))) for i in sorted(deriving)]
    for index in sorted(deriving):
        query = plan.outputs[index].query
        fields = {name: pl.Var(f"F{i}") for i, name in enumerate(ops.template_fields(query.template))}
        slot = lambda x: fields[x.name] if isinstance(x, ops.Var) else fields[x] if x.startswith("_:") else terms.to_prolog(x)
        template = pl.PList([pl.Struct("t", slot(t.s), slot(t.p), slot(t.o)) for t in query.template])
        head_fields = pl.PList(list(fields.values()), pl.Var("_")) if fields else pl.Var("_")
        items.append(pl.Clause(pl.Struct("$template", index, head_fields, Tr),
                               (pl.Struct("include", A("$derivable"), template, Tr),)))
    for n in deferred:
        items.append(pl.Clause(pl.Struct("$waiting", n), (pl.Struct(f"d{n}", *(pl.Var("_") for _ in range(3))),)))
    if not deferred:
        items.append(pl.Clause(pl.Struct("$waiting", pl.Var("_")), (F,)))
    return items


def _sweep_goal(module, store, window, now):
    if store.endswith(BANDS):  # after its store's sweep: forget bands left empty
        return q(RUNTIME, "cep_expire_bands", module, A(store[:-len(BANDS)]), A(store))
    return q(RUNTIME, "cep_expire", module, A(store), window, generation_ms(window), now)


def _indicator(name_arity: str):
    name, arity = name_arity.rsplit("/", 1)
    return pl.indicator(name, int(arity))


# ------------------------------------------------------------- nodes


def _emitter(plan, node, outputs, hoist=None, deriving=frozenset(), part_of=()):
    vs = _Vars()
    ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
    v = tuple_term(vs, node.vars)
    checks = ok_goal(node, vs, ts, te, None if hoist is None else hoist.rest)
    alternatives = []
    for step, side in plan.consumers(node.id):
        alternatives.append(pl.Struct(f"s{step.id}_{side}", v, ts, te, ans))
    for index in outputs:
        if plan.outputs[index].query.window is not None:  # kept for the window's evaluations (cep/compile/windows.py)
            alternatives.append(conj([pl.Struct("$wstore", index, v, ts, te), F]))
        elif plan.outputs[index].query.form == "update":  # applied at the instant's end ($apply_updates)
            alternatives.append(conj([pl.Struct("assertz", pl.Struct("bg_pending", index, v)), F]))
        elif index in deriving:  # its triples are fed back (_derivations)
            alternatives.append(conj([pl.Struct("=", ans, pl.Struct("ans", index, v, ts, te)),
                                      pl.Struct("$derive", index, v, ts, te)]))
        else:
            alternatives.append(pl.Struct("=", ans, pl.Struct("ans", index, v, ts, te)))
    body = alternatives[-1] if alternatives else F
    for alt in reversed(alternatives[:-1]):
        body = pl.Struct(";", alt, body)
    # a step's solution handed on to another step (or kept for a window or
    # an update) is a partial match, counted against Limits.partial_matches
    # by its size (MATCH_VARIABLES variables count one): where matches
    # multiply. A leaf makes at most a few per event, and answers are
    # bounded by Prolog's stacks.
    if isinstance(node, Step) and (plan.consumers(node.id) or any(
            plan.outputs[i].query.window is not None or plan.outputs[i].query.form == "update" for i in outputs)):
        names = ", ".join(dict.fromkeys(plan.outputs[i].query.name for i in part_of))
        weight = max(1, -(-len(node.vars) // MATCH_VARIABLES))
        checks = (*checks, q(RUNTIME, "cep_match", A(names), te, weight))
    return [pl.Clause(pl.Struct(f"n{node.id}", v, ts, te, ans), tuple(checks) + (body,))]


def _leaf_rule(leaf: Leaf, slots=None, body=()):
    """leaf(P, S, O, Ts, Te, A): the event (S, P, O) matches the leaf's
    triple pattern (or `slots`, what the event must look like for it to
    entail a triple that matches), then `body`."""
    vs = _Vars()
    pattern = [vs.of(x) if isinstance(x, ops.Var) else terms.to_prolog(x)
               for x in (leaf.triple.s, leaf.triple.p, leaf.triple.o)]
    ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
    event = pattern if slots is None else slots(vs, pattern)
    head = pl.Struct("uleaf" if leaf.updates else "leaf", event[1], event[0], event[2], ts, te, ans)
    goals = body(vs, pattern) if callable(body) else body
    if leaf.triple.end is not None:  # read by timestamp() (cep.algebra.timestamps)
        goals = (*goals, pl.Struct("=", vs.of(leaf.triple.end), te))
    return pl.Clause(head, (*goals, pl.Struct(f"n{leaf.id}", tuple_term(vs, leaf.vars), ts, te, ans)))


def _leaf_rules(leaf: Leaf, background) -> list:
    """The leaf rule, and with background knowledge those of the events
    that entail a matching triple by the RDFS rules (rdfs2, 3, 7, 9 over
    the closed schema): an event `x p y` matches `?x q ?y` when p is a
    subproperty of q, `?x rdf:type D` when p has a domain under D (or a
    range, for y), and an event `x rdf:type C` matches it when C is a
    subclass of D. The schema is compiled in, restricted to what the
    patterns name: an event costs one indexed lookup more, not a walk up
    the hierarchy. (The Schema's sets are strict: a class is not among
    its own sub- or superclasses.)"""
    if isinstance(leaf.triple.p, ops.Path):
        return []  # a path is evaluated over the background graph only (_timeless)
    rules = [_leaf_rule(leaf)]
    if background is None:
        return rules
    schema = background.schema
    t = leaf.triple
    if isinstance(t.p, ops.Var):
        # any predicate: every entailed triple, from tables of the whole schema
        table = f"$entails{leaf.id}"
        rules.append(_leaf_rule(leaf, lambda vs, pat: [pl.Var("S0"), pl.Var("P0"), pl.Var("O0")], lambda vs, pat: [
            pl.Struct(table, pl.Var("S0"), pl.Var("P0"), pl.Var("O0"), *pat)]))
        return rules + _entailment_table(table, schema)
    if t.p != terms.RDF_TYPE:
        for sub in sorted(schema.subproperties(t.p)):
            rules.append(_leaf_rule(leaf, lambda vs, pat, sub=sub: [pat[0], terms.to_prolog(sub), pat[2]]))
        return rules
    # rdf:type: by subclass, by domain, by range
    cls = pl.Var("C0")
    if isinstance(t.o, ops.Var):
        sup = f"$superclass{leaf.id}"
        rules.append(_leaf_rule(leaf, lambda vs, pat: [pat[0], pat[1], cls],
                                lambda vs, pat: [pl.Struct(sup, cls, pat[2])]))
        rules += _table(sup, 2, [(c, d) for c in sorted(schema.classes()) for d in sorted(schema.superclasses(c))])
        typed = [(p, d) for p in sorted(schema.properties()) for d in sorted(schema.domains(p))]
        ranged = [(p, r) for p in sorted(schema.properties()) for r in sorted(schema.ranges(p))]
    else:
        subclasses = sorted(schema.subclasses(t.o))
        if subclasses:  # one rule: D and its subclasses in one indexed table
            sub = f"$subclass{leaf.id}"
            rules = [_leaf_rule(leaf, lambda vs, pat: [pat[0], pat[1], cls], [pl.Struct(sub, cls)])]
            rules += _table(sub, 1, [(c,) for c in [t.o, *subclasses]])
        typed = [(p, t.o) for p in sorted(schema.properties_with_domain(t.o))]
        ranged = [(p, t.o) for p in sorted(schema.properties_with_range(t.o))]
    for p, d in typed:
        rules.append(_leaf_rule(leaf, lambda vs, pat, p=p: [pat[0], terms.to_prolog(p), pl.Var("_")],
                                lambda vs, pat, d=d: [pl.Struct("=", pat[2], terms.to_prolog(d))]))
    for p, r in ranged:  # a literal is of no class (rdfs3 applies to resources)
        rules.append(_leaf_rule(leaf, lambda vs, pat, p=p: [pl.Var("_"), terms.to_prolog(p), pat[0]],
                                lambda vs, pat, r=r: [_resource(pat[0]), pl.Struct("=", pat[2], terms.to_prolog(r))]))
    return rules


STREAM_EVENT = "$in"  # an event of a stream: its predicate wrapped, '$in'(Stream, P) (cep.runtime.batch)


def is_streamed(plan: Plan) -> bool:
    """Whether a leaf of the plan takes the events of some streams only
    (GRAPH, FROM STREAM): the events that name a stream then reach the
    rules with their predicate wrapped as '$in'(Stream, P)."""
    return any(isinstance(n, Leaf) and n.streams is not None for n in plan.nodes)


def count_streams(plan: Plan):
    """The streams whose events the count windows of the plan count
    (a frozenset of IRIs), or None for every event: a rule set counts
    events once for all its count windows, so their queries must read the
    same streams."""
    seen = {}
    for out in plan.outputs:
        q = out.query
        if q.window is not None and q.window.count is not None:
            streams = frozenset(iri for iri, _ in q.streams)
            seen.setdefault(streams, q)
    if len(seen) > 1:
        first, second = list(seen.values())[:2]
        raise QueryError(f"{second.name}: the count windows of one rule set count the events of "
                         f"the same streams, and {first.name} reads other streams: run them in "
                         f"separate rule sets", second.pos)
    return next(iter(seen), None)


def _stream_rules(rules: list, streams) -> list:
    """A leaf's rules in a rule set with streams: an event without a
    stream (its predicate as it is) is of every stream and takes them as
    they are; an event of a stream ('$in'(G, P)) takes the copies whose
    first goal checks G (none when the leaf reads every stream). The
    stream is an atom compared with memberchk/2, never called."""
    out = []
    stream = pl.Var("StreamOf")
    for rule in rules:
        head = rule.head
        if not isinstance(head, pl.Struct) or head.functor not in ("leaf", "uleaf"):
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


def _resource(term):
    """An IRI (an atom) or a blank node (bn(Label)): not a literal."""
    return pl.Struct(";", pl.Struct("atom", term), pl.Struct("=", term, pl.Struct("bn", pl.Var("_"))))


def _entailment_table(name, schema) -> list:
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
                                   (_resource(X),)))
    for c in sorted(schema.classes()):
        for d in sorted(schema.superclasses(c)):
            items.append(pl.Clause(pl.Struct(name, S, rdf_type, terms.to_prolog(c), S, rdf_type, terms.to_prolog(d))))
    if not items:
        items.append(pl.Clause(pl.Struct(name, *(pl.Var("_") for _ in range(6))), (F,)))
    return items


def _step(plan, step: Step, hoist=None, graph=None):
    """(clauses, store names, store scope, deferred check clause or None);
    `graph`: the module of the background triples the joins read (LIVE:
    the rules' live view of them), or None."""
    left, right = plan.node(step.left), plan.node(step.right)
    build = {
        "seq": lambda step, left, right: _seq(step, left, right, hoist),
        "join": lambda step, left, right: _join(step, left, right, plan, graph),
        "eq": _join,
        "union": _union,
        "seqright": _seqright,
        "eqleft": _deferred_optional,
        "leftjoin": _deferred_optional,
        "absence": _absence,
    }[step.op]
    return build(step, left, right)


def store_scope(step) -> str | None:
    """How long a step keeps the solutions it stores: None, nothing
    (UNION); "group", the instant (EQUALS, EQUALSOPTIONAL); "deadline",
    each until its deadline (NOTSEQ); "window", until they are older than
    the step's window (SEQ and joins under WITHIN, a getDURATION() bound or
    a time-based window: swept); "forever", for the rest of the stream: a
    SEQ's left side and a join's sides without a window, and the optional
    part of OPTIONALSEQ and OPTIONAL, whose every solution is kept
    (whether one ever occurred decides absence)."""
    if step.op == "union":
        return None
    if step.op in ("eq", "eqleft"):
        return "group"
    if step.op == "absence":
        return "deadline"
    if step.op in ("seq", "join") and step.window is not None:
        return "window"
    return "forever"


# what a step kind keeps for ever, in a warning (state_warnings)
KEPT = {
    "seq": "the left side of SEQ",
    "join": "both sides of joins",
    "seqright": "the optional part of OPTIONALSEQ",
    "leftjoin": "the optional part of OPTIONAL",
}


def unbounded_state(plan) -> list[str]:
    """A warning per query that keeps partial matches with no bound
    (store_scope "forever"): its state, and the work per event of a
    policy that scans it, grow with the stream. Each names the steps (as
    `cep explain` numbers them) and says how to bound them. No consumption
    policy bounds a store: `recent` keeps every solution, `chronological`
    every one not yet taken."""
    part_of = _part_of(plan)
    warnings = []
    for index, out in enumerate(plan.outputs):
        steps = [n for n in plan.nodes if isinstance(n, Step) and index in part_of[n.id]
                 and store_scope(n) == "forever"]
        if not steps:
            continue
        kinds = list(dict.fromkeys(n.op for n in steps))
        kept = ", ".join(f"{KEPT[op]} ({', '.join(f'e{n.id}' for n in steps if n.op == op)})" for op in kinds)
        query = out.query
        where = f"{query.pos}: " if query.pos is not None else ""
        text = (f"{where}{query.name} keeps partial matches with no time bound, so its state grows with "
                f"the stream: {kept}")
        if {"seq", "join"} & set(kinds):
            text += (". Bound them with WITHIN \"PT1H\" (or FILTER(getDURATION() < ...)) on the group, or "
                     "a time-based window (FROM STREAM <...> [RANGE ... STEP ...]); events that occur "
                     "together can be joined with EQUALS, which keeps them for one instant")
        if {"seqright", "leftjoin"} & set(kinds):
            text += (". The optional part of OPTIONALSEQ and OPTIONAL is kept whatever the bound: "
                     "absence is judged over the whole stream")
        warnings.append(text)
    return warnings


def _store(step, side):
    return f"g{step.id}_{side}"


def _goal(name, h, v, ts, te, gen=None):
    """A goal of a store; gen None matches any generation."""
    return pl.Struct(name, h, pl.Var("_") if gen is None else gen, v, ts, te)


def generation_ms(window: int) -> int:
    """The length of a windowed store's generations (and of the sweep
    period): a quarter window, so a goal is kept at most 1.5 windows."""
    return max(window // 4, 1)


def _generation(step, te, gen):
    """Goals computing the generation of a goal that ends at te: windowed
    stores are cut in generations (cep_expire drops them whole); the others
    have the one generation 0."""
    if step.window is None or step.op == "eq":
        return [pl.Struct("=", gen, 0)]
    return [pl.Struct("is", gen, pl.Struct("div", te, generation_ms(step.window)))]


def _union(step, left, right):
    items = []
    for side, child in (("l", left), ("r", right)):
        vs = _Vars()
        ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
        head = pl.Struct(f"s{step.id}_{side}", tuple_term(vs, child.vars), ts, te, ans)
        items.append(pl.Clause(head, (pl.Struct(f"n{step.id}", tuple_term(vs, step.vars), ts, te, ans),)))
    return items, [], store_scope(step), None


def _seq(step, left, right, hoist=None):
    """SeqJoin: a left solution becomes a goal waiting for a right solution
    that starts after it ends (rules (11) and (12))."""
    n = step.id
    store = _store(step, "l")
    vs = _Vars()
    ts1, te1, ts2, te2, h, ans, gen = (pl.Var(x) for x in ("Ts1", "Te1", "Ts2", "Te2", "H", "A", "G"))
    lv, rv, out = tuple_term(vs, left.vars), tuple_term(vs, right.vars), tuple_term(vs, step.vars)
    computing, checking, stored = [], [], lv
    if hoist is not None:
        # the goal carries the hoisted values (unbound where they are errors)
        ec = ExprCompiler(dict(vs.names), ts1, te1, vs.fresh)
        for var, sub in hoist.computed:
            goals, value = ec.value(sub)
            computing.append(ite(conj(goals), pl.Struct("=", vs.of(var), value), T))
        stored = tuple_term(vs, tuple(left.vars) + tuple(var for var, _ in hoist.computed))
        checking = ok_goal(step, vs, ts1, te2, hoist.checks)  # the window first: it is cheap
    band = hoist.band if hoist is not None else None
    key, indexing, probing, stores = h, [], [], [store + "/5"]
    if band is not None:
        # goals go under (join key, band of the hoisted value); see Band
        bands, b, hb = store + BANDS, pl.Var("B"), pl.Var("HB")
        key, stores = hb, stores + [bands + "/2"]
        indexing = [q(VALUES, "cep_band", vs.of(band.hoisted), b),
                    ite(pl.Struct(bands, h, b), T, pl.Struct("assertz", pl.Struct(bands, h, b))),
                    q(RUNTIME, "cep_band_key", h, b, hb)]
        probe = pl.Var("P")
        probing = [q(VALUES, "cep_band", vs.of(band.probe), probe),
                   pl.Struct(bands, h, b),
                   q(RUNTIME, "cep_band_admits", A(band.direction), b, probe),
                   q(RUNTIME, "cep_band_key", h, b, hb)]
    insert = pl.Clause(pl.Struct(f"s{n}_l", lv, ts1, te1, pl.Var("_")), (
        key_goal(vs, step.key, h),
        *_generation(step, te1, gen),
        *computing,
        *indexing,
        pl.Struct("asserta" if step.policy == "recent" else "assertz", _goal(store, key, stored, ts1, te1, gen)),
        F))
    goal = _goal(store, key, stored, ts1, te1)
    before = pl.Struct("<", te1, ts2)
    emit = pl.Struct(f"n{n}", out, ts1, te2, ans)
    if step.policy == "unrestricted":
        body = (*probing, goal, before, *checking, emit)
    else:
        ref = pl.Var("Ref")
        pick = pl.Struct("once", conj([pl.Struct("clause", goal, T, ref), before, pl.Struct(f"ok{n}", out, ts1, te2)]))
        body = (pick, pl.Struct("erase", ref), emit) if step.policy == "chronological" else (pick, emit)
    check = pl.Clause(pl.Struct(f"s{n}_r", rv, ts2, te2, ans), (key_goal(vs, step.key, h),) + body)
    return [insert, check, _ok_clause(step)], stores, store_scope(step), None


def _join(step, left, right, plan=None, graph=None):
    """Join (juxtaposition) and EqJoin (EQUALS): both sides store goals and
    probe the other side (for EQUALS only goals with the same interval
    match, so its goals live for one group). With background knowledge,
    a Join also takes the other side from the background graph, where it
    matches there (_timeless): background triples are timeless, so the
    solution keeps this side's interval."""
    n = step.id
    items = []
    eq = step.op == "eq"
    for side, other, mine, theirs in (("l", "r", left, right), ("r", "l", right, left)):
        vs = _Vars()
        ts1, te1, h, ans, gen = pl.Var("Ts1"), pl.Var("Te1"), pl.Var("H"), pl.Var("A"), pl.Var("G")
        ts2, te2 = (ts1, te1) if eq else (pl.Var("Ts2"), pl.Var("Te2"))
        myv, otherv, out = tuple_term(vs, mine.vars), tuple_term(vs, theirs.vars), tuple_term(vs, step.vars)
        store_mine = _goal(_store(step, side), h, myv, ts1, te1, gen)
        partner = _goal(_store(step, other), h, otherv, ts2, te2)
        ts, te = (ts1, te1) if eq else (pl.Var("Ts"), pl.Var("Te"))
        span = [] if eq else [pl.Struct("is", ts, pl.Struct("min", ts1, ts2)),
                              pl.Struct("is", te, pl.Struct("max", te1, te2))]
        emit = pl.Struct(f"n{n}", out, ts, te, ans)
        if step.policy == "unrestricted":
            body = (pl.Struct("assertz", store_mine), partner, *span, emit)
        else:
            ref = pl.Var("Ref")
            pick = pl.Struct("once", conj([pl.Struct("clause", partner, T, ref)] + span
                                          + [pl.Struct(f"ok{n}", out, ts, te)]))
            if step.policy == "chronological":
                # a match consumes the partner; no match leaves this one waiting
                body = (ite(pick, pl.Struct("erase", ref), conj([pl.Struct("assertz", store_mine), F])), emit)
            else:
                body = (pl.Struct("asserta", store_mine), pick, emit)
        head = pl.Struct(f"s{n}_{side}", myv, ts1, te1, ans)
        if graph is not None and not eq:
            items += _timeless_clause(plan, step, side, mine, theirs, graph)
        items.append(pl.Clause(head, (key_goal(vs, step.key, h), *_generation(step, te1, gen)) + body))
    items.append(_ok_clause(step))
    return items, [_store(step, "l") + "/5", _store(step, "r") + "/5"], store_scope(step), None


def _timeless_clause(plan, step, side, mine, theirs, module: str) -> list:
    """s<N>_<side>: a solution of `mine` joined with the solutions of
    `theirs` in the background graph, keeping its own interval (none if
    `theirs` has no background solutions)."""
    vs = _Vars()
    found = _timeless(plan, theirs, vs, module)
    if found is None:
        return []
    ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
    return [pl.Clause(pl.Struct(f"s{step.id}_{side}", tuple_term(vs, mine.vars), ts, te, ans),
                      (*found, pl.Struct(f"n{step.id}", tuple_term(vs, step.vars), ts, te, ans)))]


def _timeless(plan, node, vs: _Vars, module: str):
    """Goals that find the solutions of `node` in the background graph
    (module:t/3, the RDFS closure), or None where it has none: a triple
    pattern, or joins and unions of them, with their filters (in which
    the time functions are errors: a background solution has no
    interval), unless a filter bounds the node's duration (node.timed)."""
    if node.timed:
        return None
    if isinstance(node, Leaf):
        s, p, o = (vs.of(x) if isinstance(x, ops.Var) else x if isinstance(x, ops.Path) else terms.to_prolog(x)
                   for x in (node.triple.s, node.triple.p, node.triple.o))
        live = module == LIVE  # the rules' own t/3: the module is the context
        if isinstance(p, ops.Path):
            ends = "vars" if isinstance(node.triple.s, ops.Var) and isinstance(node.triple.o, ops.Var) else "term"
            g = vs.fresh() if live else A(module)
            goals = ([pl.Struct("context_module", g)] if live else []) + [
                q(PATHS, "cep_path", g, path_term(p), A(ends), s, o)]
        else:
            goals = [pl.Struct("t", s, p, o) if live else q(module, "t", s, p, o)]
    elif node.op in ("join", "union"):
        left = _timeless(plan, plan.node(node.left), vs, module)
        right = _timeless(plan, plan.node(node.right), vs, module)
        if node.op == "union":  # either side; a side with none adds nothing
            sides = [conj(g) for g in (left, right) if g is not None]
            if not sides:
                return None
            goals = [sides[0] if len(sides) == 1 else pl.Struct(";", *sides)]
        elif left is None or right is None:
            return None
        else:
            goals = left + right
    else:
        return None
    # no interval: the time functions are errors (cep_values.pl)
    ec = ExprCompiler(dict(vs.names), A("timeless"), A("timeless"), vs.fresh)
    return goals + [ec.filter_goal(f) for f in node.filters]


# ------------------------------------------------------------ updates

LIVE = "$live"  # the graph of a rule set with updates: its own t/3


def _live_view(background) -> list:
    """The background graph as updates leave it, in the rules' module:
    t/3 is closure(schema + B), B the instance triples, that is the files'
    (i/3 of the background module) plus those inserted (bg_asserted) minus
    those deleted (bg_retracted). A triple of the files' closure stays
    while some triple of B entails it (or it is schema); a triple entailed
    by inserted ones only is in bg_added. Until the first deletion every
    triple of the closure stands, unchecked. The bg_ facts are the
    group's state (dumped with its goals)."""
    bg = background.module
    S, P, O, S0, P0, O0 = (pl.Var(n) for n in ("S", "P", "O", "S0", "P0", "O0"))
    spo = (S, P, O)
    check = ite(A("bg_retraction"), pl.Struct("$bg_live", *spo), T)
    items = [pl.Directive(pl.Struct("dynamic", pl.indicator(n, a))) for n, a in (
        ("bg_asserted", 3), ("bg_retracted", 3), ("bg_added", 3), ("bg_pending", 2), ("bg_retraction", 0))]
    items += [
        pl.Clause(pl.Struct("t", *spo), (q(bg, "t", *spo), check)),
        pl.Clause(pl.Struct("t", *spo), (pl.Struct("bg_added", *spo), check)),
        pl.Clause(pl.Struct("$bg_live", S, P, O), (pl.Struct("$schema_predicate", P), A("!"))),
        pl.Clause(pl.Struct("$bg_live", S, P, O), (pl.Struct("$bg_in", *spo), A("!"))),
        pl.Clause(pl.Struct("$bg_live", S, P, O), (pl.Struct("$bg_entails", S0, P0, O0, *spo),
                                                   pl.Struct("$bg_in", S0, P0, O0), A("!"))),
        pl.Clause(pl.Struct("$bg_in", *spo), (pl.Struct("bg_asserted", *spo),)),
        pl.Clause(pl.Struct("$bg_in", *spo), (q(bg, "i", *spo), pl.Struct("\\+", pl.Struct("bg_retracted", *spo)))),
    ]
    items += [pl.Clause(pl.Struct("$schema_predicate", terms.to_prolog(p))) for p in sorted(SCHEMA_PREDICATES)]
    items.append(pl.Clause(pl.Struct("$usable", pl.Struct("t", *spo)), (
        pl.Struct("ground", pl.Struct("t", *spo)), pl.Struct("atom", P),
        pl.Struct("\\+", pl.Struct("$schema_predicate", P)), _resource(S))))
    items += _entailment_table("$bg_entails", background.schema)
    # SPARQL's DELETE/INSERT: all deletions of the instant, then all insertions
    Q, V, Ds, Is, Pending = (pl.Var(n) for n in ("Q", "V", "Ds", "Is", "Pending"))
    each = pl.Struct("member", pl.Struct("-", Q, V), Pending)
    items.append(pl.Clause(A("$apply_updates"), (
        pl.Struct("findall", pl.Struct("-", Q, V), pl.Struct("retract", pl.Struct("bg_pending", Q, V)), Pending),
        pl.Struct("forall", conj([each, pl.Struct("$update", Q, V, Ds, pl.Var("_")),
                                  pl.Struct("member", pl.Struct("t", *spo), Ds)]), pl.Struct("$bg_delete", *spo)),
        pl.Struct("forall", conj([each, pl.Struct("$update", Q, V, pl.Var("_"), Is),
                                  pl.Struct("member", pl.Struct("t", *spo), Is)]), pl.Struct("$bg_insert", *spo)),
    )))
    in_files = conj([q(bg, "i", *spo), pl.Struct("\\+", pl.Struct("bg_retracted", *spo))])
    items.append(pl.Clause(pl.Struct("$bg_delete", *spo), (
        pl.Struct("ignore", pl.Struct("retract", pl.Struct("bg_asserted", *spo))),
        ite(in_files, pl.Struct("assertz", pl.Struct("bg_retracted", *spo)), T),
        ite(A("bg_retraction"), T, pl.Struct("assertz", A("bg_retraction"))),
    )))
    new = conj([pl.Struct("assertz", pl.Struct("bg_asserted", *spo)),
                pl.Struct("$bg_add", *spo),
                pl.Struct("forall", pl.Struct("$bg_entails", *spo, S0, P0, O0), pl.Struct("$bg_add", S0, P0, O0))])
    items.append(pl.Clause(pl.Struct("$bg_insert", *spo), (
        ite(pl.Struct("retract", pl.Struct("bg_retracted", *spo)), T,
            ite(pl.Struct(";", q(bg, "i", *spo), pl.Struct("bg_asserted", *spo)), T, new)),)))
    items.append(pl.Clause(pl.Struct("$bg_add", *spo), (
        ite(pl.Struct(";", q(bg, "t", *spo), pl.Struct("bg_added", *spo)), T,
            pl.Struct("assertz", pl.Struct("bg_added", *spo))),)))
    return items


def _update_clause(plan, index, out):
    """'$update'(Index, Values, Deletions, Insertions): an update's
    templates under a solution, as lists of t(S, P, O); a triple with an
    unbound variable, a subject that is a literal or a predicate that is
    not an IRI is left out (SPARQL 16.2), as is a schema triple (the
    schema is fixed)."""
    root = plan.node(out.root)
    vs = _Vars()
    v = tuple_term(vs, root.vars)

    def triples(template):
        return pl.PList([pl.Struct("t", *(vs.of(x) if isinstance(x, ops.Var) else terms.to_prolog(x)
                                          for x in (t.s, t.p, t.o))) for t in template])

    ds, is_ = pl.Var("Ds"), pl.Var("Is")
    return pl.Clause(pl.Struct("$update", index, v, ds, is_), (
        pl.Struct("include", A("$usable"), triples(out.query.deletions), ds),
        pl.Struct("include", A("$usable"), triples(out.query.template), is_)))


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


def _seqright(step, opt, mand):
    """SeqRightJoin (OPTIONALSEQ): the optional left part, if any compatible
    one ended before the mandatory part starts, is joined; otherwise the
    mandatory part alone is a solution. Decided when the mandatory part
    occurs, since every optional candidate has ended by then."""
    n = step.id
    store = _store(step, "l")
    vs = _Vars()
    ts1, te1, ts2, te2, h, ans = (pl.Var(x) for x in ("Ts1", "Te1", "Ts2", "Te2", "H", "A"))
    ov, mv, out = tuple_term(vs, opt.vars), tuple_term(vs, mand.vars), tuple_term(vs, step.vars)
    insert = pl.Clause(pl.Struct(f"s{n}_l", ov, ts1, te1, pl.Var("_")),
                       (key_goal(vs, step.key, h), pl.Struct("assertz", _goal(store, h, ov, ts1, te1, 0)), F))
    cond = _cond_goals(step, vs, ts1, te2)
    match = conj([_goal(store, h, ov, ts1, te1), pl.Struct("<", te1, ts2)] + cond)
    alone = _alone(step, mand, vs, ts2, te2, ans)
    joined = conj([match, pl.Struct(f"n{n}", out, ts1, te2, ans)])
    check = pl.Clause(pl.Struct(f"s{n}_r", mv, ts2, te2, ans),
                      (key_goal(vs, step.key, h), ite(pl.Struct("\\+", match), alone, joined)))
    return [insert, check, _ok_clause(step)], [store + "/5"], store_scope(step), None


def _deferred_optional(step, mand, opt):
    """EqLeftJoin (EQUALSOPTIONAL) and LeftJoin (OPTIONAL): the optional part
    may still occur in the same group as the mandatory one, so the check
    waits for the end of the group (rules (14)-(15) for the interval test)."""
    n = step.id
    eq = step.op == "eqleft"
    opt_store, pending = _store(step, "r"), f"d{n}"
    vs = _Vars()
    ts, te, ts1, te1, h, ans = (pl.Var(x) for x in ("Ts", "Te", "Ts1", "Te1", "H", "A"))
    mv, ov, out = tuple_term(vs, mand.vars), tuple_term(vs, opt.vars), tuple_term(vs, step.vars)
    wait = pl.Clause(pl.Struct(f"s{n}_l", mv, ts, te, pl.Var("_")),
                     (pl.Struct("assertz", pl.Struct(pending, mv, ts, te)), F))
    insert = pl.Clause(pl.Struct(f"s{n}_r", ov, ts1, te1, pl.Var("_")),
                       (key_goal(vs, step.key, h), pl.Struct("assertz", _goal(opt_store, h, ov, ts1, te1, 0)), F))
    if eq:
        candidate = [_goal(opt_store, h, ov, ts, te)]
        mts = ts
        cond = _cond_goals(step, vs, ts, te)
    else:
        mts = pl.Var("MTs")
        candidate = [_goal(opt_store, h, ov, ts1, te1), pl.Struct("=<", te1, te),
                     pl.Struct("is", mts, pl.Struct("min", ts, ts1))]
        cond = _cond_goals(step, vs, mts, te)
    match = conj(candidate + cond)
    alone = _alone(step, mand, vs, ts, te, ans)
    joined = conj([match, pl.Struct(f"n{n}", out, mts, te, ans)])
    check = pl.Clause(pl.Struct("$check", n, ans), (
        pl.Struct("retract", pl.Struct(pending, mv, ts, te)),
        key_goal(vs, step.key, h),
        ite(pl.Struct("\\+", match), alone, joined)))
    stores = [opt_store + "/5", pending + "/3"]
    return [wait, insert, _ok_clause(step)], stores, store_scope(step), check


def _absence(step, left, right):
    """SeqAbsence (NOTSEQ): a left solution waits as pending, with its
    deadline, in p<N>(Key, Deadline, Values, Start, End); a right solution
    that is compatible, satisfies the condition, starts after its end and
    ends by the deadline removes it (right solutions are not stored: they
    only remove pending ones that ended before they start). When event
    time passes a deadline, '$absence_fire'/3 emits the pending solutions
    due then as solutions of the node ending at the deadline. A node's
    pending solutions are stored in the order of their ends, hence of
    their deadlines: its first one is due first ('$absence_next'/2)."""
    n = step.id
    store = f"p{n}"
    vs = _Vars()
    ts1, te1, ts2, te2, h, d, ref = (pl.Var(x) for x in ("Ts1", "Te1", "Ts2", "Te2", "H", "D", "Ref"))
    lv, rv = tuple_term(vs, left.vars), tuple_term(vs, right.vars)
    pending = pl.Struct(store, h, d, lv, ts1, te1)
    insert = pl.Clause(pl.Struct(f"s{n}_l", lv, ts1, te1, pl.Var("_")), (
        key_goal(vs, step.key, h), pl.Struct("is", d, pl.Struct("+", te1, step.deadline)),
        pl.Struct("assertz", pending), F))
    found = conj([pl.Struct("clause", pending, T, ref), pl.Struct("<", te1, ts2), pl.Struct("=<", te2, d)]
                 + _cond_goals(step, vs, ts1, te2))
    remove = pl.Clause(pl.Struct(f"s{n}_r", rv, ts2, te2, pl.Var("_")), (
        key_goal(vs, step.key, h), pl.Struct("forall", found, pl.Struct("erase", ref)), F))
    fvs = _Vars()
    v, ts, due, ans = tuple_term(fvs, step.vars), pl.Var("Ts"), pl.Var("Due"), pl.Var("A")
    fire = pl.Clause(pl.Struct("$absence_fire", n, due, ans), (
        pl.Struct("retract", pl.Struct(store, pl.Var("_"), due, v, ts, pl.Var("_"))),
        pl.Struct(f"n{n}", v, ts, due, ans)))
    first = pl.Var("D0")
    nxt = pl.Clause(pl.Struct("$absence_next", n, d), (
        pl.Struct(store, pl.Var("_"), first, pl.Var("_"), pl.Var("_"), pl.Var("_")),
        A("!"), pl.Struct("=", d, first)))
    return [insert, remove, fire, nxt, _ok_clause(step)], [store + "/5"], store_scope(step), None


def _cond_goals(step, vs, ts, te):
    if step.cond is None:
        return []
    ec = ExprCompiler(dict(vs.names), ts, te, vs.fresh)
    return [ec.filter_goal(step.cond)]


def _alone(step, mand, vs, ts, te, ans):
    """The mandatory solution alone: the optional part's variables stay unbound."""
    values = []
    for v in step.vars:
        values.append(vs.of(v) if v in mand.vars else pl.Var(f"_U{len(values)}"))
    out = pl.Struct("v", *values) if values else A("v")
    return pl.Struct(f"n{step.id}", out, ts, te, ans)


def _ok_clause(step):
    """ok<N>(Values, Start, End): N's window and filters hold (the consuming
    policies test a candidate with it before they take it)."""
    vs = _Vars()
    ts, te = pl.Var("Ts"), pl.Var("Te")
    head = pl.Struct(f"ok{step.id}", tuple_term(vs, step.vars), ts, te)  # names the variables first
    return pl.Clause(head, tuple(ok_goal(step, vs, ts, te)) or (T,))


# ---------------------------------------------------------- projection


def answer_width(layouts) -> int:
    """The number of fields of every answer line: the most any query has."""
    return max((len(layout.fields) for layout in layouts), default=0)


def _padded(project, width):
    """A '$project' clause with its fields padded with unbound variables to
    `width`, so every answer line has as many fields."""
    *args, fields = project.head.args
    padding = tuple(pl.Var(f"_W{i}") for i in range(width - len(fields.items)))
    return pl.Clause(pl.Struct(project.head.functor, *args, pl.PList(fields.items + padding)), project.body)


def _projection(plan, index, out):
    """('$project' clause, layout) of an output."""
    query = out.query
    root = plan.node(out.root)
    if query.grouping is not None:  # its rows are made by '$wrow' (cep/compile/windows.py)
        names = tuple(ops.template_fields(query.template) if query.form == "construct"
                      else (item.var.name for item in query.projection))
        head = pl.Struct("$project", index, pl.Var("_"), pl.Var("_"), pl.Var("_"), pl.PList([]))
        return pl.Clause(head, (F,)), QueryLayout(index, query.name, query.form, names)
    vs = _Vars()
    ts, te = pl.Var("Ts"), pl.Var("Te")
    v = tuple_term(vs, root.vars)
    goals, fields, names = [], [], []
    ec = ExprCompiler(dict(vs.names), ts, te, vs.fresh)
    if query.projection is None:
        for var in root.vars:
            if not var.name.startswith("_:"):
                names.append(var.name)
                fields.append(vs.of(var))
    else:
        for item in query.projection:
            names.append(item.var.name)
            if item.expr is None:
                fields.append(vs.of(item.var) if item.var in root.vars else pl.Var(f"_N{len(fields)}"))
            else:
                g, value = ec.value(item.expr)
                r = pl.Var(f"P{len(fields)}")
                goals.append(ite(conj(g), pl.Struct("=", r, value), T))
                fields.append(r)
                ec.env[item.var] = r
    if query.form == "update":  # no answers: its solutions change the background ($update)
        names, fields = [], []
    if query.form == "construct":
        # the template's variables, after the sub-select's projection if
        # any; then its blank nodes, named by the rule, the values and the
        # interval (the same derivation always names the same node)
        template_fields = ops.template_fields(query.template)
        values = sum(not name.startswith("_:") for name in template_fields)  # the variables come first
        by_name = dict(zip(names, fields))
        fields2 = []
        for name in template_fields:
            var = ops.Var(name)
            if name in by_name:
                fields2.append(by_name[name])
            elif name.startswith("_:"):
                label = pl.Var(f"B{len(fields2)}")
                key = pl.Struct("k", pl.Str(query.name), pl.Str(name), pl.PList(fields2[:values]), ts, te)
                goals.append(q(RUNTIME, "cep_skolem", key, label))
                fields2.append(label)
            elif var in root.vars:
                fields2.append(vs.of(var))
            else:
                fields2.append(pl.Var(f"_T{len(fields2)}"))
        names, fields = template_fields, fields2
    head = pl.Struct("$project", index, v, ts, te, pl.PList(fields))
    layout = QueryLayout(index, query.name, query.form, tuple(names))
    return pl.Clause(head, tuple(goals) or (T,)), layout


def program_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
