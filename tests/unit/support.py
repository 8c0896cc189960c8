"""Helpers for the unit tests: the in-process engine checked against the
reference evaluator, the formal semantics that is the oracle."""

from cep import reference
from cep.background.knowledge import load_background
from cep.engine import Engine


def checked_answers(queries, events, background=None, prolog=None) -> list:
    """The in-process engine's answers to events, asserted equal to the
    reference evaluator's (as multisets)."""
    engine = Engine(queries, background=background, prolog=prolog)
    got = engine.push(events) + engine.flush()
    expected = reference.evaluate(queries, events, background, prolog=prolog)
    assert reference.multiset(got) == reference.multiset(expected), "the engine and the reference differ"
    return got


def turtle_background(tmp_path_factory, name: str, text: str):
    """The Background of a Turtle text, loaded from a file as a user's is."""
    path = tmp_path_factory.mktemp("background") / name
    path.write_text(text)
    return load_background([path])
