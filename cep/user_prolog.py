"""The user's Prolog knowledge base: `--prolog FILE` predicates that FILTER
and SELECT expressions call by name (the paper's "background knowledge as a
Prolog knowledge base"; docs/language.md, "Prolog predicates in FILTER").

    user = load_user_prolog(["geo.pl"])     # read, loaded into this process
    Engine(queries, prolog=user)            # or prolog=["geo.pl"]

Takes the files' paths; returns a UserProlog: the files' text (what Spark
ships to its workers), the Prolog module they are loaded into (named after
a hash of their contents, cep_user_<hash>, loaded once per process) and the
predicates they define. A file that does not load raises PrologFileError
naming file, line and column, before any event is read.

A query's bare function name that is not a SPARQL function translates to
`Call("prolog:<name>", args)`; `check_calls` resolves it against the files:
with n arguments, `name/(n+1)` defined in the files makes the call a
*function* (its value is the last argument after the first solution), else
`name/n` a *test* (true if the goal succeeds, false if it fails); anything
else is a QueryError at the call's position. Only predicates defined in the
files qualify: never a built-in or library predicate.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

from cep.algebra import ops
from cep.errors import EngineError, PrologFileError, QueryError

FUNCTION, TEST = "function", "test"
LISTED = 12  # defined predicates named in an unknown-function message


@dataclass(frozen=True, eq=False)
class UserProlog:
    files: tuple  # (source id, name, text): the absolute path, the path as given, its text
    digest: str
    predicates: frozenset  # (name, arity) of the predicates the files define
    warnings: tuple = ()  # the load's warnings, "file:line: message"

    @property
    def module(self) -> str:
        return f"cep_user_{self.digest}"

    @property
    def sources(self) -> tuple:
        """(source id, text) of each file: what a worker needs to load them."""
        return tuple((source, text) for source, _, text in self.files)

    def kind(self, name: str, arity: int) -> str | None:
        """How a call of `name` with `arity` arguments runs: FUNCTION, TEST,
        or None when the files define neither predicate."""
        if (name, arity + 1) in self.predicates:
            return FUNCTION
        if (name, arity) in self.predicates:
            return TEST
        return None

    def load(self) -> None:
        """Load the files into this process's Prolog, if not yet done."""
        load_sources(self.module, self.sources, {s: n for s, n, _ in self.files})


def load_user_prolog(paths) -> UserProlog | None:
    """The user Prolog files at `paths` (a path or a list; None for none),
    loaded into this process's Prolog. Raises PrologFileError."""
    if paths is None:
        return None
    if isinstance(paths, UserProlog):
        paths.load()
        return paths
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        return None
    files = []
    digest = hashlib.sha256()
    for path in paths:
        if not path.exists():
            raise PrologFileError("no such Prolog file", path)
        if path.is_dir():
            raise PrologFileError("is a directory, not a Prolog file", path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PrologFileError(f"cannot read the Prolog file: {exc.strerror or exc}", path) from None
        except UnicodeDecodeError as exc:
            raise PrologFileError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path) from None
        files.append((str(path.resolve()), str(path), text))
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    module = f"cep_user_{digest.hexdigest()[:16]}"
    predicates, warnings = load_sources(module, [(s, t) for s, _, t in files], {s: n for s, n, _ in files})
    return UserProlog(tuple(files), digest.hexdigest()[:16], predicates, warnings)


def load_sources(module: str, sources, names=None) -> tuple[frozenset, tuple]:
    """Load (source id, text) files into `module` once per process; returns
    the predicates they define and the warnings of the load. `names` maps
    a source id to the name messages give it (default: the id)."""
    from cep.runtime.session import session

    names = names or {}
    reports, listing = session().load_user(module, list(sources))
    errors, warnings = [], []
    for report in reports:
        for line in report.splitlines():
            kind, where, message = (line.split("\t", 2) + ["", ""])[:3]
            for source, name in names.items():
                if where == source or where.startswith(source + ":"):
                    where = name + where[len(source):]
                    break
            (errors if kind == "error" else warnings).append((where, message))
    if errors:
        where, message = errors[0]
        more = len(errors) - 1
        if more:
            message += f" (and {more} more error{'s' if more > 1 else ''} in the --prolog files)"
        raise PrologFileError(message, where or None)
    predicates = set()
    for line in listing.splitlines():
        arity, _, name = line.partition("\t")
        predicates.add((name, int(arity)))
    return frozenset(predicates), tuple(f"{where}: {message}" for where, message in warnings)


def ensure_loaded(module: str) -> None:
    """Rules compiled with user predicates run only where their files are
    loaded (Engine with compiled rules from elsewhere)."""
    from cep.runtime.session import session

    if not session().user_loaded(module):
        raise EngineError(f"the rules call user Prolog predicates of {module}, which is not loaded in "
                          "this process: load the --prolog files first (cep.user_prolog)")


# ------------------------------------------------------ calls in queries


def calls(node):
    """The user predicate calls (Call named prolog:...) in an algebra tree,
    a query, or any structure of them."""
    if isinstance(node, ops.Call):
        if node.name.startswith(ops.USER_PREFIX):
            yield node
        for arg in node.args:
            yield from calls(arg)
    elif isinstance(node, (tuple, list)):
        for item in node:
            yield from calls(item)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.name != "pos":
                yield from calls(getattr(node, f.name))


def check_calls(queries, user: UserProlog | None) -> None:
    """Every user predicate call of the queries names a predicate of the
    user's files; raises QueryError at the first that does not."""
    for query in queries:
        for call in calls(query):
            name, n = call.name[len(ops.USER_PREFIX):], len(call.args)
            if user is not None and user.kind(name, n) is not None:
                continue
            message = (f"unknown function {name}/{n}: not a SPARQL function and no --prolog file defines "
                       f"{name}/{n} or {name}/{n + 1}")
            if user is not None:
                defined = sorted(f"{p}/{a}" for p, a in user.predicates)
                listed = ", ".join(defined[:LISTED]) + (", ..." if len(defined) > LISTED else "")
                message += (" (a FILTER calls only predicates that the --prolog files define, never a "
                            "built-in or library predicate; "
                            + (f"they define {listed})" if defined else "they define none)"))
            raise QueryError(message, call.pos)
