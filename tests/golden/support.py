"""Reading and writing the golden files (see test_golden.py for the layout).

- streams/<case>.trig: RSP-QL TriG, read here with rdflib's Dataset (the
  driver keeps its own small reader so that the oracle's input does not
  depend on the code under test; test_golden compares it with cep.io).
- matches/<case>.jsonl: expected answers, the JSON Lines form of
  cep.io.writers (SPARQL 1.1 Query Results JSON terms, ISO 8601 UTC times).
- algebra/<case>.sexpr: per query a line `-- NAME` and the algebra text
  (cep.algebra.sexpr.query), blocks separated by blank lines. NAME is the
  golden name of the query; answers are matched to queries by position, so
  the names need not be those the parser gives.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cep import terms
from cep.algebra import ops, sexpr
from cep.events import Answer, Event
from cep.io import writers

PROV = "http://www.w3.org/ns/prov#"
GENERATED, STARTED, ENDED = PROV + "generatedAtTime", PROV + "startedAtTime", PROV + "endedAtTime"


# ----------------------------------------------------------------- streams


def read_stream(path: Path) -> list[Event]:
    """Events of an RSP-QL TriG file: each named graph is one timestamped
    graph, its time in the default graph (`G prov:generatedAtTime T`, or
    `G prov:startedAtTime T1; prov:endedAtTime T2` for a lasting one)."""
    from rdflib import Dataset
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    ds = Dataset()
    ds.parse(str(path), format="trig")
    times: dict = {}
    graphs: dict = {}
    for s, p, o, g in ds.quads((None, None, None, None)):
        gid = getattr(g, "identifier", g)
        if gid == DATASET_DEFAULT_GRAPH_ID:
            times.setdefault(terms.from_rdflib(s), {})[str(p)] = terms.parse_datetime_ms(str(o))
        else:
            graphs.setdefault(terms.from_rdflib(gid), []).append((s, p, o))
    events = []
    for graph, triples in graphs.items():
        t = times[graph]
        start, end = (t[GENERATED], t[GENERATED]) if GENERATED in t else (t[STARTED], t[ENDED])
        for s, p, o in triples:
            events.append(Event(terms.from_rdflib(s), terms.from_rdflib(p), terms.from_rdflib(o),
                                start, end, f"{path.name} {graph}"))
    return events


# ----------------------------------------------------------------- matches


def answer_from_json(obj: dict) -> Answer:
    start, end = terms.parse_datetime_ms(obj["start"]), terms.parse_datetime_ms(obj["end"])
    if "triples" in obj:
        triples = tuple(tuple(terms.from_json(t[k]) for k in "spo") for t in obj["triples"])
        return Answer(obj["query"], start, end, triples=triples)
    bindings = tuple(sorted((k, terms.from_json(v)) for k, v in obj["bindings"].items()))
    return Answer(obj["query"], start, end, bindings=bindings)


answer_to_json = writers.answer_json  # the form `cep run` writes


def read_matches(path: Path) -> list[Answer]:
    return [answer_from_json(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


# ----------------------------------------------------------------- algebra


def algebra_text(named_queries) -> str:
    """[(golden name, Query)] -> the text of an algebra file."""
    return "\n\n".join(f"-- {name}\n{sexpr.query(q)}" for name, q in named_queries) + "\n"


def read_algebra(path: Path) -> list[tuple[str, str]]:
    """[(golden name, algebra text)] of an algebra file, in query order."""
    blocks = []
    for line in path.read_text().splitlines():
        if line.startswith("-- "):
            blocks.append([line[3:].strip(), []])
        elif blocks:
            blocks[-1][1].append(line)
    return [(name, "\n".join(body).strip()) for name, body in blocks]


_TOKEN = re.compile(r"""\s*(?:
    (\()                                                   # open
  | (\))                                                   # close
  | ("(?:[^"\\]|\\.)*"(?:\^\^<[^\s<>]*>|@[A-Za-z0-9-]+)?)   # a literal
  | (<[^\s<>]*>)                                           # an IRI (not `<` or `<=`)
  | ([^\s()]+)                                             # a name, variable or blank node
)""", re.S | re.X)
_OPERATORS = {name: cls for cls, name in sexpr.NAMES.items()}


def _tree(text: str):
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


def _slot(tok):
    return ops.Var(tok[1:]) if tok.startswith("?") else terms.canonical(tok)


def _expr(x):
    if isinstance(x, list):
        return ops.Call(x[0], *(_expr(a) for a in x[1:]))
    if x.startswith("?"):
        return ops.Var(x[1:])
    return ops.Const(terms.canonical(x))


def _pattern(x):
    head = x[0]
    if head == "triple":  # (triple S P O [(graph <stream>)])
        graph = [t[1] for t in x[4:] if isinstance(t, list) and t[0] == "graph"]
        return ops.Triple(*(_slot(t) for t in x[1:4]), stream=graph[0] if graph else None)
    if head == "bgp":
        return ops.BGP(tuple(_pattern(t) for t in x[1:]))
    if head == "filter":
        return ops.Filter(_expr(x[1]), _pattern(x[2]))
    if head == "notseq":  # (notseq MS [COND] P1 P2)
        cond = _expr(x[2]) if len(x) == 5 else None
        return ops.SeqAbsence(_pattern(x[-2]), _pattern(x[-1]), int(x[1]), cond)
    cls = _OPERATORS[head]
    if len(x) == 4:
        return cls(_pattern(x[2]), _pattern(x[3]), _expr(x[1]))
    return cls(_pattern(x[1]), _pattern(x[2]))


def _items(x):
    if x == ["*"]:
        return None
    out = []
    for item in x:
        if isinstance(item, list):
            expr, as_, var = item
            assert as_ == "AS", item
            out.append(ops.ProjectItem(ops.Var(var[1:]), _expr(expr)))
        else:
            out.append(ops.ProjectItem(ops.Var(item[1:])))
    return tuple(out)


def query_from_text(name: str, text: str) -> ops.Query:
    """The inverse of cep.algebra.sexpr.query. A CONSTRUCT may carry a
    sub-select's items between its template and its pattern:
    (construct (TEMPLATE) (ITEMS) PATTERN). A query's annotations are a
    line (options (policy recent) ...) before its pattern."""
    x = _tree(text)
    parts = {}
    for part in x:
        if isinstance(part, list) and part[:1] and part[0] in _QUERY_PARTS:
            parts.setdefault(part[0], []).append(part)
    options = tuple((k, v) for part in parts.get("options", []) for k, v in part[1:])
    extra = _windowing(parts)
    x = [part for part in x if not (isinstance(part, list) and part[:1] and part[0] in _QUERY_PARTS)]
    head = x[0]
    if head == "construct":
        template = tuple(_pattern(t) for t in x[1])
        projection = _items(x[2]) if len(x) == 4 else None
        return ops.Query(name, "construct", _pattern(x[-1]), projection=projection, template=template,
                         options=options, **extra)
    return ops.Query(name, "select", _pattern(x[2]), projection=_items(x[1]), distinct=head == "select-distinct",
                     options=options, **extra)


# the lines of a query's text around its pattern (cep.algebra.sexpr.query)
_QUERY_PARTS = ("options", "window", "streams", "group", "aggregate", "having")


def _windowing(parts) -> dict:
    """The window, report, COMPUTED EVERY and grouping of a query's text."""
    if "window" not in parts:
        return {}
    _, stream, *specs = parts["window"][0]
    fields = {spec[0]: spec[1:] for spec in specs}
    if "triples" in fields:
        window = ops.Window(stream, count=int(fields["triples"][0]))
    else:
        window = ops.Window(stream, range_ms=int(fields["range"][0]), step_ms=int(fields["step"][0]))
    # (streams <s1> (named <s2>) ...) when not just the window's stream
    streams = tuple((x[1], True) if isinstance(x, list) else (x, False)
                    for x in parts["streams"][0][1:]) if "streams" in parts else ((stream, False),)
    out = {"window": window, "streams": streams,
           "every_ms": int(fields["every"][0]) if "every" in fields else None,
           "report": next((r for r in ops.REPORTS if r in fields), "rstream")}
    having = tuple(_expr(e) for part in parts.get("having", []) for e in part[1:])
    if "group" in parts:
        _, keys, *aggs = parts["group"][0]
        out["grouping"] = ops.Grouping(tuple(ops.Var(k[1:]) for k in keys),
                                       tuple((ops.Var(v[1:]), _aggregate(a)) for v, a in aggs), (), having)
    elif "aggregate" in parts:
        out["grouping"] = ops.Grouping(None, (), tuple(
            (ops.Var(v[1:]), _aggregate(a), tuple(ops.Var(k[1:]) for k in keys))
            for _, v, a, keys in parts["aggregate"]), having)
    return out


def _aggregate(x) -> ops.Aggregate:
    func, *rest = x
    distinct = rest[0] == "distinct"
    arg = rest[-1]
    return ops.Aggregate(func, None if arg == "*" else _expr(arg), distinct)
