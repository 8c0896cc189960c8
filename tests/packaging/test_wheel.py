"""The package as a user installs it (issue 22, item 1): the wheel, built
from the sdist, installed into a fresh virtual environment outside the
checkout, runs `cep` there: the Prolog runtime and the samples come from
the package, the C helper is built on first use, and where nothing can
build it the Prolog versions give the same answers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile

import pytest

from tests.packaging.install import ROOT, build_wheel, clean_env, fresh_venv, stock_work

pytestmark = pytest.mark.packaging

# A rule joining events with the background ontology, beside the paper's query (1)
LABELLED = """PREFIX :     <http://example.org/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>

REGISTER QUERY labelled_highs AS
SELECT ?label ?price
WHERE { ?company :hasStockPrice ?price . ?company rdfs:label ?label . FILTER (?price > 200) }
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, work folder holding the rules, events and ontology, the
    answers of the checkout's own in-process engine)."""
    base = tmp_path_factory.mktemp("packaging")
    wheel = build_wheel(base)
    venv = fresh_venv(base / "venv", wheel)
    work = stock_work(base / "work", LABELLED)
    expected = subprocess.run([sys.executable, "-m", "cep", *RUN], cwd=work, capture_output=True, text=True,
                              check=True).stdout
    return venv, wheel, work, expected


RUN = ["run", "-q", "labelled.rq", "stock.rq", "--events", "ticks.trig", "--ontology", "stock.ttl",
       "--engine", "local"]


def run(venv, work, *argv, **env):
    return subprocess.run([str(venv.cep), *argv], cwd=work, capture_output=True, text=True, timeout=600,
                          env=clean_env(**env))


def answers(text):
    return sorted((a["query"], json.dumps(a["bindings"], sort_keys=True)) for a in map(json.loads, text.splitlines()))


def test_the_wheel_carries_the_runtime_and_the_samples_but_no_binary(installed):
    _, wheel, _, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    assert any(n.startswith("cep/syntax/") and n.endswith(".lark") for n in names)  # the grammar
    for name in ("cep/_data/prolog/cep_runtime.pl", "cep/_data/prolog/cep_fast.c", "cep/runtime/batch_text.c",
                 "cep/_data/examples/tsunami/sample/99901.txt", "cep/_data/ontologies/dart-stations.ttl",
                 "cep/_data/rules/stock.rq"):
        assert name in names, name
    assert not [n for n in names if n.endswith(".so") or "/tests/" in n]
    assert wheel.name.endswith("-py3-none-any.whl")  # one wheel for every platform: nothing compiled in it


def test_installed_cep_imports_from_the_venv_and_says_its_version(installed, tmp_path):
    venv, _, work, _ = installed
    where = subprocess.run([str(venv.python), "-c", "import cep; print(cep.__file__)"], cwd=work,
                           capture_output=True, text=True, check=True, env=clean_env()).stdout.strip()
    assert where.startswith(str(venv.root)), where
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    done = run(venv, work, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"cep {version} (the ep-sparql distribution)"


def test_installed_cep_compiles_explains_and_runs_with_an_ontology(installed, tmp_path):
    """The answers of the installed package are the checkout's; the C
    helpers are built into the (fresh) cache by the first run."""
    venv, _, work, expected = installed
    cache = tmp_path / "cache"
    done = run(venv, work, "compile", "stock.rq")
    assert done.returncode == 0 and "crash_recovery" in done.stdout, done.stderr
    done = run(venv, work, "explain", "stock.rq")
    assert done.returncode == 0 and "crash_recovery" in done.stdout, done.stderr
    done = run(venv, work, *RUN, XDG_CACHE_HOME=str(cache))
    assert done.returncode == 0, done.stderr
    got = answers(done.stdout)
    assert got == answers(expected)
    assert {q for q, _ in got} == {"labelled_highs", "crash_recovery"}
    assert ("labelled_highs", json.dumps({"label": {"type": "literal", "value": "Initech"},
                                          "price": {"type": "literal", "value": "215", "datatype":
                                                    "http://www.w3.org/2001/XMLSchema#integer"}},
                                         sort_keys=True)) in got
    assert len(list(cache.glob("cep/cep_fast-*.so"))) == 1
    assert len(list(cache.glob("cep/batch_text-*.so"))) == 1


def test_without_a_compiler_the_prolog_versions_give_the_same_answers(installed, tmp_path):
    """No swipl-ld on PATH (swipl itself is there): nothing is built, the
    run does not fail, the answers are the same."""
    venv, _, work, expected = installed
    tools = tmp_path / "bin"
    tools.mkdir()
    os.symlink(shutil.which("swipl"), tools / "swipl")
    cache = tmp_path / "cache"
    done = run(venv, work, *RUN, XDG_CACHE_HOME=str(cache), PATH=f"{venv.root / 'bin'}:{tools}")
    assert done.returncode == 0, done.stderr
    assert answers(done.stdout) == answers(expected)
    assert not list(cache.glob("cep/*.so"))


def test_installed_demo_runs_on_its_bundled_sample(installed, tmp_path):
    venv, _, _, _ = installed
    done = run(venv, tmp_path, "demo", "tsunami", "--engine", "local", XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    warnings = (tmp_path / "out" / "tsunami" / "warnings.jsonl").read_text().splitlines()
    assert warnings and all(json.loads(line) for line in warnings)
