"""Rule chaining in the compiled program (the paper's Q-closure;
cep/algebra/chaining.py decides who reads whom): a CONSTRUCT rule's
answers queue their triples to be fed back as events, and the instant's
deferred optional checks run in strata."""

from __future__ import annotations

from cep import prolog as pl
from cep import terms
from cep.algebra import ops
from cep.binarize import node_children
from cep.compile.clauses import RUNTIME, A, F, resource
from cep.compile.expr import q


def deferred_strata(plan, deferred, chaining) -> list:
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
        todo = list(out.roots)
        while todo:
            node = plan.node(todo.pop())
            level[node.id] = min(level.get(node.id, stratum), stratum)
            todo += node_children(node)
    strata = sorted({level[n] for n in deferred})
    return [[n for n in deferred if level[n] == s] for s in strata]


def derivations(plan, deriving, deferred) -> list:
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
        pl.Struct("ground", pl.Struct("t", S, P, O)), pl.Struct("atom", P), resource(S))))
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
