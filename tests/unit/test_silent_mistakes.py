"""Mistakes in a query that used to pass in silence (issue 17, item 17): a
FILTER on a variable its pattern never binds, a REGEX that is an error on
every text, a duration longer than the runtime computes with, a constant
that is no value of its type. Each is now a warning or an error at compile
time, at its place in the rule file."""

from __future__ import annotations

import json

import pytest

from cep import cli, terms
from cep.algebra import query_limits

EX = "http://example.org/"
PREFIX = f"PREFIX : <{EX}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
T0 = terms.parse_datetime_ms("2026-01-01T00:00:00Z")


def num(n):
    return f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'


def run(tmp_path, capsys, rules: str, events=((("x", "p", num(5), 0)),)):
    """`cep run` on the local engine: (exit code, answers, stderr lines
    with the rule file's path as q.rq)."""
    rule_file = tmp_path / "q.rq"
    rule_file.write_text(PREFIX + rules)
    event_file = tmp_path / "events.jsonl"
    event_file.write_text("".join(json.dumps({"s": f"<{EX}{s}>", "p": f"<{EX}{p}>", "o": o, "t": T0 + t}) + "\n"
                                  for s, p, o, t in events))
    code = cli.main(["run", str(rule_file), "--events", str(event_file), "--engine", "local", "-q"])
    out, err = capsys.readouterr()
    answers = [json.loads(line) for line in out.splitlines()] if code == 0 else []
    return code, answers, err.replace(str(rule_file), "q.rq").splitlines()


UNBOUND = ("never bound by the pattern it filters: a FILTER sees the variables of its own group only "
           "(in an optional group, also those of the pattern it extends)")


# ------------------------------------------------ FILTER on unbound variables


def test_a_filter_on_a_variable_the_pattern_never_binds_is_warned_at_the_filter(tmp_path, capsys):
    code, answers, err = run(tmp_path, capsys, "SELECT ?a WHERE { ?a :p ?b\n"
                                               "  FILTER(?b > 1) FILTER(?zz > 1 || ?b > 1) }")
    assert code == 0
    assert err == [f"cep: warning: q.rq:4:18: ?zz in the FILTER is {UNBOUND}"]
    assert [a["bindings"]["a"]["value"] for a in answers] == [EX + "x"]  # error || true is true


def test_a_filter_sees_its_own_group_and_an_optional_group_the_pattern_it_extends(tmp_path, capsys):
    code, _, err = run(tmp_path, capsys, "SELECT ?a WHERE {\n"
                                         "  ?a :p ?b OPTIONAL { ?a :q ?c FILTER(?c > ?b) }\n"
                                         "  { ?a :r ?d FILTER(?d > ?b && !BOUND(?e)) } }\n"
                                         "SELECT ?a WHERE { { ?a :p ?b } NOTSEQ \"PT1M\" { ?a :q ?c FILTER(?c > ?b) } }")
    assert code == 0
    # (the OPTIONAL part keeps partial matches with no bound: that warning is not this test's)
    assert [e for e in err if "keeps partial matches" not in e] == [
                   f"cep: warning: q.rq:5:14: ?b in the FILTER is {UNBOUND}",
                   f"cep: warning: q.rq:5:14: ?e in the FILTER is {UNBOUND}"]


# ------------------------------------------------------------------- REGEX


@pytest.mark.parametrize("call, message", [
    ('REGEX(?b, "a(b")', 'the REGEX pattern "a(b" is not a valid regular expression (missing closing parenthesis)'),
    ('REGEX(?b, "[z-a]", "i")', 'the REGEX pattern "[z-a]" is not a valid regular expression (range out of order '
                                'in character class)'),
    ('REGEX(?b, "a", "iz")', 'the REGEX flags "iz" are not all s, m, i, x or q'),
    ('REGEX(?b, 5)', 'the pattern of REGEX must be a simple string, not "5"^^<http://www.w3.org/2001/XMLSchema#'
                     'integer>'),
    ('REGEX(?b, "a", "i"@en)', 'the flags of REGEX must be a simple string, not "i"@en'),
])
def test_a_regex_that_is_an_error_on_every_text_is_a_compile_time_error(tmp_path, capsys, call, message):
    code, _, err = run(tmp_path, capsys, f"SELECT ?a WHERE {{ ?a :p ?b\n  FILTER({call}) }}")
    assert code == 2
    assert err == [f"cep: error: q.rq:4:10: {message}: this REGEX is an error on every text"]


def test_a_regex_the_runtime_runs_is_accepted_as_the_runtime_reads_it(tmp_path, capsys):
    # PCRE's \p{Lu} (no Python re syntax); q quotes the pattern, so "a(b" is text
    events = [("x", "p", '"Zed"', 0), ("y", "p", '"zed"', 1), ("z", "p", '"xa(by"', 2)]
    code, answers, err = run(tmp_path, capsys, 'SELECT ?a WHERE { ?a :p ?b FILTER(REGEX(?b, "^\\\\p{Lu}")) }\n'
                                               'SELECT ?a WHERE { ?a :p ?b FILTER(REGEX(?b, "a(b", "q")) }', events)
    assert code == 0, err
    assert sorted((a["query"], a["bindings"]["a"]["value"]) for a in answers) == \
        [("q#1", EX + "x"), ("q#2", EX + "z")]


# --------------------------------------------------------------- durations


@pytest.mark.parametrize("query, column, text", [
    ('SELECT ?a WHERE { ?a :p ?b } WITHIN "P99999999999999999999999D"', 37, '"P99999999999999999999999D"'),
    ('SELECT ?a WHERE { ?a :p ?b FILTER(getDURATION() <= "P3652426D"^^xsd:duration) }', 35, '"P3652426D"'),
    ('SELECT ?a WHERE { { ?a :p ?b } NOTSEQ "P3652426D" { ?a :q ?c } }', 39, '"P3652426D"'),
    ('SELECT (COUNT(*) AS ?n) FROM STREAM <http://example.org/s> [RANGE 315569520000001ms STEP 1d] '
     'WHERE { ?a :p ?b }', 67, "315569520000001ms"),
    ('SELECT (COUNT(*) AS ?n) FROM STREAM <http://example.org/s> [RANGE 1d STEP P3652426D] '
     'WHERE { ?a :p ?b }', 75, "P3652426D"),
    ('REGISTER QUERY q COMPUTED EVERY 99999999999999d AS SELECT (COUNT(*) AS ?n) '
     'FROM STREAM <http://example.org/s> [RANGE 1d STEP 1d] WHERE { ?a :p ?b }', 33, "99999999999999d"),
])
def test_a_duration_longer_than_the_runtime_takes_is_placed_and_the_largest_named(tmp_path, capsys, query, column,
                                                                                  text):
    code, _, err = run(tmp_path, capsys, query)
    assert code == 2
    assert err == [f"cep: error: q.rq:3:{column}: the duration {text} is longer than the engine takes: at most "
                   f"10,000 years (P3652425D)"]


def test_the_longest_durations_are_taken(tmp_path, capsys):
    assert query_limits.MAX_DURATION_MS == terms.parse_duration("P3652425D")[1]
    events = [("x", "p", num(1), 0), ("x", "q", num(2), 1000)]
    code, answers, err = run(tmp_path, capsys, 'SELECT ?a WHERE { ?a :p ?b } SEQ { ?a :q ?c } WITHIN "P10000Y"', events)
    assert code == 0, err
    assert len(answers) == 1
    # (where a deadline or a window end would pass the year 9999, the event is the problem)
    (tmp_path / "long.rq").write_text(PREFIX + 'SELECT ?a WHERE { { ?a :p ?b } NOTSEQ "P3652425D" { ?a :r ?c } }\n'
                                      'SELECT (COUNT(*) AS ?n) FROM STREAM <http://example.org/s> '
                                      '[RANGE P3652425D STEP 315569520000000ms] WHERE { ?a :p ?b }')
    assert cli.main(["explain", str(tmp_path / "long.rq")]) == 0


# ------------------------------------------------- constants of no value


@pytest.mark.parametrize("constant, datatype", [
    ('"PT30 minutes"^^xsd:duration', "duration"),
    ('"abc"^^xsd:integer', "integer"),
    ('"2026-13-01T00:00:00Z"^^xsd:dateTime', "dateTime"),
    ('"yes"^^xsd:boolean', "boolean"),
])
def test_a_constant_that_is_no_value_of_its_type_is_warned(tmp_path, capsys, constant, datatype):
    code, _, err = run(tmp_path, capsys, f"SELECT ?a WHERE {{ ?a :p ?b FILTER(getDURATION() < {constant}) }}")
    assert code == 0
    lexical = constant.split('"')[1]
    assert err == [f'cep: warning: q.rq:3:51: "{lexical}" is not a valid xsd:{datatype}: comparing or computing '
                   f'with it is an error (a FILTER is then false)']


@pytest.mark.parametrize("constant", ['"PT90M"^^xsd:duration', "01", '"1.50"^^xsd:decimal', '"1"^^xsd:boolean'])
def test_another_lexical_form_of_a_value_is_no_mistake(tmp_path, capsys, constant):
    """A constant is kept as written; a valid form that is not the canonical
    one ("01"^^xsd:integer) has its value: no warning."""
    code, _, err = run(tmp_path, capsys, f"SELECT ?a WHERE {{ ?a :p ?b FILTER(getDURATION() < {constant}) }}")
    assert code == 0 and err == []
