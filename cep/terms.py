"""RDF terms as N-Triples text, and their Prolog encoding.

Inside the engine an RDF term travels as its canonical N-Triples text (RDF
1.1 N-Triples, section 4: no escape where none is needed, no xsd:string
datatype written; language tags in lower case, as they compare without
case), so that equal terms are equal strings. A literal keeps its lexical
form exactly as written: "01"^^xsd:integer and "1"^^xsd:integer are two
terms (RDF 1.1 term equality) with one value. Inside Prolog a term is a
compact term:

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
    another lexical form    lv("01", 'datatype IRI', Value)  (of the six above)
    any other literal       l("lexical", 'datatype IRI')

A literal of the six datatypes with a value encoding is that value when its
lexical form is the canonical one (canonical_lexical: integers without
leading zeros or sign +, decimals with at least one fractional digit,
doubles as shortest mantissa `E` exponent, booleans `true`/`false`,
dateTimes in UTC with `Z`, durations with zero parts left out). Another
valid form ("01"^^xsd:integer, "1.50"^^xsd:decimal) is another term of the
same value: lv/3 keeps its text and its value (read once, not at each
comparison). An ill-typed one ("abc"^^xsd:integer) is l/2, as is every
literal of another datatype. prolog/cep_values.pl writes a value's
canonical lexical form back, and an lv/3 or l/2 term's text, so every term
survives the round trip unchanged; its value predicates compare and compute
with the value of an lv/3 term where SPARQL works by value.
"""

from __future__ import annotations

import functools
import logging
import re
import warnings
from contextlib import contextmanager
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

class TermError(ValueError):
    """An RDF term that is not well-formed N-Triples."""


_IRI_RE = re.compile(r'<([^<>"{}|^`\\\x00-\x20]*)>\Z')
_IRI_ESC_RE = re.compile(r"<((?:[^<>\"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*)>\Z")
_BNODE_RE = re.compile(r"_:([A-Za-z0-9_][A-Za-z0-9_.\-]*)\Z")
_LIT_RE = re.compile(
    r'"([^"\\\n\r]*+(?:\\.[^"\\\n\r]*+)*+)"'
    r"(?:\^\^<([^<>\"{}|^`\\\x00-\x20]*)>|@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*))?\Z",
    re.S,
)
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_UNESC_RE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)


def _unescape(text: str) -> str:
    def repl(m):
        code = m.group(1)
        if code[0] in "uU" and len(code) > 1:
            value = int(code[1:], 16)
            if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:  # a text of it cannot be written as UTF-8
                raise TermError(f"\\{code} is not a Unicode character "
                                f"({'a surrogate' if value <= 0xDFFF else 'past U+10FFFF'})")
            return chr(value)
        if code in _ESCAPES:
            return _ESCAPES[code]
        raise TermError(f"unknown escape \\{code}")

    return _UNESC_RE.sub(repl, text) if "\\" in text else text


_LITERAL_NAMED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_LITERAL_ESCAPED = re.compile(r'[\\"\x00-\x1f\x7f]')


def escape_literal(text: str) -> str:
    """N-Triples escaping of a literal's lexical form. Besides backslash, quote,
    newline and carriage return, tab and every other control character are
    escaped too (as backslash-t and backslash-u00XX), so
    canonical term text never holds a raw control character: answers can
    travel as tab-separated lines."""
    if _LITERAL_ESCAPED.search(text) is None:  # most text, and a long one costs one scan
        return text
    return _LITERAL_ESCAPED.sub(lambda m: _LITERAL_NAMED.get(m.group()) or "\\u%04X" % ord(m.group()), text)


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


_DATETIME_RE = re.compile(r"(-?(?:[1-9][0-9]{4,}|[0-9]{4}))-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
                          r"(\.[0-9]+)?([+-][0-9]{2}:[0-9]{2})?\Z")
_YEAR_DIGITS = 12  # past this a year is not computed with (its value could not be a time anyway)


def parse_datetime_ms(lex: str) -> int:
    """xsd:dateTime lexical form -> epoch milliseconds (no zone = UTC; the
    fraction truncated to milliseconds; 24:00:00 is the next midnight).
    Years outside 1..9999 are read as XSD 1.1 has them (0000 is 1 BCE), as
    prolog/cep_values.pl reads them: what an event's time may be is
    cep.io.check's concern."""
    text = lex.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    m = _DATETIME_RE.match(text)
    if not m or len(m.group(1).lstrip("-")) > _YEAR_DIGITS:
        raise TermError(f"malformed xsd:dateTime {lex[:80]!r}")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7) or ""
    millis = int((frac[1:] + "000")[:3]) if frac else 0
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month) and minute < 60 and second < 60
            and (hour < 24 or hour == 24 and minute == second == millis == 0)):
        raise TermError(f"malformed xsd:dateTime {lex[:80]!r}: no such date or time of day")
    ms = (_days_from_civil(year, month, day) * 86_400 + (hour * 60 + minute) * 60 + second) * 1000 + millis
    if m.group(8):
        sign = 1 if m.group(8)[0] == "+" else -1
        hh, mm = int(m.group(8)[1:3]), int(m.group(8)[4:6])
        if hh > 14 or mm > 59 or hh == 14 and mm:
            raise TermError(f"malformed xsd:dateTime {lex[:80]!r}: a time zone is at most 14:00")
        ms -= sign * (hh * 60 + mm) * 60_000
    return ms


_ZONE_RE = re.compile(r"(Z|[+-][0-9]{2}:[0-9]{2})\Z")


def datetime_zone(lex: str) -> tuple[str, int] | None:
    """The time zone of a valid xsd:dateTime lexical form as written, as
    (text, offset in minutes): ("Z", 0), ("-05:00", -300); None where it
    has none (datetime_zone/2 in prolog/cep_values_dates.pl)."""
    m = _ZONE_RE.search(lex.strip())
    if m is None:
        return None
    text = m.group(1)
    if text == "Z":
        return text, 0
    return text, (1 if text[0] == "+" else -1) * (int(text[1:3]) * 60 + int(text[4:6]))


def format_datetime_ms(ms: int) -> str:
    """ISO 8601 in UTC, with milliseconds only where there are any. Any
    time can be written: a year past 9999 takes more digits, one before 1
    is 0000 (1 BCE) or negative, as XSD 1.1 writes them (a NOTSEQ deadline
    or a window may reach past the times events may have)."""
    seconds, millis = divmod(ms, 1000)
    text = _second_text(seconds)
    if millis:
        text += (".%03d" % millis).rstrip("0")
    return text + "Z"


@lru_cache(maxsize=4096)  # answers come in time order: neighbours share their second
def _second_text(seconds: int) -> str:
    days, rest = divmod(seconds, 86_400)
    year, month, day = _civil_from_days(days)
    year_text = f"{year:04d}" if year >= 0 else f"-{-year:04d}"
    return f"{year_text}-{month:02d}-{day:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"


# The proleptic Gregorian calendar in integer arithmetic, valid for every
# year (H. Hinnant, "chrono-compatible low-level date algorithms"), as in
# prolog/cep_values.pl: days since 1970-01-01.

def _days_from_civil(year: int, month: int, day: int) -> int:
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


_DUR_RE = re.compile(
    r"(-)?P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?\Z"
)


def parse_duration(lex: str) -> tuple[int, int]:
    """xsd:duration lexical form -> (months, milliseconds)."""
    text = lex.strip()
    m = _DUR_RE.match(text) if len(text) <= MAX_NUMBER_DIGITS else None
    if not m or text in ("P", "-P") or text.endswith("T"):
        raise TermError(f"malformed xsd:duration {lex[:80]!r}")
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


# Numbers the engine computes with have at most this many digits: Python
# reads longer ones in quadratic time (and refuses past 4,300 digits); a
# longer lexical form is kept as it is (cep.terms.checked refuses it in input)
MAX_NUMBER_DIGITS = 4000
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_DEC_RE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\Z")
_DBL_RE = re.compile(r"[+-]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|INF)\Z|NaN\Z")


def _term_cache(maxsize: int):
    """lru_cache for functions of a term's text, but for long terms (over
    4,096 characters), computed each time: a few of those, up to
    MAX_TERM_BYTES each, would fill memory if kept."""
    def decorate(function):
        cached = lru_cache(maxsize=maxsize)(function)

        @functools.wraps(function)
        def call(nt: str):
            return cached(nt) if len(nt) <= 4096 else function(nt)

        call.cache_info, call.cache_clear = cached.cache_info, cached.cache_clear
        return call
    return decorate


@_term_cache(maxsize=65536)
def canonical(nt: str) -> str:
    """The canonical N-Triples text of a term; raises TermError when malformed.
    A literal's lexical form is kept as written."""
    parts = split(nt)
    if parts[0] == "iri":
        return iri(parts[1])
    if parts[0] == "bnode":
        return "_:" + parts[1]
    _, lex, dt, lang = parts
    return literal(lex, dt, lang)


def canonical_lexical(lex: str, dt: str) -> str | None:
    """The canonical lexical form of the value of `lex`, for the datatypes
    with a value encoding (see the module docstring); None for an ill-typed
    lexical form (which SPARQL keeps as a term) and another datatype."""
    s = lex.strip()
    if len(s) > MAX_NUMBER_DIGITS:
        return None
    if dt == XSD_INTEGER and _INT_RE.match(s):
        return str(int(s))
    if dt == XSD_DECIMAL and _DEC_RE.match(s):  # format_decimal's form, by text: any number of places
        whole, _, fraction = s.lstrip("+-").partition(".")
        whole, fraction = whole.lstrip("0") or "0", fraction.rstrip("0") or "0"
        return ("-" if s.startswith("-") and (whole, fraction) != ("0", "0") else "") + whole + "." + fraction
    if dt == XSD_DOUBLE and _DBL_RE.match(s):
        return format_double(float(s))
    if dt == XSD_BOOLEAN and s in ("true", "false", "1", "0"):
        return "true" if s in ("true", "1") else "false"
    try:
        if dt == XSD_DATETIME:
            return format_datetime_ms(parse_datetime_ms(s))
        if dt == XSD_DURATION:
            return format_duration(*parse_duration(s))
    except TermError:
        pass
    return None


# ------------------------------------------------------ terms read from input

MAX_TERM_BYTES = 16 * 1024 * 1024
# The longest term a reader takes, as N-Triples text in UTF-8 (as read and
# in canonical form). A term travels as one string through every stage
# (canonical text, the Prolog term, the answer's line and its JSON, CSV or
# TriG): 16 MiB keeps one record's copies to a few hundred MB, and an Arrow
# column of a batch well under its 2 GiB. Change it here.

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SURROGATE = re.compile("[\ud800-\udfff]")
_RAW_FORBIDDEN = re.compile(r'[<>"{}|^`\x00-\x20]')  # what IRIs forbid, but the backslash of escapes
_CHAR_NAMES = {" ": "a space", '"': "a quote", "\\": "a backslash"}


def absolute_iri(value: str) -> str:
    """The N-Triples text <value> of an IRI read from input; TermError when
    it is relative (it needs a scheme, like http:) or holds a character
    that IRIs forbid (RDF 1.1 N-Triples: space, <>"{}|^`\\ and controls),
    however it was written."""
    bad = _IRI_FORBIDDEN.search(value)
    if bad is not None:
        ch = bad.group()
        name = _CHAR_NAMES.get(ch) or (f"the control character U+{ord(ch):04X}" if ord(ch) < 0x20 else repr(ch))
        raise TermError(f"an IRI cannot hold {name}: {_shown_iri(value)}")
    if not _SCHEME.match(value):
        raise TermError(f"relative IRI {_shown_iri(value)}: an IRI must be absolute here "
                        "(start with a scheme such as http:)")
    return "<" + value + ">"


def _shown_iri(value: str) -> str:
    shown = re.sub(r"[\x00-\x1f\x7f]", lambda m: "\\u%04X" % ord(m.group()), value[:80])
    return f"<{shown}{'...' if len(value) > 80 else ''}>"


@_term_cache(maxsize=65536)  # events repeat their terms (a refused one is not kept: it raises)
def checked(nt: str) -> str:
    """The canonical text of a term read from input (every event reader and
    every background file takes a term through here, so a term gets the
    same verdict in every format); TermError saying why it is not taken:
    not N-Triples, longer than MAX_TERM_BYTES, a lone surrogate (raw or
    as an escape: no Unicode character), an IRI or a datatype IRI that
    absolute_iri refuses, a number of more than MAX_NUMBER_DIGITS."""
    if len(nt) > MAX_TERM_BYTES // 4 and len(nt.encode("utf-8", "surrogatepass")) > MAX_TERM_BYTES:
        raise TermError(_too_long(nt))
    bad = _SURROGATE.search(nt)
    if bad is not None:
        raise TermError(f"U+{ord(bad.group()):04X} is not a Unicode character (a lone surrogate: "
                        "undecodable input, or half of a pair)")
    try:
        parts = split(nt)
    except TermError:
        text = nt.strip()
        if text[:1] == "<" and text[-1:] == ">" and _RAW_FORBIDDEN.search(text, 1, len(text) - 1):
            absolute_iri(text[1:-1])  # say which character
        raise
    if parts[0] == "iri":
        absolute_iri(parts[1])
    elif parts[0] == "literal":
        if parts[3] is None:
            absolute_iri(parts[2])
        if parts[2] in _NUMERIC and len(parts[1].strip()) > MAX_NUMBER_DIGITS:
            raise TermError(f"a number of {len(parts[1].strip()):,} characters: the engine computes "
                            f"with numbers of up to {MAX_NUMBER_DIGITS:,} digits")
    term = canonical(nt)
    if len(term) > MAX_TERM_BYTES // 4 and len(term.encode("utf-8")) > MAX_TERM_BYTES:
        raise TermError(_too_long(term))
    return term


_NUMERIC = (XSD_INTEGER, XSD_DECIMAL, XSD_DOUBLE)


def _too_long(nt: str) -> str:
    mib = f" ({MAX_TERM_BYTES / 2**20:g} MiB)" if MAX_TERM_BYTES >= 2**20 else ""
    return (f"a term of {len(nt.encode('utf-8', 'surrogatepass')):,} bytes: terms are limited to "
            f"{MAX_TERM_BYTES:,} bytes{mib} of N-Triples text")


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
    text = canonical_lexical(lex, dt)
    if text is None:  # another datatype, or ill-typed
        return pl.Struct("l", pl.Str(lex), pl.Atom(dt))
    value = _value(text, dt)
    return value if text == lex else pl.Struct("lv", pl.Str(lex), pl.Atom(dt), value)


def _value(text: str, dt: str) -> pl.Term:
    """The Prolog value of a canonical lexical form of one of the six datatypes."""
    if dt == XSD_INTEGER:
        return int(text)
    if dt == XSD_DECIMAL:
        return pl.Struct("dec", Fraction(Decimal(text)))
    if dt == XSD_DOUBLE:
        return float(text)  # Python reads INF, -INF and NaN too
    if dt == XSD_BOOLEAN:
        return pl.Struct("bool", pl.Atom(text))
    if dt == XSD_DATETIME:
        return pl.Struct("dt", parse_datetime_ms(text))
    return pl.Struct("dur", *parse_duration(text))


@_term_cache(maxsize=262144)
def prolog_text(nt: str) -> str:
    """`to_prolog` written as text, cached: event batches repeat their terms."""
    return pl.write(to_prolog(nt))


# ------------------------------------------------------------ outputs


def to_json(nt: str) -> dict:
    """The W3C SPARQL 1.1 Query Results JSON form of a term."""
    return dict(_to_json(nt))


@_term_cache(maxsize=65536)  # answers repeat their terms (to_json hands out copies)
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
        return literal(obj["value"], obj.get("datatype"), obj.get("xml:lang"))
    raise TermError(f"not a SPARQL JSON term: {obj!r}")


@contextmanager
def rdflib_as_written():
    """rdflib as the readers need it: literals keep their lexical form as
    written (rdflib's default rewrites "01"^^xsd:integer as "1" and drops
    the time zone of an xsd:date); no warning for an ill-typed literal,
    which the engine keeps as it is (SPARQL does), nor for rdflib's own
    use of its deprecated classes."""
    import rdflib

    logger = logging.getLogger("rdflib")
    level, normalize = logger.level, rdflib.NORMALIZE_LITERALS
    logger.setLevel(logging.ERROR)
    rdflib.NORMALIZE_LITERALS = False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        logger.setLevel(level)
        rdflib.NORMALIZE_LITERALS = normalize


def from_rdflib(term) -> str:
    """Canonical N-Triples text of an rdflib term (a literal's lexical form
    as rdflib holds it: as written when read under rdflib_as_written)."""
    from rdflib import BNode, Literal, URIRef

    if isinstance(term, URIRef):
        return iri(str(term))
    if isinstance(term, BNode):
        return "_:" + str(term)
    if isinstance(term, Literal):
        dt = str(term.datatype) if term.datatype else None
        return literal(str(term), dt, term.language)
    raise TermError(f"not an RDF term: {term!r}")


def datetime_literal(ms: int) -> str:
    return literal(format_datetime_ms(ms), XSD_DATETIME)
