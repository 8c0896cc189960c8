"""A C library of the runtime (prolog/cep_fast.so) built from another
version of prolog/cep_fast.c is not used: prolog/cep_fast.pl says so, naming
the fix, and takes its Prolog versions, where the library would have failed
at run time (a predicate of the newer source missing from it)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from cep.runtime import native

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("swipl-ld") is None, reason="needs swipl-ld")

# the library loaded or not, then the band of a number through it (c_band/2)
PROBE = ("use_module(fast/cep_fast), (cep_fast:foreign_loaded -> writeln(c) ; writeln(prolog)), "
         "(cep_fast:cep_fast_band(1.5, B) -> writeln(B) ; writeln(none))")


def _beside(tmp_path: Path) -> Path:
    folder = tmp_path / "fast"
    folder.mkdir()
    for name in ("cep_fast.pl", "cep_fast.c"):
        shutil.copy(ROOT / "prolog" / name, folder / name)
    return folder


def _probe(tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["swipl", "-g", PROBE, "-t", "halt"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)


def test_a_library_built_from_the_source_beside_it_is_used(tmp_path):
    folder = _beside(tmp_path)
    assert native.build(folder / "cep_fast.so")
    assert native.current(folder / "cep_fast.so")  # (`make setup` leaves it as it is)
    done = _probe(tmp_path)
    assert done.stdout.split() == ["c", "21"], done.stderr
    assert "make setup" not in done.stderr


def test_a_library_built_from_an_older_source_is_refused_with_the_fix_named(tmp_path):
    """The library of a source from before c_band/2 (and c_source/1)."""
    folder = _beside(tmp_path)
    older = tmp_path / "older"
    older.mkdir()
    text = (ROOT / "prolog" / "cep_fast.c").read_text()
    text = "\n".join(line for line in text.splitlines()
                     if 'register_foreign("c_band"' not in line and 'register_foreign("c_source"' not in line)
    (older / "cep_fast.c").write_text(text)
    built = subprocess.run(["swipl-ld", "-shared", "-o", str(folder / "cep_fast.so"), str(older / "cep_fast.c")],
                           cwd=older, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert not native.current(folder / "cep_fast.so")  # (`make setup` builds it again)
    done = _probe(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["prolog", "none"], done.stderr  # cep_band/2 computes it in Prolog then
    assert "cep_fast.so was built from another version of" in done.stderr and "make setup" in done.stderr


def test_a_library_built_from_another_version_of_the_source_is_refused(tmp_path):
    """One whose predicates are all there, built from a source that differs."""
    folder = _beside(tmp_path)
    assert native.build(folder / "cep_fast.so")
    with open(folder / "cep_fast.c", "a") as source:
        source.write("/* changed since */\n")
    done = _probe(tmp_path)
    assert done.stdout.split() == ["prolog", "none"], done.stderr
    assert "make setup" in done.stderr
