"""The lines of a text input, for the line-based readers (N-Triples,
N-Quads, JSON Lines, CSV): numbered from 1, in chunks, with two failures
turned into Rejects instead of stopping the run:

    a line longer than MAX_LINE_BYTES   skipped without being held in memory
    a read that fails                   (a gzip file cut short or damaged, an
                                        I/O error): what was read is kept,
                                        the rest of the file is lost

A line ends at LF; with `universal` (N-Triples and N-Quads, whose EOL is
CR or LF, and CSV, as Python's csv module reads it) also at CR and CRLF.
"""

from __future__ import annotations

import re

from cep import terms
from cep.events import Reject

# a record holds at most four terms (N-Quads) of at most MAX_TERM_BYTES each
MAX_LINE_BYTES = 4 * terms.MAX_TERM_BYTES + (1 << 20)
BLOCK = 1 << 20
_ENDS = {True: re.compile(rb"\r\n|\r|\n"), False: re.compile(rb"\n")}


def line_chunks(handle, name: str, rejects: list, rows: int, universal: bool = False):
    """Lists of (line number, bytes without the line end) of at most `rows`
    lines each, read a block at a time; rejects are appended."""
    from cep.io.readers import READ_ERRORS, read_failure

    limit, ends = MAX_LINE_BYTES, _ENDS[universal]
    read = getattr(handle, "read1", handle.read)
    chunk, number = [], 0
    rest = b""  # the start of a line whose end is not read yet
    long = None  # (line number, first bytes, bytes so far) of a line over the limit, skipped as it is read
    try:
        while True:
            block = read(BLOCK)
            if not block:
                break
            data = rest + block
            held = b"\r" if universal and data.endswith(b"\r") else b""  # a CR LF may be cut between blocks
            parts = ends.split(data[:len(data) - len(held)])
            rest = parts.pop() + held
            for line in parts:
                if long is not None:
                    _too_long(rejects, name, long, len(line))
                    long = None
                    continue
                number += 1
                if len(line) > limit:
                    _too_long(rejects, name, (number, line[:200], 0), len(line))
                    continue
                chunk.append((number, line.rstrip(b"\r")))
                if len(chunk) >= rows:
                    yield chunk
                    chunk = []
            if chunk and getattr(handle, "idle", False):  # a followed input has no more for now (cep.io.follow)
                yield chunk
                chunk = []
            if len(rest) > limit:
                if long is None:
                    number += 1
                    long = (number, rest[:200], 0)
                long = (long[0], long[1], long[2] + len(rest))
                rest = b""
    except READ_ERRORS as exc:
        rejects.append(Reject(f"{name}:{number + 1}", read_failure(exc)))
        rest = b""
    if long is not None:
        _too_long(rejects, name, long, len(rest))
    elif rest:
        number += 1
        chunk.append((number, rest.rstrip(b"\r")))
    if chunk:
        yield chunk


def _too_long(rejects, name, long, more):
    number, head, size = long
    rejects.append(Reject(f"{name}:{number}", f"the line is longer than {MAX_LINE_BYTES:,} bytes "
                                              f"({size + more:,}); skipped", head.decode("utf-8", "replace")))
