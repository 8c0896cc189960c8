"""DELETE/INSERT rules: the live view of the background graph that the
rules of a rule set with updates read (their own t/3), and the templates
an update's solution deletes and inserts."""

from __future__ import annotations

from cep import prolog as pl
from cep import terms
from cep.algebra import ops
from cep.background.rdfs import SCHEMA_PREDICATES
from cep.compile.clauses import LIVE, A, T, Vars, resource, tuple_term
from cep.compile.expr import Scope, conj, ite, q
from cep.compile.leaves import entailment_table


def live_view(background) -> list:
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
        pl.Struct("\\+", pl.Struct("$schema_predicate", P)), resource(S))))
    items += entailment_table("$bg_entails", background.schema)
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


def update_clause(plan, index, out):
    """'$update'(Index, Values, Deletions, Insertions): an update's
    templates under a solution, as lists of t(S, P, O); a triple with an
    unbound variable, a subject that is a literal or a predicate that is
    not an IRI is left out (SPARQL 16.2), as is a schema triple (the
    schema is fixed)."""
    root = plan.node(out.root)
    vs = Vars(Scope())  # no expressions
    v = tuple_term(vs, root.vars)

    def triples(template):
        return pl.PList([pl.Struct("t", *(vs.of(x) if isinstance(x, ops.Var) else terms.to_prolog(x)
                                          for x in (t.s, t.p, t.o))) for t in template])

    ds, is_ = pl.Var("Ds"), pl.Var("Is")
    return pl.Clause(pl.Struct("$update", index, v, ds, is_), (
        pl.Struct("include", A("$usable"), triples(out.query.deletions), ds),
        pl.Struct("include", A("$usable"), triples(out.query.template), is_)))
