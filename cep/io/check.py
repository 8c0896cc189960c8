"""What an event may hold: one check of terms and times for every reader.

Every event reader takes its terms and times through here (cep.io.tables
for JSON Lines, CSV and Parquet, and for the rows Spark reads; cep.io.trig
for TriG; cep.io.nquads for N-Quads and N-Triples), so one record gets one
verdict whatever its format:

    term(value, slot)        canonical N-Triples text of an event's s, p or o:
                             cep.terms.checked (well-formed, at most 16 MiB,
                             Unicode, absolute IRIs with no forbidden
                             character), a subject an IRI or a blank node,
                             a predicate an IRI
    time(value, column)      epoch milliseconds of a time cell: integer epoch
                             milliseconds or xsd:dateTime text
    in_range(ms, column)     a time the engine takes
    stream_iri(value)        a stream column's IRI

Each raises Invalid, whose message names the column and the problem in
words for the person who produced the data.

Times. An event occurs between TIME_MIN_MS (0001-01-01T00:00:00Z) and
TIME_MAX_MS (9999-12-31T23:59:59.999Z), the years every output format
writes with four digits (Python's datetime, Spark's and Arrow's
timestamps, xsd:dateTime in its XSD 1.0 form). A time computed from an
event's may reach past them: a NOTSEQ deadline (the end plus the NOTSEQ
duration), a window's start (its end less the range) or its end (the next
multiple of the step). The engine computes with it as with any other
(Prolog's integers are unbounded); an answer gives it as the nearest
instant of the range (clamped): no event occurs beyond, so a window
reaching before year 1 holds what the one from year 1 holds, and a window
or deadline past year 9999 is complete at its last instant. So every
answer is written with four-digit years, and read back as an event.
"""

from __future__ import annotations

import json
import math
import re

from cep import terms

TIME_MIN_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z
TIME_MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
TIME_RANGE = "0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z"
_LABELS = {"s": "a subject", "p": "a predicate", "o": "an object"}


class Invalid(ValueError):
    """One record's problem, worded for the person who produced the data."""


def term(value, slot: str, column: str | None = None) -> str:
    """The canonical text of the term `value` in the event's `slot` (s, p or
    o); `column` names it in messages (default: "column s")."""
    column = column or f"column {slot}"
    if value is None or value == "":
        raise Invalid(f"{column} is empty")
    if not isinstance(value, str):
        raise Invalid(f"{column}: expected an RDF term in N-Triples syntax as a string, got {_shown(value)}")
    try:
        text = terms.checked(value)
    except terms.TermError as exc:
        raise Invalid(f"{column}: {exc}") from None
    if slot == "s" and text.startswith('"'):
        raise Invalid(f"{column}: a subject is an IRI or a blank node, not a literal ({_short(text)})")
    if slot == "p" and not text.startswith("<"):
        raise Invalid(f"{column}: a predicate is an IRI, not {_short(text)}")
    return text


_MS_RE = re.compile(r"[+-]?[0-9]+\Z")


def time(value, column: str = "t") -> int:
    """A time cell -> epoch milliseconds in the supported range: integer
    epoch milliseconds (a JSON number or a string of digits), xsd:dateTime
    text (no time zone: UTC), or an N-Triples xsd:dateTime literal."""
    if isinstance(value, bool) or value is None or value == "":
        raise Invalid(f"column {column} is empty" if value in (None, "") else
                      f"column {column}: expected a time, got {_shown(value)}")
    if isinstance(value, int):
        return in_range(value, column, f"{value} ms" if abs(value) < 10**40 else "a number of more than 40 digits")
    if isinstance(value, float):
        if math.isnan(value):
            raise Invalid(f"column {column}: NaN is not a time")
        if math.isinf(value):
            return in_range(TIME_MAX_MS + 1 if value > 0 else TIME_MIN_MS - 1, column, "a number this large")
        if value.is_integer():
            return in_range(int(value), column, f"{value:g} ms")
        raise Invalid(f"column {column}: {value} is not a whole number of milliseconds")
    if not isinstance(value, str):
        raise Invalid(f"column {column}: expected xsd:dateTime text or epoch milliseconds, got {_shown(value)}")
    text = value.strip()
    if _MS_RE.match(text):
        digits = text.lstrip("+-").lstrip("0")
        if len(digits) > 18:  # past any time, and int() of a long text costs
            return in_range(TIME_MAX_MS + 1, column, f"{_short(text)} ms")
        return in_range(int(text), column, f"{text} ms")
    if text.startswith('"'):
        try:
            parts = terms.split(text)
        except terms.TermError as exc:
            raise Invalid(f"column {column}: {exc}") from None
        if parts[0] != "literal" or parts[2] != terms.XSD_DATETIME:
            raise Invalid(f"column {column}: {_short(text)} is not an xsd:dateTime literal")
        text = parts[1]
    try:
        ms = terms.parse_datetime_ms(text)
    except terms.TermError:
        raise Invalid(f"column {column}: {_short(value)!r} is neither xsd:dateTime text "
                      "(like 2026-01-05T10:00:00Z) nor integer epoch milliseconds") from None
    return in_range(ms, column, text)


def in_range(ms: int, column: str = "t", shown: str | None = None) -> int:
    """`ms` when events may occur then; Invalid naming the range when not.
    `shown`: the time as the data gave it."""
    if TIME_MIN_MS <= ms <= TIME_MAX_MS:
        return ms
    raise Invalid(out_of_range(shown or f"{ms} ms", column))


def clamped(ms: int) -> int:
    """An answer's time `ms` (computed: a window's start or close, a NOTSEQ
    deadline) as an answer gives it: the nearest time an event may have."""
    return min(max(ms, TIME_MIN_MS), TIME_MAX_MS)


def out_of_range(shown: str, column: str = "t") -> str:
    """The reason of a time outside the range, shown as the data gave it."""
    return f"{_column(column)}: {shown} is outside the supported time range, {TIME_RANGE}"


def interval(t, t_end) -> tuple[int, int]:
    """(start, end) of a row's t and optional t_end."""
    start = time(t, "t")
    if t_end is None or t_end == "":
        return start, start
    end = time(t_end, "t_end")
    if end < start:
        raise Invalid(f"t_end ({terms.format_datetime_ms(end)}) is before t ({terms.format_datetime_ms(start)})")
    return start, end


def stream_iri(value) -> str:
    """A stream column's value (<iri> or a bare IRI) -> "<iri>", or "" for none."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"column stream is not an IRI: {_shown(value)}")
    text = value.strip()
    if not text:
        return ""
    try:
        if text.startswith("<") and text.endswith(">"):  # N-Triples, escapes and all
            return terms.checked(text)
        return terms.absolute_iri(text)
    except terms.TermError as exc:
        raise Invalid(f"column stream is not an IRI: {exc}") from None


def file_name(path) -> str:
    """A file's path as the places of its records give it: a byte of the
    name that is not UTF-8 (the file system allows them) as U+FFFD, so that
    a place can go wherever text goes (Arrow, a JSON file)."""
    return _UNDECODED.sub("\ufffd", str(path))


_UNDECODED = re.compile("[\ud800-\udfff]")


def _column(column: str) -> str:
    return column if " " in column else f"column {column}"


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def _shown(value) -> str:
    try:
        return _short(json.dumps(value))
    except (TypeError, ValueError):
        return _short(repr(value))
