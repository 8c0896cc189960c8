"""In-process engine benchmark on the W1 and W2 workloads (bench/workloads.py).

    python bench/run.py                      # W1 and W2 at 100k and 1M events
    python bench/run.py --workloads w1 --sizes 100000,1000000,2000000

Each measurement runs in a fresh process (so its peak memory is its own).
Before the clock starts, a separate engine of the same rules is pushed the
first --warmup events (this loads SWI-Prolog's clause indexes, Arrow's
kernels and the like; its time is printed as `warm-up`). Then the timed
part reads the Parquet file and pushes it to a new engine in batches of
--batch-size events (Engine.push_table, checked=True: the workloads' rows
are canonical by construction, as the rows `cep run`'s readers checked are;
the check of unchecked rows costs about 0.1-0.5 us an event), counting the answers, which come
back as Arrow tables of N-Triples terms (--answers: also makes each batch's
answer table, AnswerBatch.answers(), which `cep run` gives its writer).

It prints events/s, answers, the process's CPU time over the timed part
(on a shared machine the wall clock also counts the time other processes
held the cores: compare CPU figures there), peak resident memory, the per-event CPU
cost of each size relative to the smallest (1.00 = flat), and, for the largest
size, the cost and the answers of each batch: a cost per event that stays
level from batch to batch shows that state does not grow with the stream.

Each size is measured twice: from a cold start (the stream's first N
events, as the workloads define them), and in steady state (the engine is
first pushed, untimed, one window of the stream, workloads.WINDOW_EVENTS,
and the clock runs over the N events after it). A cold run starts with no
partial matches, so its first window has fewer answers per event than the
rest of the stream; the steady runs compare like with like.

    python bench/run.py --one w2 100000 steady --prolog-profile

measures one size in this process and prints SWI-Prolog's profile of the
timed part (show_profile/1, CPU time per predicate) before its figures;
with --hash it also prints a SHA-256 of the timed part's answers, in order
(its own CPU time left out), so two trees can be shown to answer alike.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402
from memory import status_mb  # noqa: E402


def measure(name: str, n: int, out: Path, batch_size: int, answer_table: bool, warmup: int, steady: bool,
            profile: bool = False, answer_hash: bool = False) -> dict:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from cep.engine import Engine
    from cep.rules import parse_rules

    prefix = workloads.WINDOW_EVENTS[name] if steady else 0
    path = workloads.ensure(out, name, n + prefix)
    queries = parse_rules(workloads.WORKLOADS[name][1], f"{name}.rq")

    digest = hashlib.sha256() if answer_hash else None
    hashing = [0.0]  # CPU seconds spent on the digest, taken out of the figures

    def count(batch, timed=True):
        if digest is not None and timed:
            c0 = time.process_time()
            table = batch.table
            if table.num_rows:
                columns = [pc.cast(column, pa.string()) for column in table.columns]
                lines = pc.binary_join_element_wise(*columns, "\t", null_handling="replace", null_replacement="")
                lines = lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines
                offsets, data = lines.buffers()[1:]  # a new array: its offsets start at 0
                ends = memoryview(offsets).cast("i")[: len(lines) + 1]
                digest.update(ends)
                digest.update(memoryview(data)[: ends[-1]] if data else b"")
            hashing[0] += time.process_time() - c0
        return batch.answers().num_rows if answer_table else len(batch)

    t0 = time.perf_counter()
    if warmup:
        first = pq.read_table(path).slice(0, warmup).rename_columns(["s", "p", "o", "start"])
        warm = Engine(queries)
        count(warm.push_table(first, checked=True), timed=False)
        count(warm.flush_table(final=True), timed=False)
    t_warm = time.perf_counter() - t0

    engine = Engine(queries)
    if prefix:  # the window before the measured events, untimed
        table = pq.read_table(path).rename_columns(["s", "p", "o", "start"])
        for offset in range(0, prefix, batch_size):
            count(engine.push_table(table.slice(offset, min(batch_size, prefix - offset)), checked=True), timed=False)
    if profile:  # SWI-Prolog's profiler over the timed part (printed before the figures)
        list(engine.session.prolog.query("profiler(_, cputime)"))
    t0, c0 = time.perf_counter(), time.process_time()
    table = pq.read_table(path).slice(prefix)
    table = table.rename_columns(["s", "p", "o", "start"])
    t_read = time.perf_counter() - t0
    answers = 0
    slices = []
    for offset in range(0, table.num_rows, batch_size):
        t1 = time.perf_counter()
        got = count(engine.push_table(table.slice(offset, batch_size), checked=True))
        slices.append((round(time.perf_counter() - t1, 3), got))
        answers += got
    answers += count(engine.flush_table(final=True))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0 - hashing[0]
    if profile:
        list(engine.session.prolog.query("profiler(_, false), show_profile([top(40)])"))
    return {
        "workload": name,
        "mode": "steady" if steady else "cold",
        "events": n,
        "answers": answers,
        "seconds": round(elapsed, 3),
        "read_seconds": round(t_read, 3),
        "warmup_seconds": round(t_warm, 3),
        "events_per_s": round(n / elapsed),
        "cpu_seconds": round(cpu, 3),
        "events_per_cpu_s": round(n / cpu),
        "peak_rss_mb": status_mb("VmHWM"),  # not ru_maxrss: see memory.status_mb
        "batches": slices,
        **({"answer_sha256": digest.hexdigest()} if digest is not None else {}),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="w1,w2")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--batch-size", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--answers", action="store_true", help="also make the answer table of each batch")
    ap.add_argument("--warmup", type=int, default=10_000, help="events pushed to a throwaway engine first")
    ap.add_argument("--modes", default="cold,steady", help="cold, steady or both (see above)")
    ap.add_argument("--one", nargs=3, metavar=("WORKLOAD", "N", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--prolog-profile", action="store_true",
                    help="with --one: print SWI-Prolog's profile of the timed part (show_profile/1)")
    ap.add_argument("--hash", action="store_true",
                    help="with --one: also print a SHA-256 of the timed part's answers, in order "
                         "(its CPU time is left out of the figures), to compare two trees")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.out, args.batch_size, args.answers,
                                 args.warmup, args.one[2] == "steady", args.prolog_profile, args.hash)))
        return
    sizes = [int(x) for x in args.sizes.split(",")]
    modes = args.modes.split(",")
    rows = []
    for name in args.workloads.split(","):
        for mode in modes:
            for n in sizes:
                proc = subprocess.run(
                    [sys.executable, __file__, "--one", name, str(n), mode, "--out", str(args.out),
                     "--batch-size", str(args.batch_size), "--warmup", str(args.warmup)]
                    + (["--answers"] if args.answers else []),
                    capture_output=True, text=True)
                if proc.returncode:
                    sys.exit(f"{name} {n} {mode} failed:\n{proc.stderr}")
                rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
                r = rows[-1]
                print(f"{r['workload']:>3} {r['mode']:>6} {r['events']:>9,} events  {r['events_per_s']:>9,} events/s  "
                      f"{r['answers']:>9,} answers  {r['seconds']:>7.2f} s  (CPU {r['cpu_seconds']:.2f} s: "
                      f"{r['events_per_cpu_s']:,} events/s)  peak {r['peak_rss_mb']:>7.1f} MB  "
                      f"(warm-up {r['warmup_seconds']:.2f} s)", flush=True)
    print("\nper-event cost (CPU time) relative to the smallest size (1.00 = flat):")
    for name in args.workloads.split(","):
        for mode in modes:
            mine = [r for r in rows if r["workload"] == name and r["mode"] == mode]
            base = mine[0]["cpu_seconds"] / mine[0]["events"]
            for r in mine[1:]:
                ratio = (r["cpu_seconds"] / r["events"]) / base
                print(f"  {name} {mode:>6} {r['events']:,} vs {mine[0]['events']:,}: {ratio:.2f}  "
                      f"(answers per event {mine[0]['answers'] / mine[0]['events']:.2f} "
                      f"and {r['answers'] / r['events']:.2f})")
    print(f"\nbatch by batch at the largest size ({args.batch_size:,} events a batch): "
          "µs per event / answers per event")
    for name in args.workloads.split(","):
        largest = [r for r in rows if r["workload"] == name and r["mode"] == modes[0]][-1]
        cells = [f"{1e6 * sec / args.batch_size:.1f}/{got / args.batch_size:.2f}" for sec, got in largest["batches"]]
        print(f"  {name}: " + "  ".join(cells))


if __name__ == "__main__":
    main()
