"""BIND, VALUES and subqueries (SPARQL 1.1, 18.2.1, 10.2, 18.2.2.6) on a
stream: the engine and the reference evaluator agree, each solution keeps
the interval of the events it matched, and the forms not supported are
refused by name."""

import pytest

from cep import reference
from cep.algebra import ops
from cep.compile import compile_rules
from cep.engine import Engine
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules

EX = "http://example.org/"
INT = "http://www.w3.org/2001/XMLSchema#integer"
PREFIX = f"PREFIX : <{EX}>\n"


def _int(v):
    return f'"{v}"^^<{INT}>'


def _event(s, p, o, start, end=None):
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", o, start, start if end is None else end)


def _run(text, events):
    queries = parse_rules(PREFIX + text, "q.rq")
    engine = Engine(queries)
    got = engine.push(sorted(events, key=lambda e: e.end)) + engine.flush()
    expected = reference.evaluate(queries, events)
    assert sorted(got) == sorted(expected)
    return [(start, end, dict(bindings)) for start, end, bindings in sorted((a.start, a.end, a.bindings) for a in got)]


def test_bind_extends_each_solution_and_keeps_its_interval():
    got = _run("SELECT * WHERE { ?k :a ?x BIND (?x * 10 AS ?y) }", [_event("k", "a", _int(2), 3, 5)])
    assert got == [(3, 5, {"k": f"<{EX}k>", "x": _int(2), "y": _int(20)})]


def test_an_error_in_bind_leaves_the_variable_unbound():
    got = _run('SELECT * WHERE { ?k :a ?x BIND (?x * 10 AS ?y) }', [_event("k", "a", '"text"', 1)])
    assert got == [(1, 1, {"k": f"<{EX}k>", "x": '"text"'})]


def test_bind_reads_the_interval_of_the_solution():
    got = _run("SELECT ?d WHERE { ?k :a ?x BIND (getDURATION() AS ?d) }", [_event("k", "a", _int(1), 1000, 3000)])
    assert [b["d"] for _, _, b in got] == ['"PT2S"^^<http://www.w3.org/2001/XMLSchema#duration>']


def test_values_rows_join_and_undef_matches_any_value():
    events = [_event("k", "a", _int(1), 1), _event("k", "a", _int(2), 2), _event("k", "a", _int(3), 3)]
    got = _run('SELECT * WHERE { ?k :a ?x VALUES (?x ?l) { (1 "one") (3 UNDEF) } }', events)
    assert got == [(1, 1, {"k": f"<{EX}k>", "x": _int(1), "l": '"one"'}),
                   (3, 3, {"k": f"<{EX}k>", "x": _int(3)})]


def test_trailing_values_join_the_whole_where():
    events = [_event("k", "a", _int(1), 1), _event("j", "a", _int(2), 2)]
    got = _run("SELECT ?x WHERE { ?k :a ?x } VALUES ?k { :j }", events)
    assert got == [(2, 2, {"x": _int(2)})]


def test_a_bind_over_inline_data_sees_its_own_group_only():
    """The inner group's BIND is evaluated bottom up: the outer ?x is not
    in its scope, so ?y is unbound (a join by unification alone would
    give ?y = ?x)."""
    got = _run("SELECT * WHERE { ?k :a ?x { BIND (?x AS ?y) } }", [_event("k", "a", _int(1), 1)])
    assert got == [(1, 1, {"k": f"<{EX}k>", "x": _int(1)})]


def test_a_subquery_hides_its_other_variables():
    """The subquery's ?x is not the outer ?x: the join does not need them equal."""
    events = [_event("k", "a", _int(1), 1), _event("k", "c", _int(9), 2)]
    got = _run("SELECT * WHERE { ?k :c ?x { SELECT ?k (?x + 1 AS ?n) WHERE { ?k :a ?x } } }", events)
    assert got == [(1, 2, {"k": f"<{EX}k>", "x": _int(9), "n": _int(2)})]


def test_a_subquery_gives_each_solution_once():
    events = [_event("k", "a", _int(1), 1), _event("k", "a", _int(2), 1), _event("k", "c", _int(9), 2)]
    got = _run("SELECT * WHERE { ?k :c ?z { SELECT ?k WHERE { ?k :a ?x } } }", events)
    assert got == [(1, 2, {"k": f"<{EX}k>", "z": _int(9)})]


@pytest.mark.parametrize("text, message", [
    ("SELECT * WHERE { ?k :a ?x BIND (1 AS ?x) }", "BIND(... AS ?x) names a variable already bound"),
    ("SELECT * WHERE { ?k :a ?x VALUES (?x ?y) { (1) } }", "a row of VALUES has 1 value for 2 variables"),
    ("SELECT * WHERE { ?k :a ?x OPTIONAL { BIND (1 AS ?y) } }", "OPTIONAL does not take it"),
    ("SELECT * WHERE { ?k :a ?x { SELECT ?y ?n WHERE { ?x :b ?y } AGGREGATE { (?n, COUNT, {?y}) } } }",
     "AGGREGATE in a subquery inside a pattern is not supported"),
    # a NOTSEQ deadline is an instant without events: the subquery's COUNT would be 0 there
    ("SELECT * WHERE { ?k :a ?x { SELECT (COUNT(*) AS ?n) WHERE { ?y :b ?z } } }\n"
     "SELECT * WHERE { { ?k :a ?x } NOTSEQ \"PT1S\" { ?k :c ?w } }",
     "a subquery with GROUP BY, an aggregate, LIMIT or OFFSET in a rule set with NOTSEQ is not supported"),
])
def test_what_is_refused_is_named(text, message):
    with pytest.raises(QueryError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")
                       .replace(".", r"\.")):
        compile_rules(parse_rules(PREFIX + text, "q.rq"))


def test_the_algebra_of_a_subquery_renames_apart():
    (q,) = parse_rules(PREFIX + "SELECT * WHERE { ?k :c ?x { SELECT ?k WHERE { ?k :a ?x } } }", "q.rq")
    project = q.pattern.right
    assert isinstance(project, ops.Project) and project.vars == (ops.Var("k"),)
    assert ops.Var("x") not in ops.variables(project.pattern)


def test_inline_data_alone_answers_at_each_instant_as_the_empty_group():
    """Join({}, table) is the table: its rows at each instant at which
    events arrive, as the empty group's one solution (W3C now01, BINDscope4)."""
    events = [_event("k", "a", _int(1), 1), _event("j", "b", _int(2), 4)]
    got = _run("SELECT * WHERE { VALUES ?x { 1 2 } }", events)
    assert got == [(1, 1, {"x": _int(1)}), (1, 1, {"x": _int(2)}), (4, 4, {"x": _int(1)}), (4, 4, {"x": _int(2)})]
    got = _run("SELECT ?x WHERE { { BIND (7 AS ?x) } UNION { ?k :b ?x } }", events)
    assert got == [(1, 1, {"x": _int(7)}), (4, 4, {"x": _int(2)}), (4, 4, {"x": _int(7)})]


def test_now_in_a_bind_before_any_pattern_is_the_time_of_the_solution():
    at = '"1970-01-01T00:00:00.003Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    got = _run("SELECT ?n ?x WHERE { BIND (NOW() AS ?n) ?k :a ?x }", [_event("k", "a", _int(1), 3)])
    assert got == [(3, 3, {"n": at, "x": _int(1)})]
    got = _run("SELECT ?n WHERE { BIND (NOW() AS ?n) }", [_event("k", "a", _int(1), 3)])
    assert got == [(3, 3, {"n": at})]
    # a group of a BIND and a FILTER that reads it, joined with a pattern (W3C now01)
    got = _run("SELECT ?n ?x WHERE { { BIND (NOW() AS ?n) FILTER(DATATYPE(?n) = <http://www.w3.org/2001/"
               "XMLSchema#dateTime>) } ?k :a ?x }", [_event("k", "a", _int(1), 3)])
    assert got == [(3, 3, {"n": at, "x": _int(1)})]


def test_a_union_of_inline_data_is_joined_as_a_table():
    events = [_event("k", "a", _int(1), 1)]
    got = _run("SELECT * WHERE { ?k :a ?x { BIND (1 AS ?y) } UNION { VALUES ?y { 2 } FILTER (?y > 1) } }", events)
    assert [b["y"] for _, _, b in got] == [_int(1), _int(2)]


def test_a_subquery_over_background_data_is_joined_once_per_binding():
    """The subquery matches background triples only: its solutions (once
    each, though two triples give ?k) join the event, which keeps its
    interval."""
    from cep.background.knowledge import background_of

    triples = [(f"<{EX}k>", f"<{EX}a>", _int(1)), (f"<{EX}k>", f"<{EX}a>", _int(2))]
    queries = parse_rules(PREFIX + "SELECT * WHERE { ?k :c ?z { SELECT ?k WHERE { ?k :a ?x } } }", "q.rq")
    background = background_of(triples)
    events = [_event("k", "c", _int(9), 4)]
    engine = Engine(queries, background=background)
    got = engine.push(events) + engine.flush()
    assert sorted(got) == sorted(reference.evaluate(queries, events, background))
    assert [(a.start, a.end, dict(a.bindings)) for a in got] == [(4, 4, {"k": f"<{EX}k>", "z": _int(9)})]



def test_a_subquery_over_background_data_hides_the_variables_it_does_not_project():
    """Bottom-up evaluation (SPARQL 1.1, 18.2.1): an algebra Project whose
    hidden ?k and ?x share the outer pattern's names (the translator names
    them apart; the algebra need not) still finds its background solutions
    apart. ?p = :a comes from the triple whose ?k is :m, not the event's :k."""
    from cep.background.knowledge import background_of

    k, x, p = ops.Var("k"), ops.Var("x"), ops.Var("p")
    query = ops.Query("q", "select", ops.Join(ops.Triple(k, f"<{EX}c>", x), ops.Project(ops.Triple(k, p, x), (p,))))
    background = background_of([(f"<{EX}m>", f"<{EX}a>", f"<{EX}n>")])
    events = [_event("k", "c", _int(9), 4)]
    engine = Engine([query], background=background)
    got = engine.push(events) + engine.flush()
    assert sorted(got) == sorted(reference.evaluate([query], events, background))
    assert sorted(dict(a.bindings)["p"] for a in got) == [f"<{EX}a>", f"<{EX}c>"]

def test_a_grouped_subquery_answers_per_instant_over_that_instant():
    """Its rows at t are the groups of its pattern's solutions that end at
    t, each over [t, t], joined with the events around them as any
    solution over [t, t] is; an instant with none of its solutions has the
    empty group's row, ?k unbound (W3C agg-empty-group), which joins both
    :c events (instant 2 has no :a)."""
    events = [_event("k", "a", _int(1), 1), _event("k", "a", _int(2), 3), _event("j", "a", _int(5), 3),
              _event("k", "a", _int(4), 3), _event("k", "c", _int(9), 2), _event("j", "c", _int(8), 3)]
    got = _run("SELECT ?k ?n ?s ?z WHERE { ?k :c ?z "
               "{ SELECT ?k (COUNT(*) AS ?n) (SUM(?x) AS ?s) WHERE { ?k :a ?x } GROUP BY ?k } }", events)
    assert got == [(1, 2, {"k": f"<{EX}k>", "n": _int(1), "s": _int(1), "z": _int(9)}),
                   (2, 2, {"k": f"<{EX}k>", "n": _int(0), "s": _int(0), "z": _int(9)}),
                   (2, 3, {"k": f"<{EX}j>", "n": _int(0), "s": _int(0), "z": _int(8)}),
                   (2, 3, {"k": f"<{EX}k>", "n": _int(2), "s": _int(6), "z": _int(9)}),
                   (3, 3, {"k": f"<{EX}j>", "n": _int(1), "s": _int(5), "z": _int(8)})]


def test_an_aggregate_subquery_without_group_by_counts_zero_at_an_instant_without_solutions():
    events = [_event("k", "a", _int(1), 1), _event("k", "c", _int(9), 2)]
    got = _run("SELECT ?n ?z WHERE { ?k :c ?z { SELECT (COUNT(?x) AS ?n) WHERE { ?j :a ?x } } }", events)
    assert got == [(1, 2, {"n": _int(1), "z": _int(9)}), (2, 2, {"n": _int(0), "z": _int(9)})]


def test_a_subquery_limit_cuts_the_rows_of_an_instant_in_order():
    """ORDER BY orders as the top level does (numbers by value), and
    LIMIT and OFFSET keep the rows of each instant's evaluation."""
    events = [_event("a", "p", _int(10), 1), _event("b", "p", _int(9), 1), _event("c", "p", _int(100), 1),
              _event("d", "p", _int(7), 2), _event("a", "q", _int(0), 2)]
    got = _run("SELECT ?s ?v WHERE { { SELECT ?s ?v WHERE { ?s :p ?v } ORDER BY DESC(?v) LIMIT 2 } }", events)
    assert got == [(1, 1, {"s": f"<{EX}a>", "v": _int(10)}), (1, 1, {"s": f"<{EX}c>", "v": _int(100)}),
                   (2, 2, {"s": f"<{EX}d>", "v": _int(7)})]
    got = _run("SELECT ?s WHERE { { SELECT ?s WHERE { ?s :p ?v } ORDER BY ?v OFFSET 1 LIMIT 1 } }", events)
    assert got == [(1, 1, {"s": f"<{EX}a>"})]


def test_a_grouped_subquery_reads_the_background_at_every_instant():
    """The background's solutions of its pattern are there at every
    instant: they are grouped with the events' of the instant, and its
    rows join each event over [t, t]."""
    from cep.background.knowledge import background_of

    triples = [(f"<{EX}k>", f"<{EX}a>", _int(1)), (f"<{EX}k>", f"<{EX}a>", _int(2)),
               (f"<{EX}j>", f"<{EX}a>", _int(5))]
    text = "SELECT ?k ?m ?n ?z WHERE { ?k :c ?z { SELECT ?k (MAX(?x) AS ?m) (COUNT(*) AS ?n) WHERE { ?k :a ?x } GROUP BY ?k } }"
    queries = parse_rules(PREFIX + text, "q.rq")
    background = background_of(triples)
    events = [_event("k", "c", _int(9), 4), _event("k", "a", _int(7), 6), _event("k", "c", _int(8), 6)]
    engine = Engine(queries, background=background)
    got = engine.push(events) + engine.flush()
    assert sorted(got) == sorted(reference.evaluate(queries, events, background))
    assert sorted((a.start, a.end, dict(a.bindings)["m"], dict(a.bindings)["n"], dict(a.bindings)["z"]) for a in got) == [
        (4, 4, _int(2), _int(2), _int(9)), (4, 6, _int(2), _int(2), _int(8)),
        (4, 6, _int(7), _int(3), _int(9)), (6, 6, _int(7), _int(3), _int(8))]


def test_a_grouped_subquery_reads_a_background_triple_an_event_entails_too_once():
    """The background's `:s1 a :C1`, which the event `:s1 :p 0` entails too
    (`:p rdfs:domain :C1`), is one solution of the subquery at the
    event's instant (its solutions are a set, as the instant's graph is),
    without a window and in one (the window's solutions kept as they come);
    the event given twice, in a window, is two copies of it."""
    from cep.background.knowledge import background_of

    rdf, rdfs = "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/2000/01/rdf-schema#"
    background = background_of([(f"<{EX}p>", f"<{rdfs}domain>", f"<{EX}C1>"),
                                (f"<{EX}s1>", f"<{rdf}type>", f"<{EX}C1>")])
    subquery = "{ ?s :p ?x { SELECT (COUNT(*) AS ?n) WHERE { ?s a :C1 } } }"

    def counts(text, events):
        queries = parse_rules(PREFIX + text, "q.rq")
        engine = Engine(queries, background=background)
        got = engine.push(events) + engine.flush()
        assert sorted(got) == sorted(reference.evaluate(queries, events, background))
        return sorted(dict(a.bindings)["n"] for a in got)

    event = _event("s1", "p", _int(0), 0)
    assert counts(f"SELECT * WHERE {subquery}", [event]) == [_int(1)]
    windowed = f"SELECT * FROM STREAM <{EX}s> [RANGE 1ms STEP 1ms] WHERE {subquery}"
    assert counts(windowed, [event]) == [_int(1)]
    assert counts(windowed, [event] * 2) == [_int(2)] * 2


def test_a_grouped_subquery_in_a_window_reads_only_the_events_in_the_window():
    """Inside a window a grouped subquery is evaluated over the window's
    content (RSP-QL): an event over [1, 3] starts before the window (2, 4]
    and is not in it, so its end is no instant of the window and its
    solution no part of a row there: at 4, COUNT(*) is 0, and with GROUP BY
    it is the empty group's row, its key unbound (agg-empty-group; they
    were 1, and an extra row at 3, from the subquery's rows per instant of
    the stream)."""
    window = f"FROM STREAM <{EX}s> [RANGE 2ms STEP 2ms]"
    events = [_event("a", "q", _int(1), 1, 3), _event("b", "p", _int(0), 4)]
    got = _run(f"SELECT * {window} WHERE {{ ?x :p ?y {{ SELECT (COUNT(*) AS ?n) WHERE {{ ?z :q ?w }} }} }}", events)
    assert got == [(2, 4, {"n": _int(0), "x": f"<{EX}b>", "y": _int(0)})]
    got = _run(f"SELECT * {window} WHERE {{ ?x :p ?y {{ SELECT (COUNT(*) AS ?n) WHERE {{ ?z :r ?w }} }} }}", events)
    assert got == [(2, 4, {"n": _int(0), "x": f"<{EX}b>", "y": _int(0)})]
    got = _run(f"SELECT * {window} WHERE {{ ?x :p ?y "
               f"{{ SELECT ?z (COUNT(*) AS ?n) WHERE {{ ?z :q ?w }} GROUP BY ?z }} }}", events)
    assert got == [(2, 4, {"n": _int(0), "x": f"<{EX}b>", "y": _int(0)})]


def test_the_subquery_that_is_a_construct_where_orders_and_cuts_per_instant():
    """CONSTRUCT { ... } { SELECT ... LIMIT n }, without a window: its
    sub-select is cut per instant, as any subquery is."""
    queries = parse_rules(PREFIX + "CONSTRUCT { ?k :top ?x } { SELECT ?k ?x { ?k :a ?x } ORDER BY DESC(?x) LIMIT 1 }",
                          "q.rq")
    events = [_event("k", "a", _int(1), 1), _event("j", "a", _int(5), 1), _event("k", "a", _int(3), 2)]
    engine = Engine(queries)
    got = engine.push(events) + engine.flush()
    assert sorted(got) == sorted(reference.evaluate(queries, events))
    assert sorted((a.end, a.triples) for a in got) == [
        (1, ((f"<{EX}j>", f"<{EX}top>", _int(5)),)), (2, ((f"<{EX}k>", f"<{EX}top>", _int(3)),))]
