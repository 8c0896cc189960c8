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

and gives events tables (cep.events.EVENTS) of at most a batch of rows
each, read incrementally (*_batches), plus a Reject for each row
that cannot be used: a term or a time that cep.io.check refuses
(the check every reader shares), t_end before t, a missing value, a line
that is not JSON or not UTF-8. A row's place is `file:line` (JSON Lines and
CSV, counting the header as line 1) or `file:row N` (Parquet, rows counted
from 1). Columns other than these are ignored; a file that names one of
them twice is refused. Terms come out in the canonical form of cep.terms,
times as integer epoch milliseconds.
"""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cep import terms
from cep.events import EVENTS, EventRows, Reject, integer_literals, one_array, repeating
from cep.io import check
from cep.runtime import native
from cep.io.check import Invalid
from cep.io.lines import line_chunks

COLUMNS = ("s", "p", "o", "t")
OPTIONAL_COLUMNS = ("t_end", "stream")


# ------------------------------------------------------------ per row


def add_row(rows: EventRows, row: dict, source: str) -> None:
    """One row (a mapping with s, p, o, t and maybe t_end, stream) added to
    `rows`; raises Invalid naming the problem (cep.io.check)."""
    missing = [c for c in COLUMNS if c not in row]
    if missing:
        raise Invalid(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
                      f"a row needs s, p, o and t")
    s, p, o = check.term(row["s"], "s"), check.term(row["p"], "p"), check.term(row["o"], "o")
    start, end = check.interval(row["t"], row.get("t_end"))
    rows.add(s, p, o, start, end, source, check.stream_iri(row.get("stream")))


# --------------------------------------------------------------- JSON Lines


def jsonl_batches(handle, source, rejects: list, rows: int):
    """The events of a JSON Lines input (an open binary stream), in tables
    of at most `rows` rows."""
    name = source.name
    for chunk in line_chunks(handle, name, rejects, rows):
        events = EventRows()
        for number, raw in chunk:
            where = f"{name}:{number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                rejects.append(Reject(where, "not UTF-8 text", raw.decode("utf-8", "replace")))
                continue
            if not line.strip():
                continue
            try:
                row = _JSON.decode(line)
            except json.JSONDecodeError as exc:
                rejects.append(Reject(where, f"not JSON: {exc.msg} at column {exc.colno}", line))
                continue
            except DuplicateKey as exc:
                rejects.append(Reject(where, str(exc), line))
                continue
            except RecursionError:
                rejects.append(Reject(where, "not JSON this reader takes: arrays or objects nested too deep", line))
                continue
            if not isinstance(row, dict):
                rejects.append(Reject(where, "expected a JSON object with keys s, p, o, t (and maybe t_end)", line))
                continue
            try:
                add_row(events, row, where)
            except Invalid as bad:
                rejects.append(Reject(where, str(bad), line))
        yield events.table()


def _json_int(text: str):
    """A JSON integer: as a float (infinite) past MAX_NUMBER_DIGITS digits,
    which Python would read in quadratic time (and refuses past 4,300):
    no such number is a time or an N-Triples term anyway."""
    if len(text) <= terms.MAX_NUMBER_DIGITS:
        return int(text)
    return float("-inf") if text.startswith("-") else float("inf")


class DuplicateKey(ValueError):
    """A JSON object that gives a key twice: RFC 8259 leaves its meaning to
    the reader (Python's takes the last), so a record that does is
    ambiguous and is refused, not read one way."""


def unique_keys(pairs: list) -> dict:
    """json's object_pairs_hook: the object, or DuplicateKey."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise DuplicateKey(f"the key {json.dumps(key)} given twice in one object")
    return obj


_JSON = json.JSONDecoder(parse_int=_json_int, object_pairs_hook=unique_keys)


# ---------------------------------------------------------------------- CSV


def csv_batches(handle, source, rejects: list, rows: int):
    """The events of a CSV input (an open binary stream), in tables of at
    most `rows` rows. No term or time holds a line end, so the input is
    read in chunks of lines and a row never goes on past its chunk."""
    name = source.name
    header = None
    # the csv module's field limit (128 KiB unless set; it is one setting
    # for the whole process, put back after): a term may be as long as
    # cep.terms.MAX_TERM_BYTES, and a longer field is a reject
    limit = csv.field_size_limit(terms.MAX_TERM_BYTES)
    try:
        for chunk in line_chunks(handle, name, rejects, rows, universal=True):
            # bytes that are not UTF-8 cost the rows that hold them (_csv_problem)
            lines = [raw.decode("utf-8-sig" if number == 1 else "utf-8", "surrogateescape") + "\n"
                     for number, raw in chunk]
            events, header = _csv_events(lines, [number for number, _ in chunk], name, rejects, header)
            if header is False:  # the file is skipped (its header is refused)
                return
            yield events.table()
    finally:
        csv.field_size_limit(limit)


def _csv_rows(lines: list, start: int):
    """A csv reader of the lines from index `start` on."""
    return csv.reader(lines[i] for i in range(start, len(lines)))


def _csv_header(reader, name: str, rejects: list):
    """The header's column names; None when the file is empty, False when
    it is refused (a Reject says why)."""
    try:
        header = next(reader, None)
    except csv.Error as exc:
        rejects.append(Reject(f"{name}:1", f"cannot read the CSV header: {_csv_error(exc)}"))
        return False
    if header is None:
        return None
    header = [h.strip() for h in header]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        rejects.append(Reject(f"{name}:1", f"the header lacks column{'s' if len(missing) > 1 else ''} "
                                           f"{', '.join(missing)}: a CSV stream needs the columns s, p, o, t "
                                           "(and optionally t_end); file skipped", ",".join(header)))
        return False
    twice = [c for c in COLUMNS + OPTIONAL_COLUMNS if header.count(c) > 1]
    if twice:
        rejects.append(Reject(f"{name}:1", "the header names column"
                                           + "".join(f" {c} twice (columns "
                                                     f"{', '.join(str(i + 1) for i, h in enumerate(header) if h == c)})"
                                                     for c in twice)
                                           + ": which one holds the value is not clear; file skipped",
                              ",".join(header)))
        return False
    return header


def _csv_events(lines: list, numbers: list, name: str, rejects: list, header):
    """The events of a chunk of lines (with their line numbers) and the
    header (read from the chunk when `header` is None; False: the file is
    refused)."""
    events = EventRows()
    reader = _csv_rows(lines, 0)
    start, read = 0, 0  # the reader began at lines[start] and has read `read` lines
    if header is None:
        header = _csv_header(reader, name, rejects)
        if not header:
            return events, header
        read = reader.line_num
    again = 4 * len(lines)  # lines that may be read again (a guard against a file that makes it quadratic)
    reported = 0  # the last line of a refused row, whose reject shows every line it took
    while True:
        first = start + read + 1  # a quoted field may span lines: report where the row starts
        try:
            fields, why = next(reader), None
        except StopIteration:
            break
        except csv.Error as exc:
            fields, why = [], f"malformed CSV: {_csv_error(exc)}"
        spans = reader.line_num - read > 1
        read = reader.line_num
        text = ",".join(fields)
        where = f"{name}:{numbers[first - 1]}"
        if why is None:
            if not any(f.strip() for f in fields):
                continue
            why = _csv_problem(header, fields, text)
        if why is None:
            try:
                add_row(events, dict(zip(header, fields)), where)
                continue
            except Invalid as bad:
                why = str(bad)
        shown = first > reported  # else it is a line of a refused row, which its reject shows
        if shown:
            rejects.append(Reject(where, why, text))
        if spans and again > 0:
            # a refused row over several lines: no term or time holds a line
            # end, so a stray quote (one never closed, or one that a later
            # record's closed) took the lines after its first into the row;
            # they are read again as rows of their own, so that it costs its
            # record and not the records after it
            again -= start + read - first
            reported = start + read if shown else reported
            reader, start, read = _csv_rows(lines, first), first, 0
    return events, header


def _csv_problem(header: list, fields: list, text: str) -> str | None:
    if _UNDECODED.search(text):
        return "not UTF-8 text"
    if len(fields) != len(header):
        return f"the row has {len(fields)} fields, the header {len(header)}"
    return None


_UNDECODED = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of bytes that are not UTF-8


def _csv_error(exc: csv.Error) -> str:
    if "field larger than field limit" in str(exc):
        return (f"a field is longer than {terms.MAX_TERM_BYTES:,} characters, and a term is at most "
                f"{terms.MAX_TERM_BYTES:,} bytes")
    return str(exc)


# ------------------------------------------------------------------ Parquet

_XSD = re.escape(terms.XSD)
# Each pattern matches only text that cep.io.check.term takes and that is
# already canonical (it would return it unchanged), so rows that match need
# no work in Python. Longer terms go through the check (FAST_LENGTH).
_FAST_IRI = r'<[A-Za-z][A-Za-z0-9+.\-]*:[^<>"{}|^`\\\x00-\x20]*>'
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
FAST_LENGTH = 1000  # bytes: below the number and term limits of cep.terms.checked
_DISTINCT_FROM = 1024  # rows: a longer column of terms is checked once per distinct term when they repeat
_FAST_MS = r"^-?[0-9]{1,15}$"
_FAST_ISO = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?Z$"


def parquet_batches(handle, source, rejects: list, rows: int):
    """The events of a Parquet input (an open binary stream), a table per
    record batch of at most `rows` rows (a Parquet file keeps its index at
    its end: standard input, which cannot seek, is read whole first).
    Checked column-wise with pyarrow.compute: only the rows that fail the
    fast checks go through the per-row checks (cep.io.check)."""
    import pyarrow.parquet as pq

    from cep.io.readers import READ_ERRORS, read_failure

    name = source.name
    try:
        if not handle.seekable():
            handle = io.BytesIO(handle.read())
        parquet = pq.ParquetFile(handle)
    except READ_ERRORS as exc:
        rejects.append(Reject(name, read_failure(exc)))
        return
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        rejects.append(Reject(name, f"cannot read the Parquet file: {exc}"))
        return
    names = parquet.schema_arrow.names
    missing = [c for c in COLUMNS if c not in names]
    twice = [c for c in COLUMNS + OPTIONAL_COLUMNS if names.count(c) > 1]
    if missing or twice:
        why = (f"no column{'s' if len(missing) > 1 else ''} {', '.join(missing)}: a Parquet stream needs the "
               "columns s, p, o, t (and optionally t_end)" if missing else
               f"column{'s' if len(twice) > 1 else ''} {', '.join(twice)} appear{'' if len(twice) > 1 else 's'} "
               "twice: which one holds the value is not clear")
        rejects.append(Reject(name, f"{why}; file skipped", ", ".join(names)))
        return
    offset = 0  # rows before the batch
    batches = parquet.iter_batches(batch_size=rows, columns=[c for c in COLUMNS + OPTIONAL_COLUMNS if c in names])
    while True:
        try:
            batch = next(batches, None)
        except READ_ERRORS as exc:
            rejects.append(Reject(f"{name}:row {offset + 1}", read_failure(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - a damaged row group: what was read is kept
            rejects.append(Reject(f"{name}:row {offset + 1}", f"cannot read the Parquet file on: {exc}; "
                                                              "the rest is lost"))
            return
        if batch is None:
            return
        try:
            yield _parquet_events(pa.Table.from_batches([batch]), name, rejects, offset)
        except Invalid as bad:
            rejects.append(Reject(name, f"{bad}; file skipped"))
            return
        offset += batch.num_rows


def _parquet_events(table: pa.Table, name: str, rejects: list, offset: int) -> pa.Table:
    """The events of the rows of a Parquet file that come after `offset`
    others; Invalid when a column cannot hold what it should."""
    n = table.num_rows
    reasons: dict[int, str] = {}  # row index -> first problem found

    def note(rows, reason):
        for i in rows:
            reasons.setdefault(int(i), reason)

    given = {c: _utf8_column(table.column(c), c, note) for c in COLUMNS + OPTIONAL_COLUMNS
             if c in table.column_names}
    out = {col: term_column(given[col], col, note) for col in ("s", "p", "o")}
    start, end = _event_times(given, note)
    stream = _stream_column(given["stream"], note) if "stream" in given else None
    rows = pa.array(np.arange(offset + 1, offset + n + 1), pa.int64())  # a row's place: file:row N, from 1
    events = pa.table({
        **out, "start": pa.array(start, pa.int64()), "end": pa.array(end, pa.int64()),
        "source": pc.binary_join_element_wise(f"{name}:row ", pc.cast(rows, pa.string()), ""),
        "stream": stream if stream is not None else pa.nulls(n, pa.string()),
    }, schema=EVENTS)
    if reasons:
        bad = sorted(reasons)
        for i, text in zip(bad, _shown_rows(table, bad)):
            rejects.append(Reject(f"{name}:row {offset + i + 1}", reasons[i], text))
        keep = np.ones(n, dtype=bool)
        keep[bad] = False
        events = events.filter(pa.array(keep))
    return events


def _event_times(given: dict, note) -> tuple:
    """int64 epoch milliseconds (start, end) of the rows from their t and
    t_end columns (`given`: UTF-8 checked); a row whose times are bad is noted."""
    start = _time_column(given["t"], "t", note)
    end = start
    if "t_end" in given:
        end_null = np.asarray(pc.is_null(given["t_end"]).to_numpy(zero_copy_only=False), dtype=bool)
        end = np.where(end_null, start, _time_column(given["t_end"], "t_end", note, allow_null=True))
        for i in np.nonzero(end < start)[0]:  # a t_end that did not parse is noted already
            note([i], f"t_end ({terms.format_datetime_ms(int(end[i]))}) is before "
                      f"t ({terms.format_datetime_ms(int(start[i]))})")
    return start, end


def parquet_times(path, rows: int):
    """The (start, end) arrays of a Parquet file's events, batch after batch,
    read from its time columns alone (what parquet_batches makes of them);
    None in place of a batch with a time that cannot be read, and nothing
    when the file cannot be read (parquet_batches says why)."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
        if any(names.count(c) != 1 for c in COLUMNS) or any(names.count(c) > 1 for c in OPTIONAL_COLUMNS):
            return
        for batch in parquet.iter_batches(batch_size=rows, columns=[c for c in ("t", "t_end") if c in names]):
            bad = []
            given = {c: _utf8_column(batch.column(c), c, lambda found, _: bad.extend(found))
                     for c in batch.schema.names}
            try:
                times = _event_times(given, lambda found, _: bad.extend(found))
            except Invalid:
                times = None
            yield None if bad else times
    except Exception:  # noqa: BLE001 - pyarrow raises several types for a bad file
        return


def _utf8_column(column, col, note):
    """A column with each string that is not UTF-8 noted and made null
    (Arrow reads a Parquet string column's bytes unchecked; Python and the
    compute functions would fail on them). Other types as they are."""
    arr = one_array(column)
    strings = _as_string_array(arr)
    if strings is None:
        return arr
    try:
        strings.validate(full=True)
        return strings
    except pa.ArrowInvalid:
        pass
    bad = np.zeros(len(strings), dtype=bool)
    for i, raw in enumerate(strings.cast(pa.binary()).to_pylist()):
        if raw is not None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                bad[i] = True
    note(np.nonzero(bad)[0], f"column {col}: not UTF-8 text")
    return pc.if_else(pa.array(bad), pa.scalar(None, pa.binary()), strings.cast(pa.binary())).cast(pa.string())


def _shown_rows(table: pa.Table, rows: list) -> list[str]:
    """The rejected rows as "s p o @ t [.. t_end]", whatever their bytes and types."""
    picked = table.select([c for c in ("s", "p", "o", "t", "t_end") if c in table.column_names]).take(
        pa.array(rows, pa.int64()))
    shown = {}
    for c in picked.column_names:
        arr = picked.column(c).combine_chunks()
        if pa.types.is_dictionary(arr.type):
            arr = arr.cast(arr.type.value_type)
        if pa.types.is_timestamp(arr.type):  # years Python's datetime cannot hold
            shown[c] = [None if v is None else _timestamp_text(v, arr.type.unit)
                        for v in arr.cast(pa.int64()).to_pylist()]
        elif _as_string_array(arr) is not None:
            shown[c] = [None if v is None else v.decode("utf-8", "replace")
                        for v in _as_string_array(arr).cast(pa.binary()).to_pylist()]
        else:
            shown[c] = arr.to_pylist()
    out = []
    for k in range(len(rows)):
        text = " ".join("" if shown[c][k] is None else str(shown[c][k]) for c in ("s", "p", "o"))
        text += f" @ {shown['t'][k]}"
        if "t_end" in shown and shown["t_end"][k] is not None:
            text += f" .. {shown['t_end'][k]}"
        out.append(text)
    return out


def _as_string_array(column):
    arr = one_array(column)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if pa.types.is_large_string(arr.type) or pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.string())
    if not pa.types.is_string(arr.type):
        return None
    return arr


def term_column(column, col, note, label=None):
    """Canonical text of a column of terms in slot `col` (s, p or o); the
    rows check.term refuses are noted (`label` names the column in the
    reasons, check.term's `column`)."""
    arr = _as_string_array(column)
    if arr is None:
        raise Invalid(f"column {col} has type {column.type}; expected strings holding RDF terms in N-Triples syntax")
    if not arr.null_count and _all_canonical(arr, col):  # (the usual column, told in C term by term)
        return arr
    null = np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False), dtype=bool)
    note(np.nonzero(null)[0], f"{label or 'column ' + col} is empty")
    encoded = repeating(arr) if len(arr) > _DISTINCT_FROM else None
    if encoded is not None:  # a column that repeats its terms: check each once
        index = np.asarray(pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False))
        refused: dict[int, str] = {}
        checked = term_column(encoded.dictionary, col,
                              lambda rows, reason: [refused.setdefault(int(i), reason) for i in rows], label)
        for value, reason in refused.items():
            note(np.nonzero(index == value)[0], reason)
        return arr if checked is encoded.dictionary else checked.take(encoded.indices)  # (none rewritten: as it is)
    fast = _fast_terms(arr, col)
    slow = np.nonzero(~np.asarray(pc.fill_null(fast, False).to_numpy(zero_copy_only=False), dtype=bool) & ~null)[0]
    if len(slow) == 0:
        return arr
    values = arr.take(pa.array(slow, pa.int64())).to_pylist()
    fixed_rows, fixed = [], []
    for i, value in zip(slow, values):
        try:
            term = check.term(value, col, label)
        except Invalid as bad:
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


def _all_canonical(arr: pa.Array, col: str) -> bool:
    """Whether every term of a column is in a canonical form that
    cep/runtime/batch_text.c recognises, each a form FAST_TERM[col] takes
    (False where that library cannot be built)."""
    lib = native.batch_text()
    validity, offsets, data = arr.buffers()
    if lib is None or not len(arr) or data is None:
        return False
    out = np.empty(len(arr), np.uint8)
    lib.cep_canonical_terms(len(arr), offsets.address, data.address, validity and validity.address, arr.offset,
                            ord(col), out.ctypes.data)
    return bool(out.all())


def _fast_terms(arr: pa.Array, col: str) -> pa.Array:
    """Which terms of a column FAST_TERM[col] takes as they are (and at
    most FAST_LENGTH bytes). A column of integers (an object in every
    event, each a distinct term) is told by Arrow's string kernels, about
    three times faster than the regular expression, which then reads
    only the other terms."""
    short = pc.less_equal(pc.binary_length(arr), FAST_LENGTH)
    if col != "o":
        return pc.and_(pc.match_substring_regex(arr, FAST_TERM[col]), short)
    integer = pc.fill_null(integer_literals(arr)[0], False)  # "0" or -?[1-9][0-9]*, as FAST_TERM's
    if not pc.all(integer).as_py():
        rest = pc.invert(integer)
        matched = pc.match_substring_regex(pc.filter(arr, rest), FAST_TERM[col])
        integer = pc.replace_with_mask(integer, rest, matched)
    return pc.and_(integer, short)


def _stream_column(column, note):
    """The stream IRIs (<...>, null for none) of a stream column."""
    out = []
    for i, value in enumerate(column.to_pylist()):
        try:
            out.append(check.stream_iri(value) or None)
        except Invalid as bad:
            note([i], str(bad))
            out.append(None)
    return pa.array(out, pa.string())


_TIMESTAMP_MS = {"s": (1000, 1), "ms": (1, 1), "us": (1, 1000), "ns": (1, 1_000_000)}


def _timestamp_ms(arr) -> tuple[np.ndarray, np.ndarray]:
    """(epoch ms, whether it is in the supported range) of a timestamp
    array, null as 0: its UTC instant (a time zone or none: the stored
    value is UTC), sub-millisecond parts floored, as the text readers
    truncate a fraction."""
    raw = np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    times, per = _TIMESTAMP_MS[arr.type.unit]
    if times > 1:  # seconds: in range before they are multiplied (no overflow)
        ok = (raw >= -(-check.TIME_MIN_MS // times)) & (raw <= check.TIME_MAX_MS // times)
        return np.where(ok, raw, 0) * times, ok
    ms = raw // per
    return ms, (ms >= check.TIME_MIN_MS) & (ms <= check.TIME_MAX_MS)


def _time_column(column, col, note, allow_null=False):
    """int64 epoch milliseconds of a time column (0 where the row is bad;
    the reason is noted): the verdicts of check.time, column-wise."""
    arr = one_array(column)
    n = len(arr)
    null = np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False), dtype=bool)
    if not allow_null:
        note(np.nonzero(null)[0], f"column {col} is empty")
    if pa.types.is_null(arr.type):  # a column with no values at all (all rows noted above)
        return np.zeros(n, dtype=np.int64)
    if pa.types.is_integer(arr.type):
        values = np.asarray(pc.fill_null(arr, 0).to_numpy(zero_copy_only=False))  # uint64 and all
        ok = (values <= check.TIME_MAX_MS) if pa.types.is_unsigned_integer(arr.type) else \
            (values >= check.TIME_MIN_MS) & (values <= check.TIME_MAX_MS)
        _note_out_of_range(~ok & ~null, lambda i: f"{values[i]} ms", col, note)
        return np.where(ok, values, 0).astype(np.int64)
    if pa.types.is_timestamp(arr.type):
        ms, ok = _timestamp_ms(arr)
        raw = np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
        _note_out_of_range(~ok & ~null, lambda i: _timestamp_text(int(raw[i]), arr.type.unit), col, note)
        return np.where(ok, ms, 0)
    strings = _as_string_array(arr)
    if strings is None:
        raise Invalid(f"column {col} has type {arr.type}; expected integer epoch milliseconds, "
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
    fast_bad = done & ~null & ((out < check.TIME_MIN_MS) | (out > check.TIME_MAX_MS))
    done &= ~fast_bad  # out of range: check.time says so, in its words
    rest = np.nonzero(~done)[0]
    if len(rest):
        values = strings.take(pa.array(rest, pa.int64())).to_pylist()
        for i, value in zip(rest, values):
            try:
                out[i] = check.time(value, col)
            except Invalid as bad:
                note([i], str(bad))
    return out


def _timestamp_text(value: int, unit: str) -> str:
    times, per = _TIMESTAMP_MS[unit]
    return terms.format_datetime_ms(value * times // per)


def _note_out_of_range(bad, shown, col, note):
    for i in np.nonzero(bad)[0]:
        note([i], check.out_of_range(shown(i), col))


def checked_rows(table: pa.Table, times: tuple[str, str] = ("t", "t_end")) -> tuple[pa.Table, list[tuple[int, str]]]:
    """A table of s, p, o (N-Triples text), start, end (epoch ms) and
    optionally stream that comes from elsewhere (a Spark DataFrame, a
    table pushed into the engine): its usable rows, with terms and streams
    in canonical form, and (row index, reason) for each of the others (the
    verdicts of cep.io.check). `times`: the names the caller gave the start
    and end columns, as the reasons call them."""
    reasons: dict[int, str] = {}
    t, t_end = times

    def note(rows, reason):
        for i in rows:
            reasons.setdefault(int(i), reason)

    cols = {c: term_column(table.column(c), c, note) for c in ("s", "p", "o")}
    for c, label in (("start", t), ("end", t_end)):
        column = table.column(c)
        note(np.nonzero(np.asarray(pc.is_null(column).to_numpy(zero_copy_only=False), dtype=bool))[0],
             f"{t} is empty or not a time" if c == "start" else f"{t_end} is not a time")
        values = np.asarray(pc.fill_null(column, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
        _note_out_of_range((values < check.TIME_MIN_MS) | (values > check.TIME_MAX_MS),
                           lambda i, values=values: terms.format_datetime_ms(int(values[i])), label, note)
    before = pc.fill_null(pc.less(table.column("end"), table.column("start")), False)
    note(np.nonzero(np.asarray(before.to_numpy(zero_copy_only=False), dtype=bool))[0], f"{t_end} is before {t}")
    if "stream" in table.column_names and table.column("stream").null_count < table.num_rows:
        cols["stream"] = _stream_column(table.column("stream"), note)
    for c, arr in cols.items():
        table = table.set_column(table.column_names.index(c), c, arr)
    if not reasons:
        return table, []
    keep = np.ones(table.num_rows, dtype=bool)
    keep[sorted(reasons)] = False
    return table.filter(pa.array(keep)), sorted(reasons.items())
