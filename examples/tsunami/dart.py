"""NOAA NDBC DART water-column listings -> RDF events.

    listing = read_listing("21413t2011.txt.gz")       # one station's file
    listing.readings        # Reading(station, time_ms, record_type, height), oldest first
    listing.missing         # Reject per 9999.000 row (set aside, not an event)
    listing.rejects         # Reject per malformed line, with file:line and what was expected
    events = to_events(listing.readings)               # cep.events.Event, sorted by time
    write_events(listing.readings, "dart.parquet")     # for `cep run --events` (.parquet or .jsonl)

A listing is what NDBC publishes for a DART station (historical files
`NNNNNtYYYY.txt.gz`, real-time `NNNNN.dart`): two header lines

    #YY  MM DD hh mm ss T   HEIGHT
    #yr  mo dy hr mn  s -        m

then one reading per line, UTC: year (4 digits, or 2 as in NDBC's files
before 1999: 69-99 are 19xx, 00-68 are 20xx, as POSIX strptime reads %y),
month, day, hour, minute, second, the record type T (1: 15-minute, 2:
1-minute, 3: 15-second) and the water-column height in metres.

What the reader does with the format's quirks:

- `9999.000` (or any 9999 height) is NDBC's "missing": the row is set aside
  and reported in `missing`, never an event. While a buoy is in event mode
  its 15-minute rows are 9999.
- Rows may run newest-first (as NDBC serves them) or oldest-first: readings
  come out oldest-first either way.
- A timestamp may appear with several record types (a 15-minute and a
  1-minute reading at 06:15:00, a 1-minute and a 15-second one at 06:16:00).
  One reading is kept per timestamp: that of the finest record type (15-s
  over 1-min over 15-min), the highest-rate sampling the buoy made then.
  A row repeated exactly is read once. Two different heights of one record
  type at one timestamp: the first in file order is kept, the other is
  reported in `rejects`.
- A malformed line (wrong number of columns, a non-number, a date that does
  not exist, an unknown record type) is reported in `rejects` with
  `file:line` and what was expected there, and the rest of the file is read.

The events: subject the station (`dart:station21418`), predicate
`dart:waterColumnHeight`, object the height as an `xsd:decimal` (metres, the
digits as written, in canonical form: 5662.370 is "5662.37"), at the
reading's timestamp (epoch ms, start = end). The record type is not an
event by default: the reader uses it to choose among readings of one
timestamp, and a second triple per reading would double the stream for the
rules to process; `to_events(..., record_types=True)` adds
`dart:station21418 dart:recordType 2` (an xsd:integer) at the same instant
for rules that want it, and the files of `write_events` carry it in a
column `record_type` that `cep run` ignores.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from cep import terms
from cep.events import Event, Reject

NS = "http://example.org/dart#"
HEIGHT = terms.iri(NS + "waterColumnHeight")
RECORD_TYPE = terms.iri(NS + "recordType")
RECORD_TYPES = {1: "15-minute", 2: "1-minute", 3: "15-second"}
HEADER = "#YY  MM DD hh mm ss T   HEIGHT"
MISSING = 9999.0
LISTING_SUFFIXES = (".txt", ".dart", ".txt.gz", ".dart.gz")

_STATION_RE = re.compile(r"^([0-9A-Za-z]{5})(?:t\d{4})?(?:\.|$)")
_COLUMNS = ("year", "month", "day", "hour", "minute", "second", "record type T", "height")


def station_iri(station: str) -> str:
    """The station's IRI as N-Triples text: <http://example.org/dart#station21418>."""
    return terms.iri(f"{NS}station{station}")


@dataclass(frozen=True)
class Reading:
    station: str  # NDBC station id, "21418"
    time_ms: int  # UTC, epoch milliseconds
    record_type: int  # 1, 2 or 3
    height: str  # metres, the digits as written ("5662.370")
    source: str = field(default="", compare=False)  # "file:line"

    @property
    def metres(self) -> float:
        return float(self.height)


@dataclass
class Listing:
    """One file's readings and what was set aside."""

    station: str
    readings: list  # Reading, oldest first, one per timestamp
    missing: list  # Reject per 9999 row
    rejects: list  # Reject per malformed or conflicting row
    duplicates: int = 0  # rows repeated exactly, read once
    coarser: int = 0  # readings dropped for a finer record type at the same timestamp
    newest_first: bool = False  # the file ran newest-first

    def counts(self) -> dict:
        by_type = {t: 0 for t in RECORD_TYPES}
        for r in self.readings:
            by_type[r.record_type] += 1
        return by_type


class _Bad(ValueError):
    pass


def station_of(path) -> str:
    """The station id in an NDBC file name: 21413t2011.txt.gz, 21413.dart, 21413.txt."""
    m = _STATION_RE.match(Path(path).name)
    if not m:
        raise ValueError(f"{path}: cannot tell the station from the file name (NDBC names files "
                         "NNNNN.txt, NNNNN.dart or NNNNNtYYYY.txt.gz); give the station id")
    return m.group(1)


def _year(text: str) -> int:
    if len(text) == 4:
        return int(text)
    if len(text) == 2:
        yy = int(text)
        return 1900 + yy if yy >= 69 else 2000 + yy
    raise _Bad(f"year {text!r}: expected 4 digits (2011) or 2 (11)")


def parse_line(text: str) -> tuple[int, int, str]:
    """One data line -> (time_ms, record type, height as written); raises
    _Bad saying what was expected."""
    fields = text.split()
    if len(fields) != 8:
        raise _Bad(f"expected 8 columns ({HEADER[1:].split()!r}: year month day hour minute second "
                   f"record-type height), got {len(fields)}")
    for name, value in zip(_COLUMNS[:7], fields[:7]):
        if not value.isdigit():
            raise _Bad(f"{name}: expected an unsigned integer, got {value!r}")
    year = _year(fields[0])
    month, day, hour, minute, second, kind = (int(v) for v in fields[1:7])
    try:
        when = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.timezone.utc)
    except ValueError as exc:
        raise _Bad(f"no such time {'-'.join(fields[:3])} {':'.join(fields[3:6])} ({exc})") from None
    if kind not in RECORD_TYPES:
        raise _Bad(f"record type T: expected 1 (15-minute), 2 (1-minute) or 3 (15-second), got {kind}")
    height = fields[7]
    try:
        value = float(height)
    except ValueError:
        raise _Bad(f"height: expected a number of metres (like 5662.370), got {height!r}") from None
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", height) or value != value:
        raise _Bad(f"height: expected a decimal number of metres (like 5662.370), got {height!r}")
    return int(when.timestamp() * 1000), kind, height


def _text(path) -> str:
    path = Path(path)
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", "replace")


def read_listing(path, station: str | None = None, text: str | None = None) -> Listing:
    """One NDBC DART listing (a .txt/.dart file, maybe gzipped; or `text`
    read elsewhere, named `path` in reports). `station`: the station id,
    by default read from the file name."""
    name = str(path)
    station = station or station_of(path)
    if text is None:
        text = _text(path)
    missing, rejects = [], []
    rows = []  # (time_ms, record type, height, source) in file order
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{name}:{number}"
        try:
            time_ms, kind, height = parse_line(stripped)
        except _Bad as bad:
            rejects.append(Reject(where, f"malformed DART reading: {bad}; the line is skipped", line))
            continue
        if float(height) == MISSING:
            missing.append(Reject(where, f"missing value ({height}, {RECORD_TYPES[kind]} record): set aside",
                                  line))
            continue
        rows.append((time_ms, kind, height, where))
    newest_first = sum(b[0] < a[0] for a, b in zip(rows, rows[1:])) > len(rows) // 2
    chosen: dict[int, tuple] = {}
    duplicates = coarser = 0
    for row in rows:
        time_ms, kind, height, where = row
        held = chosen.get(time_ms)
        if held is None:
            chosen[time_ms] = row
        elif held[1] == kind:
            if float(held[2]) == float(height):
                duplicates += 1
            else:
                rejects.append(Reject(where, f"a second {RECORD_TYPES[kind]} reading at this time, {height} m, "
                                      f"differs from {held[2]} m at {held[3]}: the first is kept", ""))
        else:
            coarser += 1
            if kind > held[1]:
                chosen[time_ms] = row
    readings = [Reading(station, t, k, h, w) for t, k, h, w in sorted(chosen.values())]
    return Listing(station, readings, missing, rejects, duplicates, coarser, newest_first)


def listing_files(paths) -> list[Path]:
    """The listings named by `paths`: files as they are, a directory as its
    NNNNN*.txt, .dart (and gzipped) files, by name."""
    out = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir()
                           if p.is_file() and p.name.endswith(LISTING_SUFFIXES) and _STATION_RE.match(p.name))
            if not found:
                raise FileNotFoundError(f"{path}: no DART listings in it (NNNNN.txt, NNNNN.dart, "
                                        "NNNNNtYYYY.txt.gz)")
            out += found
        elif path.exists():
            out.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    return out


def read_listings(paths) -> list[Listing]:
    """The listings of `paths` (listing_files), one per file."""
    return [read_listing(p) for p in listing_files(paths)]


def _decimal(height: str) -> str:
    """A height as an xsd:decimal in canonical form (5662.370 is "5662.37"):
    the reader writes the value, not the listing's column."""
    return terms.literal(terms.canonical_lexical(height, terms.XSD_DECIMAL) or height, terms.XSD_DECIMAL)


def to_events(readings, record_types: bool = False) -> list[Event]:
    """The readings as events, sorted by time (then station)."""
    events = []
    for r in sorted(readings, key=lambda r: (r.time_ms, r.station)):
        s = station_iri(r.station)
        events.append(Event(s, HEIGHT, _decimal(r.height), r.time_ms, r.time_ms, r.source))
        if record_types:
            events.append(Event(s, RECORD_TYPE, terms.literal(str(r.record_type), terms.XSD_INTEGER),
                                r.time_ms, r.time_ms, r.source))
    return events


def events_table(readings) -> pa.Table:
    """The height events as a table cep reads (s, p, o, t in epoch ms),
    with the columns station, record_type and source besides, which the
    engine ignores."""
    rows = sorted(readings, key=lambda r: (r.time_ms, r.station))
    return pa.table({
        "s": pa.array([station_iri(r.station) for r in rows], pa.string()),
        "p": pa.array([HEIGHT] * len(rows), pa.string()),
        "o": pa.array([_decimal(r.height) for r in rows], pa.string()),
        "t": pa.array([r.time_ms for r in rows], pa.int64()),
        "station": pa.array([r.station for r in rows], pa.string()),
        "record_type": pa.array([r.record_type for r in rows], pa.int8()),
        "source": pa.array([r.source for r in rows], pa.string()),
    })


def write_events(readings, path) -> Path:
    """Write the height events where `cep run --events` reads them: a
    .parquet or a .jsonl file (the format by the extension)."""
    path = Path(path)
    table = events_table(readings)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    elif path.suffix == ".jsonl":
        with open(path, "w", encoding="utf-8") as out:
            for row in table.to_pylist():
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        raise ValueError(f"{path}: write events as .parquet or .jsonl")
    return path
