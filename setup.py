"""The wheel and sdist carry, besides the `cep` packages, the checkout's
top-level data folders as package data under cep/_data/ (the checkout keeps
one copy of each, where a reader of the repository looks for it):

    prolog/      the Prolog runtime library and the C helper's source
    ontologies/  rules/  examples/   the samples `cep demo` and the docs run

cep.resources finds them in either place. Everything else is in
pyproject.toml."""

from setuptools import find_packages, setup

DATA = {
    "prolog": ["*.pl", "*.c"],
    "ontologies": ["*.ttl"],
    "rules": ["*.rq", "paper/*.rq"],
    "examples": ["*.py", "*/*.py", "*/*.rq", "*/*.pl", "*/*.trig", "*/sample/*.txt"],
}

setup(
    packages=find_packages(include=["cep", "cep.*"]) + [f"cep._data.{name}" for name in DATA],
    package_dir={f"cep._data.{name}": name for name in DATA},
    package_data={"cep.syntax": ["*.lark"], **{f"cep._data.{name}": globs for name, globs in DATA.items()}},
)
