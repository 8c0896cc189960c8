"""Canonical S-expression text of algebra trees (used by `cep explain` and
the golden tests), and its reader (read_query, for the golden tests):
`(seqjoin (bgp (triple ?k <http://ex/a> ?x)) ...)`; a binary operator is
`(NAME [DEADLINE_MS] [COND] P1 P2)`, NAME its Operator.sexpr."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from cep import terms
from cep.algebra import ops, query_limits

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
    if isinstance(op, ops.Unit):  # the empty group: (unit [(graph <stream>)])
        lines.append(f"{pad}(unit" + (f" (graph {op.stream}))" if op.stream is not None else ")"))
        return
    if isinstance(op, ops.BGP):
        lines.append(f"{pad}(bgp")
        operands = op.triples
    elif isinstance(op, ops.Filter):
        lines.append(f"{pad}(filter {expr(op.cond)}")
        operands = [op.pattern]
    elif isinstance(op, ops.Values):
        lines.append(pad + _values(op))
        return
    elif isinstance(op, ops.Service):  # (service[-silent] <endpoint> (VARS) [(filter EXPR)] TRIPLE... (optional TRIPLE...)...)
        cond = f" (filter {expr(op.filter)})" if op.filter is not None else ""
        lines.append(f"{pad}(service{'-silent' if op.silent else ''} <{op.endpoint}> "
                     f"({' '.join(str(v) for v in op.vars)}){cond}")
        for operand in op.triples:
            _pattern_lines(operand, indent + 1, lines)
        for part in op.optional:
            lines.append(f"{pad}  (optional")
            for operand in part:
                _pattern_lines(operand, indent + 2, lines)
            lines[-1] += ")"
        lines[-1] += ")"
        return
    elif isinstance(op, ops.Extend):
        lines.append(f"{pad}(extend {op.var} {expr(op.expr)}")
        operands = [op.pattern]
    elif isinstance(op, ops.Project) and op.window is not None:  # (group-window <s> SIZE [(start MS)] P)
        start = f" (start {op.window.t0_ms})" if op.window.t0_ms is not None else ""
        lines.append(f"{pad}(group-window {window_size(op.window)}{start}")
        operands = [op.pattern]
    elif isinstance(op, ops.Project):
        lines.append(f"{pad}({unary(op)}")
        operands = [op.pattern]
    elif isinstance(op, ops.Binary):  # (NAME [DEADLINE_MS] [COND] P1 P2)
        deadline = f" {op.deadline_ms}" if hasattr(op, "deadline_ms") else ""
        cond = getattr(op, "cond", None)
        lines.append(f"{pad}({op.spec.sexpr}{deadline}" + (f" {expr(cond)}" if cond is not None else ""))
        operands = [op.left, op.right]
    else:
        raise TypeError(f"not an algebra operator: {op!r}")
    for operand in operands:
        _pattern_lines(operand, indent + 1, lines)
    lines[-1] += ")"


def unary(op) -> str:
    """The head of a unary operator's text (`extend ?v EXPR`, `project
    (?x ?y)`, `project-distinct (?x)`); in a plan, whose unary nodes hold
    the operator without its operand, a table's whole text on one line."""
    if isinstance(op, ops.Extend) and op.pattern is None:
        return f"extend {op.var} {expr(op.expr)}"
    if isinstance(op, ops.LeftJoin) and op.left is None:  # OPTIONAL { SERVICE ... }
        return "leftjoin " + (f"{expr(op.cond)} " if op.cond is not None else "") + unary(op.right)
    if isinstance(op, ops.Project):  # a grouped one shows its SELECT clause, then its grouping and cut
        shown = _items(op.items) if op.items else " ".join(str(v) for v in op.vars)
        extra = (_grouping(op) + _modifiers(op)).replace("\n  ", " ")
        return f"{'project-distinct' if op.distinct else 'project'} ({shown}){extra}"
    return " ".join(line.strip() for line in pattern(op).splitlines())


def _values(op: ops.Values) -> str:
    """(values (?x ?y) (TERM UNDEF) ...)"""
    rows = "".join(" (" + " ".join("UNDEF" if x is None else x for x in row) + ")" for row in op.rows)
    return f"(values ({' '.join(str(v) for v in op.vars)}){rows})"


@query_limits.deep
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
    elif q.form == "ask":
        head = "(ask"
    else:
        items = "*" if q.projection is None else _items(q.projection)
        head = f"({'select-distinct' if q.distinct else 'select'} ({items})"
    return head + _options(q) + _from(q) + _window(q) + "\n" + pattern(q.pattern, 1) + _grouping(q) + _modifiers(q) + ")"


def _modifiers(q: ops.Query) -> str:
    """(order ?v (desc ?w)) and (slice OFFSET LIMIT), LIMIT _ for none."""
    out = ""
    if q.order:
        keys = " ".join(f"(desc {expr(k.expr)})" if k.descending else expr(k.expr) for k in q.order)
        out += f"\n  (order {keys})"
    if q.offset or q.limit is not None:
        out += f"\n  (slice {q.offset} {'_' if q.limit is None else q.limit})"
    return out


def _options(q: ops.Query) -> str:
    if not q.options:
        return ""
    return "\n  (options " + " ".join(f"({key} {value})" for key, value in q.options) + ")"


def window_size(w: ops.Window) -> str:
    """<stream> (triples N), <stream> (events N), or <stream> (range MS) (step MS)."""
    width = "unbounded" if w.unbounded else w.range_ms
    size = f"({w.counts} {w.count})" if w.count is not None else f"(range {width}) (step {w.step_ms})"
    return f"{w.stream} {size}"


def _window(q: ops.Query) -> str:
    """(window <stream> (range MS) (step MS)) or (window <stream> (triples N)),
    with (every MS) and the report operator when they are not the default."""
    w = q.window
    if w is None:
        return ""
    size = window_size(w)
    extra = (f" (every {q.every_ms})" if q.every_ms is not None else "") + \
        (f" ({q.report})" if q.report != "rstream" else "") + \
        (f" (report {w.policy})" if w.policy is not None else "") + \
        (f" (start {w.t0_ms})" if w.t0_ms is not None else "")
    out = f"\n  (window {size}{extra})"
    if len(q.streams) > 1 or any(named for _, named in q.streams):
        # several streams, or a named one: (streams <s1> (named <s2>) ...)
        out += "\n  (streams " + " ".join(f"(named {iri})" if named else iri for iri, named in q.streams) + ")"
    return out


def aggregate(a: ops.Aggregate) -> str:
    arg = "*" if a.arg is None else expr(a.arg)
    separator = "" if a.separator is None else f" (separator {terms.literal(a.separator)})"
    return f"({a.func}{' distinct' if a.distinct else ''}{separator} {arg})"


def _grouping(q: ops.Query) -> str:
    g = q.grouping
    if g is None:
        return ""
    if g.keys is not None:
        aggs = " ".join(f"({v} {aggregate(a)})" for v, a in g.aggregates)
        computed = dict(g.computed)  # GROUP BY (expr AS ?v): (?v expr)
        keys = " ".join(f"({k} {expr(computed[k])})" if k in computed else str(k) for k in g.keys)
        out = f"\n  (group ({keys}) {aggs})"
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


# ------------------------------------------------------------- reading


_TOKEN = re.compile(r"""\s*(?:
    (\()                                                   # open
  | (\))                                                   # close
  | ("(?:[^"\\]|\\.)*"(?:\^\^<[^\s<>]*>|@[A-Za-z0-9-]+)?)   # a literal
  | (<[^\s<>]*>[+*?]?)                                      # an IRI (not `<` or `<=`), or its closure
  | ([^\s()]+)                                             # a name, variable or blank node
)""", re.S | re.X)


def _read_tree(text: str):
    stack, pos, text = [[]], 0, text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read algebra text at {text[pos:pos + 40]!r}")
        pos = m.end()
        if m.group(1):
            stack.append([])
        elif m.group(2):
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(m.group(0).strip())
        if not text[pos:].strip():
            break
    if len(stack) != 1 or len(stack[0]) != 1:
        raise ValueError("unbalanced algebra text")
    return stack[0][0]


def _read_slot(tok):
    if tok.startswith("?"):
        return ops.Var(tok[1:])
    if tok[-1] in ops.PATH_CLOSURES and tok.startswith("<"):  # a closure of one IRI, <p>+ (ops.Path.__str__)
        return ops.Path(tok[-1], (terms.canonical(tok[:-1]),))
    return terms.canonical(tok)


def _read_expr(x):
    if isinstance(x, list):
        return ops.Call(x[0], *(_read_expr(a) for a in x[1:]))
    if x.startswith("?"):
        return ops.Var(x[1:])
    return ops.Const(terms.canonical(x))


def _read_pattern(x):
    head = x[0]
    if head == "triple":  # (triple S P O [(graph <stream>)])
        graph = [t[1] for t in x[4:] if isinstance(t, list) and t[0] == "graph"]
        return ops.Triple(*(_read_slot(t) for t in x[1:4]), stream=graph[0] if graph else None)
    if head == "unit":  # (unit [(graph <stream>)])
        return ops.Unit(x[1][1] if len(x) > 1 else None)
    if head == "bgp":
        return ops.BGP(tuple(_read_pattern(t) for t in x[1:]))
    if head == "filter":
        return ops.Filter(_read_expr(x[1]), _read_pattern(x[2]))
    if head == "extend":
        return ops.Extend(_read_pattern(x[3]), ops.Var(x[1][1:]), _read_expr(x[2]))
    if head == "group-window":  # (group-window <s> SIZE [(start MS)] P): a group with its own window
        inner = _read_pattern(x[-1])
        window = _read_window_spec(x[1], [s for s in x[2:-1] if s[0] != "start"])
        for spec in x[2:-1]:
            if spec[0] == "start":  # RSP-QL's t0
                window = dataclasses.replace(window, t0_ms=int(spec[1]))
        return ops.pattern_window(ops.variables(inner), inner, window)
    if head in ("project", "project-distinct"):  # (project (ITEMS) [(group ...) (having ...) ...] PATTERN)
        items, parts = _read_items(x[1]), {}
        for part in x[2:-1]:
            parts.setdefault(part[0], []).append(part)
        grouping = _read_windowing(parts).get("grouping")
        return ops.Project(_read_pattern(x[-1]), tuple(i.var for i in items), head == "project-distinct",
                           grouping=grouping, items=items if grouping is not None else (), **_read_modifiers(parts))
    if head == "values":
        rows = tuple(tuple(None if t == "UNDEF" else terms.canonical(t) for t in row) for row in x[2:])
        return ops.Values(tuple(ops.Var(v[1:]) for v in x[1]), rows)
    if head in ("service", "service-silent"):
        rest = x[3:]
        cond = _read_expr(rest.pop(0)[1]) if rest and rest[0][0] == "filter" else None
        triples = tuple(_read_pattern(t) for t in rest if t[0] != "optional")
        optional = tuple(tuple(_read_pattern(t) for t in part[1:]) for part in rest if part[0] == "optional")
        return ops.Service(x[1][1:-1], head == "service-silent", triples, tuple(ops.Var(v[1:]) for v in x[2]),
                           optional=optional, filter=cond)
    if head not in ops.SEXPR_NAMES:
        raise ValueError(f"not an algebra operator: {head!r}")
    cls = ops.SEXPR_NAMES[head]  # (NAME [DEADLINE_MS] [COND] P1 P2)
    *params, left, right = x[1:]
    names = {f.name for f in dataclasses.fields(cls)}
    fields = {"left": _read_pattern(left), "right": _read_pattern(right)}
    if "deadline_ms" in names:
        fields["deadline_ms"] = int(params.pop(0))
    if params:
        fields["cond"] = _read_expr(params.pop())
    return cls(**fields)


def _read_items(x):
    if x == ["*"]:
        return None
    out = []
    for item in x:
        if isinstance(item, list):
            expr, as_, var = item
            assert as_ == "AS", item
            out.append(ops.ProjectItem(ops.Var(var[1:]), _read_expr(expr)))
        else:
            out.append(ops.ProjectItem(ops.Var(item[1:])))
    return tuple(out)


def read_query(name: str, text: str) -> ops.Query:
    """The inverse of query(), for the golden tests. A CONSTRUCT may carry a
    sub-select's items between its template and its pattern:
    (construct (TEMPLATE) (ITEMS) PATTERN); an update its triples to delete
    and to insert: (update (delete TRIPLES) (insert TRIPLES) PATTERN). A query's annotations are a
    line (options (policy recent) ...) before its pattern."""
    x = _read_tree(text)
    parts = {}
    for part in x:
        if isinstance(part, list) and part[:1] and part[0] in _QUERY_PARTS:
            parts.setdefault(part[0], []).append(part)
    options = tuple((k, v) for part in parts.get("options", []) for k, v in part[1:])
    extra = {**_read_windowing(parts), **_read_modifiers(parts)}
    x = [part for part in x if not (isinstance(part, list) and part[:1] and part[0] in _QUERY_PARTS)]
    head = x[0]
    if head == "update":  # (update (delete TRIPLES) (insert TRIPLES) PATTERN)
        deletions, inserts = (tuple(_read_pattern(t) for t in part[1:]) for part in x[1:3])
        return ops.Query(name, "update", _read_pattern(x[-1]), template=inserts, deletions=deletions,
                         options=options, **extra)
    if head == "ask":
        return ops.Query(name, "ask", _read_pattern(x[-1]), (), True, options=options, **extra)
    if head == "construct":
        template = tuple(_read_pattern(t) for t in x[1])
        projection = _read_items(x[2]) if len(x) == 4 else None
        return ops.Query(name, "construct", _read_pattern(x[-1]), projection=projection, template=template,
                         options=options, **extra)
    return ops.Query(name, "select", _read_pattern(x[2]), projection=_read_items(x[1]), distinct=head == "select-distinct",
                     options=options, **extra)


def _read_modifiers(parts) -> dict:
    """ORDER BY, OFFSET and LIMIT of a query's (or subquery's) text."""
    out = {}
    for part in parts.get("order", []):
        out["order"] = tuple(ops.OrderKey(_read_expr(k[1]), True) if isinstance(k, list) and k[:1] == ["desc"]
                             else ops.OrderKey(_read_expr(k)) for k in part[1:])
    for part in parts.get("slice", []):
        out["offset"] = int(part[1])
        out["limit"] = None if part[2] == "_" else int(part[2])
    return out


# the lines of a query's text around its pattern (cep.algebra.sexpr.query)
_QUERY_PARTS = ("options", "window", "streams", "group", "aggregate", "having", "order", "slice")


def _read_windowing(parts) -> dict:
    """The window, report, COMPUTED EVERY and grouping of a query's text."""
    out = {}
    if "window" in parts:
        out.update(_read_window(parts))
    having = tuple(_read_expr(e) for part in parts.get("having", []) for e in part[1:])
    if "group" in parts:  # keys: ?v, or (?v EXPR) for GROUP BY (EXPR AS ?v)
        _, keys, *aggs = parts["group"][0]
        key_vars = tuple(ops.Var((k[0] if isinstance(k, list) else k)[1:]) for k in keys)
        computed = tuple((ops.Var(k[0][1:]), _read_expr(k[1])) for k in keys if isinstance(k, list))
        out["grouping"] = ops.Grouping(key_vars, tuple((ops.Var(v[1:]), _read_aggregate(a)) for v, a in aggs),
                                       (), having, computed)
    elif "aggregate" in parts:
        out["grouping"] = ops.Grouping(None, (), tuple(
            (ops.Var(v[1:]), _read_aggregate(a), tuple(ops.Var(k[1:]) for k in keys))
            for _, v, a, keys in parts["aggregate"]), having)
    return out


def _read_window_spec(stream, specs) -> ops.Window:
    fields = {spec[0]: spec[1:] for spec in specs}
    for counts in ("triples", "events"):
        if counts in fields:
            return ops.Window(stream, count=int(fields[counts][0]), counts=counts)
    width = fields["range"][0]
    return ops.Window(stream, range_ms=None if width == "unbounded" else int(width), step_ms=int(fields["step"][0]))


def _read_window(parts) -> dict:
    _, stream, *specs = parts["window"][0]
    fields = {spec[0]: spec[1:] for spec in specs}
    window = _read_window_spec(stream, [s for s in specs if s[0] in ("triples", "events", "range", "step")])
    if "start" in fields:  # RSP-QL's t0
        window = dataclasses.replace(window, t0_ms=int(fields["start"][0]))
    if "report" in fields:  # RSP-QL's report policy; REPORT EVERY's period is (every MS)
        policy = fields["report"][0]
        window = dataclasses.replace(window, policy=policy,
                                     period_ms=int(fields["every"][0]) if policy == "every" else None)
    # (streams <s1> (named <s2>) ...) when not just the window's stream
    streams = tuple((x[1], True) if isinstance(x, list) else (x, False)
                    for x in parts["streams"][0][1:]) if "streams" in parts else ((stream, False),)
    return {"window": window, "streams": streams,
            "every_ms": int(fields["every"][0]) if "every" in fields else None,
            "report": next((r for r in ops.REPORTS if r in fields), "rstream")}


def _read_aggregate(x) -> ops.Aggregate:
    func, *rest = x
    distinct = rest[0] == "distinct"
    arg = rest[-1]
    separator = next((terms.split(p[1])[1] for p in rest if isinstance(p, list) and p[0] == "separator"), None)
    return ops.Aggregate(func, None if arg == "*" else _read_expr(arg), distinct, separator)
