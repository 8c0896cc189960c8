"""The JVM's standard error as `cep run --engine spark` passes it on
(cep.spark.jvm_stderr): after an interrupt, the traceback PySpark's daemon
prints for a worker cut off mid-write is dropped; every other line, and
any other traceback, is passed on as it came. (The same through a real
Spark: tests/spark/test_cli_spark.py, a worker cut off by Ctrl-C.)"""

from __future__ import annotations

import io
import os

import pytest

from cep.spark import jvm_stderr

DAEMON = '  File "/opt/spark/python/lib/pyspark.zip/pyspark/daemon.py", line {}, in {}\n'
CUT_OFF = ["Traceback (most recent call last):\n", DAEMON.format(264, "manager"), DAEMON.format(95, "worker"),
           "BrokenPipeError: [Errno 32] Broken pipe\n"]
FLUSH_FAILED = ["PySpark daemon failed to flush the output to the worker process:\n", *CUT_OFF[:-1],
                "ConnectionResetError: [Errno 104] Connection reset by peer\n", "\n"]
OTHER = ["Traceback (most recent call last):\n", '  File "/work/cep/spark/worker.py", line 12, in run\n',
         "    rows = step(batch)\n", "BrokenPipeError: [Errno 32] Broken pipe\n"]
CHAINED = [*CUT_OFF, "\n", "During handling of the above exception, another exception occurred:\n", "\n",
           "Traceback (most recent call last):\n", DAEMON.format(270, "manager"), "SystemExit: 1\n"]


def passed_on(lines, interrupted):
    jvm_stderr._interrupted.clear()
    if interrupted:
        jvm_stderr.interrupted()
    try:
        return written(lines)
    finally:
        jvm_stderr._interrupted.clear()


def written(lines):
    read, write = os.pipe()
    try:
        jvm_stderr.pass_on(io.BytesIO("".join(lines).encode()), write)
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as out:
        return out.read().decode()


@pytest.mark.parametrize("noise", [CUT_OFF, FLUSH_FAILED], ids=["killed-on-flush-failure", "flush-failure-printed"])
def test_a_cut_off_workers_traceback_is_dropped_after_an_interrupt_only(noise):
    lines = ["26/11/26 03:34:39 WARN Utils: a line of Spark's\n", *noise, "a line after\n"]
    assert passed_on(lines, interrupted=True) == lines[0] + lines[-1]
    assert passed_on(lines, interrupted=False) == "".join(lines)


@pytest.mark.parametrize("lines", [OTHER, CHAINED, CUT_OFF[:-1] + ["ValueError: no cut-off\n"]],
                         ids=["another-frame", "chained", "another-error"])
def test_other_tracebacks_are_passed_on_after_an_interrupt(lines):
    assert passed_on(lines, interrupted=True) == "".join(lines)


def test_a_query_started_after_an_interrupt_has_its_tracebacks_passed_on():
    """A program that embeds the engine runs a second query in the same
    process (the same JVM, the same reader of its standard error) after
    Ctrl-C stopped the first: the interrupt was the first query's."""
    from cep.spark import job

    class Ended:  # a query that has ended, as job._await sees it
        def awaitTermination(self, timeout):
            return True

        def exception(self):
            return None

    class Progress:
        def wait(self, query):
            pass

    jvm_stderr.interrupted()
    try:
        job._await(Ended(), Progress(), job._Signals())
        assert written(CUT_OFF) == "".join(CUT_OFF)
    finally:
        jvm_stderr._interrupted.clear()
