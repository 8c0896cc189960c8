"""Compilation: queries (algebra) -> binarized plan -> Prolog rules.

`compile_queries` returns a CompiledRules: the Prolog program text, the name
of the module it loads into (a hash of the text, so loading is idempotent),
and the layout of each query's answer lines (calls of the user's Prolog
predicates resolved first against their files, cep/user_prolog.py).
`compile_rules` gives the text alone (for `cep compile`), `explain` the
readable account of every stage (for `cep explain`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cep import prolog as pl
from cep.algebra import ops, sexpr
from cep.algebra.query_limits import deep
from cep.algebra.chaining import Chaining, analyse
from cep.binarize import Leaf, Plan, Unary, binarize
from cep.compile.leaves import count_streams, is_streamed, reads_copies
from cep.compile.program import compile_plan, program_hash, unbounded_state
from cep.compile.projection import QueryLayout, answer_width
from cep.compile.windows import check_windows
from cep.limits import Limits
from cep.user_prolog import calls, check_calls


@dataclass(frozen=True)
class CompiledRules:
    module: str  # the rule set's name: cep_rs_ and a hash of the program
    body: str  # the program without its module header
    layouts: tuple  # QueryLayout per query, in query order
    queries: tuple
    plan: Plan
    chaining: Chaining  # which queries read which CONSTRUCT rules' triples
    background_module: str | None = None  # the Prolog module of the background facts the rules read
    user_module: str | None = None  # the Prolog module of the user predicates the rules call

    @property
    def streamed(self) -> bool:
        """Whether the events of a stream must say so (cep.runtime.batch:
        their predicate wrapped, '$in'(Stream, P))."""
        return is_streamed(self.plan)

    @property
    def copies(self) -> bool:
        """Whether the rules tell apart the copies of a repeated event
        (cep.algebra.copies; cep.runtime.batch: the K-th copy's predicate
        wrapped, '$copy'(K, P))."""
        return reads_copies(self.plan)

    @property
    def count_streams(self):
        """The streams the count windows count the events of (a frozenset
        of IRIs), or None for every event."""
        return count_streams(self.plan)

    @property
    def width(self) -> int:
        """The number of fields of every answer line (cep_runtime.pl)."""
        return answer_width(self.layouts)

    @property
    def text(self) -> str:
        return self.program(self.module)

    def program(self, module: str) -> str:
        """The program as a module named `module` (one per running engine,
        so two engines of the same rules keep separate goals)."""
        header = [
            # no exports (the runtime calls Module:cep_event/6), so that the
            # module, still empty, can be made temporary: one that
            # cep_runtime:cep_unload/1 can destroy (Engine.close)
            pl.Directive(pl.Struct("module", pl.Atom(module), pl.PList([]))),
            pl.Directive(pl.Struct("set_module", pl.Struct("class", pl.Atom("temporary")))),
            pl.Clause(pl.Struct("$cep_rules", pl.Atom(self.module))),
        ]
        return _banner(self.queries) + pl.write_program(header) + self.body


@deep
def compile_queries(queries, background=None, prolog=None, limits=None) -> CompiledRules:
    """`background` (cep.background.Background): the rules match events
    modulo its RDFS schema and join with its triples; it must be loaded
    into Prolog (background.module) before the rules run. `prolog`
    (cep.user_prolog.UserProlog): the user predicates the queries may
    call; a call of any other name is a QueryError at its position.
    `limits` (cep.limits.Limits): a window with more evaluations than its
    window_evaluations is a QueryError."""
    queries = tuple(queries)
    check_calls(queries, prolog)
    check_windows(queries, (limits or Limits()).window_evaluations)
    chaining = analyse(queries, background.schema if background is not None else None)
    plan = binarize(queries)
    items, layouts = compile_plan(plan, background, chaining, prolog)
    body = pl.write_program(items)
    uses_user = prolog is not None and next(calls(queries), None) is not None
    return CompiledRules("cep_rs_" + program_hash(body), body, tuple(layouts), queries, plan, chaining,
                         background.module if background is not None else None,
                         prolog.module if uses_user else None)


def compile_rules(queries, background=None, prolog=None, limits=None) -> str:
    """The generated Prolog program, as readable text."""
    return compile_queries(queries, background, prolog, limits).text


def state_warnings(queries) -> list[str]:
    """A warning for each query whose partial matches are kept with no
    time bound, so its state grows with the stream (cep run and cep
    explain print them)."""
    return unbounded_state(binarize(tuple(queries)))


def _banner(queries) -> str:
    names = ", ".join(q.name for q in queries)
    return f"% Event-driven backward-chaining rules compiled from EP-SPARQL queries: {names}\n"


def describe_plan(plan: Plan) -> str:
    lines = []
    for node in plan.nodes:
        vars_ = " ".join(str(v) for v in node.vars)
        extra = []
        if node.window is not None:
            extra.append(f"window<={node.window}ms")
        if node.filters:
            extra.append("filters: " + " ; ".join(sexpr.expr(f) for f in node.filters))
        if isinstance(node, Leaf) and isinstance(node.triple, ops.Unit):
            head = f"e{node.id} = unit"
        elif isinstance(node, Leaf):
            t = node.triple
            head = f"e{node.id} = triple {sexpr.slot(t.s)} {sexpr.slot(t.p)} {sexpr.slot(t.o)}"
        elif isinstance(node, Unary):
            head = f"e{node.id} = {sexpr.unary(node.op)}(e{node.child})"
        else:
            head = f"e{node.id} = {node.op.spec.sexpr}(e{node.left}, e{node.right})"
            if node.key:
                extra.append("key: " + " ".join(str(v) for v in node.key))
            if node.deadline is not None:
                extra.append(f"deadline: {node.deadline}ms")
            if node.cond is not None:
                extra.append("condition: " + sexpr.expr(node.cond))
            if node.policy != "unrestricted":
                extra.append(f"policy: {node.policy}")
        if node.content:
            extra.append("over the window's content, at each evaluation")
        lines.append(f"  {head}  -> ({vars_})" + ("  [" + "; ".join(extra) + "]" if extra else ""))
    for out in plan.outputs:
        parts = "".join(f" e{p.root} ({sexpr.window_size(p.window)})" for p in out.parts)
        lines.append(f"  query {out.query.name} <- e{out.root}" + (f"  [parts:{parts}]" if parts else ""))
    return "\n".join(lines)


def describe_services(plan: Plan) -> str:
    """A line or two per SERVICE pattern of the plan: its node, endpoint,
    view (its variables and join key), its query's window and when it is
    joined (docs/language.md, "SERVICE")."""
    from cep.compile.services import deferred_nodes
    from cep.service.view import service_specs

    deferred = deferred_nodes(plan)
    lines = []
    for spec in service_specs(plan):
        op = spec.op
        vars_ = " ".join(str(v) for v in op.vars)
        key = " ".join(str(v) for v in spec.key) or "none (one entry)"
        lines.append(f"  e{spec.node} = SERVICE{' SILENT' if op.silent else ''} <{op.endpoint}> of {spec.query}: "
                     f"view ({vars_}), one entry per join key {key}")
        if isinstance(plan.node(spec.node).op, ops.LeftJoin):
            lines.append("    inside OPTIONAL: a left join with the view (a solution without a match is kept alone)")
        if op.optional or op.filter is not None:
            lines.append(f"    sent: its triple patterns{' and OPTIONAL groups' if op.optional else ''}"
                         + ("; its FILTER is applied to the view's solutions" if op.filter is not None else ""))
        if spec.window:
            when = "at each evaluation of the window, after its maintenance" if spec.node in deferred else \
                "when a stream solution is found"
            width = "unbounded" if spec.window[0] == math.inf else f"{spec.window[0]}ms"
            # (a query whose groups have windows of their own: at each leading group's window's times)
            every = " and ".join(f"{beta}ms" for beta, _ in spec.grids)
            lines.append(f"    maintained at each evaluation (every {every}, window {width}); joined {when}")
        else:
            lines.append("    maintained at each call of the rules; joined when a stream solution is found")
        if spec.policy:
            given = ",".join(f"{k}={('on' if v else 'off') if k == 'view' else v}" for k, v in spec.policy.items())
            lines.append(f"    policy: its query's @service {given}, the run's for the other keys")
    if lines:
        lines.append("  policy: the run's (cep run --service-policy: view, proposer, ranker, gamma or rho, timeout; "
                     "default WSJ and LRU, gamma 10, timeout 5 s), or a query's @service; endpoints: --service-allow")
    return "\n".join(lines)


@deep
def explain(queries, background=None, prolog=None, limits=None) -> str:
    """Algebra, binarized plan and generated rules of a rule set."""
    compiled = compile_queries(queries, background, prolog, limits)
    parts = ["== algebra"]
    for q in compiled.queries:
        parts.append(f"-- {q.name} (policy {q.option('policy', 'unrestricted')})\n{sexpr.query(q)}")
    parts.append("== binarized plan (binary intermediate events, in binarization order)")
    parts.append(describe_plan(compiled.plan))
    services = describe_services(compiled.plan)
    if services:
        parts.append("== SERVICE patterns (their local views and when they are joined)")
        parts.append(services)
    parts.append("== rule chaining (queries that read the triples CONSTRUCT rules derive)")
    parts.append(compiled.chaining.explain())
    parts.append("== Prolog rules (module %s)" % compiled.module)
    parts.append(compiled.text)
    return "\n".join(parts)


__all__ = ["CompiledRules", "QueryLayout", "compile_queries", "compile_rules", "explain", "state_warnings"]
