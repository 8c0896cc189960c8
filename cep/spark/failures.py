"""Spark's failures that are the user's to fix, as the user's errors: the one
place where a failed Spark query becomes a message (cep.spark.job calls it
for every run; anything it does not recognise is a bug, reported with its
traceback).

Spark hands the driver the failure of a task or query as an exception
whose text, and whose Java causes, hold the worker's Python traceback and
Spark's error classes. What is recognised there:

- a worker's CepError (a limit of cep.limits reached, ...): its words;
- CANNOT_LOAD_STATE_STORE: the checkpoint's state cannot be read (a state
  file damaged or missing, found only when a micro-batch loads it);
- FAILED_READ_FILE: Spark's own reader cannot read an event file (a
  Parquet file that is damaged, or whose times Spark's reader cannot hold):
  the file named, with Spark's reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from cep.errors import CepError, CheckpointError, EngineError, UsageError


def user_error(exc: BaseException, checkpoint: Path | None = None) -> CepError | None:
    """The message for a failure of a Spark query that the user can act on
    (see the module's docstring); None for any other failure."""
    from cep.spark.checkpoint import START_AGAIN

    text, reason = _java(exc)
    found = re.search(r"^cep\.errors\.\w+: (.+)$", text, re.MULTILINE)
    if found:
        return EngineError(found.group(1))
    if checkpoint is not None and "CANNOT_LOAD_STATE_STORE" in text:
        return CheckpointError(f"checkpoint {checkpoint}: its state (under {checkpoint}/state) cannot be read: a "
                               "file of it is damaged or missing" + (f" (Spark: {reason})" if reason else "")
                               + f"; {START_AGAIN}")
    found = re.search(r"\[FAILED_READ_FILE[.\w]*\] Encountered error while reading file (\S+?)\.?\s", text)
    if found:
        return UsageError(f"{_path(found.group(1))}: Spark cannot read this event file"
                          + (f" ({reason})" if reason else "")
                          + ": it is damaged, or holds a value Spark's reader cannot take; move it out of "
                            "the input")
    return None


def _path(uri: str) -> str:
    """A file: URI as a path (messages name files as the user gave them)."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _java(exc: BaseException) -> tuple[str, str]:
    """The messages of a PySpark exception's Java exception and its causes,
    as one text, and the first line of the innermost one."""
    throwable = getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)
    messages = [str(exc)]
    while throwable is not None and len(messages) < 20:
        messages.append(str(throwable.getMessage() or "").strip())
        throwable = throwable.getCause()
    innermost = next((m for m in reversed(messages) if m), "")
    return "\n".join(messages), innermost.splitlines()[0] if innermost else ""
