"""Random and adversarial query text never gives a traceback or a hang
(issue 17): random bytes, token soup, the shipped and golden rule files
mutated, deep nesting and long chains, odd Unicode. Each text is accepted
(parsed, translated, compiled and loaded into SWI-Prolog, as `cep run`
does before the first event) or refused with a QueryError placed in its
file (what `cep` reports with exit status 2).

A failure report shows the text; replay it with CEP_SEED=<seed>, or paste
the @reproduce_failure line that hypothesis prints. CEP_EXAMPLES_SCALE
runs more examples.
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from cep.algebra import query_limits
from cep.compile import compile_queries, explain
from cep.engine import Engine
from cep.errors import QueryError
from cep.rules import load_rules, parse_rules
from tests.property.strategies import examples, note_seed, seeded

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted(p for folder in ("rules", "rules/paper", "tests/golden/rules") for p in (ROOT / folder).glob("*.rq"))
HANG_SECONDS = 300  # CPU seconds: a guard against a hang, far above what any example takes


def _settings(n):
    return settings(max_examples=examples(n), deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


class Hang(BaseException):
    """No answer within HANG_SECONDS (a BaseException: nothing on the way catches it)."""


@contextmanager
def no_hang():
    """Raise Hang once the text has taken HANG_SECONDS of this process's CPU
    time (ITIMER_PROF: user and system, whatever the machine's load; wall
    time on a loaded machine failed examples that took seconds of CPU). A
    hang here is a loop (parsing, compiling, loading into Prolog: nothing
    waits), which spends CPU time."""
    def alarm(signum, frame):
        raise Hang(f"no answer in {HANG_SECONDS} s of CPU time")

    previous = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def test_the_hang_guard_stops_a_loop(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "HANG_SECONDS", 1)
    with pytest.raises(Hang, match="no answer in 1 s of CPU time"), no_hang():
        while True:
            pass


def accepted_or_placed(text: str | None, filename: str, load=None):
    """Run the text (or load the file) as `cep run` does up to the first
    event; a QueryError must be placed in the file, within the text."""
    note(f"text: {text!r}" if text is not None else f"file: {filename}")
    with no_hang():
        try:
            queries = load(filename) if load else parse_rules(text, filename)
            explain(queries)
            Engine(None, compiled=compile_queries(queries))
        except QueryError as exc:
            note(f"refused: {exc}")
            assert exc.pos is not None, f"no place in the file: {exc}"
            assert str(exc).startswith(f"{filename}:{exc.pos.line}:{exc.pos.column}: "), str(exc)
            if text is not None:
                lines = text.removeprefix("\ufeff").split("\n")
                assert 1 <= exc.pos.line <= len(lines), str(exc)
                assert 1 <= exc.pos.column <= len(lines[exc.pos.line - 1]) + 1, str(exc)


# ------------------------------------------------------------ the texts

KEYWORDS = ["PREFIX", "BASE", "SELECT", "CONSTRUCT", "WHERE", "FILTER", "WITHIN", "SEQ", "EQUALS", "OPTIONALSEQ",
            "EQUALSOPTIONAL", "NOTSEQ", "OPTIONAL", "UNION", "GRAPH", "FROM", "STREAM", "NAMED", "REGISTER", "QUERY",
            "AS", "DISTINCT", "GROUP", "BY", "HAVING", "AGGREGATE", "RANGE", "STEP", "TUMBLING", "TRIPLES", "COMPUTED",
            "EVERY", "DELETE", "INSERT", "COUNT", "SUM", "AVG", "MIN", "MAX", "SAMPLE", "IN", "NOT", "a", "true"]
PUNCTUATION = ["{", "}", "(", ")", "[", "]", ".", ";", ",", "^^", "||", "&&", "=", "!=", "<", ">", "<=", ">=", "+",
               "-", "*", "/", "!", "|", "^", "?", "*"]
TERMS = ["?a", "?b", "$c", "?_hoisted0", ":p", ":q", "p", "ex:x", "<http://ex.org/x>", "<x>", "_:b0", "[]", "1",
         "-2.5", "1e9", '"s"', "'t'", '"""long\nstring"""', '"x"@en', '"P1D"', '"PT5M"^^xsd:duration', "10m",
         "PT1H", "500ms", "@policy recent", "@binarize right", "# comment\n", "STR", "REGEX", "COALESCE",
         "getDURATION", "timestamp", "xsd:integer", "BOUND", "IF", "near", '"a(b"', '"\\uD800"', '"\\U00110000"',
         '"\\uD83D\\uDE00"', '"\\q"', "\n"]
ODD = ["\ufeff", "\x00", "\u200b", "\u202e", "\u0301", "\U0001F600", "\ud800", "\udfff", "\uffff", "\x85",
       "\u2028", "\r", "\t", "\x7f", "\\", "'", '"', "<", ">", "#", "@", "$", "?", "é", "𝔸", "ﬁ"]
PROLOGUE = "PREFIX : <http://example.org/>\nPREFIX ex: <http://example.org/>\n" \
           "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"

tokens = st.sampled_from(KEYWORDS + PUNCTUATION + TERMS + ODD)
token_soup = st.lists(tokens, max_size=60).map(" ".join)


@st.composite
def mutated(draw):
    """A shipped or golden rule file, mutated a few times: a span deleted,
    repeated or moved, a token or an odd character put in, the end cut."""
    path = draw(st.sampled_from(CORPUS))
    text = path.read_text(encoding="utf-8")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 40)))
        kind = draw(st.sampled_from(["delete", "repeat", "insert", "odd", "cut", "move"]))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "repeat":
            text = text[:j] + text[i:j] * draw(st.integers(2, 50)) + text[j:]
        elif kind == "insert":
            text = text[:i] + " " + draw(tokens) + " " + text[i:]
        elif kind == "odd":
            text = text[:i] + draw(st.sampled_from(ODD)) + text[i:]
        elif kind == "cut":
            text = text[:i]
        else:
            k = draw(st.integers(0, len(text) - (j - i)))
            rest = text[:i] + text[j:]
            text = rest[:k] + text[i:j] + rest[k:]
    return str(path), text


@st.composite
def deep(draw):
    """Nesting and chains around the depth limit, in every form that nests."""
    n = draw(st.one_of(st.integers(1, 50), st.integers(query_limits.MAX_DEPTH - 20, query_limits.MAX_DEPTH + 20)))
    form = draw(st.sampled_from(["braces", "bangs", "parens", "plus", "calls", "seq", "optional", "bnodes",
                                 "paths", "or", "triples", "filters", "mixed", "if"]))
    body = {
        "braces": lambda: "SELECT ?a WHERE " + "{" * n + " ?a :p ?b " + "}" * n,
        "bangs": lambda: "SELECT ?a WHERE { ?a :p ?b FILTER(" + "!" * n + "?b) }",
        "parens": lambda: "SELECT ?a WHERE { ?a :p ?b FILTER(" + "(" * n + "?b" + ")" * n + ") }",
        "plus": lambda: "SELECT ?a WHERE { ?a :p ?b FILTER(?b" + " + 1" * n + " > 0) }",
        "calls": lambda: "SELECT ?a WHERE { ?a :p ?b FILTER(" + "STR(" * n + "?b" + ")" * n + ") }",
        "seq": lambda: "SELECT ?a WHERE " + " SEQ ".join("{ ?a :p ?b }" for _ in range(n)),
        "optional": lambda: "SELECT * WHERE { ?a :p ?b " + "OPTIONAL { ?a :p ?b " * n + "}" * n + " }",
        "bnodes": lambda: "SELECT * WHERE { ?a :p " + "[ :p " * n + "?b" + " ]" * n + " }",
        "paths": lambda: "SELECT * WHERE { ?a " + "(" * n + ":p" + "/:p)" * n + " ?b }",
        "or": lambda: "SELECT ?a WHERE { ?a :p ?b FILTER(" + " || ".join(f"?b = {i}" for i in range(n)) + ") }",
        "triples": lambda: "SELECT ?a WHERE { " + " . ".join("?a :p ?b" for _ in range(n)) + " }",
        "filters": lambda: "SELECT ?a WHERE { ?a :p ?b " + "FILTER(?b > 0) " * n + "}",
        "mixed": lambda: "SELECT ?a WHERE { ?a :p ?b }" + "".join(
            draw(st.sampled_from([" SEQ", " EQUALS", " UNION", " OPTIONALSEQ"])) + " { ?a :p ?b }" for _ in range(n)),
        "if": lambda: "SELECT ?a WHERE { ?a :p ?b FILTER(" + "IF(?b > 0, " * n + "true" + ", false)" * n + ") }",
    }[form]()
    return PROLOGUE + body


odd_unicode = st.text(st.characters(blacklist_categories=()), max_size=200)

# values in the places the grammar gives them: strings with every kind of
# escape, numbers, durations, time spans, regular expressions
hex_digits = st.text("0123456789abcdefABCDEF", min_size=1, max_size=8)
string_pieces = st.one_of(
    st.text(st.characters(blacklist_characters='"\\\n\r', blacklist_categories=()), max_size=5),
    hex_digits.map(lambda h: "\\u" + h.rjust(4, "0")[:4]),
    hex_digits.map(lambda h: "\\U" + h.rjust(8, "0")),
    st.sampled_from(["\\t", "\\n", '\\"', "\\\\", "\\q", "\\uD83D\\uDE00", "\\uDE00\\uD83D"]))
strings = st.lists(string_pieces, max_size=5).map(lambda parts: '"' + "".join(parts) + '"')
numbers = st.one_of(st.integers(-10**30, 10**30).map(str),
                    st.tuples(st.integers(0, 10**6), st.integers(-10**6, 10**6)).map(lambda t: f"{t[0]}e{t[1]}"),
                    st.decimals(allow_nan=False, allow_infinity=False).map(str))
digits = st.integers(0, 10**25).map(str)
durations = st.one_of(
    st.tuples(digits, st.sampled_from("YMDWHS")).map(lambda t: f'"P{t[0]}{t[1]}"'),
    st.tuples(digits, st.sampled_from("HMS")).map(lambda t: f'"PT{t[0]}{t[1]}"'),
    strings)
spans = st.one_of(st.tuples(digits, st.sampled_from(["ms", "s", "m", "h", "d"])).map("".join),
                  digits.map(lambda d: f"P{d}D"), digits.map(lambda d: f"PT{d}S"))
regexes = st.text("ab()[]{}*+?|^$\\.-pLu,0123456789", max_size=12).map(lambda r: '"' + r.replace('"', "") + '"')
flags = st.text("imsxqz", max_size=3).map(lambda f: f'"{f}"')
literals = st.one_of(strings, numbers, durations.map(lambda d: d + "^^xsd:duration"),
                     strings.map(lambda t: t + "^^xsd:dateTime"), strings.map(lambda t: t + "@en"),
                     strings.map(lambda t: t + "^^xsd:integer"))
names = st.text(st.characters(whitelist_categories=("Lu", "Ll", "Nd", "Pc")), min_size=1, max_size=10)
TEMPLATES = [
    "SELECT ?a WHERE {{ ?a :p {lit} }}",
    "SELECT ?a WHERE {{ ?a :p ?b FILTER(?b {op} {lit}) }}",
    "SELECT ?a WHERE {{ ?a :p ?b FILTER(REGEX(STR(?b), {regex}, {flags})) }}",
    "SELECT ?a WHERE {{ ?a :p ?b }} SEQ {{ ?a :q ?c }} WITHIN {duration}",
    "SELECT ?a WHERE {{ {{ ?a :p ?b }} NOTSEQ {duration} {{ ?a :q ?c }} }}",
    "SELECT (COUNT(*) AS ?n) FROM STREAM <http://example.org/s> [RANGE {span} STEP {span2}] WHERE {{ ?a :p ?b }}",
    "REGISTER QUERY q COMPUTED EVERY {span} AS SELECT ?a FROM STREAM <http://example.org/s> [RANGE {span2} TUMBLING] "
    "WHERE {{ ?a :p ?b }}",
    "SELECT ?a (COALESCE(?x, {lit}) AS ?c) WHERE {{ ?a :p ?b FILTER(getDURATION() {op} {duration}^^xsd:duration) }}",
    "CONSTRUCT {{ ?a :q {lit} . ?a :r [ :s ?b ] }} WHERE {{ ?a :p ?b }}",
    "SELECT ?a WHERE {{ ?a :p ?b FILTER(?b IN ({lit}, {lit2}) || xsd:dateTime({lit}) > ?b) }}",
    "SELECT ?{name} ?{name2} WHERE {{ ?{name} :p ?{name2} }} SEQ {{ ?{name} :p ?c }} FILTER(?c < ?{name2} * {lit})",
    "SELECT ?a (COUNT(*) AS ?n) FROM STREAM <http://example.org/s> [TRIPLES {number}] WHERE {{ ?a :p ?b }} GROUP BY ?a",
]


@st.composite
def templated(draw):
    """A query whose shape is valid, with drawn values where they go."""
    template = draw(st.sampled_from(TEMPLATES))
    return PROLOGUE + template.format(
        lit=draw(literals), lit2=draw(literals), op=draw(st.sampled_from(["<", "<=", ">", "=", "!="])),
        regex=draw(regexes), flags=draw(flags), duration=draw(durations), span=draw(spans), span2=draw(spans),
        name=draw(names), name2=draw(names), number=draw(digits))


# ------------------------------------------------------------- the tests


@seeded
@_settings(1000)
@given(token_soup)
def test_token_soup(text):
    note_seed()
    accepted_or_placed(PROLOGUE + text, "soup.rq")


@seeded
@_settings(1500)
@given(templated())
def test_values_in_their_places(text):
    note_seed()
    accepted_or_placed(text, "values.rq")


@seeded
@_settings(1000)
@given(mutated())
def test_mutated_rule_files(case):
    note_seed()
    filename, text = case  # the original's name: FROM paths resolve beside it
    accepted_or_placed(text, filename)


@seeded
@_settings(60)
@given(deep())
def test_deep_nesting_and_long_chains(text):
    note_seed()
    accepted_or_placed(text, "deep.rq")


@seeded
@_settings(500)
@given(odd_unicode)
def test_odd_unicode(text):
    note_seed()
    accepted_or_placed(PROLOGUE + "SELECT ?a WHERE { ?a :p " + text, "odd.rq")
    accepted_or_placed(text, "odd.rq")


@seeded
@_settings(500)
@given(st.binary(max_size=400), st.sampled_from([b"", b"\xef\xbb\xbf", PROLOGUE.encode()]))
def test_random_bytes_in_a_rule_file(tmp_path_factory, data, start):
    path = tmp_path_factory.mktemp("bytes") / "bytes.rq"
    path.write_bytes(start + data)
    accepted_or_placed(None, str(path), load=load_rules)
