"""TriG streams in the RSP-QL layout: a file of timestamped named graphs.

Takes a .trig file; yields one Event per triple of each timestamped named
graph and appends a Reject for every part it cannot use. This is how the
paper's RDF stream (section 4.2: triple occurrences <<s, p, o>, t, t'>) is
written down as a file:

    @prefix :     <http://example.org/> .
    @prefix prov: <http://www.w3.org/ns/prov#> .
    @prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .

    :tick1 { :ACME :hasStockPrice 100 }
    :tick1 prov:generatedAtTime "2026-01-05T10:00:00Z"^^xsd:dateTime .

Each named graph is one timestamped graph. Its time is given in the default
graph, either as an instant

    G prov:generatedAtTime T .          every triple of G occurs at T (start = end)

or as an interval (the form `cep run --format trig` writes)

    G prov:startedAtTime T1 ; prov:endedAtTime T2 .     start = T1, end = T2

with T, T1, T2 xsd:dateTime literals (a value without a time zone is UTC).
A graph with no time, with both forms, with one end of an interval only, with
two values of one property, or with an interval that ends before it starts is
rejected as a whole. Other triples of the default graph are metadata: those
about a named graph are ignored, the rest are reported in one Reject per file.

The whole file is parsed by rdflib first. When that fails, the file is cut
into its top-level statements (directives, graph blocks, default-graph
triples) and the pieces are parsed again, halving the failing ones, so that
one bad graph costs only itself: a Reject with the line of the bad block and
rdflib's message. (In that recovery mode a blank node label shared by two
blocks names two different nodes: labels are scoped per parsed piece.)
"""

from __future__ import annotations

import bisect
import logging
import re
import warnings
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

from cep import terms
from cep.events import Event, Reject

PROV = "http://www.w3.org/ns/prov#"
GENERATED = terms.iri(PROV + "generatedAtTime")
STARTED = terms.iri(PROV + "startedAtTime")
ENDED = terms.iri(PROV + "endedAtTime")
TIME_PREDICATES = (GENERATED, STARTED, ENDED)
XSD_DATETIMESTAMP = terms.XSD + "dateTimeStamp"


# ------------------------------------------------------------- the reader


def read_trig(path, rejects: list, data: bytes | None = None, base: str | None = None) -> list[Event]:
    """The events of one TriG file; rejected parts are appended to `rejects`.
    `data`: the file's bytes when they were read elsewhere (Spark's file
    source), with `base` the file's IRI for relative IRIs."""
    name = str(path)
    try:
        text = (Path(path).read_bytes() if data is None else data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        rejects.append(Reject(f"{name}:{line}", f"not UTF-8 text (byte {exc.start + 1} of the file); "
                                                f"file skipped"))
        return []
    except OSError as exc:
        rejects.append(Reject(name, f"cannot read the file: {exc.strerror or exc}"))
        return []
    base = base or Path(path).resolve().as_uri()
    statements = scan(text)
    content = _Content()
    try:
        _parse_into(content, text, base)
    except Exception:  # noqa: BLE001 - any parser failure: recover piece by piece
        content = _Content()
        _recover(content, text, base, statements, name, rejects)
    lines = graph_lines(statements, text, base)
    return _events(content, lines, name, rejects)


# ----------------------------------------------------- from quads to events


class _Content:
    """What the parsed pieces of one file hold, as canonical N-Triples text."""

    def __init__(self):
        self.graphs: dict[str, list] = defaultdict(list)  # graph term -> triples
        self.default: list = []  # default-graph triples


def _events(content: _Content, lines: dict, name: str, rejects: list) -> list[Event]:
    times: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    other = []
    for s, p, o in content.default:
        if p in TIME_PREDICATES:
            times[s][p].append(o)
        elif s not in content.graphs:
            other.append((s, p, o))
    events = []
    for graph, triples in content.graphs.items():
        line = lines.get(graph)
        where = f"{name}:{line}" if line else f"{name}:graph {graph}"
        try:
            start, end = _interval(graph, times.get(graph, {}))
        except _Bad as bad:
            rejects.append(Reject(where, str(bad), f"graph {graph} with {len(triples)} triple(s)"))
            continue
        for s, p, o in triples:
            events.append(Event(s, p, o, start, end, where))
    if other:
        s, p, o = other[0]
        rejects.append(Reject(name, f"{len(other)} triple(s) of the default graph skipped: only the triples "
                                    "of timestamped named graphs are events (the default graph holds "
                                    "their timestamps)", f"{s} {p} {o} ."))
    return events


class _Bad(Exception):
    pass


def _interval(graph: str, props: dict) -> tuple[int, int]:
    gen, started, ended = (props.get(p, []) for p in TIME_PREDICATES)
    for values, label in ((gen, "prov:generatedAtTime"), (started, "prov:startedAtTime"),
                          (ended, "prov:endedAtTime")):
        if len(values) > 1:
            raise _Bad(f"graph {graph} has {len(values)} {label} values; give exactly one")
    if gen and (started or ended):
        raise _Bad(f"graph {graph} has both prov:generatedAtTime and prov:startedAtTime/endedAtTime; "
                   "give an instant or an interval, not both")
    if gen:
        t = _datetime(graph, gen[0], "prov:generatedAtTime")
        return t, t
    if started and ended:
        start = _datetime(graph, started[0], "prov:startedAtTime")
        end = _datetime(graph, ended[0], "prov:endedAtTime")
        if end < start:
            raise _Bad(f"graph {graph} ends (prov:endedAtTime {terms.format_datetime_ms(end)}) before it "
                       f"starts (prov:startedAtTime {terms.format_datetime_ms(start)})")
        return start, end
    if started or ended:
        have, lack = ("prov:startedAtTime", "prov:endedAtTime") if started else \
            ("prov:endedAtTime", "prov:startedAtTime")
        raise _Bad(f"graph {graph} has {have} but no {lack}; an interval needs both")
    raise _Bad(f"graph {graph} has no timestamp: add `{graph} prov:generatedAtTime "
               f'"2026-01-01T00:00:00Z"^^xsd:dateTime .` (or prov:startedAtTime and prov:endedAtTime) '
               "to the default graph")


def _datetime(graph: str, term: str, label: str) -> int:
    parts = terms.split(term)
    if parts[0] != "literal" or parts[2] not in (terms.XSD_DATETIME, XSD_DATETIMESTAMP):
        raise _Bad(f"{label} of graph {graph} is {term}, not an xsd:dateTime literal")
    try:
        return terms.parse_datetime_ms(parts[1])
    except terms.TermError as exc:
        raise _Bad(f"{label} of graph {graph}: {exc}") from None


# --------------------------------------------------------------- parsing


@contextmanager
def _quiet_rdflib():
    """rdflib logs a warning for every ill-typed literal; the engine keeps
    such literals as they are (SPARQL does), so the warnings are noise."""
    logger = logging.getLogger("rdflib")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():  # rdflib's own use of its deprecated classes
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        logger.setLevel(level)


def _parse_into(content: _Content, text: str, base: str) -> None:
    """Parse TriG text with rdflib and add its quads to `content` (nothing is
    added when the text does not parse)."""
    from rdflib import Dataset
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    dataset = Dataset()
    with _quiet_rdflib():
        dataset.parse(data=text, format="trig", publicID=base)
    graphs, default = defaultdict(list), []
    for s, p, o, g in dataset.quads((None, None, None, None)):
        triple = (terms.from_rdflib(s), terms.from_rdflib(p), terms.from_rdflib(o))
        if g is None or g == DATASET_DEFAULT_GRAPH_ID:
            default.append(triple)
        else:
            graphs[terms.from_rdflib(g)].append(triple)
    for g, triples in graphs.items():
        content.graphs[g].extend(triples)
    content.default.extend(default)


def _recover(content, text, base, statements, name, rejects) -> None:
    """Parse the statements piece by piece; each statement that fails on its
    own becomes a Reject with its line. Failing pieces are halved, so a file
    with k bad statements out of n costs about 2 k log n parses."""
    directives = [st for st in statements if st.kind == "directive"]
    good = []
    for st in directives:  # a bad prefix would fail every piece: find it first
        try:
            _parse_into(_Content(), _layout(text, good + [st])[0], base)
            good.append(st)
        except Exception as exc:  # noqa: BLE001
            rejects.append(_reject_for(st, exc, text, name, first_line=1 + _layout(text, good)[1]))
    body = [st for st in statements if st.kind != "directive"]

    def attempt(lo, hi):
        last_end = body[hi - 1].end
        pieces = sorted([d for d in good if d.start < last_end] + body[lo:hi], key=lambda st: st.start)
        piece_text, _ = _layout(text, pieces)
        try:
            _parse_into(content, piece_text, base)
        except Exception as exc:  # noqa: BLE001
            if hi - lo == 1:
                before = [d for d in pieces if d is not body[lo]]
                rejects.append(_reject_for(body[lo], exc, text, name, first_line=1 + _layout(text, before)[1]))
            else:
                mid = (lo + hi) // 2
                attempt(lo, mid)
                attempt(mid, hi)

    if body:
        attempt(0, len(body))


def _layout(text: str, pieces) -> tuple[str, int]:
    """The pieces' text, one after the other on lines of their own, and the
    number of lines it takes (to map the parser's line numbers back)."""
    chunks = [text[st.start:st.end] for st in pieces]
    joined = "\n".join(chunks) + "\n" if chunks else ""
    return joined, joined.count("\n")


def _reject_for(st, exc, text, name, first_line) -> Reject:
    """A Reject for statement `st`, which starts at line `first_line` of the
    text the parser saw."""
    line, why = st.line, str(exc)
    why_attr = getattr(exc, "_why", None)
    if why_attr is not None and getattr(exc, "lines", None) is not None:
        # rdflib's BadSyntax counts lines from 0; an error found at the end of
        # the piece (an unclosed block) belongs to the statement's last line
        last = st.line + text.count("\n", st.start, st.end)
        line = min(max(st.line + (exc.lines + 1 - first_line), st.line), last)
        why = why_attr
    why = " ".join(why.split())
    snippet = " ".join(text[st.start:st.end].split())
    if len(snippet) > 200:
        snippet = snippet[:197] + "..."
    return Reject(f"{name}:{line}", f"TriG syntax error: {why}; this statement is skipped", snippet)


# --------------------------------------------------------------- scanning


@dataclass(frozen=True)
class Statement:
    kind: str  # "directive", "block" (a graph in braces) or "triples"
    start: int  # offsets into the text
    end: int
    line: int  # 1-based line and 0-based column of `start`
    col: int
    brace: int = -1  # offset of a block's "{"


_TOKEN = re.compile(
    r'''(?P<lstr>"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z))'''
    r"""|(?P<lstr2>'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z))"""
    r'''|(?P<str>"(?:[^"\\\n]|\\.)*"?)'''
    r"""|(?P<str2>'(?:[^'\\\n]|\\.)*'?)"""
    r"|(?P<iri><[^<>\s\"{}|^`\\]*>?)"
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<open>\{)|(?P<close>\})"
    # a "." ends a statement unless a name or number goes on after it (ex:a.b, 1.5)
    r"|(?P<dot>\.(?![0-9A-Za-z_:%\\\-\u00b7-\uffff]))"
    r"|(?P<space>\s+)"
    r"|(?P<word>[^\s\"'<#{}.]+)"
    r"|(?P<other>.)",
    re.S,
)


def scan(text: str) -> list[Statement]:
    """Cut TriG text into top-level statements without parsing them. A block
    whose "}" is missing ends where the next block starts (graphs do not nest
    in TriG), so one unbalanced brace does not swallow the rest of the file."""
    newlines = [m.start() for m in re.finditer("\n", text)]

    def position(offset):
        line = bisect.bisect_left(newlines, offset)
        col = offset - (newlines[line - 1] + 1 if line else 0)
        return line + 1, col

    out = []
    start = None  # offset where the current statement began
    depth = 0
    brace = -1
    sparql_directive = False
    first_word = True

    def close(end, kind=None):
        nonlocal start, depth, brace, sparql_directive
        if start is not None:
            chunk = text[start:end].strip()
            if chunk and chunk != ".":
                line, col = position(start)
                if kind is None:
                    kind = "block" if brace >= 0 else (
                        "directive" if _is_directive(chunk) else "triples")
                out.append(Statement(kind, start, start + len(text[start:end].rstrip()), line, col, brace))
        start, depth, brace, sparql_directive = None, 0, -1, False

    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("space", "comment"):
            continue
        if start is None:
            start = m.start()
            first_word = True
            sparql_directive = kind == "word" and m.group().upper() in ("PREFIX", "BASE")
        if depth == 0:
            if kind == "open":
                depth, brace = 1, m.start()
            elif kind == "close":  # a stray "}": let the parser report it
                close(m.end())
            elif kind == "dot":
                close(m.end())
            elif kind == "iri" and sparql_directive and not first_word:
                close(m.end())
            first_word = False
        else:
            if kind == "close":
                close(m.end())
            elif kind == "open":  # an unclosed block before this one
                cut = _line_start(text, m.start())
                if cut <= brace:
                    cut = m.start()
                    label = text.rfind("\n", brace, m.start())
                    if label > brace:
                        cut = label + 1
                close(cut)
                start = cut + (len(text[cut:m.start()]) - len(text[cut:m.start()].lstrip()))
                depth, brace = 1, m.start()
    close(len(text))
    return out


def _is_directive(chunk: str) -> bool:
    word = chunk.split(None, 1)[0].lower() if chunk.split() else ""
    return word in ("@prefix", "@base", "prefix", "base")


def _line_start(text: str, offset: int) -> int:
    """Start of the line holding `offset`, or of the line before when the
    text between is blank (a block label alone on the previous line)."""
    ls = text.rfind("\n", 0, offset) + 1
    if not text[ls:offset].strip() and ls > 0:
        ls = text.rfind("\n", 0, ls - 1) + 1
    return ls


_PREFIX_RE = re.compile(r"(?:@prefix|prefix)\s+([^\s:]*):\s*<([^>]*)>", re.I)
_BASE_RE = re.compile(r"(?:@base|base)\s+<([^>]*)>", re.I)
_PNAME_RE = re.compile(r"([^\s:<>]*):(\S*)\Z")


def graph_lines(statements, text: str, base: str) -> dict[str, int]:
    """The line of the first block of each graph named by an IRI or a
    prefixed name (what a Reject or an Event's source points at)."""
    prefixes, lines = {}, {}
    for st in statements:
        chunk = text[st.start:st.end]
        if st.kind == "directive":
            m = _PREFIX_RE.match(chunk)
            if m:
                prefixes[m.group(1)] = urljoin(base, m.group(2))
            m = _BASE_RE.match(chunk)
            if m:
                base = urljoin(base, m.group(1))
            continue
        if st.kind != "block":
            continue
        label = text[st.start:st.brace].strip()
        if label[:5].upper() == "GRAPH":
            label = label[5:].strip()
        graph = None
        if label.startswith("<") and label.endswith(">"):
            graph = urljoin(base, label[1:-1])
        else:
            m = _PNAME_RE.match(label)
            if m and m.group(1) in prefixes and not label.startswith("_:"):
                graph = prefixes[m.group(1)] + re.sub(r"\\(.)", r"\1", m.group(2))
        if graph is not None:
            try:
                key = terms.canonical(terms.iri(graph))
            except terms.TermError:
                continue
            lines.setdefault(key, st.line)
    return lines
