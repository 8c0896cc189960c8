"""Helpers for the unit tests: the in-process engine checked against the
reference evaluator, the formal semantics that is the oracle; files for
the command-line tests of --policy (here and in tests/spark)."""

import json

from cep import reference
from cep.background.knowledge import load_background
from cep.engine import Engine
from cep.events import events_table


def checked_answers(queries, events, background=None, prolog=None, unchecked=False) -> list:
    """The in-process engine's answers to events, asserted equal to the
    reference evaluator's (as multisets). `unchecked`: the events skip the
    engine's check of pushed rows (push_table(checked=True)), to show what
    the layers below it do with terms the check would refuse."""
    engine = Engine(queries, background=background, prolog=prolog)
    got = (engine.push_table(events_table(events), checked=True).to_list() if unchecked else
           engine.push(events)) + engine.flush()
    expected = reference.evaluate(queries, events, background, prolog=prolog)
    assert reference.multiset(got) == reference.multiset(expected), "the engine and the reference differ"
    return got


def turtle_background(tmp_path_factory, name: str, text: str):
    """The Background of a Turtle text, loaded from a file as a user's is."""
    path = tmp_path_factory.mktemp("background") / name
    path.write_text(text)
    return load_background([path])


POLICY_RULES = """PREFIX : <http://example.org/>
REGISTER QUERY plain AS
SELECT ?x ?y WHERE { { ?k :a ?x } SEQ { ?k :b ?y } }
@policy unrestricted
REGISTER QUERY annotated AS
SELECT ?x ?y WHERE { { ?k :a ?x } SEQ { ?k :b ?y } }
"""
POLICY_T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def policy_case(folder):
    """(rules, events) files: POLICY_RULES, and on one key :a v1, :a v2,
    :b v3, :b v4, one ms apart (ms i after POLICY_T0)."""
    rules, events = folder / "pairs.rq", folder / "pairs.jsonl"
    rules.write_text(POLICY_RULES)
    events.write_text("".join(
        json.dumps({"s": "<http://example.org/k>", "p": f"<http://example.org/{p}>",
                    "o": f"<http://example.org/v{i}>", "t": POLICY_T0 + i}) + "\n"
        for p, i in (("a", 1), ("a", 2), ("b", 3), ("b", 4))))
    return rules, events
