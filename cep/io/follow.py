"""Following inputs as they grow (`cep run --follow` on the in-process
engine): what `tail -f` does, for event files written a line at a time.

Takes inputs (cep.io.readers.Input: files, or standard input) of a
line-based format (FOLLOWED_FORMATS); gives their events as tables, in
the order the lines are appended, and None each time every input has been
read to its current end: the caller then completes the instant it holds
back (cep.engine.Engine.flush_table(final=False)), so that answers come as
the events arrive. A file is followed until the run is interrupted (a
file truncated, or replaced by a shorter one, is read again from its
start); standard input until it ends.

Each input is read by a thread of its own (a file at its end waits for
more; standard input blocks), through a bounded queue: a reader ahead of
the engine waits for it, so memory stays bounded. The lines of a file are
numbered as in a whole read, and its rejects name them.

Events wait for the watermark, as on the Spark engine (Watermark,
watermarked): the latest end read, less the lateness (`--lateness`), and
are then given in time order, so that answers do not depend on the order
of arrival within the lateness. An event that ends before the watermark
is late, reported and set aside. Standard input that ends gives the
events still waiting (the end of the input passes every event).
"""

from __future__ import annotations

import os
import queue
import select
import stat
import sys
import threading
import time

import pyarrow as pa
import pyarrow.compute as pc

from cep.errors import UsageError
from cep.events import EVENTS, late_rejects
from cep.io.readers import COMPRESSED, STDIN, Input, table_batches

FOLLOWED_FORMATS = ("nt", "nq", "jsonl", "csv")  # read a line at a time: a line appended is a record
POLL_SECONDS = 0.2  # how often a file at its end is looked at again
QUEUE_TABLES = 4  # tables read ahead of the engine, per run


def check_followed(sources: list[Input]) -> None:
    """UsageError for an input that cannot be followed, with the reason."""
    for source in sources:
        if source.path.lower().endswith(COMPRESSED):
            raise UsageError(f"--follow {source.path}: a gzip file cannot be followed as it grows (its end is "
                             "written when it is closed); follow the uncompressed file, or pipe it: "
                             f"zcat FILE | cep run ... --events {STDIN} --events-format FORMAT --follow")
        if source.fmt not in FOLLOWED_FORMATS:
            whole = "a TriG statement may span lines" if source.fmt == "trig" else "a Parquet file is written whole"
            raise UsageError(f"--follow {source.name}: {source.fmt} cannot be followed a line at a time ({whole}); "
                             f"follow one of {', '.join(FOLLOWED_FORMATS)} (N-Quads holds what TriG does, a line each)")


class Growing:
    """The bytes of a file as it grows, or of standard input: read1 gives
    what is there, waiting at the end of a file for more (b"" only once
    `stop` is set, or at the end of standard input); `idle` says whether
    everything there now has been read (cep.io.lines yields its lines then)."""

    def __init__(self, path: str, stop: threading.Event):
        self.fd = sys.stdin.fileno() if path == STDIN else os.open(path, os.O_RDONLY)
        self.owned = path != STDIN
        self.path, self.stop = path, stop
        self.regular = stat.S_ISREG(os.fstat(self.fd).st_mode)  # a file (else a pipe or terminal: no size)
        self.pos = 0

    def read1(self, size: int = -1) -> bytes:
        size = size if size and size > 0 else 1 << 20
        while not self.stop.is_set():
            if not self.regular:  # a pipe: blocks until there is more; b"" when it ends
                return os.read(self.fd, size)
            data = os.read(self.fd, size)
            if data:
                self.pos += len(data)
                return data
            if os.fstat(self.fd).st_size < self.pos or self._replaced():
                self._reopen()
                continue
            time.sleep(POLL_SECONDS)
        return b""

    read = read1

    @property
    def idle(self) -> bool:
        if self.regular:
            return os.fstat(self.fd).st_size <= self.pos
        return not select.select([self.fd], [], [], 0)[0]

    def _replaced(self) -> bool:
        """Whether the path now names another file (a log rotated)."""
        if not self.owned:
            return False
        try:
            now = os.stat(self.path)
        except OSError:
            return False
        was = os.fstat(self.fd)
        return (now.st_ino, now.st_dev) != (was.st_ino, was.st_dev)

    def _reopen(self) -> None:
        if self.owned:
            os.close(self.fd)
            self.fd = os.open(self.path, os.O_RDONLY)
        else:
            os.lseek(self.fd, 0, os.SEEK_SET)
        self.pos = 0

    def close(self) -> None:
        if self.owned:
            os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Queued:
    """The rejects list of a reader thread: each reject goes on the queue."""

    def __init__(self, out: queue.Queue):
        self.out = out

    def append(self, reject) -> None:
        self.out.put(("reject", reject))


def followed_batches(sources: list[Input], rejects, rows: int, stop: threading.Event | None = None):
    """The events tables of the inputs as they grow (see the module's
    docstring), and None whenever all of them are read to their end for
    now; rejects are appended (by this thread) as they come. `stop` set
    (Ctrl-C): the inputs end there, at the next look."""
    check_followed(sources)
    out: queue.Queue = queue.Queue(QUEUE_TABLES)
    stop = stop or threading.Event()

    def read(source: Input) -> None:
        try:
            with Growing(source.path, stop) as handle:
                for table in table_batches(handle, source, _Queued(out), rows):
                    out.put(("events", table))
        except BaseException as exc:  # noqa: BLE001 - the run's thread reports it
            out.put(("failed", exc))
        out.put(("ended", source))

    for source in sources:
        threading.Thread(target=read, args=(source,), name=f"cep-follow {source.name}", daemon=True).start()
    reading, fresh = len(sources), False  # fresh: events given since the last None
    try:
        while reading and not stop.is_set():
            try:
                kind, item = out.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if fresh:
                    fresh = False
                    yield None
                continue
            if kind == "events":
                fresh = True
                yield item
            elif kind == "reject":
                rejects.append(item)
            elif kind == "failed":
                raise item
            else:
                reading -= 1
    finally:
        stop.set()  # the file readers end at their next look (standard input, blocked, ends with the process)


class Watermark:
    """The lateness buffer of a followed run, what Spark's watermark is to
    the Spark engine (cep.spark.run): events wait until the watermark, the
    latest end read less `lateness_ms`, passes them (ends before it), and
    are then given in time order. An event that ends before the watermark
    when it is read is late: set aside in `late`, with the reason."""

    def __init__(self, lateness_ms: int, late: list):
        self.lateness_ms = lateness_ms
        self.time: int | None = None  # the watermark; None until an event is read
        self.waiting = EVENTS.empty_table()
        self.late = late

    def ready(self, table: pa.Table) -> pa.Table:
        """Take the events of `table`; give the waiting events the
        watermark has now passed, in time order."""
        if self.time is not None:
            late = pc.less(table["end"], self.time)
            if pc.any(late).as_py():
                self._set_aside(table.filter(late))
                table = table.filter(pc.invert(late))
        waiting = pa.concat_tables([self.waiting, table.select(EVENTS.names).cast(EVENTS)])
        if not waiting.num_rows:
            return waiting
        time = pc.max(waiting["end"]).as_py() - self.lateness_ms
        time = time if self.time is None else max(time, self.time)
        passed = pc.less(waiting["end"], time)
        self.waiting, self.time = waiting.filter(pc.invert(passed)), time
        return _in_time_order(waiting.filter(passed))

    def rest(self) -> pa.Table:
        """The end of the input: every waiting event, in time order."""
        waiting, self.waiting = self.waiting, EVENTS.empty_table()
        return _in_time_order(waiting)

    def _set_aside(self, table: pa.Table) -> None:
        self.late.extend(late_rejects(table, self.time, "where the watermark was (the latest end read, less the "
                                                        "lateness)"))


def _in_time_order(table: pa.Table) -> pa.Table:
    return table.sort_by([("end", "ascending"), ("start", "ascending")])


def watermarked(batches, watermark: Watermark):
    """followed_batches through `watermark`: the events it has passed, in
    time order, and None at each pause; when the inputs end (standard
    input), every event still waiting."""
    for batch in batches:
        if batch is None:
            yield None
            continue
        ready = watermark.ready(batch)
        if ready.num_rows:
            yield ready
    rest = watermark.rest()
    if rest.num_rows:
        yield rest
