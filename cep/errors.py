"""The project's error types. Every message is written for the person who
wrote the query or produced the data, and starts with where: file:line:column."""

from __future__ import annotations

import re

# C0 and C1 control characters but tab and line feed: an escape sequence
# (ESC [ 2 J, OSC ... BEL) would drive the terminal the message is read on
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def for_terminal(message: str) -> str:
    """A message as it may be written to a terminal: what it quotes of the
    input (a rejected record, a rule file's text) shows its control
    characters escaped (\\x1b), so that no event or query can write to the
    terminal (`cep` on its standard error, a Spark worker on its own)."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", message)


class CepError(Exception):
    """Base class: a problem the user can fix; the CLI exits 2 on these."""


class PlacedError(CepError):
    """A problem in a file the user gave, with its place `pos` ("path",
    "path:line" or "path:line:column", or an object that prints so), or
    None where the caller adds it."""

    def __init__(self, message: str, pos=None):
        self.message = message
        self.pos = pos
        super().__init__(f"{pos}: {message}" if pos is not None else message)


class QueryError(PlacedError):
    """A query or rule file that cannot be run: syntax or semantic error."""


class OntologyError(PlacedError):
    """A background knowledge file that cannot be read: missing, of an
    unknown type, or malformed."""


class PrologFileError(PlacedError):
    """A user Prolog file (--prolog) that cannot be loaded: missing, not
    text, or refused by SWI-Prolog."""


class UsageError(CepError):
    """Wrong command-line use (missing file, unknown format, ...)."""


class EngineError(CepError):
    """The Prolog runtime reported an error while loading or running rules."""


class CheckpointError(CepError):
    """A Spark checkpoint (--checkpoint) that the run cannot resume from:
    made by another run (other rules or options), moved, or damaged."""
