"""Streams as tables: one triple occurrence per row.

Takes a .jsonl, .csv or .parquet file with the columns

    s, p, o   RDF terms in N-Triples syntax: <http://ex.org/a>, _:b1,
              "text", "text"@en, "42"^^<http://www.w3.org/2001/XMLSchema#integer>
    t         when the triple occurs: xsd:dateTime text (2026-01-05T10:00:00Z;
              no time zone means UTC) or integer epoch milliseconds
    t_end     optional: the end of the occurrence's interval (default: t)
    stream    optional: the IRI of the occurrence's stream, <http://...> or
              bare (default: none, an event of every stream; docs/language.md,
              "Windows and aggregates")

and gives Events (or, for large files, columns of them) plus a Reject for
each row that cannot be used (a malformed term, a literal subject, a bad
time, t_end before t, a missing value, a line that is not JSON). A row's
place is `file:line` (JSON Lines and CSV, counting the header as line 1) or
`file:row N` (Parquet, rows counted from 1). Columns other than these are
ignored. Terms come out in the canonical form of cep.terms, times as
integer epoch milliseconds.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.events import Event, Reject

COLUMNS = ("s", "p", "o", "t")
OPTIONAL_COLUMNS = ("t_end", "stream")


class Columns(NamedTuple):
    """A table's valid rows as parallel columns: canonical N-Triples text for
    s, p, o and int64 epoch milliseconds for start and end (pyarrow arrays
    for Parquet, lists for the other formats)."""

    s: object
    p: object
    o: object
    start: object
    end: object
    stream: object = None  # the stream IRIs (<...>, null for none), or None without a stream column


class _Bad(ValueError):
    """One row's problem, worded for the person who produced the data."""


# ------------------------------------------------------------ per row


def _term(value, column: str) -> str:
    if value is None or value == "":
        raise _Bad(f"column {column} is empty")
    if not isinstance(value, str):
        raise _Bad(f"column {column}: expected an RDF term in N-Triples syntax as a string, "
                   f"got {json.dumps(value)}")
    try:
        term = terms.canonical(value)
    except terms.TermError as exc:
        raise _Bad(f"column {column}: {exc}") from None
    if column == "s" and term.startswith('"'):
        raise _Bad(f"column s: a subject is an IRI or a blank node, not a literal ({term})")
    if column == "p" and not term.startswith("<"):
        raise _Bad(f"column p: a predicate is an IRI, not {term}")
    return term


_MS_RE = re.compile(r"-?\d+\Z")


def parse_time(value, column: str = "t") -> int:
    """A time cell -> epoch milliseconds: integer epoch milliseconds (a JSON
    number or a string of digits), xsd:dateTime text, or an N-Triples
    xsd:dateTime literal. Raises ValueError (_Bad) with a message for the user."""
    if isinstance(value, bool) or value is None or value == "":
        raise _Bad(f"column {column} is empty" if value in (None, "") else
                   f"column {column}: expected a time, got {json.dumps(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise _Bad(f"column {column}: {value} is not a whole number of milliseconds")
    if not isinstance(value, str):
        raise _Bad(f"column {column}: expected xsd:dateTime text or epoch milliseconds, "
                   f"got {json.dumps(value)}")
    text = value.strip()
    if _MS_RE.match(text):
        return int(text)
    if text.startswith('"'):
        try:
            parts = terms.split(text)
        except terms.TermError as exc:
            raise _Bad(f"column {column}: {exc}") from None
        if parts[0] != "literal" or parts[2] != terms.XSD_DATETIME:
            raise _Bad(f"column {column}: {text} is not an xsd:dateTime literal")
        text = parts[1]
    try:
        return terms.parse_datetime_ms(text)
    except terms.TermError:
        raise _Bad(f"column {column}: {value!r} is neither xsd:dateTime text "
                   "(like 2026-01-05T10:00:00Z) nor integer epoch milliseconds") from None


def _interval(t, t_end) -> tuple[int, int]:
    start = parse_time(t, "t")
    if t_end is None or t_end == "":
        return start, start
    end = parse_time(t_end, "t_end")
    if end < start:
        raise _Bad(f"t_end ({terms.format_datetime_ms(end)}) is before t ({terms.format_datetime_ms(start)})")
    return start, end


def row_event(row: dict, source: str) -> Event:
    """One row (a mapping with s, p, o, t and maybe t_end) -> an Event;
    raises _Bad naming the problem."""
    missing = [c for c in COLUMNS if c not in row]
    if missing:
        raise _Bad(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
                   f"a row needs s, p, o and t")
    s, p, o = _term(row["s"], "s"), _term(row["p"], "p"), _term(row["o"], "o")
    start, end = _interval(row["t"], row.get("t_end"))
    return Event(s, p, o, start, end, source, stream_iri(row.get("stream")))


def stream_iri(value) -> str:
    """A stream column's value -> "<iri>", or "" for none."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Bad(f"column stream is not an IRI: {value!r}")
    text = value.strip()
    if not text:
        return ""
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if not text or re.search(r'[\x00-\x20<>"{}|^`\\]', text):
        raise _Bad(f"column stream is not an IRI: {value!r}")
    return f"<{text}>"


# --------------------------------------------------------------- JSON Lines


def read_jsonl(path, rejects: list, data: bytes | None = None) -> list[Event]:
    name = str(path)
    events = []
    try:
        handle = open(path, "rb") if data is None else io.BytesIO(data)
    except OSError as exc:
        rejects.append(Reject(name, f"cannot read the file: {exc.strerror or exc}"))
        return []
    with handle:
        for number, raw in enumerate(handle, 1):
            where = f"{name}:{number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                rejects.append(Reject(where, "not UTF-8 text", raw.decode("utf-8", "replace").rstrip("\r\n")))
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                rejects.append(Reject(where, f"not JSON: {exc.msg} at column {exc.colno}", line.rstrip("\r\n")))
                continue
            if not isinstance(row, dict):
                rejects.append(Reject(where, "expected a JSON object with keys s, p, o, t (and maybe t_end)",
                                      line.rstrip("\r\n")))
                continue
            try:
                events.append(row_event(row, where))
            except _Bad as bad:
                rejects.append(Reject(where, str(bad), line.rstrip("\r\n")))
    return events


# ---------------------------------------------------------------------- CSV


def read_csv(path, rejects: list, data: bytes | None = None) -> list[Event]:
    name = str(path)
    try:
        handle = (open(path, newline="", encoding="utf-8-sig", errors="surrogateescape") if data is None else
                  io.TextIOWrapper(io.BytesIO(data), newline="", encoding="utf-8-sig", errors="surrogateescape"))
    except OSError as exc:
        rejects.append(Reject(name, f"cannot read the file: {exc.strerror or exc}"))
        return []
    events = []
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            rejects.append(Reject(f"{name}:1", f"cannot read the CSV header: {exc}"))
            return []
        if header is None:
            return []
        header = [h.strip() for h in header]
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            rejects.append(Reject(f"{name}:1", f"the header lacks column{'s' if len(missing) > 1 else ''} "
                                               f"{', '.join(missing)}: a CSV stream needs the columns s, p, o, t "
                                               "(and optionally t_end); file skipped", ",".join(header)))
            return []
        line = reader.line_num
        while True:
            first = line + 1  # a quoted field may span lines: report where the row starts
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                rejects.append(Reject(f"{name}:{first}", f"malformed CSV: {exc}"))
                line = reader.line_num
                continue
            line = reader.line_num
            where = f"{name}:{first}"
            text = ",".join(fields)
            if not any(f.strip() for f in fields):
                continue
            if any(_has_surrogate(f) for f in fields):
                rejects.append(Reject(where, "not UTF-8 text", text.encode("utf-8", "replace").decode()))
                continue
            if len(fields) != len(header):
                rejects.append(Reject(where, f"the row has {len(fields)} fields, the header {len(header)}", text))
                continue
            row = {h: f for h, f in zip(header, fields)}
            try:
                events.append(row_event(row, where))
            except _Bad as bad:
                rejects.append(Reject(where, str(bad), text))
    return events


def _has_surrogate(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


# ------------------------------------------------------------------ Parquet

_XSD = re.escape(terms.XSD)
# Each pattern matches only text that is already canonical (terms.canonical
# would return it unchanged), so rows that match need no work in Python.
_FAST_IRI = r'<[^<>"{}|^`\\\x00-\x20]*>'
_FAST_BNODE = r"_:[A-Za-z0-9_][A-Za-z0-9_.\-]*"
_FAST_LITERALS = [
    r'"[^"\\\x00-\x1f\x7f]*"',
    r'"[^"\\\x00-\x1f\x7f]*"@[a-z]+(?:-[a-z0-9]+)*',
    r'"(?:0|-?[1-9][0-9]*)"\^\^<' + _XSD + r"integer>",
    r'"(?:-?[1-9][0-9]*\.[0-9]*[1-9]|-?[1-9][0-9]*\.0|-?0\.[0-9]*[1-9]|0\.0)"\^\^<' + _XSD + r"decimal>",
    r'"[1-9][0-9]{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]'
    r'(?:\.[0-9]{0,2}[1-9])?Z"\^\^<' + _XSD + r"dateTime>",
]
FAST_TERM = {
    "s": "^(?:" + _FAST_IRI + "|" + _FAST_BNODE + ")$",
    "p": "^" + _FAST_IRI + "$",
    "o": "^(?:" + "|".join([_FAST_IRI, _FAST_BNODE] + _FAST_LITERALS) + ")$",
}
_FAST_MS = r"^-?[0-9]{1,15}$"
_FAST_ISO = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?Z$"


def _parquet_columns(path, rejects: list, data: bytes | None = None):
    """(Columns of the valid rows, their row indices in the file)."""
    import pyarrow.parquet as pq

    name = str(path)
    empty = Columns(pa.array([], pa.string()), pa.array([], pa.string()), pa.array([], pa.string()),
                    pa.array([], pa.int64()), pa.array([], pa.int64()))
    try:
        table = pq.read_table(path if data is None else pa.BufferReader(data))
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        rejects.append(Reject(name, f"cannot read the Parquet file: {exc}"))
        return empty, np.zeros(0, dtype=np.int64)
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        rejects.append(Reject(name, f"no column{'s' if len(missing) > 1 else ''} {', '.join(missing)}: a Parquet "
                                    "stream needs the columns s, p, o, t (and optionally t_end); file skipped",
                              ", ".join(table.column_names)))
        return empty, np.zeros(0, dtype=np.int64)
    n = table.num_rows
    reasons: dict[int, str] = {}  # row index -> first problem found

    def note(rows, reason):
        for i in rows:
            reasons.setdefault(int(i), reason)

    try:
        out = {}
        for col in ("s", "p", "o"):
            out[col] = _term_column(table.column(col), col, note)
        start = _time_column(table.column("t"), "t", note)
        end = start
        if "t_end" in table.column_names:
            end_col = table.column("t_end")
            end_null = np.asarray(pc.is_null(end_col).to_numpy(zero_copy_only=False), dtype=bool)
            end = _time_column(end_col, "t_end", note, allow_null=True)
            end = np.where(end_null, start, end)
            for i in np.nonzero(end < start)[0]:  # a t_end that did not parse is noted already
                note([i], f"t_end ({terms.format_datetime_ms(int(end[i]))}) is before "
                          f"t ({terms.format_datetime_ms(int(start[i]))})")
        stream = None
        if "stream" in table.column_names:
            values = table.column("stream").to_pylist()
            out_stream = []
            for i, v in enumerate(values):
                try:
                    out_stream.append(stream_iri(v) or None)
                except _Bad as bad:
                    note([i], str(bad))
                    out_stream.append(None)
            stream = pa.array(out_stream, pa.string())
    except _Bad as bad:
        rejects.append(Reject(name, f"{bad}; file skipped"))
        return empty, np.zeros(0, dtype=np.int64)
    if reasons:
        rows = sorted(reasons)
        cols = table.select([c for c in ("s", "p", "o", "t", "t_end") if c in table.column_names])
        shown = cols.take(pa.array(rows, pa.int64())).to_pylist()
        for i, row in zip(rows, shown):
            text = " ".join("" if row[c] is None else str(row[c]) for c in ("s", "p", "o"))
            text += f" @ {row['t']}" + (f" .. {row['t_end']}" if row.get("t_end") is not None else "")
            rejects.append(Reject(f"{name}:row {i + 1}", reasons[i], text))
        keep = np.ones(n, dtype=bool)
        keep[rows] = False
        mask = pa.array(keep)
        return (Columns(out["s"].filter(mask), out["p"].filter(mask), out["o"].filter(mask),
                        pa.array(start[keep], pa.int64()), pa.array(end[keep], pa.int64()),
                        None if stream is None else stream.filter(mask)),
                np.nonzero(keep)[0])
    return (Columns(out["s"], out["p"], out["o"], pa.array(start, pa.int64()), pa.array(end, pa.int64()), stream),
            np.arange(n))


def _as_string_array(column):
    arr = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if pa.types.is_large_string(arr.type) or pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.string())
    if not pa.types.is_string(arr.type):
        return None
    return arr


def _term_column(column, col, note):
    arr = _as_string_array(column)
    if arr is None:
        raise _Bad(f"column {col} has type {column.type}; expected strings holding RDF terms in N-Triples syntax")
    null = np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False), dtype=bool)
    note(np.nonzero(null)[0], f"column {col} is empty")
    fast = pc.fill_null(pc.match_substring_regex(arr, FAST_TERM[col]), False)
    slow = np.nonzero(~np.asarray(fast.to_numpy(zero_copy_only=False), dtype=bool) & ~null)[0]
    if len(slow) == 0:
        return arr
    values = arr.take(pa.array(slow, pa.int64())).to_pylist()
    fixed_rows, fixed = [], []
    for i, value in zip(slow, values):
        try:
            term = _term(value, col)
        except _Bad as bad:
            note([i], str(bad))
            continue
        if term != value:
            fixed_rows.append(i)
            fixed.append(term)
    if fixed_rows:
        mask = np.zeros(len(arr), dtype=bool)
        mask[fixed_rows] = True
        arr = pc.replace_with_mask(arr, pa.array(mask), pa.array(fixed, pa.string()))
    return arr


def _time_column(column, col, note, allow_null=False):
    """int64 epoch milliseconds of a time column (0 where the row is bad;
    the reason is noted)."""
    arr = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    n = len(arr)
    null = np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False), dtype=bool)
    if not allow_null:
        note(np.nonzero(null)[0], f"column {col} is empty")
    if pa.types.is_null(arr.type):  # a column with no values at all (all rows noted above)
        return np.zeros(n, dtype=np.int64)
    if pa.types.is_integer(arr.type):
        return np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    if pa.types.is_timestamp(arr.type):
        ms = pc.cast(arr, pa.timestamp("ms", tz=arr.type.tz), safe=False).cast(pa.int64())
        return np.asarray(pc.fill_null(ms, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    strings = _as_string_array(arr)
    if strings is None:
        raise _Bad(f"column {col} has type {arr.type}; expected integer epoch milliseconds, "
                   "a timestamp, or xsd:dateTime text")
    out = np.zeros(n, dtype=np.int64)
    done = np.zeros(n, dtype=bool) | null
    digits = np.asarray(pc.fill_null(pc.match_substring_regex(strings, _FAST_MS), False)
                        .to_numpy(zero_copy_only=False), dtype=bool)
    if digits.any():
        idx = pa.array(np.nonzero(digits)[0], pa.int64())
        out[digits] = np.asarray(pc.cast(strings.take(idx), pa.int64()).to_numpy(zero_copy_only=False))
        done |= digits
    iso = np.asarray(pc.fill_null(pc.match_substring_regex(strings, _FAST_ISO), False)
                     .to_numpy(zero_copy_only=False), dtype=bool)
    if iso.any():
        idx = pa.array(np.nonzero(iso)[0], pa.int64())
        try:
            ms = pc.cast(strings.take(idx), pa.timestamp("ms", tz="UTC")).cast(pa.int64())
            out[iso] = np.asarray(ms.to_numpy(zero_copy_only=False))
            done |= iso
        except Exception:  # noqa: BLE001 - an invalid date among them: check each one in Python
            pass
    rest = np.nonzero(~done)[0]
    if len(rest):
        values = strings.take(pa.array(rest, pa.int64())).to_pylist()
        for i, value in zip(rest, values):
            try:
                out[i] = parse_time(value, col)
            except _Bad as bad:
                note([i], str(bad))
    return out


def checked_rows(table: pa.Table) -> tuple[pa.Table, list[tuple[int, str]]]:
    """A table of s, p, o (N-Triples text) and start, end (epoch ms) that
    comes from elsewhere (a Spark DataFrame): its usable rows, with terms in
    canonical form, and (row index, reason) for each of the others."""
    reasons: dict[int, str] = {}

    def note(rows, reason):
        for i in rows:
            reasons.setdefault(int(i), reason)

    cols = {c: _term_column(table.column(c), c, note) for c in ("s", "p", "o")}
    for c in ("start", "end"):
        note(np.nonzero(np.asarray(pc.is_null(table.column(c)).to_numpy(zero_copy_only=False), dtype=bool))[0],
             "t is empty or not a time" if c == "start" else "t_end is not a time")
    before = pc.fill_null(pc.less(table.column("end"), table.column("start")), False)
    note(np.nonzero(np.asarray(before.to_numpy(zero_copy_only=False), dtype=bool))[0], "t_end is before t")
    for c, arr in cols.items():
        table = table.set_column(table.column_names.index(c), c, arr)
    if not reasons:
        return table, []
    keep = np.ones(table.num_rows, dtype=bool)
    keep[sorted(reasons)] = False
    return table.filter(pa.array(keep)), sorted(reasons.items())


def _columns_from_events(events) -> Columns:
    return Columns([e.s for e in events], [e.p for e in events], [e.o for e in events],
                   [e.start for e in events], [e.end for e in events],
                   [e.stream or None for e in events] if any(e.stream for e in events) else None)


def read_table_columns(path, rejects: list | None = None) -> Columns:
    """A table file's valid rows as columns (s, p, o, start, end). Parquet is
    checked column-wise with pyarrow.compute, and only the rows that fail
    the fast checks go through the per-row checks; JSON Lines and CSV are
    read row by row. Rejected rows are appended to `rejects` when given."""
    from cep.io.readers import format_of

    rejects = [] if rejects is None else rejects
    fmt = format_of(path)
    if fmt == "parquet":
        return _parquet_columns(path, rejects)[0]
    if fmt == "jsonl":
        return _columns_from_events(read_jsonl(path, rejects))
    if fmt == "csv":
        return _columns_from_events(read_csv(path, rejects))
    from cep.errors import UsageError

    raise UsageError(f"{path}: read_table_columns reads .jsonl, .csv and .parquet files, not .{fmt}")


def read_parquet(path, rejects: list, data: bytes | None = None) -> list[Event]:
    cols, rows = _parquet_columns(path, rejects, data)
    name = str(path)
    s, p, o = cols.s.to_pylist(), cols.p.to_pylist(), cols.o.to_pylist()
    start, end = cols.start.to_pylist(), cols.end.to_pylist()
    streams = [""] * len(s) if cols.stream is None else [g or "" for g in cols.stream.to_pylist()]
    return [Event(*values, f"{name}:row {i + 1}", g)
            for values, i, g in zip(zip(s, p, o, start, end), rows.tolist(), streams)]
