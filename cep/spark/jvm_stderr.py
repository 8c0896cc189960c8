"""The standard error of Spark's JVM, passed on by the `cep` command line
by line, so that a stop's known noise can be dropped.

Ctrl-C stops the query (cep.spark.job._await), which cancels its tasks:
Spark closes the socket of a Python worker cut off mid-task, and the
worker's next write to it fails. PySpark's daemon then prints that
BrokenPipeError with its traceback (pyspark/daemon.py, the flush in
worker()'s `finally`) on its standard error, which is the JVM's, which
was the command's: a traceback under `cep: interrupted`, though nothing
went wrong. The command starts the JVM with its standard error piped
through this process (PySpark's launch_gateway(popen_kwargs=...), before
the session is built); once the run is interrupted, such a traceback is
dropped, until a query starts again in the same process (a program that
embeds the engine and runs another query): its tracebacks are its own.
Every other line, and a traceback of anything else, is written as it
came.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading

_interrupted = threading.Event()
TRACEBACK = b"Traceback (most recent call last):\n"
# printed before the traceback where spark.python.daemon.killWorkerOnFlushFailure is false
FLUSH_FAILED = b"PySpark daemon failed to flush the output to the worker process:\n"
CHAINED = (b"During handling of the above exception", b"The above exception was the direct cause")
CUT_OFF = re.compile(rb"(BrokenPipeError|ConnectionResetError)\b")
DAEMON_FRAME = re.compile(rb'  File ".*pyspark/daemon\.py", line \d+, in \w+\n')


def interrupted() -> None:
    """The run was interrupted: its workers' cut-off tracebacks are noise."""
    _interrupted.set()


def running() -> None:
    """A query starts (cep.spark.job._await): a traceback is news again,
    whatever an earlier query's interrupt said."""
    _interrupted.clear()


def launch(options: dict) -> None:
    """Start Spark's JVM with `options` (the session's settings, as the
    session builder would pass them) and its standard error read by a
    thread of this process; nothing when a JVM is already there (a
    session of this process, or spark-submit's)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    conf = SparkConf(loadDefaults=False)
    for key, value in options.items():
        conf.set(key, str(value))
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    SparkContext._ensure_initialized(gateway=gateway)
    threading.Thread(target=pass_on, args=(gateway.proc.stderr, 2), name="cep-jvm-stderr", daemon=True).start()


def pass_on(pipe, fd: int) -> None:
    """Copy the lines of `pipe` to the file descriptor `fd` until the pipe
    ends, but for a cut-off worker's traceback after an interrupt."""
    held: list[bytes] = []  # a cut-off traceback, kept until it is known not to go on (a chained exception)
    lines = iter(pipe.readline, b"")
    for line in lines:
        if held:
            if line == b"\n":
                held.append(line)
                continue
            if line.startswith(CHAINED):
                os.write(fd, b"".join(held))
            held = []
        if _interrupted.is_set() and line in (TRACEBACK, FLUSH_FAILED):
            block = _traceback(line, lines)
            if _cut_off(block):
                held = block
                continue
            line = b"".join(block)
        os.write(fd, line)


def _traceback(first: bytes, lines) -> list[bytes]:
    """The lines of a traceback from its first line to its exception's."""
    block = [first]
    for line in lines:
        block.append(line)
        if line != TRACEBACK and not line.startswith(b" "):
            break
    return block


def _cut_off(block: list[bytes]) -> bool:
    """A traceback of PySpark's daemon writing to a worker's closed socket."""
    frames = [line for line in block if line.startswith(b'  File "')]
    return (block[-1:] != [] and CUT_OFF.match(block[-1]) is not None and bool(frames)
            and all(DAEMON_FRAME.fullmatch(line) for line in frames))
