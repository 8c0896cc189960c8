"""Windowed queries -> the clauses prolog/cep_window.pl evaluates them with.
A query grouped without a window is evaluated the same way, at each
instant, over the solutions that end at it (window spec instant).

A windowed query's pattern compiles like any other's; its solutions are
stored ('$wstore') instead of answered, and at each evaluation the window's
solutions become rows (docs/language.md, "Windows and aggregates"):

    plain    a row per solution ('$project', the query's own projection);
    group    SPARQL's GROUP BY: '$wkey' gives a solution's group, '$wargs'
             the arguments of the aggregates, '$wrow' a group's row (its
             keys and aggregate values, then HAVING and the projection);
    extend   C-SPARQL's AGGREGATE: '$wkey'/4 and '$wargs'/6 per extension,
             '$wrow' a solution's row with the extensions' values.

Aggregate values reach '$wrow' as values or '$error' (the variable stays
unbound), group keys with '$unbound' for an unbound key variable.

Inside a window, OPTIONAL, MINUS, [NOT] EXISTS and OPTIONALSEQ, and every
node above them (the plan's `content` nodes, cep.binarize), are evaluated
at each evaluation over the window's content (RSP-QL's eval(SDS, SE, t)):
the solutions of their other operands are stored per window under
part(Q, Node, Side) ('$wstore', as a query's are), and w<N>(Q, In, Values,
Start, End) gives node N's solutions over the window In (time(K, Lo, Hi):
the window (Lo, Hi] closed at K*Step; count(Cut, Tau, Low): a count window),
'$wsolve'/5 the query's. A part of a query whose groups have windows of
their own (p(Q, J), _part_items) is evaluated so too over its own window,
under its own name (content_roots). A subquery with its own aggregation
or cut among the content nodes makes its rows at each instant the window
holds, as it does outside a window: the solutions of its instants leaf
(Unary.instants: every event's interval) are stored per window under
part(Q, Node, i).
A solution matched by background triples alone has the interval
timeless/timeless (it is in every window); the query's are those with an
event. The empty group (a Unary of ops.Unit over a leaf of every event)
has one solution per evaluation, at the window's close; the events it
keeps per window are the content its query's report policies read
('$wunit'/2).
"""

from __future__ import annotations

from types import SimpleNamespace

from cep import prolog as pl
from cep import terms
from cep.algebra import ops
from cep.algebra.ops import is_table
from cep.algebra.copies import reads_copies
from cep.binarize import Leaf, PartRef, Unary, answers_always, leading_parts, split_windows
from cep.compile.clauses import LIVE, PATHS, WINDOW, Vars, func_term, tuple_term
from cep.compile.expr import conj, ite, q
from cep.compile.leaves import path_term
from cep.compile.projection import sort_goals
from cep.compile.services import deferred_services, join_goals, join_items
from cep.compile.steps import _bind_goal, _negation, _subquery_rows, _table_goals, _timeless, interval_goals, unary_goals
from cep.errors import QueryError

A, T, F = pl.Atom, pl.Atom("true"), pl.Atom("fail")
DYNAMIC = (("$wsol", 7), ("$wpart", 6), ("$wgone", 2), ("$wnext", 2), ("$wdone", 2), ("$wlast", 2), ("$wcount", 2),
           ("$wcut", 2), ("$wset", 1), ("$wseen", 2), ("$wrun", 2), ("$wown", 1))


def content_part(index, node_id, side):
    """The name the solutions of a content node's operand are stored under
    for the query of that index: part(Q, Node, Side), Side l, r or u."""
    return pl.Struct("part", index, node_id, A(side))


def content_roots(plan) -> list:
    """(index, key, root) of each query, or part of a query whose groups
    have windows of their own, evaluated over its window's content: index
    the query's, key the name its content is evaluated under, the index or
    p(Query, Part) for a part after its first (whose solutions are the
    query's own, _part_items)."""
    roots = []
    for i, out in enumerate(plan.outputs):
        for part in out.parts or (None,):
            root = out.root if part is None else part.root
            if out.query.evaluated and plan.node(root).content:
                roots.append((i, i if part is None or part.index == 0 else pl.Struct("p", i, part.index), root))
    return roots


def content_keys(plan) -> dict:
    """Node id -> the keys (content_roots) under which its content steps
    store their operands' solutions: those of the roots that reach it."""
    keys = {}
    for _, key, root in content_roots(plan):
        todo, seen = [root], set()
        while todo:
            node = plan.node(todo.pop())
            if node.id in seen or not node.content:
                continue
            seen.add(node.id)
            keys.setdefault(node.id, []).append(key)
            todo += [node.child] if isinstance(node, Unary) else [node.left, node.right]
    return keys


def window_items(plan, chaining, vars_of, node_vars_of, graph=None) -> list:
    """The clauses of every windowed query of the plan, and of every
    grouped subquery (its '$wkey', '$wargs' and '$wrow' of sq(Node), for
    cep_window:cep_subquery_rows/6); `vars_of(index)` makes the variables
    of a clause of the query of that index, `node_vars_of(id)` of a plan
    node (cep.compile.clauses.Vars); `graph`: the module of the background
    triples the content nodes read (cep.compile.program)."""
    indexes = [i for i, out in enumerate(plan.outputs) if out.query.evaluated]
    subqueries = [n for n in plan.nodes if isinstance(n, Unary) and isinstance(n.op, ops.Project)
                  and n.op.grouping is not None]
    clauses = []
    for n in subqueries:
        clauses += group_items(pl.Struct("sq", n.id), n.op.as_query(), plan.node(n.child).vars,
                               lambda n=n: node_vars_of(n.id))
    if not indexes:
        return _together(clauses)
    feeding = [i for i in indexes if chaining is not None and plan.outputs[i].query.name in chaining.producers]
    for i in feeding:
        _check_feeding(plan.outputs[i], chaining)
    if feeding:
        # producers before the queries that read them (through any rules): an
        # evaluation at tau feeds its triples back before a reader's at tau
        rank = {name: r for r, name in enumerate(chaining.order())}
        indexes.sort(key=lambda i: rank[plan.outputs[i].query.name])
    items = [pl.Directive(pl.Struct("dynamic", pl.indicator(n, a))) for n, a in DYNAMIC]
    Q, V, Ts, Te, Fst, Lst, H, Spec, M, K, Args = (pl.Var(n) for n in (
        "Q", "V", "Ts", "Te", "F", "L", "H", "Spec", "M", "K", "Args"))
    _ = pl.Var("_")
    # a solution is stored once (solutions are sets; those of two copies of
    # a repeated event differ in their hidden copy variables, cep.algebra.copies), with the closes of the
    # windows that hold it; a grouped query over a time-based window adds
    # it to its pane's aggregates at once, and keeps only what tells a
    # solution seen (cep_window:cep_accumulate/6)
    joins = join_items(plan, vars_of)  # SERVICE joined at the evaluations: its solutions stored as they are
    # (a query whose groups have windows of their own joins its parts' solutions first: stored as they come)
    grouped = conj([pl.Struct("$wkind", Q, pl.Struct("group", _)), pl.Struct("=", Spec, pl.Struct("time", _, _, _, _)),
                    pl.Struct("\\+", pl.Struct("$wparts", Q, _))]
                   + ([pl.Struct("\\+", pl.Struct("$wdeferred", Q))] if joins else []))
    # the events a window keeps never hold its query's own fed triples
    # (cep_window:feed/6 marks its parts '$wown' while they are fed)
    own = [pl.Struct("\\+", pl.Struct("$wown", Q))] if any(keeps_events(plan.outputs[i].query)
                                                           for i in feeding) else []
    items.append(pl.Clause(pl.Struct("$wstore", Q, V, Ts, Te), (
        *own,
        ite(pl.Struct("=", Q, pl.Struct("part", pl.Var("Q0"), _, _)),  # an operand of a content node
            pl.Struct("$window", pl.Var("Q0"), Spec), pl.Struct("$window", Q, Spec)),
        q(WINDOW, "cep_window_span", Spec, Ts, Te, Fst, Lst),
        pl.Struct("variant_sha1", V, H),
        # a triple that came twice in its instant is in a [TRIPLES n] window
        # while its later place is (cep_window:cutoff/6)
        ite(conj([pl.Struct("=", Spec, pl.Struct("count", _, A("triples"))),
                  pl.Struct("$wsol", H, Q, pl.Var("P0"), _, _, Ts, Te)]),
            conj([pl.Struct("<", pl.Var("P0"), Lst), pl.Struct("retractall", pl.Struct("$wsol", H, Q, _, _, _, Ts, Te))]),
            T),
        pl.Struct("\\+", pl.Struct("$wsol", H, Q, _, _, _, Ts, Te)),
        ite(grouped,
            conj([pl.Struct("assertz", pl.Struct("$wsol", H, Q, Lst, Fst, A("-"), Ts, Te)),
                  pl.Struct("$wkey", Q, V, K), pl.Struct("$wargs", Q, V, Ts, Te, Args),
                  pl.Struct("context_module", M),
                  q(WINDOW, "cep_accumulate", M, Q, Lst, Fst, K, Args)]),
            pl.Struct("assertz", pl.Struct("$wsol", H, Q, Lst, Fst, V, Ts, Te))))))
    for i in indexes:
        query = plan.outputs[i].query
        out = plan.outputs[i]
        # a query with parts is evaluated when its first part's window is (and its other leading parts')
        window = out.parts[0].window if out.parts else query.window
        clauses += _query_items(i, query, window, plan.output_vars(out), lambda i=i: vars_of(i))
        if plan.outputs[i].parts:
            clauses += _part_items(i, plan, plan.outputs[i], vars_of(i))
    clauses += [_feed_clause(i, plan.outputs[i].query) for i in feeding]
    clauses += joins
    clauses += _content_items(plan, indexes, vars_of, graph)
    if not any(plan.outputs[i].parts for i in indexes):  # '$wstore' asks
        clauses.append(pl.Clause(pl.Struct("$wparts", _, _), (F,)))
    return items + _together(clauses)


def _together(clauses) -> list:
    """Each predicate's clauses together, in their order."""
    order = {}
    for c in clauses:
        order.setdefault((c.head.functor, len(c.head.args)), []).append(c)
    return [c for group in order.values() for c in group]


def check_windows(queries, most: int):
    """Each time-based window is evaluated at most `most` times with a
    given instant in it (cep.limits.Limits.window_evaluations): its range
    over its step, or over COMPUTED EVERY's period. Every evaluation costs
    work for every solution in the window, so a STEP of 1ms over a RANGE
    of 1h (3.6 million evaluations per event) is refused here rather
    than left to run for minutes and overflow Prolog's stack. With groups
    with windows of their own, the windows the query is evaluated by:
    its leading parts' (binarize.leading_parts)."""
    for query in queries:
        split = split_windows(query)
        windows = [query.window] if split is None else [split[1][j][1] for j in leading_parts(split[0])]
        for w in windows:
            if w is None or w.count is not None or w.unbounded:  # an unbounded window: each close once
                continue
            every = query.every_ms or w.step_ms
            evaluations = -(-w.range_ms // every)
            if evaluations > most:
                period = "COMPUTED EVERY" if query.every_ms else "STEP"
                raise QueryError(f"the window of {query.name} is evaluated {evaluations:,} times with each "
                                 f"instant in it (RANGE {_span(w.range_ms)} / {period} {_span(every)}), more "
                                 f"than the limit of {most:,}: make the {period} longer or the RANGE shorter "
                                 f"(or raise the limit: cep run --max-window-evaluations, "
                                 f"cep.limits.Limits.window_evaluations)", w.pos or query.pos)


def _span(ms: int) -> str:
    """A span in C-SPARQL's units, as a window is written."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def _check_feeding(out, chaining):
    """A windowed CONSTRUCT whose triples are read (the plan's Output): each
    evaluation's rows are fed back as events at the evaluation time (docs/
    language.md, "Windows and aggregates"), before any later event. Refused
    where that order cannot hold. A query whose groups have windows of their
    own is evaluated when its leading parts' windows are: those are the
    windows whose evaluations feed."""
    query = out.query
    if out.parts:
        counted = next((w for w in out.evaluated_by if w.count is not None), None)
        if counted is not None:
            raise QueryError(f"the triples of {query.name}, a CONSTRUCT evaluated when a count window of "
                             f"its groups is (the last {counted.count} {counted.counts}), are read by another "
                             f"query: only time-based windows feed their results back (a count window is "
                             f"evaluated at every instant of the stream); give the groups it is evaluated by "
                             f"(its first, and each UNION operand's first) time-based windows", counted.pos or query.pos)
    elif query.window is None or query.window.count is not None:
        over = "grouped without a window" if query.window is None else "over a count window"
        raise QueryError(f"the triples of {query.name}, a CONSTRUCT {over}, are read by "
                         f"another query: only time-based windows feed their results back", query.pos)
    if any(isinstance(x, str) and x.startswith("_:") for t in query.template for x in (t.s, t.p, t.o)):
        raise QueryError(f"the triples of {query.name}, a CONSTRUCT over a window, are read by another "
                         f"query: its template may not hold blank nodes", query.pos)
    for e in chaining.edges:
        if e.producer == query.name and e.negative:
            raise QueryError(f"{e.consumer} reads the triples of {query.name}, a CONSTRUCT over a "
                             f"window, in an optional part: its answers would depend on the absence "
                             f"of triples fed back after the instant was decided; read them in a "
                             f"mandatory part", query.pos)
    for names, _ in chaining.cycles():
        if query.name in names:
            loop = " -> ".join(names + (names[0],))
            raise QueryError(f"{query.name}, a CONSTRUCT over a window, is in the cycle {loop}: the "
                             f"results of a window are fed back only into rules that do not feed it",
                             query.pos)


def _feed_clause(index, query):
    """'$wfeed'(Q, Fields, Triples): the template triples of one reported
    row (its fields: the template's variables), those that are RDF. A rule
    set without such a query has no '$wfeed'/3 (cep_window:feed/6)."""
    names = ops.template_fields(query.template)
    fields = {name: pl.Var(f"F{i}") for i, name in enumerate(names)}
    slot = lambda x: fields.get(x.name, pl.Var("_")) if isinstance(x, ops.Var) else terms.to_prolog(x)
    template = pl.PList([pl.Struct("t", slot(t.s), slot(t.p), slot(t.o)) for t in query.template])
    return pl.Clause(pl.Struct("$wfeed", index, pl.PList(list(fields.values()), pl.Var("_")), pl.Var("Tr")),
                     (pl.Struct("include", A("$derivable"), template, pl.Var("Tr")),))


def empty_rows(query) -> bool:
    """Whether every evaluation of the query's window gives a row, an
    empty window's too: aggregates without GROUP BY are one group, empty
    over an empty window (SPARQL 1.1, 11.2: COUNT(*) is 0), and the empty
    group has its one solution over any window (reads_window), as has a
    UNION operand beside the first of groups with windows of their own
    that holds none (binarize.answers_always). A query grouped without a
    window is evaluated only at instants with a solution (docs/
    language.md, "Empty windows")."""
    g = query.grouping
    if not query.windows:
        return False
    if g is not None and g.keys == () or reads_window(query):
        return True
    split = split_windows(query)
    return split is not None and answers_always(split[0])


def reads_window(query) -> bool:
    """Whether the query's window holds an empty group (ops.Unit): its one
    solution is there at every evaluation, and the report policies read
    the window's events, its content (docs/language.md, "The empty group")."""
    return query.window is not None and next(ops.units(query.pattern), None) is not None


def keeps_events(query) -> bool:
    """Whether the query's windows keep their events: for an empty group
    (reads_window), and for a subquery with its own aggregation or cut,
    which makes its rows at each instant a window holds (cep.binarize)."""
    return query.window is not None and (reads_window(query) or any(
        isinstance(op, ops.Project) and op.evaluated for op in ops.walk(query.pattern)))


def _spec(w, query):
    if w is None:  # grouped without a window: the answers of one instant
        return A("instant")
    if w.count is not None:  # the last N events or triples (cep_window:cutoff/6)
        # a query that reads the stream as a set counts an event's copies once
        unit = "events_once" if w.counts == "events" and not reads_copies(query) else w.counts
        return pl.Struct("count", w.count, A(unit))
    # RSP-QL's t0, or none: closes at the multiples of the step, with no first window
    origin = A("none") if w.t0_ms is None else w.t0_ms
    width = A("inf") if w.unbounded else w.range_ms  # RANGE UNBOUNDED
    return pl.Struct("time", width, w.step_ms, query.every_ms or w.step_ms, origin)


def _part_items(index, plan, out, vs) -> list:
    """A query whose groups have windows of their own (cep.binarize.
    split_windows; docs/language.md, "A window per pattern"): its first
    part's solutions are stored as the query's own, so the query is
    evaluated when that part's window is (and, '$wleads'(Q, Parts), when
    those of the other parts that give it solutions on their own are:
    cep.binarize.leading_parts); each other part's are stored
    under p(Query, Part) with its window ('$window'(p(Q, J), Spec), which
    cep_close does not evaluate on its own), and '$wparts'(Q, Parts) lists
    them. At each evaluation '$wcombine'(Q, Contents, V, Start, End) joins
    the parts' solutions in their windows (Contents: a list of s(V, S, E)
    per part) into the query's: V of the query's variables, over the span
    of the parts it holds. A part that shares variables with the parts
    before it is indexed on them once per evaluation (cep_window:
    cep_part_index/4), and each solution joined so far finds its partners
    by a lookup (cep_part_member/3) rather than a scan of the part."""
    items = [pl.Clause(pl.Struct("$window", pl.Struct("p", index, part.index), _spec(part.window, out.query)))
             for part in out.parts[1:]]
    items += [pl.Clause(pl.Struct("$wkind", pl.Struct("p", index, part.index), A("plain")))
              for part in out.parts[1:]]
    items.append(pl.Clause(pl.Struct("$wparts", index, pl.PList(
        [pl.Struct("-", pl.Struct("p", index, part.index), _spec(part.window, out.query)) for part in out.parts[1:]]))))
    # the other parts that give the query solutions on their own (UNION): it is evaluated when their windows are
    leads = [j for j in leading_parts(out.combine) if j != 0]
    if leads:
        items.append(pl.Clause(pl.Struct("$wleads", index, pl.PList([pl.Struct("p", index, j) for j in leads]))))
    served = {part: chain for (i, part), chain in deferred_services(plan).items() if i == index}
    if served:  # each evaluation gets its own maintenance of the views first (cep_window:cep_window_due/3)
        items.append(pl.Clause(pl.Struct("$wserved", index)))
    contents = [vs.fresh() for _ in out.parts]
    spans = [vs.fresh() for _ in out.parts]
    values = _values(vs, out.vars)  # names every variable before the conditions read them
    indexes, bound, tables = [], set(), []  # the index goals; the variables of the parts joined so far

    def goals(op) -> list:
        if isinstance(op, PartRef):
            part = out.parts[op.index]
            part_vars = plan.node(part.root).vars
            # a part whose SERVICEs are joined at the evaluations: its stored
            # solutions leave their variables unbound, the views joined here
            chain = served.get(op.index, [])
            unbound = set(part_vars) - set(plan.node(chain[-1].child).vars) if chain else set()
            key = [x for x in part_vars if x in bound and x not in unbound]
            bound.update(part_vars)
            s, e = vs.fresh(), vs.fresh()
            sol = pl.Struct("s", tuple_term(vs, part_vars), s, e)
            span = pl.Struct("=", spans[op.index], pl.Struct("i", s, e))
            joined = join_goals(chain, vs, s, e, part_vars)
            if not key:
                return [pl.Struct("member", sol, contents[op.index]), span, *joined]
            # the index: the part's solutions by their values of the key
            # (a pattern of its own variables)
            own = {x: vs.fresh() for x in part_vars}
            pattern = pl.Struct("s", pl.Struct("v", *own.values()), pl.Var("_"), pl.Var("_"))
            index = vs.fresh()
            indexes.append(q(WINDOW, "cep_part_index", contents[op.index], pattern,
                             pl.Struct("k", *[own[x] for x in key]), index))
            return [q(WINDOW, "cep_part_member", index, pl.Struct("k", *[vs.of(x) for x in key]), sol), span,
                    *joined]
        if is_table(op):  # inline data (after the first part): its rows, joined by unification
            tv = Vars(vs.scope, prefix=f"T{len(tables)}")
            tables.append(op)
            own = sorted(ops.variables(op), key=lambda v: v.name)
            for v in own:
                tv.of(v)
            return _table_goals(op, tv) + [pl.Struct("=", tuple_term(tv, own), tuple_term(vs, own))]
        if isinstance(op, ops.Join):
            return goals(op.left) + goals(op.right)
        if isinstance(op, ops.Filter):
            span, tc = timed(op, op.cond, op.pattern)
            return goals(op.pattern) + span + [tc.filter_goal(op.cond)]
        if isinstance(op, ops.Extend):  # BIND: unbound where the expression is an error
            span, tc = timed(op, op.expr, op.pattern)
            return goals(op.pattern) + span + [_bind_goal(op, vs, tc)]
        if isinstance(op, ops.Union_):  # either side's solutions, the other side's variables unbound
            before = set(bound)
            left = goals(op.left)
            bound.intersection_update(before)  # the right side is looked up by what is bound before UNION
            right = goals(op.right)
            bound.update(combined_vars(op.left))
            return [pl.Struct(";", conj(left), conj(right))]
        if isinstance(op, (ops.Minus, ops.Exists, ops.NotExists)):
            # each left solution tested as SPARQL says (steps._negation): the right side evaluated
            # apart and compared on the shared variables, the condition on the merge
            left = goals(op.left)
            before = set(bound)

            def cond():
                if op.cond is None:
                    return []
                span, tc = timed(op, op.cond, op.left, op.right)
                return span + [tc.filter_goal(op.cond)]
            sides = SimpleNamespace(vars=combined_vars(op.left)), SimpleNamespace(vars=combined_vars(op.right))
            test = _negation(type(op), *sides, certain(op.right), vs, lambda: goals(op.right), cond)
            bound.intersection_update(before)  # the right side binds nothing
            return left + [test]
        # OPTIONAL: the right side's solutions compatible with the left one
        # (and its condition), or the left one alone if there is none
        outside = set(bound)
        left = goals(op.left)  # first: the right side is looked up by what the left binds
        after_left = set(bound)
        right = optional_side(op)
        # SPARQL evaluates OPTIONAL on its operands alone: a variable of the right side that the left
        # does not bind but a part joined before does must not decide whether the left one is alone
        # ({ OPTIONAL { P } WINDOW ... } after the first part: whether P has a solution at all)
        loose = (set(combined_vars(op.right)) & outside) - set(combined_vars(op.left))
        if not loose:
            return left + [ite(pl.Struct("\\+", conj(right)), T, conj(right))]
        joined = set(bound)
        bound.intersection_update(after_left)  # looked up as the first time
        with vs.apart(loose):
            alone = optional_side(op)
        bound.update(joined)
        return left + [ite(pl.Struct("\\+", conj(alone)), T, conj(right))]

    def optional_side(op) -> list:
        side = goals(op.right)
        if op.cond is not None:  # read on the joined solution (SPARQL's LeftJoin)
            span, tc = timed(op, op.cond, op.left, op.right)
            side += span + [tc.filter_goal(op.cond)]
        return side

    def timed(op, expr, *operands):
        """(goals, compiler) of an expression on op's solutions: it sees the
        variables of op's operands alone (SPARQL evaluates op on them:
        a value that a part joined before gives is not there), and its
        time functions read the span of the parts a solution holds."""
        only = {v for x in operands for v in combined_vars(x)}
        if not ops.expr_uses(expr, ops.TIME_FUNCTIONS):  # (compiled where it is: names apart in MINUS's right)
            return [], vs.expressions(vs.fresh(), vs.fresh(), only)
        held = [spans[x.index] for x in ops.walk(op) if isinstance(x, PartRef)]
        s, e = vs.fresh(), vs.fresh()
        return [q(WINDOW, "cep_span", pl.PList(held), s, e)], vs.expressions(s, e, only)

    def combined_vars(op) -> tuple:
        """The variables op's solutions may bind, in a fixed order."""
        def of(op) -> set:
            if isinstance(op, PartRef):
                return set(plan.node(out.parts[op.index].root).vars)
            if is_table(op):
                return ops.variables(op)
            if isinstance(op, ops.Extend):
                return of(op.pattern) | {op.var}
            if isinstance(op, ops.Filter):
                return of(op.pattern)
            if isinstance(op, (ops.Minus, ops.Exists, ops.NotExists)):
                return of(op.left)
            return of(op.left) | of(op.right)
        return tuple(sorted(of(op), key=lambda v: v.name))

    def certain(op) -> set:
        """Variables every solution of op binds (by which MINUS's and
        EXISTS's right side is looked up; fewer is only slower)."""
        if isinstance(op, PartRef):
            return plan.certain(out.parts[op.index].root)
        if isinstance(op, ops.Join):
            return certain(op.left) | certain(op.right)
        if isinstance(op, (ops.Filter, ops.Extend)):
            return certain(op.pattern)
        if isinstance(op, (ops.Minus, ops.Exists, ops.NotExists)):
            return certain(op.left)
        return set()

    s, e = pl.Var("S"), pl.Var("E")
    joined = goals(out.combine)
    body = indexes + joined + [q(WINDOW, "cep_span", pl.PList(spans), s, e)]
    items.append(pl.Clause(pl.Struct("$wcombine", index, pl.PList(contents), values, s, e),
                           tuple(body)))
    return items


def _query_items(index, query, window, root_vars, vars_of) -> list:
    g = query.grouping
    items = [pl.Clause(pl.Struct("$window", index, _spec(window, query))),
             pl.Clause(pl.Struct("$wreport", index, A(query.report)))]
    if query.window is not None and query.window.policy in ("change", "nonempty"):
        # RSP-QL's report policies that skip evaluations (cep_window:reports/5); the
        # periodic one is COMPUTED EVERY's period, the window close the default
        items.append(pl.Clause(pl.Struct("$wpolicy", index, A(query.window.policy))))
    if g is None:
        kind = A("plain")
    elif g.keys is not None:
        kind = pl.Struct("group", pl.PList([func_term(a) for _, a in g.aggregates]))
    else:
        kind = pl.Struct("extend", pl.PList([func_term(a) for _, a, _ in g.extensions]))
    items.append(pl.Clause(pl.Struct("$wkind", index, kind)))
    if empty_rows(query):  # cep_window:rows/6, begin_empty/2
        items.append(pl.Clause(pl.Struct("$wempty", index)))
    # rows are a set where SPARQL makes them one: grouped rows, DISTINCT, and
    # CONSTRUCT (a set of triple occurrences)
    if g is not None and g.keys is not None or query.distinct or query.form == "construct":
        items.append(pl.Clause(pl.Struct("$wset", index)))
    if query.form == "construct":  # a stream timestamped at the evaluation time (cep_window:report/7)
        items.append(pl.Clause(pl.Struct("$winstant", index)))
    if g is None:
        return items
    if g.keys is not None:
        items += group_items(index, query, root_vars, vars_of)
    else:
        for j, (_, agg, keys) in enumerate(g.extensions, 1):
            vs = vars_of()
            v = _values(vs, root_vars)
            items.append(pl.Clause(pl.Struct("$wkey", index, j, v, _key(vs, keys)), (T,)))
            items.append(_args_clause(("$wargs", index, j), vs, v, root_vars, [agg], single=True))
        items.append(_extended_row(index, query, root_vars, vars_of))
    return items


def group_items(index, query, root_vars, vars_of) -> list:
    """'$wkey', '$wargs' and '$wrow' of a GROUP BY: a solution's group, its
    aggregates' arguments, a group's row (`index` names the query, or
    sq(Node) a grouped subquery; `root_vars` are the variables of its
    pattern's solutions)."""
    g = query.grouping
    vs = vars_of()
    v = _values(vs, root_vars)
    return [pl.Clause(pl.Struct("$wkey", index, v, _key(vs, g.keys)), _computed(vs, g.computed)),
            _args_clause(("$wargs", index), vs, v, root_vars, [a for _, a in g.aggregates]),
            _group_row(index, query, vars_of)]


def _values(vs, root_vars):
    return pl.Struct("v", *[vs.of(x) for x in root_vars]) if root_vars else A("v")


def _key(vs, keys):
    return pl.Struct("k", *[vs.of(k) for k in keys]) if keys else A("k")


def _computed(vs, computed) -> tuple:
    """The goals that bind the keys of GROUP BY (expr [AS ?v]) to the
    expressions' values, leaving a key unbound where its value is an
    error (translate refuses the time functions there)."""
    ec = vs.expressions(vs.fresh(), vs.fresh())
    goals = []
    for var, expr in computed:
        g, value = ec.value(expr)
        goals.append(ite(conj(g), pl.Struct("=", vs.of(var), value), T))
    return tuple(goals) or (T,)


def _args_clause(head_args, vs, v, root_vars, aggregates, single=False):
    """'$wargs'(..., V, Ts, Te, Args): each aggregate's argument for the
    solution, val(Value) or err (an error or unbound value); COUNT(*)
    counts every solution, COUNT(DISTINCT *) each solution's bindings once
    (the values of its variables, not the hidden `_:` ones that tell
    copies apart, the unbound ones numbered alike: equal solutions are
    equal terms)."""
    star = _values(vs, [x for x in root_vars if not x.name.startswith("_:")])
    ts, te = pl.Var("Ts"), pl.Var("Te")
    ec = vs.expressions(ts, te)
    goals, out = [], []
    for agg in aggregates:
        a = vs.fresh()
        if agg.arg is None and agg.distinct:
            c = vs.fresh()
            goals += [pl.Struct("copy_term", star, c), pl.Struct("numbervars", c, 0, pl.Var("_")),
                      pl.Struct("=", a, pl.Struct("val", c))]
        elif agg.arg is None:
            goals.append(pl.Struct("=", a, pl.Struct("val", 1)))
        else:
            g, value = ec.value(agg.arg)
            goals.append(ite(conj(g), pl.Struct("=", a, pl.Struct("val", value)), pl.Struct("=", a, A("err"))))
        out.append(a)
    result = out[0] if single else pl.PList(out)
    name, *rest = head_args
    return pl.Clause(pl.Struct(name, *rest, v, ts, te, result), tuple(goals) or (T,))


def _unset(var, value):
    """Bind `var` to `value` unless it is the mark of an unbound one."""
    return ite(pl.Struct("memberchk", value, pl.PList([A("$unbound"), A("$error")])), T,
               pl.Struct("=", var, value))


def _group_row(index, query, vars_of):
    """'$wrow'(Q, Key, Values, Ts, Te, Fields): a group's row; Ts and Te
    are the window's start and the evaluation time (the time functions
    read them)."""
    g = query.grouping
    vs = vars_of()
    ts, te = pl.Var("Ts"), pl.Var("Te")
    key_in = [vs.fresh() for _ in g.keys]
    values_in = [vs.fresh() for _ in g.aggregates]
    goals = [_unset(vs.of(k), x) for k, x in zip(g.keys, key_in)]
    goals += [_unset(vs.of(v), x) for (v, _), x in zip(g.aggregates, values_in)]
    head_key = pl.Struct("k", *key_in) if key_in else A("k")
    head = ("$wrow", index, head_key, pl.PList(values_in), ts, te)
    return _row_clause(head, vs, ts, te, goals, query)


def _extended_row(index, query, root_vars, vars_of):
    """'$wrow'(Q, V, Ts, Te, Values, Fields): a solution with C-SPARQL's
    AGGREGATE values."""
    g = query.grouping
    vs = vars_of()
    ts, te = pl.Var("Ts"), pl.Var("Te")
    v = _values(vs, root_vars)
    values_in = [vs.fresh() for _ in g.extensions]
    goals = [_unset(vs.of(var), x) for (var, _, _), x in zip(g.extensions, values_in)]
    head = ("$wrow", index, v, ts, te, pl.PList(values_in))
    return _row_clause(head, vs, ts, te, goals, query)


def _row_clause(head, vs, ts, te, goals, query):
    """HAVING (or AGGREGATE's FILTERs), then the projection's fields."""
    ec = vs.expressions(ts, te)
    goals = list(goals)
    for cond in query.grouping.having:
        goals.append(ec.filter_goal(cond))
    fields = []
    for item in query.projection or ():
        if item.expr is None:
            fields.append(ec.env.get(item.var) or vs.fresh())
        else:
            g, value = ec.value(item.expr)
            r = vs.fresh()
            goals.append(ite(conj(g), pl.Struct("=", r, value), T))
            fields.append(r)
            ec.env[item.var] = r
    if query.form == "construct":  # a CONSTRUCT's rows are its template's values: a set of triples
        by_name = {item.var.name: f for item, f in zip(query.projection, fields)}
        fields = [by_name.get(n) or vs.fresh() for n in ops.template_fields(query.template)]
    goals += sort_goals(ec, query, fields)[0]
    name, *args = head
    return pl.Clause(pl.Struct(name, *args, pl.PList(fields)), tuple(goals) or (T,))


# ------------------------------------------------- over the window's content


def _content_items(plan, indexes, vars_of, graph) -> list:
    """'$wcontent'(Q) for each query evaluated over its window's content,
    its '$wsolve'/5, the w<N>/5 clauses of its content nodes, and '$win'/5:
    a stored operand solution in the window In."""
    content = [(i, key, root) for i, key, root in content_roots(plan) if i in indexes]
    Q, In, V, S, E, F, K, Cut, Tau, Low, P = (pl.Var(n) for n in (
        "Q", "In", "V", "S", "E", "F", "K", "Cut", "Tau", "Low", "P"))
    _ = pl.Var("_")
    if not content:
        return []
    Lo, Hi = pl.Var("Lo"), pl.Var("Hi")
    items = [pl.Clause(pl.Struct("$win", Q, pl.Struct("time", K, _, _), V, S, E), (
                 pl.Struct("$wsol", _, Q, _, F, V, S, E), pl.Struct("=<", F, K))),
             # of the oldest instant Cut, a window of triples holds those from the place Low (cutoff/6)
             pl.Clause(pl.Struct("$win", Q, pl.Struct("count", Cut, Tau, Low), V, S, E), (
                 pl.Struct("$wsol", _, Q, P, _, V, S, E), pl.Struct(">=", S, Cut), pl.Struct("=<", E, Tau),
                 ite(pl.Struct(">", E, Cut), T, pl.Struct(">=", P, Low)))),
             # an interval in the window In: (Lo, Hi] of a time-based one
             pl.Clause(pl.Struct("$wholds", pl.Struct("time", _, Lo, Hi), S, E), (
                 pl.Struct(">", S, Lo), pl.Struct("=<", E, Hi))),
             pl.Clause(pl.Struct("$wholds", pl.Struct("count", Cut, Tau, _), S, E), (
                 pl.Struct(">=", S, Cut), pl.Struct("=<", E, Tau)))]
    done, keys = set(), content_keys(plan)
    for node in plan.nodes:
        # the window's events, kept under an empty group's node (its content, cep_window:read_content/8)
        # and under a subquery's instants leaf (the instants it makes its rows at): '$wevents', which
        # its query's own fed triples never enter (cep_window:feed/6)
        if isinstance(node, Unary) and isinstance(node.op, ops.Unit):
            parts = [(key, content_part(key, node.id, "u")) for key in keys.get(node.id, ())]
            items += [pl.Clause(pl.Struct("$wunit", key, part)) for key, part in parts]
        elif isinstance(node, Unary) and node.instants is not None:
            parts = [(key, content_part(key, node.id, "i")) for key in keys.get(node.id, ())]
        else:
            continue
        items += [pl.Clause(pl.Struct("$wevents", key, part)) for key, part in parts]
    for i, key, root in content:
        items.append(pl.Clause(pl.Struct("$wcontent", key)))
        items.append(pl.Clause(pl.Struct("$wsolve", key, In, V, S, E), (
            pl.Struct(f"w{root}", key, In, V, S, E), pl.Struct("\\==", S, A("timeless")))))
        todo = [root]
        while todo:
            node = plan.node(todo.pop())
            if node.id in done or not node.content:
                continue
            done.add(node.id)
            items.append(_content_clause(plan, node, vars_of(i), graph))
            todo += [node.child] if isinstance(node, Unary) else [node.left, node.right]
    return items


def _content_clause(plan, node, vs, graph):
    """w<N>(Q, In, Values, Start, End): the solutions of content node N
    over the window In, SPARQL's operators over the window's content as
    one graph (OPTIONAL joins an optional part wherever it is in the
    window, MINUS and [NOT] EXISTS test the whole window, their condition
    on the merge's interval), the temporal
    ones with their interval relations."""
    Q, In, S, E = pl.Var("Q"), pl.Var("In"), pl.Var("S"), pl.Var("E")
    if isinstance(node, Unary) and isinstance(node.op, ops.Triple):  # a property path (cep.binarize)
        return _path_clause(plan, node, vs, graph)

    def operand(child, side, s, e, vs=vs):
        if child.content:  # evaluated on its own, then joined: values given outside do not steer it
            apart = pl.Struct("v", *[vs.fresh() for _ in child.vars]) if child.vars else A("v")
            return conj([pl.Struct(f"w{child.id}", Q, In, apart, s, e),
                         pl.Struct("=", apart, tuple_term(vs, child.vars))])
        stored = pl.Struct("$win", content_part(Q, node.id, side), In, tuple_term(vs, child.vars), s, e)
        found = _timeless(plan, child, vs, graph) if graph is not None else None
        if found is None:
            return stored
        return pl.Struct(";", stored, conj(found + [pl.Struct("=", s, A("timeless")), pl.Struct("=", e, A("timeless"))]))

    def span(s1, e1, s2, e2):
        return q(WINDOW, "cep_span", s1, e1, s2, e2, S, E)

    def timed(*xs):
        return [pl.Struct("number", x) for x in xs]

    if isinstance(node, Unary) and isinstance(node.op, ops.Unit):  # one empty solution, at the window's close
        goals = [q(WINDOW, "cep_window_close", In, S), pl.Struct("=", E, S)]
    elif isinstance(node, Unary) and node.instants is not None:
        goals = _subquery_clause_goals(plan, node, vs, operand, S, E)
    elif isinstance(node, Unary):
        goals = [operand(plan.node(node.child), "u", S, E)]
        if isinstance(node.op, ops.Project):  # a subquery: each solution once
            v, found_all, distinct = tuple_term(vs, node.vars), vs.fresh(), vs.fresh()
            goals = [pl.Struct("findall", pl.Struct("-", v, pl.Struct("-", S, E)), conj(goals), found_all),
                     pl.Struct("sort", found_all, distinct),
                     pl.Struct("member", pl.Struct("-", v, pl.Struct("-", S, E)), distinct)]
        else:
            goals += unary_goals(node, vs, S, E)
    else:
        left, right = plan.node(node.left), plan.node(node.right)
        spec = node.op.spec
        s1, e1, s2, e2 = (pl.Var(n) for n in ("S1", "E1", "S2", "E2"))
        if spec.alternative:  # UNION: either side's solutions
            goals = [pl.Struct(";", conj([operand(left, "l", S, E)]), conj([operand(right, "r", S, E)]))]
        elif node.op is ops.SeqAbsence:  # NOTSEQ: no right solution after the left one, by its deadline
            goals = [operand(left, "l", s1, e1), *timed(s1), pl.Struct("=", S, s1),
                     pl.Struct("is", E, pl.Struct("+", e1, node.deadline)), pl.Struct("$wholds", In, S, E)]
            test = _negation(node.op, left, right, plan.certain(right.id), vs,
                             lambda: [operand(right, "r", s2, e2), *timed(s1, s2), *interval_goals(node, s1, e1, s2, e2),
                                      pl.Struct("=<", e2, E)],
                             lambda: _cond(node, vs, s1, e2))
            goals.append(test)
        elif spec.negated:  # MINUS, [NOT] EXISTS over the window's content: no interval relation
            goals = [operand(left, "l", S, E)]

            def merged_cond():  # the condition reads the merge's interval, which spans both solutions
                if node.cond is None:
                    return []
                sm, em = vs.fresh(), vs.fresh()
                return [q(WINDOW, "cep_span", S, E, s2, e2, sm, em), *_cond(node, vs, sm, em)]
            test = _negation(node.op, left, right, plan.certain(right.id), vs,
                             lambda: [operand(right, "r", s2, e2)], merged_cond)
            if test is not None:
                goals.append(test)
        elif spec.optional:
            goals = _optional(node, left, right, vs, operand, span, timed)
        else:  # joins, SEQ, EQUALS, Allen's relations, with their interval tests
            tests = interval_goals(node, s1, e1, s2, e2)
            guard = timed(s1, s2) if tests or not spec.timeless else []
            goals = [operand(left, "l", s1, e1), operand(right, "r", s2, e2), *guard, *tests, span(s1, e1, s2, e2)]
    return _closed_content_clause(node, vs, Q, In, S, E, goals)


def _subquery_clause_goals(plan, node, vs, operand, S, E) -> list:
    """The rows of a subquery with its own aggregation or cut over the
    window In, as it makes them outside a window (docs/language.md,
    "Subqueries"): at each instant the window holds (the ends of its
    instants leaf's solutions, the events in it) and each end of a
    solution, from its operand's solutions in the window that end then,
    and those of the background alone, which are there at every instant."""
    Q, In = pl.Var("Q"), pl.Var("In")
    T, seen, instants = vs.fresh(), vs.fresh(), vs.fresh()
    child, cvs = plan.node(node.child), Vars(vs.scope, prefix="C")
    s0, e0 = cvs.fresh(), cvs.fresh()
    held = pl.Struct("$win", content_part(Q, node.id, "i"), In, A("v"), pl.Var("_"), T)
    at = [pl.Struct("findall", T, held, seen), pl.Struct("sort", seen, instants)]
    found = [operand(child, "u", s0, e0, cvs),
             ite(pl.Struct("==", s0, A("timeless")),
                 conj([pl.Struct("member", T, instants), pl.Struct("=", S, T), pl.Struct("=", E, T)]),
                 conj([pl.Struct("=", S, s0), pl.Struct("=", E, e0)]))]
    return at + _subquery_rows(node, child, cvs, found, S, E, None, vs, instants)


def _closed_content_clause(node, vs, Q, In, S, E, goals):
    """w<N>(Q, In, Values, S, E) :- goals, then the node's WITHIN bound on
    [S, E] (a timeless solution has none) and its filters."""
    if node.window is not None:
        goals.append(ite(pl.Struct("==", S, A("timeless")), A("true"),
                         pl.Struct("=<", pl.Struct("-", E, S), node.window)))
    ec = vs.expressions(S, E)
    goals += [ec.filter_goal(f) for f in node.filters]
    return pl.Clause(pl.Struct(f"w{node.id}", Q, In, tuple_term(vs, node.vars), S, E), tuple(goals))


def _path_clause(plan, node, vs, graph):
    """w<N>(Q, In, Values, Start, End) of a property path: the path walks
    one graph, the window's triples it reads (those of its leaf, kept per
    window) and the background as it is at the evaluation (docs/language.md,
    "Property paths"). A pair the background alone connects is timeless;
    any other spans [the least start, the greatest end] of those triples."""
    Q, In, S, E = pl.Var("Q"), pl.Var("In"), pl.Var("S"), pl.Var("E")
    t, leaf = node.op, plan.node(node.child)
    x, y = (vs.of(v) if isinstance(v, ops.Var) else terms.to_prolog(v) for v in (t.s, t.o))
    ends = A("vars" if isinstance(t.s, ops.Var) and isinstance(t.o, ops.Var) else "term")
    spo, found, starts, stops = tuple(vs.fresh() for _ in range(3)), vs.fresh(), vs.fresh(), vs.fresh()
    st, en = vs.fresh(), vs.fresh()
    read = [pl.Struct("findall", pl.Struct("t", *spo, st, en),
                      pl.Struct("$win", content_part(Q, node.id, "u"), In, pl.Struct("v", *spo), st, en), found),
            pl.Struct("\\==", found, pl.PList([])),
            pl.Struct("findall", st, pl.Struct("member", pl.Struct("t", *(pl.Var("_") for _ in range(3)), st,
                                                                   pl.Var("_")), found), starts),
            pl.Struct("findall", en, pl.Struct("member", pl.Struct("t", *(pl.Var("_") for _ in range(4)), en),
                                               found), stops),
            pl.Struct("min_list", starts, S), pl.Struct("max_list", stops, E)]
    window = pl.Struct("triples", found)
    if graph is None:
        goals = read + [q(PATHS, "cep_path", window, path_term(t.p), ends, x, y)]
    else:
        module = vs.fresh() if graph == LIVE else A(graph)
        live = [pl.Struct("context_module", module)] if graph == LIVE else []
        walked = conj(read + live + [q(PATHS, "cep_path_added", module, window, path_term(t.p), ends, x, y)])
        timeless = _timeless(plan, Leaf(node.id, t, node.vars), vs, graph)
        goals = [pl.Struct(";", walked, conj(timeless + [pl.Struct("=", S, A("timeless")),
                                                        pl.Struct("=", E, A("timeless"))]))]
    return _closed_content_clause(node, vs, Q, In, S, E, goals)


def _cond(node, vs, s, e):
    if node.cond is None:
        return []
    return [vs.expressions(s, e).filter_goal(node.cond)]


def _optional(node, left, right, vs, operand, span, timed):
    """OPTIONAL (over the window's content, SPARQL's LeftJoin: no interval
    relation), OPTIONALSEQ and EQUALSOPTIONAL (their interval relations):
    the optional part is evaluated apart (its variables named afresh, so
    a value the mandatory part gives does not steer it), then unified
    with the mandatory solution (compatible, merged) and tested; the
    mandatory solution alone where none passes."""
    mand, opt, mside, oside = (left, right, "l", "r") if node.op.spec.optional == "right" else (right, left, "r", "l")
    sm, em, so, eo = (pl.Var(n) for n in ("Sm", "Em", "So", "Eo"))
    goals = [operand(mand, mside, sm, em)]
    saved = {v: vs.of(v) for v in opt.vars}
    for v in opt.vars:
        vs.names[v] = vs.fresh()
    found = operand(opt, oside, so, eo)
    apart = tuple_term(vs, opt.vars)
    vs.names.update(saved)
    tests = []
    if node.op is not ops.LeftJoin:
        ends = (so, eo, sm, em) if oside == "l" else (sm, em, so, eo)
        tests = timed(sm, so) + interval_goals(node, *ends)
    S, E = pl.Var("S"), pl.Var("E")
    match = conj([found, pl.Struct("=", apart, tuple_term(vs, opt.vars)), *tests, span(sm, em, so, eo),
                  *_cond(node, vs, S, E)])
    alone = conj([pl.Struct("=", S, sm), pl.Struct("=", E, em)])
    return goals + [ite(pl.Struct("\\+", match), alone, match)]
