"""RDF terms as canonical N-Triples text, and their Prolog encoding.

Inside the engine an RDF term travels as its N-Triples text in canonical form
(so equal terms are equal strings), and inside Prolog as a compact term:

    IRI                     'http://...'            (atom)
    blank node  _:b1        bn('b1')
    "abc" / xsd:string      "abc"                   (SWI string)
    "abc"@en                lang("abc", en)
    xsd:integer             123                     (integer)
    xsd:decimal             dec(3r2)                (exact rational)
    xsd:double              1.5                     (float)
    xsd:boolean             bool(true)
    xsd:dateTime            dt(EpochMillis)         (UTC)
    xsd:duration            dur(Months, Millis)
    any other datatype      l("lexical", 'datatype IRI')

Canonical forms: integers without leading zeros, decimals with at least one
fractional digit, doubles as shortest mantissa `E` exponent, booleans
`true`/`false`, dateTimes in UTC with `Z` (a value without a time zone is read
as UTC), durations with zero parts left out. prolog/cep_values.pl writes the
same canonical text back, so a term survives the round trip unchanged.
"""

from __future__ import annotations

import datetime as _dt
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache

from cep import prolog as pl

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD_STRING = XSD + "string"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_DOUBLE = XSD + "double"
XSD_BOOLEAN = XSD + "boolean"
XSD_DATETIME = XSD + "dateTime"
XSD_DURATION = XSD + "duration"
RDF_LANGSTRING = RDF + "langString"

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class TermError(ValueError):
    """An RDF term that is not well-formed N-Triples."""


_IRI_RE = re.compile(r'<([^<>"{}|^`\\\x00-\x20]*)>\Z')
_IRI_ESC_RE = re.compile(r"<((?:[^<>\"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*)>\Z")
_BNODE_RE = re.compile(r"_:([A-Za-z0-9_][A-Za-z0-9_.\-]*)\Z")
_LIT_RE = re.compile(
    r'"((?:[^"\\\n\r]|\\.)*)"'
    r"(?:\^\^<([^<>\"{}|^`\\\x00-\x20]*)>|@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*))?\Z",
    re.S,
)
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_UNESC_RE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)


def _unescape(text: str) -> str:
    def repl(m):
        code = m.group(1)
        if code[0] in "uU" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code in _ESCAPES:
            return _ESCAPES[code]
        raise TermError(f"unknown escape \\{code}")

    return _UNESC_RE.sub(repl, text)


def escape_literal(text: str) -> str:
    """N-Triples escaping of a literal's lexical form. Besides backslash, quote,
    newline and carriage return, tab and every other control character are
    escaped too (as backslash-t and backslash-u00XX), so
    canonical term text never holds a raw control character: answers can
    travel as tab-separated lines."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append("\\u%04X" % code)
        else:
            out.append(ch)
    return "".join(out)


# ---------------------------------------------------------------- parsing


def split(nt: str):
    """('iri', iri) | ('bnode', label) | ('literal', lexical, datatype, lang)."""
    nt = nt.strip()
    if nt.startswith("<"):
        m = _IRI_RE.match(nt)
        if m:
            return ("iri", m.group(1))
        m = _IRI_ESC_RE.match(nt)
        if m:
            return ("iri", _unescape(m.group(1)))
        raise TermError(f"malformed IRI {nt[:80]!r}")
    if nt.startswith("_:"):
        m = _BNODE_RE.match(nt)
        if not m:
            raise TermError(f"malformed blank node {nt[:80]!r}")
        return ("bnode", m.group(1))
    if nt.startswith('"'):
        m = _LIT_RE.match(nt)
        if not m:
            raise TermError(f"malformed literal {nt[:80]!r}")
        lex = _unescape(m.group(1))
        if m.group(3):
            return ("literal", lex, RDF_LANGSTRING, m.group(3).lower())
        return ("literal", lex, m.group(2) or XSD_STRING, None)
    raise TermError(f"not an N-Triples term: {nt[:80]!r}")


_IRI_FORBIDDEN = re.compile(r'[<>"{}|^`\\\x00-\x20]')


def iri(value: str) -> str:
    """N-Triples text of an IRI; characters IRIREF does not allow are written
    as \\uXXXX escapes, so the text always reads back as the same IRI."""
    if _IRI_FORBIDDEN.search(value):
        value = _IRI_FORBIDDEN.sub(lambda m: "\\u%04X" % ord(m.group()), value)
    return "<" + value + ">"


RDF_TYPE = iri(RDF + "type")


def literal(lex: str, datatype: str | None = None, lang: str | None = None) -> str:
    body = '"' + escape_literal(lex) + '"'
    if lang:
        return body + "@" + lang.lower()
    if datatype and datatype != XSD_STRING:
        return body + "^^<" + datatype + ">"
    return body


# ------------------------------------------------------ canonical values


def parse_datetime_ms(lex: str) -> int:
    """xsd:dateTime lexical form -> epoch milliseconds (no zone = UTC)."""
    text = lex.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    m = re.match(r"(-?[0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
                 r"([+-][0-9]{2}:[0-9]{2})?\Z", text)
    if not m:
        raise TermError(f"malformed xsd:dateTime {lex!r}")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7) or ""
    millis = int((frac[1:] + "000")[:3]) if frac else 0
    extra_day = 0
    if hour == 24 and minute == 0 and second == 0 and millis == 0:
        hour, extra_day = 0, 1
    try:
        value = _dt.datetime(year, month, day, hour, minute, second, tzinfo=_dt.timezone.utc)
    except ValueError as exc:
        raise TermError(f"malformed xsd:dateTime {lex!r}: {exc}") from None
    ms = int((value - _EPOCH).total_seconds()) * 1000 + millis + extra_day * 86_400_000
    if m.group(8):
        sign = 1 if m.group(8)[0] == "+" else -1
        hh, mm = int(m.group(8)[1:3]), int(m.group(8)[4:6])
        ms -= sign * (hh * 60 + mm) * 60_000
    return ms


def format_datetime_ms(ms: int) -> str:
    """ISO 8601 in UTC, with milliseconds only where there are any."""
    seconds, millis = divmod(ms, 1000)
    text = _second_text(seconds)
    if millis:
        text += (".%03d" % millis).rstrip("0")
    return text + "Z"


@lru_cache(maxsize=4096)  # answers come in time order: neighbours share their second
def _second_text(seconds: int) -> str:
    v = _EPOCH + _dt.timedelta(seconds=seconds)
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}"


_DUR_RE = re.compile(
    r"(-)?P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?\Z"
)


def parse_duration(lex: str) -> tuple[int, int]:
    """xsd:duration lexical form -> (months, milliseconds)."""
    text = lex.strip()
    m = _DUR_RE.match(text)
    if not m or text in ("P", "-P") or text.endswith("T"):
        raise TermError(f"malformed xsd:duration {lex!r}")
    sign = -1 if m.group(1) else 1
    years, months, days, hours, minutes = (int(m.group(i) or 0) for i in range(2, 7))
    seconds = Decimal(m.group(7) or "0")
    ms = ((days * 24 + hours) * 60 + minutes) * 60_000 + int(seconds * 1000)
    return sign * (years * 12 + months), sign * ms


def format_duration(months: int, ms: int) -> str:
    if months == 0 and ms == 0:
        return "PT0S"
    neg = months < 0 or ms < 0
    months, ms = abs(months), abs(ms)
    out = "-P" if neg else "P"
    years, months = divmod(months, 12)
    if years:
        out += f"{years}Y"
    if months:
        out += f"{months}M"
    days, rest = divmod(ms, 86_400_000)
    if days:
        out += f"{days}D"
    if rest:
        out += "T"
        hours, rest = divmod(rest, 3_600_000)
        minutes, rest = divmod(rest, 60_000)
        if hours:
            out += f"{hours}H"
        if minutes:
            out += f"{minutes}M"
        if rest:
            secs, millis = divmod(rest, 1000)
            out += f"{secs}S" if not millis else (f"{secs}.{millis:03d}".rstrip("0") + "S")
    return out


def format_double(x: float) -> str:
    """XSD canonical double: shortest round-trip digits as mantissa E exponent."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "INF" if x > 0 else "-INF"
    sign = "-" if str(x).startswith("-") else ""
    if x == 0:
        return sign + "0.0E0"
    d = Decimal(repr(abs(x)))
    digits = "".join(map(str, d.as_tuple().digits)).rstrip("0") or "0"
    return sign + digits[0] + "." + (digits[1:] or "0") + "E" + str(d.adjusted())


DECIMAL_DIVISION_DIGITS = 20  # decimal division rounds half away from zero to this many places


def format_decimal(value) -> str:
    """XSD canonical decimal of a terminating value: at least one fractional digit."""
    frac = Fraction(value)
    num, den = frac.numerator, frac.denominator
    places = 0
    while (10 ** places) % den:
        places += 1
        if places > 60:
            raise ValueError(f"{frac} has no terminating decimal form")
    scaled = abs(num) * (10 ** places) // den
    digits = str(scaled).rjust(places + 1, "0")
    whole, fraction = digits[: len(digits) - places], digits[len(digits) - places:]
    fraction = fraction.rstrip("0") or "0"
    return ("-" if num < 0 else "") + whole + "." + fraction


_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_DEC_RE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\Z")
_DBL_RE = re.compile(r"[+-]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|INF)\Z|NaN\Z")


@lru_cache(maxsize=65536)
def canonical(nt: str) -> str:
    """The canonical N-Triples text of a term; raises TermError when malformed."""
    parts = split(nt)
    if parts[0] == "iri":
        return iri(parts[1])
    if parts[0] == "bnode":
        return "_:" + parts[1]
    _, lex, dt, lang = parts
    if lang:
        return literal(lex, lang=lang)
    return literal(canonical_lexical(lex, dt), dt)


def canonical_lexical(lex: str, dt: str) -> str:
    """Canonical lexical form for the datatypes the engine computes with; an
    ill-typed lexical form is kept as it is (SPARQL keeps such literals)."""
    s = lex.strip()
    if dt == XSD_INTEGER and _INT_RE.match(s):
        return str(int(s))
    if dt == XSD_DECIMAL and _DEC_RE.match(s):
        return format_decimal(Fraction(Decimal(s)))
    if dt == XSD_DOUBLE and _DBL_RE.match(s):
        return format_double(float(s))
    if dt == XSD_BOOLEAN and s in ("true", "false", "1", "0"):
        return "true" if s in ("true", "1") else "false"
    if dt == XSD_DATETIME:
        try:
            return format_datetime_ms(parse_datetime_ms(s))
        except TermError:
            return lex
    if dt == XSD_DURATION:
        try:
            return format_duration(*parse_duration(s))
        except TermError:
            return lex
    return lex


# ------------------------------------------------------- Prolog encoding


def to_prolog(nt: str) -> pl.Term:
    """The Prolog term of an N-Triples term (see the module docstring)."""
    parts = split(nt)
    if parts[0] == "iri":
        return pl.Atom(parts[1])
    if parts[0] == "bnode":
        return pl.Struct("bn", pl.Atom(parts[1]))
    _, lex, dt, lang = parts
    if lang:
        return pl.Struct("lang", pl.Str(lex), pl.Atom(lang.lower()))
    if dt == XSD_STRING:
        return pl.Str(lex)
    s = lex.strip()
    if dt == XSD_INTEGER and _INT_RE.match(s):
        return int(s)
    if dt == XSD_DECIMAL and _DEC_RE.match(s):
        return pl.Struct("dec", Fraction(Decimal(s)))
    if dt == XSD_DOUBLE and _DBL_RE.match(s):
        return float(s.replace("INF", "inf")) if s != "NaN" else float("nan")
    if dt == XSD_BOOLEAN and s in ("true", "false", "1", "0"):
        return pl.Struct("bool", pl.Atom("true" if s in ("true", "1") else "false"))
    if dt == XSD_DATETIME:
        try:
            return pl.Struct("dt", parse_datetime_ms(s))
        except TermError:
            pass
    if dt == XSD_DURATION:
        try:
            months, ms = parse_duration(s)
            return pl.Struct("dur", months, ms)
        except TermError:
            pass
    return pl.Struct("l", pl.Str(lex), pl.Atom(dt))


@lru_cache(maxsize=262144)
def prolog_text(nt: str) -> str:
    """`to_prolog` written as text, cached: event batches repeat their terms."""
    return pl.write(to_prolog(nt))


# ------------------------------------------------------------ outputs


def to_json(nt: str) -> dict:
    """The W3C SPARQL 1.1 Query Results JSON form of a term."""
    return dict(_to_json(nt))


@lru_cache(maxsize=65536)  # answers repeat their terms (to_json hands out copies)
def _to_json(nt: str) -> dict:
    parts = split(nt)
    if parts[0] == "iri":
        return {"type": "uri", "value": parts[1]}
    if parts[0] == "bnode":
        return {"type": "bnode", "value": parts[1]}
    _, lex, dt, lang = parts
    if lang:
        return {"type": "literal", "value": lex, "xml:lang": lang}
    if dt == XSD_STRING:
        return {"type": "literal", "value": lex}
    return {"type": "literal", "value": lex, "datatype": dt}


def from_json(obj: dict) -> str:
    kind = obj.get("type")
    if kind == "uri":
        return iri(obj["value"])
    if kind == "bnode":
        return "_:" + obj["value"]
    if kind in ("literal", "typed-literal"):
        return canonical(literal(obj["value"], obj.get("datatype"), obj.get("xml:lang")))
    raise TermError(f"not a SPARQL JSON term: {obj!r}")


def from_rdflib(term) -> str:
    """Canonical N-Triples text of an rdflib term."""
    from rdflib import BNode, Literal, URIRef

    if isinstance(term, URIRef):
        return iri(str(term))
    if isinstance(term, BNode):
        return "_:" + str(term)
    if isinstance(term, Literal):
        dt = str(term.datatype) if term.datatype else None
        return canonical(literal(str(term), dt, term.language))
    raise TermError(f"not an RDF term: {term!r}")


def datetime_literal(ms: int) -> str:
    return literal(format_datetime_ms(ms), XSD_DATETIME)
