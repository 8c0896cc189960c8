"""Reading event streams from files: the front of the pipeline.

Takes paths (files, or directories of files) and returns the events they
hold as one events table (cep.events.EVENTS), sorted by time, with a Reject
for every record that could not be read.
A bad record never stops the reading. The format is chosen by extension:

    .trig      timestamped named graphs (RSP-QL; see cep.io.trig)
    .jsonl     one JSON object per line with s, p, o, t [, t_end]  (cep.io.tables)
    .csv       a header row, then s, p, o, t [, t_end]              (cep.io.tables)
    .parquet   columns s, p, o, t [, t_end]                          (cep.io.tables)

A path may be given as IRI=PATH: the events of those files that name no
stream (a table's stream column) are then of the stream IRI.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from cep.errors import UsageError
from cep.events import EVENTS, Reject
from cep.io import tables, trig

FORMATS = {".trig": "trig", ".jsonl": "jsonl", ".csv": "csv", ".parquet": "parquet"}
_READERS = {
    "trig": trig.read_trig,
    "jsonl": tables.read_jsonl,
    "csv": tables.read_csv,
    "parquet": tables.read_parquet,
}


def format_of(path) -> str:
    """The input format of a file, by its extension; UsageError when unknown."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UsageError(f"{path}: unknown event file type {Path(path).suffix or '(no extension)'!s}; "
                         f"event files end in {', '.join(FORMATS)}")
    return fmt


def split_stream(raw) -> tuple[str, str]:
    """An --events argument -> (stream IRI as "<iri>" or "", path): IRI=PATH
    names the stream of a file's events; a path that exists as it is
    (with or without "=" in it) is a path."""
    raw = str(raw)
    if "=" not in raw or Path(raw).exists():
        return "", raw
    for i, c in enumerate(raw):
        if c == "=" and i > 0 and Path(raw[i + 1:]).exists():
            from cep.io.check import Invalid, stream_iri

            try:
                return stream_iri(raw[:i]), raw[i + 1:]
            except Invalid:
                raise UsageError(f"{raw}: in IRI=PATH, {raw[:i]!r} is not an IRI") from None
    return "", raw


def input_streams(paths) -> list[tuple[Path, str]]:
    """(file, stream IRI or "") for each file named by `paths` (input_files),
    an argument IRI=PATH giving its files the stream IRI."""
    out = []
    for raw in paths:
        if isinstance(raw, tuple):
            out.append(raw)
            continue
        stream, path = split_stream(raw)
        out += [(f, stream) for f in input_files([path])]
    return out


def input_files(paths) -> list[Path]:
    """The files named by `paths`: a file as it is (its extension must be
    known), a directory as its supported files, sorted by name (not
    recursive; other files in it are left alone); IRI=PATH stands for
    PATH (input_streams)."""
    out = []
    for raw in paths:
        if isinstance(raw, tuple):
            out.append(raw[0])
            continue
        path = Path(split_stream(raw)[1])
        if path.is_dir():
            found = sorted(p for p in path.iterdir()
                           if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in FORMATS)
            if not found:
                raise UsageError(f"{raw}: the directory holds no event files ({', '.join(FORMATS)})")
            out.extend(found)
        elif path.exists():
            format_of(path)
            out.append(path)
        else:
            raise UsageError(f"{raw}: no such file or directory")
    return out


def read_file(path, rejects: list, data: bytes | None = None) -> pa.Table:
    """The events table of one file, in file order; rejects are appended.
    `data`: the file's bytes when they were read elsewhere (Spark's file
    source)."""
    fmt = format_of(path)
    if data is None:
        return _READERS[fmt](path, rejects)
    return _READERS[fmt](path, rejects, data)


TIME_ORDER = [(name, "ascending") for name in ("start", "end", "s", "p", "o")]


def read_events(paths) -> tuple[pa.Table, list[Reject]]:
    """The events table of `paths` sorted by (start, end, s, p, o), and the
    rejects. The files need not be in time order: the whole input is sorted."""
    found, rejects = [], []
    for path, stream in input_streams(paths):
        table = read_file(path, rejects)
        if stream:  # IRI=PATH: the stream of the events that name none
            table = table.set_column(EVENTS.names.index("stream"), "stream",
                                     pc.fill_null(table["stream"], stream))
        found.append(table)
    events = pa.concat_tables(found) if found else EVENTS.empty_table()
    return events.sort_by(TIME_ORDER), rejects
