"""SERVICE patterns in the compiled rules: lookups in their local views
(prolog/cep_service.pl, kept by cep.service.view), joined as background
data is joined (a solution keeps the interval of the stream part).

When the join happens (docs/language.md, "SERVICE"):

- A windowed query (or one grouped without a window) whose pattern ends
  in its SERVICE joins (the plan's root is a chain of SERVICE nodes) joins
  at each evaluation, the seed's WSJ: its stored solutions leave the
  SERVICE variables unbound (a stream solution only marks the view entry
  it needs, cep_service_touch/4), and '$wjoin'(Query, Values, Start, End)
  looks them up, with the filters that read them, when the window is
  evaluated, in the view as maintained for that evaluation.
- In a query whose groups have windows of their own, the same holds for
  each group (a part, cep.binarize.split_windows) whose pattern ends in
  its SERVICE joins: '$wcombine' (cep.compile.windows._part_items) joins
  the group's solutions in its window with the views at each of the
  query's evaluations, before the groups are combined; '$wserved'(Q)
  says the query does. (A SERVICE joined above the groups is joined with
  each group that binds its join key: cep.binarize._join_below.)
- Anywhere else, a SERVICE is joined when the stream solution is found.

OPTIONAL { SERVICE ... } (a plan's Unary node holding LeftJoin(None,
Service, cond), cep.binarize) is SPARQL's LeftJoin with the view: the
solution with each compatible view solution for which cond holds, or
alone when there is none (the SERVICE's variables unbound). A FILTER
inside the SERVICE (Service.filter) is applied to the view's solutions
here, not sent to the endpoint.
"""

from __future__ import annotations

from cep import prolog as pl
from cep.algebra import ops
from cep.binarize import Unary
from cep.compile.clauses import A, T, Vars
from cep.compile.expr import conj, ite, q

SERVICE = "cep_service"


def _is_service(node) -> bool:
    return isinstance(node, Unary) and service_of(node.op) is not None


def service_of(op):
    """The Service of a plan's Unary node's op: SERVICE, or OPTIONAL
    { SERVICE } (LeftJoin(None, Service, cond)); None for another op."""
    if isinstance(op, ops.LeftJoin) and op.left is None:
        op = op.right
    return op if isinstance(op, ops.Service) else None


def deferred_services(plan) -> dict:
    """(query index, part) -> the SERVICE nodes joined at the query's
    evaluations, from the root down (see above); part None for a query
    without parts, else the part's index (a query whose groups have
    windows of their own joins each part's chain with the part's
    solutions in its window at each evaluation, before the parts are
    combined: cep.compile.windows._part_items). A node another part of
    the plan reads is not."""
    owners = {}  # node -> every (index, part) whose root it is
    for index, output in enumerate(plan.outputs):
        for part in output.parts or (None,):
            owners.setdefault(output.root if part is None else part.root, []).append(
                (index, None if part is None else part.index))
    out = {}
    for index, output in enumerate(plan.outputs):
        if not output.query.evaluated:
            continue
        for part in output.parts or (None,):
            where = (index, None if part is None else part.index)
            above, node = [], plan.node(output.root if part is None else part.root)
            # a part that is a UNION operand is marked by a constant BIND (which operand a solution is
            # of: cep.algebra.bags), which reads nothing the views bind
            while part is not None and _is_constant(node) and _only_in(plan, node, owners, where, above):
                above.append(node)
                node = plan.node(node.child)
            chain = []
            # (a content node joins in its window's content: cep/compile/windows.py)
            while _is_service(node) and not node.content and _only_in(plan, node, owners, where, above + chain):
                chain.append(node)
                node = plan.node(node.child)
            if chain:
                out[where] = chain
    return out


def _is_constant(node) -> bool:
    return isinstance(node, Unary) and isinstance(node.op, ops.Extend) and not ops.expr_vars(node.op.expr) \
        and not node.content and not node.filters


def _only_in(plan, node, owners, where, chain) -> bool:
    """Whether `node` is read by nothing but the nodes above it and is the
    root of the query (or part) `where` alone, or of none."""
    ids = {n.id for n in chain}
    if any(step.id not in ids for step, _ in plan.consumers(node.id)):
        return False
    return all(w == where for w in owners.get(node.id, ()))


def deferred_nodes(plan) -> set:
    return {n.id for chain in deferred_services(plan).values() for n in chain}


def join_goals(chain, vs: Vars, ts, te, only=None) -> list:
    """A stored solution (interval [ts, te]) joined with the views of a
    chain of SERVICE nodes joined at the evaluations, innermost first,
    with the FILTERs that read them (`only`: the variables those see)."""
    goals = []
    for node in reversed(chain):
        goals.append(service_goal(node, vs, ts, te, A("timeless")))
        goals += [vs.expressions(ts, te, only).filter_goal(f) for f in node.filters]
    return goals


def _row(op: ops.Service, vs: Vars):
    return pl.Struct("v", *[vs.of(v) for v in op.vars]) if op.vars else A("v")


def service_goal(node, vs: Vars, ts, te, touch):
    """The solutions of the node's SERVICE (or OPTIONAL { SERVICE })
    compatible with its operand's, over [ts, te]: a lookup in its view by
    the join key, remembering when the entry was needed (`touch`, the
    stream solution's end; `timeless` for none), filtered by the SERVICE's
    FILTER (unless SILENT gave its empty solution) and, for OPTIONAL, its
    condition."""
    op = service_of(node.op)
    m, empty = vs.fresh(), vs.fresh()
    goals = [pl.Struct("context_module", m),
             q(SERVICE, "cep_service_row", m, node.id, touch, _row(op, vs), empty)]
    if op.filter is not None:  # read over the view's solution alone: no interval, as inline data
        own = vs.expressions(A("timeless"), A("timeless")).filter_goal(op.filter)
        goals.append(ite(pl.Struct("==", empty, A("true")), T, own))
    if node.op is op:
        return conj(goals)
    if node.op.cond is not None:
        goals.append(vs.expressions(ts, te).filter_goal(node.op.cond))
    found = conj(goals)
    return ite(pl.Struct("\\+", found), T, found)


def touch_goal(node, vs: Vars, te):
    """A stream solution of a query that joins at its evaluations: the
    view entry it will need is marked (WSJ's candidates), nothing joined."""
    m = vs.fresh()
    return conj([pl.Struct("context_module", m),
                 q(SERVICE, "cep_service_touch", m, node.id, te, _row(service_of(node.op), vs))])


def join_items(plan, vars_of) -> list:
    """'$wdeferred'(Q) and '$wjoin'(Q, Values, Start, End) of each query
    without parts that joins at its evaluations (Values: its root's
    values, as stored by '$wstore'); none when no query does."""
    items = []
    for (index, part), chain in deferred_services(plan).items():
        if part is not None:
            continue
        vs = vars_of(index)
        root = plan.node(plan.outputs[index].root)
        values = pl.Struct("v", *[vs.of(x) for x in root.vars]) if root.vars else A("v")
        ts, te = pl.Var("Ts"), pl.Var("Te")
        items.append(pl.Clause(pl.Struct("$wdeferred", index)))
        items.append(pl.Clause(pl.Struct("$wjoin", index, values, ts, te), tuple(join_goals(chain, vs, ts, te)) or (T,)))
    return items
