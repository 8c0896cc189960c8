"""Latency: the time from an event's arrival to its answer, on the W1 and W2
workloads (bench/workloads.py), in process and on Spark.

    python bench/latency.py                                   # both parts, W1
    python bench/latency.py --parts process --batch-sizes 10,100,1000,10000
    python bench/latency.py --parts spark --triggers "1 second,5 seconds" --spark-events 20000

Events arrive at a fixed rate (--rate events/s, in real time). An answer's
latency is the time from the arrival of the event that completes it (the
event whose time is the answer's end) to the moment the answer is out.

In process: the events are gathered into batches of --batch-size events
(a batch leaves when its last event has arrived, so a batch of B events
waits B / rate for its first event) and pushed to the engine
(Engine.push_table); an answer is out when the push that made it returns.
Where the engine is slower than the rate, batches queue and the latency
grows with the run: the table says so (behind).

On Spark: a feeder writes the events that have arrived into a new Parquet
file every --file-every seconds (written aside, then renamed into the
folder), and detect() reads the folder as a stream with the trigger
interval given; a foreachBatch sink takes each micro-batch's answers and
stamps them with the time it has them. When the feed is over, an end mark
(cep.spark.end_input) makes the groups process what they hold. The first
--warmup seconds of arrivals are left out of the figures (Python workers
start and load the rules in the first micro-batch). The answer count is
checked against the in-process engine's on the same events. Last, the
query is started with Spark's real-time trigger (trigger(realTime=...)),
and what Spark says is printed.

Printed: per batch size and per trigger interval, answers, p50, p99 and
max latency in milliseconds; in process the CPU time of one push (its
answer table included: what a batch costs whatever the neighbours do,
where the latencies grow with the machine's load), and for Spark the
micro-batches' median duration; beside each, the machine's load (1-minute average at its end).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402

SCHEMA = "s string, p string, o string, t long"


def _events(name: str, n: int, out: Path) -> pa.Table:
    return pq.read_table(workloads.ensure(out, name, n))


def _completing(times: np.ndarray, ends) -> np.ndarray:
    """The index of the event that completes each answer: the first event
    whose time is the answer's end (event times are sorted)."""
    return np.searchsorted(times, np.asarray(ends, dtype=np.int64))


def _percentiles(ms) -> dict:
    ms = np.asarray(ms, dtype=float)
    if not len(ms):
        return {"answers": 0, "p50": float("nan"), "p99": float("nan"), "max": float("nan")}
    return {"answers": len(ms), "p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)),
            "max": float(ms.max())}


# -- in process ------------------------------------------------------------

def in_process(name: str, events: pa.Table, rate: float, batch_size: int) -> dict:
    """Latencies of the answers when events arriving at `rate` are pushed
    in batches of `batch_size`."""
    from cep.engine import Engine
    from cep.rules import parse_rules

    engine = Engine(parse_rules(workloads.WORKLOADS[name][1], f"{name}.rq"))
    table = events.rename_columns(["s", "p", "o", "start"])
    times = table["start"].to_numpy()
    warm = Engine(parse_rules(workloads.WORKLOADS[name][1], f"{name}.rq"))  # indexes, kernels: before the clock
    warm.push_table(table.slice(0, 2000), checked=True)
    latencies, behind, cpu, pushes = [], 0.0, 0.0, 0
    t0 = time.perf_counter()
    for offset in range(0, table.num_rows, batch_size):
        last = min(offset + batch_size, table.num_rows)
        due = t0 + last / rate  # the batch's last event arrives
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
        else:
            behind = max(behind, now - due)
        began = time.process_time()
        answers = engine.push_table(table.slice(offset, batch_size), checked=True).answers()
        cpu, pushes = cpu + time.process_time() - began, pushes + 1
        done = time.perf_counter()
        arrived = t0 + _completing(times, answers["end"].to_numpy()) / rate
        latencies.append((done - arrived) * 1000)
    tail = engine.flush_table(final=True).answers()
    done = time.perf_counter()
    latencies.append((done - (t0 + _completing(times, tail["end"].to_numpy()) / rate)) * 1000)
    return dict(_percentiles(np.concatenate(latencies)), behind_ms=behind * 1000, cpu_ms=cpu * 1000 / pushes)


def run_in_process(args):
    events = _events(args.workload, args.events, args.out)
    print(f"\nin process: {args.workload}, {args.events:,} events arriving at {args.rate:,.0f} events/s, "
          "pushed in batches (Engine.push_table)")
    print(f"  {'batch':>8} {'waits':>9} {'answers':>9} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9} {'CPU ms':>9} "
          f"{'load':>5}  behind")
    for size in args.batch_sizes:
        r = in_process(args.workload, events, args.rate, size)
        late = f"{r['behind_ms']:,.0f} ms (the engine is slower than the rate)" if r["behind_ms"] > 1 else "-"
        print(f"  {size:>8,} {1000 * size / args.rate:>7,.0f}ms {r['answers']:>9,} {r['p50']:>9,.1f} "
              f"{r['p99']:>9,.1f} {r['max']:>9,.1f} {r['cpu_ms']:>9,.2f} {os.getloadavg()[0]:>5.1f}  {late}", flush=True)


# -- on Spark ---------------------------------------------------------------

class Feeder(threading.Thread):
    """Writes the events that have arrived (at `rate`, from the start) into
    a new Parquet file of `folder` every `every` seconds."""

    def __init__(self, events: pa.Table, rate: float, every: float, folder: Path):
        super().__init__(daemon=True)
        self.events, self.rate, self.every, self.folder = events, rate, every, folder
        self.t0 = None
        self.done = threading.Event()

    def run(self):
        self.t0 = time.time()
        sent, k = 0, 0
        while sent < self.events.num_rows:
            time.sleep(self.every)
            due = min(self.events.num_rows, int((time.time() - self.t0) * self.rate))
            if due > sent:
                aside = self.folder.parent / f".part-{k:06d}.parquet"
                pq.write_table(self.events.slice(sent, due - sent), aside)
                aside.rename(self.folder / f"part-{k:06d}.parquet")
                sent, k = due, k + 1
        self.done.set()


def on_spark(spark, name: str, events: pa.Table, rate: float, every: float, trigger: str, lateness: str,
             expected: int, timeout: float, warmup: float) -> dict:
    from pyspark.sql import functions as F

    from cep.spark import detect, end_input

    work = Path(tempfile.mkdtemp(prefix="cep-latency-"))
    try:
        folder, marks = work / "in", work / "end"
        folder.mkdir()
        got = []  # per micro-batch: (when its answers were had, their ends)

        def collect(df, _id):
            ends = [r[0] for r in df.where("kind = 'answer'").select(F.unix_millis("end")).collect()]
            got.append((time.time(), ends))

        stream = spark.readStream.schema(SCHEMA).parquet(str(folder))
        q = (detect(stream, workloads.WORKLOADS[name][1], lateness=lateness, end_markers=str(marks))
             .writeStream.foreachBatch(collect).trigger(processingTime=trigger)
             .option("checkpointLocation", str(work / "ckpt")).start())
        feeder = Feeder(events, rate, every, folder)
        feeder.start()
        feeder.done.wait()
        end_input(marks)
        deadline = time.time() + timeout
        while sum(len(e) for _, e in got) < expected and time.time() < deadline and q.isActive:
            time.sleep(0.2)
        q.stop()
        durations = [p["durationMs"].get("triggerExecution", 0) for p in q.recentProgress if p["numInputRows"]]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    times = events["t"].to_numpy()
    latencies = []
    for had, ends in got:
        if ends:
            arrived = feeder.t0 + _completing(times, ends) / rate
            latencies.append(np.stack([(had - arrived) * 1000, arrived - feeder.t0]))
    both = np.concatenate(latencies, axis=1) if latencies else np.zeros((2, 0))
    return dict(_percentiles(both[0][both[1] >= warmup]), all_answers=both.shape[1],
                median_batch_ms=float(np.median(durations)) if durations else float("nan"))


def real_time_mode(spark, name: str, events: pa.Table) -> list:
    """What Spark says under the real-time trigger to detect() (whose
    stateful operator runs in append mode) and to a no-op
    applyInPandasWithState in update mode, the output mode the real-time
    trigger asks for, on the file source: [(what, Spark's answer)]."""
    import pandas as pd
    from pyspark.sql.streaming.state import GroupStateTimeout

    from cep.spark import detect

    def no_op(key, pdfs, state):
        for _ in pdfs:
            pass
        yield pd.DataFrame({"n": pd.Series([], dtype="int64")})

    work = Path(tempfile.mkdtemp(prefix="cep-latency-rtm-"))
    said = []
    try:
        (work / "in").mkdir()
        pq.write_table(events.slice(0, 1000), work / "in" / "part-0.parquet")
        stream = spark.readStream.schema(SCHEMA).parquet(str(work / "in"))
        tries = [("detect(), output mode update", detect(stream, workloads.WORKLOADS[name][1])),
                 ("no-op applyInPandasWithState, update mode",
                  stream.groupBy("s").applyInPandasWithState(no_op, "n long", "n long", "update",
                                                             GroupStateTimeout.NoTimeout))]
        for i, (what, df) in enumerate(tries):
            try:
                q = (df.writeStream.format("console").outputMode("update").trigger(realTime="5 seconds")
                     .option("checkpointLocation", str(work / f"ckpt{i}")).start())
                q.awaitTermination(30)
                q.stop()
                said.append((what, "ran"))
            except Exception as exc:  # what Spark says is the finding
                said.append((what, f"{type(exc).__name__}: {str(exc).splitlines()[0]}"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return said


def run_spark(args):
    import pyspark

    from cep.engine import Engine
    from cep.rules import parse_rules
    from cep.spark import spark_session

    events = _events(args.workload, args.spark_events, args.out)
    engine = Engine(parse_rules(workloads.WORKLOADS[args.workload][1], f"{args.workload}.rq"))
    table = events.rename_columns(["s", "p", "o", "start"])
    expected = len(engine.push_table(table, checked=True)) + len(engine.flush_table(final=True))
    spark = spark_session("local[2]", conf={"spark.ui.enabled": "false"})  # figures without the UI's threads
    spark.sparkContext.setLogLevel("ERROR")
    print(f"\non Spark (local[2]): {args.workload}, {args.spark_events:,} events arriving at {args.rate_spark:,.0f} "
          f"events/s, a file every {args.file_every} s, lateness {args.lateness}; figures over the answers "
          f"to events that arrived after the first {args.warmup:.0f} s")
    print(f"  {'trigger':>12} {'answers':>9} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9} {'batch ms':>9} {'load':>5}"
          "  all answers")
    # Python workers started and the rules loaded in them, before any clock
    # runs: the workers and their engines serve every query of the session
    warm = events.slice(0, 2000)
    on_spark(spark, args.workload, warm, 10_000, args.file_every, args.triggers[0], args.lateness,
             1, 60, 0)  # until its first answers
    for trigger in args.triggers:
        r = on_spark(spark, args.workload, events, args.rate_spark, args.file_every, trigger, args.lateness,
                     expected, args.timeout, args.warmup)
        check = "" if r["all_answers"] == expected else f"  (the engine in process gives {expected:,})"
        print(f"  {trigger:>12} {r['answers']:>9,} {r['p50']:>9,.0f} {r['p99']:>9,.0f} {r['max']:>9,.0f} "
              f"{r['median_batch_ms']:>9,.0f} {os.getloadavg()[0]:>5.1f}  {r['all_answers']:,}{check}", flush=True)
    print(f"\nSpark's real-time trigger (trigger(realTime='5 seconds'), PySpark {pyspark.__version__}), "
          "on the file source:")
    for what, said in real_time_mode(spark, args.workload, events):
        print(f"  {what}: {said}")
    spark.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="w1", choices=("w1", "w2"))
    ap.add_argument("--parts", default="process,spark", help="process, spark or both")
    ap.add_argument("--events", type=int, default=200_000, help="events of the in-process runs")
    ap.add_argument("--rate", type=float, default=20_000, help="events/s arriving, in process")
    ap.add_argument("--batch-sizes", default="10,100,1000,10000,100000",
                    type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--spark-events", type=int, default=20_000, help="events of each Spark run")
    ap.add_argument("--rate-spark", type=float, default=1_000, help="events/s arriving, on Spark")
    ap.add_argument("--file-every", type=float, default=0.5,
                    help="seconds between the feeder's files (Spark's file source log overflows its stack on a few hundred new files in one micro-batch)")
    ap.add_argument("--triggers", default="500 milliseconds,2 seconds,5 seconds",
                    type=lambda s: s.split(","))
    ap.add_argument("--lateness", default="0 seconds", help="detect()'s lateness (the events come in order)")
    ap.add_argument("--warmup", type=float, default=5, help="seconds of arrivals left out of the Spark figures")
    ap.add_argument("--timeout", type=float, default=120, help="seconds to wait for the last answers")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args()
    parts = args.parts.split(",")
    if "process" in parts:
        run_in_process(args)
    if "spark" in parts:
        run_spark(args)


if __name__ == "__main__":
    main()
