"""Every operator of the algebra is supported by every stage: its table
entry (ops.Operator) holds every decision, the parser produces it from its
keyword, its text form reads back, the binarizer and the compiler handle
it, the reference evaluator knows it and agrees with the engine on events
that last (not only points), the property tests generate it and a golden
test exercises it. A new operator that misses any of these fails here."""

import dataclasses
from pathlib import Path

import pytest

from cep import reference
from cep.algebra import ops, sexpr
from cep.compile.steps import BUILDERS
from cep.engine import Engine
from cep.events import Event
from cep.reference import patterns
from cep.rules import parse_rules
from tests.property import strategies

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
GRAMMAR = Path(ops.__file__).resolve().parents[1] / "syntax" / "epsparql.lark"
EX = "http://example.org/"

# the EP-SPARQL text that yields each operator
SYNTAX = {
    ops.Join: "{ { ?k :a ?x } { ?k :b ?y } }",
    ops.Union_: "{ ?k :a ?x } UNION { ?k :b ?y }",
    ops.LeftJoin: "{ ?k :a ?x OPTIONAL { ?k :b ?y } }",
    ops.SeqJoin: "{ ?k :a ?x } SEQ { ?k :b ?y }",
    ops.EqJoin: "{ ?k :a ?x } EQUALS { ?k :b ?y }",
    ops.SeqRightJoin: "{ ?k :a ?x } OPTIONALSEQ { ?k :b ?y }",
    ops.EqLeftJoin: "{ ?k :a ?x } EQUALSOPTIONAL { ?k :b ?y }",
    ops.SeqAbsence: '{ ?k :a ?x } NOTSEQ "PT0.002S" { ?k :b ?y FILTER (?y > 20) }',
    ops.Minus: "{ ?k :a ?x MINUS { ?k :b ?y } }",
    ops.Exists: "{ ?k :a ?x FILTER EXISTS { ?k :b ?y } }",
    ops.NotExists: "{ ?k :a ?x FILTER NOT EXISTS { ?k :b ?y FILTER (?y > ?x) } }",
    ops.During: "{ ?k :a ?x } DURING { ?k :b ?y }",
    ops.Starts: "{ ?k :a ?x } STARTS { ?k :b ?y }",
    ops.Finishes: "{ ?k :a ?x } FINISHES { ?k :b ?y }",
    ops.Meets: "{ ?k :a ?x } MEETS { ?k :b ?y }",
    ops.Overlaps: "{ ?k :a ?x } OVERLAPS { ?k :b ?y }",
    ops.Filter: "{ ?k :a ?x } FILTER (?x > 1)",
    ops.Extend: "{ ?k :a ?x BIND (?x + 1 AS ?y) FILTER (?y > 1) }",
    ops.Values: "{ ?k :a ?x VALUES (?x ?z) { (1 :one) (UNDEF :any) } }",
    ops.Project: "{ ?k :b ?y { SELECT ?k (?x * 2 AS ?d) WHERE { ?k :a ?x } } }",
    ops.Unit: "{ OPTIONAL { ?k :a ?x } }",  # the empty group before OPTIONAL
}

# intervals [start, end] of the :a and :b events: among them, pairs in
# each of the relations (points, equal intervals, nested, overlapping,
# meeting, one after the other)
A_EVENTS = [(1, 1), (2, 3), (1, 3), (2, 5), (0, 1), (6, 6)]
B_EVENTS = [(1, 5), (3, 6), (4, 4), (2, 3), (9, 9)]


def _events():
    def event(p, i, start, end):
        value = f'"{i}"^^<http://www.w3.org/2001/XMLSchema#integer>'
        return Event(f"<{EX}k1>", f"<{EX}{p}>", value, start, end)
    return ([event("a", i, s, e) for i, (s, e) in enumerate(A_EVENTS)]
            + [event("b", 10 + i, s, e) for i, (s, e) in enumerate(B_EVENTS)])


def test_the_list_covers_every_operator_class():
    assert set(SYNTAX) == set(ops.BINARY) | set(ops.UNARY) | {ops.Filter, ops.Values, ops.Unit}
    assert set(ops.PATTERN_OPS) == set(SYNTAX) | {ops.Triple, ops.BGP}


def _find(op, cls):
    if isinstance(op, cls):
        return op
    for child in (getattr(op, "left", None), getattr(op, "right", None), getattr(op, "pattern", None)):
        if child is not None and (found := _find(child, cls)):
            return found
    return None


@pytest.mark.parametrize("cls", ops.BINARY, ids=lambda c: c.__name__)
def test_the_operator_has_every_decision(cls):
    """Its own entry (not a base class's), every field decided, names
    that no other operator has, a keyword the grammar knows."""
    assert issubclass(cls, ops.Binary) and "spec" in vars(cls)
    spec = cls.spec
    assert isinstance(spec, ops.Operator)
    assert spec.sexpr and ops.SEXPR_NAMES[spec.sexpr] is cls
    assert spec.optional in (None, "left", "right")
    assert spec.store in (None, "instant", "deadline", "window", "forever")
    assert spec.kept or spec.store not in ("window", "forever"), "what the warning says it keeps"
    assert len(spec.ends_last) == 2 and all(isinstance(x, bool) for x in spec.ends_last)
    for test, x, y in spec.interval:
        assert test in ("<", "<=", "=") and {x, y} <= {"s1", "e1", "s2", "e2"}
    fields = {f.name for f in dataclasses.fields(cls)}
    assert {"left", "right", "pos"} <= fields
    assert ("cond" in fields) == (spec.conditioned is not None)
    if spec.keyword is not None:
        assert ops.KEYWORDS[spec.keyword] is cls
        assert f'{spec.keyword}: "{spec.keyword}"i' in GRAMMAR.read_text(), "a terminal of the grammar"


@pytest.mark.parametrize("cls", ops.BINARY, ids=lambda c: c.__name__)
def test_every_stage_has_a_case_for_the_operator(cls):
    assert cls in BUILDERS, "a clause builder (cep.compile)"
    known = set(patterns.RELATIONS) | set(patterns.OPTIONALS) | {ops.Join, ops.Union_, ops.SeqAbsence, ops.Minus,
                                                                    ops.Exists, ops.NotExists}
    assert cls in known, "its semantics in the reference evaluator"
    assert cls in strategies.BINARY, "the property tests generate it"


@pytest.mark.parametrize("cls", list(SYNTAX), ids=lambda c: c.__name__)
def test_every_stage_handles_the_operator(cls):
    (query,) = parse_rules(f"PREFIX : <{EX}>\nSELECT * WHERE {SYNTAX[cls]}", "checklist.rq")
    assert _find(query.pattern, cls), "the parser yields it"
    text = sexpr.query(query)  # a text form, which reads back
    assert sexpr.read_query(query.name, text) == query
    # binarize, compile and run it, and the reference evaluates it alike,
    # with answers, on events that last
    events = _events()
    engine = Engine([query])
    got = engine.push(sorted(events, key=lambda e: e.end)) + engine.flush()
    expected = reference.evaluate([query], events)
    assert sorted(got) == sorted(expected) and expected
    # a golden test exercises it
    head = sexpr.pattern(_find(query.pattern, cls)).split()[0]
    assert any(head in p.read_text() for p in (GOLDEN / "algebra").glob("*.sexpr")), head


@pytest.mark.parametrize("cls", [c for c in ops.BINARY if c in patterns.RELATIONS], ids=lambda c: c.__name__)
def test_the_interval_test_is_the_reference_relation(cls):
    """The compiled interval test (Operator.interval) and the reference's
    own definition agree on every pair of intervals within 0..4."""
    compare = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "=": lambda a, b: a == b}
    spans = [(s, e) for s in range(5) for e in range(s, 5)]
    for s1, e1 in spans:
        for s2, e2 in spans:
            at = {"s1": s1, "e1": e1, "s2": s2, "e2": e2}
            table = all(compare[test](at[x], at[y]) for test, x, y in cls.spec.interval)
            assert table == patterns.RELATIONS[cls]((None, s1, e1), (None, s2, e2)), (s1, e1, s2, e2)
