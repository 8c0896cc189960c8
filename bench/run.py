"""In-process engine benchmark on the W1 and W2 workloads (bench/workloads.py).

    python bench/run.py                      # W1 and W2 at 100k and 1M events
    python bench/run.py --workloads w1 --sizes 100000,1000000,2000000

Each measurement runs in a fresh process (so its peak memory is its own):
it reads the Parquet file, pushes it to the engine in batches of
--batch-size events (Engine.push_table) and counts the answers, which
come back as Arrow tables of N-Triples terms (--objects: also turns them
into Answer objects, as `cep run` does). It prints events/s, answers,
peak resident memory, and the per-event cost ratio of each size against the
smallest (a flat cost per event gives a ratio near 1.0).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402


def measure(name: str, n: int, out: Path, batch_size: int, objects: bool) -> dict:
    import pyarrow.parquet as pq

    from cep.engine import Engine
    from cep.rules import parse_rules

    path = workloads.ensure(out, name, n)
    queries = parse_rules(workloads.WORKLOADS[name][1], f"{name}.rq")
    engine = Engine(queries)
    t0 = time.perf_counter()
    table = pq.read_table(path)
    table = table.rename_columns(["s", "p", "o", "start"])
    t_read = time.perf_counter() - t0
    answers = 0
    def count(batch):
        return len(batch.to_list()) if objects else len(batch)

    for offset in range(0, table.num_rows, batch_size):
        answers += count(engine.push_table(table.slice(offset, batch_size)))
    answers += count(engine.flush_table())
    elapsed = time.perf_counter() - t0
    return {
        "workload": name,
        "events": n,
        "answers": answers,
        "seconds": round(elapsed, 3),
        "read_seconds": round(t_read, 3),
        "events_per_s": round(n / elapsed),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="w1,w2")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--batch-size", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--objects", action="store_true", help="also make Answer objects of the answers")
    ap.add_argument("--one", nargs=2, metavar=("WORKLOAD", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.out, args.batch_size, args.objects)))
        return
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = []
    for name in args.workloads.split(","):
        for n in sizes:
            workloads.ensure(args.out, name, n)
            proc = subprocess.run(
                [sys.executable, __file__, "--one", name, str(n), "--out", str(args.out),
                 "--batch-size", str(args.batch_size)] + (["--objects"] if args.objects else []),
                capture_output=True, text=True)
            if proc.returncode:
                sys.exit(f"{name} {n} failed:\n{proc.stderr}")
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            print(f"{r['workload']:>3} {r['events']:>9,} events  {r['events_per_s']:>9,} events/s  "
                  f"{r['answers']:>9,} answers  {r['seconds']:>7.2f} s  peak {r['peak_rss_mb']:>7.1f} MB",
                  flush=True)
    print("\nper-event cost relative to the smallest size (1.00 = flat):")
    for name in args.workloads.split(","):
        mine = [r for r in rows if r["workload"] == name]
        base = mine[0]["seconds"] / mine[0]["events"]
        for r in mine[1:]:
            ratio = (r["seconds"] / r["events"]) / base
            print(f"  {name} {r['events']:,} vs {mine[0]['events']:,}: {ratio:.2f}")


if __name__ == "__main__":
    main()
