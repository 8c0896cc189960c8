"""The wheel and sdist carry, besides the `cep` packages, the checkout's
top-level data folders as package data under cep/_data/ (the checkout keeps
one copy of each, where a reader of the repository looks for it):

    prolog/      the Prolog runtime library and the C helper's source
                 (not its plunit suites, prolog/tests)
    ontologies/  rules/  examples/   the samples `cep demo` and the docs run

cep.resources finds them in either place. The C batch writer's source,
cep/runtime/batch_text.c, is package data of cep.runtime, beside the module
that calls it. Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_packages, setup

DATA = ("prolog", "ontologies", "rules", "examples")
FILES = ["*.pl", "*.c", "*.ttl", "*.rq", "*.trig", "*.txt"]  # and the examples' modules, as any package's


def data_packages() -> list[str]:
    """Each data folder and its subfolders, as packages of cep._data."""
    found = []
    for name in DATA:
        for folder in (Path(name), *sorted(p for p in Path(name).rglob("*") if p.is_dir())):
            if not {"tests", "__pycache__"} & set(folder.parts):
                found.append("cep._data." + ".".join(folder.parts))
    return found


setup(
    packages=find_packages(include=["cep", "cep.*"]) + data_packages(),
    package_dir={f"cep._data.{name}": name for name in DATA},
    package_data={"cep.syntax": ["*.lark"], "cep.runtime": ["*.c"], **{package: FILES for package in data_packages()}},
)
