"""The W3C SPARQL 1.0 and 1.1 query test suites (vendored beside this file)
run through the `cep` command, in process.

    python -m tests.w3c.run                  counts per category, failure causes
    python -m tests.w3c.run --update-known   also rewrite known_failures.txt
    python -m tests.w3c.run --only agg       the cases whose id contains "agg"
    python -m tests.w3c.run --engine spark   the evaluation cases on Spark

Reads each folder's manifest.ttl (the DAWG test manifest vocabulary) and
makes cases of the applicable tests (`applicable` says which):

- an evaluation test (mf:QueryEvaluationTest) in two modes:
  "events": its data (qt:data) are events of one instant (a JSON Lines
  event file, every triple at T), and the query, as written, must give
  exactly the SPARQL answers, each at [T, T]; a test without data, or
  with data files that hold no triple, has no events mode (a stream
  without events has no instant to answer at);
  "background": its data are background knowledge (--ontology), and one
  event at T, a tick of a stream of its own, makes the query evaluate: the
  query's WHERE group is joined with `GRAPH <tick> { <tick> <tick> <tick> }`
  under `FROM NAMED STREAM <tick> WINDOW ELEMS 1`, which adds no variable and
  one solution, so the answers are those of the query over the background
  (the patterns outside GRAPH do not read the tick's stream; the window of
  one event evaluates the query at T).
  In both modes a CONSTRUCT runs with `@feedback off`: in SPARQL its
  triples are its answer and never data, where cep would feed them back
  into the stream for every query to read, the query itself included.
- a syntax test: `cep compile` must accept a positive one (exit 0) and
  reject a negative one with exit 2 (a QueryError, with its message). A
  positive one refused only for calling an extension function (an IRI)
  that cep does not provide counts as accepted: SPARQL 1.1 17.6 says such
  a query is not evaluated and an error is returned, and `cep` reports
  that error after every other check of the query has passed.

Answers are compared with the expected results (.srx, .srj, or an RDF
result set or graph in .ttl/.rdf) as multisets of solutions, with RDF term
equality (a literal is its lexical form and datatype or language: "01" and
"1" are different integers) and blank nodes up to isomorphism; where the
query has ORDER BY, the answers' order must agree on its plain-variable
keys (rows equal on them may come in any order); where the result's
cardinality is lax (mf:LaxCardinality, REDUCED), a solution may come fewer
times than listed, but at least once. ASK is true when the
query answers at least once. CONSTRUCT compares the union of the answers'
triples, as graphs.

A case that fails gives its cause, derived from what happened (the first
line of the error message, "wrong answers", ...): known_failures.txt lists
the failing cases with their cause, so that the list can only shrink
(tests/w3c/test_w3c.py fails on a listed case that passes, and on an
unlisted one that fails).

`--engine spark` runs the evaluation cases on the Spark engine (local
mode, one session for every case, about 2 s a case); the same list of
known failures holds for it, since both engines run the same rules.
tests/w3c/test_w3c_spark.py runs a sample of it in `make test`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import rdflib
from rdflib import RDF, BNode, Graph, Literal, Namespace, URIRef
from rdflib.compare import isomorphic

# rdflib logs each literal whose lexical form is not of its datatype: the
# suites hold such literals on purpose
logging.getLogger("rdflib.term").setLevel(logging.ERROR)

HERE = Path(__file__).resolve().parent
KNOWN = HERE / "known_failures.txt"
SUITES = {"dawg-data-r2": "SPARQL 1.0", "sparql11": "SPARQL 1.1"}

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
QT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-query#")
DAWGT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#")
RS = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/result-set#")
SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
UT = Namespace("http://www.w3.org/2009/sparql/tests/test-update#")
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"

T_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z, the instant of every case's events
TICK = "urn:x-cep-w3c:tick"
MODES = ("events", "background", "syntax")


@dataclass(frozen=True)
class Case:
    id: str  # "sparql11/aggregates/manifest#agg01"
    mode: str  # events | background | syntax
    suite: str  # dawg-data-r2 | sparql11
    kind: str  # eval | positive | negative
    query: Path
    data: tuple = ()
    result: Path | None = None
    # mf:LaxCardinality (REDUCED): a solution may come fewer times than the
    # result lists it, at least once
    lax: bool = False

    @property
    def key(self) -> str:
        return f"{self.mode} {self.id}"

    @property
    def category(self) -> str:
        what = {"eval": f"evaluation ({self.mode})", "positive": "positive syntax",
                "negative": "negative syntax"}[self.kind]
        return f"{SUITES[self.suite]} {what}"


@dataclass
class Outcome:
    passed: bool
    cause: str = ""  # why it failed, one line
    detail: str = field(default="", compare=False)  # what to look at


# ------------------------------------------------------------ manifests


@contextlib.contextmanager
def _lexical_forms():
    """rdflib keeps literals as written (its default rewrites "01"^^xsd:integer
    as "1"): the expected results and the data are compared as terms."""
    before = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        yield
    finally:
        rdflib.NORMALIZE_LITERALS = before


def cases() -> list[Case]:
    """Every applicable case of the vendored suites, in manifest order."""
    found = []
    for suite in SUITES:
        for manifest in sorted((HERE / suite).glob("*/manifest.ttl")):
            found += _manifest_cases(suite, manifest)
    return found


def _manifest_cases(suite: str, manifest: Path) -> list[Case]:
    g = Graph()
    g.parse(manifest, format="turtle", publicID=manifest.as_uri())
    folder = manifest.parent
    out = []
    for entries in g.objects(None, MF.entries):
        for test in rdflib.collection.Collection(g, entries):
            name = str(test).split("#", 1)[-1] if "#" in str(test) else str(test).rsplit("/", 1)[-1]
            tid = f"{suite}/{folder.name}/manifest#{name}"
            kind = _kind(g, test)
            if kind is None or _withdrawn(g, test):
                continue
            if kind == "eval":
                action = g.value(test, MF.action)
                query = _path(g.value(action, QT.query))
                data = tuple(_path(d) for d in g.objects(action, QT.data))
                result = g.value(test, MF.result)
                if not _applicable_eval(g, action, query):
                    continue
                lax = (test, MF.resultCardinality, MF.LaxCardinality) in g
                for mode in ("events", "background"):
                    if mode == "events" and not any(_holds_triples(d) for d in data):
                        continue  # nothing to give as events (no instant to answer at): the background mode (one tick) runs it
                    out.append(Case(tid, mode, suite, kind, query, data, _path(result) if result else None, lax))
            else:
                action = g.value(test, MF.action)
                query = _path(action)
                if query is None or (kind == "positive" and _named_graphs(query.read_text("utf-8"))):
                    continue
                out.append(Case(tid, "syntax", suite, kind, query))
    return out


def _holds_triples(path: Path) -> bool:
    """Whether a data file holds a triple (an empty one is no stream)."""
    return len(Graph().parse(path, format=rdflib.util.guess_format(str(path)) or "turtle")) > 0


def _kind(g: Graph, test) -> str | None:
    types = set(g.objects(test, RDF.type))
    if types & {MF.PositiveSyntaxTest, MF.PositiveSyntaxTest11}:
        return "positive"
    if types & {MF.NegativeSyntaxTest, MF.NegativeSyntaxTest11}:
        return "negative"
    if MF.QueryEvaluationTest in types:
        return "eval"
    return None  # update, protocol, result-format, ... tests: not query tests


def _withdrawn(g: Graph, test) -> bool:
    return (g.value(test, DAWGT.approval) in (DAWGT.Withdrawn, DAWGT.NotApproved, DAWGT.Rejected)
            or "/".join(str(test).rsplit("/", 2)[-2:]) in CONTRADICTED)


# Tests that the SPARQL 1.1 Recommendation (with RDF 1.1's terms) contradicts
CONTRADICTED = {
    # unapproved, the alternative of a pair: `OPTIONAL { { P FILTER(F) } }`
    # does not merge the inner group into the outer one, so F does not see
    # the outer variables (18.2.2.6; dawg-optional-filter-005-not-simplified
    # runs)
    "optional-filter/manifest#dawg-optional-filter-005-simplified",
    # `456.` was a decimal in SPARQL 1.0; SPARQL 1.1's DECIMAL [147] needs a
    # digit after the point, so `{ :x ?p 456. . }` is 456 and two dots, a
    # syntax error
    "basic/manifest#term-7",
    "syntax-sparql1/manifest#syntax-lit-08",
    # the same: `{ :x ?p 456. }` is the integer 456 (then the dot that ends
    # the triple), and a pattern matches the term "456"^^xsd:integer, not
    # the data's "456."^^xsd:decimal
    "basic/manifest#term-6",
    # DATATYPE("string"@en) was an error in SPARQL 1.0; SPARQL 1.1
    # (17.4.2.7, with RDF 1.1) makes it rdf:langString, so the FILTER keeps
    # the language-tagged literal too
    "expr-builtin/manifest#dawg-datatype-2",
    # SPARQL 1.1 tests written before RDF 1.1, which the suite later
    # replaced with -rdf11 variants: "abc"^^xsd:string is the simple literal
    # "abc" (RDF 1.1; terms here are RDF 1.1's), so STRDT and STRLANG take it
    # where these expect an error
    "functions/manifest#strdt03",
    "functions/manifest#strlang03",
    # the same: the expected order puts 1 between "1" and "1"^^xsd:string,
    # one term in RDF 1.1, which ORDER BY ?x cannot do
    "functions/manifest#plus-1",
    "functions/manifest#plus-2",
    # SPARQL 1.0's: DISTINCT keeps "abc" and "abc"^^xsd:string apart
    "distinct/manifest#distinct-2",
    "distinct/manifest#distinct-9",
}


def _path(node) -> Path | None:
    if node is None:
        return None
    return Path(unquote(urlparse(str(node)).path))


def _applicable_eval(g: Graph, action, query: Path | None) -> bool:
    """In scope (issue 19): SELECT, ASK, CONSTRUCT, DESCRIBE over a default
    graph. Out: named graphs (qt:graphData, FROM, FROM NAMED, GRAPH),
    SERVICE, entailment regimes."""
    out = (QT.graphData, QT.serviceData, SD.entailmentRegime, SD.EntailmentProfile, UT.data)
    if query is None or any(g.value(action, p) is not None for p in out):
        return False
    return not _named_graphs(query.read_text("utf-8"))


_STRINGS = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
                      r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|<[^<>"{}|^`\\\s]*>|#[^\n]*')


def _named_graphs(text: str) -> bool:
    """Whether the query reads a dataset of its own or named graphs: FROM,
    GRAPH, SERVICE (the words, outside strings, IRIs and comments)."""
    bare = _STRINGS.sub(" ", text)
    return re.search(r"(?<![\w:?$])(FROM|GRAPH|SERVICE)(?![\w:])", bare, re.IGNORECASE) is not None


# ------------------------------------------------------------ running


def run_case(case: Case, engine: str = "local") -> Outcome:
    """`engine`: "local" or "spark" (Spark in local mode, in this process;
    a syntax case compiles only, so it is the same on both)."""
    with tempfile.TemporaryDirectory(prefix="cep-w3c-") as tmp:
        tmp = Path(tmp)
        if case.mode == "syntax":
            return _run_syntax(case, tmp)
        try:
            return _run_eval(case, tmp, engine)
        except _Unreadable as exc:
            return Outcome(False, f"runner: {exc}")


class _Unreadable(Exception):
    """A test file the runner cannot use (not the engine's fault)."""


def _cep(argv) -> tuple[int, str, str]:
    """`cep ARGV` in this process: exit status, what it said on stderr and
    what it wrote on standard output."""
    from cep import cli

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = cli.main(argv)
    return rc, err.getvalue(), out.getvalue()


def _error_cause(rc: int, said: str, case: Case) -> str:
    """The class of a failure, from cep's error message: its first line
    without the position, the query's name, times and quoted particulars;
    a parse error by the token it did not expect."""
    if rc == 1:
        lines = [ln for ln in said.splitlines() if ln.strip()]
        return f"internal error: {lines[-1].split(':', 1)[0] if lines else '?'}"
    line = next((ln for ln in said.splitlines() if "error:" in ln), said.strip().splitlines()[0] if said.strip() else "")
    message = line.split("error:", 1)[-1].strip()
    message = re.sub(r"^\S+?:\d+:\d+:\s*", "", message)  # the position
    message = message.replace(case.query.stem, "Q")
    message = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?", "T", message)
    parse = re.match(r"unexpected (?:character )?('.*?'|\S+)", message)
    if parse:
        token = parse.group(1).strip("'")
        token = ("a variable" if token[:1] in "?$" else "a number" if token[:1].isdigit()
                 else token.upper() if token.isalpha() else f"'{token}'")
        return f"parse error: unexpected {token}"
    function = re.match(r"unknown function (\S+?)(/\d+)?:", message)
    if function:
        return f"refused: unknown function {function.group(1)}"
    message = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`|<[^>]*>", "…", message)
    message = re.sub(r"\((?:…|[/|^!])+\)[*+?]?", "…", message)  # a property path
    message = re.split(r";| \(", message, maxsplit=1)[0].strip().rstrip(":,.")
    return f"refused: {message[:100]}"


def _run_syntax(case: Case, tmp: Path) -> Outcome:
    rc, said, _ = _cep(["compile", str(case.query), "-o", str(tmp / "out.pl")])
    if case.kind == "positive":
        if rc == 0:
            return Outcome(True)
        cause = _error_cause(rc, said, case)
        # a call of an extension function cep does not provide is refused
        # (SPARQL 17.6), after every other check of the query: syntax is
        # not at fault
        return Outcome(cause.startswith("refused: unknown function "), cause, said)
    if rc == 2:
        return Outcome(True)
    return Outcome(False, "accepted" if rc == 0 else _error_cause(rc, said, case), said)


def _run_eval(case: Case, tmp: Path, engine: str) -> Outcome:
    query_text = case.query.read_text("utf-8")
    form = _form(query_text)
    if form == "construct":
        # SPARQL's CONSTRUCT answers a graph and adds nothing to the data,
        # where cep feeds its triples back into the stream (rule chaining):
        # a template that its own pattern matches (construct-1, constructwhere)
        # would read what it derives, a cycle that never ends where the
        # template reifies with blank nodes (construct-3, -4) and that a
        # count window cannot feed (the background mode's tick). So the
        # query runs with its triples output only; the BASE keeps its
        # relative IRIs those of the file (the copy lies elsewhere).
        query_text = f"BASE <{case.query.as_uri()}>\n@feedback off\n{query_text}"
    events, rq = tmp / "events.jsonl", tmp / case.query.name
    # the answers on standard output: the Spark engine's --out is a folder
    argv = ["run", "--engine", engine, "-q", "--rejects", str(tmp / "rejects.jsonl")]
    if case.mode == "events":
        with _lexical_forms():
            data = Graph()
            for path in case.data:
                data.parse(path, format=_rdf_format(path), publicID=path.as_uri())
        _write_events(events, data)
        rq.write_text(query_text, "utf-8")
        argv += [str(rq)]
    else:
        try:
            rq.write_text(_with_tick(query_text, form), "utf-8")
        except ValueError as exc:
            raise _Unreadable(f"cannot add the tick: {exc}") from None
        _write_events(events, [(URIRef(TICK),) * 3], stream=TICK)
        argv += [str(rq)] + [a for path in case.data for a in ("--ontology", str(path))]
    rc, said, out = _cep(argv + ["--events", str(events)])
    if rc != 0:
        return Outcome(False, _error_cause(rc, said, case), said)
    rejects = (tmp / "rejects.jsonl").read_text("utf-8")
    if rejects.strip():
        return Outcome(False, "data rejected", rejects[:2000])
    answers = [json.loads(line) for line in out.splitlines() if line]
    if any(a["start"] != answers[0]["start"] or a["end"] != a["start"] for a in answers):
        return Outcome(False, "wrong interval", json.dumps(answers[:5]))
    return _compare(case, form, query_text, answers)


def _rdf_format(path: Path) -> str:
    return {".rdf": "xml", ".nt": "nt"}.get(path.suffix, "turtle")


def _form(text: str) -> str:
    bare = _STRINGS.sub(" ", text)
    found = re.search(r"\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", bare, re.IGNORECASE)
    return found.group(1).lower() if found else "select"


def _with_tick(text: str, form: str) -> str:
    """The query joined with one tick of the stream <TICK>: its WHERE group
    G becomes { { G } GRAPH <TICK> { <TICK> <TICK> <TICK> } }, and the
    stream is named before WHERE (FROM NAMED STREAM)."""
    spans = _groups(text)
    if not spans:
        raise ValueError("no WHERE group")
    tick = f"<{TICK}>"
    if form == "construct":
        bare = _STRINGS.sub(lambda m: " " * len(m.group()), text)
        short = re.search(r"CONSTRUCT\s+WHERE\s*\{", bare, re.IGNORECASE)
        if short is not None:  # CONSTRUCT WHERE { T }: the template T made explicit (SPARQL 1.1, 16.2.4)
            start, end = spans[0]
            text = text[:short.start()] + "CONSTRUCT " + text[start:end] + " WHERE " + text[start:]
            return _with_tick(text, form)
        spans = spans[1:]  # the first group is the template
        if not spans:
            raise ValueError("no WHERE group")
    start, end = spans[0]
    head = text[:start]
    where = re.search(r"\bWHERE\s*$", _STRINGS.sub(lambda m: " " * len(m.group()), head), re.IGNORECASE)
    cut = where.start() if where else start
    return (text[:cut] + f"FROM NAMED STREAM {tick} WINDOW ELEMS 1\n" + text[cut:start]
            + "{ " + text[start:end] + f"\n GRAPH {tick} {{ {tick} {tick} {tick} }} }}" + text[end:])


def _groups(text: str) -> list[tuple[int, int]]:
    """The spans of the top-level { ... } groups of a query, strings, IRIs
    and comments skipped."""
    bare = _STRINGS.sub(lambda m: " " * len(m.group()), text)
    spans, depth, start = [], 0, 0
    for i, ch in enumerate(bare):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def _write_events(path: Path, triples, stream: str | None = None):
    with path.open("w", encoding="utf-8") as out:
        for s, p, o in triples:
            event = {"s": _nt(s), "p": _nt(p), "o": _nt(o), "t": T_MS}
            if stream:
                event["stream"] = f"<{stream}>"
            out.write(json.dumps(event, ensure_ascii=False) + "\n")


def _nt(term) -> str:
    """A term in N-Triples syntax, as written in the data (lexical form kept)."""
    if isinstance(term, URIRef):
        return "<" + "".join(c if c not in '<>"{}|^`\\' and ord(c) > 0x20 else f"\\u{ord(c):04X}" for c in term) + ">"
    if isinstance(term, BNode):
        return f"_:{term}"
    lex = (str(term).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r"))
    if term.language:
        return f'"{lex}"@{term.language}'
    if term.datatype is not None:
        return f'"{lex}"^^<{term.datatype}>'
    return f'"{lex}"'


# ------------------------------------------------------------ comparing


def _term(obj: dict):
    """A term of cep's JSON Lines answers (SPARQL JSON results form) as rdflib's."""
    if obj["type"] == "uri":
        return URIRef(obj["value"])
    if obj["type"] == "bnode":
        return BNode(obj["value"])
    return _literal(obj["value"], obj.get("datatype"), obj.get("xml:lang"))


def _literal(lex, datatype=None, lang=None):
    with _lexical_forms():
        if lang:
            return Literal(lex, lang=lang.lower())
        # RDF 1.1: a simple literal is an xsd:string
        return Literal(lex, datatype=URIRef(datatype or XSD_STRING))


def _canon(term):
    if isinstance(term, Literal):
        return _literal(str(term), term.datatype, term.language)
    return term


def _compare(case: Case, form: str, query_text: str, answers: list) -> Outcome:
    if case.result is None:
        raise _Unreadable("no mf:result")
    if form in ("construct", "describe"):
        got = Graph()
        for a in answers:
            for t in a.get("triples") or ():
                got.add((_term(t["s"]), _term(t["p"]), _term(t["o"])))
        want = Graph()
        with _lexical_forms():
            want.parse(case.result, format=_rdf_format(case.result), publicID=case.result.as_uri())
        want = _canon_graph(want)
        if isomorphic(got, want):
            return Outcome(True)
        return Outcome(False, _wrong(len(got), len(want)), f"got {len(got)} triples, expected {len(want)}:\n"
                       + got.serialize(format="nt")[:1500])
    expected = _expected(case.result)
    if isinstance(expected, bool):
        got = bool(answers)
        return Outcome(True) if got == expected else Outcome(False, "wrong answers", f"ASK gave {got}")
    rows = [{v: _term(t) for v, t in (a.get("bindings") or {}).items()} for a in answers]
    if case.lax and len(_distinct(expected)) <= len(rows) <= len(expected):
        rows, expected = _distinct(rows), _distinct(expected)
    if not _same_multiset(rows, expected):
        return Outcome(False, _wrong(len(rows), len(expected)), f"got {len(rows)} rows, expected {len(expected)}:\n"
                       + "\n".join(" ".join(f"?{v}={t.n3()}" for v, t in sorted(r.items())) for r in rows[:20]))
    keys = _order_keys(query_text)
    if keys and case.result.suffix in (".srx", ".srj"):
        def seq(rs):
            return [tuple(None if isinstance(r.get(k), BNode) else r.get(k) for k in keys) for r in rs]
        if seq(rows) != seq(expected):
            return Outcome(False, "wrong order")
    return Outcome(True)


def _wrong(got: int, want: int) -> str:
    if not got:
        return "wrong answers: none"
    if got == want:
        return "wrong answers: other terms"
    return "wrong answers: too many" if got > want else "wrong answers: too few"


def _canon_graph(g: Graph) -> Graph:
    out = Graph()
    for s, p, o in g:
        out.add((s, p, _canon(o)))
    return out


def _expected(path: Path):
    """An expected result: a bool (ASK) or a list of rows {variable: term}."""
    with _lexical_forms():
        if path.suffix in (".srx", ".srj"):
            from rdflib.query import Result
            with path.open("rb") as f:
                res = Result.parse(f, format="xml" if path.suffix == ".srx" else "json")
            if res.type == "ASK":
                return bool(res.askAnswer)
            return [{str(v): _canon(t) for v, t in b.items() if t is not None} for b in res.bindings]
        g = Graph()
        g.parse(path, format=_rdf_format(path), publicID=path.as_uri())
    rs = next(g.subjects(RDF.type, RS.ResultSet), None)
    if rs is None:
        raise _Unreadable(f"{path.name} is no result set")
    boolean = g.value(rs, RS.boolean)
    if boolean is not None:
        return bool(boolean.toPython())
    rows = []
    for solution in g.objects(rs, RS.solution):
        rows.append({str(g.value(b, RS.variable)): _canon(g.value(b, RS.value))
                     for b in g.objects(solution, RS.binding)})
    return rows


def _same_multiset(got: list, want: list) -> bool:
    if len(got) != len(want):
        return False
    if not any(isinstance(t, BNode) for r in got + want for t in r.values()):
        key = lambda r: frozenset(r.items())  # noqa: E731
        return Counter(map(key, got)) == Counter(map(key, want))
    # blank nodes up to isomorphism: the rows as a graph, a blank node each
    return isomorphic(_rows_graph(got), _rows_graph(want))


def _distinct(rows: list) -> list:
    return list({frozenset(r.items()): r for r in rows}.values())


def _rows_graph(rows: list) -> Graph:
    g = Graph()
    for row in rows:
        node = BNode()
        g.add((node, RDF.type, RS.Solution))
        for var, term in row.items():
            g.add((node, URIRef(f"urn:x-cep-w3c:var:{var}"), term))
    return g


def _order_keys(text: str) -> list[str]:
    """The plain-variable keys of the query's top-level ORDER BY, up to its
    first key that is an expression (the order among its ties is not known)."""
    bare = _STRINGS.sub(" ", text)
    spans = _groups(bare)
    tail = bare[spans[-1][1]:] if spans else ""
    found = re.search(r"ORDER\s+BY(.*?)(LIMIT|OFFSET|$)", tail, re.IGNORECASE | re.DOTALL)
    if found is None:
        return []
    keys = []
    for token in re.findall(r"(?:ASC|DESC)?\s*\(\s*[?$]\w+\s*\)|[?$]\w+|\S+", found.group(1)):
        plain = re.fullmatch(r"(?:(?:ASC|DESC)\s*\(\s*)?[?$](\w+)\s*\)?", token.strip(), re.IGNORECASE)
        if plain is None:
            break
        keys.append(plain.group(1))
    return keys


# ------------------------------------------------------------ known failures


def read_known(path: Path = KNOWN) -> dict[str, str]:
    """known_failures.txt: "MODE ID  # cause" lines under "## cause" headings."""
    known = {}
    if not path.exists():
        return known
    for line in path.read_text("utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        entry, _, cause = line.partition("  # ")
        known[" ".join(entry.split())] = cause.strip()
    return known


def verdict(case: Case, outcome: Outcome, known: dict[str, str]) -> str | None:
    """Why the run fails on this case, or None: a listed case must fail,
    any other must pass."""
    listed = known.get(case.key)
    if listed is not None:
        return None if not outcome.passed else (
            f"{case.key} passes now: remove it from the list (tests/w3c/known_failures.txt; "
            f"it was listed for: {listed})")
    return None if outcome.passed else f"{case.key}: {outcome.cause}\n{outcome.detail[:3000]}"


def write_known(failures: dict[str, str], path: Path = KNOWN):
    by_cause: dict[str, list[str]] = {}
    for key, cause in failures.items():
        by_cause.setdefault(cause, []).append(key)
    lines = ["# W3C SPARQL test cases that fail today, grouped by cause (tests/w3c/run.py derives it).",
             "# The list may only shrink: a listed case that passes fails the run (remove it).",
             "# Regenerate: .venv/bin/python -m tests.w3c.run --update-known", ""]
    for cause in sorted(by_cause, key=lambda c: (-len(by_cause[c]), c)):
        keys = sorted(by_cause[cause])
        lines.append(f"## {cause} ({len(keys)})")
        lines += [f"{key}  # {cause}" for key in keys]
        lines.append("")
    path.write_text("\n".join(lines), "utf-8")


# ------------------------------------------------------------ command


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.w3c.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--update-known", action="store_true", help="rewrite known_failures.txt")
    parser.add_argument("--only", metavar="TEXT", help="the cases whose 'MODE ID' contains TEXT")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each failing case")
    parser.add_argument("--engine", choices=("local", "spark"), default="local",
                        help="the engine that runs the evaluation cases (default local)")
    args = parser.parse_args(argv)
    if args.update_known and (args.only or args.engine != "local"):
        parser.error("--update-known runs every case on the local engine")
    known = read_known()
    totals, passed, causes, failures = Counter(), Counter(), Counter(), {}
    for case in cases():
        if args.only and args.only not in case.key:
            continue
        outcome = run_case(case, args.engine)
        totals[case.category] += 1
        if outcome.passed:
            passed[case.category] += 1
        else:
            failures[case.key] = outcome.cause
            causes[(case.mode, outcome.cause)] += 1
            if args.verbose:
                print(f"FAIL {case.key}: {outcome.cause}\n  {outcome.detail[:500]}", file=sys.stderr)
    for category in sorted(totals):
        print(f"{category:40} {passed[category]:4} / {totals[category]:4}")
    print("\ncauses of failure:")
    for (mode, cause), n in causes.most_common():
        print(f"{n:5}  {mode:10} {cause}")
    if args.update_known:
        write_known(failures)
        print(f"\nwrote {KNOWN.relative_to(HERE.parent.parent)} ({len(failures)} cases)")
    else:
        fixed = sorted(k for k in known if k not in failures and (not args.only or args.only in k))
        new = sorted(k for k in failures if k not in known)
        moved = sorted(k for k in failures if k in known and known[k] != failures[k])
        print(f"\n{len(new)} failing cases not in the list, {len(fixed)} listed cases that pass, "
              f"{len(moved)} listed cases that fail for another cause now")
        for what, keys in (("not listed", new), ("passes, listed", fixed), ("cause changed", moved)):
            for key in keys:
                print(f"  {what}: {key}" + (f"  # {failures[key]}" if key in failures else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
