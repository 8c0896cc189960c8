"""bench/spark.py --breakdown: Spark's event log summed per operator and
stage, the JVM's threads by kind, and py-spy's stacks by function, read
from files of the forms Spark and py-spy write."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("bench_spark", ROOT / "bench" / "spark.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return module


def _task(stage_writes: bool, updates: dict, cpu_ns: int) -> dict:
    metrics = {"Executor CPU Time": cpu_ns, "Executor Run Time": 7, "JVM GC Time": 1,
               "Shuffle Write Metrics": {"Shuffle Records Written": 5 if stage_writes else 0,
                                         "Shuffle Bytes Written": 100 if stage_writes else 0},
               "Shuffle Read Metrics": {"Local Bytes Read": 0 if stage_writes else 100}}
    return {"Event": "SparkListenerTaskEnd", "Task Metrics": metrics,
            "Task Info": {"Accumulables": [{"ID": i, "Name": "x", "Update": v} for i, v in updates.items()]}}


def test_event_log_sums_each_operators_metrics_over_its_tasks_and_batches(tmp_path, bench):
    def plan(update_id, rows_id):  # each micro-batch is an execution of its own, with its own accumulators
        return {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                "sparkPlanInfo": {"nodeName": "FlatMapGroupsInPandasWithState", "metrics": [
                    {"name": "time to update", "accumulatorId": update_id, "metricType": "timing"},
                    {"name": "number of output rows", "accumulatorId": rows_id, "metricType": "sum"}],
                    "children": [{"nodeName": "Exchange", "metrics": [
                        {"name": "shuffle bytes written", "accumulatorId": rows_id + 1, "metricType": "size"}],
                        "children": []}]}}

    events = [plan(1, 2), _task(True, {3: 100}, 2_000_000_000), _task(False, {1: 40, 2: 7}, 1_000_000_000),
              plan(11, 12), _task(False, {11: 60, 12: "3"}, 500_000_000)]
    (tmp_path / "app-1").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    (tmp_path / ".app-1.crc").write_bytes(b"\xb5\x00")  # Hadoop's checksum beside it: not read
    got = bench.event_log_metrics(tmp_path)
    assert got["sql"] == {"FlatMapGroupsInPandasWithState | time to update": [100.0, "ms"],
                          "FlatMapGroupsInPandasWithState | number of output rows": [10.0, ""],
                          "Exchange | shuffle bytes written": [100.0, "bytes"]}
    assert got["stages"]["map"]["executor CPU s"] == 2.0 and got["stages"]["map"]["tasks"] == 1
    assert got["stages"]["reduce"]["executor CPU s"] == 1.5 and got["stages"]["reduce"]["shuffle bytes read"] == 200


def test_jvm_threads_by_kind_with_the_ended_ones_apart(bench):
    before = {1: ("tasks", 1.0), 2: ("JIT (C1, C2)", 5.0)}
    after = {1: ("tasks", 4.0), 2: ("JIT (C1, C2)", 6.5), 3: ("tasks", 2.0)}
    assert bench.jvm_breakdown(before, after, 10.0) == {"tasks": 5.0, "JIT (C1, C2)": 1.5, "ended threads": 3.5}


def test_py_spy_stacks_of_the_workers_by_function(tmp_path, bench):
    class Done:
        def send_signal(self, _):
            pass

        def wait(self, timeout=None):
            return 0

    out = tmp_path / "stacks.txt"
    out.write_text(
        'process 9:"python -m pyspark.daemon";manager (pyspark/daemon.py:10);push (/x/wt/a/cep/engine.py:3) 7\n'
        'process 9:"python -m pyspark.daemon";manager (pyspark/daemon.py:10);read (/x/site-packages/pa.py:5) 3\n'
        'process 8:"python bench/spark.py";measure (bench/spark.py:1) 50\n')
    got = bench.stop_py_spy(Done(), out)
    assert got["samples"] == 10  # the driver's stacks left out
    assert dict((f, (i, o)) for f, i, o in got["functions"]) == {
        "manager (pyspark/daemon.py)": (10, 0), "push (cep/engine.py)": (7, 7), "read (pa.py)": (3, 3)}
