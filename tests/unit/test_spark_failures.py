"""Spark's failures as the user's messages (cep.spark.failures), from the
text of the exceptions Spark gives the driver, without Spark:
tests/spark has the runs that fail so."""

from __future__ import annotations

from pathlib import Path

from cep.errors import CheckpointError, EngineError, UsageError
from cep.spark.failures import user_error

WORKER = """An exception was thrown from the Python worker. Please see the stack trace below.
Traceback (most recent call last):
  File "/x/cep/engine.py", line 9, in push_table
cep.errors.EngineError: the CONSTRUCT rules reify derived more than 300 triples
"""
STATE = "[CANNOT_LOAD_STATE_STORE.UNCATEGORIZED] An error occurred during loading state. SQLSTATE: 58030"
READ = ("[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:///data/in%20here/e.parquet.  "
        "SQLSTATE: KD001")


def test_a_workers_error_is_its_message():
    error = user_error(RuntimeError(WORKER))
    assert type(error) is EngineError and str(error) == "the CONSTRUCT rules reify derived more than 300 triples"


def test_a_state_that_cannot_be_loaded_names_the_checkpoint():
    error = user_error(RuntimeError(STATE), Path("/c"))
    assert type(error) is CheckpointError and str(error).startswith("checkpoint /c: its state (under /c/state)")
    assert user_error(RuntimeError(STATE)) is None  # no checkpoint of the user's


def test_a_file_spark_cannot_read_is_named_as_a_path():
    error = user_error(RuntimeError(READ))
    assert type(error) is UsageError
    assert str(error).startswith("/data/in here/e.parquet: Spark cannot read this event file")


def test_any_other_failure_is_not_the_users():
    assert user_error(RuntimeError("java.lang.NullPointerException")) is None
