"""Every operator of the algebra is supported by every stage: it has a text
form, the parser produces it, the binarizer and the compiler handle it, the
reference evaluator knows it, the property tests generate it and a golden
test exercises it. A new operator class that misses a stage fails here."""

from pathlib import Path

import pytest

from cep import reference
from cep.algebra import ops, sexpr
from cep.engine import Engine
from cep.events import Event
from tests.property import strategies

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
EX = "http://example.org/"

# the operators of the paper and the EP-SPARQL text that yields each
SYNTAX = {
    ops.Join: "{ { ?k :a ?x } { ?k :b ?y } }",
    ops.Union_: "{ ?k :a ?x } UNION { ?k :b ?y }",
    ops.LeftJoin: "{ ?k :a ?x OPTIONAL { ?k :b ?y } }",
    ops.SeqJoin: "{ ?k :a ?x } SEQ { ?k :b ?y }",
    ops.EqJoin: "{ ?k :a ?x } EQUALS { ?k :b ?y }",
    ops.SeqRightJoin: "{ ?k :a ?x } OPTIONALSEQ { ?k :b ?y }",
    ops.EqLeftJoin: "{ ?k :a ?x } EQUALSOPTIONAL { ?k :b ?y }",
    ops.SeqAbsence: '{ ?k :a ?x } NOTSEQ "PT0.001S" { ?k :b ?y FILTER (?y > 2) }',
    ops.Filter: "{ ?k :a ?x } FILTER (?x > 1)",
}


def test_the_list_covers_every_operator_class():
    assert set(SYNTAX) == set(ops.BINARY) | {ops.Filter}
    assert set(ops.PATTERN_OPS) == set(SYNTAX) | {ops.Triple, ops.BGP}


def _find(op, cls):
    if isinstance(op, cls):
        return op
    for child in (getattr(op, "left", None), getattr(op, "right", None), getattr(op, "pattern", None)):
        if child is not None and (found := _find(child, cls)):
            return found
    return None


@pytest.mark.parametrize("cls", list(SYNTAX), ids=lambda c: c.__name__)
def test_every_stage_handles_the_operator(cls):
    from cep.rules import parse_rules

    (query,) = parse_rules(f"PREFIX : <{EX}>\nSELECT * WHERE {SYNTAX[cls]}", "checklist.rq")
    assert _find(query.pattern, cls), "the parser yields it"
    text = sexpr.pattern(query.pattern)  # a text form
    # binarize, compile and run it, and the reference evaluates it alike
    events = [Event(f"<{EX}k1>", f"<{EX}a>", f'"{i}"^^<http://www.w3.org/2001/XMLSchema#integer>', i, i)
              for i in (1, 2)]
    events += [Event(f"<{EX}k1>", f"<{EX}b>", f'"{i}"^^<http://www.w3.org/2001/XMLSchema#integer>', i, i)
               for i in (2, 3)]
    engine = Engine([query])
    got = engine.push(events) + engine.flush()
    expected = reference.evaluate([query], events)
    assert sorted(got) == sorted(expected) and expected
    # the property tests generate it, and a golden test exercises it
    if cls is not ops.Filter:
        assert cls in strategies.BINARY
    head = text.split()[0]
    assert any(head in p.read_text() for p in (GOLDEN / "algebra").glob("*.sexpr")), head
