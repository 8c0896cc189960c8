"""SPARQL's solutions are a multiset (SPARQL 1.1, 18.5): the rewrite of a
query's algebra that keeps apart the equal solutions that its algebra
makes twice.

    capture_alternatives(query) -> Query

The engine keeps a node's solutions as facts, which are a set, so two
solutions with the same bindings and interval would be one. Two places
in SPARQL's algebra make such twins out of distinct operands:

- Union(L, R) is the multiset union: a solution of both L and R is there
  twice (`{ BIND(?o+1 AS ?z) } UNION { BIND(?o+2 AS ?z) }`, W3C bind07);
- VALUES is a multiset of rows: two rows may be equal, or join a
  solution into the same one (`(UNDEF "Alan") (:b UNDEF)`, values5).

The rewrite gives each UNION a hidden variable `_:altN` bound to 1 in its
left operand and 2 in its right one (a BIND of a constant), and each
VALUES of more than one row a hidden column `_:altN` holding the row's
number. As each hidden variable belongs to one operator, joins never
compare them (as the copies' of cep/algebra/copies.py, and SELECT *
leaves them out): they only tell apart the solutions that came from
different operands or rows. A subquery without DISTINCT or its own
aggregation passes them up (its solutions are a multiset too);
SELECT DISTINCT and DISTINCT subqueries, which do not project them,
collapse the twins. The right side of MINUS and [NOT] EXISTS binds
nothing and is left as it is.

The reference evaluator (cep/reference/patterns.py) binds the same
kind of hidden variables, named by the operator's position, without
this rewrite.
"""

from __future__ import annotations

import dataclasses
import itertools

from cep import terms
from cep.algebra import ops
from cep.algebra.hidden import thread

PREFIX = "_:alt"


def capture_alternatives(query: ops.Query) -> ops.Query:
    counter = itertools.count()
    pattern, _ = _rewrite(query.pattern, lambda: ops.Var(f"{PREFIX}{next(counter)}"))
    return dataclasses.replace(query, pattern=pattern)


def _number(i: int) -> str:
    return terms.literal(str(i), terms.XSD_INTEGER)


def _rewrite(op, fresh):
    """(op with the hidden variables, those its solutions bind)."""
    def own(op):
        if isinstance(op, ops.Values) and len(op.rows) > 1:
            alt = fresh()
            rows = tuple(row + (_number(i),) for i, row in enumerate(op.rows, 1))
            return dataclasses.replace(op, vars=op.vars + (alt,), rows=rows), (alt,)
        if isinstance(op, ops.Union_):
            (left, la), (right, ra) = thread(op.left, own), thread(op.right, own)
            alt = fresh()
            left = ops.Extend(left, alt, ops.Const(_number(1)), pos=op.pos)
            right = ops.Extend(right, alt, ops.Const(_number(2)), pos=op.pos)
            return dataclasses.replace(op, left=left, right=right), la + ra + (alt,)
        return None
    return thread(op, own)
