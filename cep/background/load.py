"""Reading background knowledge: an ontology file -> its triples as canonical text.

Takes the path of an RDF or OBO file and returns its triples as (subject,
predicate, object) tuples of canonical N-Triples text (cep.terms), the form
events travel in, so that background terms and event terms compare as
strings. The format follows the extension, and any of them may be gzipped
(a further `.gz`):

    .ttl              Turtle            rdflib
    .rdf .owl .xml    RDF/XML           rdflib
    .trig             TriG              rdflib; graph names are dropped
    .nt               N-Triples         the line reader here
    .nq               N-Quads           the line reader here; graph names are dropped
    .obo              OBO 1.2           the stanza reader here

Background knowledge is one graph: a triple occurs once. The line and
stanza readers give the triples in file order; rdflib keeps no order, so
its triples are sorted by their text, blank nodes masked.

N-Triples and N-Quads are read here rather than by rdflib because rdflib is
several times slower on them and its errors do not say which line is wrong.
The line reader gives the same text for every term as rdflib would: typed
literals not already in canonical form go through rdflib's Literal.

Blank nodes are renamed `_:bg<tag>_<n>`: <tag> is the first 8 hex digits of
the SHA-1 of the file's resolved path, so two files never share a blank
node; n counts the file's blank nodes in the order of the triples. Reading a
file twice gives the same labels, except that rdflib's formats may swap the
labels of blank nodes whose triples read alike.

A file that cannot be read raises OntologyError, whose pos is the path, or
path:line:column (path:line where the parser does not give the column) of
the problem.

Hostile files meet limits before they can exhaust the machine: a file's
text (after gzip decompression, and in RDF/XML after entity expansion) may
hold at most size_limit() bytes, CEP_MAX_BACKGROUND_SIZE in the
environment (default 256 MiB), so that a small gzip bomb or a few
nested XML entities ("billion laughs") stop with a message naming the file
and the limit. An environment variable rather than an option, because the
limit guards every way background files are read (cep run, explain and
compile, Engine, cep.spark.detect, the demos) and is a resource policy of
the machine, not a property of a run. Only regular files are read: a FIFO
or a device named as a background file would block or never end. Where
rdflib's readers would take unbounded time on a small file (a Turtle
literal of millions of lines, blank nodes nested thousands deep), the file
is refused with a message saying why.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import stat
import zlib
from pathlib import Path
from urllib.parse import unquote

from cep import terms
from cep.errors import OntologyError, UsageError

RDFS_SUBCLASSOF = terms.iri("http://www.w3.org/2000/01/rdf-schema#subClassOf")
RDFS_LABEL = terms.iri("http://www.w3.org/2000/01/rdf-schema#label")
OWL_CLASS = terms.iri("http://www.w3.org/2002/07/owl#Class")
OBO_PURL = "http://purl.obolibrary.org/obo/"

FORMATS = {".ttl": "turtle", ".rdf": "xml", ".owl": "xml", ".xml": "xml", ".trig": "trig",
           ".nt": "nt", ".nq": "nquads", ".obo": "obo"}
_FORMAT_NAMES = {"turtle": "Turtle", "xml": "RDF/XML", "trig": "TriG", "nt": "N-Triples",
                 "nquads": "N-Quads", "obo": "OBO"}


def format_of(path) -> str:
    """The format of a background file, by its extension (a `.gz` after it
    means gzipped); OntologyError when the extension is not known."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    fmt = FORMATS.get(Path(name).suffix)
    if fmt is None:
        raise OntologyError(f"unknown background file type {Path(name).suffix or '(no extension)'}; "
                            f"background files end in {', '.join(FORMATS)}, optionally followed by .gz",
                            str(path))
    return fmt


LIMIT_VARIABLE = "CEP_MAX_BACKGROUND_SIZE"
DEFAULT_LIMIT = 256 * 2**20
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def size_limit() -> int:
    """The most bytes of text a background file may hold: the environment's
    CEP_MAX_BACKGROUND_SIZE (bytes, or with a unit: 512M, 2G), else 256 MiB."""
    text = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_LIMIT
    m = re.fullmatch(r"([0-9]{1,15})\s*([KMGT]?)(?:i?B)?", text, re.IGNORECASE)
    if m is None or int(m.group(1)) == 0:
        raise UsageError(f"{LIMIT_VARIABLE}={text!r}: expected a size in bytes, or with a unit "
                         "such as 512M or 2G")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def _size_text(n: int, setting: bool = False) -> str:
    """n bytes for a message (256 MiB), or as CEP_MAX_BACKGROUND_SIZE takes it (256M)."""
    unit = next((u for u in "TGMK" if n % _UNITS[u] == 0), "")
    if setting:
        return f"{n // _UNITS[unit]}{unit}"
    return f"{n // _UNITS[unit]} {unit}iB" if unit else f"{n:,} bytes"


def _too_large(name: str, limit: int, what: str) -> OntologyError:
    return OntologyError(f"{what} is larger than the limit of {_size_text(limit)} on a background file; "
                         f"raise it with the environment variable {LIMIT_VARIABLE} (for example "
                         f"{LIMIT_VARIABLE}={_size_text(2 * limit, setting=True)})", name)


def _not_regular(mode: int) -> str | None:
    """What a file of this st_mode is, when it is not a regular file."""
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


_ODD = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def from_file(path: str, folder: Path, allow=()) -> Path:
    """The background file a rule file names with FROM, checked before
    anything of it is read. `path` is the path of the FROM's IRI, still
    percent-encoded, absolute or relative to `folder`, the rule file's
    folder. The file, its symbolic links resolved, must lie under `folder`
    or under a folder of `allow`, or be a file of `allow` (the run's
    --ontology files); it must be a regular file of a background type.
    Raises OntologyError, without a position (the caller has the FROM's);
    a file outside is refused whether or not it exists."""
    try:
        decoded = unquote(path, errors="strict")
    except UnicodeDecodeError:
        raise OntologyError(f"the percent-escapes of the path {path} are not UTF-8 text") from None
    odd = _ODD.search(decoded)
    if odd is not None:
        raise OntologyError(f"the path of the background file holds the character U+{ord(odd.group()):04X} "
                            "(a control character or a lone surrogate), which FROM does not take")
    try:
        resolved = (folder / decoded).resolve()
        roots = [Path(folder).resolve(), *(Path(a).resolve() for a in allow)]
    except (OSError, RuntimeError) as exc:  # RuntimeError: a loop of symbolic links
        raise OntologyError(f"the path {decoded} cannot be resolved: {getattr(exc, 'strerror', None) or exc}") from None
    if not any(resolved == root or root in resolved.parents for root in roots):
        others = "".join(f", {root}" for root in roots[1:])
        raise OntologyError(f"the background file {resolved} is outside the folders FROM may read "
                            f"({roots[0]}, the rule file's{others}): name it with --ontology, or allow its "
                            "folder with --allow-from DIR (allow_from= in the Python API)")
    try:
        mode = resolved.stat().st_mode
    except FileNotFoundError:
        raise OntologyError(f"the background file {resolved} does not exist") from None
    except OSError as exc:
        raise OntologyError(f"the background file {resolved} cannot be read: {exc.strerror or exc}") from None
    kind = _not_regular(mode)
    if kind is not None:
        raise OntologyError(f"the background file {resolved} is {kind}, not a regular file")
    format_of(resolved)
    return resolved


def read_ontology(path) -> list[tuple[str, str, str]]:
    """The triples of one background file as canonical N-Triples text."""
    fmt = format_of(path)
    name = str(path)
    limit = size_limit()
    data = _read_bytes(Path(path), limit)
    nodes = _BlankNodes(path)
    if fmt == "xml":  # the XML declaration names the encoding
        triples = _read_rdflib(data, fmt, path, nodes, limit)
    else:
        text = _decode(data, name)
        if fmt == "obo":
            triples = _read_obo(text, name)
        elif fmt in ("nt", "nquads"):
            triples = _read_lines(text, name, nodes, quads=fmt == "nquads")
        else:
            _check_literals(text, fmt, name)
            triples = _read_rdflib(text, fmt, path, nodes, limit)
    return list(dict.fromkeys(triples))


_CHUNK = 2**20


def _read_bytes(path: Path, limit: int) -> bytes:
    """The file's bytes, decompressed if it is gzipped: at most `limit` of
    them, read a chunk at a time so that a bomb never takes more memory."""
    name = str(path)
    gzipped = path.name.lower().endswith(".gz")
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise OntologyError("no such file", name) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise OntologyError(f"cannot read the file: {getattr(exc, 'strerror', None) or exc}", name) from None
    kind = _not_regular(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise OntologyError(f"is {kind}, not a regular file", name)
    with open(fd, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
        chunks, size = [], 0
        try:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise _too_large(name, limit, "its text once decompressed" if gzipped else "the file")
                chunks.append(chunk)
        except gzip.BadGzipFile:
            raise OntologyError("not a gzip file (its name ends in .gz)", name) from None
        except (EOFError, zlib.error) as exc:
            raise OntologyError(f"not a complete gzip file: {exc}", name) from None
        except OSError as exc:
            raise OntologyError(f"cannot read the file: {exc.strerror or exc}", name) from None
    return b"".join(chunks)


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise OntologyError(f"not UTF-8 text (byte {exc.start + 1} of the file)",
                            f"{name}:{line}:{column}") from None


class _BlankNodes:
    """The labels of one file's blank nodes (see the module docstring)."""

    def __init__(self, path):
        digest = hashlib.sha1(str(Path(path).resolve()).encode("utf-8")).hexdigest()
        self.prefix = f"_:bg{digest[:8]}_"
        self.labels: dict = {}

    def label(self, key) -> str:
        found = self.labels.get(key)
        if found is None:
            found = self.labels[key] = self.prefix + str(len(self.labels))
        return found


# ------------------------------------------------- N-Triples and N-Quads

_IRIREF = r'<[^<>"{}|^`\\\x00-\x20]*(?:\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})[^<>"{}|^`\\\x00-\x20]*)*>'
_BNODE = r"_:[\w\-:]+(?:\.+[\w\-:]+)*"
_LITERAL = r'"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^' + _IRIREF + ")?"
_WS = r"[ \t]*"
_STATEMENT = re.compile(
    f"{_WS}({_IRIREF}|{_BNODE}){_WS}({_IRIREF}){_WS}({_IRIREF}|{_BNODE}|{_LITERAL}){_WS}"
    f"(?:({_IRIREF}|{_BNODE}){_WS})?\\.{_WS}(?:#.*)?\\Z")
_BLANK_OR_COMMENT = re.compile(f"{_WS}(?:#.*)?\\Z")
_SCHEME = re.compile(r"<[A-Za-z][A-Za-z0-9+.\-]*:")
_LINE_END = re.compile(r"\r\n?|\n")
_ESCAPED = re.compile(r"[\\\x00-\x1f\x7f]")  # text that canonical form writes differently


def _read_lines(text: str, name: str, nodes: _BlankNodes, quads: bool) -> list:
    """N-Triples (or N-Quads, whose graph names are dropped), line by line."""
    fmt = "N-Quads" if quads else "N-Triples"
    cache: dict[str, str] = {}
    out: dict = {}  # a file of one line repeated holds one triple: memory follows the distinct ones
    with terms.rdflib_as_written():
        for number, line in enumerate(_lines(text), 1):
            m = _STATEMENT.match(line)
            if m is None or (m.group(4) and not quads):
                if _BLANK_OR_COMMENT.match(line):
                    continue
                column, why = _diagnose(line, quads)
                raise OntologyError(f"{fmt} syntax error: {why}", f"{name}:{number}:{column}")
            triple = []
            for group in (1, 2, 3):
                raw = m.group(group)
                term = cache.get(raw)
                if term is None:
                    try:
                        term = _term(raw, nodes)
                    except terms.TermError as exc:
                        raise OntologyError(f"{fmt} syntax error: {exc}",
                                            f"{name}:{number}:{m.start(group) + 1}") from None
                    if raw[0] != "_":  # blank nodes are per file, the rest may repeat widely
                        cache[raw] = term
                triple.append(term)
            out[tuple(triple)] = None
    return list(out)


def _lines(text: str):
    """The lines of the text one at a time (a list of them all would take
    several times the text's memory)."""
    start = 0
    for m in _LINE_END.finditer(text):
        yield text[start:m.start()]
        start = m.end()
    yield text[start:]


def _term(raw: str, nodes: _BlankNodes) -> str:
    """Canonical text of one N-Triples term, as rdflib + terms.from_rdflib
    would give it (literals as written)."""
    if raw[0] == "_":
        return nodes.label(raw)
    if raw[0] == "<":
        if not _SCHEME.match(raw):
            raise terms.TermError(f"relative IRI {raw}: N-Triples needs absolute IRIs")
        return raw if "\\" not in raw else terms.checked(raw)  # no escaped space in an IRI
    if raw[-1] == '"' and _ESCAPED.search(raw) is None:  # a plain string already canonical
        return raw
    return terms.checked(raw)


_TERM_PATTERNS = {"iri": re.compile(_IRIREF), "blank": re.compile(_BNODE), "literal": re.compile(_LITERAL)}
_ROLES = (
    ("subject", ("iri", "blank"), "an IRI <...> or a blank node _:label"),
    ("predicate", ("iri",), "an IRI <...>"),
    ("object", ("iri", "blank", "literal"), 'an IRI <...>, a blank node _:label or a literal "..."'),
)


def _diagnose(line: str, quads: bool) -> tuple[int, str]:
    """Where a statement line goes wrong (1-based column) and what was
    expected there; called only on lines the fast pattern rejects."""
    pos = len(line) - len(line.lstrip(" \t"))
    for role, kinds, expected in _ROLES:
        m = next((m for m in (_TERM_PATTERNS[k].match(line, pos) for k in kinds) if m), None)
        if m is None:
            return pos + 1, f"expected the {role}, {expected}, but found {_found(line, pos)}"
        pos = m.end()
        pos += len(line[pos:]) - len(line[pos:].lstrip(" \t"))
    if quads:
        m = _TERM_PATTERNS["iri"].match(line, pos) or _TERM_PATTERNS["blank"].match(line, pos)
        if m:
            pos = m.end()
            pos += len(line[pos:]) - len(line[pos:].lstrip(" \t"))
    if not line.startswith(".", pos):
        ends = "a graph name or '.'" if quads else "'.'"
        return pos + 1, f"expected {ends} after the object, but found {_found(line, pos)}"
    return pos + 2, f"expected the end of the line after '.', but found {_found(line, pos + 1)}"


def _found(line: str, pos: int) -> str:
    rest = line[pos:].strip()
    if not rest:
        return "the end of the line"
    if rest[0] == '"' and _TERM_PATTERNS["literal"].match(line, pos) is None:
        return "a string that does not end on this line"
    if rest[0] == "<" and ">" in rest:
        iri = rest[:rest.index(">") + 1]
        if _TERM_PATTERNS["iri"].fullmatch(iri):
            return iri
        return f"{iri} (IRIs cannot hold spaces, quotes, <, >, {{, }}, |, ^, ` or backslashes)"
    return repr(rest[:30] + ("..." if len(rest) > 30 else ""))


# ------------------------------------------------------ rdflib's formats


def _read_rdflib(data, fmt: str, path, nodes: _BlankNodes, limit: int) -> list:
    from xml.sax import SAXParseException

    from rdflib import BNode, Dataset, Graph
    from rdflib.exceptions import ParserError
    from rdflib.plugins.parsers.notation3 import BadSyntax

    graph = Dataset() if fmt == "trig" else Graph()
    name = str(path)
    public_id = Path(path).resolve().as_uri()
    try:
        with terms.rdflib_as_written():
            if fmt == "xml":
                _parse_rdfxml(graph, data, public_id, _XmlBounds(name, limit))
            else:
                graph.parse(data=data, format=fmt, publicID=public_id)
    except RecursionError:  # rdflib's Turtle reader recurses once per nested [ ] or ( )
        raise OntologyError(f"{_FORMAT_NAMES[fmt]} error: blank nodes or collections nested too deeply "
                            f"for the reader (at most a few thousand levels)", name) from None
    except BadSyntax as exc:
        raise OntologyError(f"{_FORMAT_NAMES[fmt]} syntax error: {exc._why}", _bad_syntax_pos(exc, name)) from None
    except SAXParseException as exc:  # expat counts columns from 0
        raise OntologyError(f"RDF/XML syntax error: {exc.getMessage()}",
                            f"{name}:{exc.getLineNumber()}:{exc.getColumnNumber() + 1}") from None
    except ParserError as exc:  # the RDF/XML parser's own checks: "<id>:<line>:<column>: <message>"
        m = re.match(r"(?s).*?:(\d+):(\d+): (.*)", str(exc))
        if m is None:
            raise OntologyError(f"{_FORMAT_NAMES[fmt]} error: {exc}", name) from None
        raise OntologyError(f"RDF/XML error: {m.group(3)}", f"{name}:{m.group(1)}:{int(m.group(2)) + 1}") from None
    except ValueError as exc:  # rdflib's terms refuse some values (a bad language tag) without a line
        raise OntologyError(f"{_FORMAT_NAMES[fmt]} error: {exc}", name) from None
    except (AssertionError, AttributeError, IndexError, KeyError, TypeError) as exc:
        # rdflib's Turtle reader fails so on some malformed input, with no
        # position: a string that runs to the end of the file (an assert),
        # a datatype that is no IRI ("1"^^.x), a ?variable, ...
        detail = " ".join(str(exc).split())[:100]
        raise OntologyError(f"{_FORMAT_NAMES[fmt]} syntax error: the reader stopped on malformed input "
                            f"({type(exc).__name__}{': ' if detail else ''}{detail})", name) from None

    texts: dict = {}  # most terms recur: convert each once

    def masked(node):
        text = texts.get(node)
        if text is None:
            text = texts[node] = "_:" if isinstance(node, BNode) else terms.checked(terms.from_rdflib(node))
        return text

    found = graph.quads((None, None, None, None)) if fmt == "trig" else graph
    try:
        rows = sorted((((masked(s), masked(p), masked(o)), (s, p, o)) for s, p, o, *_ in found),
                      key=lambda row: row[0])
    except terms.TermError as exc:
        raise OntologyError(f"a term that N-Triples cannot write: {exc}", name) from None
    return [tuple(nodes.label(node) if isinstance(node, BNode) else text for text, node in zip(*row))
            for row in rows]


# Turtle and TriG tokens that may hold a quote: rdflib's reader builds a
# string literal a piece at a time, a piece ending at each line break,
# quote or backslash, so its time grows with their number times the
# literal's length (a 4 MB literal of two million lines: many minutes);
# likewise a local name with escapes (:a\#\#...).
_TURTLE_TOKENS = re.compile(r"""
    \\.(?:[^\s\\<>"'#(),;\[\]{}^]*+\\.)*+        # the escapes of a local name: \#, \'
  | \#[^\r\n]*+                                   # a comment
  | <(?:[^<>"{}|^`\\\x00-\x20]++|\\[uU])*+>       # an IRI
  | \"\"\"(?:[^"\\]++|\\.|""?(?!"))*+"{3,5}       # long strings
  | '''(?:[^'\\]++|\\.|''?(?!'))*+'{3,5}
  | "(?:[^"\\\r\n]++|\\.)*+"                      # short strings
  | '(?:[^'\\\r\n]++|\\.)*+'
""", re.VERBOSE | re.DOTALL)
_PIECES = ("\n", "\r", "\\", '"', "'")
_LITERAL_WORK = 2**35  # pieces x length, summed over a file's literals: a few seconds of rdflib's time


def _check_literals(text: str, fmt: str, name: str) -> None:
    """Refuse a Turtle or TriG file whose literals would take rdflib
    unbounded time (see _TURTLE_TOKENS), before it is given to rdflib."""
    work = 0
    for m in _TURTLE_TOKENS.finditer(text):
        token = m.group()
        if token[0] not in "\"'\\":  # a string, or escapes in a name, which rdflib reads alike
            continue
        pieces = sum(map(token.count, _PIECES))
        work += pieces * len(token)
        if work > _LITERAL_WORK:
            line = text.count("\n", 0, m.start()) + 1
            what = "a name" if token[0] == "\\" else "a literal"
            raise OntologyError(
                f"{_FORMAT_NAMES[fmt]} error: {what} of "
                f"{len(token):,} characters with {pieces:,} line breaks, quotes or backslashes: the reader's time "
                "grows with their number times the length of the literal, and the file's literals are past its "
                "bound; write such text in shorter literals, or the file as N-Triples", f"{name}:{line}")


# Expat gives a run of text to rdflib in one piece up to this size; in
# smaller pieces (a line, an entity) rdflib's RDF/XML reader takes time
# quadratic in a literal's length (a 1.6 MB literal of short lines: 40 s).
_XML_TEXT_BUFFER = 8 * 2**20
_XML_LITERAL_WORK = 2**25  # bytes of XML literal parsed again: some 10 s of rdflib's time
_RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"


def _parse_rdfxml(graph, data: bytes, public_id: str, bounds: _XmlBounds) -> None:
    """rdflib's RDF/XML reader, as Graph.parse runs it, on an expat parser
    bounded by `bounds`. xml.sax makes a new expat parser in each
    parse's reset, so the bounds are set there."""
    from rdflib.parser import create_input_source
    from rdflib.plugins.parsers.rdfxml import create_parser

    source = create_input_source(data=data, publicID=public_id, format="xml")
    reader = create_parser(source, graph)
    reset = reader.reset

    def bounded_reset():
        reset()
        bounds.bound(reader._parser)

    reader.reset = bounded_reset
    try:
        reader.parse(source)
    finally:
        source.close()


class _XmlBounds:
    """The bounds of one RDF/XML file. Entities defined with other entities
    (how "billion laughs" bombs grow), parameter entities and external
    entities are refused where they are declared; the text of the others,
    expanded, counts with the rest of the file's text against the size
    limit. And the work of its XML literals (rdf:parseType="Literal") is
    bounded: rdflib makes a literal's value again, parsing all of its XML,
    at each element or text run added to it, so that work grows with the
    square of a literal's size (800 empty elements in one literal: 4 s)."""

    def __init__(self, name: str, limit: int):
        self.name = name
        self.limit = limit
        self.size = 0
        self.literal_at = None  # the byte where the XML literal being read starts
        self.depth = 0  # elements open within it
        self.work = 0  # bytes of XML literal parsed again, summed
        self.expat = None

    def bound(self, expat) -> None:
        self.expat = expat
        expat.buffer_text = True
        expat.buffer_size = _XML_TEXT_BUFFER
        expat.EntityDeclHandler = self.declared
        text, start, end = expat.CharacterDataHandler, expat.StartElementHandler, expat.EndElementHandler

        def counted_text(data):
            self.count(len(data))
            self.literal_work(1)
            text(data)

        def counted_start(element, attributes):
            self.count(sum(map(len, attributes.values())))
            if self.literal_at is not None:
                self.depth += 1
                self.literal_work(1 + len(attributes))
            elif any(key.split(" ")[:2] == [_RDF_NS, "parseType"] and value not in ("Resource", "Collection")
                     for key, value in attributes.items()):  # rdflib reads any other parseType as Literal
                self.literal_at, self.depth = expat.CurrentByteIndex, 0
            start(element, attributes)

        def counted_end(element):
            if self.literal_at is not None:
                self.literal_work(1)
                self.depth -= 1
                if self.depth < 0:  # the end of the property element that holds the literal
                    self.literal_at = None
            end(element)

        expat.CharacterDataHandler = counted_text
        expat.StartElementHandler = counted_start
        expat.EndElementHandler = counted_end

    def where(self) -> str:
        return f"{self.name}:{self.expat.CurrentLineNumber}:{self.expat.CurrentColumnNumber + 1}"

    def count(self, n: int) -> None:
        self.size += n
        if self.size > self.limit:
            raise _too_large(self.where(), self.limit, "its text with the XML entities expanded")

    def literal_work(self, additions: int) -> None:
        if self.literal_at is None:
            return
        self.work += additions * (self.expat.CurrentByteIndex - self.literal_at)
        if self.work > _XML_LITERAL_WORK:
            raise OntologyError("RDF/XML error: XML literals (rdf:parseType=\"Literal\") too large for the reader, "
                                "whose work grows with the square of a literal's elements: write such text as a "
                                "plain string literal, or in smaller literals", self.where())

    def declared(self, entity, parameter, value, base, system_id, public_id, notation) -> None:
        if parameter:
            why = "a parameter entity (%name;)"
        elif value is None:
            why = "an external entity (SYSTEM or PUBLIC): background files are read alone"
        elif "&" in value:
            why = "defined with another entity or an escaped '&' (entities within entities are how XML bombs grow)"
        else:
            return
        raise OntologyError(f"RDF/XML error: the entity {entity} is {why}; write its text where it is "
                            "used, or define it as plain text", self.where())


def _bad_syntax_pos(exc, name: str) -> str:
    """path:line:column of a Turtle/TriG error. rdflib counts lines from 0;
    an error found at the end of the file is placed after its last token."""
    line = exc.lines + 1
    text = exc._str.decode("utf-8", "replace")
    at = exc._i
    if at < 0 or not text[at:].strip():  # the end of the file (offset -1 or trailing space)
        at = len(text.rstrip())
        line = text.count("\n", 0, at) + 1
    elif text.count("\n", 0, at) + 1 != line:  # an offset into some other text: no column
        return f"{name}:{line}"
    return f"{name}:{line}:{at - (text.rfind(chr(10), 0, at) + 1) + 1}"


# ------------------------------------------------------------------ OBO


class _OboError(Exception):
    pass


def _read_obo(text: str, name: str) -> list:
    """The classes of an OBO file: each [Term] stanza's id becomes a class
    (rdf:type owl:Class), its name an rdfs:label and each is_a an
    rdfs:subClassOf, as the OBO-to-OWL mapping has them. Obsolete terms,
    other stanzas and other tags are left out."""
    out = []
    stanza = None  # the [Term] being read: dict of its tags, or None elsewhere

    def finish():
        if stanza is None:
            return
        if "id" not in stanza:
            raise OntologyError("OBO syntax error: this [Term] stanza has no id: line", f"{name}:{stanza['line']}")
        if stanza["obsolete"]:
            return
        cls = stanza["id"]
        out.append((cls, terms.RDF_TYPE, OWL_CLASS))
        out.extend((cls, RDFS_LABEL, terms.literal(label)) for label in stanza["names"])
        out.extend((cls, RDFS_SUBCLASSOF, parent) for parent in stanza["parents"])

    for number, raw in enumerate(_LINE_END.split(text), 1):
        line = raw.strip()
        if not line or line.startswith("!"):
            continue
        try:
            if line.startswith("["):
                m = re.fullmatch(r"\[([A-Za-z]+)\]", line)
                if m is None:
                    raise _OboError(f"expected a stanza header such as [Term], but found {line[:40]!r}")
                finish()
                stanza = {"line": number, "names": [], "parents": [], "obsolete": False} \
                    if m.group(1) == "Term" else None
                continue
            tag, colon, value = line.partition(":")
            if not colon or not tag or " " in tag:
                raise _OboError(f"expected `tag: value`, but found {line[:40]!r}")
            if stanza is None:
                continue
            if tag == "id":
                if "id" in stanza:
                    raise _OboError(f"a second id: in the [Term] stanza of line {stanza['line']}")
                stanza["id"] = _obo_class(value, "id:")
            elif tag == "is_a":
                stanza["parents"].append(_obo_class(value, "is_a:"))
            elif tag == "name":
                stanza["names"].append(_obo_text(value))
            elif tag == "is_obsolete":
                stanza["obsolete"] = _obo_text(value) == "true"
        except _OboError as exc:
            raise OntologyError(f"OBO syntax error: {exc}", f"{name}:{number}") from None
    finish()
    return out


def _obo_class(value: str, tag: str) -> str:
    """The class IRI of an OBO id (the first token of the value), by the OBO
    PURL rule: NCBITaxon:9606 -> http://purl.obolibrary.org/obo/NCBITaxon_9606."""
    token = next(iter(_obo_text(value).split()), "")
    if not token:
        raise _OboError(f"{tag} needs an id such as GO:0008150")
    iri = token
    if not token.startswith(("http://", "https://")):
        prefix, colon, local = token.partition(":")
        if not (prefix and colon and local):
            raise _OboError(f"{tag} {token} is neither PREFIX:LOCAL (GO:0008150) nor an http(s) IRI")
        iri = f"{OBO_PURL}{prefix}_{local}"
    try:  # the IRI check of every reader: no character IRIs forbid (a quote, a space)
        return terms.absolute_iri(iri)
    except terms.TermError as exc:
        raise _OboError(f"{tag} {token}: {exc}") from None


_OBO_ESCAPES = {"n": "\n", "t": "\t", "W": " "}


def _obo_text(value: str) -> str:
    """An OBO value without its trailing `! comment`, escapes undone."""
    out = []
    chars = iter(value)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            out.append(_OBO_ESCAPES.get(nxt, nxt))
        elif ch == "!":
            break
        else:
            out.append(ch)
    return "".join(out).strip()
