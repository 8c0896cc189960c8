"""The contract between the runtime and compiled rule sets
(prolog/cep_contract.pl, docs/runtime.md).

- Every rule set compiled from the golden rules, the shipped rules and the
  examples' rules defines each predicate the contract lists for it, with
  the listed arity and no other.
- The runtime names no '$' predicate the contract does not list: the Prolog
  runtime library and the Python package (outside the compiler) are scanned
  for the '$name' atoms and strings they use, with the arity of each call.
- The comments of prolog/ and the docs give each contract predicate an
  arity the contract lists.
- Every predicate Python calls through the session is exported by the
  module it calls it in.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cep.algebra import ops
from cep.background.knowledge import load_background, ontology_paths
from cep.engine import Engine
from cep.errors import EngineError
from cep.rules import load_rules, parse_rules
from cep.runtime.session import session
from cep.user_prolog import load_user_prolog

ROOT = Path(__file__).resolve().parents[2]

# Atoms of the runtime that start with '$' and are not predicates: values
# of the window aggregates (cep_window.pl and the rules' '$wargs' clauses),
# and SWI-Prolog's own names (cep_user.pl catches '$aborted').
NOT_PREDICATES = {"$error", "$none", "$unbound", "$aborted"}
NOT_RULE_SETS = ("optional", "background", "event_term")


def contract() -> list[tuple[str, int, str]]:
    return [(str(r["N"]), int(r["A"]), str(r["W"]))
            for r in session().prolog.query("cep_contract:cep_contract(N, A, W, _)")]


def ask(goal: str) -> bool:
    return bool(list(session().prolog.query(goal, maxresult=1)))


def defined_arities(module: str, name: str) -> set[int]:
    quoted = "'" + name.replace("'", "\\'") + "'"
    return {int(r["A"]) for r in session().prolog.query(f"current_predicate({module}:{quoted}/A)")}


# ------------------------------------------------------------ the rule sets

def _engine(paths, ontologies=(), prolog=None):
    queries = load_rules([str(ROOT / p) for p in paths])
    background = load_background(ontology_paths(queries, [ROOT / o for o in ontologies]))
    user = load_user_prolog([str(ROOT / prolog)]) if prolog else None
    return Engine(queries, background=background, prolog=user)


RULE_SETS = {
    **{f"golden/{p.stem}": ([p.relative_to(ROOT)], [b.relative_to(ROOT)] if (
           b := ROOT / "tests/golden/background" / f"{p.stem}.ttl").exists() else (), None)
       for p in sorted((ROOT / "tests/golden/rules").glob("*.rq"))},  # with its background, as the golden driver
    **{f"paper/{p.stem}": ([p.relative_to(ROOT)], (), None) for p in sorted((ROOT / "rules/paper").glob("*.rq"))},
    "stock": (["rules/stock.rq"], ["ontologies/stock.ttl"], None),
    "delivery": (["examples/delivery/delivery.rq"], ["ontologies/city.ttl"], None),
    "tsunami": (["examples/tsunami/ndbc.rq"], ["ontologies/dart-stations.ttl", "ontologies/coastal-places.ttl"],
                "examples/tsunami/geo.pl"),
}


@pytest.fixture(scope="module")
def engines():
    return {name: _engine(*args) for name, args in RULE_SETS.items()}


def _has_closure(op) -> bool:
    if isinstance(op, ops.Triple):
        return isinstance(op.p, ops.Path)
    return any(_has_closure(c) for c in ops.children(op))


def expected_features(engine) -> set[str]:
    """The features of a rule set, told from its queries (not from Prolog)."""
    queries = engine.compiled.queries
    windowed = [q for q in queries if q.evaluated]  # a window, or grouping per instant
    features = {"always"}
    if any(q.name in engine.compiled.chaining.producers for q in queries):
        features.add("chaining")
    if windowed:
        features.add("windows")
    if any(q.grouping is not None and q.grouping.keys is not None for q in windowed):
        features.add("group")
    if any(q.grouping is not None and q.grouping.keys is None for q in windowed):
        features.add("extend")
    if any(_has_closure(q.pattern) for q in queries if q.window is None):  # in a window: over its content
        features.add("paths")
    return features


def test_the_rule_sets_cover_every_feature_of_the_contract(engines):
    whens = {w for _, _, w in contract()} - set(NOT_RULE_SETS)
    seen = {w for e in engines.values() for w in whens if ask(f"cep_contract:cep_contract_applies({e.module}, {w})")}
    assert seen == whens
    assert any(ask(f"current_predicate({e.module}:'$wfeed'/3)") for e in engines.values())
    assert any(not ask(f"cep_contract:cep_contract_applies({e.module}, pruning)") for e in engines.values())


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_a_compiled_rule_set_defines_what_the_runtime_calls(engines, name):
    engine = engines[name]
    m = engine.module
    entries = contract()
    applies = {w for w in {w for _, _, w in entries} - set(NOT_RULE_SETS)
               if ask(f"cep_contract:cep_contract_applies({m}, {w})")}
    assert applies - {"pruning"} == expected_features(engine)
    missing = [f"{n}/{a}" for n, a, w in entries if w in applies and a not in defined_arities(m, n)]
    assert not missing, f"{name} ({m}) lacks {missing}"
    listed = {}
    for n, a, w in entries:
        if w not in ("background", "event_term"):
            listed.setdefault(n, set()).add(a)
    wrong = {n: defined_arities(m, n) - arities for n, arities in listed.items() if defined_arities(m, n) - arities}
    assert not wrong, f"{name} defines contract names with other arities: {wrong}"
    assert ask(f"cep_contract:cep_contract_missing({m}, [])")


def test_a_background_module_defines_its_facts(engines):
    module = engines["delivery"].compiled.background_module
    for n, a, w in contract():
        if w == "background":
            assert a in defined_arities(module, n), f"{module} lacks {n}/{a}"


def test_loading_a_rule_set_that_lacks_a_contract_predicate_is_an_error(engines):
    text = engines["golden/seq"].compiled.program("cep_rs_contract_probe")
    broken = re.sub(r"(?ms)^'\$check'\(.*?\.$", "", text)
    assert broken != text and "'$check'(" not in broken
    with pytest.raises(EngineError, match=r"incomplete_rule_set\(cep_rs_contract_probe,\['\$check'/3\]\)"):
        session().load_rules("cep_rs_contract_probe", broken)


# ------------------------------------------------------------ the runtime's calls

def _escape(text: str, i: int) -> int:
    """The length of the escape sequence at text[i] (a backslash) in a
    quoted item: ISO's \\xHH\\ ends with a backslash of its own."""
    m = re.match(r"\\x[0-9a-fA-F]+\\?", text[i:])
    return len(m.group()) if m else 2


def _code(text: str) -> str:
    """Prolog text with its comments blanked out (quoted atoms and strings kept)."""
    text = re.sub(r"(?<![\w'])0'(\\.|''|.)", "0", text)  # character codes: 0'a, 0''', 0'\n
    out, i, quote = [], 0, None
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                n = _escape(text, i)
                out.append(text[i:i + n])
                i += n
                continue
            if c == quote:
                quote = None
        elif c in "'\"`":
            quote = c
        elif c == "%":
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
            continue
        elif text.startswith("/*", i):
            j = text.find("*/", i)
            out.append(re.sub(r"[^\n]", " ", text[i:j + 2]))
            i = j + 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _arguments(code: str, start: int) -> int:
    """The number of arguments of the compound whose '(' is at start."""
    depth, n, i, quote = 0, 1, start, None
    while True:
        c = code[i]
        if quote:
            if c == "\\":
                i += _escape(code, i) - 1
            elif c == quote:
                quote = None
        elif c in "'\"`":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return n
        elif c == "," and depth == 1:
            n += 1
        i += 1


def prolog_uses() -> set[tuple[str, int | None, str]]:
    """(name, arity or None for a bare atom, file) of the '$name' atoms of
    the runtime library."""
    uses = set()
    for path in sorted((ROOT / "prolog").glob("*.pl")):
        if path.name == "cep_contract.pl":
            continue
        code = _code(path.read_text(encoding="utf-8"))
        for m in re.finditer(r"(:\s*)?'(\$[a-z_0-9]+)'", code):
            name, after = m.group(2), code[m.end():m.end() + 12]
            if after.startswith(":"):  # a module name ('$messages':...)
                continue
            if after.startswith("("):
                arity = _arguments(code, m.end())
            elif re.match(r"/\d", after):
                arity = int(re.match(r"/(\d+)", after).group(1))
            else:
                arity = 0 if m.group(1) else None  # M:'$end_group' is a call
            uses.add((name, arity, path.name))
    return uses


def python_uses() -> set[tuple[str, str]]:
    """('$name', file) of the strings of the package outside the compiler."""
    uses = set()
    for path in sorted((ROOT / "cep").rglob("*.py")):
        if "compile" in path.relative_to(ROOT / "cep").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"\$[a-z_0-9]+", node.value):
                uses.add((node.value, path.name))
    return uses


def test_the_scan_finds_the_runtime_calls():
    uses = prolog_uses()
    assert ("$check", 3, "cep_runtime.pl") in uses
    assert ("$end_group", 0, "cep_runtime.pl") in uses
    assert ("$wfeed", 3, "cep_window.pl") in uses
    assert ("$cep_background", None, "cep_runtime.pl") in uses
    assert ("$in", "batch.py") in python_uses()
    assert ("$in", 2, "x.pl") in {("$in", _arguments("M:'$in'(a, f(b, c))", 7), "x.pl")}


def test_the_runtime_calls_only_what_the_contract_lists():
    listed = {}
    for n, a, _ in contract():
        listed.setdefault(n, set()).add(a)
    unlisted = sorted(f"{f}: {n}/{a}" for n, a, f in prolog_uses()
                      if n not in NOT_PREDICATES and (n not in listed or a is not None and a not in listed[n]))
    unlisted += sorted(f"{f}: {n}" for n, f in python_uses() if n not in listed)
    assert not unlisted, "add them to prolog/cep_contract.pl: " + ", ".join(unlisted)


def test_the_runtime_docs_give_the_contract_arities():
    """Name/Arity of a contract predicate in the runtime's comments and docs
    is one the contract lists ('$check'/1 was documented for '$check'/2)."""
    listed = {}
    for n, a, _ in contract():
        listed.setdefault(n, set()).add(a)
    texts = [*sorted((ROOT / "prolog").glob("*.pl")), *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "cep").rglob("*.py"))]
    wrong = sorted(f"{path.name}: {m.group(1)}/{m.group(2)}"
                   for path in texts
                   for m in re.finditer(r"'(\$[a-z_0-9]+)'/(\d+)", path.read_text(encoding="utf-8"))
                   if m.group(1) in listed and int(m.group(2)) not in listed[m.group(1)])
    assert not wrong, wrong


def session_calls() -> set[tuple[str, str, int]]:
    """(module, name, arity) of every predicate cep/runtime/session.py calls."""
    tree = ast.parse((ROOT / "cep/runtime/session.py").read_text(encoding="utf-8"))
    calls = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "call" \
                and len(node.args) >= 3 and all(isinstance(a, ast.Constant) for a in node.args[:2]):
            outputs = next((k.value.value for k in node.keywords if k.arg == "outputs"), 1)
            calls.add((node.args[1].value, node.args[0].value, len(node.args[2].elts) + outputs))
    return calls


def test_python_calls_only_exported_predicates():
    calls = session_calls()
    assert ("cep_runtime", "cep_load_background", 2) in calls
    assert len(calls) >= 15
    private = [f"{m}:{n}/{a}" for m, n, a in sorted(calls)
               if not ask(f"module_property({m}, exports(E)), memberchk({n}/{a}, E)")]
    assert not private, f"not exported: {private}"
