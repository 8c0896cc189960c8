"""Events in time order, in bounded memory: between the readers and the engine.

Takes events tables in any order (cep.io.readers.event_batches) and gives
them back as tables of about `rows` rows in the order the in-process
engine takes them (cep.engine: non-decreasing end time; here by end,
start, s, p, o, so that a run gives the same answers in the same order
whatever the batch size), never holding the whole input:

  1. each table is sorted and written to a spill file (Arrow IPC, in a
     temporary folder: TMPDIR) as the input is read; a table that starts
     before the last one ended begins a new sorted run;
  2. the runs are read back: one run (input in time order, the usual case)
     table by table; several are merged, an instant at a time.

Memory holds a table per run (the batch size times the number of runs);
the disk holds a copy of the input's events. Answers come after the input
has ended, as the input must be complete to be ordered.

An input known to be in time order already (`in_order`: its times were
read first, cep.io.readers.in_time_order) is not spilled: its tables go on
as they are read, each sorted by its terms where events share a time,
the events of its last time held back to be sorted with the next table's.
Memory then holds a table and the largest group of events that share a time.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa

from cep.events import EVENTS

ORDER = [(name, "ascending") for name in ("end", "start", "s", "p", "o")]


def _key(table: pa.Table, row: int) -> tuple:
    return tuple(table[name][row].as_py() for name, _ in ORDER)


def time_ordered(tables, rows: int, in_order: bool = False):
    """The events of `tables` as tables in time order (ORDER) of at most
    about `rows` rows each (several runs: up to one table per run);
    `in_order`: the tables' (end, start) are known never to go back."""
    if in_order:
        yield from _passed_on(tables)
        return
    with tempfile.TemporaryDirectory(prefix="cep-order-") as folder:
        runs = _spill(tables, Path(folder), rows)
        if len(runs) == 1:
            for batch in _batches(runs[0]):
                yield pa.Table.from_batches([batch])
        elif runs:
            yield from _merge([_batches(run) for run in runs])


def _spill(tables, folder: Path, rows: int) -> list[Path]:
    """Write the tables, each sorted, to sorted runs; the runs' files."""
    runs, writer, last = [], None, None
    try:
        for table in tables:
            if not table.num_rows:
                continue
            table = _sorted(table.select(EVENTS.names).cast(EVENTS))
            if writer is None or _key(table, 0) < last:
                if writer is not None:
                    writer.close()
                runs.append(folder / f"run{len(runs)}.arrow")
                writer = pa.ipc.new_file(str(runs[-1]), EVENTS)
            writer.write_table(table, max_chunksize=rows)
            last = _key(table, table.num_rows - 1)
    finally:
        if writer is not None:
            writer.close()
    return runs


def _passed_on(tables):
    """Tables in time order from tables whose (end, start) never go back:
    each sorted (by its terms, where they share a time) with the events of
    the one before that share its last time."""
    held, last = None, None  # the events of the last time so far, and that (end, start)
    for table in tables:
        if not table.num_rows:
            continue
        table = table.select(EVENTS.names).cast(EVENTS)
        if held is not None:
            end, start = table["end"].to_numpy(), table["start"].to_numpy()
            if (end < last[0]).any() or ((end == last[0]) & (start < last[1])).any():
                raise RuntimeError("an input went back in time while it was read (was it changed meanwhile?)")
            table = pa.concat_tables([held, table])
        table = _sorted(table)
        end, start = table["end"].to_numpy(), table["start"].to_numpy()
        last = int(end[-1]), int(start[-1])
        earlier = np.nonzero((end != last[0]) | (start != last[1]))[0]
        cut = int(earlier[-1]) + 1 if len(earlier) else 0
        if cut:
            yield table.slice(0, cut)
        held = table.slice(cut)
    if held is not None:
        yield held


def _sorted(table: pa.Table) -> pa.Table:
    """The table in ORDER; as it is when its times already are (and no two
    rows share an end and a start, where the terms would decide): most
    input comes in time order, and sorting by text costs."""
    end, start = table["end"].to_numpy(), table["start"].to_numpy()
    later = np.diff(end)
    if (later > 0).all() or ((later >= 0).all() and (np.diff(start)[later == 0] > 0).all()):
        return table
    return table.sort_by(ORDER)


def _batches(path: Path):
    """The record batches of a run, read from its file (read, not mapped:
    a mapped file's pages would count in the process's memory as it is
    read through)."""
    reader = pa.ipc.open_file(pa.OSFile(str(path)))
    for i in range(reader.num_record_batches):
        yield reader.get_batch(i)


def _merge(runs):
    """Tables in time order from sorted runs (iterators of record batches):
    each time, the events that end before the first end time that a run
    may still give more of (the last end of the part of it read), so an
    instant's events are given together and in order."""
    parts = [pa.Table.from_batches([], EVENTS) for _ in runs]
    more = [True] * len(runs)

    def read(i):
        batch = next(runs[i], None)
        if batch is None:
            more[i] = False
        else:
            parts[i] = pa.concat_tables([parts[i], pa.Table.from_batches([batch])])

    for i in range(len(runs)):
        read(i)
    while any(more) or any(p.num_rows for p in parts):
        for i in range(len(runs)):
            if more[i] and not parts[i].num_rows:
                read(i)
        open_ends = [parts[i]["end"][-1].as_py() for i in range(len(runs)) if more[i] and parts[i].num_rows]
        bound = min(open_ends) if open_ends else None
        taken = []
        for i, part in enumerate(parts):
            if not part.num_rows:
                continue
            cut = part.num_rows if bound is None else \
                int(np.searchsorted(part["end"].to_numpy(), bound, side="left"))
            if cut:
                taken.append(part.slice(0, cut))
                parts[i] = part.slice(cut)
        if taken:
            yield pa.concat_tables(taken).sort_by(ORDER)
        else:  # the runs that set the bound hold nothing but its instant: read on
            for i in range(len(runs)):
                if more[i] and parts[i].num_rows and parts[i]["end"][-1].as_py() == bound:
                    read(i)
