"""Deep, long, large and oddly encoded query text (issue 17, item 7): long
flat chains and deep nesting up to the limits of cep.algebra.query_limits compile
and run end to end; past them, and for text that is no valid query, the
command exits 2 with the place in the user's file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cep import cli, prolog, terms
from cep.algebra import query_limits
from cep.errors import QueryError
from cep.rules import parse_rules

EX = "http://example.org/"
PREFIX = f"PREFIX : <{EX}>\n"
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")


def num(n):
    return f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'


def run(tmp_path, capsys, rules: str, events=(), command="run"):
    """`cep run` (local engine) or another command on the rules; (exit
    code, answers, stderr)."""
    rule_file = tmp_path / "q.rq"
    rule_file.write_text(rules, encoding="utf-8")
    event_file = tmp_path / "events.jsonl"
    event_file.write_text("".join(json.dumps({"s": f"<{EX}{s}>", "p": f"<{EX}{p}>", "o": o, "t": T0 + t}) + "\n"
                                  for s, p, o, t in events))
    argv = [command, str(rule_file)]
    if command == "run":
        argv += ["--events", str(event_file), "--engine", "local", "-q"]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    answers = [json.loads(line) for line in out.splitlines()] if command == "run" and code == 0 else []
    return code, answers, err


def error(tmp_path, capsys, rules: str) -> str:
    code, _, err = run(tmp_path, capsys, rules, command="explain")
    assert code == 2, err
    return err.strip().removeprefix("cep: error: ").replace(str(tmp_path / "q.rq"), "q.rq")


# ------------------------------------------------------- long and deep, valid


def test_a_seq_chain_of_1000_groups_runs_end_to_end(tmp_path, capsys):
    chain = " SEQ ".join(f"{{ ?a :p{i} ?b }}" for i in range(1000))
    events = [("x", f"p{i}", num(1), i) for i in range(1000)]
    code, answers, err = run(tmp_path, capsys, PREFIX + f"SELECT ?a WHERE {chain}", events)
    assert code == 0, err
    assert [(a["bindings"]["a"]["value"], a["start"], a["end"]) for a in answers] == \
        [(EX + "x", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.999Z")]


@pytest.mark.parametrize("length, expected", [(500, True), (501, False)])
def test_an_expression_500_operators_long_runs_end_to_end(tmp_path, capsys, length, expected):
    rules = PREFIX + "SELECT ?a WHERE { ?a :p ?b FILTER(?b" + " + 1" * 500 + f" > {length + 4}) }}"
    code, answers, err = run(tmp_path, capsys, rules, [("x", "p", num(5), 0)])
    assert code == 0, err
    assert len(answers) == (1 if expected else 0)  # 5 + 500 > 504, not > 505


@pytest.mark.parametrize("bangs", [200, 201])
def test_200_nested_negations_run_end_to_end(tmp_path, capsys, bangs):
    rules = PREFIX + "SELECT ?a WHERE { ?a :p ?b FILTER(" + "!" * bangs + "(?b > 3)) }"
    code, answers, err = run(tmp_path, capsys, rules, [("x", "p", num(5), 0), ("y", "p", num(1), 1)])
    assert code == 0, err
    assert [a["bindings"]["a"]["value"] for a in answers] == [EX + ("x" if bangs % 2 == 0 else "y")]


def test_400_nested_groups_mean_the_group(tmp_path, capsys):
    rules = PREFIX + "SELECT ?a WHERE " + "{" * 400 + " ?a :p ?b " + "}" * 400
    code, answers, err = run(tmp_path, capsys, rules, [("x", "p", num(5), 0)])
    assert code == 0, err
    assert [a["bindings"]["a"]["value"] for a in answers] == [EX + "x"]


def test_a_query_at_the_depth_limit_is_explained(tmp_path, capsys):
    n = query_limits.MAX_DEPTH - 1
    rules = PREFIX + "SELECT ?a WHERE " + "{" * n + " ?a :p ?b " + "}" * n + " SEQ " + \
        " SEQ ".join("{ ?a :q ?b }" for _ in range(n))
    code, _, err = run(tmp_path, capsys, rules, command="explain")
    assert code == 0, err


def test_long_argument_lists_compile_and_run(tmp_path, capsys):
    # COALESCE's alternatives and IN's values, thousands of them
    unbound = ", ".join(f"?u{i}" for i in range(3000))
    values = ", ".join(str(i) for i in range(10, 20000))
    rules = PREFIX + (f"SELECT ?a (COALESCE({unbound}, ?b * 2) AS ?c) WHERE {{ ?a :p ?b "
                      f"FILTER(?b IN ({values}, 5)) }}")
    code, answers, err = run(tmp_path, capsys, rules, [("x", "p", num(5), 0), ("y", "p", num(6), 1)])
    assert code == 0, err
    assert [(a["bindings"]["a"]["value"], a["bindings"]["c"]["value"]) for a in answers] == [(EX + "x", "10")]


def test_chains_of_logical_operators_at_the_depth_limit_run_end_to_end(tmp_path):
    # in a process of its own: SWI-Prolog crashed loading the if-then-else
    # these were compiled to, nested as deep as the chain was long
    n = query_limits.MAX_DEPTH - 10
    ors = " || ".join(f"?b = {i}" for i in range(n))
    ands = " && ".join(f"?b != {i}" for i in range(10, 10 + n))
    (tmp_path / "q.rq").write_text(PREFIX + f"SELECT ?a WHERE {{ ?a :p ?b FILTER(({ors}) && ({ands})) }}")
    (tmp_path / "e.jsonl").write_text("".join(
        json.dumps({"s": f"<{EX}{s}>", "p": f"<{EX}p>", "o": num(o), "t": T0}) + "\n"
        for s, o in (("x", 5), ("y", 20), ("z", n + 5))))
    done = subprocess.run([sys.executable, "-m", "cep", "run", "q.rq", "--events", "e.jsonl", "--engine", "local",
                           "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["bindings"]["a"]["value"] for line in done.stdout.splitlines()] == [EX + "x"]


def test_prolog_text_of_a_long_goal_list_is_written_flat():
    goals = [prolog.Struct("g", i) for i in range(50_000)]
    conjunction = goals[-1]
    for g in reversed(goals[:-1]):
        conjunction = prolog.Struct(",", g, conjunction)
    text = prolog.write(conjunction)
    assert text == "(" + ", ".join(f"g({i})" for i in range(50_000)) + ")"
    inner = prolog.Struct(";", prolog.Struct(",", 1, 2), prolog.Struct(";", 3, prolog.Struct(",", 4, 5)))
    assert prolog.write(inner) == "((1, 2) ; 3 ; (4, 5))"


# ------------------------------------------------------- past the limits


def test_nesting_past_the_limit_is_placed_at_the_first_level_too_many(tmp_path, capsys):
    n = query_limits.MAX_DEPTH + 1
    message = error(tmp_path, capsys, PREFIX + "SELECT ?a WHERE " + "{" * n + " ?a :p ?b " + "}" * n)
    assert message.startswith(f"q.rq:2:{16 + n}: brackets and operators nest more than 2,000 levels deep here")
    message = error(tmp_path, capsys, PREFIX + "SELECT ?a WHERE { ?a :p ?b FILTER(" + "!" * n + "?b) }")
    assert message.startswith("q.rq:2:")
    assert "nest more than 2,000 levels deep here" in message


def test_a_chain_past_the_limit_is_placed_at_the_operator_that_passes_it(tmp_path, capsys):
    chain = " SEQ ".join("{ ?a :p ?b }" for _ in range(query_limits.MAX_DEPTH + 5))
    message = error(tmp_path, capsys, PREFIX + f"SELECT ?a WHERE {chain}")
    # the 2,000th SEQ (whose operands nest 2,000 levels with the first group)
    column = len("SELECT ?a WHERE ") + len("{ ?a :p ?b } SEQ ") * (query_limits.MAX_DEPTH - 1) + len("{ ?a :p ?b } ") + 1
    assert message.startswith(f"q.rq:2:{column}: operators (each of a chain such as {{A}} SEQ {{B}} SEQ ... is one "
                              "level) nest more than 2,000 levels deep here")


def test_a_group_of_too_many_triple_patterns_is_placed_at_the_first_too_many(tmp_path, capsys):
    triples = " . ".join(f"?a :p{i} ?b" for i in range(query_limits.MAX_DEPTH + 1))
    message = error(tmp_path, capsys, PREFIX + f"SELECT ?a WHERE {{ {triples} }}")
    column = len("SELECT ?a WHERE { ") + sum(len(f"?a :p{i} ?b . ") for i in range(query_limits.MAX_DEPTH)) + 1
    assert message.startswith(f"q.rq:2:{column}: the group's triple patterns, joined one after another, nest more")


def test_a_group_of_binds_is_translated_in_steps_linear_in_its_length(monkeypatch):
    """Each BIND asks for the variables bound before it in its group; they
    were computed afresh each time, n^2/2 steps for n BINDs: 3,000 took
    minutes before the depth limit refused them. Counted, not timed."""
    from cep.algebra import ops

    calls = []
    counted = ops._variables
    monkeypatch.setattr(ops, "_variables", lambda *args: calls.append(1) or counted(*args))
    n = 1_000
    rules = PREFIX + "SELECT * WHERE { ?s :p ?o " + " ".join(f"BIND(?o AS ?v{i})" for i in range(n)) + " }\n"
    parse_rules(rules, "q.rq")
    assert len(calls) < 20 * n


def test_a_pattern_whose_compiled_rules_would_be_too_large_is_refused(tmp_path, capsys):
    # each step of the chain carries every variable bound before it
    chain = " SEQ ".join(f"{{ ?a :p ?b{i} }}" for i in range(1500))
    message = error(tmp_path, capsys, PREFIX + f"SELECT ?a WHERE {chain}")
    assert message.startswith("q.rq:2:1: q: the compiled rules would be too large: the steps of the binarized plan "
                              "carry 1,130,248 variables in all, and the engine takes at most 1,000,000")


def test_a_rule_file_past_the_size_limit_is_refused_before_it_is_read(tmp_path, capsys):
    text = PREFIX + "SELECT ?a WHERE { ?a :p ?b }\n" + "#" * query_limits.MAX_RULE_FILE_BYTES
    message = error(tmp_path, capsys, text)
    assert message.startswith(f"q.rq:1:1: the rule file is {len(text.encode()):,} bytes long; the engine reads rule "
                              "files of at most 1,048,576 bytes (1 MiB)")
    with pytest.raises(QueryError, match="<string>:1:1: the rule file is"):
        parse_rules(text)


# ------------------------------------------------------------ characters


def test_escapes_that_are_no_character_are_placed_at_the_escape(tmp_path, capsys):
    assert error(tmp_path, capsys, PREFIX + 'SELECT ?a WHERE { ?a :p "x\\U00110000" }') == \
        "q.rq:2:27: \\U00110000 is not a Unicode character: the largest is \\U0010FFFF"
    assert error(tmp_path, capsys, PREFIX + 'SELECT ?a WHERE { ?a :p """x\n\\ud800""" }').startswith(
        "q.rq:3:1: \\ud800 is half of a UTF-16 surrogate pair, not a character")
    assert error(tmp_path, capsys, PREFIX + 'SELECT ?a WHERE { ?a :p "\\uDE00\\uD83D" }').startswith(
        "q.rq:2:26: \\uDE00 is half of a UTF-16 surrogate pair")


def test_a_surrogate_pair_of_escapes_is_the_character_it_encodes(tmp_path, capsys):
    rules = PREFIX + 'SELECT ?a WHERE { ?a :p "\\uD83D\\uDE00" }'
    code, answers, err = run(tmp_path, capsys, rules, [("x", "p", '"\U0001F600"', 0), ("y", "p", '"x"', 0)])
    assert code == 0, err
    assert [a["bindings"]["a"]["value"] for a in answers] == [EX + "x"]


def test_characters_beyond_the_basic_plane_reach_prolog_and_back(tmp_path, capsys):
    # SWI-Prolog 9.0 reads no \xD8000\ (U+D8000 to U+DFFFF), the form these took
    text = "\U000D8000\U0010FFFF\U0001F600"
    rules = PREFIX + 'SELECT ?a ?b WHERE { ?a :p ?b FILTER(?b = "\\U000D8000\U0010FFFF\\U0001F600") }'
    code, answers, err = run(tmp_path, capsys, rules, [("x", "p", f'"{text}"', 0), ("y", "p", '"z"', 0)])
    assert code == 0, err
    assert [(a["bindings"]["a"]["value"], a["bindings"]["b"]["value"]) for a in answers] == [(EX + "x", text)]


def test_a_lone_surrogate_in_query_text_is_placed():
    with pytest.raises(QueryError) as info:
        parse_rules(PREFIX + "SELECT ?a WHERE { ?a :p ?b }\n# \ud800")
    assert str(info.value) == "<string>:3:3: U+D800 is a lone surrogate, not a character"
