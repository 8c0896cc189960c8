"""The command against the engine: `cep run --engine local` end to end
(Parquet in, JSON Lines out) beside the engine alone (Arrow in, answer
tables out, as bench/run.py --answers measures it) on W1 (bench/workloads.py).

    python bench/cli.py                          # W1 at 500k and 1M events
    python bench/cli.py --sizes 1000000,2000000 --batch-size 100000
    python bench/cli.py --repeat 3               # each measurement 3 times, the least CPU of each kept

Each measurement is a fresh process; its CPU time (user + system, from
the kernel's accounting of the child) is what is compared, since this
machine is shared and wall-clock time says more about the neighbours
than about the code; even CPU time grows with the neighbours (caches,
memory bandwidth), never shrinks, so with --repeat the least of the
runs of each measurement is kept (the runs alternate). The marginal rate between the two sizes,
(N2 - N1) / (cpu(N2) - cpu(N1)), leaves out what every run pays once
(imports, compiling the rules, starting SWI-Prolog). Both paths must give
N/2 answers (W1 has exactly one answer per pair of events). The CPU the
kernel spends putting the answers' bytes in a file of the output's folder
(a child writing as many bytes, and nothing else) is measured beside
them: that much of cep run's time is the file system's, not cep's. The
peak memory of each is the child's own (VmHWM: memory.status_mb), which
the child prints at its end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402

# `python -m cep ...` as the command line runs it, the peak of its memory (VmHWM) said last on standard
# error: the kernel's ru_maxrss of a child is its parent's when that is higher (see memory.status_mb)
CEP_WITH_PEAK = (f"import atexit, runpy, sys; sys.path.insert(0, {str(HERE)!r}); from memory import status_mb; "
                 "atexit.register(lambda: print('peak', status_mb('VmHWM'), file=sys.stderr)); "
                 "sys.argv[0] = 'cep'; runpy.run_module('cep', run_name='__main__', alter_sys=True)")


def engine_only(path: Path, batch_size: int) -> int:
    """The engine alone over the file: read it, push it in batches, make
    each batch's answer table; the number of answers."""
    import pyarrow.parquet as pq

    from cep.engine import Engine
    from cep.rules import parse_rules

    engine = Engine(parse_rules(workloads.W1_QUERY, "w1.rq"))
    table = pq.read_table(path).rename_columns(["s", "p", "o", "start"])
    answers = 0
    for offset in range(0, table.num_rows, batch_size):
        answers += engine.push_table(table.slice(offset, batch_size), checked=True).answers().num_rows
    return answers + engine.flush_table(final=True).answers().num_rows


def write_only(path: Path, size: int) -> None:
    """Write `size` bytes to `path` in blocks of the size the JSON Lines
    writer writes (a batch's text): the file system's share of a run. The
    block is written in memory first, as a batch's text is (a block of
    bytes(n) would be the kernel's one zero page, read from the cache)."""
    block = b"x" * (16 << 20)
    with open(path, "wb") as handle:
        for offset in range(0, size, len(block)):
            handle.write(block[:min(len(block), size - offset)])
    os.unlink(path)


def child_cpu(argv) -> tuple[float, float, str, str]:
    """(CPU seconds, wall seconds, standard output, standard error) of a
    child run to its end (the kernel's accounting of that child alone)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - began
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if process.returncode:
            sys.exit(f"{' '.join(argv)} failed:\n{err.read().decode()}")
        return usage.ru_utime + usage.ru_stime, wall, out.read().decode(), err.read().decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="500000,1000000")
    ap.add_argument("--batch-size", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each measurement (the least CPU kept)")
    ap.add_argument("--engine-only", nargs=1, metavar="PARQUET", help=argparse.SUPPRESS)
    ap.add_argument("--write-only", nargs=2, metavar=("PATH", "BYTES"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_only:
        write_only(Path(args.write_only[0]), int(args.write_only[1]))
        return
    if args.engine_only:
        from memory import status_mb

        print(engine_only(Path(args.engine_only[0]), args.batch_size), status_mb("VmHWM"))
        return
    sizes = [int(x) for x in args.sizes.split(",")]
    rules = Path(tempfile.mkdtemp(prefix="cep-bench-")) / "w1.rq"
    rules.write_text(workloads.W1_QUERY)
    results = {}
    for n in sizes:
        path = workloads.ensure(args.out, "w1", n)
        out = rules.parent / f"answers-{n}.jsonl"
        command = [sys.executable, "-c", CEP_WITH_PEAK, "run", str(rules), "--events", str(path), "--engine", "local",
                   "--batch-size", str(args.batch_size), "--out", str(out), "-q"]
        runs = []
        for _ in range(args.repeat):
            cpu_e, wall_e, said, _ = child_cpu([sys.executable, __file__, "--engine-only", str(path),
                                                "--batch-size", str(args.batch_size)])
            answers_e, rss_e = int(said.split()[-2]), float(said.split()[-1])
            cpu_c, wall_c, _, told = child_cpu(command)
            rss_c = float(told.split()[-1])
            with open(out, "rb") as handle:
                answers_c = sum(1 for _ in handle)
            size = out.stat().st_size
            os.unlink(out)
            cpu_w, _, _, _ = child_cpu([sys.executable, __file__, "--write-only", str(out), str(size)])
            runs.append((cpu_e, wall_e, rss_e, cpu_c, wall_c, rss_c, cpu_w))
        if args.repeat > 1:
            print(f"W1 {n:>9,} events, CPU s of each run: engine alone "
                  f"{', '.join(f'{r[0]:.2f}' for r in runs)}; cep run {', '.join(f'{r[3]:.2f}' for r in runs)}")
        (cpu_e, wall_e, rss_e), (cpu_c, wall_c, rss_c) = (min((r[:3] for r in runs)),
                                                          min((r[3:6] for r in runs)))
        cpu_w = min(r[6] for r in runs)
        if not answers_e == answers_c == n // 2:
            sys.exit(f"answers differ at {n:,}: engine {answers_e:,}, cep run {answers_c:,}, expected {n // 2:,}")
        print(f"W1 {n:>9,} events, {answers_c:,} answers: engine alone {cpu_e:6.2f} s CPU ({wall_e:6.2f} s wall, "
              f"peak {rss_e:,.0f} MB), cep run {cpu_c:6.2f} s CPU ({wall_c:6.2f} s wall, peak {rss_c:,.0f} MB), "
              f"ratio {cpu_c / cpu_e:.2f}; writing its {size / 1e6:,.0f} MB alone {cpu_w:.2f} s CPU", flush=True)
        results[n] = (cpu_e, cpu_c, cpu_w, wall_e, wall_c)
    print(f"\ncep run: cep run W1.rq --events W1.parquet --engine local --batch-size {args.batch_size} "
          "--out answers.jsonl -q")
    for a, b in zip(sizes, sizes[1:]):
        (e1, c1, w1, we1, wc1), (e2, c2, w2, we2, wc2) = results[a], results[b]
        engine_rate, cli_rate = (b - a) / (e2 - e1), (b - a) / (c2 - c1)
        print(f"marginal {a:,} -> {b:,} events (CPU time): engine alone {engine_rate:,.0f} events/s, "
              f"cep run {cli_rate:,.0f} events/s; cep run takes {(c2 - c1) / (e2 - e1):.2f} x the engine's time "
              f"({(c2 - c1 - w2 + w1) / (e2 - e1):.2f} x without the file system's writing, "
              f"{w2 - w1:.2f} s CPU); wall {(b - a) / (we2 - we1):,.0f} and {(b - a) / (wc2 - wc1):,.0f} events/s")


if __name__ == "__main__":
    main()
