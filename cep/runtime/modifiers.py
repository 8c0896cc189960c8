"""Solution modifiers on the engines' answers: ORDER BY, OFFSET and LIMIT
order and cut the answers of one evaluation of a query (docs/language.md,
"Solution modifiers"): those it releases together that end at one instant
(a window's evaluation time, or the instant a solution of an unwindowed
pattern completes). An ASK's solutions of one evaluation make one answer.

    modify(table, layouts, queries) -> table

works on the rules' raw answer table (columns q, start, end, f0, f1, ...:
cep.engine.AnswerBatch), before the answers are named and written, so both
engines (the Spark engine runs a modified query in one group: cep.spark.
routing) cut the same answers. A key that is not a selected variable
sorts by a hidden field after the answer's (ops.sort_fields), which no
answer shows; a DISTINCT query's answers then equal in all but their
hidden fields are one, the first in order (SPARQL: ORDER BY, then the
projection, then DISTINCT).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import numpy as np
import pyarrow as pa

from cep import terms
from cep.algebra import ops

XSD = terms.XSD
NUMERIC = {XSD + t for t in ("integer", "decimal", "float", "double", "nonPositiveInteger",
                             "negativeInteger", "long", "int", "short", "byte", "nonNegativeInteger",
                             "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
                             "positiveInteger")}
STRINGS = {None, XSD + "string"}


def term_key(term):
    """A sort key of an N-Triples term (None: unbound) in SPARQL 1.1's
    ORDER BY order (15.1): unbound, then blank nodes, then IRIs, then
    literals: numbers by value, then simple and xsd:string literals by
    their text, language-tagged ones, booleans (false first),
    xsd:dateTime by time, then other literals by datatype and text. Terms
    of one value (1 and 01) by their text."""
    if term is None:
        return (0,)
    kind, *parts = terms.split(term)
    if kind == "bnode":
        return (1, parts[0])
    if kind == "iri":
        return (2, parts[0])
    lexical, datatype, lang = parts
    if lang:
        return (3, 2, lexical, lang)
    if datatype in NUMERIC:
        try:
            number = Decimal(lexical.strip())  # INF and -INF of float and double too
        except InvalidOperation:  # a malformed number: no value
            return (3, 5, datatype, lexical)
        # NaN is no value to compare: after the numbers, with the other literals
        return (3, 5, datatype, lexical) if number.is_nan() else (3, 0, number, lexical)
    if datatype in STRINGS:
        return (3, 1, lexical)
    if datatype == XSD + "boolean" and lexical.strip() in ("true", "false", "1", "0"):
        return (3, 3, lexical.strip() in ("true", "1"), lexical)
    if datatype == XSD + "dateTime":
        try:
            return (3, 4, terms.parse_datetime_ms(lexical.strip()), lexical)
        except terms.TermError:
            pass
    return (3, 5, datatype, lexical)


class _Descending:
    """A key that sorts in reverse."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __lt__(self, other):
        return other.key < self.key

    def __eq__(self, other):
        return self.key == other.key


def order_ranks(text: str) -> str:
    """The ORDER BY order of a subquery's rows, for the rules
    (cep_window:cep_subquery_rows/6 calls it as cep_order_rank/2, which
    cep.runtime.session registers): `text` is a line of directions (asc or
    desc, one per key), then a line per row, its keys' N-Triples texts
    separated by tabs (an empty one: unbound); the answer is the rows'
    indexes in order, separated by spaces (rows that tie keep theirs)."""
    head, *lines = text.split("\n")
    descending = [d == "desc" for d in head.split(" ")]
    keys = [[t or None for t in line.split("\t")] for line in lines]

    def key(i):
        return tuple(_Descending(term_key(k)) if d else term_key(k) for k, d in zip(keys[i], descending))
    return " ".join(str(i) for i in sorted(range(len(keys)), key=key))


def _first_of_each(members, key) -> list:
    seen, out = set(), []
    for i in members:
        k = key(i)
        if k not in seen:
            seen.add(k)
            out.append(i)
    return out


def modify(table: pa.Table, layouts, queries) -> pa.Table:
    """The raw answer table with each modified query's answers ordered and
    cut per (query, end time), and an ASK's answers one per (query, end
    time), the earliest start; the other rows stay as they are, in order."""
    modified = [(layout, query) for layout in layouts
                for query in (queries[layout.index],) if query.modified or query.form == "ask"]
    if not modified or not table.num_rows:
        return table
    q = table["q"].to_numpy(zero_copy_only=False)
    keep = np.ones(table.num_rows, dtype=bool)
    # where each kept row goes: its own index, or for the answers of a
    # modified evaluation the place of its first answer, then by rank
    position = np.arange(table.num_rows, dtype=np.float64)
    for layout, query in modified:
        rows = np.flatnonzero(q == layout.index)
        if not len(rows):
            continue
        keep[rows] = False
        taken = pa.array(rows)
        ends = table["end"].take(taken).to_pylist()
        starts = table["start"].take(taken).to_pylist()
        fields = [table[f"f{i}"].take(taken).to_pylist() for i in range(layout.width)]
        by_name = dict(zip(layout.fields + layout.hidden, fields))
        unbound = [None] * len(rows)  # SELECT * ordered by a variable its pattern never binds
        columns = [by_name.get(name, unbound) for name in ops.sort_fields(query)[0]]
        fields = fields[:len(layout.fields)]
        if query.form == "select":  # ties by start, then bindings: every run cuts alike
            ties = [(starts[i], sorted((name, column[i]) for name, column in zip(layout.fields, fields)
                                       if column[i] is not None)) for i in range(len(rows))]
        else:
            ties = [None] * len(rows)
        evaluations = {}
        for i, end in enumerate(ends):
            evaluations.setdefault(end, []).append(i)
        stop = None if query.limit is None else query.offset + query.limit
        for members in evaluations.values():
            first = rows[members[0]]
            if query.form == "ask":  # one answer: "true", over the evaluation's solutions
                members = [min(members, key=starts.__getitem__)]
            elif query.form == "select":
                members = sorted(members, key=lambda i: (tuple(
                    _Descending(term_key(c[i])) if k.descending else term_key(c[i])
                    for k, c in zip(query.order, columns)), ties[i]))
            if query.distinct and layout.hidden:  # the first of the answers that look alike
                members = _first_of_each(members, lambda i: (starts[i], tuple(c[i] for c in fields)))
            chosen = members[query.offset:stop]
            for rank, i in enumerate(chosen):
                keep[rows[i]] = True
                position[rows[i]] = first + (rank + 1) / (len(chosen) + 1)
    kept = np.flatnonzero(keep)
    return table.take(pa.array(kept[np.argsort(position[kept], kind="stable")]))
