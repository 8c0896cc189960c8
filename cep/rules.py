"""Rule files: EP-SPARQL text -> checked algebra queries.

    parse_rules(text, filename) -> list[Query]   one file's text
    load_rules(paths) -> list[Query]             files, or directories of *.rq
    with_policy(queries, policy) -> list[Query]  the run's default @policy

Both loaders take `policy=`, the consumption policy of the queries that
carry no @policy annotation (docs/language.md, "Consumption policies"),
and `allow_from=`, the folders (and files; a path or a list of them)
beyond a rule file's own folder
whose files its FROM clauses may read (docs/language.md, "Naming the
background in a rule file"; for text not read from a file, the current
directory stands for the rule file's folder).

A rule file holds one or more queries (see docs/language.md): parsed by
cep.syntax, translated and checked by cep.algebra.translate. Every problem
is a cep.errors.QueryError whose message starts with file:line:column.
Query names are unique in the result; an unnamed query is named after its
file (`stem`, or `stem#N` for the N-th query of a file with several).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cep.algebra import query_limits
from cep.algebra.ops import Pos
from cep.algebra.translate import translate
from cep.binarize import POLICIES
from cep.errors import QueryError
from cep.syntax import parse


def parse_rules(text: str, filename: str = "<string>", policy: str | None = None, allow_from=()) -> list:
    """The queries of one rule file, in file order."""
    if isinstance(allow_from, (str, Path)):  # one folder (a str is no list of them)
        allow_from = [allow_from]
    return with_policy(translate(parse(text, filename), filename, allow_from), policy)


def with_policy(queries, policy: str | None) -> list:
    """The queries, each without an @policy annotation given `policy` (an
    annotation in the file wins); None leaves them as they are. The one
    place a run's default policy is applied, so that every engine compiles
    the same queries."""
    if policy is None:
        return list(queries)
    if policy not in POLICIES:
        raise QueryError(f"unknown consumption policy {policy!r}: the policies are {', '.join(POLICIES)}")
    return [q if q.option("policy") is not None
            else dataclasses.replace(q, options=tuple(sorted(q.options + (("policy", policy),))))
            for q in queries]


def load_rules(paths, policy: str | None = None, allow_from=()) -> list:
    """The queries of the given files; a directory stands for its *.rq
    files in name order. A single path may be given as a str or Path."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.glob("*.rq"))
            if not found:
                raise QueryError(f"no rule files (*.rq) in the directory {path}")
            files += found
        else:
            files.append(path)
    queries, where = [], {}
    for file in files:
        for q in parse_rules(_read_rule_file(file), str(file), allow_from=allow_from):
            if q.name in where:
                raise QueryError(f"a query named {q.name} is already defined at {where[q.name]}",
                                 q.pos)
            where[q.name] = q.pos
            queries.append(q)
    return with_policy(queries, policy)


def _read_rule_file(file: Path) -> str:
    """The text of a rule file: UTF-8 (a byte order mark is allowed, and
    left to the parser), at most cep.algebra.query_limits.MAX_RULE_FILE_BYTES."""
    try:
        query_limits.check_size(file.stat().st_size, str(file))
        data = file.read_bytes()
    except OSError as exc:
        raise QueryError(f"cannot read rule file {file}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[:exc.start].decode("utf-8")  # the text up to the first bad byte
        line, column = good.count("\n") + 1, len(good) - (good.rfind("\n") + 1) + 1
        bad = " ".join(f"0x{b:02X}" for b in data[exc.start:exc.end])
        raise QueryError(f"the rule file is not UTF-8 text: byte{'s' if exc.end - exc.start > 1 else ''} "
                         f"{bad} cannot stand here ({exc.reason}); save the file as UTF-8",
                         Pos(str(file), line, column)) from None
