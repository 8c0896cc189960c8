"""The reference evaluator: the paper's formal semantics (section 4.2),
evaluated naively over a finite stream. It is the test oracle of the engine.

    evaluate(queries, events) -> list[Answer]
    solutions(pattern, events) -> set of (frozenset(mu.items()), ts, te)
    multiset(answers) -> Counter   the form in which answers are compared

`evaluate` takes queries (cep.algebra.ops.Query) and events (cep.events.Event)
and returns every answer of every query over the whole stream, in a fixed
order (query, end, start, content). SELECT answers form a multiset: one per
solution of the pattern, DISTINCT keeps one per (bindings, start, end).
CONSTRUCT gives one answer per solution that instantiates at least one
template triple; template blank nodes are fresh per answer (`_:r0`, `_:r1`,
...), so compare CONSTRUCT answers modulo blank node renaming.

Constructed triples are not fed back into the stream (the paper's Q-closure
is not computed here). Only the paper's semantics is evaluated: a query with
an event consumption policy other than `unrestricted` is refused.
"""

from __future__ import annotations

import itertools
from collections import Counter

from cep.algebra import ops
from cep.events import Answer
from cep.reference.expressions import USER_PROLOG, ExprError, value
from cep.reference.patterns import compatible, merge, solutions, stream_of

__all__ = ["evaluate", "solutions", "answers", "multiset", "stream_of", "compatible", "merge"]


def evaluate(queries, events, background=None, prolog=None) -> list[Answer]:
    """`background`: a cep.background.Background (see patterns.py).
    `prolog`: the user's Prolog files whose predicates the expressions call
    (paths or a cep.user_prolog.UserProlog; expressions.py)."""
    from cep.user_prolog import load_user_prolog

    stream = stream_of(events, background)
    out = []
    bnodes = itertools.count()
    token = USER_PROLOG.set(load_user_prolog(prolog))
    try:
        if any(q.form == "update" for q in queries):
            out = _with_updates(queries, events, background, bnodes)
        else:
            for q in queries:
                out += answers(q, stream, bnodes)
    finally:
        USER_PROLOG.reset(token)
    return out


def _with_updates(queries, events, background, bnodes) -> list[Answer]:
    """Evaluation with updates of the background (docs/language.md): the
    solutions that end at instant t are those over the stream and the
    background as the updates of the instants before t left it, that is
    closure(schema + B) with B the files' instance triples, changed at
    the end of each instant by the updates' solutions that end then (all
    deletions, then all insertions, as SPARQL's DELETE/INSERT)."""
    from cep.background import rdfs

    schema = {t for t in background.triples if t[1] in rdfs.SCHEMA_PREDICATES}
    instances = set(background.instances)
    out = []
    stream = None  # made again only when the instances change
    for t in sorted({e.end for e in events}):
        if stream is None:
            stream = stream_of(events, background, rdfs.closure(schema | instances))
        deletions, insertions = set(), set()
        for q in queries:
            if q.form != "update":
                out += answers(q, stream, bnodes, at=t)
                continue
            for mu, ts, te in solutions(q.pattern, stream):
                if te == t and ts is not None:
                    mu = dict(mu)
                    deletions |= set(ops.instantiate(q.deletions, mu, None))
                    insertions |= set(ops.instantiate(q.template, mu, None))
        changed = (instances - deletions) | {x for x in insertions if x[1] not in rdfs.SCHEMA_PREDICATES}
        if changed != instances:
            instances, stream = changed, None
    return out


def answers(query: ops.Query, stream, bnodes=None, at=None) -> list[Answer]:
    """The answers of one query over a stream (events or a stream_of set);
    `at`: only those that end at that time."""
    bnodes = bnodes if bnodes is not None else itertools.count()
    policy = query.option("policy", "unrestricted")
    if policy != "unrestricted":
        raise ValueError(f"query {query.name}: the reference evaluates the paper's semantics only "
                         f"(policy unrestricted), not @policy {policy}")
    timed = (s for s in solutions(query.pattern, stream)
             if s[1] is not None and (at is None or s[2] == at))  # only events detect
    ordered = sorted(timed, key=lambda s: (s[2], s[1], sorted(s[0])))
    out = []
    seen = set()
    for mu, ts, te in ordered:
        if query.form == "construct":
            triples = _instantiate(query, dict(mu), ts, te, bnodes)
            if triples:
                out.append(Answer(query.name, ts, te, triples=triples))
            continue
        bindings = _project(query, dict(mu), ts, te)
        if query.distinct:
            if (bindings, ts, te) in seen:
                continue
            seen.add((bindings, ts, te))
        out.append(Answer(query.name, ts, te, bindings=bindings))
    return out


def _extend(mu: dict, item: ops.ProjectItem, ts, te):
    """SELECT (expr AS ?v): ?v is bound to the value, or left unbound on an
    error. Later items see the variables of earlier ones."""
    try:
        mu[item.var.name] = value(item.expr, mu, ts, te)
    except ExprError:
        mu.pop(item.var.name, None)


def _project(query, mu: dict, ts, te) -> tuple:
    if query.projection is None:
        return tuple(sorted((k, v) for k, v in mu.items() if not k.startswith("_:")))
    out = {}
    for item in query.projection:
        if item.expr is not None:
            _extend(mu, item, ts, te)
        if item.var.name in mu:
            out[item.var.name] = mu[item.var.name]
    return tuple(sorted(out.items()))


def _instantiate(query, mu: dict, ts, te, bnodes) -> tuple:
    """The template under mu, extended first by a sub-select's expressions."""
    for item in query.projection or ():
        if item.expr is not None:
            _extend(mu, item, ts, te)
    return ops.instantiate(query.template, mu, lambda: f"_:r{next(bnodes)}")


def rename_bnodes(triples) -> tuple:
    """Blank nodes relabelled _:b0, _:b1, ... in order of first appearance."""
    labels = {}

    def fix(term):
        if term.startswith("_:"):
            return labels.setdefault(term, f"_:b{len(labels)}")
        return term

    return tuple(tuple(fix(t) for t in triple) for triple in triples)


def multiset(answers) -> Counter:
    """Answers as a multiset of (query, bindings, start, end, triples), with
    the triples of a CONSTRUCT answer modulo blank node labels: the form in
    which two evaluations of the same queries are compared."""
    return Counter((a.query, a.bindings, a.start, a.end, rename_bnodes(a.triples)) for a in answers)
