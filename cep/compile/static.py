"""Queries over background data alone (Streaming SPARQL's Listing 1.2: a
query whose patterns match only static data).

    static_items(plan, vars_of, graph) -> program items

A solution made of background triples alone has no event, so no event
makes it: the event-driven rules never find it. '$static'(Q, Values) gives
each such solution of the pattern of query Q, a query over static data
(ops.Query.over_static_data: its own `FROM <file>` and no FROM STREAM), found
in the background graph as a content node's timeless operand is
(cep.compile.steps._timeless); the runtime answers them once, at the first
instant of the stream (cep_runtime:cep_static/3; docs/language.md,
"Queries over static data").
"""

from __future__ import annotations

from cep import prolog as pl
from cep.compile.clauses import tuple_term
from cep.compile.steps import _timeless


def static_items(plan, vars_of, graph) -> list:
    """The '$static'/2 clauses of the plan's queries; `vars_of(index)` makes
    the variables of a clause of the query of that index; `graph`: the
    module of the background triples (None: no background)."""
    items = []
    for i, out in enumerate(plan.outputs) if graph is not None else ():
        if not out.query.over_static_data or out.parts:
            continue
        vs = vars_of(i)
        found = _timeless(plan, plan.node(out.root), vs, graph)
        if found is not None:
            items.append(pl.Clause(pl.Struct("$static", i, tuple_term(vs, plan.output_vars(out))), tuple(found)))
    return items  # none: the runtime finds no '$static'/2

