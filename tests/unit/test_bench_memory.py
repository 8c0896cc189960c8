"""bench/memory.py's figures of the process that runs the engine. Its
peak was getrusage's ru_maxrss, which a process started by exec keeps
from its parent when the parent's is higher: the first run, whose parent
had just made the 4M-event Parquet file, printed a peak of 1,718 MB for
an engine whose resident memory was 342 MB."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A parent that has touched 600 MB runs a child that reports its own peak
# as bench/memory.py measures it.
PARENT = r"""
import subprocess, sys
held = bytearray(600 * 2**20)
for i in range(0, len(held), 4096):
    held[i] = 1
child = "import sys; sys.path.insert(0, 'bench'); import memory; print(memory.status_mb('VmHWM'))"
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout)
"""


def test_the_peak_is_the_measuring_process_own():
    proc = subprocess.run([sys.executable, "-c", PARENT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    peak = float(proc.stdout.split()[-1])
    assert 0 < peak < 400, f"the child's peak, {peak} MB, is its parent's"


# The same parent runs one measurement of a bench script that runs each
# in a process of its own (--one), which prints its figures as JSON.
PARENT_OF_ONE = r"""
import json, subprocess, sys
held = bytearray(800 * 2**20)
for i in range(0, len(held), 4096):
    held[i] = 1
out = subprocess.run([sys.executable, *sys.argv[1:]], capture_output=True, text=True, check=True).stdout
print(json.loads(out.strip().splitlines()[-1])["peak_rss_mb"])
"""


@pytest.mark.parametrize("script, args", [
    ("bench/run.py", ["--one", "w1", "2000", "cold", "--warmup", "100", "--batch-size", "1000"]),
    ("bench/delivery.py", ["--one", "1", "--locations", "3"]),
], ids=["run", "delivery"])
def test_the_bench_scripts_peaks_are_their_measuring_process_own(tmp_path, script, args):
    """bench/run.py and bench/delivery.py read the peak as memory.py does
    (memory.status_mb): an engine of about 200 MB run by a parent of
    800 MB reported 800 MB with ru_maxrss."""
    proc = subprocess.run([sys.executable, "-c", PARENT_OF_ONE, script, *args, "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    peak = float(proc.stdout.split()[-1])
    assert 0 < peak < 600, f"the measuring process's peak, {peak} MB, is its parent's"


def test_each_size_reports_the_memory_in_use_beside_the_resident(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import memory
    finally:
        sys.path.remove(str(ROOT / "bench"))
    rows = list(memory.measure("w3", [2_000, 4_000], tmp_path, 1_000))
    assert [r["events"] for r in rows] == [2_000, 4_000]
    for r in rows:
        assert 0 < r["rss_mb"] <= r["peak_rss_mb"]
        assert r["malloc_mb"] is None or 0 < r["malloc_mb"] < r["peak_rss_mb"]
        assert 0 <= r["arrow_mb"] < r["peak_rss_mb"]
    # every tick so far is in the hour's window, its solution keyed by an atom
    assert rows[1]["atoms"] - rows[0]["atoms"] >= 1_900


# bench/cli.py run in a process that has touched 800 MB, as one that has
# just made the workload's Parquet file has: it runs each measurement in a
# child, whose peaks it prints in its lines of figures.
CLI_AFTER_800_MB = r"""
import runpy, sys
held = bytearray(800 * 2**20)
for i in range(0, len(held), 4096):
    held[i] = 1
sys.argv = ["bench/cli.py", *sys.argv[1:]]
runpy.run_path("bench/cli.py", run_name="__main__")
"""


def test_the_cli_bench_peaks_are_the_measured_processes_own(tmp_path):
    """bench/cli.py read the peaks of its children from wait4's ru_maxrss,
    which a child started by exec keeps from its parent when the parent's
    is higher: each child was said to take 800 MB."""
    proc = subprocess.run([sys.executable, "-c", CLI_AFTER_800_MB, "--sizes", "2000,4000", "--batch-size", "1000",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    peaks = [float(p.replace(",", "")) for p in re.findall(r"peak ([\d,.]+) MB", proc.stdout)]
    assert len(peaks) == 4, proc.stdout
    assert all(0 < peak < 600 for peak in peaks), f"the children's peaks, {peaks} MB, are their parent's"
