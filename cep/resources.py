"""Where the project's data folders are: prolog/ (the Prolog runtime
library), ontologies/, rules/ and examples/ (the samples); and the user's
cache folder, where what is built once is kept between runs.

In a checkout they are at the top of the repository, beside the package;
an installed wheel carries them inside the package, in cep/_data/
(setup.py). One copy in git, found in either place."""

from __future__ import annotations

import os
from pathlib import Path

from cep.errors import EngineError

PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The data folder `name` (prolog, ontologies, rules, examples)."""
    checkout = PACKAGE.parent
    roots = ((checkout,) if (checkout / "setup.py").is_file() else ()) + (PACKAGE / "_data",)
    for root in roots:
        if (root / name).is_dir():
            return root / name
    raise EngineError(f"the project's {name}/ folder is missing (looked in {PACKAGE.parent} and {PACKAGE / '_data'})")


def cache_dir() -> Path | None:
    """The user's cache folder of the project: $XDG_CACHE_HOME/cep, or
    ~/.cache/cep; None when there is no home folder to put it in."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = Path.home() / ".cache"
        except RuntimeError:  # no HOME and no entry in the password database
            return None
    return Path(base) / "cep"
