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
for every unary step N (BIND, a subquery, a join with inline data)
    s<N>_u/4                   what happens when a solution of its operand
                               occurs (d<N>/3: a subquery's DISTINCT);
    g<N>_l/5, g<N>_r/5         the goal stores: g(Key, Generation, Values,
                               Start, End), Key the join key's value or
                               hash, so lookups are indexed; Generation
                               Start div (Window/4) for windowed stores (0
                               for others), so expiry drops whole ones;
    g<N>_l_bands/2             the bands of a range-indexed store (Band),
                               whose Key is a hash of the join key and the
                               band of a value stored in the goal; where
                               the C library is built it keeps such a
                               store instead (cep_fast:cep_band_add/8);
                               and the plain store of an unrestricted SEQ
                               without a band, g<N>_l/5 as above, where
                               it is built ('$seq_store'/1, cep_fast:
                               cep_seq_add/7);
and for the rule set
    cep_event/6                the entry point: an event triggers the leaf
                               rules (leaf/6, one clause per triple pattern,
                               indexed on the predicate; uleaf/6 those of
                               update rules);
    '$sweep'/2, '$check'/3, '$project'/5, ...
                               what the runtime calls: every one is listed,
                               with its arity and meaning, in
                               prolog/cep_contract.pl (docs/runtime.md).

The rules are nondeterministic and their solutions are the answers: an
event's answers are all the ways cep_event/6 succeeds, each binding Answer
to ans(QueryIndex, Values, Start, End); side effects (storing goals) happen
on the way and every other path fails. The runtime collects a group's
answers with one findall/3, with no database traffic per answer.

Unbound SPARQL variables are unbound Prolog variables, so unifying a stored
goal with a new solution is exactly the paper's "compatible" test and the
merge of the two bindings.

This module assembles the program (compile_plan) and makes the nodes'
emitters; the parts are made by the modules named by what they make:
leaves.py (leaf rules, property paths), steps.py (a binary step's clauses,
one builder per operator), derivations.py (rule chaining), updates.py
(DELETE/INSERT and the live background view), windows.py (windowed
queries), projection.py (answer lines), clauses.py (what they share).
"""

from __future__ import annotations

import hashlib

from cep import prolog as pl
from cep.algebra import ops
from cep.binarize import Leaf, Plan, Step, Unary, node_children
from cep.compile.clauses import LIVE, RUNTIME, A, T, F, Vars, ok_goal, settled_tests, tuple_term
from cep.compile.derivations import deferred_strata, derivations
from cep.compile.expr import Scope, conj, q
from cep.compile.leaves import (COPY_LEAF, PATH_EVENTS, count_streams, is_streamed, leaf_rules, path_check,
                                reads_copies, stream_rules, unit_store)
from cep.compile.projection import answer_width, padded, projection
from cep.compile.steps import BANDS, SEQ_STORE, generation_ms, hoisting, step_clauses, store_scope, unary_clauses
from cep.compile.updates import live_view, update_clause
from cep.compile.services import deferred_nodes
from cep.compile.static import static_items
from cep.compile.windows import content_keys, content_part, window_items
from cep.errors import QueryError
from cep.limits import MATCH_VARIABLES
from cep.runtime.batch import COPY, UPDATES_ONLY  # an event for the update rules alone, a copy: its predicate wrapped


DEFAULT_SWEEP_MS = 1000

def compile_plan(plan: Plan, background=None, chaining=None, user=None) -> tuple[list, list]:
    """(program items, query layouts) for a plan; `background`
    (cep.background.Background) adds RDFS entailment to the leaf rules and
    background triples to the joins of basic graph patterns; `chaining`
    (cep.algebra.chaining.Chaining): the CONSTRUCT rules whose triples are
    fed back (derivations) and the order of the optional checks; `user`
    (cep.user_prolog.UserProlog): the user predicates expressions call."""
    updates = [out.query for out in plan.outputs if out.query.form == "update"]
    if updates and background is None:
        raise QueryError(f"the update {updates[0].name} changes the background graph, and none is "
                         f"given (load one with --ontology, an empty file will do)", updates[0].pos)
    # the graph the rules read: the background's facts, or with updates the
    # live view of them in the rules' own module (live_view)
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
        for part in out.parts[1:]:  # kept apart, each in its own window (cep/compile/windows.py)
            root_of.setdefault(part.root, []).append((out_index, part.index))
    producers = chaining.producers if chaining is not None else frozenset()
    deriving = {i for i, out in enumerate(plan.outputs) if out.query.name in producers}
    absences = [n.id for n in plan.nodes if isinstance(n, Step) and n.op.spec.store == "deadline"]
    if absences and (deriving or updates):
        query = next(out.query for out in plan.outputs if any(_reaches(plan, r, absences[0]) for r in out.roots))
        what = "rule chaining (queries that read CONSTRUCT rules' triples)" if deriving else \
            "DELETE/INSERT updates"
        raise QueryError(f"{query.name}: NOTSEQ in a rule set with {what} is not supported yet: "
                         f"run them in separate rule sets", query.pos)
    # a NOTSEQ deadline is an instant of its own, without events, at which a
    # grouped or cut subquery would be evaluated too (a COUNT of 0 there)
    subqueries = [n for n in plan.nodes if isinstance(n, Unary) and isinstance(n.op, ops.Project) and n.op.evaluated]
    if absences and subqueries:
        query = next(out.query for out in plan.outputs if any(_reaches(plan, r, subqueries[0].id) for r in out.roots))
        raise QueryError(f"{query.name}: a subquery with GROUP BY, an aggregate, LIMIT or OFFSET in a rule set "
                         f"with NOTSEQ is not supported yet: run them in separate rule sets", query.pos)

    # entry point: every event tries every leaf rule; with updates, a copy
    # of an event meant for the update rules alone (its predicate wrapped,
    # cep.runtime.batch.UPDATES_ONLY) tries only theirs (uleaf/6)
    S, P, O, Ts, Te, Ans = (pl.Var(n) for n in ("S", "P", "O", "Ts", "Te", "A"))
    leaf, uleaf = (pl.Struct(name, P, S, O, Ts, Te, Ans) for name in ("leaf", "uleaf"))
    if any(isinstance(n, Leaf) and n.later_copies for n in plan.nodes) or reads_copies(plan):
        # the leaves' copy rules (leaves._leaf_rule) sit each beside its leaf rule
        items.append(pl.Directive(pl.Struct("discontiguous", pl.indicator(COPY_LEAF, 7))))
    if reads_copies(plan):  # the K-th copy of a repeated event (K >= 1): only the leaves that tell copies apart
        K = pl.Var("K")
        items.append(pl.Clause(pl.Struct("cep_event", S, pl.Struct(COPY, K, P), O, Ts, Te, Ans),
                               (A("!"), pl.Struct(COPY_LEAF, P, S, O, Ts, Te, Ans, K))))
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
    keys = content_keys(plan)  # the content steps' operands: kept per window, under these
    for node in plan.nodes:
        if node.content:  # evaluated over the window's content (windows.py)
            continue
        hoist = hoisting(plan, node) if isinstance(node, Step) else None
        scope = Scope(user, tuple(part_of[node.id]))
        items += _emitter(plan, node, root_of.get(node.id, []), scope, hoist, deriving, keys)
        if isinstance(node, Leaf):
            built = None
        elif isinstance(node, Unary):
            built = unary_clauses(plan, node, scope, graph)
        else:
            built = step_clauses(plan, node, scope, hoist, graph)
        if isinstance(node, Leaf):
            rules = leaf_rules(node, background)
            items += stream_rules(rules, node.streams) if streamed else rules
            if isinstance(node.triple, ops.Unit):
                dynamic.append(unit_store(node) + "/1")
                group_scoped.append(unit_store(node) + "/1")
            elif isinstance(node.triple.p, ops.Path):  # walked at the instant's end
                if PATH_EVENTS + "/6" not in dynamic:
                    dynamic.append(PATH_EVENTS + "/6")
                    group_scoped.append(PATH_EVENTS + "/6")
                deferred.append(node.id)
                checks.append(path_check(node, scope, graph))
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
        if (scope and not updates) or any(isinstance(n, Leaf) and n.updates == scope for n in plan.nodes):
            continue
        items.append(pl.Clause(pl.Struct(name, *(pl.Var("_") for _ in range(6))), (F,)))
    items[:0] = [pl.Directive(pl.Struct("dynamic", pl.indicator("$clock", 2)))] + \
        [pl.Directive(pl.Struct("dynamic", _indicator(name))) for name in reversed(dynamic)]

    # periodic pruning of goals past their window (system-generated events)
    module, now = pl.Var("M"), pl.Var("Now")
    names = {store.split("/")[0] for store, _ in sweeps}
    # the plain SEQ stores' marks, made by their steps, together
    marks = [item for item in items
             if isinstance(item, pl.Clause) and isinstance(item.head, pl.Struct) and item.head.functor == SEQ_STORE]
    marked = {id(mark) for mark in marks}
    items = [item for item in items if id(item) not in marked]
    items += marks or [pl.Clause(pl.Struct(SEQ_STORE, pl.Var("_")), (F,))]
    plain = {mark.head.args[0].name for mark in marks}
    sweep_goals = [_sweep_goal(module, store.split("/")[0], window, now, names, plain) for store, window in sweeps
                   if not store.split("/")[0].endswith(BANDS)]
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
    strata = deferred_strata(plan, deferred, chaining)
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
        items += derivations(plan, deriving, deferred)
    if updates:
        items += live_view(background)
        items += [update_clause(plan, i, out) for i, out in enumerate(plan.outputs) if out.query.form == "update"]
    items += checks
    if not checks:
        items.append(pl.Clause(pl.Struct("$check", pl.Var("_"), pl.Var("_"), pl.Var("_")), (F,)))

    projections = []
    for i, out in enumerate(plan.outputs):
        projections.append(projection(plan, i, out, Scope(user, (i,))))
    layouts = [layout for _, layout in projections]
    width = answer_width(layouts)
    # a CONSTRUCT rule's result is a set of triple occurrences: equal
    # template values (with their blank nodes) over one interval are one answer
    distinct = [i for i, o in enumerate(plan.outputs) if o.query.distinct or o.query.form == "construct"]
    for project, _ in projections:
        items.append(padded(project, width))
    for item in window_items(plan, chaining, lambda i: Vars(Scope(user, (i,))),
                             lambda n: Vars(Scope(user, tuple(part_of[n]))), graph):
        items.append(padded(item, width) if isinstance(item, pl.Clause) and item.head.functor == "$wrow" else item)
    items += static_items(plan, lambda i: Vars(Scope(user, (i,))), graph)
    items += [pl.Clause(pl.Struct("$distinct", i)) for i in distinct]
    if not distinct:
        items.append(pl.Directive(pl.Struct("dynamic", pl.indicator("$distinct", 1))))
    return [settled_tests(item) for item in items], layouts


def _part_of(plan) -> dict:
    """Node id -> the indexes of the queries (outputs) it is part of."""
    part_of = {node.id: [] for node in plan.nodes}
    for index, out in enumerate(plan.outputs):
        todo, seen = list(out.roots), set()
        while todo:
            node = plan.node(todo.pop())
            if node.id in seen:
                continue
            seen.add(node.id)
            part_of[node.id].append(index)
            todo += node_children(node)
    return part_of


def _reaches(plan, root, node_id) -> bool:
    todo = [root]
    while todo:
        node = plan.node(todo.pop())
        if node.id == node_id:
            return True
        todo += node_children(node)
    return False


def _sweep_goal(module, store, window, now, stores, plain):
    if store + BANDS in stores:  # a band store (cep/compile/steps.py, Band), and its bands
        return q(RUNTIME, "cep_band_expire", module, A(store), A(store + BANDS), window, generation_ms(window), now)
    if store in plain:  # a plain SEQ store (cep/compile/steps.py, _seq)
        return q(RUNTIME, "cep_seq_expire", module, A(store), window, generation_ms(window), now)
    return q(RUNTIME, "cep_expire", module, A(store), window, generation_ms(window), now)


def _indicator(name_arity: str):
    name, arity = name_arity.rsplit("/", 1)
    return pl.indicator(name, int(arity))


def _emitter(plan, node, outputs, scope, hoist=None, deriving=frozenset(), keys=None):
    vs = Vars(scope)
    ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
    v = tuple_term(vs, node.vars)
    # the filters of a SERVICE joined at the window's evaluations are read there (cep.compile.services)
    filters = () if node.id in deferred_nodes(plan) else None if hoist is None else hoist.rest
    checks = ok_goal(node, vs, ts, te, filters)
    alternatives = []
    for step, side in plan.consumers(node.id):
        if step.content:  # an operand of a step evaluated over the window's content: kept per window
            alternatives += [conj([pl.Struct("$wstore", content_part(key, step.id, side), v, ts, te), F])
                             for key in keys[step.id]]
        else:
            alternatives.append(pl.Struct(f"s{step.id}_{side}", v, ts, te, ans))
    for index in outputs:
        if isinstance(index, tuple):  # a part of a query, p(Query, Part) (cep/compile/windows.py)
            alternatives.append(conj([pl.Struct("$wstore", pl.Struct("p", *index), v, ts, te), F]))
        elif plan.outputs[index].query.evaluated:  # kept for the window's evaluations (cep/compile/windows.py)
            alternatives.append(conj([pl.Struct("$wstore", index, v, ts, te), F]))
        elif plan.outputs[index].query.form == "update":  # applied at the instant's end ($apply_updates)
            alternatives.append(conj([pl.Struct("assertz", pl.Struct("bg_pending", index, v)), F]))
        elif index in deriving:  # its triples are fed back (derivations)
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
            isinstance(i, tuple) or plan.outputs[i].query.evaluated or plan.outputs[i].query.form == "update"
            for i in outputs)):
        names = ", ".join(dict.fromkeys(plan.outputs[i].query.name for i in scope.queries))
        weight = max(1, -(-len(node.vars) // MATCH_VARIABLES))
        checks = (*checks, q(RUNTIME, "cep_match", A(names), te, weight))
    return [pl.Clause(pl.Struct(f"n{node.id}", v, ts, te, ans), tuple(checks) + (body,))]


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
                 and not n.content and store_scope(n) == "forever"]
        if not steps:
            continue
        kinds = list(dict.fromkeys(n.op for n in steps))
        kept = ", ".join(f"{op.spec.kept} ({', '.join(f'e{n.id}' for n in steps if n.op == op)})" for op in kinds)
        query = out.query
        where = f"{query.pos}: " if query.pos is not None else ""
        text = (f"{where}{query.name} keeps partial matches with no time bound, so its state grows with "
                f"the stream: {kept}")
        if any(op.spec.store == "window" for op in kinds):
            text += (". Bound them with WITHIN \"PT1H\" (or FILTER(getDURATION() < ...)) on the group, or "
                     "a time-based window (FROM STREAM <...> [RANGE ... STEP ...]); events that occur "
                     "together can be joined with EQUALS, which keeps them for one instant")
        if any(op.spec.store == "forever" and op.spec.optional for op in kinds):
            text += (". The optional part of OPTIONALSEQ and OPTIONAL is kept whatever the bound: "
                     "absence is judged over the whole stream")
        negating = [op.spec.kept for op in kinds if op.spec.store == "forever" and not op.spec.optional]
        if negating:  # MINUS, [NOT] EXISTS
            joined = " and ".join(negating)
            text += (f". {joined[0].upper()}{joined[1:]} is kept whatever the bound (a later solution "
                     f"may last long enough to hold any of it)")
        warnings.append(text)
    return warnings


def program_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
