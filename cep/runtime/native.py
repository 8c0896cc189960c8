"""The runtime's C helpers, built where they are used: prolog/cep_fast.c,
a SWI-Prolog foreign library that decodes event batches, and
cep/runtime/batch_text.c, a plain C library that writes them from Arrow
arrays (cep/runtime/batch.py calls it through ctypes) and tells the terms
of a column already canonical (cep/io/tables.py).

In a checkout `make setup` builds each beside its source (prolog/cep_fast.so,
cep/runtime/batch_text.so, with `python -m cep.runtime.native`), again
whenever the source changed: a library holds its source's digest, and
neither prolog/cep_fast.pl nor batch_text() uses one built from another
version of its source (cep_fast.pl says so, naming the fix).
An installed package carries only the sources: the first session of a machine builds them (cep_fast with
swipl-ld, batch_text with the C compiler) into a per-user cache, keyed by
the source and what it links against, and every later process (a Spark
executor's too) loads those files. Where nothing can build them (no
swipl-ld or C compiler, no writable cache), the runtime uses its Prolog
versions of cep_fast's predicates (prolog/cep_fast.pl) and Arrow's kernels
for the batch text (cep/runtime/batch.py), slower and with the same
results."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from cep.resources import cache_dir, data_dir

SOURCE = "cep_fast.c"
BATCH_TEXT = Path(__file__).with_name("batch_text.c")


def _source(source: Path | None) -> Path:
    return data_dir("prolog") / SOURCE if source is None else source


def digest(source: Path | None = None) -> str:
    """The SHA-256 (hex) of a helper's source (default: cep_fast.c), compiled into it by build."""
    return hashlib.sha256(_source(source).read_bytes()).hexdigest()


def current(library: Path, source: Path | None = None) -> bool:
    """Whether the library was built from the source as it is (holds its digest)."""
    try:
        return digest(source).encode() in library.read_bytes()
    except OSError:
        return False


def _commands(source: Path, target: Path) -> list[list[str]]:
    """The commands that compile `source` into `target`, tried in turn."""
    if source.name == SOURCE:
        # optimised: swipl-ld compiles without -O, and the answer writer is a hot loop;
        # with GMP where its header and library are installed (rationals read and
        # made as numbers, not through their text), else without; the source's
        # digest compiled in, so that prolog/cep_fast.pl can refuse a stale build
        return [["swipl-ld", "-shared", "-O2", f'-DCEP_FAST_SOURCE="{digest(source)}"', *flags,
                 "-o", str(target), str(source)] for flags in (["-lgmp"], ["-DCEP_NO_GMP"])]
    return [[os.environ.get("CC") or "cc", "-shared", "-fPIC", "-O2", f'-DCEP_BATCH_SOURCE="{digest(source)}"',
             "-o", str(target), str(source)]]


def build(target: Path, source: Path | None = None) -> bool:
    """Compile a helper (default: cep_fast.c) into `target` (written whole
    or not at all: a process loading it never sees half a file), with the
    SHA-256 of its source in it (c_source/1, cep_batch_source(): no
    library built from another version of the source is used). False
    where it cannot be built."""
    source = _source(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:  # swipl-ld leaves its objects in the cwd
        partial = Path(work) / target.name
        for command in _commands(source, partial):
            try:
                done = subprocess.run(command, cwd=work, capture_output=True, timeout=300)
            except (OSError, subprocess.TimeoutExpired):
                return False
            if done.returncode == 0 and partial.exists():
                os.replace(partial, target)
                return True
        return False


def cached(linked: str, source: Path | None = None) -> Path | None:
    """A helper (default: cep_fast.c) built for what `linked` describes
    (the SWI-Prolog's version and architecture; the machine), from the
    cache, building it there first if needed; None where it cannot be
    built."""
    source = _source(source)
    key = hashlib.sha256(source.read_bytes() + linked.encode()).hexdigest()[:16]
    folders = [cache_dir(), Path(tempfile.gettempdir()) / "cep"]  # an executor's home may be read-only
    for folder in filter(None, folders):
        target = folder / f"{source.stem}-{key}.so"
        if target.exists():
            return target
        try:
            if build(target, source):
                return target
        except OSError:
            continue
    return None


@functools.cache
def batch_text() -> ctypes.CDLL | None:
    """The batch writer (cep/runtime/batch_text.c) loaded, its functions
    typed; None where it cannot be built or CEP_NO_FOREIGN is set (batch.py
    then makes the same text with Arrow's kernels)."""
    if os.environ.get("CEP_NO_FOREIGN"):
        return None
    beside = BATCH_TEXT.with_suffix(".so")
    library = beside if current(beside, BATCH_TEXT) else cached(f"{sys.platform} {platform.machine()}", BATCH_TEXT)
    if library is None:
        return None
    try:
        lib = ctypes.CDLL(str(library))
    except OSError:
        return None
    lib.cep_batch_source.restype = ctypes.c_char_p
    if lib.cep_batch_source().decode() != digest(BATCH_TEXT):
        return None
    p, n = ctypes.c_void_p, ctypes.c_int64
    lib.cep_field_extra.restype = lib.cep_line_extra.restype = n
    lib.cep_term_fields.restype = n
    lib.cep_term_fields.argtypes = [n, p, p, p, n, p, p, p]
    lib.cep_batch_lines.restype = n
    lib.cep_batch_lines.argtypes = [n, p, p, n, p, p, n, p, p, n, p, p, p]
    lib.cep_canonical_terms.restype = None
    lib.cep_canonical_terms.argtypes = [n, p, p, p, n, n, p]
    return lib


if __name__ == "__main__":  # `make setup`: python -m cep.runtime.native prolog/cep_fast.so cep/runtime/batch_text.so
    sources = {SOURCE: None, BATCH_TEXT.name: BATCH_TEXT}
    targets = [Path(name).resolve() for name in sys.argv[1:]]
    sys.exit(0 if all(current(t, sources[t.stem + ".c"]) or build(t, sources[t.stem + ".c"]) for t in targets) else 1)
