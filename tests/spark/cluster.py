"""A Spark standalone cluster on this machine, for tests/spark/test_cluster.py:
a master and two workers, each its own JVM started with pyspark's own
bin/spark-class, as `start-master.sh` and `start-worker.sh` of a Spark
distribution would (pyspark's package has spark-class but not those
scripts). Each runs in a process group of its own, so stop() ends the
daemons and every executor and Python worker they started."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pyspark

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, base: Path, env: dict, workers: int = 2):
        self.base = base
        self.env = {**env, "SPARK_LOCAL_IP": HOST, "SPARK_DAEMON_MEMORY": "512m",
                    "SPARK_CONF_DIR": str(base / "conf")}  # no spark-defaults.conf of the machine's
        (base / "conf").mkdir(parents=True, exist_ok=True)
        self.workers = workers
        self.processes: list[subprocess.Popen] = []
        self.url = None

    def _start(self, name: str, *argv) -> None:
        log = open(self.base / f"{name}.log", "wb")  # noqa: SIM115 - the process holds it
        self.processes.append(subprocess.Popen([str(SPARK_CLASS), *argv], stdout=log, stderr=subprocess.STDOUT,
                                               env=self.env, cwd=self.base, start_new_session=True))
        log.close()

    def start(self, timeout: float = 180) -> str:
        """Start the master and the workers; the master's URL once every
        worker has registered."""
        port, ui = free_port(), free_port()
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(port),
                    "--webui-port", str(ui))
        self.url = f"spark://{HOST}:{port}"
        for i in range(self.workers):
            work = self.base / f"worker{i}"
            work.mkdir(exist_ok=True)
            self._start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", self.url, "--host", HOST,
                        "--cores", "1", "--memory", "1g", "--work-dir", str(work),
                        "--webui-port", str(free_port()))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.processes):
                raise RuntimeError(f"a Spark daemon exited: {self.logs()}")
            try:
                with urllib.request.urlopen(f"http://{HOST}:{ui}/json/", timeout=5) as answer:
                    if json.load(answer).get("aliveworkers") == self.workers:
                        return self.url
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"the workers did not register in {timeout} s: {self.logs()}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:]
                         for p in sorted(self.base.glob("*.log")))

    def stop(self) -> None:
        """End every process of the cluster (daemons, executors, Python
        workers), even those a failed start left behind."""
        for p in self.processes:
            _signal_group(p, signal.SIGTERM)
        for p in self.processes:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(p, signal.SIGKILL)  # what outlived SIGTERM: executors are in the group too
            p.wait()


def _signal_group(process, sig) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass
