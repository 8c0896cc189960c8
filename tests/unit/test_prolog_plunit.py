"""Every plunit suite of the Prolog runtime library (prolog/tests/test_*.pl),
run by SWI-Prolog as a user would run it, with the C library of
prolog/cep_fast.c and without it (CEP_NO_FOREIGN=1: its Prolog versions).

A suite passes when run_tests/0 succeeds and prints no error or warning:
plunit reports a test that leaves a choice point as a warning only, and
the runtime's predicates are meant to be deterministic where documented.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITES = sorted((ROOT / "prolog" / "tests").glob("test_*.pl"))

pytestmark = pytest.mark.skipif(shutil.which("swipl") is None, reason="needs SWI-Prolog (swipl)")


def run_suite(path: Path, foreign: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CEP_NO_FOREIGN"}
    if not foreign:
        env["CEP_NO_FOREIGN"] = "1"
    goal = "consult('%s'), run_tests" % str(path).replace("\\", "\\\\").replace("'", "\\'")
    return subprocess.run(["swipl", "-q", "-g", goal, "-t", "halt"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def passed(proc: subprocess.CompletedProcess) -> bool:
    return proc.returncode == 0 and "ERROR" not in proc.stderr and "Warning" not in proc.stderr


def test_every_module_of_the_library_has_a_suite():
    modules = {p.stem.removeprefix("cep_") for p in (ROOT / "prolog").glob("cep_*.pl")
               if ":- module(" in p.read_text(encoding="utf-8")}  # not cep_values_iris.pl, an include
    suites = {p.stem.removeprefix("test_") for p in SUITES}
    # cep_contract.pl is checked against compiled rule sets by
    # tests/unit/test_runtime_contract.py, which needs the compiler
    assert modules - suites == {"contract"}


@pytest.mark.parametrize("foreign", [True, False], ids=["c", "prolog"])
@pytest.mark.parametrize("suite", SUITES, ids=[p.stem for p in SUITES])
def test_plunit_suite_passes(suite, foreign):
    proc = run_suite(suite, foreign)
    assert passed(proc), proc.stdout + proc.stderr


@pytest.mark.parametrize("body, why", [
    ("test(wrong) :- 1 =:= 2.", "a failing test"),
    ("test(raises) :- atom_length(_, _).", "an exception"),
    ("test(choice) :- member(_, [a, b]).", "a choice point left"),
])
def test_a_suite_that_does_not_pass_fails(tmp_path, body, why):
    suite = tmp_path / "test_broken.pl"
    suite.write_text(":- use_module(library(plunit)).\n:- begin_tests(broken).\n"
                     f"test(fine) :- true.\n{body}\n:- end_tests(broken).\n")
    assert not passed(run_suite(suite)), why
