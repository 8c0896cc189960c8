"""The package as a user gets it: the wheel built from the checkout and
installed into a fresh virtual environment outside it.

The environment holds the wheel alone (pip --no-deps --no-index: no
network); its third-party dependencies (pyspark alone is 300+ MB) are
those of the environment running the tests, put on its path by a .pth
file. A .pth file only adds a folder to sys.path, it runs none of the .pth
files in it, so the checkout's editable install stays out: `cep` imports
from the wheel, and the tests check that it does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(dest: Path) -> Path:
    """The wheel a user's pip builds from the checkout's sdist: the sdist
    first (so a file missing from it is missing from the wheel too), then
    the wheel from it, both with the setuptools of this environment (no
    build isolation: nothing is downloaded)."""
    subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(dest)], check=True,
                   capture_output=True, cwd=ROOT)
    (sdist,) = dest.glob("ep_sparql-*.tar.gz")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(dest), str(sdist)], check=True, capture_output=True, cwd=dest)
    (wheel,) = dest.glob("ep_sparql-*.whl")
    return wheel


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def cep(self) -> Path:
        return self.root / "bin" / "cep"

    def site_packages(self) -> Path:
        return next(self.root.glob("lib/python3*/site-packages"))


def fresh_venv(dest: Path, wheel: Path) -> Venv:
    """A new virtual environment in `dest` with `wheel` installed."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    venv = Venv(dest)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv.python), "install", "-q", "--no-deps",
                    "--no-index", str(wheel)], check=True, capture_output=True)
    deps = sysconfig.get_paths()["purelib"]
    (venv.site_packages() / "_test_dependencies.pth").write_text(deps + "\n")
    return venv


def clean_env(**extra) -> dict:
    """The environment of a process that must not see the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON",
                                                            "PYSPARK_DRIVER_PYTHON", "CEP_NO_FOREIGN")}
    env.update(extra)
    return env


def stock_work(dest: Path, rules: str) -> Path:
    """A folder outside the checkout holding the paper's query (1), the
    stock sample and its ontology, and `rules` as labelled.rq."""
    dest.mkdir()
    (dest / "labelled.rq").write_text(rules)
    for path in (ROOT / "rules" / "stock.rq", ROOT / "examples" / "stock" / "ticks.trig",
                 ROOT / "ontologies" / "stock.ttl"):
        shutil.copy(path, dest)
    return dest
