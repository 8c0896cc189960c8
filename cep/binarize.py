"""Binarization (paper, section 5): algebra trees -> a plan of binary steps.

Takes the queries of a rule set (their algebra) and returns a Plan: leaves
(one per distinct triple pattern) and binary steps, numbered in binarization
order (children before parents), plus one output per query. Each node is a
binary intermediate event of the paper: it has an ordered tuple of variables
and produces solutions (binding, start, end).

What happens here, per query:
- a BGP becomes a chain of binary Joins (patterns that share variables are
  put next to each other, so no cross product is made that a later pattern
  would have narrowed);
- chains of one associative operator are coupled from the left (default) or
  from the right (`@binarize right`);
- filter conjuncts are placed at the first step where all their variables are
  bound for sure; conjuncts that read the interval (getDURATION & co.) stay
  where the query put them;
- a window bound (`getDURATION() < d` as a conjunct, WITHIN, or the range of
  a time-based window) is pushed into every mandatory step below it, so
  expired partial matches are never built and stored goals can expire;
- identical steps across the queries of the rule set become one node;
- inside a window (a query's, or a group's own: split_windows), the
  operators whose answers depend on what the window does not hold
  (CONTENT_OPERATORS: OPTIONAL, MINUS, [NOT] EXISTS, OPTIONALSEQ; a
  subquery with its own aggregation or cut) and every node above them,
  inside a [TRIPLES n] window every step (it holds some triples of its
  oldest instant), and in a rule set that updates
  the background every step (the window reads the background as it is at
  the evaluation time), are marked `content`: they are
  evaluated at each evaluation over the window's content (RSP-QL's
  eval(SDS, SE, t); cep/compile/windows.py), from the solutions of their
  other operands, which are stored per window.

Before all that, a query that calls timestamp() gets the hidden variables
it reads (cep.algebra.timestamps): a leaf whose triple has an `end` binds
it to the end of the event it matched.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional

from cep import terms
from cep.algebra import ops, query_limits
from cep.algebra.ops import is_table
from cep.algebra.bags import PREFIX as ALT_PREFIX
from cep.algebra.bags import capture_alternatives
from cep.algebra.copies import capture_copies
from cep.algebra.timestamps import capture_ends
from cep.errors import QueryError

TABLE_ALONE = ("inline data (VALUES, or a BIND outside any pattern) matches no event: it is joined with a "
               "pattern of the same group that does, as background data is")
IDENTITY = ops.Values((), ((),))  # one empty solution (inline data): join's identity
MONTH_MS = 2_629_746_000  # an average Gregorian month, for durations with months
POLICIES = ("unrestricted", "recent", "chronological")
# Inside a window these are evaluated over the window's content at each
# evaluation, not over the stream: their answers depend on what the window
# does not hold (docs/language.md, "What is in a window")
CONTENT_OPERATORS = (ops.LeftJoin, ops.Minus, ops.Exists, ops.NotExists, ops.SeqRightJoin)


@dataclass(frozen=True)
class Leaf:
    id: int
    triple: ops.Triple  # or ops.Unit: the empty group, whose solutions are the instants
    vars: tuple
    filters: tuple = ()
    window: Optional[int] = None  # longest allowed duration, ms, inclusive
    timed: bool = False  # see Step.timed
    # The leaf of an update rule (DELETE/INSERT): never shared with other
    # queries, so that an event can trigger the update rules alone (the
    # Spark engine gives every group a copy of the events they read)
    updates: bool = False
    # the streams whose events the leaf takes (ops.Query.triple_streams): a
    # frozenset of IRIs, or None for every event; an event without a
    # stream is of every stream
    streams: Optional[frozenset] = None
    # under a [TRIPLES n] window, which holds a triple repeated in its
    # instant once, at its later place (cep.algebra.copies): the leaf has no
    # copy variable but takes the later copies too, so that place is seen
    later_copies: bool = False
    content = False  # a leaf matches events (see Step.content)


@dataclass(frozen=True)
class Step:
    id: int
    op: type  # the operator's class (ops.Binary): its spec says what it does
    left: int
    right: int
    vars: tuple
    key: tuple  # variables bound on both sides for sure: the stores' hash key
    cond: Optional[object] = None  # the optional operators' join condition
    filters: tuple = ()
    window: Optional[int] = None
    policy: str = "unrestricted"
    # The window is a filter's bound on this node's own solutions (not one
    # pushed down from above): a solution of background triples alone,
    # which has no interval, fails it (getDURATION() is then an error).
    timed: bool = False
    # NOTSEQ: the deadline after the left solution's end, ms;
    # the step's solutions are the left ones (vars: the left's only)
    deadline: Optional[int] = None
    # evaluated over a window's content at each evaluation (CONTENT_OPERATORS)
    content: bool = False


@dataclass(frozen=True)
class Unary:
    """A step with one operand, `child`: each of its solutions, as
    `op` (an ops.UNARY node, or a table) makes it a solution of this
    node, with the same interval. For BIND (ops.Extend) one more variable,
    unbound where the expression is an error; for a subquery
    (ops.Project) fewer variables, and with DISTINCT only the first
    solution of each binding in an instant (one with its own aggregation
    or cut, ops.Project.evaluated: its rows at each instant's end, made
    of all its operand's solutions of the instant); for a table (`table`: a
    pattern of inline data, ops.Values, and the BINDs over it, which
    matches no event) its compatible rows joined, as background data
    is joined (Operator.timeless)."""

    id: int
    op: object
    child: int
    vars: tuple
    filters: tuple = ()
    window: Optional[int] = None
    timed: bool = False
    content: bool = False  # see Step.content
    # A subquery with its own aggregation or cut over a window's content:
    # the leaf of every event (no variables: a solution per interval) whose
    # solutions' ends are the instants it makes its rows at, kept per window
    # as its operand's solutions are
    instants: Optional[int] = None


def node_children(node) -> list:
    """The ids of the nodes whose solutions a plan node takes."""
    if isinstance(node, Leaf):
        return []
    if isinstance(node, Unary):
        return [node.child] + ([node.instants] if node.instants is not None else [])
    return [node.left, node.right]


@dataclass(frozen=True)
class PartRef:
    """A leaf of Output.combine: the solutions of part `index` in its
    window at the evaluation."""

    index: int


@dataclass(frozen=True)
class Part:
    """A group read over a window of its own (Streaming SPARQL; ops.Project
    .window), or a group left with the query's window in a query that has
    such groups: its solutions are kept apart, each part in its own window
    (cep/compile/windows.py)."""

    index: int
    root: int
    window: ops.Window


@dataclass(frozen=True)
class Output:
    query: ops.Query
    root: int
    # A query whose groups have windows of their own (split_windows): root
    # is the root of parts[0], the leftmost part; combine joins the parts'
    # solutions at each evaluation (the operators of split_windows over
    # PartRef leaves), into solutions of `vars`
    parts: tuple = ()
    combine: object = None
    vars: tuple = ()

    @property
    def roots(self) -> tuple:
        """The nodes whose solutions the query keeps: its root, or its parts'."""
        return tuple(p.root for p in self.parts) or (self.root,)

    @property
    def evaluated_by(self) -> tuple:
        """The windows whose evaluation times are the query's: its own, or
        its leading parts' (leading_parts); () without a window."""
        if self.parts:
            return tuple(self.parts[j].window for j in leading_parts(self.combine))
        return (self.query.window,) if self.query.window is not None else ()


@dataclass
class Plan:
    nodes: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    _consumers: Optional[tuple] = field(default=None, init=False, repr=False, compare=False)

    def node(self, node_id):
        return self.nodes[node_id]

    def output_vars(self, out: Output) -> tuple:
        """The variables of a query's solutions, in the order they are held."""
        return out.vars if out.parts else self.node(out.root).vars

    def certain(self, node_id) -> set:
        """The variables bound in every solution of a node."""
        return _certain_of(self.nodes, node_id, {})

    def consumers(self, node_id):
        """(step, side) pairs that take this node's solutions, side 'l' or 'r',
        in node order: from an index made once, as every node is asked (a
        scan of the plan per node made compiling quadratic in its size)."""
        if self._consumers is None or self._consumers[0] != len(self.nodes):
            index = {}
            for n in self.nodes:
                if isinstance(n, Step):
                    index.setdefault(n.left, []).append((n, "l"))
                    index.setdefault(n.right, []).append((n, "r"))
                elif isinstance(n, Unary):
                    index.setdefault(n.child, []).append((n, "u"))
                    if n.instants is not None:
                        index.setdefault(n.instants, []).append((n, "i"))
            self._consumers = (len(self.nodes), index)
        return list(self._consumers[1].get(node_id, ()))


@query_limits.deep
def binarize(queries) -> Plan:
    builder = _Builder()
    # the background changes: a window reads it as it is at the evaluation
    # time, so its query's steps are all evaluated over its content then
    builder.changing = any(q.form == "update" for q in queries)
    slots = counted = 0  # the variables the plan's nodes carry, and the nodes counted
    for q in queries:
        policy = q.option("policy", "unrestricted")
        if policy not in POLICIES:
            raise ValueError(f"unknown consumption policy {policy!r}")
        q = capture_copies(capture_ends(capture_alternatives(q)))
        builder.updates = q.form == "update"
        builder.query = q
        builder.certain = {}  # by id: only while this query's operators live
        split = split_windows(q)
        # a [TRIPLES n] window holds some triples of its oldest instant, not
        # all: its steps are evaluated over its content, from its triples
        builder.by_triple = split is None and _of_triples(q.window)
        if split is None:
            builder.windowed = q.window is not None
            root = builder.build(_prepared(q.pattern, q), (), _range_bound(q.window), policy)
            builder.plan.outputs.append(Output(q, root))
        else:
            combine, groups = split
            parts = tuple(Part(j, builder.build_part(_prepared(p, q), w, policy), w) for j, (p, w) in enumerate(groups))
            vars_ = tuple(sorted(ops.variables(q.pattern), key=lambda v: v.name))
            builder.plan.outputs.append(Output(q, parts[0].root, parts, combine, vars_))
        slots += sum(len(n.vars) for n in builder.plan.nodes[counted:])
        counted = len(builder.plan.nodes)
        query_limits.check_plan(slots, q)
    return builder.plan


# ------------------------------------------------------------ rewrites


def prepare_bgps(op):
    """BGPs -> binary Joins of Triples, in an order without needless cross products."""
    if isinstance(op, ops.BGP):
        triples = _connected_order(list(op.triples))
        if not triples:
            raise ValueError("empty basic graph pattern")
        out = triples[0]
        for t in triples[1:]:
            out = ops.Join(out, t, pos=op.pos)
        return out
    if isinstance(op, (ops.Triple, ops.Unit)):
        return op
    if isinstance(op, ops.Filter):
        return ops.Filter(op.cond, prepare_bgps(op.pattern), pos=op.pos)
    if isinstance(op, ops.UNARY):
        return dataclasses.replace(op, pattern=prepare_bgps(op.pattern))
    if isinstance(op, (ops.Values, ops.Service)):
        return op
    return _rebuild(op, prepare_bgps(op.left), prepare_bgps(op.right))


def _connected_order(triples):
    if not triples:
        return triples
    ordered = [triples.pop(0)]
    bound = set(ops.slots_vars(ordered[0]))
    while triples:
        pick = next((t for t in triples if bound & set(ops.slots_vars(t))), triples[0])
        triples.remove(pick)
        ordered.append(pick)
        bound |= set(ops.slots_vars(pick))
    return ordered


def reassociate(op, direction: str):
    """Couple chains of one associative operator from the left or the right."""
    if direction not in ("left", "right"):
        raise ValueError(f"unknown binarization {direction!r}")
    if isinstance(op, (ops.Triple, ops.Values, ops.Service, ops.Unit)):
        return op
    if isinstance(op, ops.Filter):
        return ops.Filter(op.cond, reassociate(op.pattern, direction), pos=op.pos)
    if isinstance(op, ops.UNARY):
        return dataclasses.replace(op, pattern=reassociate(op.pattern, direction))
    if isinstance(op, ops.Binary) and op.spec.associative:
        items = [reassociate(x, direction) for x in _flatten(op, type(op))]
        if direction == "left":
            out = items[0]
            for x in items[1:]:
                out = type(op)(out, x, pos=op.pos)
        else:
            out = items[-1]
            for x in reversed(items[:-1]):
                out = type(op)(x, out, pos=op.pos)
        return out
    return _rebuild(op, reassociate(op.left, direction), reassociate(op.right, direction))


def _flatten(op, kind):
    if type(op) is kind:
        return _flatten(op.left, kind) + _flatten(op.right, kind)
    return [op]


def _rebuild(op, left, right):
    return dataclasses.replace(op, left=left, right=right)


# ------------------------------------------------------------ windows


def duration_ms(nt: str) -> Optional[int]:
    """Milliseconds of an xsd:duration-like literal (months as average months)."""
    try:
        kind, lex, dt, _ = terms.split(nt)
    except (ValueError, terms.TermError):
        return None
    if kind != "literal" or not dt.startswith(terms.XSD) or not dt.endswith("Duration") and dt != terms.XSD_DURATION:
        return None
    try:
        months, ms = terms.parse_duration(lex)
    except terms.TermError:
        return None
    return months * MONTH_MS + ms


def window_bound(conjunct) -> Optional[int]:
    """The inclusive bound in ms that `getDURATION() < d` (or <=, or d >
    getDURATION()) puts on an interval's length; None for other conjuncts."""
    if not isinstance(conjunct, ops.Call) or len(conjunct.args) != 2:
        return None
    op, (a, b) = conjunct.name, conjunct.args
    flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
    if _is_duration_call(b) and isinstance(a, ops.Const):
        op, a, b = flipped.get(op, op), b, a
    if not (_is_duration_call(a) and isinstance(b, ops.Const)):
        return None
    d = duration_ms(b.term)
    if d is None:
        return None
    if op == "<":
        return d - 1
    if op == "<=":
        return d
    return None


def _prepared(pattern, query):
    if query.evaluated and any(isinstance(op, ops.Service) for op in ops.walk(pattern)):
        pattern = hoist_services(pattern)
    return reassociate(prepare_bgps(pattern), query.option("binarize", "left"))


def hoist_services(pattern):
    """The pattern of a query answered at evaluations, its SERVICEs joined
    last where that gives the same solutions, so that each is joined at the
    evaluation with the view maintained for it (the seed's WSJ;
    cep.compile.services): a SERVICE joined with a pattern P deep in the
    query is taken out and joined with the whole, when it is reached from
    the top through FILTERs and the operands every solution has (both of a
    join, SEQ, EQUALS or an Allen relation; OPTIONAL's, MINUS's, NOTSEQ's,
    [NOT] EXISTS's mandatory one), and the rest of the pattern names none
    of its variables but those P binds for sure (its join key). A SERVICE
    has no interval and reads nothing but its key, so the operators above
    it give the same solutions with it joined before or after them."""
    conds = []
    while isinstance(pattern, ops.Filter):  # the query's own FILTERs stay above all
        conds.append(pattern.cond)
        pattern = pattern.pattern
    taken = []

    def take(op):
        if isinstance(op, ops.Join):
            for service, other in ((op.right, op.left), (op.left, op.right)):
                if isinstance(service, ops.Service) and not is_table(other) and _hoistable(service, other, pattern):
                    taken.append(service)
                    return take(other)
        if isinstance(op, ops.Filter):
            return dataclasses.replace(op, pattern=take(op.pattern))
        if isinstance(op, ops.Binary) and not op.spec.alternative:
            through = (0,) if isinstance(op, (ops.Exists, ops.NotExists)) else \
                tuple(i for i in (0, 1) if op.spec.mandatory[i])
            sides = [take(x) if i in through else x for i, x in enumerate((op.left, op.right))]
            return dataclasses.replace(op, left=sides[0], right=sides[1])
        return op

    out = take(pattern)
    for service in taken:
        out = ops.Join(out, service, pos=service.pos)
    return _filtered(out, conds)


def _filtered(pattern, conds):
    for cond in reversed(conds):
        pattern = ops.Filter(cond, pattern)
    return pattern


def _hoistable(service, sibling, pattern) -> bool:
    """Whether the rest of `pattern` names none of the SERVICE's variables
    but those its sibling binds in every solution."""
    named = set()
    for op in ops.walk(pattern):
        if op is service:
            continue
        if isinstance(op, ops.Triple):
            named.update(ops.slots_vars(op))
        elif isinstance(op, (ops.Values, ops.Service, ops.Project)):
            named.update(op.vars)
        elif isinstance(op, ops.Extend):
            named.add(op.var)
        if isinstance(op, ops.Extend):
            named |= ops.expr_vars(op.expr)
        cond = getattr(op, "cond", None) if isinstance(op, (ops.Filter, ops.Binary)) else None
        if cond is not None:
            named |= ops.expr_vars(cond)
    return named & set(service.vars) <= ops.certain_variables(sibling)


def split_windows(query):
    """(combine, [(pattern, window), ...]) for a query whose groups have
    windows of their own (Streaming SPARQL: a group's window overrides the
    stream's for the group's patterns), None for any other. Each part is a
    largest group under one window, left to right, evaluated over its
    window's content where its operators need (_Builder.build_part);
    `combine` is the pattern above them, the parts as PartRef leaves (and
    inline data after the first part): joins, UNION, OPTIONAL, MINUS,
    [NOT] EXISTS, FILTER and BIND, which the evaluation applies to the
    parts' solutions in their windows at its time (docs/language.md, "A
    window per pattern"). A SERVICE joined above the groups is joined
    with each group that binds its join key instead (_join_below)."""
    if not any(isinstance(op, ops.Project) and op.window is not None for op in ops.walk(query.pattern)):
        return None
    if query.window is None:  # the SPARQL form always has one; the algebra's text need not
        raise QueryError(f"{query.name}: a group with a window of its own needs a window of the query's stream "
                         f"too (FROM STREAM <iri> WINDOW ..., in the algebra a (window ...) line): the query is "
                         f"evaluated when that window is, and its other patterns read it", query.pos)
    parts = []

    def split(op, window):
        if isinstance(op, ops.Project) and op.window is not None:
            if parts and ops.opens_with_optional(op.pattern):
                return identity_optional(op.pattern, op.window)
            return split(op.pattern, op.window)
        windowed = any(isinstance(x, ops.Project) and x.window is not None for x in ops.walk(op))
        if parts and windowed and ops.opens_with_optional(op):
            return identity_optional(op, window)
        if isinstance(op, ops.Join) and windowed and isinstance(op.right, ops.Service):
            return split(joined_below(op.right, op.left), window)
        if isinstance(op, ops.Join) and windowed and isinstance(op.left, ops.Service):
            # the query is evaluated when its first group's window is: written first, a SERVICE
            # would be that group, which matches no event
            raise QueryError("SERVICE written before the groups with windows of their own that it is joined "
                             "with is not supported: the first group of such a query says when it is "
                             "evaluated, and a SERVICE is no group; write it after them",
                             op.left.pos or query.pos)
        if isinstance(op, ops.Service):
            # a view is joined with the solutions of a group, in its window: one joined above the
            # groups otherwise than by a join (OPTIONAL, MINUS, a UNION operand) has none
            raise QueryError("SERVICE over groups that have windows of their own is supported joined with "
                             "them (P SERVICE <e> { ... }), not under OPTIONAL, MINUS, EXISTS or as a UNION "
                             "operand: put it inside the groups (each UNION operand's) whose patterns bind "
                             "its join key", op.pos or query.pos)
        if is_table(op) and parts:  # inline data after a part: its rows, in every window (it matches no event)
            return op
        if not windowed:
            parts.append((op, window))
            return PartRef(len(parts) - 1)
        # a condition or a BIND reads the time of the solution it is on: the span of the parts it holds
        if isinstance(op, (ops.Join, ops.Union_, ops.LeftJoin, ops.Minus, ops.Exists, ops.NotExists)):
            return dataclasses.replace(op, left=split(op.left, window), right=split(op.right, window))
        if isinstance(op, (ops.Filter, ops.Extend)):
            return dataclasses.replace(op, pattern=split(op.pattern, window))
        what = (op.spec.keyword or op.spec.sexpr.upper()) if isinstance(op, ops.Binary) else type(op).__name__.upper()
        raise QueryError(f"{what} over groups with windows of their own is not supported: groups with "
                         f"different windows are combined by SPARQL's operators at each evaluation; "
                         f"give the groups under {what} one window", op.pos or query.pos)

    def joined_below(service, op):
        """SERVICE joined above the groups: joined with each group that
        binds its join key instead (_join_below), where its view is
        maintained at each of the query's evaluations and joined with the
        group's solutions in its window (docs/language.md, "SERVICE")."""
        below = _join_below(service, op)
        if below is None:
            raise QueryError("SERVICE joined with groups that have windows of their own is not supported "
                             "here: it is joined with each group that binds its join key, and a group here "
                             "is inline data or begins with OPTIONAL, or an operator between reads its "
                             "variables (a FILTER, BIND, OPTIONAL, MINUS or EXISTS); put it inside the "
                             "groups (each UNION operand's) whose patterns bind its join key",
                             service.pos or query.pos)
        return below

    def identity_optional(op, window):
        """{ OPTIONAL { P } WINDOW ... } (or { OPTIONAL { P WINDOW ... } })
        after the first part: the empty group the OPTIONAL starts from is
        join's identity, one empty solution that holds no time, as inline
        data (no part of its own, no window's close)."""
        return dataclasses.replace(op, left=IDENTITY, right=split(op.right, window))

    combine = split(query.pattern, query.window)
    _check_first_part(query, combine)
    return combine, parts


def _join_below(service, op):
    """Join(op, service) with the SERVICE joined with the groups of op
    that bind its join key instead, or None where that may give other
    solutions. A join distributes over UNION (each operand's solutions
    joined), joins commute, and an operator whose other operand and
    condition read no variable of the SERVICE but those its left operand
    binds for sure (FILTER, BIND, OPTIONAL, MINUS, [NOT] EXISTS on their
    left) gives the same solutions with it joined below: so the SERVICE
    goes into each UNION operand, into the operand of a join that shares
    the most of its variables (the left one on a tie), down to a group
    (a pattern with a window of its own, or one under the query's
    window). Inline data and { OPTIONAL { P } WINDOW ... } (join's
    identity under OPTIONAL) take none: they are no group."""
    own = set(service.vars)

    def below(op):
        group = isinstance(op, ops.Project) and op.window is not None
        if group or not any(isinstance(x, ops.Project) and x.window is not None for x in ops.walk(op)):
            inner = op.pattern if group else op
            if is_table(inner) or ops.opens_with_optional(inner):
                return None
            if not group:
                return ops.Join(op, service, pos=service.pos)
            return dataclasses.replace(op, pattern=ops.Join(inner, service, pos=service.pos),
                                       vars=tuple(sorted(set(op.vars) | own, key=lambda v: v.name)))
        if isinstance(op, ops.Union_):
            left, right = below(op.left), below(op.right)
            return None if left is None or right is None else dataclasses.replace(op, left=left, right=right)
        if isinstance(op, ops.Join):
            sides = sorted((op.left, op.right), key=lambda x: -len(own & ops.variables(x)))
            for side in sides:
                pushed = below(side)
                if pushed is not None:
                    return dataclasses.replace(op, **{"left" if side is op.left else "right": pushed})
            return None
        if isinstance(op, (ops.Filter, ops.Extend)):
            read = ops.expr_vars(op.cond if isinstance(op, ops.Filter) else op.expr)
            if isinstance(op, ops.Extend):
                read = read | {op.var}
            if not read & own <= ops.certain_variables(op.pattern) - {getattr(op, "var", None)}:
                return None
            pushed = below(op.pattern)
            return None if pushed is None else dataclasses.replace(op, pattern=pushed)
        if isinstance(op, (ops.LeftJoin, ops.Minus, ops.Exists, ops.NotExists)):
            read = ops.variables(op.right) | (ops.expr_vars(op.cond) if op.cond is not None else set())
            if not read & own <= ops.certain_variables(op.left):
                return None
            pushed = below(op.left)
            return None if pushed is None else dataclasses.replace(op, left=pushed)
        return None
    return below(op)


def _check_first_part(query, combine) -> None:
    """A query whose groups have windows of their own is evaluated when the
    window of one of its leading parts holds a solution (leading_parts;
    prolog/cep_window.pl, combined/5), its first part among them: each
    operator from the top of `combine` down to that part must need the
    part's solutions for one of its own, or (UNION) take them as its own.
    Join, FILTER, BIND and UNION do; so do OPTIONAL, MINUS and [NOT] EXISTS
    on their left. On their right, the first part's solutions are not the
    query's own: its left operand's solutions would be answered when the
    first part's window holds nothing."""
    op = combine
    while not (isinstance(op, PartRef) and op.index == 0):
        if isinstance(op, (ops.Filter, ops.Extend)):
            op = op.pattern
            continue
        first_left = any(isinstance(x, PartRef) and x.index == 0 for x in ops.walk(op.left))
        if isinstance(op, (ops.Join, ops.Union_)) or first_left:
            op = op.left if first_left else op.right
            continue
        what = {ops.LeftJoin: "OPTIONAL", ops.Minus: "MINUS", ops.Exists: "FILTER EXISTS",
                ops.NotExists: "FILTER NOT EXISTS"}[type(op)]
        raise QueryError(f"{what} with the first group of a query whose groups have windows of their own is "
                         f"not supported: the query is evaluated when that group's window holds a solution, "
                         f"and {what} would answer without one; put a group that both operands join first, "
                         f"or give them one window", op.pos or query.pos)


def leading_parts(combine) -> tuple:
    """The parts of a query whose groups have windows of their own that
    give it solutions on their own (RSP-QL's eval(SDS, SE, t) is empty
    wherever all of theirs are): the first part, and the first of each
    other operand of a UNION on its way to the top (docs/language.md, "A
    window per pattern"). The query is evaluated at their windows'
    evaluation times. An operand of such a UNION that holds no part
    (inline data, or OPTIONAL after join's identity) contributes no
    evaluation time: it has its solutions at every one (answers_always)."""
    return _lead(combine)[0]


def answers_always(combine) -> bool:
    """Whether an operand of a UNION among the leading parts' holds no
    part (leading_parts): its solutions are the query's at every
    evaluation, over empty windows too, as RSP-QL evaluates eval(SDS, SE,
    t) at every window close (cep.compile.windows.empty_rows)."""
    return _lead(combine)[1]


def _lead(op) -> tuple:
    """(the leading parts under op, whether a UNION operand among them holds none)."""
    if isinstance(op, PartRef):
        return (op.index,), False
    if isinstance(op, (ops.Filter, ops.Extend)):
        return _lead(op.pattern)
    if isinstance(op, ops.Union_):
        (left, always_left), (right, always_right) = _lead(op.left), _lead(op.right)
        return left + right, always_left or always_right or not left or not right
    if isinstance(op, ops.Join) and not any(isinstance(x, PartRef) for x in ops.walk(op.left)):
        return _lead(op.right)
    if isinstance(op, ops.Binary):
        return _lead(op.left)
    return (), False  # inline data: its rows at every instant


def _of_triples(w) -> bool:
    """Whether w is C-SPARQL's [TRIPLES n], which holds exactly n triples."""
    return w is not None and w.count is not None and w.counts == "triples"


def _range_bound(w) -> Optional[int]:
    """A time-based window's bound on its solutions' length: a window
    (t' - range, t'] holds only solutions shorter than its range, so the
    pattern's partial matches are bounded as WITHIN bounds them, and
    expire. None for a count window, whose solutions may be of any length."""
    if w is None or w.count is not None or w.unbounded:
        return None
    return w.range_ms - 1


def _check_window(conjunct, pos) -> None:
    """The runtime computes with a window bound in 64-bit milliseconds: at
    most query_limits.MAX_DURATION_MS (a QueryError at the comparison, else at
    its FILTER)."""
    duration = next(a for a in conjunct.args if isinstance(a, ops.Const))
    query_limits.check_duration(duration_ms(duration.term), f'"{terms.split(duration.term)[1]}"', conjunct.pos or pos)


def _is_duration_call(e):
    return isinstance(e, ops.Call) and e.name == "getDURATION" and not e.args


def _min_window(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


# ------------------------------------------------------------ building


class _Builder:
    def __init__(self):
        self.plan = Plan()
        self.index = {}  # node signature -> id
        self.updates = False  # building an update rule's nodes (Leaf.updates)
        self.query = None  # the query being built (its streams: Leaf.streams)
        self.windowed = False  # the pattern being built is read in a window (its query's, or its part's)
        self.changing = False  # the rule set updates the background (Step.content)
        self.by_triple = False  # the pattern's window (its query's, or its part's) is [TRIPLES n] (Step.content)
        # the variables bound for sure, by operator (id) and by node id:
        # asked at every level of a deep tree, so kept
        self.certain, self.certain_of = {}, {}

    @property
    def later_copies(self) -> bool:
        """Whether the leaves built now take later copies without a copy
        variable (Leaf.later_copies): inside a [TRIPLES n] window."""
        return self.windowed and self.by_triple

    def _add(self, signature, make):
        if signature in self.index:
            return self.index[signature]
        node_id = len(self.plan.nodes)
        self.plan.nodes.append(make(node_id))
        self.index[signature] = node_id
        return node_id

    def build_part(self, op, window, policy) -> int:
        """The root of a part of a query whose groups have windows of their
        own (split_windows), read in its window: evaluated over its content
        as a query with one window is (RSP-QL: every operator inside a
        window is evaluated over the window's content), under its own name
        (cep.compile.windows.content_roots)."""
        self.windowed = window is not None
        self.by_triple = _of_triples(window)
        return self.build(op, (), _range_bound(window), policy)

    def build(self, op, pending: tuple, window, policy, timed=False) -> int:
        """timed: a filter's window bound applies to this node's own
        solutions (Step.timed)."""
        if isinstance(op, ops.Filter):
            cs = ()
            for c in ops.conjuncts(op.cond):
                bound = window_bound(c)
                if bound is None:
                    cs += (c,)
                else:
                    # exactly the window check of the nodes below (integer ms):
                    # no need to evaluate it again as a filter
                    _check_window(c, op.pos)
                    window = _min_window(window, bound)
                    timed = True
            return self.build(op.pattern, pending + cs, window, policy, timed)

        if isinstance(op, ops.Unit) and self.windowed:
            return self._window_unit(op, pending, window, timed)
        if isinstance(op, ops.Unit):  # a leaf with one empty solution per instant
            filters = _dedup(pending)
            streams = self.query.triple_streams(op)
            sig = ("unit", filters, window, timed, self.updates, streams)
            return self._add(sig, lambda i: Leaf(i, op, (), filters, window, timed, self.updates, streams))

        if isinstance(op, ops.Triple) and isinstance(op.p, ops.Path) and self.windowed:
            return self._window_path(op, pending, window, timed)

        if isinstance(op, ops.Triple):
            ends = ([op.end] if op.end else []) + [v for _, v in op.stream_ends]  # timestamp()'s
            copy = [op.copy] if op.copy else []  # a repeated event's copies (cep.algebra.copies)
            vars_ = tuple(dict.fromkeys(ops.slots_vars(op) + ends + copy))
            filters = _dedup(pending)
            streams = self.query.triple_streams(op)
            later = self.later_copies
            sig = ("leaf", op, filters, window, timed, self.updates, streams, later)
            return self._add(sig, lambda i: Leaf(i, op, vars_, filters, window, timed, self.updates, streams, later))

        if is_table(op):
            raise QueryError(TABLE_ALONE, op.pos)
        if isinstance(op, ops.Join) and (is_table(op.left) or is_table(op.right)):
            table, other = (op.left, op.right) if is_table(op.left) else (op.right, op.left)
            return self._unary(table, other, pending, window, policy, timed)
        if isinstance(op, ops.LeftJoin) and isinstance(op.right, ops.Service) and not is_table(op.left):
            # OPTIONAL { SERVICE }: a left join with its view (cep.compile.services), a node of its own
            return self._unary(dataclasses.replace(op, left=None), op.left, pending, window, policy, timed)
        if isinstance(op, ops.UNARY):
            return self._unary(op, op.pattern, pending, window, policy, timed)
        if not isinstance(op, ops.Binary):
            raise TypeError(f"cannot binarize {op!r}")
        for operand in (op.left, op.right):
            if is_table(operand):
                keyword = op.spec.keyword or "OPTIONAL"  # the one operator besides Join written without one
                raise QueryError(f"{TABLE_ALONE}; {keyword} does not take it as an operand", operand.pos or op.pos)
        spec = op.spec
        operands = (op.left, op.right)
        if spec.alternative:
            # a filter over a union is the union of the filtered branches
            down, here = [pending, pending], ()
        else:
            down, here = _split_pending(pending, [
                ops.certain_variables(x, self.certain) if must else None  # no filter goes to an optional operand
                for x, must in zip(operands, spec.mandatory)])
        # inside a window, judged over the window's content: an operand
        # counts only while a window holds it, so the range bounds both
        content = self.windowed and (isinstance(op, CONTENT_OPERATORS) or self.changing or self.by_triple)
        ids = [None, None]
        for i in sorted((0, 1), key=lambda i: not spec.mandatory[i]):  # the mandatory operand's nodes first
            if spec.mandatory[i] or spec.alternative:
                ids[i] = self.build(operands[i], down[i], window, policy, timed if spec.alternative else False)
            else:
                # an optional operand keeps every solution, whatever the
                # answer's filters and window (over the stream); the right
                # operand of NOTSEQ only decides absence, and no policy
                # consumes its events: any confirmation cancels (consumed,
                # it would let a deadline fire that the stream cancels)
                ids[i] = self.build(operands[i], (), window if content else None,
                                    "unrestricted" if spec.negated else policy)
        content = content or any(self.plan.nodes[i].content for i in ids)
        return self._step(op, ids[0], ids[1], here, getattr(op, "cond", None), window, policy, timed,
                          deadline=getattr(op, "deadline_ms", None), content=content)

    def _window_path(self, op, pending, window, timed) -> int:
        """A property path inside a window walks the window's content as one
        graph (docs/language.md, "Property paths"): a content node over the
        solutions of a leaf `?s ?p ?o` (of the path's streams, whose
        predicate is one of the path's IRIs, or every one for
        Path.reads_every_event), kept per window (cep.compile.windows)."""
        spo = tuple(ops.Var(f"_:path{n}") for n in "spo")
        every = dataclasses.replace(op, s=spo[0], p=spo[1], o=spo[2], pos=None)
        mine = () if op.p.reads_every_event(op.s, op.o) else (
            ops.Call("in", spo[1], *(ops.Const(iri) for iri in sorted(op.p.iris()))),)
        streams = self.query.triple_streams(op)
        later = self.later_copies
        sig = ("leaf", every, mine, window, False, self.updates, streams, later)
        child = self._add(sig, lambda i: Leaf(i, every, spo, mine, window, False, self.updates, streams, later))
        vars_, filters = tuple(dict.fromkeys(ops.slots_vars(op))), _dedup(pending)
        sig = ("unary", op, child, filters, window, timed, True, None)
        return self._add(sig, lambda i: Unary(i, op, child, vars_, filters, window, timed, True))

    def _window_unit(self, op, pending, window, timed) -> int:
        """The empty group inside a window: one solution, the empty one, at
        each evaluation, empty window included (RSP-QL's eval(SDS, SE, t) of
        the empty pattern; docs/language.md, "The empty group"). A content
        node (cep.compile.windows) over a leaf of every event of its
        streams, kept per window: they are the window's content, which the
        report policies read (a query that reads the whole window): each
        with its triple, as a [TRIPLES n] window holds some of an instant's."""
        spo = tuple(ops.Var(f"_:unit{n}") for n in "spo")
        every = ops.Triple(*spo)
        streams = self.query.triple_streams(op)
        later = self.later_copies
        sig = ("leaf", every, (), window, False, self.updates, streams, later)
        child = self._add(sig, lambda i: Leaf(i, every, spo, (), window, False, self.updates, streams, later))
        unit, filters = dataclasses.replace(op, pos=None), _dedup(pending)
        sig = ("unary", unit, child, filters, window, timed, True, None)
        return self._add(sig, lambda i: Unary(i, unit, child, (), filters, window, timed, True))

    def _unary(self, op, operand, pending, window, policy, timed) -> int:
        """The Unary node of `op` over `operand`: the conditions that read
        only what the operand binds for sure are checked below it, the
        others (those that read the variable BIND or the table binds) on
        the node's own solutions."""
        certain = ops.certain_variables(operand, self.certain)
        if isinstance(op, ops.Project):  # a condition outside cannot read what the subquery hides
            certain = certain & set(op.vars)
        if isinstance(op, ops.Project) and op.evaluated:
            # its rows are made of all its pattern's solutions of an instant: no
            # condition or bound from outside may thin them out before
            (down,), here = [()], pending
            child = self.build(operand, (), None, policy, False)
        elif isinstance(op, ops.Extend) and op.var.name.startswith(ALT_PREFIX):
            # a UNION operand's mark (cep/algebra/bags.py): no condition reads it, and
            # the solution keeps its interval, so every condition is its operand's
            (down,), here = [pending], ()
            child = self.build(operand, down, window, policy, timed)
        else:
            (down,), here = _split_pending(pending, [certain])
            child = self.build(operand, down, window, policy, timed)
        cvars = self.plan.nodes[child].vars
        optional_service = isinstance(op, ops.LeftJoin)
        if op is not None and not is_table(op) and not optional_service:  # the operator, not its operand again
            op = dataclasses.replace(op, pattern=None, pos=None)
        if isinstance(op, ops.Project) and op.grouping is not None:  # a row's fields
            vars_ = op.vars
        elif isinstance(op, ops.Project):
            vars_ = tuple(v for v in cvars if v in op.vars)
        elif optional_service:
            vars_ = tuple(dict.fromkeys(cvars + op.right.vars))
        elif not is_table(op):  # BIND
            vars_ = tuple(dict.fromkeys(cvars + (op.var,)))
        else:
            vars_ = tuple(dict.fromkeys(cvars + tuple(sorted(ops.variables(op), key=lambda v: v.name))))
        filters = _dedup(here)
        evaluated = isinstance(op, ops.Project) and op.evaluated
        # a subquery with its own aggregation or cut inside a window groups
        # or cuts the solutions the window holds (RSP-QL evaluates it over
        # the window's content), not those of the stream at each instant:
        # an event that starts before the window is no part of its rows
        content = self.plan.nodes[child].content or self.windowed and (self.changing or self.by_triple or evaluated)
        instants = None
        if content and evaluated:
            # its rows are made at each instant the window holds, as they are
            # at each instant of the stream outside (docs/language.md,
            # "Subqueries"): the ends of the events in it, every event's
            every = ops.Triple(*(ops.Var(f"_:instant{n}") for n in "spo"))
            later = self.later_copies
            sig = ("leaf", every, (), window, False, self.updates, None, later)
            instants = self._add(sig, lambda i: Leaf(i, every, (), (), window, False, self.updates, None, later))
        # a SERVICE is maintained under its query's policy (@service): shared only by queries with the same
        policy = self.query.option("service") if isinstance(op, (ops.Service, ops.LeftJoin)) else None
        sig = ("unary", op, child, filters, window, timed, content, policy, instants)
        return self._add(sig, lambda i: Unary(i, op, child, vars_, filters, window, timed, content, instants))

    def _step(self, op, left, right, filters, cond, window, policy, timed=False, deadline=None, content=False):
        nodes = self.plan.nodes
        kind = type(op)  # Step.op
        lvars, rvars = nodes[left].vars, nodes[right].vars
        vars_ = lvars if kind.spec.negated else tuple(dict.fromkeys(lvars + rvars))
        if kind.spec.alternative:
            key = ()
        else:
            certain_l = _certain_of(nodes, left, self.certain_of)
            certain_r = _certain_of(nodes, right, self.certain_of)
            key = tuple(v for v in vars_ if v in certain_l and v in certain_r)
        filters = _dedup(filters)
        sig = ("step", kind, left, right, cond, filters, window, policy, timed, deadline, content)
        return self._add(sig, lambda i: Step(i, kind, left, right, vars_, key, cond, filters, window, policy,
                                             timed, deadline, content))


def _certain_of(nodes, node_id, memo: dict) -> set:
    """The variables bound in every solution of a node; `memo` keeps them by node id."""
    if node_id in memo:
        return memo[node_id]
    node = nodes[node_id]
    if isinstance(node, Leaf):
        out = set(node.vars)
    elif isinstance(node, Unary) and isinstance(node.op, ops.Project) and node.op.grouping is not None:
        out = set()  # a group's keys may be unbound and its aggregates errors
    elif isinstance(node, Unary):
        out = _certain_of(nodes, node.child, memo) & set(node.vars)
        if isinstance(node.op, ops.Extend) and not is_table(node.op):
            out |= {node.op.var} if isinstance(node.op.expr, ops.Const) else set()
        elif not isinstance(node.op, (ops.Project, ops.LeftJoin)):  # OPTIONAL { SERVICE } binds none for sure
            out |= ops.certain_variables(node.op)
    else:
        out = ops.combine(node.op.spec, _certain_of(nodes, node.left, memo), _certain_of(nodes, node.right, memo),
                          certain=True)
    memo[node_id] = out
    return out


def _split_pending(pending, child_certain):
    """Send each conjunct to the first child where all its variables are
    bound for sure (a child's set None: none goes there); conjuncts that
    read the interval stay at this step."""
    down = [() for _ in child_certain]
    here = ()
    for c in pending:
        target = None
        if not ops.expr_uses(c, ops.TIME_FUNCTIONS):
            need = ops.expr_vars(c)
            target = next((i for i, cv in enumerate(child_certain) if cv is not None and need <= cv), None)
        if target is None:
            here += (c,)
        else:
            down[target] += (c,)
    return down, here


def _dedup(items):
    return tuple(dict.fromkeys(items))
