"""Canonical S-expression text of algebra trees (used by `cep explain` and
the golden tests): `(seqjoin (bgp (triple ?k <http://ex/a> ?x)) ...)`; NOTSEQ is
`(notseq DEADLINE_MS [COND] P1 P2)`."""

from __future__ import annotations

from pathlib import Path

from cep.algebra import limits, ops

NAMES = {
    ops.Join: "join",
    ops.Union_: "union",
    ops.LeftJoin: "leftjoin",
    ops.SeqJoin: "seqjoin",
    ops.EqJoin: "eqjoin",
    ops.SeqRightJoin: "seqrightjoin",
    ops.EqLeftJoin: "eqleftjoin",
}


def slot(x) -> str:
    return str(x) if isinstance(x, (ops.Var, ops.Path)) else x


def expr(e) -> str:
    if isinstance(e, ops.Var):
        return str(e)
    if isinstance(e, ops.Const):
        return e.term
    if isinstance(e, ops.Call):
        if not e.args:
            return f"({e.name})"
        return "(" + e.name + " " + " ".join(expr(a) for a in e.args) + ")"
    raise TypeError(f"not an expression: {e!r}")


def pattern(op, indent: int = 0) -> str:
    lines = []
    _pattern_lines(op, indent, lines)
    return "\n".join(lines)


def _pattern_lines(op, indent: int, lines: list) -> None:
    """The lines of `op`'s text, appended (a text made by joining the texts
    of the operands, level by level, takes time cubic in a chain's length)."""
    pad = "  " * indent
    if isinstance(op, ops.Triple):  # GRAPH <stream> { ... }: (triple S P O (graph <stream>))
        graph = f" (graph {op.stream})" if op.stream is not None else ""
        lines.append(f"{pad}(triple {slot(op.s)} {slot(op.p)} {slot(op.o)}{graph})")
        return
    if isinstance(op, ops.BGP):
        lines.append(f"{pad}(bgp")
        operands = op.triples
    elif isinstance(op, ops.Filter):
        lines.append(f"{pad}(filter {expr(op.cond)}")
        operands = [op.pattern]
    elif isinstance(op, ops.SeqAbsence):  # (notseq MS [COND] P1 P2)
        cond = f" {expr(op.cond)}" if op.cond is not None else ""
        lines.append(f"{pad}(notseq {op.deadline_ms}{cond}")
        operands = [op.left, op.right]
    elif type(op) in NAMES:
        cond = getattr(op, "cond", None)
        lines.append(f"{pad}({NAMES[type(op)]}" + (f" {expr(cond)}" if cond is not None else ""))
        operands = [op.left, op.right]
    else:
        raise TypeError(f"not an algebra operator: {op!r}")
    for operand in operands:
        _pattern_lines(operand, indent + 1, lines)
    lines[-1] += ")"


@limits.deep
def query(q: ops.Query) -> str:
    """(select (ITEMS) PATTERN), (select-distinct ...), or
    (construct (TEMPLATE) PATTERN) with the items of a CONSTRUCT's
    sub-select, if any, on a line of their own before the pattern; the
    files a query names with FROM, if any, on a line (from <file:...> ...)
    before the pattern; its annotations (@policy, @binarize), if any, on a
    line (options (policy recent) ...) before that: they can change the
    answers (docs/language.md, "Consumption policies")."""
    if q.form == "update":
        def triples(ts):
            return " ".join(f"(triple {slot(t.s)} {slot(t.p)} {slot(t.o)})" for t in ts)
        head = f"(update (delete {triples(q.deletions)}) (insert {triples(q.template)})"
        return head + _options(q) + _from(q) + "\n" + pattern(q.pattern, 1) + ")"
    if q.form == "construct":
        tmpl = " ".join(f"(triple {slot(t.s)} {slot(t.p)} {slot(t.o)})" for t in q.template)
        head = f"(construct ({tmpl})"
        if q.projection:
            head += f"\n  ({_items(q.projection)})"
    else:
        items = "*" if q.projection is None else _items(q.projection)
        head = f"({'select-distinct' if q.distinct else 'select'} ({items})"
    return head + _options(q) + _from(q) + _window(q) + "\n" + pattern(q.pattern, 1) + _grouping(q) + ")"


def _options(q: ops.Query) -> str:
    if not q.options:
        return ""
    return "\n  (options " + " ".join(f"({key} {value})" for key, value in q.options) + ")"


def _window(q: ops.Query) -> str:
    """(window <stream> (range MS) (step MS)) or (window <stream> (triples N)),
    with (every MS) and the report operator when they are not the default."""
    w = q.window
    if w is None:
        return ""
    size = f"(triples {w.count})" if w.count is not None else f"(range {w.range_ms}) (step {w.step_ms})"
    extra = (f" (every {q.every_ms})" if q.every_ms is not None else "") + \
        (f" ({q.report})" if q.report != "rstream" else "")
    out = f"\n  (window {w.stream} {size}{extra})"
    if len(q.streams) > 1 or any(named for _, named in q.streams):
        # several streams, or a named one: (streams <s1> (named <s2>) ...)
        out += "\n  (streams " + " ".join(f"(named {iri})" if named else iri for iri, named in q.streams) + ")"
    return out


def aggregate(a: ops.Aggregate) -> str:
    arg = "*" if a.arg is None else expr(a.arg)
    return f"({a.func}{' distinct' if a.distinct else ''} {arg})"


def _grouping(q: ops.Query) -> str:
    g = q.grouping
    if g is None:
        return ""
    if g.keys is not None:
        aggs = " ".join(f"({v} {aggregate(a)})" for v, a in g.aggregates)
        out = f"\n  (group ({' '.join(str(k) for k in g.keys)}) {aggs})"
    else:
        out = "".join(f"\n  (aggregate {v} {aggregate(a)} ({' '.join(str(k) for k in keys)}))"
                      for v, a, keys in g.extensions)
    if g.having:
        out += "\n  (having " + " ".join(expr(e) for e in g.having) + ")"
    return out


def _from(q: ops.Query) -> str:
    if not q.ontologies:
        return ""
    return "\n  (from " + " ".join(f"<{Path(p).as_uri()}>" for p in q.ontologies) + ")"


def _items(projection) -> str:
    return " ".join(str(p.var) if p.expr is None else f"({expr(p.expr)} AS {p.var})" for p in projection)
