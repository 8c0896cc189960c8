"""Solution modifiers (ORDER BY, LIMIT, OFFSET, REDUCED), ASK, the
CONSTRUCT WHERE short form, and the SPARQL 1.1 features refused by name
(docs/language.md, "Solution modifiers" and "Not supported")."""

import pytest

import io
import json

from cep import cli
from cep.errors import UsageError
from cep.events import answers_table
from cep.io.writers import check_format, json_lines, make_writer
from cep.engine import Engine
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from cep.runtime.modifiers import term_key
from cep.reference import _order_compare
from cep.spark import routing
from tests.unit.support import checked_answers

MIN = 60_000
H = "PREFIX : <http://e/>\n"  # line 1
XSD = "http://www.w3.org/2001/XMLSchema#"
INT = f"<{XSD}integer>"


def reading(subject, value, minute, datatype=INT):
    return Event(f"<http://e/{subject}>", "<http://e/p>", f'"{value}"^^{datatype}', minute * MIN, minute * MIN)


def run(text, events):
    return checked_answers(parse_rules(H + text, "rules/x.rq"), events)


def values(answers, name="v"):
    """(end minute, lexical form of ?name) per answer, in the order given."""
    return [(a.end // MIN, a.binding(name).split('"')[1]) for a in answers]


def error(text: str) -> str:
    with pytest.raises(QueryError) as info:
        parse_rules(H + text, "rules/x.rq")
    return str(info.value)


STREAM = [reading("a0", 5, 1), reading("a1", 3, 1), reading("a2", 10, 1), reading("a3", 7, 1),
          reading("b0", 1, 2), reading("b1", 2, 2)]


# ------------------------------------------------------- ORDER BY, LIMIT, OFFSET


def test_order_by_and_limit_cut_the_answers_of_each_instant():
    got = run("SELECT ?x ?v WHERE { ?x :p ?v } ORDER BY DESC(?v) LIMIT 2", STREAM)
    assert values(got) == [(1, "10"), (1, "7"), (2, "2"), (2, "1")]


def test_offset_skips_within_each_instant():
    got = run("SELECT ?v WHERE { ?x :p ?v } ORDER BY ?v OFFSET 1 LIMIT 2", STREAM)
    assert values(got) == [(1, "5"), (1, "7"), (2, "2")]
    assert values(run("SELECT ?v WHERE { ?x :p ?v } ORDER BY ?v OFFSET 3", STREAM)) == [(1, "10")]


def test_an_instant_spread_over_several_pushes_is_cut_once():
    engine = Engine(parse_rules(H + "SELECT ?v WHERE { ?x :p ?v } ORDER BY ?v LIMIT 1"))
    got = engine.push(STREAM[:2]) + engine.push(STREAM[2:4]) + engine.push(STREAM[4:]) + engine.flush()
    assert values(got) == [(1, "3"), (2, "1")]


def test_numbers_are_ordered_by_value_across_their_types():
    stream = [reading("a", "2.5", 1, f"<{XSD}decimal>"), reading("b", 10, 1),
              reading("c", "1.0E0", 1, f"<{XSD}double>"), reading("d", "-3", 1)]
    assert values(run("SELECT ?v WHERE { ?x :p ?v } ORDER BY ?v", stream)) == \
        [(1, "-3"), (1, "1.0E0"), (1, "2.5"), (1, "10")]


def test_a_window_evaluation_is_cut_as_a_whole():
    got = run("SELECT ?x ?v FROM STREAM <http://e/s> [RANGE 10m TUMBLING] WHERE { ?x :p ?v } "
              "ORDER BY DESC(?v) LIMIT 1", STREAM)
    assert [(a.end // MIN, a.binding("x")) for a in got] == [(10, "<http://e/a2>")]


def test_order_by_an_expression_and_an_unselected_variable_shows_neither():
    # (?v - 6) squared: 7 and 5 are nearest 6, then 3, then 10 (1 and 2 at minute 2)
    got = run("SELECT ?x WHERE { ?x :p ?v } ORDER BY ((?v - 6) * (?v - 6)) DESC(?x) LIMIT 3", STREAM)
    assert [(a.end // MIN, a.bindings) for a in got] == [
        (1, (("x", "<http://e/a3>"),)), (1, (("x", "<http://e/a0>"),)), (1, (("x", "<http://e/a1>"),)),
        (2, (("x", "<http://e/b1>"),)), (2, (("x", "<http://e/b0>"),))]
    got = run("SELECT * WHERE { ?x :p ?v } ORDER BY STR(?v) LIMIT 2", STREAM)  # "10" < "3" as text
    assert values(got) == [(1, "10"), (1, "3"), (2, "1"), (2, "2")]
    got = run("SELECT ?x WHERE { ?x :p ?v } ORDER BY DESC(?v) OFFSET 3", STREAM)
    assert [a.binding("x") for a in got] == ["<http://e/a1>"]
    lines = list(json_lines(answers_table(got)))
    assert lines == ['{"query": "x", "bindings": {"x": {"type": "uri", "value": "http://e/a1"}}, '
                     '"start": "1970-01-01T00:01:00Z", "end": "1970-01-01T00:01:00Z"}']


def test_ordering_by_a_variable_the_pattern_never_binds_warns():
    query = parse_rules(H + "SELECT ?x WHERE { ?x :p ?v } ORDER BY ?w ?v", "rules/x.rq")[0]
    assert query.warnings == ("rules/x.rq:2:39: ORDER BY reads ?w, which the pattern never binds: it is "
                              "unbound in every answer",)
    assert [a.binding("x") for a in run("SELECT ?x WHERE { ?x :p ?v } ORDER BY ?w ?v LIMIT 1", STREAM)] == [
        "<http://e/a1>", "<http://e/b0>"]


def test_an_expression_error_orders_as_unbound_first():
    stream = STREAM[:4] + [Event("<http://e/a4>", "<http://e/p>", '"word"', MIN, MIN)]
    got = run("SELECT ?x WHERE { ?x :p ?v } ORDER BY (?v + 1) LIMIT 2", stream)
    assert [a.binding("x") for a in got] == ["<http://e/a4>", "<http://e/a1>"]


def test_distinct_after_ordering_by_an_unselected_variable_keeps_the_first():
    stream = [reading("a", 1, 1), reading("a", 9, 1), reading("b", 5, 1), reading("c", 3, 1)]
    got = run("SELECT DISTINCT ?x WHERE { ?x :p ?v } ORDER BY DESC(?v) LIMIT 2", stream)
    # a (9), b (5), then a again (1) is the same answer: a and b
    assert [a.binding("x") for a in got] == ["<http://e/a>", "<http://e/b>"]
    got = run("SELECT DISTINCT ?x WHERE { ?x :p ?v } ORDER BY ?v", stream)
    assert [a.binding("x") for a in got] == ["<http://e/a>", "<http://e/c>", "<http://e/b>"]


def test_order_by_an_aggregate_expression_of_a_group():
    got = run("SELECT ?g (COUNT(*) AS ?n) FROM STREAM <http://e/s> [RANGE 10m TUMBLING] WHERE { ?x :p ?v } "
              "GROUP BY (STRBEFORE(STR(?x), \"http://e/\") AS ?h) (SUBSTR(STR(?x), 10, 1) AS ?g) "
              "ORDER BY DESC(?n * 10 + STRLEN(?g))", STREAM)
    assert [(a.binding("g"), a.binding("n")) for a in got] == [('"a"', f'"4"^^{INT}'), ('"b"', f'"2"^^{INT}')]
    # an aggregate in ORDER BY, selected (COUNT) or not (SUM): a, 4 readings summing 25; b, 2 summing 3
    stream = STREAM + [reading("b2", 30, 2)]
    got = run("SELECT ?x (COUNT(*) AS ?n) WHERE { ?y :p ?v } GROUP BY (SUBSTR(STR(?y), 10, 1) AS ?x) "
              "ORDER BY DESC(COUNT(*)) LIMIT 1", stream)
    assert [(a.end // MIN, a.binding("x")) for a in got] == [(1, '"a"'), (2, '"b"')]
    got = run("SELECT ?x WHERE { ?y :p ?v } GROUP BY (SUBSTR(STR(?y), 10, 1) AS ?x) ORDER BY SUM(?v)",
              [reading("a1", 5, 1), reading("b1", 2, 1), reading("b2", 1, 1), reading("c1", 4, 1)])
    assert [a.binding("x") for a in got] == ['"b"', '"c"', '"a"'] and all(len(a.bindings) == 1 for a in got)


def test_limit_without_order_cuts_in_a_fixed_order_of_ties():
    """Ties (here every answer: no ORDER BY) by start, then by the bindings
    as text: the engine and the reference keep the same answers."""
    got = run("SELECT ?x ?v WHERE { ?x :p ?v } LIMIT 2", STREAM)
    assert values(got) == [(1, "10"), (1, "3"), (2, "1"), (2, "2")]


def test_limit_zero_gives_nothing_and_reduced_keeps_every_answer():
    assert run("SELECT ?v WHERE { ?x :p ?v } LIMIT 0", STREAM) == []
    assert len(run("SELECT REDUCED ?v WHERE { ?x :p ?v }", STREAM)) == len(STREAM)


def test_construct_where_takes_the_pattern_as_its_template():
    assert sorted(a.triples for a in run("CONSTRUCT WHERE { ?x :p ?v }", STREAM)) == \
        sorted(((e.s, e.p, e.o),) for e in STREAM)
    # without ORDER BY, LIMIT keeps answers of the engine's choosing (as in
    # SPARQL): one of each instant's
    engine = Engine(parse_rules(H + "CONSTRUCT WHERE { ?x :p ?v } LIMIT 1"))
    got = engine.push(STREAM) + engine.flush()
    assert [a.end // MIN for a in got] == [1, 2]
    assert all(Event(*a.triples[0], a.start, a.end) in STREAM for a in got)


def test_sparql_term_order():
    """Unbound < blank nodes < IRIs < literals; numbers by value; both
    implementations (the engine's key, the reference's comparison) agree."""
    ordered = [None, "_:b", "<http://a>", "<http://b>", f'"-1"^^{INT}', f'"0.5"^^<{XSD}decimal>',
               f'"2"^^{INT}', f'"a"^^<{XSD}string>', f'"b"^^<{XSD}string>', '"a"@en',
               f'"false"^^<{XSD}boolean>', f'"true"^^<{XSD}boolean>']
    assert sorted(reversed(ordered), key=term_key) == ordered
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            assert _order_compare(a, b) == -1 and _order_compare(b, a) == 1


def test_infinities_are_numbers_and_nan_is_not():
    double = f"<{XSD}double>"
    ordered = [f'"-INF"^^{double}', f'"-1"^^{INT}', f'"INF"^^{double}', f'"a"^^<{XSD}string>',
               f'"NaN"^^{double}']
    assert sorted(reversed(ordered), key=term_key) == ordered


def test_a_modified_query_runs_in_one_spark_group():
    plain, cut = parse_rules(H + "SELECT ?x ?v { ?x :p ?v }\nSELECT ?x ?v { ?x :p ?v } LIMIT 1")
    assert routing.partition_key(plain) == "x" and routing.partition_key(cut) is None


# ---------------------------------------------------------------------- ASK


def test_ask_answers_once_per_instant_with_a_solution():
    got = run("ASK { ?x :p ?v FILTER(?v > 4) }", STREAM)  # 5, 10, 7 at 0:01; none at 0:02
    assert [(a.start // MIN, a.end // MIN, a.boolean) for a in got] == [(1, 1, True)]


def test_ask_over_a_sequence_spans_its_earliest_solution():
    got = run("ASK { ?x :p ?v } SEQ { ?y :p ?w FILTER(?w < 2) }", STREAM)
    assert [(a.start // MIN, a.end // MIN) for a in got] == [(1, 2)]


def test_ask_answers_once_per_window_evaluation():
    got = run("ASK FROM STREAM <http://e/s> [RANGE 1m STEP 1m] WHERE { ?x :p ?v }", STREAM)
    assert [(a.start // MIN, a.end // MIN, a.boolean) for a in got] == [(0, 1, True), (1, 2, True)]


def test_ask_answers_are_written_as_a_boolean():
    got = run("ASK { ?x :p ?v FILTER(?v > 4) }", STREAM)
    assert list(json_lines(answers_table(got))) == [
        '{"query": "x", "boolean": true, "start": "1970-01-01T00:01:00Z", "end": "1970-01-01T00:01:00Z"}']
    ask = parse_rules(H + "ASK { ?x :p ?v }", "rules/x.rq")
    for fmt in ("csv", "trig"):
        with pytest.raises(UsageError, match=f"--format {fmt} cannot hold the answers of ASK query x"):
            check_format(fmt, ask)
        with pytest.raises(UsageError, match="query x is an ASK query"):
            make_writer(fmt, io.StringIO()).write(answers_table(got))


# ----------------------------------------------------------------- refusals


@pytest.mark.parametrize("text, message", [
    ("SELECT * { ?x :p ?v SERVICE ?s { ?x :q ?w } }",
     "2:29: SERVICE ?s: an endpoint named by a variable is not supported"),
    ("SELECT * { ?x :p ?v BIND(EXISTS { ?x :q ?w } AS ?e) }",
     "2:26: EXISTS inside an expression is not supported"),
    ("SELECT (NOT EXISTS { ?x :q ?w } AS ?n) { ?x :p ?v }", "2:9: NOT EXISTS inside an expression is not"),
    ("ASK { ?x :p ?v } LIMIT 1", "2:18: LIMIT in an ASK query is not supported"),
    ("SELECT ISTREAM ?x (COUNT(*) AS ?n) FROM STREAM <http://e/s> [RANGE 1m STEP 1m] { ?x :p ?v } GROUP BY ?x "
     "ORDER BY (?n + 1)", "2:105: ORDER BY an expression in an ISTREAM query is not supported"),
    ("CONSTRUCT { ?x :q ?v } WHERE { ?x :p ?v } ORDER BY ?v", "2:43: ORDER BY in a CONSTRUCT query is not"),
    ("CONSTRUCT { ?x :q ?v } FROM STREAM <http://e/s> [RANGE 1m STEP 1m] { SELECT ?x ?v { ?x :p ?v } LIMIT 1 }",
     "2:96: LIMIT in the subquery of a CONSTRUCT over a window is not supported"),
])
def test_unsupported_sparql_is_refused_by_name(text, message):
    assert error(text).startswith("rules/x.rq:" + message)


@pytest.mark.parametrize("text, message", [
    ("SELECT ?x (COUNT(*) AS ?n) { ?x :p ?v } GROUP BY ?x ORDER BY (?v + 1)",
     "rules/x.rq:2:62: ?v is used outside an aggregate but not grouped by: group by it or aggregate it"),
    ("SELECT ?x { ?x :p ?v } ORDER BY COUNT(*)",
     "rules/x.rq:2:33: an aggregate stands only in the SELECT clause or HAVING of a query"),
    ("SELECT ?x { ?x :p ?v } ORDER BY (timestamp(?x))",
     "rules/x.rq:2:33: timestamp() reads the events of one solution: select it with (timestamp(?v) AS ?t) "
     "and order by ?t"),
    ("SELECT ?x { ?x :p ?v } LIMIT 1.5", "rules/x.rq:2:30: LIMIT takes a whole number, not 1.5"),
    ("CONSTRUCT WHERE { ?x :p ?v OPTIONAL { ?x :q ?w } }",
     "rules/x.rq:2:11: CONSTRUCT WHERE { ... } takes only triple patterns (a basic graph pattern, "
     "which is also the template); write CONSTRUCT { template } WHERE { pattern }"),
])
def test_modifier_mistakes(text, message):
    assert error(text) == message


def test_the_command_line_refuses_an_unsupported_feature_with_exit_2(tmp_path, capsys):
    rules = tmp_path / "service.rq"
    rules.write_text(H + "SELECT * { ?x :p ?v SERVICE ?s { ?x :q ?v } }\n")
    code = cli.main(["explain", str(rules)])
    err = capsys.readouterr().err
    assert code == 2 and f"{rules}:2:29: SERVICE ?s: an endpoint named by a variable is not supported" in err
    assert "Traceback" not in err


def test_cep_run_writes_ask_answers_and_refuses_csv_for_them(tmp_path, capsys):
    rules = tmp_path / "alarm.rq"
    rules.write_text(H + "ASK { ?x :p ?v FILTER(?v > 4) }\n")
    events = tmp_path / "e.jsonl"
    events.write_text("".join(json.dumps({"s": e.s, "p": e.p, "o": e.o, "t": e.end}) + "\n" for e in STREAM))
    code = cli.main(["run", str(rules), "--events", str(events), "--engine", "local"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"query": "alarm", "boolean": True, "start": "1970-01-01T00:01:00Z", "end": "1970-01-01T00:01:00Z"}]
    code = cli.main(["run", str(rules), "--events", str(events), "--engine", "local", "--format", "csv"])
    err = capsys.readouterr().err
    assert code == 2 and "--format csv cannot hold the answers of ASK query alarm" in err

