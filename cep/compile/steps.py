"""The clauses of a binary step of the plan, one builder per operator
(BUILDERS, keyed by the operator's class; paper, section 5, rules
(11)-(15)): what happens when a solution of either operand occurs (store a
goal, combine with stored goals), how long the stores keep goals
(store_scope), and the hoisting of a SEQ filter's left-only parts."""

from __future__ import annotations

from dataclasses import dataclass

from cep import prolog as pl
from cep import terms
from cep.algebra import ops
from cep.algebra.ops import is_table
from cep.binarize import Leaf, Step, Unary
from cep.compile.clauses import FAST, LIVE, RUNTIME, VALUES, PATHS, WINDOW, A, T, F, Vars, func_term, key_goal, ok_goal, tuple_term
from cep.compile.expr import conj, ite, q
from cep.compile.leaves import path_term
from cep.compile.services import deferred_nodes, service_goal, service_of, touch_goal
from cep.errors import QueryError
from cep.compile.projection import sort_goals


BANDS = "_bands"  # suffix of a store's band list (see Band)


SEQ_STORE = "$seq_store"  # '$seq_store'(Store): Store is a plain SEQ store (_seq; prolog/cep_contract.pl)


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
    a left variable): a filter, `check`, that compares a variable of the
    right operand with it (`?price2 < ?price1 * 0.7`, `?b > ?a`), as
    `probe op hoisted`. The goals are stored by join key and band of the
    hoisted value (cep_values:cep_band), so a right solution visits only
    the goals whose band can pass the check, not every pending goal of its
    key: the cost of a band join follows its matches, not the size of its
    window. The store makes the check itself, with the step's interval
    test and window (prolog/cep_fast.pl, cep_band_goal/11): the C library
    compares numbers there without a Prolog call per goal."""

    hoisted: ops.Var
    probe: ops.Var
    op: str  # "<" | "<=" | ">" | ">="
    check: ops.Call


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}  # a op b as b op' a (SPARQL 17.3: the same test)


def _band(checks, hoisted: set, probes: set) -> Band | None:
    for c in checks:
        if not (isinstance(c, ops.Call) and len(c.args) == 2 and c.name in _FLIPPED):
            continue
        a, b = c.args
        if b in hoisted and a in probes:
            return Band(b, a, c.name, c)
        if a in hoisted and b in probes:
            return Band(a, b, _FLIPPED[c.name], c)
    return None


def hoisting(plan, step) -> Hoist | None:
    if step.op is not ops.SeqJoin or step.policy != "unrestricted" or not step.filters:
        return None
    left, right = plan.node(step.left), plan.node(step.right)
    # values the merge cannot change: left-only variables and the join key
    fixed = (set(left.vars) - set(right.vars)) | set(step.key)
    computed = []

    def rewrite(e):
        if not isinstance(e, ops.Call):
            return e
        used = ops.expr_vars(e)
        if used and used <= fixed and not ops.expr_uses(e, ops.TIME_FUNCTIONS):
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


def step_clauses(plan, step: Step, scope, hoist=None, graph=None):
    """(clauses, store names, store scope, deferred check clause or None);
    `graph`: the module of the background triples the joins read (LIVE:
    the rules' live view of them), or None."""
    left, right = plan.node(step.left), plan.node(step.right)
    return BUILDERS[step.op](step, left, right, scope, hoist=hoist, plan=plan, graph=graph)


def store_scope(step) -> str | None:
    """How long a step keeps the solutions it stores: None, nothing
    (UNION); "group", the instant (EQUALS, EQUALSOPTIONAL); "deadline",
    each until its deadline (NOTSEQ); "window", until they are older than
    the step's window (SEQ and joins under WITHIN, a getDURATION() bound or
    a time-based window: swept); "forever", for the rest of the stream: a
    SEQ's left side and a join's sides without a window, and the optional
    part of OPTIONALSEQ and OPTIONAL, whose every solution is kept
    (whether one ever occurred decides absence)."""
    store = step.op.spec.store  # (ops.Operator)
    if store == "instant":
        return "group"
    if store == "window":
        return "forever" if step.window is None else "window"
    return store


def _store(step, side):
    return f"g{step.id}_{side}"


def _goal(name, h, v, ts, te, gen=None):
    """A goal of a store; gen None matches any generation."""
    return pl.Struct(name, h, pl.Var("_") if gen is None else gen, v, ts, te)


def _unseen(name, h, v, ts, te):
    """No goal of the store has the values v (a variant: unbound values
    alike) over [ts, te]. Solutions are sets (paper 4.2): a second
    derivation of a stored goal joins as the first did and adds no
    solution, and with rule chaining, where derived events give one
    solution many derivations, storing each would multiply the matches
    of every later step."""
    seen = pl.Var("V0")
    return pl.Struct("\\+", conj([_goal(name, h, seen, ts, te), pl.Struct("=@=", seen, v)]))


def generation_ms(window: int) -> int:
    """The length of a windowed store's generations (and of the sweep
    period): a quarter window, so a goal is kept at most 1.5 windows."""
    return max(window // 4, 1)


def _generation(step, ts, gen):
    """Goals computing the generation of a goal that starts at ts: windowed
    stores are cut in generations (cep_expire drops them whole); the others
    have the one generation 0. By its start, not its end: a solution that
    joins a goal spans the goal's interval (SEQ, joins and Allen's
    relations), so a goal that started more than a window ago can join
    nothing, however recently it ended (a SEQ pair of W2 waits up to a
    window less)."""
    if step.window is None or step.op.spec.store == "instant":
        return [pl.Struct("=", gen, 0)]
    return [pl.Struct("is", gen, pl.Struct("div", ts, generation_ms(step.window)))]


def _union(step, left, right, scope, **_):
    items = []
    for side, child in (("l", left), ("r", right)):
        vs = Vars(scope)
        ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
        head = pl.Struct(f"s{step.id}_{side}", tuple_term(vs, child.vars), ts, te, ans)
        items.append(pl.Clause(head, (pl.Struct(f"n{step.id}", tuple_term(vs, step.vars), ts, te, ans),)))
    return items, [], store_scope(step), None


def _seq(step, left, right, scope, hoist=None, **_):
    """SeqJoin: a left solution becomes a goal waiting for a right solution
    that starts after it ends (rules (11) and (12))."""
    n = step.id
    store = _store(step, "l")
    vs = Vars(scope)
    ts1, te1, ts2, te2, h, ans, gen = (pl.Var(x) for x in ("Ts1", "Te1", "Ts2", "Te2", "H", "A", "G"))
    lv, rv, out = tuple_term(vs, left.vars), tuple_term(vs, right.vars), tuple_term(vs, step.vars)
    computing, checking, stored = [], [], lv
    if hoist is not None:
        # the goal carries the hoisted values (unbound where they are errors)
        ec = vs.expressions(ts1, te1)
        for var, sub in hoist.computed:
            goals, value = ec.value(sub)
            computing.append(ite(conj(goals), pl.Struct("=", vs.of(var), value), T))
        stored = tuple_term(vs, tuple(left.vars) + tuple(var for var, _ in hoist.computed))
        checking = ok_goal(step, vs, ts1, te2, hoist.checks)  # the window first: it is cheap
    band = hoist.band if hoist is not None else None
    stores = [store + "/5"]
    before = interval_goals(step, ts1, te1, ts2, te2)
    m, since = pl.Var("M"), pl.Var("Since")
    windowed = step.window is not None
    items = []
    if band is None and step.policy != "unrestricted":
        # the consuming policies take a goal out (clause/3, erase/1): dynamic facts
        storing = [pl.Struct("asserta" if step.policy == "recent" else "assertz", _goal(store, h, stored, ts1, te1, gen))]
        goal = _goal(store, h, stored, ts1, te1)
        finding = [goal]
    elif band is None:
        # a plain store: goals kept by join key, by the C library where it is
        # built, else as dynamic facts (prolog/cep_fast.pl, cep_seq_add/7), with
        # the interval test (the left operand ends before the right one starts)
        # and the window made by the store
        assert step.op.spec.interval == ops.BEFORE
        storing = [pl.Struct("context_module", m), q(FAST, "cep_seq_add", m, A(store), h, gen, stored, ts1, te1)]
        finding = [*([pl.Struct("is", since, pl.Struct("-", te2, step.window))] if windowed else []),
                   pl.Struct("context_module", m),
                   q(FAST, "cep_seq_goal", m, A(store), h, ts2, since if windowed else pl.Var("_"), stored, ts1, te1)]
        before = []
        items.append(pl.Clause(pl.Struct(SEQ_STORE, A(store))))
    else:
        # a band store (band joins are unrestricted: hoisting needs it): goals
        # kept by join key and band of the hoisted value, by the C library
        # where it is built, else as dynamic facts (prolog/cep_fast.pl); see Band
        # where the check, the interval test (the left operand ends before
        # the right one starts) and the window are made by the store
        assert step.op.spec.interval == ops.BEFORE
        bands = store + BANDS
        stores.append(bands + "/2")
        # the hoisted value last in the goal: the store reads it there
        stored = tuple_term(vs, tuple(x for x in left.vars if x != band.hoisted)
                            + tuple(var for var, _ in hoist.computed if var != band.hoisted) + (band.hoisted,))
        storing = [pl.Struct("context_module", m),
                   q(FAST, "cep_band_add", m, A(store), A(bands), h, gen, stored, ts1, te1)]
        finding = [*([pl.Struct("is", since, pl.Struct("-", te2, step.window))] if windowed else []),
                   pl.Struct("context_module", m),
                   q(FAST, "cep_band_goal", m, A(store), A(bands), h, A(band.op), vs.of(band.probe), ts2,
                     since if windowed else pl.Var("_"), stored, ts1, te1)]
        before = []
        ec = vs.expressions(ts1, te2)
        checking = [ec.filter_goal(f) for f in hoist.checks if f != band.check]
    insert = pl.Clause(pl.Struct(f"s{n}_l", lv, ts1, te1, pl.Var("_")), (
        key_goal(vs, step.key, h),
        *_generation(step, ts1, gen),
        *computing,
        *storing,
        F))
    emit = pl.Struct(f"n{n}", out, ts1, te2, ans)
    if step.policy == "unrestricted":
        body = (*finding, *before, *checking, emit)
    else:
        ref = pl.Var("Ref")
        pick = pl.Struct("once", conj([pl.Struct("clause", goal, T, ref), *before, pl.Struct(f"ok{n}", out, ts1, te2)]))
        body = (pick, pl.Struct("erase", ref), emit) if step.policy == "chronological" else (pick, emit)
    check = pl.Clause(pl.Struct(f"s{n}_r", rv, ts2, te2, ans), (key_goal(vs, step.key, h),) + body)
    return [insert, check, _ok_clause(step, scope), *items], stores, store_scope(step), None


INTERVAL_TESTS = {"<": "<", "<=": "=<", "=": "=:="}  # Operator.interval's comparisons in Prolog


def interval_goals(step, s1, e1, s2, e2) -> list:
    """The step's interval test (Operator.interval) on its left operand's
    interval [s1, e1] and its right one's [s2, e2]."""
    at = {"s1": s1, "e1": e1, "s2": s2, "e2": e2}
    return [pl.Struct(INTERVAL_TESTS[test], at[x], at[y]) for test, x, y in step.op.spec.interval]


def _join(step, left, right, scope, plan=None, graph=None, **_):
    """Join (juxtaposition), EqJoin (EQUALS) and Allen's interval
    relations: both sides store goals and probe the other side for a
    partner whose interval passes the operator's test (Operator.interval;
    for EQUALS only goals with the same interval match, so its goals live
    for one group). With background knowledge,
    a Join also takes the other side from the background graph, where it
    matches there (_timeless): background triples are timeless, so the
    solution keeps this side's interval."""
    n = step.id
    items = []
    eq = step.op.spec.store == "instant"  # the same interval: its goals live for one instant
    for side, other, mine, theirs in (("l", "r", left, right), ("r", "l", right, left)):
        vs = Vars(scope)
        ts1, te1, h, ans, gen = pl.Var("Ts1"), pl.Var("Te1"), pl.Var("H"), pl.Var("A"), pl.Var("G")
        ts2, te2 = (ts1, te1) if eq else (pl.Var("Ts2"), pl.Var("Te2"))
        myv, otherv, out = tuple_term(vs, mine.vars), tuple_term(vs, theirs.vars), tuple_term(vs, step.vars)
        store_mine = _goal(_store(step, side), h, myv, ts1, te1, gen)
        partner = _goal(_store(step, other), h, otherv, ts2, te2)
        ts, te = (ts1, te1) if eq else (pl.Var("Ts"), pl.Var("Te"))
        # the operands' intervals: this side's is [Ts1, Te1]
        tested = interval_goals(step, ts1, te1, ts2, te2) if side == "l" else interval_goals(step, ts2, te2, ts1, te1)
        span = [] if eq else tested + [
            pl.Struct("is", ts, pl.Struct("min", ts1, ts2)), pl.Struct("is", te, pl.Struct("max", te1, te2))]
        emit = pl.Struct(f"n{n}", out, ts, te, ans)
        if step.policy == "unrestricted":
            body = (_unseen(_store(step, side), h, myv, ts1, te1), pl.Struct("assertz", store_mine), partner, *span, emit)
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
        if graph is not None and step.op.spec.timeless:
            items += _timeless_clause(plan, step, side, mine, theirs, graph, scope)
        items.append(pl.Clause(head, (key_goal(vs, step.key, h), *_generation(step, ts1, gen)) + body))
    items.append(_ok_clause(step, scope))
    return items, [_store(step, "l") + "/5", _store(step, "r") + "/5"], store_scope(step), None


def _timeless_clause(plan, step, side, mine, theirs, module: str, scope) -> list:
    """s<N>_<side>: a solution of `mine` joined with the solutions of
    `theirs` in the background graph, keeping its own interval (none if
    `theirs` has no background solutions)."""
    vs = Vars(scope)
    found = _timeless(plan, theirs, vs, module)
    if found is None:
        return []
    ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
    return [pl.Clause(pl.Struct(f"s{step.id}_{side}", tuple_term(vs, mine.vars), ts, te, ans),
                      (*found, pl.Struct(f"n{step.id}", tuple_term(vs, step.vars), ts, te, ans)))]


def _timeless(plan, node, vs: Vars, module: str):
    """Goals that find the solutions of `node` in the background graph
    (module:t/3, the RDFS closure), or None where it has none: a triple
    pattern, or joins and unions of them, with their filters (in which
    the time functions are errors: a background solution has no
    interval), unless a filter bounds the node's duration (node.timed)."""
    if node.timed or isinstance(node, Leaf) and isinstance(node.triple, ops.Unit):
        return None  # the empty group's solutions are instants, not background
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
            if node.triple.copy is not None:  # a background triple is there once: as an event's first copy
                goals.append(pl.Struct("=", vs.of(node.triple.copy), 0))
    elif isinstance(node, Unary) and isinstance(node.op, ops.Project) and node.op.evaluated:
        return None  # its rows are an instant's, the background's among them (_evaluated_subquery)
    elif isinstance(node, Unary) and isinstance(node.op, ops.Project):
        # its solutions once each, found with the variables it hides named
        # apart: the same name outside is another variable (bottom-up evaluation)
        child = plan.node(node.child)
        with vs.apart([v for v in child.vars if v not in node.vars]):
            found = _timeless(plan, child, vs, module)
        if found is None:
            return None
        v, found_all, distinct = tuple_term(vs, node.vars), vs.fresh(), vs.fresh()
        goals = [pl.Struct("findall", v, conj(found), found_all), pl.Struct("sort", found_all, distinct),
                 pl.Struct("member", v, distinct)]
    elif isinstance(node, Unary):
        found = _timeless(plan, plan.node(node.child), vs, module)
        if found is None:
            return None
        goals = found + unary_goals(node, vs, A("timeless"), A("timeless"))
    elif node.op.spec.timeless and node.op.spec.negated:  # MINUS, [NOT] EXISTS
        goals = _timeless_negation(plan, node, vs, module)
        if goals is None:
            return None
    elif node.op.spec.timeless:
        left = _timeless(plan, plan.node(node.left), vs, module)
        right = None if node.op.spec.optional else _timeless(plan, plan.node(node.right), vs, module)
        if node.op.spec.optional == "right":  # OPTIONAL
            if left is None:
                return None
            goals = left + _timeless_optional(plan, node, vs, module)
        elif node.op.spec.alternative:  # either side; a side with none adds nothing
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
    # no interval: the time functions are errors (cep_values.pl); a filter
    # sees the node's variables only (a FILTER sees its group's)
    ec = vs.expressions(A("timeless"), A("timeless"), only=node.vars)
    return goals + [ec.filter_goal(f) for f in node.filters]


def _timeless_optional(plan, node, vs: Vars, module: str) -> list:
    """After the goals of OPTIONAL's left side: its right side's background
    matches that meet the condition, or none. The variables only the right
    side binds are matched apart, then unified with the clause's: a value
    a later or enclosing pattern gives one must not steer the optional
    part (SPARQL evaluates it on its own; a mismatch drops the solution)."""
    left, right = plan.node(node.left), plan.node(node.right)
    own = [v for v in right.vars if v not in left.vars]
    with vs.apart(own) as outer:
        found = _timeless(plan, right, vs, module)
        ec = vs.expressions(A("timeless"), A("timeless"), only=node.vars)
        cond = [] if node.cond is None else [ec.filter_goal(node.cond)]
        inner = {v: vs.names[v] for v in own}
    if found is None:
        return []
    bind = [pl.Struct("=", outer[v], inner[v]) for v in own]
    return [pl.Struct(";", pl.Struct("*->", conj(found + cond), conj(bind)), T)]


def _timeless_negation(plan, node, vs: Vars, module: str):
    """The background solutions of MINUS or [NOT] EXISTS: its left side's,
    tested against its right side's (_negation); None where it has none
    (no left ones, or EXISTS with no right ones)."""
    left, right = plan.node(node.left), plan.node(node.right)
    found = _timeless(plan, left, vs, module)
    if found is None:
        return None
    ec_vars = tuple(left.vars) + tuple(v for v in right.vars if v not in left.vars)

    def cond():
        ec = vs.expressions(A("timeless"), A("timeless"), only=ec_vars)
        return [] if node.cond is None else [ec.filter_goal(node.cond)]
    test = _negation(node.op, left, right, plan.certain(right.id), vs, lambda: _timeless(plan, right, vs, module), cond)
    if test is None:
        return None if node.op is ops.Exists else found
    return found + [test]


def _negation(op, left, right, certain, vs: Vars, found, cond):
    """The test of MINUS, EXISTS or NOT EXISTS (`op`) on a left solution,
    its variables named in vs: whether a right solution that the goals
    `found()` give is compatible with it, shares a variable bound in both
    (MINUS: SPARQL 18.5, MINUS with no shared variable removes nothing),
    and satisfies the condition (the goals `cond()`) on their merge; None
    where `found()` is None (no right solution can occur). The right
    side is evaluated on its own, as SPARQL does: while `found` and `cond`
    are called, its variables are named apart (a value the left solution
    or an enclosing pattern gives must not steer it); its values of the
    shared ones are then compared with the left's, to tell which side
    binds them. A shared variable that every right solution binds
    (`certain`) and the left one binds is given the left one's value
    first: the same right solutions pass, found by it rather than all
    compared with it (a background lookup by the subject, not a scan)."""
    shared = [v for v in right.vars if v in left.vars]
    with vs.apart(right.vars) as mine:
        given = [ite(pl.Struct("var", mine[v]), T, pl.Struct("=", vs.names[v], mine[v])) for v in shared if v in certain]
        goals = found()
        pairs = [(mine[v], vs.names[v]) for v in shared]
        tests = cond()
    merged = [pl.Struct("=", x, r) for x, r in pairs]
    if goals is None:
        return None
    compatible = [pl.Struct(";", pl.Struct("var", x), pl.Struct(";", pl.Struct("var", r), pl.Struct("==", x, r)))
                  for x, r in pairs]
    shares = []
    if op is ops.Minus:
        shares = [F]
        for x, r in reversed(pairs):
            shares = [pl.Struct(";", conj([pl.Struct("nonvar", x), pl.Struct("nonvar", r)]), shares[0])]
    match = conj(given + goals + compatible + shares + merged + tests)
    return pl.Struct("\\+", pl.Struct("\\+", match)) if op is ops.Exists else pl.Struct("\\+", match)


def _seqright(step, opt, mand, scope, **_):
    """SeqRightJoin (OPTIONALSEQ): the optional left part, if any compatible
    one ended before the mandatory part starts, is joined; otherwise the
    mandatory part alone is a solution. Decided when the mandatory part
    occurs, since every optional candidate has ended by then."""
    n = step.id
    store = _store(step, "l")
    vs = Vars(scope)
    ts1, te1, ts2, te2, h, ans = (pl.Var(x) for x in ("Ts1", "Te1", "Ts2", "Te2", "H", "A"))
    ov, mv, out = tuple_term(vs, opt.vars), tuple_term(vs, mand.vars), tuple_term(vs, step.vars)
    insert = pl.Clause(pl.Struct(f"s{n}_l", ov, ts1, te1, pl.Var("_")),
                       (key_goal(vs, step.key, h), pl.Struct("assertz", _goal(store, h, ov, ts1, te1, 0)), F))
    cond = _cond_goals(step, vs, ts1, te2)
    match = conj([_goal(store, h, ov, ts1, te1), *interval_goals(step, ts1, te1, ts2, te2)] + cond)
    alone = _alone(step, mand, vs, ts2, te2, ans)
    joined = conj([match, pl.Struct(f"n{n}", out, ts1, te2, ans)])
    check = pl.Clause(pl.Struct(f"s{n}_r", mv, ts2, te2, ans),
                      (key_goal(vs, step.key, h), ite(pl.Struct("\\+", match), alone, joined)))
    return [insert, check, _ok_clause(step, scope)], [store + "/5"], store_scope(step), None


def _deferred_optional(step, mand, opt, scope, plan=None, graph=None, **_):
    """EqLeftJoin (EQUALSOPTIONAL) and LeftJoin (OPTIONAL): the optional part
    may still occur in the same group as the mandatory one, so the check
    waits for the end of the group (rules (14)-(15) for the interval test).
    With background knowledge, OPTIONAL's optional part is also looked up
    in the background graph (_timeless): a background solution is there at
    every instant, and the solution keeps the mandatory part's interval."""
    n = step.id
    eq = step.op.spec.store == "instant"

    def decide(vs, ts, te, h, ans):
        ts1, te1 = pl.Var("Ts1"), pl.Var("Te1")
        ov, out = tuple_term(vs, opt.vars), tuple_term(vs, step.vars)
        if eq:
            candidate = [_goal(_store(step, "r"), h, ov, ts, te)]
            mts = ts
        else:
            mts = pl.Var("MTs")
            candidate = [_goal(_store(step, "r"), h, ov, ts1, te1), *interval_goals(step, ts, te, ts1, te1),
                         pl.Struct("is", mts, pl.Struct("min", ts, ts1))]
            found = _timeless(plan, opt, vs, graph) if graph is not None and step.op.spec.timeless else None
            if found is not None:
                candidate = [pl.Struct(";", conj(candidate), conj(found + [pl.Struct("=", mts, ts)]))]
        match = conj(candidate + _cond_goals(step, vs, mts, te))
        alone = _alone(step, mand, vs, ts, te, ans)
        joined = conj([match, pl.Struct(f"n{n}", out, mts, te, ans)])
        return ite(pl.Struct("\\+", match), alone, joined)
    return _deferred(step, mand, opt, scope, decide)


def _minus(step, left, right, scope, plan=None, graph=None, **_):
    """Minus (MINUS), Exists and NotExists (FILTER [NOT] EXISTS): a left
    solution is kept unless (Exists: if) a right one within its interval
    passes the test (_negation). A right solution may still occur in the
    left one's last instant: decided at the end of the group, as OPTIONAL
    is. With background knowledge, the right side is also looked up in
    the background graph (_timeless): a background solution is there at
    every instant, so within every interval."""

    def decide(vs, ts, te, h, ans):
        ts1, te1 = pl.Var("Ts1"), pl.Var("Te1")

        def found():
            stored = [_goal(_store(step, "r"), h, tuple_term(vs, right.vars), ts1, te1),
                      *interval_goals(step, ts, te, ts1, te1)]
            background = _timeless(plan, right, vs, graph) if graph is not None and step.op.spec.timeless else None
            return stored if background is None else [pl.Struct(";", conj(stored), conj(background))]
        test = _negation(step.op, left, right, plan.certain(right.id), vs, found, lambda: _cond_goals(step, vs, ts, te))
        return conj([test, pl.Struct(f"n{step.id}", tuple_term(vs, step.vars), ts, te, ans)])
    return _deferred(step, left, right, scope, decide)


def _deferred(step, mand, opt, scope, decide):
    """The operators decided at the end of the group (OPTIONAL,
    EQUALSOPTIONAL, MINUS): a solution of the mandatory operand waits as
    pending, d<N>(Values, Start, End); one of the other is stored; the
    check clause ('$check') takes each pending one, and
    `decide(vs, Ts, Te, H, A)` is the goal that gives its outcome."""
    n = step.id
    opt_store, pending = _store(step, "r"), f"d{n}"
    vs = Vars(scope)
    ts, te, ts1, te1, h, ans = (pl.Var(x) for x in ("Ts", "Te", "Ts1", "Te1", "H", "A"))
    mv, ov = tuple_term(vs, mand.vars), tuple_term(vs, opt.vars)
    wait = pl.Clause(pl.Struct(f"s{n}_l", mv, ts, te, pl.Var("_")),
                     (pl.Struct("assertz", pl.Struct(pending, mv, ts, te)), F))
    insert = pl.Clause(pl.Struct(f"s{n}_r", ov, ts1, te1, pl.Var("_")),
                       (key_goal(vs, step.key, h), pl.Struct("assertz", _goal(opt_store, h, ov, ts1, te1, 0)), F))
    cvs = Vars(scope)
    check = pl.Clause(pl.Struct("$check", n, pl.Var("_"), ans), (
        pl.Struct("retract", pl.Struct(pending, tuple_term(cvs, mand.vars), ts, te)),
        key_goal(cvs, step.key, h),
        decide(cvs, ts, te, h, ans)))
    stores = [opt_store + "/5", pending + "/3"]
    return [wait, insert, _ok_clause(step, scope)], stores, store_scope(step), check


def _absence(step, left, right, scope, **_):
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
    vs = Vars(scope)
    ts1, te1, ts2, te2, h, d, ref = (pl.Var(x) for x in ("Ts1", "Te1", "Ts2", "Te2", "H", "D", "Ref"))
    lv, rv = tuple_term(vs, left.vars), tuple_term(vs, right.vars)
    pending = pl.Struct(store, h, d, lv, ts1, te1)
    insert = pl.Clause(pl.Struct(f"s{n}_l", lv, ts1, te1, pl.Var("_")), (
        key_goal(vs, step.key, h), pl.Struct("is", d, pl.Struct("+", te1, step.deadline)),
        pl.Struct("assertz", pending), F))
    found = conj([pl.Struct("clause", pending, T, ref), *interval_goals(step, ts1, te1, ts2, te2), pl.Struct("=<", te2, d)]
                 + _cond_goals(step, vs, ts1, te2))
    remove = pl.Clause(pl.Struct(f"s{n}_r", rv, ts2, te2, pl.Var("_")), (
        key_goal(vs, step.key, h), pl.Struct("forall", found, pl.Struct("erase", ref)), F))
    fvs = Vars(scope)
    v, ts, due, ans = tuple_term(fvs, step.vars), pl.Var("Ts"), pl.Var("Due"), pl.Var("A")
    fire = pl.Clause(pl.Struct("$absence_fire", n, due, ans), (
        pl.Struct("retract", pl.Struct(store, pl.Var("_"), due, v, ts, pl.Var("_"))),
        pl.Struct(f"n{n}", v, ts, due, ans)))
    first = pl.Var("D0")
    nxt = pl.Clause(pl.Struct("$absence_next", n, d), (
        pl.Struct(store, pl.Var("_"), first, pl.Var("_"), pl.Var("_"), pl.Var("_")),
        A("!"), pl.Struct("=", d, first)))
    return [insert, remove, fire, nxt, _ok_clause(step, scope)], [store + "/5"], store_scope(step), None


def unary_clauses(plan, node: Unary, scope, graph=None):
    """(clauses, store names, store scope, deferred check clause or None)
    of a Unary node: s<N>_u/4, what happens when a solution of its operand
    occurs. A subquery gives each of its solutions once, as every pattern
    does (solutions are sets, paper 4.2): it keeps those of the instant it
    has given (d<N>/3). `graph` as for step_clauses."""
    if isinstance(node.op, ops.Project) and node.op.evaluated:
        return _evaluated_subquery(plan, node, scope, graph)
    child = plan.node(node.child)
    vs = Vars(scope)
    ts, te, ans = pl.Var("Ts"), pl.Var("Te"), pl.Var("A")
    head = pl.Struct(f"s{node.id}_u", tuple_term(vs, child.vars), ts, te, ans)
    if node.id in deferred_nodes(plan):  # joined at the window's evaluations ('$wjoin', cep.compile.services)
        goals = [touch_goal(node, vs, te)]
    else:
        goals = unary_goals(node, vs, ts, te)
    out = tuple_term(vs, node.vars)
    stores = []
    if isinstance(node.op, ops.Project):
        seen = f"d{node.id}"
        stores = [seen + "/3"]
        goals += [_unseen_solution(seen, out, ts, te), pl.Struct("assertz", pl.Struct(seen, out, ts, te))]
    clause = pl.Clause(head, (*goals, pl.Struct(f"n{node.id}", out, ts, te, ans)))
    return [clause], stores, "group" if stores else None, None


def _evaluated_subquery(plan, node: Unary, scope, graph=None):
    """A subquery with its own aggregation or cut (ops.Project.evaluated):
    its operand's solutions of an instant wait, once each, as d<N>(Values,
    Start, End); at the instant's end its check makes its rows
    (_subquery_rows) of them and, with background knowledge, of its
    operand's solutions in the background alone (_timeless), which are
    there at every instant: solutions over [t, t]. Each row is a solution
    of the node."""
    child, n = plan.node(node.child), node.id
    pending = f"d{n}"
    vs = Vars(scope)
    ts, te, ans, now = (pl.Var(x) for x in ("Ts", "Te", "A", "Now"))
    cv = tuple_term(vs, child.vars)
    wait = pl.Clause(pl.Struct(f"s{n}_u", cv, ts, te, pl.Var("_")), (
        _unseen_solution(pending, cv, ts, te), pl.Struct("assertz", pl.Struct(pending, cv, ts, te)), F))
    cvs = Vars(scope)
    found = [pl.Struct("retract", pl.Struct(pending, tuple_term(cvs, child.vars), ts, te))]
    background = _timeless(plan, child, cvs, graph) if graph is not None else None
    if background is not None:
        found = [pl.Struct(";", conj(found), conj(background + [pl.Struct("=", ts, now), pl.Struct("=", te, now)]))]
    ovs = Vars(scope)
    rows = _subquery_rows(node, child, cvs, found, ts, te, now, ovs)
    check = pl.Clause(pl.Struct("$check", n, now, ans), (*rows, pl.Struct(f"n{n}", tuple_term(ovs, node.vars), ts, te, ans)))
    return [wait], [pending + "/3"], "group", check


def _subquery_rows(node: Unary, child, cvs: Vars, found: list, ts, te, now, ovs: Vars, instants=None) -> list:
    """Goals that give the rows of an evaluated subquery one by one: each
    solution of `found` (the operand's, in `cvs`, over [ts, te]) collected,
    the rows made of them at `now` (cep_window:cep_subquery_rows/6: the
    groups' rows of '$wrow'(sq(N), ...), or the solutions with the values
    of their ORDER BY keys), ordered and cut; a row's values are bound to
    `ovs`'s variables, its interval to [ts, te]. With `instants` (a list
    of instants, over a window's content) instead of `now`, the rows of
    each of those instants and each end of a solution, made of the
    solutions that end then (cep_window:cep_subquery_rows_at/6)."""
    op, n = node.op, node.id
    query = op.as_query()
    sols, rows, m = pl.Var(f"Sols{n}"), pl.Var(f"Rows{n}"), pl.Var(f"M{n}")
    cv = tuple_term(cvs, child.vars)
    if op.grouping is not None:  # the fields of '$wrow': the SELECT clause, then ORDER BY's hidden ones
        kind = pl.Struct("group", pl.PList([func_term(a) for _, a in op.grouping.aggregates]))
        collect = pl.Struct("findall", pl.Struct("s", cv, ts, te), conj(found), sols)
    else:  # a solution's row: its values, then ORDER BY's hidden fields
        kind = A("plain")
        fields = [cvs.of(v) for v in node.vars]
        goals, _ = sort_goals(cvs.expressions(ts, te), query, fields)
        collect = pl.Struct("findall", pl.Struct("r", pl.PList(fields), ts, te), conj(found + goals), sols)
    names, hidden = ops.sort_fields(query)
    at = [v.name for v in node.vars] + [var.name for var, _ in hidden]
    order = pl.PList([pl.Struct("desc" if k.descending else "asc", at.index(name)) for k, name in zip(op.order, names)])
    spec = pl.Struct("sub", kind, order, op.offset, A("inf") if op.limit is None else op.limit)
    rows_of = q(WINDOW, "cep_subquery_rows", m, n, spec, sols, now, rows) if instants is None else \
        q(WINDOW, "cep_subquery_rows_at", m, n, spec, instants, sols, rows)
    return [collect, pl.Struct("context_module", m), rows_of,
            pl.Struct("member", pl.Struct("r", pl.PList([ovs.of(v) for v in node.vars], pl.Var("_")), ts, te), rows)]


def unary_goals(node: Unary, vs: Vars, ts, te) -> list:
    """Goals that make a solution of the node from one of its operand's
    (variables in vs, interval [ts, te]), DISTINCT aside."""
    op = node.op
    if isinstance(op, ops.Project):
        return []
    if service_of(op) is not None:  # SERVICE, OPTIONAL { SERVICE }
        return [service_goal(node, vs, ts, te, te)]
    if not is_table(op):  # BIND
        return [_bind_goal(op, vs, vs.expressions(ts, te))]
    # a table: evaluated on its own (its BINDs see its variables only),
    # then joined by unification, as background data is
    tv = Vars(vs.scope, prefix="T")
    own = sorted(ops.variables(op), key=lambda v: v.name)
    for v in own:
        tv.of(v)
    return _table_goals(op, tv) + [pl.Struct("=", tuple_term(tv, own), tuple_term(vs, own))]


def _bind_goal(op: ops.Extend, vs: Vars, ec):
    """BIND: the variable is the expression's value, unbound where it is an error."""
    goals, value = ec.value(op.expr)
    return ite(conj(goals), pl.Struct("=", vs.of(op.var), value), T)


def _table_goals(op, tv: Vars) -> list:
    if isinstance(op, ops.Service):
        raise QueryError("SERVICE is joined with a pattern that matches events (its join key comes from "
                         "there), not with inline data alone", op.pos)
    if isinstance(op, ops.Values):
        rows = [pl.Struct("v", *(pl.Var("_") if x is None else terms.to_prolog(x) for x in row)) if row else A("v")
                for row in op.rows]
        return [pl.Struct("member", tuple_term(tv, op.vars), pl.PList(rows))]
    # no interval: the time functions are errors (cep_values.pl)
    timeless = tv.expressions(A("timeless"), A("timeless"))
    if isinstance(op, ops.Extend):
        return _table_goals(op.pattern, tv) + [_bind_goal(op, tv, timeless)]
    if isinstance(op, ops.Filter):
        return _table_goals(op.pattern, tv) + [timeless.filter_goal(op.cond)]
    if isinstance(op, ops.Union_):
        return [pl.Struct(";", conj(_table_goals(op.left, tv)), conj(_table_goals(op.right, tv)))]
    return _table_goals(op.left, tv) + _table_goals(op.right, tv)  # a Join


def _unseen_solution(name, v, ts, te):
    seen = pl.Var("V0")
    return pl.Struct("\\+", conj([pl.Struct(name, seen, ts, te), pl.Struct("=@=", seen, v)]))


def _cond_goals(step, vs, ts, te):
    if step.cond is None:
        return []
    ec = vs.expressions(ts, te)
    return [ec.filter_goal(step.cond)]


def _alone(step, mand, vs, ts, te, ans):
    """The mandatory solution alone: the optional part's variables stay unbound."""
    values = []
    for v in step.vars:
        values.append(vs.of(v) if v in mand.vars else pl.Var(f"_U{len(values)}"))
    out = pl.Struct("v", *values) if values else A("v")
    return pl.Struct(f"n{step.id}", out, ts, te, ans)


def _ok_clause(step, scope):
    """ok<N>(Values, Start, End): N's window and filters hold (the consuming
    policies test a candidate with it before they take it)."""
    vs = Vars(scope)
    ts, te = pl.Var("Ts"), pl.Var("Te")
    head = pl.Struct(f"ok{step.id}", tuple_term(vs, step.vars), ts, te)  # names the variables first
    return pl.Clause(head, tuple(ok_goal(step, vs, ts, te)) or (T,))


# the clause builder of each operator: (step, left node, right node,
# scope (cep.compile.expr.Scope), hoist=, plan=, graph=) -> (clauses, store names, store scope, deferred
# check clause or None). An operator without one cannot be compiled.
BUILDERS = {
    ops.SeqJoin: _seq,
    ops.Join: _join,
    ops.EqJoin: _join,
    ops.Union_: _union,
    ops.SeqRightJoin: _seqright,
    ops.EqLeftJoin: _deferred_optional,
    ops.LeftJoin: _deferred_optional,
    ops.SeqAbsence: _absence,
    ops.Minus: _minus,
    ops.Exists: _minus,
    ops.NotExists: _minus,
    ops.During: _join,
    ops.Starts: _join,
    ops.Finishes: _join,
    ops.Meets: _join,
    ops.Overlaps: _join,
}


_missing = [cls.__name__ for cls in ops.BINARY if cls not in BUILDERS]


if _missing:
    raise TypeError(f"operators without a clause builder: {', '.join(_missing)}")
