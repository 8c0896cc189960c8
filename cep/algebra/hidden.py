"""The walk shared by the rewrites that give a query's solutions hidden
variables (`_:` names, which SELECT * leaves out and no join compares,
each belonging to one operator): the copies of repeated events
(copies.py) and the twins of UNION and VALUES (bags.py).

    thread(op, own) -> (op, the hidden variables its solutions bind)

`own(op)` rewrites the operators its rewrite is about and gives
(op, variables), or None for the others, which this walk goes through:
a subquery passes its operand's variables up unless its solutions are a
set (DISTINCT, or grouped: its rows); the right side of MINUS and
[NOT] EXISTS binds nothing and is left as it is."""

from __future__ import annotations

import dataclasses

from cep.algebra import ops


def thread(op, own):
    done = own(op)
    if done is not None:
        return done
    if isinstance(op, (ops.Triple, ops.BGP, ops.Unit, ops.Values, ops.Service)):
        return op, ()
    if isinstance(op, ops.Project):
        pattern, hidden = thread(op.pattern, own)
        if op.distinct or op.evaluated:  # its solutions once each, or its rows (a set)
            return dataclasses.replace(op, pattern=pattern), ()
        return dataclasses.replace(op, pattern=pattern, vars=op.vars + hidden), hidden
    if isinstance(op, (ops.Filter,) + ops.UNARY):
        pattern, hidden = thread(op.pattern, own)
        return dataclasses.replace(op, pattern=pattern), hidden
    left, lh = thread(op.left, own)
    if isinstance(op, (ops.Minus, ops.Exists, ops.NotExists)):
        return dataclasses.replace(op, left=left), lh
    right, rh = thread(op.right, own)
    return dataclasses.replace(op, left=left, right=right), lh + rh
