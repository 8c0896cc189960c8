"""Event files as a Spark stream: the front of `cep run --engine spark`.

Each path given to --events becomes a Spark file stream (a folder: one per
format, so that new files dropped into a watched folder are read as they
come; its own files only, not its subfolders'). Parquet is read by Spark
itself (the bulk format); its rows are checked by the workers
(cep.spark.worker), and a bad row is named `file:row N`. TriG, JSON Lines and CSV files are read whole
and parsed by the same readers as the in-process engine (cep.io), so the
records, the rejects and their `file:line` places are the same on both
engines.

The stream has the columns s, p, o, start, end (epoch ms), source, and
reason and text (set on a record that could not be read, which the engine
reports as a `reject` row), and stream (the event's stream IRI, from a
table's stream column or an --events IRI=PATH; null for none).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from cep.errors import UsageError
from cep.io.readers import COMPRESSED, FORMATS, SOCKET, format_suffix

STREAM_DDL = ("s string, p string, o string, start long, end long, source string, reason string, "
              "text string, stream string")
BINARY_FILE_DDL = "path string, modificationTime timestamp, length long, content binary"
PARQUET_DEFAULT_DDL = "s string, p string, o string, t timestamp"


def _glob_escape(name: str) -> str:
    return re.sub(r"([\[\]{}*?\\])", r"\\\1", name)


def _suffix_glob(ext: str) -> str:
    """A Hadoop glob of the names with suffix `ext` in any case (the
    in-process engine takes .JSONL as .jsonl), gzipped or not (Parquet:
    not, as Spark's reader reads it)."""
    def anycase(text):
        return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else _glob_escape(c) for c in text)

    return f"*.{anycase(ext[1:])}" if FORMATS[ext] == "parquet" else \
        f"*.{{{anycase(ext[1:])},{anycase(ext[1:] + COMPRESSED)}}}"


def _format(path: Path) -> str | None:
    """The event format of a file Spark reads, by its name (None: not an
    event file): past a .gz, except Parquet, which Spark's reader takes as
    it is."""
    fmt = FORMATS.get(format_suffix(path))
    return None if fmt == "parquet" and path.suffix.lower() == COMPRESSED else fmt


def _socket(raw: str) -> tuple[str, int] | None:
    """(host, port) of an --events tcp://HOST:PORT, else None."""
    if not raw.startswith(SOCKET):
        return None
    host, sep, port = raw[len(SOCKET):].rstrip("/").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"{raw}: expected tcp://HOST:PORT")
    return host.strip("[]"), int(port)


@dataclass(frozen=True)
class Source:
    """One Spark file stream of the input: a file, or a folder's files of
    one format."""

    path: str  # absolute
    folder: bool
    fmt: str
    stream: str  # the stream IRI of the events that name none, or ""

    @property
    def root(self) -> str:
        """The path Spark reads: the file, or the glob of the folder's files."""
        if not self.folder:
            return _glob_escape(self.path)
        ext = next(e for e, f in FORMATS.items() if f == self.fmt)
        return f"{_glob_escape(self.path)}/{_suffix_glob(ext)}"

    def files(self) -> list[Path]:
        """The files of the stream that are there now."""
        if not self.folder:
            return [Path(self.path)]
        return [p for p in sorted(Path(self.path).iterdir())
                if p.is_file() and not p.name.startswith((".", "_")) and _format(p) == self.fmt]


def sources(paths, follow: bool) -> list[Source]:
    """The Spark streams of the --events paths, in a fixed order (a
    restarted query must see its sources in the same order); IRI=PATH
    gives PATH's events that name no stream the stream IRI. A file is read
    alone; a folder as the glob of its files of each format it holds
    (every format when it is empty and followed), of which only its own
    files are kept (direct_children), as on the in-process engine: not the
    files of its subfolders, such as a file sink's (--out inside the
    folder) that Spark's listing would reach."""
    from cep.io.readers import split_stream

    out = []
    for given in paths:
        stream, raw = split_stream(given)
        if _socket(raw):
            if not follow:
                raise UsageError(f"{raw}: a socket is a stream that does not end: read it with --follow "
                                 "(the run then ends when interrupted)")
            out.append(Source(raw.rstrip("/"), False, "jsonl", stream))
            continue
        path = Path(raw).resolve()  # one path however it is written: Spark's checkpoint keeps it
        if path.is_dir():
            present = {_format(p) for p in path.iterdir()
                       if p.is_file() and not p.name.startswith((".", "_")) and _format(p)}
            if not present and not follow:
                raise UsageError(f"{raw}: the directory holds no event files ({', '.join(FORMATS)}, "
                                 f"optionally followed by {COMPRESSED} but for .parquet)")
            out += [Source(str(path), True, fmt, stream) for fmt in FORMATS.values() if fmt in present or not present]
        elif path.is_file():
            fmt = _format(path)
            if fmt is None:
                known = FORMATS.get(format_suffix(path))
                raise UsageError(f"{raw}: " + (
                    "a gzipped Parquet file: Spark's Parquet reader takes Parquet as it is (it compresses its "
                    "own pages); unzip it, or use --engine local" if known else
                    f"unknown event file type {path.suffix or '(no extension)'}; event files end in "
                    f"{', '.join(FORMATS)}, optionally followed by {COMPRESSED}"))
            out.append(Source(str(path), False, fmt, stream))
        else:
            raise UsageError(f"{raw}: no such file or directory")
    return out


def unread(streams: list[Source]) -> list[tuple[str, str, Path]]:
    """(folder, format, a file) for each type of event file in a folder of
    `streams` that they do not read: one the folder held none of when its
    streams were made (a restarted query must keep its streams)."""
    out = []
    for folder in dict.fromkeys(s.path for s in streams if s.folder):
        read = {s.fmt for s in streams if s.path == folder}
        for fmt in FORMATS.values():
            files = [] if fmt in read else Source(folder, True, fmt, "").files()
            if files:
                out.append((folder, fmt, files[0]))
    return out


def direct_children(df, column: str, folder: str):
    """The rows of `df` read from files directly in `folder` (column: their
    path as Spark names it, a URI; every file listed is under the folder,
    and one directly in it has one path segment more)."""
    from pyspark.sql import functions as F

    depth = len(f"file:{folder}".split("/")) + 1
    return df.where(F.size(F.split(F.col(column), "/")) == depth)


def stored_millis(files: list[Path]) -> tuple[str, ...]:
    """The time columns (t, t_end) that every one of the Parquet files
    stores as TIMESTAMP(MILLIS). Spark's reader turns such a time into
    microseconds, which overflow (the whole file fails, FAILED_READ_FILE)
    for a time about 292,000 years from 1970; read as the integers they
    are, such a time is a reject row like any time outside the supported
    range. (Microseconds cannot overflow so; a folder whose files store a
    column in different units keeps Spark's reading. A file that comes
    later in a followed folder is read as the first ones were.) A time
    stored in nanoseconds, which Spark's reader refuses, is a UsageError
    naming its file."""
    import pyarrow.parquet as pq

    units: dict[str, set] = {}
    for path in files:
        try:
            schema = pq.ParquetFile(path).schema
        except Exception:  # noqa: BLE001 - Spark's reader names the file (cep.spark.failures)
            return ()
        for i, name in enumerate(schema.names):
            if name not in ("t", "t_end"):
                continue
            column = schema.column(i)
            logical = json.loads(column.logical_type.to_json())
            unit = logical.get("timeUnit") if logical.get("Type") == "Timestamp" else None
            if unit == "nanoseconds":
                raise UsageError(f"{path}: column {name} holds timestamps in nanoseconds, which Spark's Parquet "
                                 "reader does not take: store them in milliseconds or microseconds (or as "
                                 "integer epoch milliseconds), or use --engine local")
            units.setdefault(name, set()).add(column.physical_type == "INT64" and unit == "milliseconds")
    return tuple(name for name, millis in units.items() if millis == {True})


def _parse_files(batches, times=None):
    """mapInPandas: whole TriG/JSON Lines/CSV files -> their records;
    `times`: the predicates of the RDF formats' times (None: PROV's)."""
    import pandas as pd

    from cep.io.event_time import PROV_TIMES
    from cep.io.readers import read_file

    columns = ["s", "p", "o", "start", "end", "source", "reason", "text", "stream"]
    for pdf in batches:
        rows = []
        for uri, content in zip(pdf["path"], pdf["content"]):
            name = _local_name(uri)
            rejects = []
            events = read_file(name, rejects, bytes(content), times=times or PROV_TIMES).to_pydict()
            rows += [(s, p, o, start, end, source, None, None, stream) for s, p, o, start, end, source, stream
                     in zip(*(events[c] for c in ("s", "p", "o", "start", "end", "source", "stream")))]
            rows += [(None, None, None, None, None, r.source, r.reason, r.text, None) for r in rejects]
        yield pd.DataFrame(rows, columns=columns).astype({"start": "Int64", "end": "Int64"})


def _local_name(uri: str) -> str:
    """A file: URI as the path users gave (messages name files as paths)."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def event_stream(spark, streams: list[Source], files_per_batch: int | None = None, times=None):
    """One streaming DataFrame (STREAM_DDL) of the events of `streams`
    (sources()); `times`: the predicates of the RDF formats' times."""
    from functools import partial

    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from cep.spark import _times

    parts = []
    for source in streams:
        if _socket(source.path):
            parts.append(socket_events(spark, source))
            continue
        # recursiveFileLookup: no partition inference, which a folder of
        # partitions (a file sink's) beside the events makes fail
        reader = spark.readStream.option("recursiveFileLookup", "true")
        if files_per_batch:
            reader = reader.option("maxFilesPerTrigger", files_per_batch)
        if source.fmt == "parquet":
            present = source.files()
            millis = stored_millis(present)  # first: it names a file of nanoseconds, which Spark's reader refuses
            schema = spark.read.parquet(*(str(p) for p in present)).schema if present else PARQUET_DEFAULT_DDL
            if millis:  # read as the integers they are: Spark's reader would overflow on a far time
                schema = T.StructType([T.StructField(f.name, T.LongType()) if f.name in millis else f
                                       for f in schema.fields])
            df = reader.schema(schema).parquet(source.root)
            missing = [c for c in ("s", "p", "o", "t") if c not in df.columns]
            if missing:
                raise UsageError(f"{source.path}: no column{'s' if len(missing) > 1 else ''} "
                                 f"{', '.join(missing)}: Parquet events need the columns s, p, o, t "
                                 "(and optionally t_end)")
            if source.folder:
                df = direct_children(df, "_metadata.file_path", source.path)
            # the file as a path, as the other formats' places and the local engine's name it
            path = F.col("_metadata.file_path")
            path = F.when(path.startswith("file:"), F.try_url_decode(F.regexp_replace(path, "^file:(//)?", "")))\
                .otherwise(path)
            place = F.concat(path, F.lit(":row "), (F.col("_metadata.row_index") + 1).cast("string"))
            df = _times(df.withColumn("source", place), millis)  # a reason on a row whose time is refused
        else:
            df = reader.schema(BINARY_FILE_DDL).format("binaryFile").load(source.root)
            if source.folder:
                df = direct_children(df, "path", source.path)
            df = df.select("path", "content").mapInPandas(partial(_parse_files, times=times), STREAM_DDL)
        if source.stream:
            df = df.withColumn("stream", F.coalesce(F.col("stream"), F.lit(source.stream)))
        parts.append(df)
    out = parts[0]
    for df in parts[1:]:
        out = out.unionByName(df)
    return out


def json_events(df, value, time, place):
    """Events (columns s, p, o, t, t_end, stream, source) of rows that each
    hold one event as a line of a .jsonl event file holds it (the column
    `value`: {"s", "p", "o", "t" [, "t_end", "stream"]}, terms in N-Triples
    syntax); `time`: the time of an event whose object has no "t" (a
    column of xsd:dateTime text, or null); `place`: the row's place, which
    a reject names. A row that is no such object has a reason and its text
    (cep.spark._times makes it a reject)."""
    from pyspark.sql import functions as F

    event = F.from_json(value, "s string, p string, o string, t string, t_end string, stream string")
    # from_json makes a row of nulls of what is not a JSON object
    keys = F.json_object_keys(value)  # from_json takes one value of a key given twice (cep.io.tables.unique_keys)
    refused = F.when(event.isNull() | event["s"].isNull() | event["p"].isNull() | event["o"].isNull(),
                     F.lit("not an event: expected a JSON object with s, p, o (N-Triples terms) and t"))\
        .when(F.size(keys) != F.size(F.array_distinct(keys)),
              F.lit("a key given twice in one object (RFC 8259 leaves its meaning to the reader)"))
    return df.select(event["s"].alias("s"), event["p"].alias("p"), event["o"].alias("o"),
                     F.coalesce(event["t"], time).alias("t"), event["t_end"].alias("t_end"),
                     event["stream"].alias("stream"), place.alias("source"), refused.alias("reason"),
                     F.when(refused.isNotNull(), F.make_valid_utf8(value)).alias("text"))


def socket_events(spark, source: Source):
    """The events of a TCP socket (Spark's socket source), one JSON Lines
    record per line (json_events), each named by the socket and the time
    it arrived. Spark's socket source keeps nothing to replay: lines that
    arrive while no query reads them are lost, and a checkpoint cannot
    bring them back."""
    from pyspark.sql import functions as F

    from cep.spark import _times

    host, port = _socket(source.path)
    lines = (spark.readStream.format("socket").option("host", host).option("port", port)
             .option("includeTimestamp", "true").load())
    arrived = F.date_format(F.col("timestamp"), "yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
    events = json_events(lines, F.col("value"), F.lit(None).cast("string"),
                         F.concat(F.lit(f"{source.path} at "), arrived))
    events = _times(events)
    if source.stream:
        events = events.withColumn("stream", F.coalesce(F.col("stream"), F.lit(source.stream)))
    return events
