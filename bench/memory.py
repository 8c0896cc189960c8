"""Memory over a long stream: the in-process engine on 4,000,000 events of
W2 (the paper's query (1) within an hour) and W3 (each company's average
price over a sliding window, RANGE 1h STEP 5m), and of WCOUNT (a count
window of the last 1,000 events of three triples each), bench/workloads.py.

    python bench/memory.py                       # W2, W3, W3 with two windows and WCOUNT, 4M events
    python bench/memory.py --workloads w3 --sizes 1000000,2000000

w3_two is W3's ticks read over two named windows of different sizes (an
hour, and 10 minutes in a group with a window of its own; workloads.py).

Each workload runs in a fresh process, which reads its Parquet file in
batches, streamed a buffer at a time (so the input is never all in memory,
and the reader's own memory stays level), and pushes them to one engine
(Engine.push_table), counting the answers. At each size it prints:
events/s over the whole run so far and over the last stretch (wall clock),
events per CPU second of the process over the whole run (what the engine
costs, whatever else the machine runs), the peak and
current resident memory of the process, and the engine's state (its goal
stores and window contents, Engine.state(), in bytes). Once the windows are
full (after the first hour of event time: 60,000 events), a bounded engine
keeps its state and memory level while the stream goes on.

Resident memory is what is in use and what the allocators keep of what was
freed, which comes and goes with the order of frees, so beside it are the
bytes in use: glibc malloc's (Prolog's clauses, atoms and stacks, and
Python's larger objects; mallinfo2), Arrow's buffers (its own pool,
mimalloc, whose freed pages stay resident: 90-130 MB of them on w3_two
while Arrow holds 21 MB), and Prolog's atom count (each solution in a
window is keyed by an atom, the hash of its bindings: data, bounded by the
windows). A leak grows these; the allocators' retention does not. Last, it checks
the answers at each size against the number worked out from the data
alone (workloads.expected_answers) and fails where they differ.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import pyarrow.parquet as pq  # noqa: E402
import workloads  # noqa: E402


def status_mb(field: str) -> float:
    """VmRSS (resident now) or VmHWM (its peak) of this process, in MB.
    The peak is not getrusage's ru_maxrss: a process started by exec keeps
    its parent's when that is higher, and the parent that has just made
    the workload's Parquet file holds four times what the engine does."""
    with open("/proc/self/status") as f:
        kb = next(line.split()[1] for line in f if line.startswith(field + ":"))
    return round(int(kb) / 1024, 1)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def in_use(engine) -> dict:
    """The memory in use under the resident figure: glibc malloc's bytes
    in use (None without mallinfo2, glibc 2.33), Arrow's pool's, in MB, and
    SWI-Prolog's atoms in use (collected first, so that a collection due
    or not does not move the count)."""
    import pyarrow as pa

    libc = ctypes.CDLL(None)
    malloc = None
    if hasattr(libc, "mallinfo2"):
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
        malloc = round((info.uordblks + info.hblkhd) / 2**20, 1)
    atoms = list(engine.session.prolog.query("garbage_collect_atoms, statistics(atoms, N)"))[0]["N"]
    return {"malloc_mb": malloc, "arrow_mb": round(pa.total_allocated_bytes() / 2**20, 1), "atoms": atoms}


def measure(name: str, sizes: list[int], out: Path, batch_size: int):
    """The figures of the workload at each size, as each is reached."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cep.engine import Engine
    from cep.rules import parse_rules

    path = workloads.ensure(out, name, sizes[-1])
    engine = Engine(parse_rules(workloads.WORKLOADS[name][1], f"{name}.rq"))
    pushed, answers, clock, cpu, last = 0, 0, 0.0, 0.0, (0, 0.0)
    marks = list(sizes)
    # Read as a stream, a buffer at a time: Arrow's pre-buffering (the default)
    # keeps the column chunks of the row groups read so far, and the reader
    # would grow by them while the engine stays level.
    reader = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
    for batch in reader.iter_batches(batch_size=batch_size):
        table = pa.Table.from_batches([batch])  # s, p, o, t [, source]: t is the events' start
        table = table.rename_columns(["s", "p", "o", "start", *table.column_names[4:]])
        t0, c0 = time.perf_counter(), time.process_time()
        answers += len(engine.push_table(table, checked=True))
        clock += time.perf_counter() - t0
        cpu += time.process_time() - c0
        pushed += table.num_rows
        if marks and pushed >= marks[0]:
            marks.pop(0)
            t0, c0 = time.perf_counter(), time.process_time()
            answers += len(engine.flush_table(final=False))  # the instant held back (the stream goes on)
            clock += time.perf_counter() - t0
            cpu += time.process_time() - c0
            state = len(engine.state())  # untimed
            yield {
                "workload": name, "events": pushed, "answers": answers,
                "events_per_s": round(pushed / clock),
                "stretch_events_per_s": round((pushed - last[0]) / (clock - last[1])),
                "events_per_cpu_s": round(pushed / cpu),
                "peak_rss_mb": status_mb("VmHWM"),
                "rss_mb": status_mb("VmRSS"),
                **in_use(engine),  # untimed
                "state_bytes": state,
            }
            last = (pushed, clock)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="w2,w3,w3_two,wcount")
    ap.add_argument("--sizes", default="1000000,2000000,4000000")
    ap.add_argument("--batch-size", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--one", metavar="WORKLOAD", help=argparse.SUPPRESS)
    args = ap.parse_args()
    sizes = sorted(int(x) for x in args.sizes.split(","))
    if args.one:  # a line per size as it is reached: a long run shows its first sizes
        for row in measure(args.one, sizes, args.out, args.batch_size):
            print(json.dumps(row), flush=True)
        return
    print(f"{'workload':8} {'events':>9} {'events/s':>9} {'last stretch':>12} {'per CPU s':>9} {'peak MB':>8} "
          f"{'RSS MB':>7} {'malloc MB':>9} {'Arrow MB':>8} {'atoms':>7} {'state bytes':>12} {'answers':>10}")
    wrong = []
    for name in args.workloads.split(","):
        rows = []
        path = workloads.ensure(args.out, name, sizes[-1])  # here: its making is not the engine's memory
        with subprocess.Popen([sys.executable, __file__, "--one", name, "--sizes", args.sizes,
                               "--batch-size", str(args.batch_size), "--out", str(args.out)],
                              stdout=subprocess.PIPE, text=True) as run:
            for line in run.stdout:
                r = json.loads(line)
                rows.append(r)
                print(f"{r['workload']:8} {r['events']:>9,} {r['events_per_s']:>9,} {r['stretch_events_per_s']:>12,} "
                      f"{r['events_per_cpu_s']:>9,} {r['peak_rss_mb']:>8} {r['rss_mb']:>7} {str(r['malloc_mb']):>9} "
                      f"{r['arrow_mb']:>8} {r['atoms']:>7,} {r['state_bytes']:>12,} "
                      f"{r['answers']:>10,}", flush=True)
        if run.returncode:
            raise SystemExit(f"{name}: the measuring process failed ({run.returncode})")
        # the answers against those worked out from the data alone (here, not
        # in the measuring process, whose memory is measured)
        ticks = pq.read_table(path, columns=["o"])
        for r in rows:
            expected = workloads.expected_answers(name, ticks.slice(0, r["events"]))
            if expected is None:
                print(f"{name:8} {r['events']:>9,} answers not checked")
            elif expected != r["answers"]:
                wrong.append(f"{name} at {r['events']:,} events: {r['answers']:,} answers, expected {expected:,}")
            else:
                print(f"{name:8} {r['events']:>9,} answers as expected", flush=True)
    if wrong:
        raise SystemExit("wrong answer counts: " + "; ".join(wrong))


if __name__ == "__main__":
    main()
