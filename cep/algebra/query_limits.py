"""How large a query the engine takes (docs/language.md, "Limits"); the
limits of a run, reached while it runs, are in cep/limits.py.

    check_size(size, filename)       a rule file's size, in bytes
    check_nesting(tree, filename)    the syntax tree: brackets and operators nested
    check_depth(pattern)             the algebra: operators nested, chains and groups counted
    check_plan(slots, query)         the binarized plan: the bindings its steps carry
    check_duration(ms, text, pos)    a window, a WITHIN, a NOTSEQ deadline, a time span
    @deep                            a stage, run with RECURSION_LIMIT

Each check returns nothing or raises cep.errors.QueryError at the place in
the query where the limit is passed. They keep every stage of the pipeline in
bounded time and memory: the stages (translate, binarize, sexpr, compile,
the reference evaluator) recurse over a query's trees, and a long chain
such as {A} SEQ {B} SEQ ... means ((A SEQ B) SEQ ...), one level per
operator; each step of a binarized plan carries every variable bound before
it, so the compiled rules grow with the square of a long pattern.

The measures here walk the trees with explicit stacks, so that they hold
on any input. RECURSION_LIMIT is what the stages need for MAX_DEPTH levels
(about 4 to 7 Python frames per level at most: pickling the queries for
Spark, hashing and comparing them, deepcopy); cep.algebra raises the
interpreter's limit to it on import. Measured on CPython 3.11 with the
usual 8 MiB stack: at 20,000 frames a runaway recursion still ends in a
RecursionError, not a crash. The stages are wrapped in `deep`, which makes
sure of that limit while they run.
"""

from __future__ import annotations

import functools
import sys

from lark import Tree

from cep.algebra import ops
from cep.errors import QueryError

MAX_RULE_FILE_BYTES = 1 << 20  # 1 MiB: parsed, translated and compiled in about a minute
MAX_DEPTH = 2_000  # levels of nesting, in the syntax and in the algebra
MAX_PLAN_SLOTS = 1_000_000  # variables carried by the steps of a rule set's plan, in all
RECURSION_LIMIT = 20_000
# 10,000 years of 365.2425 days: more than the years 1 to 9999 that times may
# take span, and far from overflowing the runtime's 64-bit milliseconds
MAX_DURATION_MS = 3_652_425 * 86_400_000
MAX_DURATION = "10,000 years (P3652425D)"

# The syntax tree nodes that nest: every cycle of the grammar passes through one
NESTING = {"group", "sub_select_group", "bnode_props", "unary", "binary", "in_expr", "call",
           "aggregate", "path_alt", "path_seq", "path_inv", "path_mod"}

ADVICE = ("split it into smaller queries (a CONSTRUCT query can derive the triples the next "
          "one reads); see docs/language.md, \"Limits\"")


def allow_deep_recursion() -> None:
    """Raise the interpreter's recursion limit to RECURSION_LIMIT (never lower it)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


def deep(stage):
    """A stage that recurses over a query's trees, run with the recursion
    limit at least RECURSION_LIMIT and given back as it was: the limit
    raised on import may have been lowered since (hypothesis does it for
    each test example)."""
    @functools.wraps(stage)
    def run(*args, **kwargs):
        limit = sys.getrecursionlimit()
        if limit >= RECURSION_LIMIT:
            return stage(*args, **kwargs)
        sys.setrecursionlimit(RECURSION_LIMIT)
        try:
            return stage(*args, **kwargs)
        finally:
            sys.setrecursionlimit(limit)
    return run


def check_size(size: int, filename: str) -> None:
    if size > MAX_RULE_FILE_BYTES:
        raise QueryError(f"the rule file is {size:,} bytes long; the engine reads rule files of at most "
                         f"{MAX_RULE_FILE_BYTES:,} bytes (1 MiB): {ADVICE}", ops.Pos(filename, 1, 1))


def _too_deep(what: str) -> str:
    return f"{what} more than {MAX_DEPTH:,} levels deep here, the most the engine takes; {ADVICE}"


def check_nesting(tree: Tree, filename: str) -> None:
    """Brackets, operators and function calls nested in one another, as
    parsed: a group in braces, a blank node in brackets, an operator or a
    call in an expression, a property path each count one level."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if node.data in NESTING:
            depth += 1
            if depth > MAX_DEPTH:
                raise QueryError(_too_deep("brackets and operators nest"),
                                 ops.Pos(filename, node.meta.line, node.meta.column))
        stack.extend((c, depth) for c in node.children if isinstance(c, Tree))


def check_depth(pattern) -> None:
    """Operators nested in the algebra of a graph pattern: as the syntax
    check, and besides one level per operator of a chain ({A} SEQ {B} SEQ
    {C} is (A SEQ B) SEQ C), per triple pattern of a group (they are joined
    in turn) and per FILTER of a group (they are conjoined in turn). The
    place is the operator or triple pattern that passes the limit, counted
    from the innermost one (in a chain, the operator MAX_DEPTH from its
    start), or the FILTER of an expression that does."""
    height = {}  # id(node) -> levels from the innermost one up to it
    stack = [(pattern, getattr(pattern, "pos", None), False)]
    while stack:
        node, pos, done = stack.pop()
        pos = getattr(node, "pos", None) or pos
        parts = _parts(node)
        if not done:
            stack.append((node, pos, True))
            stack += [(p, pos, False) for p in parts if id(p) not in height]
            continue
        if isinstance(node, ops.BGP):
            levels = len(node.triples)
            if levels > MAX_DEPTH:
                raise QueryError(_too_deep("the group's triple patterns, joined one after another, nest"),
                                 node.triples[MAX_DEPTH].pos or pos)
        else:
            levels = 1 + max((height[id(p)] for p in parts), default=0)
        if levels > MAX_DEPTH:
            raise QueryError(_too_deep("operators (each of a chain such as {A} SEQ {B} SEQ ... is one level) "
                                       "nest"), pos)
        height[id(node)] = levels


def _parts(node) -> list:
    if isinstance(node, ops.Filter):
        return [node.pattern, node.cond]
    if isinstance(node, ops.Extend):
        return [node.pattern, node.expr]
    if isinstance(node, ops.Project):
        return [node.pattern]
    if isinstance(node, ops.BINARY):
        cond = getattr(node, "cond", None)
        return [node.left, node.right] + ([cond] if cond is not None else [])
    if isinstance(node, ops.Call):
        return list(node.args)
    return []


def check_plan(slots: int, query) -> None:
    """The variables the steps of a binarized plan carry, summed: what the
    size of the compiled rules follows."""
    if slots > MAX_PLAN_SLOTS:
        raise QueryError(f"{query.name}: the compiled rules would be too large: the steps of the binarized "
                         f"plan carry {slots:,} variables in all, and the engine takes at most "
                         f"{MAX_PLAN_SLOTS:,} (each step of a long pattern carries every variable bound "
                         f"before it); {ADVICE}", query.pos)


def check_duration(ms: int, text: str, pos) -> None:
    """A duration the runtime computes with (a window, a WITHIN or a FILTER
    on getDURATION(), a NOTSEQ deadline, a RANGE, STEP or COMPUTED EVERY):
    at most MAX_DURATION_MS."""
    if ms > MAX_DURATION_MS:
        raise QueryError(f"the duration {text} is longer than the engine takes: at most {MAX_DURATION}", pos)
