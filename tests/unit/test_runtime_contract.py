"""The predicates the runtime (prolog/*.pl) calls in a compiled rule
module are listed in one place, cep.compile.program.RUNTIME_CONTRACT, and
a compiled module defines each that its features call for."""

import re
from pathlib import Path

import pytest

from cep.compile.program import RUNTIME_CONTRACT
from cep.engine import Engine
from cep.rules import parse_rules

PROLOG = Path(__file__).resolve().parents[2] / "prolog"
P = "PREFIX : <http://ex/>\n"
WINDOW = "FROM STREAM <http://ex/s> [RANGE 10s STEP 1s]"

# a rule set with each feature
RULE_SETS = {
    "every rule set": P + "SELECT * WHERE { ?s :a ?x }",
    "rule chaining": P + "CONSTRUCT { ?s :b ?x } WHERE { ?s :a ?x }\nSELECT * WHERE { ?s :b ?x }",
    "windowed stores (WITHIN & co.)": P + 'SELECT * WHERE { { ?s :a ?x } SEQ { ?s :b ?y } WITHIN "PT10S" }',
    "windows": P + f"SELECT (COUNT(*) AS ?n) {WINDOW} WHERE {{ ?s :a ?x }}",
    "GROUP BY": P + f"SELECT ?s (COUNT(*) AS ?n) {WINDOW} WHERE {{ ?s :a ?x }} GROUP BY ?s",
    "C-SPARQL's AGGREGATE": P + f"SELECT ?s ?n {WINDOW} WHERE {{ ?s :a ?x }} AGGREGATE {{ (?n, COUNT, {{?s}}) }}",
    "windows fed back to rules": P + f"CONSTRUCT {{ ?s :count ?n }} {WINDOW}\n"
                                     "WHERE { SELECT ?s (COUNT(*) AS ?n) WHERE { ?s :a ?x } GROUP BY ?s }\n"
                                     "SELECT * WHERE { ?s :count ?n }",
}


def _called_by_the_runtime() -> set:
    """Name/arity of every '$...' predicate the runtime's files call in
    another module (M:'$name'(...), M:'$name', M:'$name'/N)."""
    found = set()
    for path in PROLOG.glob("*.pl"):
        text = path.read_text()
        for m in re.finditer(r"[A-Z]\w*:'(\$\w+)'(/\d+|\()?", text):
            name, rest = m.group(1), m.group(2)
            if rest is None:  # an atom: a goal of arity 0
                found.add(f"{name}/0")
            elif rest.startswith("/"):
                found.add(f"{name}{rest}")
            elif rest == "(":
                depth, i, arity = 1, m.end(), 1
                while depth:
                    c = text[i]
                    depth += c in "([{"
                    depth -= c in ")]}"
                    arity += c == "," and depth == 1
                    i += 1
                found.add(f"{name}/{arity}")
    return found


def test_the_contract_lists_every_predicate_the_runtime_calls():
    listed = [p for group in RUNTIME_CONTRACT.values() for p in group]
    assert len(listed) == len(set(listed))
    assert set(listed) == _called_by_the_runtime()


def _defined(engine, indicator) -> bool:
    name, arity = indicator.rsplit("/", 1)
    head = f"'{name}'({','.join('_' * int(arity))})" if int(arity) else f"'{name}'"
    goal = f"{engine.module}:{head}"
    return bool(list(engine.session.prolog.query(
        f"predicate_property({goal}, defined), predicate_property({goal}, implementation_module({engine.module}))")))


@pytest.mark.parametrize("feature", list(RUNTIME_CONTRACT))
def test_a_compiled_module_defines_what_the_runtime_calls(feature):
    engine = Engine(parse_rules(RULE_SETS[feature], "contract.rq"))
    needed = RUNTIME_CONTRACT["every rule set"] + RUNTIME_CONTRACT[feature]
    assert [p for p in needed if not _defined(engine, p)] == []
