"""TriG streams in the RSP-QL layout: a file of timestamped named graphs.

Takes a .trig file; gives events tables (cep.events.EVENTS) with a row
per triple of each timestamped named graph, read a window of statements
at a time, and appends a Reject for every part it cannot use. This is how the
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
Other predicates may be named instead of PROV's (`cep run --time-predicate`,
`--start-predicate`, `--end-predicate`), and an interval given through a
blank node (`--interval-predicate`: `G :validBetween [ :startsAt T1 ;
:endsAt T2 ]`): cep.io.event_time holds the rules every RDF format shares. A graph with no time, with both forms, with
one end of an interval only, with two different values of one property, or
with an interval that ends before it starts is rejected as a whole. Other triples of the default graph are metadata: those
about a named graph are ignored, the rest are reported in one Reject per file.

Each triple's terms go through the check of every reader (cep.io.check):
one the readers refuse (a literal subject, an IRI with a space) is a Reject
of its own. Relative IRIs are resolved against the file's own @base (BASE);
with none, they are refused, as in every format (not made the file's
file:/// IRIs). Blank nodes get labels made of a hash of the file's path and
their own label (an anonymous node: its place in the file): the same file
gives the same labels, and two files never share a blank node.

The file is read in windows of top-level statements (directives, graph
blocks, default-graph triples), about as many as the batch size
(--batch-size) and at most WINDOW_STATEMENTS, cut without parsing (scan: strings and comments holding
braces, quotes or "#", and long strings over lines, do not fool it): memory
holds a window, not the file. A window ends before a block or a directive,
so a graph's block and the statements after it are read together; the
prefixes and base declared so far go before each window's text. A graph's
time may come before its block or after it, within its window or the
next (cep.io.event_time.Timing, the rule N-Quads shares): a graph whose
time has not come by then is refused, as a graph with no time is. A blank node label names one node in the whole
file, whichever windows it is used in (_labels_as_iris); an anonymous
node ([], a list) is one of its own wherever it stands.

A window is parsed by rdflib whole first. When that fails, it is cut into
its statements and the pieces are parsed again, halving the failing ones,
so that one bad graph costs only itself: a Reject with the line of the bad
block and rdflib's message, and the rest of the file goes on.
Bytes that are not UTF-8 cost the statements that hold them; a string
never closed, or two stray triple quotes, cost their statements, not the
rest of the file (scan, _line_parts).
"""

from __future__ import annotations

import bisect
import codecs
import hashlib
import re
import secrets
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from pathlib import Path
from urllib.parse import urljoin

import pyarrow as pa

from cep import terms
from cep.events import EVENTS, EventRows, Reject
from cep.io import check
from cep.io.check import Invalid
from cep.io import event_time


# The base IRI the parser is given. A file's relative IRIs are resolved
# against its own @base (BASE); one that is still under this base after
# parsing had none to resolve against, and is refused as relative IRIs are
# in every format (cep.terms.absolute_iri), rather than silently made into
# the file's file:/// IRI.
NO_BASE = "cep-no-base:/"


# ------------------------------------------------------------- the reader


def trig_batches(handle, source, rejects: list, rows: int):
    """The events of a TriG input (an open binary stream), in tables of at
    most `rows` rows, read a window of top-level statements at a time
    (_windows; `rows` of them, WINDOW_STATEMENTS at most): memory holds a
    window, not the file. Each window's graphs go through the timing stage
    (cep.io.event_time.Timing), a window its unit."""
    tag = file_tag(source.path)
    prelude = _Prelude()
    timing = event_time.Timing(rejects, source.times)
    default = _DefaultGraph(source.name, rejects, source.times)
    make = partial(_events, source.name, rejects)
    held = EVENTS.empty_table()
    # graph -> the line of its first block, of the graphs of this window and
    # the one before: a graph is one record (its events' source) when its
    # blocks fall in two windows too, whatever the batch size
    first = {}
    for k, window in enumerate(_windows(handle, source.name, rejects, min(rows, WINDOW_STATEMENTS))):
        content = _Content(tag, k)
        lines, directives = _read_window(window, prelude.text, content, source.name, rejects, source.times,
                                         timing.timed())
        prelude.add(directives)
        timing.take((s, p, o, f"{source.name}:graph {s[:200]}") for s, p, o in default.split(content, window.last))
        first = {graph: first.get(graph) or lines.get(graph) for graph in content.graphs}
        graphs = {graph: (triples, first[graph]) for graph, triples in content.graphs.items()}
        held = pa.concat_tables([held, *timing.settle(graphs, make, window.last)])
        while held.num_rows >= rows or window.last and held.num_rows:  # tables of `rows` rows, as the other readers give
            yield held.slice(0, rows)
            held = held.slice(rows)
    default.finish()


# rdflib takes about 5 kB of memory per statement of a window it parses
# (measured: 10,000 statements of two triples each, ~50 MB)
WINDOW_STATEMENTS = 10_000
# a window's text grows from this many characters until it holds its
# statements; an open long string ("""...) holds the cut back until then
WINDOW_CHARS = 1 << 16
MAX_WINDOW_CHARS = 1 << 25


@dataclass(frozen=True)
class Window:
    text: str  # whole top-level statements (and the space and comments around them)
    line: int  # the file's line of its first character
    byte: int  # the file's offset of its first byte
    last: bool  # the end of the file
    statements: tuple = ()  # its statements (scan of its text), as _cut found them


def _windows(handle, name: str, rejects: list, statements: int):
    """The text of a TriG input in windows of `statements` top-level
    statements (fewer at the end of the file; more characters than
    MAX_WINDOW_CHARS cut a window short). Bytes that are not UTF-8 are kept
    as surrogates (surrogateescape) for _read_window to report."""
    from cep.io.readers import READ_ERRORS, read_failure

    decoder = codecs.getincrementaldecoder("utf-8-sig")("surrogateescape")
    text, line, byte, ended, want = "", 1, 0, False, WINDOW_CHARS
    while text or not ended:
        parts, size = [text], len(text)
        while not ended and size < want:
            try:
                raw = handle.read1(1 << 16)
            except READ_ERRORS as exc:  # a cut gzip file: the statements read are kept
                rejects.append(Reject(name, read_failure(exc)))
                raw = b""
            if byte == 0 and line == 1 and size == 0 and raw.startswith(codecs.BOM_UTF8):
                byte = len(codecs.BOM_UTF8)  # the decoder drops it
            parts.append(decoder.decode(raw, final=not raw))
            size += len(parts[-1])
            ended = not raw
        text = "".join(parts)
        cut, scanned = _cut(text, statements, ended, len(text) >= MAX_WINDOW_CHARS)
        if cut is None:  # not yet `statements` whole statements: read more
            want = 2 * max(want, len(text))
            continue
        window, text = text[:cut], text[cut:]
        yield Window(window, line, byte, ended and not text, tuple(st for st in scanned if st.end <= cut))
        line += window.count("\n")
        byte += len(window.encode("utf-8", "surrogateescape"))


def _cut(text: str, statements: int, ended: bool, force: bool) -> tuple[int | None, list]:
    """Where a window of about `statements` whole statements ends in the
    text read so far, or None when more must be read first, and the
    statements of the text (scan: those before the cut are the window's,
    which _read_window takes rather than scanning them again) (`ended`: the
    text is the rest of the file; `force`: the text is too long to wait).
    A window ends before a block or a directive, so that a graph's block
    and the statements after it (its time) are read together: after the
    last such place within `statements` statements, else the first one
    after them. Before the end of the file, the last statement scanned may
    go on in the text not read yet, and so may a long string not closed
    in it: the window ends before them."""
    scanned = scan(text)
    if ended and len(scanned) <= statements:
        return len(text), scanned
    found = scanned if ended else scanned[:-1]
    if ('"""' in text or "'''" in text) and not (ended or force):
        opened = next((m.start() for m in _TOKEN.finditer(text) if m.lastgroup in ("lstr", "lstr2")
                       and not _CLOSED.fullmatch(m.group())), None)
        if opened is not None:
            found = [st for st in found if st.end <= opened]
    cuts = [i for i in range(len(found)) if i + 1 < len(scanned) and scanned[i + 1].kind != "triples"]
    if len(found) >= statements:
        within = [i for i in cuts if i < statements]
        beyond = [i for i in cuts if i >= statements]
        if within or beyond:
            return found[within[-1] if within else beyond[0]].end, scanned
    if ended:
        return len(text), scanned
    return (found[cuts[-1]].end if force and cuts else None), scanned


class _Prelude:
    """The directives (@prefix, @base) of the windows read, as text to put
    before the next window's: a prefix declared anywhere at the top level
    holds for the rest of the file."""

    def __init__(self):
        self.text = ""
        self.last = {}  # what a directive declares (a prefix, the base) -> its last text

    def add(self, directives) -> None:
        for chunk in directives:
            m = _PREFIX_RE.match(chunk)
            key = ("prefix", m.group(1)) if m else "base"
            if self.last.get(key) != chunk:  # a prefix declared again as it was adds nothing
                self.last[key] = chunk
                self.text += chunk + "\n"


def _read_window(window: Window, prelude: str, content, name: str, rejects: list, times, timed=()):
    """Parse a window's statements (after the directives of the windows
    before: `prelude`) into `content`; rejected parts are appended. Returns
    the line of each named graph's first block (graph_lines) and the text
    of the window's directives that parsed. `timed`: the graphs given a
    time in the window before."""
    text = prelude + window.text
    shift = window.line - 1 - prelude.count("\n")  # a line of `text` -> the file's
    at = len(prelude)  # the window's statements, found by _cut, moved after the prelude
    statements = scan(text, 0, at, shift=shift) + [
        replace(st, start=st.start + at, end=st.end + at, line=st.line + window.line - 1,
                brace=st.brace + at if st.brace >= 0 else st.brace) for st in window.statements]
    failed, found = [], []  # statements refused (or read again in parts); the parts found
    if _UNDECODED.search(text, len(prelude)):  # bytes that are not UTF-8 spoil the statements that hold them
        given, text = text, _comments_decoded(text)  # the same characters, but those of comments
        for st in statements:
            bad = _UNDECODED.search(text, st.start, st.end)
            if bad:
                byte = window.byte + len(given[len(prelude):bad.start()].encode("utf-8", "surrogateescape")) + 1
                rejects.append(Reject(f"{name}:{st.line}", f"not UTF-8 text (byte {byte} of the file); "
                                                           "this statement is skipped", _snippet(text, st)))
                failed.append(st)
    for st in statements:
        alone = None if st in failed else _term_alone(text, st)
        if alone is not None:  # rdflib passes over it: the block is refused, as a syntax error is
            at, term = alone
            rejects.append(Reject(f"{name}:{bisect.bisect_left(_newlines(text), at) + 1 + shift}",
                                  f"TriG syntax error: the term {term[:200]} stands alone in the "
                                  "graph's block, where a triple was expected; this statement is skipped",
                                  _snippet(text, st)))
            failed.append(st)
    if failed:
        _recover(content, text, [st for st in statements if st not in failed], name, rejects, failed, found, shift)
    else:
        try:
            _parse_into(content, text, 0)
        except Exception:  # noqa: BLE001 - any parser failure: recover piece by piece
            content.graphs.clear()
            content.default.clear()
            _recover(content, text, statements, name, rejects, failed, found, shift)
    _suspect_blocks(content, text, statements, name, rejects, failed, found, times, shift, timed)
    directives = [text[st.start:st.end] for st in statements
                  if st.kind == "directive" and st.start >= len(prelude) and st not in failed]
    return graph_lines(statements + found, text), directives


def _suspect_blocks(content, text, statements, name, rejects, failed, found, times, shift, timed) -> None:
    """Blocks that parsed but are suspect. rdflib passes over a term alone
    in a block (a typo), and two stray triple quotes make a long string of
    the statements between them, which parses when the string ends where a
    term may stand. A block that holds more than space and comments and
    gave no triple, or that holds a long string over lines and has no time
    or a triple the readers refuse, is read again with long strings kept to
    their lines, its parts one by one; when that finds no parts, it is
    refused."""
    directives = [st for st in statements if st.kind == "directive" and st not in failed]
    blocks = _block_graphs(statements, text)
    count = defaultdict(int)
    for _, graph in blocks:
        count[graph] += 1
    timed = {s for s, p, _ in content.default if p in times.all} | set(timed)
    for st, graph in blocks:
        if graph is None or count[graph] > 1 or st in failed:
            continue
        long = _LONG_OVER_LINES.search(text, st.start, st.end) is not None
        if graph in content.graphs:
            if not long or graph in timed and all(_taken(t) for t in content.graphs[graph]):
                continue
        elif not any(m.lastgroup not in ("space", "comment", "close") for m in _TOKEN.finditer(text, st.brace + 1, st.end)):
            continue  # an empty graph
        parts = _line_parts(text, st, shift)
        if parts:
            content.graphs.pop(graph, None)
            failed.append(st)  # as a whole
            found += parts
            _recover(content, text, directives + parts, name, rejects, failed, found, shift, one_by_one=True)
        elif graph not in content.graphs:
            failed.append(st)
            rejects.append(Reject(f"{name}:{st.line}", "TriG: the graph's block gives no triple (a term alone "
                                                       "in it?); this statement is skipped", _snippet(text, st)))


def _term_alone(text: str, st) -> tuple[int, str] | None:
    """In a graph's block, a statement that is one term and nothing more
    (`:g { :a :b :c . :d }`): (its offset, its text), or None. TriG has no
    such statement, and rdflib reads it as nothing. (A blank node property
    list or a collection, [ ... ] or ( ... ), is left to the parser.)"""
    if st.kind != "block":
        return None
    run, depth = [], 0  # the tokens of the block's statement read so far
    for m in _TOKEN.finditer(text, st.brace + 1, st.end):
        kind, token = m.lastgroup, m.group()
        if kind in ("space", "comment"):
            continue
        if depth == 0 and kind in ("dot", "close"):
            # one term: tokens with nothing between them ("1"^^xsd:int), no bracket
            if run and all(a.end() == b.start() for a, b in zip(run, run[1:])) \
                    and not any(t.lastgroup == "other" and t.group() in "[]()" for t in run):
                return run[0].start(), text[run[0].start():run[-1].end()]
            run = []
            continue
        if kind == "other" and token in "[(":
            depth += 1
        elif kind == "other" and token in "])":
            depth -= 1
        run.append(m)
    return None


def _taken(triple) -> bool:
    """Whether the readers take the triple as an event's."""
    try:
        check.term(triple[0], "s"), check.term(triple[1], "p"), check.term(triple[2], "o")
        return True
    except Invalid:
        return False


_UNDECODED = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of bytes that are not UTF-8


def _comments_decoded(text: str) -> str:
    """The text with the undecodable bytes of its comments made U+FFFD: a
    comment holds no record."""
    return _TOKEN.sub(lambda m: _UNDECODED.sub("\ufffd", m.group()) if m.lastgroup == "comment" else m.group(),
                      text)


def file_tag(path) -> str:
    """Eight hex digits of the SHA-1 of the file's resolved path: its blank
    nodes' labels start with it, so two files never share a blank node and
    a file read again gives the same labels."""
    where = str(Path(path).resolve()).encode("utf-8", "surrogateescape")
    return hashlib.sha1(where).hexdigest()[:8]


# ----------------------------------------------------- from quads to events


class _Content:
    """What the parsed pieces of one file hold, as N-Triples text (not yet
    checked: cep.io.check takes each event's terms)."""

    def __init__(self, tag: str, window: int = 0):
        self.tag = tag  # the file's (file_tag)
        self.window = window  # which of its windows (_windows): its anonymous blank nodes are its own
        self.graphs: dict[str, list] = defaultdict(list)  # graph term -> triples
        self.default: list = []  # default-graph triples


def _events(name: str, rejects: list, graphs: dict, outcome):
    """The timing stage's make (cep.io.event_time.Timing): of the graphs
    (graph -> (triples, line of its first block)), those whose time is known
    are events, in a fixed order (rdflib's is not: one input, one output);
    one refused is a Reject of its own; the rest wait (None when none does)."""
    events, waiting = EventRows(), {}
    for graph in sorted(graphs or (), key=lambda g: (graphs[g][1] or 0, g)):
        triples, line = graphs[graph]
        when = outcome(graph)
        if when is None:
            waiting[graph] = graphs[graph]  # its time may come in the next window
            continue
        where = f"{name}:{line}" if line else f"{name}:graph {graph[:200]}"
        try:
            check.term(graph, "s", "the graph's name")
            if isinstance(when, str):
                raise Invalid(when)
        except Invalid as bad:
            rejects.append(Reject(where, str(bad), f"graph {graph[:200]} with {len(triples)} triple(s)"))
            continue
        start, end = when.start, when.end  # its source: the line of its block (when.source is file:graph G)
        for s, p, o in sorted(triples):
            try:
                events.add(check.term(s, "s", "subject"), check.term(p, "p", "predicate"),
                           check.term(o, "o", "object"), start, end, where)
            except Invalid as bad:
                rejects.append(Reject(where, str(bad), f"{s} {p} {o} ."))
    return events.table(), waiting or None


class _DefaultGraph:
    """The default graph's triples, window by window: the times of graphs
    (for the timing stage), and the rest, metadata. Metadata about a graph of
    the window or of the one before or after is passed over; the rest is
    reported in one Reject per file."""

    def __init__(self, name: str, rejects: list, times):
        self.name, self.rejects, self.times = name, rejects, times
        self.metadata = []  # the other default-graph triples of the window before
        self.graphs = set()  # the graphs of the window before
        self.skipped, self.first = 0, None  # other default-graph triples: how many, the least

    def split(self, content: _Content, last: bool) -> list:
        """The time triples of the window read into `content`."""
        names, times, metadata = set(content.graphs), [], []
        for triple in content.default:
            (times if triple[1] in self.times.all else metadata).append(triple)
        self._skip([t for t in self.metadata if t[0] not in names])
        metadata = [t for t in metadata if t[0] not in names and t[0] not in self.graphs]
        if last:
            self._skip(metadata)
            metadata = []
        self.metadata, self.graphs = metadata, names
        return times

    def _skip(self, triples: list) -> None:
        if triples:
            self.skipped += len(triples)
            self.first = min([*triples, self.first] if self.first else triples)

    def finish(self) -> None:
        """The end of the file: one Reject for the default graph's triples
        that are neither times nor about a graph."""
        if self.skipped:
            s, p, o = self.first
            self.rejects.append(Reject(self.name, f"{self.skipped} triple(s) of the default graph skipped: only "
                                                  "the triples of timestamped named graphs are events (the default "
                                                  "graph holds their timestamps)", f"{s} {p} {o} ."))


# --------------------------------------------------------------- parsing


def _parse_into(content: _Content, text: str, scope: int) -> None:
    """Parse TriG text with rdflib and add its quads to `content` (nothing is
    added when the text does not parse). `scope`: which piece of the file
    the text is (0: all of it), for the labels of its blank nodes."""
    from rdflib import Dataset
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    dataset = Dataset()
    with terms.rdflib_as_written():
        dataset.parse(data=_labels_as_iris(text), format="trig", publicID=NO_BASE)
    graphs, default = defaultdict(list), []
    texts: dict = {}  # most nodes recur: convert each once

    def nt(node):
        out = texts.get(node)
        if out is None:
            out = texts[node] = _nt(node, content, scope)
        return out

    for s, p, o, g in dataset.quads((None, None, None, None)):
        triple = (nt(s), nt(p), nt(o))
        if g is None or g == DATASET_DEFAULT_GRAPH_ID:
            default.append(triple)
        else:
            graphs[nt(g)].append(triple)
    for g, triples in graphs.items():
        content.graphs[g].extend(triples)
    content.default.extend(default)


_PARSER_TOKEN = re.compile(r"[0-9a-f]{32}")  # the random part of rdflib's blank node ids


def _nt(node, content: _Content, scope: int) -> str:
    """The N-Triples text of an rdflib node, unchecked. A labelled blank
    node (an IRI of _labels_as_iris) is labelled by the file's tag and its
    label: one node in the file, none in another. An anonymous one by the
    file's tag, the window and piece it was parsed in and rdflib's own id
    without its random part (its count of the piece's blank nodes). The
    same file gives the same labels."""
    from rdflib import BNode, Literal

    if isinstance(node, BNode):
        window = f"w{content.window}" if content.window else ""
        return f"_:t{content.tag}{window}_{scope}_{re.sub(r'[^A-Za-z0-9_]', '', _PARSER_TOKEN.sub('', str(node)))}"
    if isinstance(node, Literal):
        if node.datatype and node.datatype.startswith(_LABELLED):
            raise ValueError(f"a blank node is not a datatype (\"{node}\"^^_:{node.datatype[len(_LABELLED):]})")
        return terms.literal(str(node), _relative(str(node.datatype)) if node.datatype else None, node.language)
    if node.startswith(_LABELLED):
        return f"_:t{content.tag}_l_{node[len(_LABELLED):]}"
    return terms.iri(_relative(str(node)))


# TriG scopes a blank node label to the document, rdflib to the text it
# parses (a window, a piece of one). So each label goes to rdflib as an IRI
# of this scheme, which it keeps as written, and _nt makes it the same blank
# node again wherever it comes. Its random part: no IRI of a file is one.
_LABELLED = f"cep-bnode-{secrets.token_hex(8)}:"
# a blank node label (TriG's BLANK_NODE_LABEL, possessive: the dots it ends
# with are cut off after) where a term starts: after space or punctuation
# (a datatype too: _nt refuses it), not within a prefixed name (ex:a_:b)
_PN_BASE = ("A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c\u200d"
            "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff")
_LABEL_FIRST, _LABEL_REST = f"[{_PN_BASE}_0-9]", f"[{_PN_BASE}_0-9.\\-\u00b7\u0300-\u036f\u203f\u2040]"
_LABEL = re.compile(rf"(?<![^\s,;()\[\]{{}}^])_:{_LABEL_FIRST}{_LABEL_REST}*+")
# the same grammar, of a whole term (N-Triples and N-Quads share it: cep.io.nquads)
BLANK_NODE = re.compile(rf"_:{_LABEL_FIRST}{_LABEL_REST}*(?<!\.)")
_AFTER_LABEL = frozenset(" \t\r\n,;()[]{}.#<\"'")
_DIRECTIVE_WORDS = frozenset(("@prefix", "prefix", "@base", "base"))


def _labels_as_iris(text: str) -> str:
    """The text with each blank node label outside strings, IRIs, comments
    and directives written as an IRI of the _LABELLED scheme, the label in
    the characters a label of the engine takes ("_" as "__", any other
    character but letters, digits, "-" and "." as "_u<hex>_"). A label that
    goes on with characters the grammar does not give it (_:a:b) is left to
    rdflib, as is anything else."""
    if "_:" not in text:
        return text
    out, done, before = [], 0, ("", "")  # the text up to `done` is in `out`; the last two tokens
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("space", "comment"):
            continue
        if kind == "word" and m.end() > done and before[0].lower() not in _DIRECTIVE_WORDS \
                and before[1].lower() not in _DIRECTIVE_WORDS:
            at = max(m.start(), done)
            while (at := text.find("_:", at, m.end())) >= 0:
                found = _LABEL.match(text, at)
                label = found.group().rstrip(".") if found else ""
                end = at + len(label)
                if not found or end < len(text) and text[end] not in _AFTER_LABEL:
                    at += 2
                    continue
                out += [text[done:at], "<", _LABELLED, label_text(label[2:]), ">"]
                done = at = end
        before = (before[1], m.group())
    return "".join(out) + text[done:]


def label_text(label: str) -> str:
    """A label in the characters a label of the engine takes (above)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-.") else "__" if c == "_" else f"_u{ord(c):x}_"
                   for c in label)


def _relative(iri: str) -> str:
    """An IRI as the file wrote it when it was relative, with no base."""
    return iri[len(NO_BASE):] if iri.startswith(NO_BASE) else iri


def _recover(content, text, statements, name, rejects, failed, found, shift, one_by_one=False) -> None:
    """Parse the statements piece by piece; each statement that fails on its
    own becomes a Reject with its line (and goes to `failed`). Failing
    pieces are halved, so a file with k bad statements out of n costs about
    2 k log n parses. A failing statement is read again in parts where
    _line_parts finds some (they go to `found`). `one_by_one`: the
    statements are such parts (and directives that parse), each parsed on
    its own: together, a long string could span them again."""
    directives = [st for st in statements if st.kind == "directive"]
    good = list(directives) if one_by_one else []
    for st in [] if one_by_one else directives:  # a bad prefix would fail every piece: find it first
        try:
            _parse_into(_Content(content.tag, content.window), _layout(text, good + [st])[0], 0)
            good.append(st)
        except Exception as exc:  # noqa: BLE001
            failed.append(st)
            rejects.append(_reject_for(st, exc, text, name, first_line=1 + _layout(text, good)[1]))

    def attempt(body):
        pieces = sorted([d for d in good if d.start < body[-1].end] + body, key=lambda st: st.start)
        try:
            _parse_into(content, _layout(text, pieces)[0], body[0].start + 1)
        except Exception as exc:  # noqa: BLE001
            if len(body) > 1:
                attempt(body[:len(body) // 2])
                attempt(body[len(body) // 2:])
                return
            parts = _line_parts(text, body[0], shift)
            failed.append(body[0])  # (as a whole, when in parts)
            if parts:
                found.extend(parts)
                for part in parts:
                    attempt([part])
            else:
                before = [d for d in pieces if d is not body[0]]
                rejects.append(_reject_for(body[0], exc, text, name, first_line=1 + _layout(text, before)[1]))

    body = [st for st in statements if st.kind != "directive"]
    for piece in [[st] for st in body] if one_by_one else [body] if body else []:
        attempt(piece)


def _line_parts(text: str, st, shift: int) -> list:
    """The statements of `st` read with long strings kept to their lines,
    when it holds a long string over lines and that finds more than one:
    two stray triple quotes make one string of the statements between them."""
    if _LONG_OVER_LINES.search(text, st.start, st.end) is None:
        return []
    parts = scan(text, st.start, st.end, long_strings=False, shift=shift)
    return parts if len(parts) > 1 else []


_LONG_OVER_LINES = re.compile(r'"""[^\n]*\n|\'\'\'[^\n]*\n')


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
    return Reject(f"{name}:{line}", f"TriG syntax error: {why}; this statement is skipped", _snippet(text, st))


def _snippet(text: str, st) -> str:
    """A statement's text on one line, at most 200 characters."""
    snippet = " ".join(text[st.start:min(st.end, st.start + 1000)].split())
    return snippet if len(snippet) <= 200 else snippet[:197] + "..."


# --------------------------------------------------------------- scanning


@dataclass(frozen=True)
class Statement:
    kind: str  # "directive", "block" (a graph in braces) or "triples"
    start: int  # offsets into the text
    end: int
    line: int  # 1-based line and 0-based column of `start`
    col: int
    brace: int = -1  # offset of a block's "{"


# strings in the unrolled form, possessive: linear in a string's length;
# a long string never closed ends with its line, so that it costs its
# statement and not the rest of the file (no later one can close it)
_LONG_STRINGS = (r'''(?P<lstr>"""[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"""|"""[^\n]*)'''
                 r"""|(?P<lstr2>'''[^'\\]*+(?:(?:\\.|'(?!''))[^'\\]*+)*+'''|'''[^\n]*)|""")
_OTHER_TOKENS = (
    r'''(?P<str>"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"?)'''
    r"""|(?P<str2>'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+'?)"""
    r"|(?P<iri><[^<>\s\"{}|^`\\]*+>?)"
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<open>\{)|(?P<close>\})"
    # a "." ends a statement unless a name or number goes on after it (ex:a.b, 1.5)
    r"|(?P<dot>\.(?![0-9A-Za-z_:%\\\-\u00b7-\uffff]))"
    r"|(?P<space>\s+)"
    r"|(?P<word>[^\s\"'<#{}.]+)"
    r"|(?P<other>.)"
)
_TOKEN = re.compile(_LONG_STRINGS + _OTHER_TOKENS, re.S)
_LINE_TOKEN = re.compile(_OTHER_TOKENS, re.S)  # no long string: a triple quote is quotes of short ones
# a string token that is closed (one that is not ends its statement: scan)
_CLOSED = re.compile(r'''"""(?:[^"\\]|\\.|"(?!""))*+"""|'''
                     r"""'''(?:[^'\\]|\\.|'(?!''))*+'''|"""
                     r'''"(?:[^"\\\n]|\\.)*+"|'''
                     r"""'(?:[^'\\\n]|\\.)*+'""", re.S)


def scan(text: str, lo: int = 0, hi: int | None = None, long_strings: bool = True,
         shift: int = 0) -> list[Statement]:
    """Cut TriG text (from offset lo to hi) into top-level statements without
    parsing them. A block whose "}" is missing ends where the next block
    starts (graphs do not nest in TriG), and a string never closed ends its
    statement at its line's end, so that one unbalanced brace or quote does
    not swallow the rest of the file. `long_strings`: False reads triple
    quotes as quotes of short strings, which end with their line. `shift`:
    what to add to a line of `text` to make it the file's."""
    newlines = _newlines(text)

    def position(offset):
        line = bisect.bisect_left(newlines, offset)
        col = offset - (newlines[line - 1] + 1 if line else 0)
        return line + 1 + shift, col

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

    hi = len(text) if hi is None else hi
    for m in (_TOKEN if long_strings else _LINE_TOKEN).finditer(text, lo, hi):
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
            elif kind in ("str", "str2", "lstr", "lstr2") and not _CLOSED.fullmatch(m.group()):
                close(m.end())  # at the end of its line: the rest of the file is not in the string
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
    close(hi)
    return out


@lru_cache(maxsize=1)  # a file's statements are scanned again, some of them
def _newlines(text: str) -> list[int]:
    return [m.start() for m in re.finditer("\n", text)]


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


def graph_lines(statements, text: str) -> dict[str, int]:
    """The line of the first block of each graph named by an IRI or a
    prefixed name (what a Reject or an event's source points at), keyed as
    _nt writes the graph's name."""
    lines = {}
    for st, graph in _block_graphs(sorted(statements, key=lambda st: st.start), text):
        if graph is not None:
            lines.setdefault(graph, st.line)
    return lines


def _block_graphs(statements, text: str) -> list:
    """(statement, its graph's name as _nt writes it, or None) of each block
    named by an IRI or a prefixed name."""
    base = NO_BASE
    prefixes, out = {}, []
    for st in statements:
        chunk = text[st.start:st.end]
        if st.kind == "directive":
            m = _PREFIX_RE.match(chunk)
            if m:
                prefixes[m.group(1)] = _join(base, m.group(2))
            m = _BASE_RE.match(chunk)
            if m:
                base = _join(base, m.group(1))
            continue
        if st.kind != "block":
            continue
        label = text[st.start:st.brace].strip()
        if label[:5].upper() == "GRAPH":
            label = label[5:].strip()
        graph = None
        if label.startswith("<") and label.endswith(">"):
            graph = _join(base, label[1:-1])
        else:
            m = _PNAME_RE.match(label)
            if m and prefixes.get(m.group(1)) is not None and not label.startswith("_:"):
                graph = prefixes[m.group(1)] + re.sub(r"\\(.)", r"\1", m.group(2))
        out.append((st, None if graph is None else terms.iri(_relative(graph))))
    return out


def _join(base: str | None, iri: str) -> str | None:
    """An IRI resolved against a base, None when either is not one urljoin reads."""
    try:
        return None if base is None else urljoin(base, iri)
    except ValueError:  # a malformed authority ("http://[x/"): the parser refuses it
        return None
