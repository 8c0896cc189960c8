"""Reading event streams: the front of the pipeline.

Takes paths (files, directories of files, or "-" for standard input) and
gives the events they hold as events tables (cep.events.EVENTS) of at most
`rows` rows each, read incrementally: a file is never held whole (TriG
is read a window of `rows` statements at a time, cep.io.trig), so memory
is bounded by the batch size and not by the input. Every record that cannot be read becomes a Reject (with its
file:line) and the reading goes on. The format is chosen by extension,
after an optional .gz (gzip-compressed, any format):

    .trig      timestamped named graphs (RSP-QL; see cep.io.trig)
    .nq        N-Quads: a named graph is an event, timed as in TriG (cep.io.nquads)
    .nt        N-Triples: a subject is an event, timed as in TriG (cep.io.nquads)
    .jsonl     one JSON object per line with s, p, o, t [, t_end]  (cep.io.tables)
    .csv       a header row, then s, p, o, t [, t_end]              (cep.io.tables)
    .parquet   columns s, p, o, t [, t_end]                          (cep.io.tables)

Standard input ("-") has no extension: its format is given (--events-format).
A path may be given as IRI=PATH: the events of those files that name no
stream (a table's stream column) are then of the stream IRI.

    for table in event_batches(inputs(["a.nq.gz", "-"], "nq"), rejects, 50_000): ...
    for table in time_ordered(batches, 50_000, in_time_order(sources)): ...  # the engine's order (cep.io.order)
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cep.errors import UsageError
from cep.events import EVENTS, Reject
from cep.io import check, nquads, tables, trig
from cep.io.event_time import PROV_TIMES, TimePredicates

FORMATS = {".trig": "trig", ".nq": "nq", ".nt": "nt", ".jsonl": "jsonl", ".csv": "csv", ".parquet": "parquet"}
COMPRESSED = ".gz"
STDIN = "-"
SOCKET = "tcp://"  # --events tcp://HOST:PORT: a socket of JSON Lines, read by the Spark engine (cep.spark.sources)
_BATCHES = {
    "trig": trig.trig_batches,
    "nq": nquads.nquads_batches,
    "nt": nquads.ntriples_batches,
    "jsonl": tables.jsonl_batches,
    "csv": tables.csv_batches,
    "parquet": tables.parquet_batches,
}
DEFAULT_ROWS = 50_000


def format_suffix(path) -> str:
    """The format's extension of a file name, past a .gz."""
    p = Path(str(path))
    if p.suffix.lower() == COMPRESSED:
        p = p.with_suffix("")
    return p.suffix.lower()


def format_of(path, given: str | None = None) -> str:
    """The input format of a file, by its extension (after a .gz), or
    `given` (standard input has none); UsageError when unknown."""
    if given:
        if given not in _BATCHES:
            raise UsageError(f"unknown event format {given!r}; choose one of {', '.join(_BATCHES)}")
        return given
    if str(path) == STDIN:
        raise UsageError(f"--events {STDIN} (standard input) needs its format: "
                         f"--events-format {'|'.join(_BATCHES)}")
    fmt = FORMATS.get(format_suffix(path))
    if fmt is None:
        raise UsageError(f"{path}: unknown event file type {format_suffix(path) or '(no extension)'!s}; "
                         f"event files end in {', '.join(FORMATS)} (optionally followed by {COMPRESSED})")
    return fmt


@dataclass(frozen=True)
class Input:
    """One input: a file or standard input, its format, the stream IRI
    its events that name none are of ("" for none), and the predicates
    that time its events in the RDF formats (cep.io.event_time)."""

    path: str
    fmt: str
    stream: str = ""
    times: TimePredicates = PROV_TIMES

    @property
    def name(self) -> str:
        """How the places of its records name it."""
        return "<stdin>" if self.path == STDIN else check.file_name(self.path)


def split_stream(raw) -> tuple[str, str]:
    """An --events argument -> (stream IRI as "<iri>" or "", path): IRI=PATH
    names the stream of a file's events; a path that exists as it is
    (with or without "=" in it) is a path."""
    raw = str(raw)
    if "=" not in raw or Path(raw).exists():
        return "", raw
    for i, c in enumerate(raw):
        path = raw[i + 1:]
        if c == "=" and i > 0 and (Path(path).exists() or path == STDIN or path.startswith(SOCKET)):
            from cep.io.check import Invalid, stream_iri

            try:
                return stream_iri(raw[:i]), raw[i + 1:]
            except Invalid:
                raise UsageError(f"{raw}: in IRI=PATH, {raw[:i]!r} is not an IRI") from None
    return "", raw


def inputs(paths, fmt: str | None = None, times: TimePredicates = PROV_TIMES) -> list[Input]:
    """The inputs named by `paths`: a file as it is (its format known by its
    extension, else `fmt`), "-" as standard input (in format `fmt`), a
    directory as its event files, sorted by name (not recursive; other
    files in it are left alone); IRI=PATH gives the events of PATH that
    name no stream the stream IRI. Missing paths and unknown formats are a
    UsageError, before anything is read."""
    out = []
    for raw in paths:
        if isinstance(raw, Input):
            out.append(raw)
            continue
        stream, given = split_stream(raw)
        path = Path(given)
        if given == STDIN:
            if any(i.path == STDIN for i in out):
                raise UsageError(f"--events names standard input ({STDIN}) twice")
            out.append(Input(STDIN, format_of(STDIN, fmt), stream, times))
        elif path.is_dir():
            found = sorted(p for p in path.iterdir()
                           if p.is_file() and not p.name.startswith(".") and format_suffix(p) in FORMATS)
            if not found:
                raise UsageError(f"{raw}: the directory holds no event files ({', '.join(FORMATS)})")
            out += [Input(str(p), format_of(p), stream, times) for p in found]
        elif path.exists():  # its extension says its format; `fmt` that of a file whose name does not
            out.append(Input(given, FORMATS.get(format_suffix(path)) or format_of(path, fmt), stream, times))
        else:
            raise UsageError(f"{raw}: no such file or directory")
    return out


def input_files(paths) -> list[Path]:
    """The files named by `paths` (inputs)."""
    return [Path(i.path) for i in inputs(paths)]


# ------------------------------------------------------------ reading


def open_input(path, data: bytes | None = None):
    """A binary stream of an input's bytes, decompressed when its name ends
    in .gz. `data`: the bytes when they were read elsewhere (Spark's file
    source)."""
    if data is not None:
        raw = io.BytesIO(data)
    elif str(path) == STDIN:  # closing it leaves standard input open
        raw = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115
    else:
        raw = open(path, "rb")  # noqa: SIM115
    if not str(path).lower().endswith(COMPRESSED):
        return raw
    handle = gzip.GzipFile(fileobj=raw, mode="rb")
    handle.myfileobj = raw  # GzipFile.close closes its myfileobj (not a fileobj it was given)
    return handle


# what reading a damaged or cut compressed file raises, past the first bytes
READ_ERRORS = (OSError, EOFError, zlib.error)


def read_failure(exc: BaseException) -> str:
    """The reason of a Reject for a file that could not be read on."""
    if isinstance(exc, EOFError):
        return "the compressed file is cut short (it ends before its end-of-stream marker); the rest is lost"
    if isinstance(exc, (zlib.error, gzip.BadGzipFile)):
        return f"the compressed file is damaged ({exc}); the rest is lost"
    return f"cannot read the file: {getattr(exc, 'strerror', None) or exc}"


def file_batches(source: Input, rejects: list, rows: int = DEFAULT_ROWS, data: bytes | None = None):
    """The events tables of one input, in file order, each of at most about
    `rows` rows; rejects are appended as they are found. The stream IRI of
    the input (IRI=PATH) goes to its events that name none."""
    try:
        handle = open_input(source.path, data)
    except OSError as exc:
        rejects.append(Reject(source.name, read_failure(exc)))
        return
    with handle:
        yield from table_batches(handle, source, rejects, rows)


def table_batches(handle, source: Input, rejects: list, rows: int = DEFAULT_ROWS):
    """The events tables of an open input (a binary stream) in `source`'s
    format (file_batches; cep.io.follow gives a growing file's)."""
    for table in _BATCHES[source.fmt](handle, source, rejects, rows):
        if source.stream and table.num_rows:
            table = table.set_column(EVENTS.names.index("stream"), "stream",
                                     pc.fill_null(table["stream"], source.stream))
        if table.num_rows:
            yield table


def event_batches(sources, rejects: list, rows: int = DEFAULT_ROWS):
    """The events tables of the inputs, one input after the other (file_batches)."""
    for source in sources:
        yield from file_batches(source, rejects, rows)


def in_time_order(sources, rows: int = DEFAULT_ROWS) -> bool:
    """Whether the events of the inputs, one input after the other, come in
    time order (their (end, start) never going back), as their time columns
    alone tell: so for Parquet files only (read twice then: the times,
    then the events), and False for any other input (an input in another
    format is known to be in order only once it is read whole)."""
    last = None  # (end, start) of the last event so far
    for source in sources:
        if source.fmt != "parquet" or source.path == STDIN or source.path.lower().endswith(COMPRESSED):
            return False
        for times in tables.parquet_times(source.path, rows):
            if times is None:  # a time the reading sets aside: leave the order to cep.io.order
                return False
            start, end = times
            if not len(end):
                continue
            if last is not None and (end[0], start[0]) < last:
                return False
            later = np.diff(end)
            if (later < 0).any() or (np.diff(start)[later == 0] < 0).any():
                return False
            last = (end[-1], start[-1])
    return True


def read_file(path, rejects: list, data: bytes | None = None, fmt: str | None = None,
              times: TimePredicates = PROV_TIMES) -> pa.Table:
    """The events table of one file, in file order, whole; rejects are
    appended. `data`: the file's bytes when they were read elsewhere
    (Spark's file source); `times`: the predicates of its events' times."""
    source = Input(str(path), format_of(path, fmt), times=times)
    found = list(file_batches(source, rejects, DEFAULT_ROWS, data))
    return pa.concat_tables(found) if found else EVENTS.empty_table()


TIME_ORDER = [(name, "ascending") for name in ("start", "end", "s", "p", "o")]


def read_events(paths) -> tuple[pa.Table, list[Reject]]:
    """The events of `paths` as one table sorted by (start, end, s, p, o),
    and the rejects: for tests and small programs (a run reads its input
    in batches: event_batches, cep.io.order.time_ordered)."""
    rejects: list = []
    found = list(event_batches(inputs(paths), rejects))
    events = pa.concat_tables(found) if found else EVENTS.empty_table()
    return events.sort_by(TIME_ORDER), rejects
