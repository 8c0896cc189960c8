"""The runtime's C helper (prolog/cep_fast.c, a SWI-Prolog foreign library
that decodes event batches): built where it is used.

In a checkout `make setup` builds it beside its source (prolog/cep_fast.so,
with `python -m cep.runtime.native`), again whenever the source changed:
the library holds its source's digest, and prolog/cep_fast.pl uses none
built from another version of the source (it says so, naming the fix).
An installed package carries only the source: the first session of a machine builds it with swipl-ld into a
per-user cache, keyed by the source and the SWI-Prolog it links against,
and every later process (a Spark executor's too) loads that file. Where
nothing can build it (no swipl-ld or C compiler, no writable cache), the
runtime uses its Prolog versions of the same predicates (prolog/cep_fast.pl),
slower and with the same results."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from cep.resources import cache_dir, data_dir

SOURCE = "cep_fast.c"


def digest() -> str:
    """The SHA-256 (hex) of the helper's source, compiled into it by build."""
    return hashlib.sha256((data_dir("prolog") / SOURCE).read_bytes()).hexdigest()


def current(library: Path) -> bool:
    """Whether the library was built from the source as it is (holds its digest)."""
    try:
        return digest().encode() in library.read_bytes()
    except OSError:
        return False


def build(target: Path) -> bool:
    """Compile the helper into `target` (written whole or not at all: a
    process loading it never sees half a file), with the SHA-256 of its
    source in it (c_source/1: prolog/cep_fast.pl loads no library built
    from another version of the source). False where it cannot be built."""
    source = data_dir("prolog") / SOURCE
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:  # swipl-ld leaves its objects in the cwd
        partial = Path(work) / target.name
        # optimised: swipl-ld compiles without -O, and the answer writer is a hot loop;
        # with GMP where its header and library are installed (rationals read and
        # made as numbers, not through their text), else without; the source's
        # digest compiled in, so that prolog/cep_fast.pl can refuse a stale build
        for flags in (["-lgmp"], ["-DCEP_NO_GMP"]):
            try:
                done = subprocess.run(["swipl-ld", "-shared", "-O2", f'-DCEP_FAST_SOURCE="{digest()}"', *flags,
                                       "-o", str(partial), str(source)], cwd=work, capture_output=True, timeout=300)
            except (OSError, subprocess.TimeoutExpired):
                return False
            if done.returncode == 0 and partial.exists():
                os.replace(partial, target)
                return True
        return False


def cached(swipl: str) -> Path | None:
    """The helper built for the SWI-Prolog described by `swipl` (its
    version and architecture), from the cache, building it there first if
    needed; None where it cannot be built."""
    source = (data_dir("prolog") / SOURCE).read_bytes()
    key = hashlib.sha256(source + swipl.encode()).hexdigest()[:16]
    folders = [cache_dir(), Path(tempfile.gettempdir()) / "cep"]  # an executor's home may be read-only
    for folder in filter(None, folders):
        target = folder / f"cep_fast-{key}.so"
        if target.exists():
            return target
        try:
            if build(target):
                return target
        except OSError:
            continue
    return None


if __name__ == "__main__":  # `make setup`: python -m cep.runtime.native prolog/cep_fast.so
    target = Path(sys.argv[1]).resolve()
    sys.exit(0 if current(target) or build(target) else 1)
