"""Spark benchmark of the engine (cep.spark.detect) against what Spark
itself costs, on the W1 and W2 workloads (bench/workloads.py).

    python bench/spark.py                                  # W1, W2 at 1M and 4M, every variant
    python bench/spark.py --workloads w1 --sizes 100000 --variants pass,engine

Each workload is written as 10 Parquet files and read as a stream, one file
per micro-batch (maxFilesPerTrigger=1, trigger availableNow), on local[2],
into Spark's `noop` sink. The variants, all on that same source and trigger:

    pass        pass-through: the source straight to the sink
    route       the events as detect() routes them (columns cls, bucket and
                the rest, cep.spark._routed) and watermarks them, no shuffle
    shuffle     route, then the shuffle alone: repartition by (cls, bucket)
                into as many partitions as the stateful operator has
    sort        shuffle, then the sort by group within each partition (what
                a grouped operator does before it calls Python); Spark
                refuses a sort on a stream, so this one shuffles and sorts
                each micro-batch in foreachBatch (which adds a job per batch)
    arrow       route, then a stateless grouped applyInArrow that reads
                every row and returns none (shuffle, sort, Arrow to Python)
    pandas      the same with applyInPandas (and Arrow to pandas)
    noop        a no-op stateful operator grouped like the engine: the same
                routing (cls, bucket) and watermark as detect(), then
                applyInPandasWithState with a function that counts its rows
                into state and returns nothing (HDFS-backed state store)
    noop-rocks  the same on the RocksDB state store, with changelog
                checkpointing (each micro-batch commits the changed keys,
                not a snapshot)
    tws         the same no-op written for transformWithStateInPandas (a
                StatefulProcessor with one ValueState); Spark 4 runs that
                operator only on the RocksDB state store
    engine      detect(events, query, lateness="10 seconds") (HDFS store)
    engine-rocks  the engine on the RocksDB state store, changelog checkpointing
                (not in the default run)

--parts runs the variants that take Spark's stateful path apart, in
order (PARTS: pass, route, shuffle, sort, arrow, pandas, noop, noop-rocks,
engine), and prints each one's µs per event beside what it adds to the
step it builds on (arrow to sort, pandas to arrow, noop to pandas: the
state; noop-rocks and engine to noop): where Spark spends the time,
and the engine's throughput over the no-op stateful operator's.
Each run also counts the CPU seconds of its processes (the driver, the
JVM, PySpark's Python workers: cpu_seconds) per event: on a machine
shared with other work, wall time stretches with their load, CPU time
much less, so CPU ratios taken in one run are the steadier ones.

CEP_BENCH_BUCKETS=N sets the buckets per routing class of the engine and
of the variants routed like it (detect's buckets; default 8).

Each measurement runs in a fresh Python process with its own SparkSession,
so no JVM, Python worker or state carries over; one that runs past
--timeout is stopped and reported over the batches it finished. The clock
runs from the query's start() to its termination (the session's start-up
is not in it). The tws variant needs protobuf (pip install protobuf).

Printed per (workload, N, variant): events/s over that wall time, over the
sum of the micro-batches' durations, and over the batches after the first
(which pays for starting Python workers, loading rules and the like); then
batch by batch the duration (durationMs.triggerExecution) and input rows,
and the state store: its rows, and its size per key, that is over the
1,000 partition-key values of both workloads (Spark's own keys are the 8
(cls, bucket) groups): memoryUsedBytes, which for the HDFS-backed store
holds the last two versions, and that store's current version alone. A
summary compares the engine with pass-through on the same workload, and
each variant's cost per event at the largest size with the smallest: over
the whole run, and over the batches after the query's window is full
(workloads.WINDOW_EVENTS: 1,500 events of W1, 60,000 of W2; with 10 files
of 100,000 or more events that is from the second batch on). Both sizes
run in 10 micro-batches, so the larger one has four times the rows per
batch to spread Spark's per-batch costs over.

--profile runs the engine's group function under cProfile in each Python
worker (cep.spark.worker.profiled, CPU time) and prints, per event, the
functions that took the most CPU in the workers' group calls, and the
workers' CPU outside those calls (PySpark: its tasks, reading the
input, converting the output).

--breakdown also takes each run apart where Spark measures it: the JVM's
CPU by thread kind (Spark's tasks, the stream thread's planning and
commits, the JIT compilers, GC; always measured), each operator's SQL
metrics and each stage's task metrics from Spark's event log (state store
update and commit time, data sent to and returned from the Python
workers, shuffle bytes, output rows), and, when py-spy is installed
beside this interpreter (pip install py-spy), the Python workers' stacks
sampled, by function (µs per event, inclusive and own).

--repeat R runs the list of variants R times in turn; the parts table
takes each variant's fastest run, the one the machine's other load slowed
least. --json keeps every measurement batch by batch; --report prints a kept file
again without measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402

FILES = 10
KEYS = 1000  # distinct subjects (W1) and companies (W2)
LATENESS = "10 seconds"  # as detect()'s default
SCHEMA = "s string, p string, o string, t long"
BUCKETS = int(os.environ.get("CEP_BENCH_BUCKETS", "8"))  # groups per routing class (detect's buckets)
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
VARIANTS = ("pass", "route", "shuffle", "sort", "arrow", "pandas", "noop", "noop-rocks", "tws", "engine",
            "engine-rocks")
DEFAULT_VARIANTS = "pass,noop,noop-rocks,tws,engine"
# Spark's stateful path taken apart (--parts): each step and the step it adds to
PARTS = {"pass": None, "route": "pass", "shuffle": "route", "sort": "shuffle", "arrow": "sort",
         "pandas": "arrow", "noop": "pandas", "noop-rocks": "noop", "engine": "noop"}


def _no_op_functions(columns: list):
    """The no-op stateful functions: read every row, keep their count in
    state, return no rows (in the engine's output columns). Made here so
    that what Spark pickles for the workers refers to nothing but pandas."""
    from pyspark.sql.streaming import StatefulProcessor

    def empty():
        import pandas as pd

        return pd.DataFrame({c: pd.Series([], dtype="int64" if c in ("start", "end") else "object")
                             for c in columns})

    def count_rows(key, pdfs, state):  # applyInPandasWithState
        n = sum(len(pdf) for pdf in pdfs)
        state.update(((state.get[0] if state.exists else 0) + n,))
        yield empty()

    class CountRows(StatefulProcessor):  # transformWithStateInPandas
        def init(self, handle):
            self.rows = handle.getValueState("rows", "rows long")

        def handleInputRows(self, key, rows, timerValues):
            n = sum(len(pdf) for pdf in rows)
            self.rows.update(((self.rows.get()[0] if self.rows.exists() else 0) + n,))
            yield empty()

        def close(self):
            pass

    return count_rows, CountRows()


def _stateless_functions(columns: list):
    """The stateless grouped no-ops: read every row, return none."""

    def arrow_rows(key, table):  # applyInArrow
        import pyarrow as pa

        table.num_rows  # noqa: B018 (the table is read whole before this call)
        return pa.table({c: pa.array([], pa.int64() if c in ("start", "end") else pa.string())
                         for c in columns if c not in ("bindings", "triples")})

    def pandas_rows(key, pdf):  # applyInPandas
        import pandas as pd

        return pd.DataFrame({c: pd.Series([], dtype="int64" if c in ("start", "end") else "object")
                             for c in columns if c not in ("bindings", "triples")})

    return arrow_rows, pandas_rows


def _routed_events(events, query):
    """The events routed and watermarked as detect() does."""
    from pyspark.sql import functions as F

    from cep.spark import _routed, _times, plan

    df = _routed(_times(events), plan(query, BUCKETS))
    return df.withColumn("_at", F.timestamp_millis("end")).withWatermark("_at", LATENESS)


def _grouped(events, query):
    """The events routed and watermarked as detect() does, grouped by
    (cls, bucket)."""
    return _routed_events(events, query).groupBy("cls", "bucket")


def stream(variant: str, events, query: str):
    from pyspark.sql.streaming.state import GroupStateTimeout

    from cep.spark import detect
    from cep.spark.worker import OUTPUT_COLUMNS, OUTPUT_DDL

    count_rows, processor = _no_op_functions(OUTPUT_COLUMNS)
    arrow_rows, pandas_rows = _stateless_functions(OUTPUT_COLUMNS)
    # the stateless operators' output: the engine's columns but its two nested ones
    flat = ", ".join(f for f in OUTPUT_DDL.split(", ") if not f.startswith(("bindings", "triples")))
    partitions = int(events.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    if variant == "pass":
        return events
    if variant == "route":
        return _routed_events(events, query)
    if variant == "shuffle":
        return _routed_events(events, query).repartition(partitions, "cls", "bucket")
    if variant == "sort":  # Spark refuses a sort on a stream: in each micro-batch (write_stream)
        return _routed_events(events, query)
    if variant == "arrow":
        return _grouped(events, query).applyInArrow(arrow_rows, flat)
    if variant == "pandas":
        return _grouped(events, query).applyInPandas(pandas_rows, flat)
    if variant in ("noop", "noop-rocks"):
        return _grouped(events, query).applyInPandasWithState(
            count_rows, OUTPUT_DDL, "rows long", "append", GroupStateTimeout.NoTimeout)
    if variant == "tws":
        return _grouped(events, query).transformWithStateInPandas(processor, OUTPUT_DDL, "Append", "None")
    if variant in ("engine", "engine-rocks"):
        return detect(events, query, lateness=LATENESS, buckets=BUCKETS)
    raise ValueError(variant)


def write_stream(variant: str, df):
    """The variant's writer into the noop sink."""
    if variant != "sort":
        return df.writeStream.format("noop")
    partitions = int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))

    def shuffle_and_sort(batch, _id):
        (batch.repartition(partitions, "cls", "bucket").sortWithinPartitions("cls", "bucket")
         .write.format("noop").mode("overwrite").save())

    return df.writeStream.foreachBatch(shuffle_and_sort)


def _batch(p: dict) -> dict:
    """What we keep of a StreamingQueryProgress."""
    out = {"id": p["batchId"], "rows": p["numInputRows"], "ms": p["durationMs"].get("triggerExecution", 0),
           "durations": p["durationMs"], "output": p["sink"].get("numOutputRows", -1)}
    if p["stateOperators"]:
        op = p["stateOperators"][0]
        out["state"] = {k: op.get(k) for k in ("numRowsTotal", "numRowsUpdated", "memoryUsedBytes",
                                               "allUpdatesTimeMs", "commitTimeMs", "numShufflePartitions")}
        out["state"]["custom"] = op.get("customMetrics", {})
    return out


def cpu_seconds(root: int) -> dict:
    """CPU seconds (user and system) used so far by process `root` and all
    its descendants (here: the driver, Spark's JVM, PySpark's daemon and
    Python workers), the exited ones that a process of the tree reaped
    included, by kind: "python workers" (PySpark's daemon and the workers
    it forks), "jvm", "py-spy" (--breakdown's sampler, which measure()
    leaves out of the run's CPU) and "driver" (the rest). Read from /proc (Linux);
    empty elsewhere. On a shared machine a step's CPU per event is what
    the others' load changes least: its wall time stretches with every
    process that competes for the cores."""
    tick = os.sysconf("SC_CLK_TCK")
    parents, times, kinds = {}, {}, {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
        program = command.split(b"\0")[0]
        kinds[int(entry)] = ("python workers" if b"pyspark.daemon" in command
                             else "jvm" if program.endswith(b"java")
                             else "py-spy" if program.endswith(b"py-spy") else "driver")
    if root not in times:
        return {}
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += [child for child, parent in parents.items() if parent == pid]
    out = {}
    for pid in tree:  # a daemon's time holds its reaped workers' (cutime), not its live ones'
        out[kinds[pid]] = out.get(kinds[pid], 0.0) + times[pid]
    return out


# -- where the time goes (--breakdown) -------------------------------------

# The JVM's threads by what they do, from the names Linux keeps of them
# (their first 15 characters): Spark's tasks (reading the input, the
# shuffle, the sort, the exchange with Python, the state store, the sink),
# the micro-batches' planning and bookkeeping on the driver's stream
# thread, the JIT compilers, the garbage collector.
JVM_THREADS = (("Executor task", "tasks"), ("stream executio", "stream execution (planning, commits)"),
               ("C2 Compiler", "JIT (C1, C2)"), ("C1 Compiler", "JIT (C1, C2)"), ("GC Thread", "GC"),
               ("G1 ", "GC"), ("VM Thread", "GC"), ("state-store", "state store maintenance"),
               ("spark-listener", "listeners (progress, event log)"))


def jvm_threads(root: int) -> dict:
    """CPU seconds of each thread of the JVM under process `root`, by
    thread id: (kind, seconds). Empty where /proc is not there."""
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            if not entry.isdigit() or not Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0].endswith(
                    b"java"):
                continue
            if int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]) != root:
                continue
        except (OSError, IndexError, ValueError):
            continue
        out = {}
        for task in Path(f"/proc/{entry}/task").iterdir():
            try:
                comm = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            kind = next((k for prefix, k in JVM_THREADS if comm.startswith(prefix)), "other")
            out[int(task.name)] = (kind, (int(fields[11]) + int(fields[12])) / tick)
        return out
    return {}


def jvm_breakdown(before: dict, after: dict, total: float) -> dict:
    """CPU seconds of the JVM's threads by kind between two jvm_threads
    snapshots (`after` holds the threads that ended meanwhile as they were
    last seen); what the process used beyond them (threads that lived
    between two looks, and the ended ones' time since) is `ended threads`."""
    out = {}
    for tid, (kind, seconds) in after.items():
        out[kind] = out.get(kind, 0.0) + seconds - before.get(tid, (kind, 0.0))[1]
    out["ended threads"] = total - sum(out.values())
    return {k: round(v, 2) for k, v in out.items()}


def event_log_metrics(folder: Path) -> dict:
    """Spark's own measures of a run from its event log: per operator of
    the plans (SQL metrics, summed over all tasks of all micro-batches,
    by operator and metric name: value and unit) and per stage kind (a
    stage that writes a shuffle: `map`, the stateful one that reads it:
    `reduce`) the task metrics: executor CPU and run time, GC, shuffle
    bytes and records."""
    accumulators = {}  # id -> (operator, metric, type)

    def plan(node):
        for m in node.get("metrics", []):
            accumulators[m["accumulatorId"]] = (node["nodeName"], m["name"], m["metricType"])
        for child in node.get("children", []):
            plan(child)

    sql, stages = {}, {}
    for path in folder.rglob("*"):
        if not path.is_file() or path.name.startswith("."):  # (Hadoop's checksums)
            continue
        for line in path.read_text().splitlines():
            e = json.loads(line)
            kind = e.get("Event", "")
            if kind.endswith(("SQLExecutionStart", "SQLAdaptiveExecutionUpdate")):
                plan(e["sparkPlanInfo"])
            elif kind == "SparkListenerTaskEnd":
                for a in e["Task Info"].get("Accumulables", []):
                    got = accumulators.get(a["ID"])
                    if got and isinstance(a.get("Update"), (int, float, str)):
                        key = f"{got[0]} | {got[1]}"
                        value = float(a["Update"])
                        unit = {"timing": "ms", "nsTiming": "ns", "size": "bytes"}.get(got[2], "")
                        prev = sql.get(key, (0.0, unit))
                        sql[key] = (prev[0] + value, unit)
                m = e.get("Task Metrics") or {}
                write = m.get("Shuffle Write Metrics", {})
                read = m.get("Shuffle Read Metrics", {})
                stage = "map" if write.get("Shuffle Records Written") else "reduce"
                s = stages.setdefault(stage, {})
                for name, value in (("tasks", 1), ("executor CPU s", m.get("Executor CPU Time", 0) / 1e9),
                                    ("executor run s", m.get("Executor Run Time", 0) / 1e3),
                                    ("deserialize CPU s", m.get("Executor Deserialize CPU Time", 0) / 1e9),
                                    ("GC s", m.get("JVM GC Time", 0) / 1e3),
                                    ("shuffle write s", write.get("Shuffle Write Time", 0) / 1e9),
                                    ("shuffle bytes written", write.get("Shuffle Bytes Written", 0)),
                                    ("shuffle records written", write.get("Shuffle Records Written", 0)),
                                    ("shuffle fetch wait s", read.get("Fetch Wait Time", 0) / 1e3),
                                    ("shuffle bytes read", read.get("Local Bytes Read", 0)
                                     + read.get("Remote Bytes Read", 0))):
                    s[name] = s.get(name, 0) + value
    return {"sql": {k: [round(v, 3), u] for k, (v, u) in sql.items() if v},
            "stages": {k: {n: round(v, 3) for n, v in s.items()} for k, s in stages.items()}}


SPY_RATE = 100  # samples a second


def start_py_spy(pid: int, out: Path):
    """py-spy (when installed beside this interpreter) sampling the
    Python processes under `pid` (PySpark's workers), their stacks written
    to `out` (collapsed). It stops a process for each sample (without
    that, it counts threads waiting for input as busy)."""
    spy = Path(sys.executable).parent / "py-spy"
    if not spy.exists():
        return None
    return subprocess.Popen([str(spy), "record", "--pid", str(pid), "--subprocesses",
                             "--rate", str(SPY_RATE), "--format", "raw", "--output", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_py_spy(proc, out: Path, top: int = 60) -> dict:
    """The stacks py-spy sampled in PySpark's worker processes: each
    function's samples (inclusive, and as the innermost frame), the top
    ones, over all the workers (a sample is 1/SPY_RATE s of CPU)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    inclusive, own, total = {}, {}, 0
    text = out.read_text() if out.exists() else ""
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if "pyspark/daemon.py" not in stack and "pyspark.daemon" not in stack:
            continue  # the driver's, not a worker's
        count = int(count)
        total += count
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";") if not f.startswith("process ")]
        frames = [re.sub(r"\(.*/(site-packages|wt/[^/]+)/", "(", f) for f in frames]
        for f in set(frames):
            inclusive[f] = inclusive.get(f, 0) + count
        if frames:
            own[frames[-1]] = own.get(frames[-1], 0) + count
    rank = sorted(inclusive, key=lambda f: -inclusive[f])[:top]
    return {"samples": total, "functions": [[f, inclusive[f], own.get(f, 0)] for f in rank],
            "own": sorted(own.items(), key=lambda kv: -kv[1])[:top]}


def measure(name: str, n: int, variant: str, out: Path, progress: Path | None = None,
            profile: bool = False, breakdown: bool = False) -> dict:
    from cep.spark import spark_session

    profiles = tempfile.TemporaryDirectory(prefix="cep-bench-profile-") if profile else None
    if profiles:  # read by cep.spark.run, when the query is made
        os.environ["CEP_WORKER_PROFILE"] = profiles.name

    folder = workloads.ensure(out, name, n, files=FILES)
    query = workloads.WORKLOADS[name][1]
    t0 = time.perf_counter()
    logs = tempfile.TemporaryDirectory(prefix="cep-bench-events-") if breakdown else None
    conf = {"spark.ui.enabled": "false"}  # figures without the UI's threads
    if logs:  # Spark's own measures of each task and operator (event_log_metrics)
        conf.update({"spark.eventLog.enabled": "true", "spark.eventLog.dir": Path(logs.name).as_uri(),
                     "spark.eventLog.compress": "false"})
    spark = spark_session("local[2]", conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    if variant.endswith("rocks") or variant == "tws":
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
        spark.conf.set("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
    t_session = time.perf_counter() - t0

    def result(wall, batches, cpu=None):
        return {"workload": name, "events": n, "variant": variant, "seconds": round(wall, 3),
                "cpu_seconds": round(sum(cpu.values()), 2) if cpu else float("nan"),
                "cpu_by_process": {k: round(v, 2) for k, v in (cpu or {}).items()},
                "session_seconds": round(t_session, 3), "batches": batches, "load": round(os.getloadavg()[0], 1)}  # the machine's, over the last minute

    events = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(folder))
    # beside the progress file, the parent removes it even if this process is killed
    with tempfile.TemporaryDirectory(prefix="cep-bench-ckpt-", dir=progress.parent if progress else None) as ckpt:
        t0, cpu0, threads0 = time.perf_counter(), cpu_seconds(os.getpid()), jvm_threads(os.getpid())
        spy = start_py_spy(os.getpid(), Path(ckpt) / "py-spy.txt") if breakdown else None
        q = (write_stream(variant, stream(variant, events, query)).outputMode("append")
             .trigger(availableNow=True).option("checkpointLocation", ckpt).start())
        threads = dict(threads0)
        while not q.awaitTermination(5):
            threads.update(jvm_threads(os.getpid()))  # the threads that end before the run does, as last seen
            if progress:  # what a stopped measurement leaves: the batches so far
                partial = progress.with_suffix(".tmp")
                partial.write_text(json.dumps(dict(
                    result(time.perf_counter() - t0, [_batch(p) for p in q.recentProgress]), stopped=True)))
                partial.replace(progress)
        wall, cpu1, threads1 = time.perf_counter() - t0, cpu_seconds(os.getpid()), jvm_threads(os.getpid())
        cpu = {k: v - cpu0.get(k, 0.0) for k, v in cpu1.items()}
        spy_cpu = cpu.pop("py-spy", 0.0)  # --breakdown's sampler: not the run's
        batches = [_batch(p) for p in q.recentProgress]
        sampled = stop_py_spy(spy, Path(ckpt) / "py-spy.txt") if spy else None
    spark.stop()
    got = result(wall, batches, cpu)
    if threads1:
        got["jvm_threads"] = jvm_breakdown(threads0, {**threads, **threads1}, cpu.get("jvm", 0.0))
    if logs:
        got["spark_metrics"] = event_log_metrics(Path(logs.name))
        logs.cleanup()
    if sampled:
        got["py_spy"] = dict(sampled, cpu_seconds=round(spy_cpu, 2))
    if profiles:
        got["profile"] = _profile(Path(profiles.name))
        profiles.cleanup()
    return got


def _profile(folder: Path, top: int = 30) -> dict:
    """The workers' profiles (cProfile, CPU seconds) merged: their total,
    and the `top` functions by cumulative time (with their own time)."""
    import pstats

    files = sorted(str(f) for f in folder.glob("*.pstats"))
    if not files:
        return {"seconds": 0.0, "functions": []}
    stats = pstats.Stats(*files).stats
    total = sum(tt for _, _, tt, _, _ in stats.values())
    rows = sorted(((f"{'/'.join(Path(file).parts[-2:])}:{line}({func})", ct, tt)
                   for (file, line, func), (_, _, tt, ct, _) in stats.items()), key=lambda r: -r[1])
    return {"seconds": total, "functions": [[name, round(ct, 4), round(tt, 4)] for name, ct, tt in rows[:top]]}


def print_profile(r: dict):
    """--profile: where the Python workers' CPU went, µs per event."""
    n, got = r["events"], r["profile"]
    workers = r.get("cpu_by_process", {}).get("python workers", float("nan"))
    print(f"  {r['workload']} {n:,} {r['variant']}: Python workers' CPU {1e6 * workers / n:.2f} µs/event, of which "
          f"in the group calls {1e6 * got['seconds'] / n:.2f} and outside them (PySpark) "
          f"{1e6 * (workers - got['seconds']) / n:.2f}; the group calls' functions by cumulative CPU "
          "(µs/event: cumulative, own):")
    for name, cumulative, own in got["functions"]:
        print(f"    {1e6 * cumulative / n:7.3f} {1e6 * own / n:7.3f}  {name}")


# -- figures --------------------------------------------------------------

def summarize(r: dict) -> dict:
    """Rates and costs of one measurement (see the module's docstring)."""
    batches = r["batches"]
    n = r["events"]
    if r.get("stopped"):  # the batches it finished, in the time they took
        n = sum(b["rows"] for b in batches)
        r = dict(r, seconds=sum(b["ms"] for b in batches) / 1000 or 1)
    data = [b for b in batches if b["rows"]]
    trig = sum(b["ms"] for b in batches) / 1000
    first = data[0] if data else None
    rest = [b for b in batches if first is None or b["id"] > first["id"]]
    rest_s, rest_rows = sum(b["ms"] for b in rest) / 1000, sum(b["rows"] for b in rest)
    # batches that start once the window is full (and never the first)
    window = workloads.WINDOW_EVENTS[r["workload"]]
    seen, steady = 0, []
    for b in batches:
        if seen >= window and b is not first and (first is None or b["id"] > first["id"]):
            steady.append(b)
        seen += b["rows"]
    steady_s, steady_rows = sum(b["ms"] for b in steady) / 1000, sum(b["rows"] for b in steady)
    per_key = [b["state"]["memoryUsedBytes"] / KEYS for b in batches if "state" in b]
    current = [b["state"]["custom"]["stateOnCurrentVersionSizeBytes"] / KEYS for b in batches
               if "stateOnCurrentVersionSizeBytes" in b.get("state", {}).get("custom", {})]
    return {
        "eps_wall": n / r["seconds"],
        "eps_trig": n / trig if trig else 0,
        "eps_rest": rest_rows / rest_s if rest_s else 0,
        "us_wall": 1e6 * r["seconds"] / n,
        "us_cpu": 1e6 * r.get("cpu_seconds", float("nan")) / n,  # NaN for a stopped run
        "us_steady": 1e6 * steady_s / steady_rows if steady_rows else float("nan"),
        "first_ms": first["ms"] if first else 0,
        "answers": sum(max(b["output"], 0) for b in batches),
        "nbatches": len(batches),
        "state_per_key": per_key,
        "current_per_key": current,
    }


def _k(x: float) -> str:
    return f"{x / 1000:.1f}k" if x < 1e6 else f"{x / 1e6:.2f}M"


def print_one(r: dict, s: dict):
    if r.get("stopped"):
        print(f"{r['workload']:>3} {r['events']:>9,} {r['variant']:<12} stopped after {r['seconds']:.0f} s, "
              f"{len(r['batches'])} batches done, the figures below are theirs:")
    print(f"{r['workload']:>3} {r['events']:>9,} {r['variant']:<12} {r['seconds']:>8.1f} s "
          f"{s['eps_wall']:>9,.0f} ev/s  (batches {s['eps_trig']:>9,.0f}, after the first {s['eps_rest']:>9,.0f})  "
          f"first batch {s['first_ms'] / 1000:>6.1f} s  {s['nbatches']:>2} batches  "
          f"{s['answers']:>9,} out  {s['us_cpu']:>6.1f} µs CPU/event"
          + "".join(f" ({k} {1e6 * v / r['events']:.1f})" for k, v in sorted(r.get("cpu_by_process", {}).items()))
          + "  "
          f"(session {r['session_seconds']:.1f} s, load {r.get('load', '-')})", flush=True)


def print_series(r: dict):
    b = r["batches"]
    print(f"  {r['workload']} {r['events']:,} {r['variant']}:")
    print("    batch s/input rows: " + "  ".join(f"{x['ms'] / 1000:.1f}/{_k(x['rows'])}" for x in b))
    if any("state" in x for x in b):
        st = [x["state"] for x in b if "state" in x]
        print("    state rows:         " + "  ".join(str(x["numRowsTotal"]) for x in st))
        print("    state B/key:        " + "  ".join(f"{x['memoryUsedBytes'] / KEYS:,.0f}" for x in st))
        if "stateOnCurrentVersionSizeBytes" in st[0]["custom"]:
            print("    current B/key:      " + "  ".join(
                f"{x['custom']['stateOnCurrentVersionSizeBytes'] / KEYS:,.0f}" for x in st))
        if "rocksdbSstFileSize" in st[0]["custom"]:
            print("    RocksDB SST B/key:  " + "  ".join(
                f"{x['custom']['rocksdbSstFileSize'] / KEYS:,.0f}" for x in st))
        print("    state op s (updates/commit): " + "  ".join(
            f"{(x['allUpdatesTimeMs'] or 0) / 1000:.1f}/{(x['commitTimeMs'] or 0) / 1000:.1f}" for x in st))
    # where a typical batch's time goes (the median data batch after the first)
    data = [x for x in b if x["rows"]][1:]
    if data:
        mid = sorted(data, key=lambda x: x["ms"])[len(data) // 2]
        parts = {k: v for k, v in mid["durations"].items() if v and k != "triggerExecution"}
        print(f"    median batch {mid['id']} ({mid['ms'] / 1000:.1f} s): "
              + ", ".join(f"{k} {v / 1000:.2f} s" for k, v in sorted(parts.items(), key=lambda kv: -kv[1])))


def print_summary(rows: list, sizes: list, variants: list, names: list):
    by = {(r["workload"], r["events"], r["variant"]): (r, summarize(r)) for r in rows}
    print("\nsummary: events/s (wall) and µs per event (wall / after the window is full)")
    print(f"  {'':>3} {'events':>9} " + " ".join(f"{v:>22} " for v in variants))
    for name in names:
        for n in sizes:
            cells = []
            for v in variants:
                got = by.get((name, n, v))
                mark = "*" if got and got[0].get("stopped") else " "
                cells.append(f"{got[1]['eps_wall']:>8,.0f} {got[1]['us_wall']:>5.1f}/{got[1]['us_steady']:>5.1f}{mark}"
                             if got else f"{'-':>22} ")
            print(f"  {name:>3} {n:>9,} " + " ".join(f"{c:>23}" for c in cells))
    if any(r.get("stopped") for r in rows):
        print("  * stopped before the end: over the batches it finished")
    print("\nengine / pass-through, events/s in the same run (target on W1: >= 0.5):")
    for name in names:
        for n in sizes:
            e, p = by.get((name, n, "engine")), by.get((name, n, "pass"))
            if e and p:
                print(f"  {name} {n:>9,}: wall {e[1]['eps_wall'] / p[1]['eps_wall']:.3f}   "
                      f"after the window is full {p[1]['us_steady'] / e[1]['us_steady']:.3f}")
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        print(f"\ncost per event at {hi:,} / at {lo:,} (target for the engine: within 1.10):")
        for name in names:
            for v in variants:
                a, b = by.get((name, lo, v)), by.get((name, hi, v))
                if a and b:
                    print(f"  {name} {v:<12} wall {b[1]['us_wall'] / a[1]['us_wall']:.3f}   "
                          f"after the window is full {b[1]['us_steady'] / a[1]['us_steady']:.3f}")
    print("\nstate per key in bytes (the store's memory; the HDFS store's current version), "
          "second batch -> last batch:")
    for name in names:
        for n in sizes:
            for v in variants:
                got = by.get((name, n, v))
                if got and got[1]["state_per_key"]:
                    cells = []
                    for series in (got[1]["state_per_key"], got[1]["current_per_key"]):
                        if series:
                            start = series[1] if len(series) > 1 else series[0]
                            cells.append(f"{start:>10,.0f} -> {series[-1]:>10,.0f} (max {max(series):>10,.0f})")
                    print(f"  {name} {n:>9,} {v:<12} " + ";  ".join(cells))


def fastest(rows: list) -> dict:
    """Each (workload, N, variant)'s fastest run (--repeat), the one the
    machine's other load slowed least, summarized."""
    by = {}
    for r in rows:
        s = dict(summarize(r), load=r.get("load", float("nan")), cpu_by_process=r.get("cpu_by_process", {}))
        key = (r["workload"], r["events"], r["variant"])
        if key not in by or s["eps_rest"] > by[key]["eps_rest"]:
            by[key] = s
    return by


def print_parts(rows: list, sizes: list, names: list):
    """Each step of Spark's stateful path (PARTS): its µs per event over the
    whole run and over the batches after the first, and what it adds to
    the step it builds on (after the first batch)."""
    by = fastest(rows)
    print("\nSpark's stateful path taken apart: µs per event (wall; batches after the first; CPU of the "
          "driver, JVM and Python workers over the run), and what each step adds to the one it builds on"
          + (" (the fastest of the runs of each)" if len(by) < len(rows) else ""))
    print(f"  {'':>3} {'events':>9} {'step':<11} {'wall':>7} {'batches':>8} {'adds':>7}  {'to':<8} {'CPU':>7} "
          f"{'adds':>7} {'out':>9}  load (1 min, at its end)")
    for name in names:
        for n in sizes:
            for v, base in PARTS.items():
                got = by.get((name, n, v))
                if not got:
                    continue
                rest = 1e6 / got["eps_rest"] if got["eps_rest"] else float("nan")
                under = by.get((name, n, base)) if base else None
                adds = f"{rest - 1e6 / under['eps_rest']:>+7.1f}" if under and under["eps_rest"] else f"{'':>7}"
                cpu_adds = f"{got['us_cpu'] - under['us_cpu']:>+7.1f}" if under else f"{'':>7}"
                print(f"  {name:>3} {n:>9,} {v:<11} {got['us_wall']:>7.1f} {rest:>8.1f} {adds}  "
                      f"{base if under else '':<8} {got['us_cpu']:>7.1f} {cpu_adds} {got['answers']:>9,}  "
                      f"{got['load']:>5}")


def print_engine_over_noop(rows: list, sizes: list, names: list):
    """The engine's throughput over the no-op stateful operator's (the
    fastest run of each)."""
    by = fastest(rows)
    print("\nengine / no-op stateful operator (noop, HDFS store), as throughput in the same run "
          "(targets: W1 >= 0.9, W2 >= 0.6):")
    for name in names:
        for n in sizes:
            e, o = by.get((name, n, "engine")), by.get((name, n, "noop"))
            if e and o and e["eps_rest"] and o["eps_rest"]:
                print(f"  {name} {n:>9,}: wall {e['eps_wall'] / o['eps_wall']:.3f}   batches after the first "
                      f"{e['eps_rest'] / o['eps_rest']:.3f}   CPU {o['us_cpu'] / e['us_cpu']:.3f}")
                kinds = sorted(set(e["cpu_by_process"]) | set(o["cpu_by_process"]))
                if kinds:  # where the engine's CPU goes beyond the no-op's
                    print("    µs CPU per event, no-op -> engine: " + ", ".join(
                        f"{k} {1e6 * o['cpu_by_process'].get(k, 0) / n:.1f} -> "
                        f"{1e6 * e['cpu_by_process'].get(k, 0) / n:.1f}" for k in kinds))


def print_breakdown(rows: list, sizes: list, names: list):
    """Where each variant's CPU goes, µs per event, its runs side by side
    (the first run of each): the JVM's threads by kind (jvm_threads); with
    --breakdown, Spark's task metrics per stage kind and each operator's
    SQL metrics (event_log_metrics: times as µs per event, sizes as bytes
    per event, counts per event), and the Python workers' sampled stacks
    (py-spy: each function's share of the workers' CPU, as µs per event)."""
    by = {}
    for r in rows:
        by.setdefault((r["workload"], r["events"]), {}).setdefault(r["variant"], r)
    for name in names:
        for n in sizes:
            runs = by.get((name, n), {})
            if not runs:
                continue
            variants = list(runs)
            print(f"\nwhere the CPU goes, {name} {n:,}, µs per event (or bytes, rows per event): "
                  + " | ".join(variants))

            def line(label, values):
                cells = "".join(f"{v:>12.3f}" if isinstance(v, float) else f"{'-':>12}" for v in values)
                print(f"  {label[:78]:<78}{cells}")

            per = lambda v: 1e6 * v / n  # noqa: E731
            for kind in ("driver", "jvm", "python workers"):
                line(f"process: {kind}", [per(r.get("cpu_by_process", {}).get(kind, 0.0)) for r in runs.values()])
            kinds = sorted({k for r in runs.values() for k in r.get("jvm_threads", {})})
            for kind in kinds:
                line(f"  jvm threads: {kind}", [per(r["jvm_threads"][kind]) if kind in r.get("jvm_threads", {})
                                                else None for r in runs.values()])
            stats = sorted({(st, k) for r in runs.values() for st, m in r.get("spark_metrics", {})
                            .get("stages", {}).items() for k in m})
            for st, k in stats:
                values = []
                for r in runs.values():
                    v = r.get("spark_metrics", {}).get("stages", {}).get(st, {}).get(k)
                    values.append(None if v is None else per(v) if k.endswith(" s") else v / n)
                line(f"stage {st}: {k}{' (per event)' if not k.endswith(' s') else ''}", values)
            metrics = sorted({k for r in runs.values() for k in r.get("spark_metrics", {}).get("sql", {})})
            for k in metrics:
                values = []
                for r in runs.values():
                    got = r.get("spark_metrics", {}).get("sql", {}).get(k)
                    if got is None:
                        values.append(None)
                        continue
                    v, unit = got
                    values.append(per(v / 1e3) if unit == "ms" else per(v / 1e9) if unit == "ns" else v / n)
                unit = next(r["spark_metrics"]["sql"][k][1] for r in runs.values()
                            if k in r.get("spark_metrics", {}).get("sql", {}))
                line(f"sql: {k}{'' if unit in ('ms', 'ns') else ' (' + (unit or 'count') + '/event)'}", values)
            spied = [r for r in runs.values() if r.get("py_spy", {}).get("samples")]
            for r in spied:
                got = r["py_spy"]
                print(f"  {r['variant']}: Python workers sampled by py-spy ({got['samples']:,} samples, "
                      f"{per(got['samples'] / SPY_RATE):.2f} µs per event; their CPU by /proc "
                      f"{per(r.get('cpu_by_process', {}).get('python workers', 0.0)):.2f}), µs per event: "
                      "inclusive, own")
                for f, inclusive, own in got["functions"]:
                    print(f"    {per(inclusive / SPY_RATE):8.3f} {per(own / SPY_RATE):8.3f}  {f[:140]}")


def _has_protobuf() -> bool:
    try:
        from google.protobuf import descriptor  # noqa: F401
    except ImportError:
        return False
    return True


def run_one(name: str, n: int, variant: str, out: Path, timeout: float, profile: bool = False,
            breakdown: bool = False) -> dict | None:
    """One measurement in a fresh process group (Spark's JVM and Python
    workers with it), stopped after `timeout` seconds."""
    with tempfile.TemporaryDirectory(prefix="cep-bench-") as tmp:
        progress = Path(tmp) / "progress.json"
        proc = subprocess.Popen([sys.executable, __file__, "--one", name, str(n), variant, "--out", str(out),
                                 "--progress", str(progress), *(["--profile"] if profile else []),
                                 *(["--breakdown"] if breakdown else [])],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            partial = json.loads(progress.read_text()) if progress.exists() else {}
            if any(b["rows"] for b in partial.get("batches", [])):
                return partial
            print(f"{name:>3} {n:>9,} {variant:<12} stopped after {timeout:.0f} s, no batch done", flush=True)
            return None
    if proc.returncode:
        print(f"{name:>3} {n:>9,} {variant:<12} failed:\n{stderr[-4000:]}", flush=True)
        return None
    return json.loads(stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="w1,w2")
    ap.add_argument("--sizes", default="1000000,4000000")
    ap.add_argument("--variants", default=DEFAULT_VARIANTS, help=f"some of {','.join(VARIANTS)}")
    ap.add_argument("--parts", action="store_true",
                    help=f"the variants that take Spark's stateful path apart: {','.join(PARTS)}")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the variants this many times, in turn (a shared machine's load drifts)")
    ap.add_argument("--out", type=Path, default=HERE / "out", help="where the workloads' files are written")
    ap.add_argument("--timeout", type=float, default=1500, help="seconds one measurement may take")
    ap.add_argument("--json", type=Path, help="also write the measurements, batch by batch, to this file")
    ap.add_argument("--profile", action="store_true",
                    help="profile the engine's group calls in the Python workers (cProfile, CPU time)")
    ap.add_argument("--breakdown", action="store_true",
                    help="Spark's own measures of each operator and stage (its event log) and, with py-spy "
                         "installed beside this interpreter, the Python workers' stacks sampled")
    ap.add_argument("--report", type=Path, metavar="JSON",
                    help="print the figures of measurements saved by --json, measuring nothing")
    ap.add_argument("--one", nargs=3, metavar=("WORKLOAD", "N", "VARIANT"), help=argparse.SUPPRESS)
    ap.add_argument("--progress", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.one[2], args.out, args.progress,
                                 args.profile and args.one[2].startswith("engine"), args.breakdown)))
        return
    if args.report:
        rows = json.loads(args.report.read_text())
        for r in rows:
            print_one(r, summarize(r))
        report(rows, sorted({r["events"] for r in rows}), list(dict.fromkeys(r["variant"] for r in rows)),
               list(dict.fromkeys(r["workload"] for r in rows)))
        return
    names = args.workloads.split(",")
    sizes = [int(x) for x in args.sizes.split(",")]
    variants = list(PARTS) if args.parts else args.variants.split(",")
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        sys.exit(f"unknown variants: {', '.join(sorted(unknown))} (known: {', '.join(VARIANTS)})")
    if "tws" in variants and not _has_protobuf():
        sys.exit("the tws variant needs protobuf (PySpark's transformWithStateInPandas): pip install protobuf")
    for name in names:  # written before any clock runs
        for n in sizes:
            workloads.ensure(args.out, name, n, files=FILES)
    rows = []
    for name in names:
        for n in sizes:
            for v in [v for _ in range(args.repeat) for v in variants]:
                r = run_one(name, n, v, args.out, args.timeout, args.profile, args.breakdown)
                if r:
                    rows.append(r)
                    print_one(r, summarize(r))
                    if args.json:
                        args.json.write_text(json.dumps(rows, indent=1))
    report(rows, sizes, variants, names)


def report(rows: list, sizes: list, variants: list, names: list):
    print("\nbatch by batch: s/input rows; the state store's rows, its memory and (HDFS store) its "
          "current version per key; the state operator's update and commit time, summed over its tasks")
    for r in rows:
        print_series(r)
    print_summary(rows, sizes, variants, names)
    if any(v in variants for v in PARTS if v not in DEFAULT_VARIANTS.split(",")):
        print_parts(rows, sizes, names)
    if "engine" in variants and "noop" in variants:
        print_engine_over_noop(rows, sizes, names)
    if any("spark_metrics" in r or "jvm_threads" in r for r in rows):
        print_breakdown(rows, sizes, names)
    if any("profile" in r for r in rows):
        print("\nthe Python workers' CPU in the engine's group calls (--profile; cProfile adds its own cost):")
        for r in rows:
            if "profile" in r:
                print_profile(r)


if __name__ == "__main__":
    main()
