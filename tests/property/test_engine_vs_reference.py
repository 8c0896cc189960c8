"""The engine against the reference evaluator on seeded random streams and
random algebra: for every generated (query, stream) the engine's answers
equal the reference's, as multisets of (bindings, start, end).

A failure report shows the query (algebra text), the stream and the seed:
replay it with CEP_SEED=<seed>, or paste the @reproduce_failure line that
hypothesis prints.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

from cep import reference
from cep.algebra import ops
from cep.engine import Engine
from cep.errors import EngineError
from tests.property.strategies import (
    BINARY, INTERVAL_RELATIONS, NEGATIONS_AND_JOINS, WITH_INTERVAL_RELATIONS,
    background_triples, chained_rule_sets, group_window_update_cases, grouped_subquery_queries, closure_is_finite, construct_queries, path_backgrounds, path_queries, path_streams, update_cases, examples, expression_queries, multiset, note_case, operator_queries, projected_queries, unary_queries,
    queries, query_sets, seeded, seq_filter_queries, service_queries, streams, timestamp_queries, typed_streams, unit_queries,
)


def _settings(n):
    return settings(
        max_examples=examples(n),
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def run_engine(query, events):
    engine = Engine([query])
    return engine.push(events) + engine.flush()


def assert_same(query, events, got):
    assert_same_answers(reference.evaluate([query], events), got)


def assert_same_answers(expected, got):
    """The engine's answers are the reference's, as multisets."""
    expected, got = multiset(expected), multiset(got)
    missing, extra = expected - got, got - expected
    assert not missing and not extra, (
        f"missing from the engine: {sorted(missing.elements())}\n"
        f"extra in the engine: {sorted(extra.elements())}"
    )


@seeded
@_settings(400)
@given(query=queries(), events=streams())
def test_engine_equals_reference(query, events):
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(400)
@given(query=operator_queries(), events=streams())
def test_engine_equals_reference_one_operator(query, events):
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(300)
@given(query=st.one_of(operator_queries(INTERVAL_RELATIONS), queries(operators=WITH_INTERVAL_RELATIONS)),
       events=streams())
def test_engine_equals_reference_on_interval_relations(query, events):
    """Allen's relations (DURING, STARTS, FINISHES, MEETS, OVERLAPS) alone
    and nested with other operators, on events that last: the edge cases
    (equal starts or ends, an end that is the other's start) are frequent
    in short streams."""
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(100)
@given(query=queries(), events=streams(intervals=False))
def test_engine_equals_reference_on_point_events(query, events):
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(100)
@given(query=queries(), events=streams(), data=st.data())
def test_engine_answers_do_not_depend_on_batching(query, events, data):
    """Pushing the events (in end-time order) in several batches gives the
    answers of the reference over the whole stream."""
    note_case(query, events)
    ordered = sorted(events, key=lambda e: e.end)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(ordered)), max_size=3), label="batch cuts"))
    engine = Engine([query])
    got, last = [], 0
    for cut in cuts + [len(ordered)]:
        got += engine.push(ordered[last:cut])
        last = cut
    got += engine.flush()
    assert_same(query, events, got)


@seeded
@_settings(200)
@given(query=projected_queries(), events=streams())
def test_engine_equals_reference_with_projections(query, events):
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(200)
@given(query=unary_queries(), events=streams())
def test_engine_equals_reference_with_bind_values_and_subqueries(query, events):
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(200)
@given(query=unary_queries(), events=streams(), triples=background_triples())
def test_engine_equals_reference_with_bind_values_and_subqueries_over_background(query, events, triples):
    assert_same_with_background([query], events, triples)


@seeded
@_settings(200)
@given(query=timestamp_queries(), events=streams())
def test_engine_equals_reference_with_timestamps(query, events):
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(200)
@given(query=construct_queries(), events=streams())
def test_engine_equals_reference_for_construct(query, events):
    assume(closure_is_finite([query]))
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(300)
@given(rules=chained_rule_sets(), events=streams())
def test_engine_equals_reference_with_chained_rules(rules, events):
    """Rule chaining (the paper's Q-closure): CONSTRUCT rules that read
    each other's triples and their own, at the instant they are derived
    (through optional parts too, in strata) and later; the SELECT reads
    the closure. Rule sets that are not stratified are refused by both."""
    assert_same_chained(rules, events)


def assert_same_chained(rules, events):
    from cep.algebra.chaining import analyse

    assume(closure_is_finite(rules))
    note(f"edges: {analyse(rules).edges}")
    for q in rules:
        note(f"{q.name}: {q}")
    note(f"events: {sorted(events, key=lambda e: (e.end, e.start))}")
    engine = Engine(rules)
    try:
        got = engine.push(events) + engine.flush()
    except EngineError as refused:
        # a rule set whose finite closure still multiplies the partial
        # matches of one event past the engine's limit: refused with a
        # clear error (tests/unit/test_limits.py), nothing to compare
        assume("partial matches" not in str(refused))
        raise
    assert_same_answers(reference.evaluate(rules, events), got)


@seeded
@_settings(200)
@given(rules=chained_rule_sets(WITH_INTERVAL_RELATIONS), events=streams())
def test_engine_equals_reference_with_chained_rules_over_interval_relations(rules, events):
    """Rule chaining through Allen's relations: a derived triple spans the
    intervals it was made of, and is read again by DURING & co. at the
    instant it ends (FINISHES, MEETS) and later."""
    assert_same_chained(rules, events)


@seeded
@_settings(300)
@given(query=expression_queries(), events=typed_streams())
def test_engine_expressions_equal_reference(query, events):
    """SELECT (expr AS ?e) and FILTER over values of many datatypes (numbers
    of each kind, NaN and INF, strings with and without language, booleans,
    dateTimes, durations, ill-typed and unknown literals, IRIs, blank nodes):
    the engine's values and errors are SPARQL's, as the reference computes them."""
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(200)
@given(query=seq_filter_queries(), events=typed_streams())
def test_engine_seq_filters_equal_reference(query, events):
    """Filters across a SEQ whose left-only parts the engine computes once
    per stored goal: values and errors as the reference computes them."""
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(200)
@given(queries=query_sets(), events=streams())
def test_engine_with_several_queries_equals_reference(queries, events):
    """Several queries in one engine, with common sub-patterns (which the
    engine builds once): each query's answers are its own."""
    note_case(queries, events)
    engine = Engine(queries)
    got = engine.push(events) + engine.flush()
    expected = multiset(reference.evaluate(queries, events))
    got = multiset(got)
    assert expected == got, (f"missing from the engine: {sorted((expected - got).elements())}\n"
                             f"extra in the engine: {sorted((got - expected).elements())}")


def assert_same_with_background(queries, events, triples):
    """The engine and the reference agree over the background of `triples`."""
    from cep.background.knowledge import background_of

    note_case(queries, events)
    note(f"background: {sorted(triples)}")
    background = background_of(triples)
    engine = Engine(queries, background=background)
    assert_same_answers(reference.evaluate(queries, events, background), engine.push(events) + engine.flush())


@seeded
@_settings(300)
@given(query=queries(), events=streams(), triples=background_triples())
def test_engine_equals_reference_with_background_knowledge(query, events, triples):
    """Events matched modulo a random RDFS ontology and joined with its
    timeless triples (docs/language.md, Background knowledge)."""
    assert_same_with_background([query], events, triples)


@seeded
@_settings(200)
@given(query=queries(operators=NEGATIONS_AND_JOINS), events=streams(), triples=background_triples())
def test_engine_equals_reference_on_negation_over_background(query, events, triples):
    """MINUS and FILTER [NOT] EXISTS whose operands match background
    triples, events or both, joined with events (docs/language.md, MINUS)."""
    assert_same_with_background([query], events, triples)


@seeded
@_settings(300)
@given(query=unit_queries(), events=streams())
def test_engine_equals_reference_with_the_empty_group(query, events):
    """The empty group: one empty solution per instant, alone, filtered,
    or an operand of every operator."""
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(300)
@given(query=path_queries(), events=path_streams(), triples=path_backgrounds())
def test_engine_equals_reference_with_property_paths(query, events, triples):
    """Property paths (closures over sequences, alternatives and inverses)
    over a random background graph and the graph of each instant, joined
    with events."""
    assert_same_with_background([query], events, triples)


@seeded
@_settings(200)
@given(query=path_queries(), events=path_streams())
def test_engine_equals_reference_with_property_paths_over_events(query, events):
    """Property paths with no background: over the graph of each instant."""
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(300)
@given(case=update_cases(), events=streams())
def test_engine_equals_reference_with_background_updates(case, events):
    """DELETE/INSERT rules change the background while the stream runs:
    each instant's detections see the updates of the instants before."""
    queries, triples = case
    assert_same_with_background(queries, events, triples)


@seeded
@_settings(200)
@given(case=update_cases(windowed=True), events=streams())
def test_engine_equals_reference_with_background_updates_in_windows(case, events):
    """A window reads the background as the updates of the instants up to
    its evaluation time left it (RSP-QL evaluates the background at the
    evaluation time), whatever the events' own times, and repeated events
    as a multiset."""
    queries, triples = case
    assert_same_with_background(queries, events, triples)


@seeded
@_settings(100)
@given(case=group_window_update_cases(), events=streams())
def test_engine_equals_reference_with_background_updates_in_group_windows(case, events):
    """Each group with a window of its own reads the background as the
    updates up to the query's evaluation time left it, as a query with one
    window does, whatever its window's size or kind."""
    queries, triples = case
    assert_same_with_background(queries, events, triples)


# The reference has no consumption policies (docs/language.md, "Consumption
# policies": they are defined on the plan's steps, not by the formal
# semantics), so a query under a policy is checked for what must hold:
# its answers are unrestricted answers (without optional operators, where
# a policy may leave a mandatory solution alone), and they do not depend on
# the order in which an instant's events arrive.
NOT_OPTIONAL = tuple(cls for cls in BINARY if cls not in ops.OPTIONAL_OPS)


@seeded
@_settings(200)
@given(query=queries(operators=NOT_OPTIONAL), events=streams(), policy=st.sampled_from(["recent", "chronological"]),
       data=st.data())
def test_policy_answers_are_unrestricted_answers_whatever_the_arrival_order(query, events, policy, data):
    query = dataclasses.replace(query, options=(("policy", policy),))
    note_case(query, events)
    got = run_engine(query, sorted(events, key=lambda e: e.end))
    extra = multiset(got) - multiset(reference.evaluate([dataclasses.replace(query, options=())], events))
    assert not extra, f"answers no combination gives: {sorted(extra.elements())}"
    shuffled = data.draw(st.permutations(events), label="arrival order")
    assert multiset(run_engine(query, sorted(shuffled, key=lambda e: e.end))) == multiset(got)


@seeded
@_settings(300)
@given(data=st.data())
def test_engine_equals_reference_on_windows_and_aggregates(data):
    """Windows (sliding, tumbling, hopping, COMPUTED EVERY, count-based),
    RStream/IStream/DStream, GROUP BY aggregates with HAVING and C-SPARQL's
    AGGREGATE over random patterns: the engine's evaluations are the
    reference's, which follows the definitions literally."""
    from tests.property.strategies import records, streamed, windowed_queries
    query = data.draw(windowed_queries())
    events = data.draw(streams())
    if data.draw(st.booleans(), label="events of two streams"):  # the query reads one or both
        events = data.draw(streamed(events))
    if data.draw(st.booleans(), label="multi-triple events"):  # a count window of events counts records
        events = data.draw(records(events))
    note_case([query], events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(150)
@given(data=st.data())
def test_engine_equals_reference_on_groups_with_windows_of_their_own(data):
    """Groups with windows of their own (Streaming SPARQL) joined, or
    joined as OPTIONAL, with the query's pattern over its window: several
    window sizes and kinds in one query, each group read over its own, as
    a multiset (events repeated in every other stream, some of them in
    records of several triples: copies are records)."""
    from cep.binarize import leading_parts, split_windows
    from tests.property.strategies import group_windowed_queries, records, streamed
    query = data.draw(group_windowed_queries())
    events = data.draw(streams(repeats=2))
    if data.draw(st.booleans(), label="events of two streams"):
        events = data.draw(streamed(events))
    if data.draw(st.booleans(), label="multi-triple events"):
        events = data.draw(records(events))
    note_case([query], events)
    got = run_engine(query, events)
    split = split_windows(query)
    if split is not None and len(leading_parts(split[0])) > 1:
        event("UNION around the first group" + (", RANGE UNBOUNDED" if any(
            split[1][j][1].unbounded for j in leading_parts(split[0])) else ""))
    assert_same(query, events, got)


@seeded
@_settings(100)
@given(data=st.data())
def test_engine_equals_reference_on_change_over_group_windows_with_a_later_empty_group(data):
    """REPORT ON CHANGE over groups with windows of their own, an empty
    group in a group after the first: an evaluation reports when the
    content of any of the query's windows changed (RSP-QL's content
    change read per window), with the first group's too."""
    from tests.property.strategies import group_windowed_queries, records
    query = data.draw(group_windowed_queries(changes=True))
    events = data.draw(streams(repeats=2))
    if data.draw(st.booleans(), label="multi-triple events"):
        events = data.draw(records(events))
    note_case([query], events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(100)
@given(data=st.data())
def test_engine_equals_reference_on_timestamps_of_a_stream(data):
    """timestamp(?v, <stream>) over events of two streams and of none: the
    engine's leaf rules bind each stream's end as the reference reads the
    occurrences' streams."""
    from tests.property.strategies import stream_timestamp_queries, streamed
    query = data.draw(stream_timestamp_queries())
    events = data.draw(streamed(data.draw(streams())))
    note_case([query], events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(300)
@given(data=st.data())
def test_engine_equals_reference_on_windows_over_their_content(data):
    """OPTIONAL, MINUS, [NOT] EXISTS and OPTIONALSEQ inside a window (of
    every kind, every report operator and grouping) are evaluated over the
    window's content (RSP-QL's eval(SDS, SE, t)): the engine's evaluations,
    from the operands' solutions it keeps per window, are the reference's,
    which evaluates the pattern over the window's events."""
    from tests.property.strategies import streamed, windowed_queries
    query = data.draw(windowed_queries(content=True))
    events = data.draw(streams())
    if data.draw(st.booleans(), label="events of two streams"):
        events = data.draw(streamed(events))
    note_case([query], events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(100)
@given(data=st.data())
def test_engine_equals_reference_on_subqueries_over_window_content(data):
    """A subquery that groups or is cut by LIMIT, inside a window that
    evaluates its pattern over its content (OPTIONAL, MINUS, [NOT] EXISTS
    or OPTIONALSEQ inside it, or a [TRIPLES n] window): its rows are made
    at each instant the window holds, from the solutions over the window's
    content that end then, as the reference makes them."""
    from tests.property.strategies import grouped_subquery_queries, records, windowed_queries
    content = data.draw(st.integers(0, 2), label="content operator inside") > 0
    query = data.draw(windowed_queries(base=grouped_subquery_queries(content=content)))
    events = data.draw(streams())
    if data.draw(st.booleans(), label="multi-triple events"):
        events = data.draw(records(events))
    note_case([query], events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(300)
@given(data=st.data())
def test_engine_equals_reference_with_solution_modifiers(data):
    """ORDER BY, OFFSET and LIMIT cut each evaluation (an instant's answers,
    or a window's), and ASK answers once per evaluation with a solution, on
    plain, projected and windowed queries, the events pushed in batches:
    the engine keeps the reference's answers."""
    from tests.property.strategies import modified_queries
    query = data.draw(modified_queries())
    events = data.draw(streams())
    note_case([query], events)
    ordered = sorted(events, key=lambda e: e.end)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(ordered)), max_size=2), label="batch cuts"))
    engine, got, last = Engine([query]), [], 0
    for cut in cuts + [len(ordered)]:
        got += engine.push(ordered[last:cut])
        last = cut
    assert_same(query, events, got + engine.flush())


FED_S, FED_P = "<http://example.org/fed>", "<http://example.org/fedp>"


def _absence(op) -> bool:
    return isinstance(op, ops.SeqAbsence) or any(_absence(c) for c in ops.children(op))


def _variable_predicate(op) -> bool:
    """Whether a triple pattern anywhere in op (in a negated operand too:
    ops.variables leaves those out) has a variable predicate."""
    if isinstance(op, ops.Triple):
        return isinstance(op.p, ops.Var)
    return any(_variable_predicate(c) for c in ops.children(op))


@seeded
@_settings(200)
@given(data=st.data())
def test_engine_equals_reference_on_window_results_fed_back(data):
    """A windowed query made a CONSTRUCT whose triples are fed back (its
    value as the object of a fresh predicate), read by a second query: after
    a later event (SEQ), with an event of the same instant (join), or by a
    window of its own. The query's groups may have windows of their own: it
    is then evaluated, and feeds, when its leading groups' windows are. The
    engine feeds each evaluation's triples at its time; the reference adds
    them to the stream until nothing new comes."""
    from cep.binarize import leading_parts, split_windows
    from tests.property.strategies import PREDICATES, group_windowed_queries, windowed_queries
    base = data.draw(st.one_of(windowed_queries(), group_windowed_queries()))
    split = split_windows(base) if base.window is not None else None
    evaluated_by = [split[1][j][1] for j in leading_parts(split[0])] if split else [base.window]
    assume(base.window is not None and base.projection)
    assume(all(w.count is None for w in evaluated_by))  # a count window's evaluations do not feed: refused
    assume(not _variable_predicate(base.pattern))  # a variable predicate would read the fed triples
    assume(not _absence(base.pattern))  # NOTSEQ with rule chaining is refused
    value = data.draw(st.sampled_from([item.var for item in base.projection]), label="fed value")
    producer = dataclasses.replace(base, name="producer", form="construct", distinct=False,
                                   template=(ops.Triple(FED_S, FED_P, value),))
    fed = ops.Triple(FED_S, FED_P, ops.Var("f"))
    event = ops.Triple(ops.Var("s"), data.draw(st.sampled_from(PREDICATES[:2])), ops.Var("x"))
    how = data.draw(st.sampled_from(["seq", "join", "window"]), label="how the consumer reads")
    if how == "window":
        range_ms = data.draw(st.integers(1, 8))
        consumer = ops.Query(
            "consumer", "select", fed, (ops.ProjectItem(ops.Var("n")),),
            window=ops.Window("<http://example.org/s>", range_ms=range_ms,
                              step_ms=data.draw(st.sampled_from([1, 2, range_ms]))),
            grouping=ops.Grouping((), ((ops.Var("n"), ops.Aggregate("count", None)),), (), ()))
    else:
        pattern = ops.SeqJoin(fed, event) if how == "seq" else ops.Join(fed, event)
        consumer = ops.Query("consumer", "select", pattern)
    events = data.draw(streams())
    note_case([producer, consumer], events)
    engine = Engine([producer, consumer])
    got = engine.push(events) + engine.flush()
    assert_same_answers(reference.evaluate([producer, consumer], events), got)


def _window_text(draw, stream: str) -> str:
    """A time-based window of a few ms: sliding, tumbling or hopping."""
    range_ms = draw(st.integers(1, 8), label="range")
    step = draw(st.sampled_from(["TUMBLING", f"STEP {max(1, range_ms // 2)}ms", "STEP 1ms",
                                 f"STEP {range_ms + 2}ms"]), label="step")
    return f"FROM STREAM <{stream}> [RANGE {range_ms}ms {step}]"


@seeded
@_settings(100)
@given(data=st.data())
def test_engine_equals_reference_on_chains_of_window_results_fed_back(data):
    """A chain of windows fed back: a windowed CONSTRUCT's aggregate per
    subject (or its values joined with a group with a window of its own:
    Streaming SPARQL's { P WINDOW ... }) read by a second windowed
    CONSTRUCT, whose triples a third window aggregates (each link's triples
    at its evaluation time, several window sizes): the engine's answers at
    every link are the reference's."""
    from cep.rules import parse_rules
    from tests.property.strategies import PREDICATES
    ex = "http://example.org/"
    read = data.draw(st.sampled_from(PREDICATES[:2]), label="predicate")  # a variable one would read the links'
    first, second = (data.draw(st.sampled_from(["COUNT(*)", "SUM(?v)", "MAX(?v)", "AVG(?v)"]), label=f"aggregate {i}")
                     for i in (1, 2))
    where = f"{{ SELECT ?s ({first} AS ?a) WHERE {{ ?s {read} ?v }} GROUP BY ?s }}"
    if data.draw(st.booleans(), label="link1's groups have windows of their own"):
        range_ms = data.draw(st.integers(1, 8), label="group range")
        group = data.draw(st.sampled_from([f"WINDOW RANGE {range_ms} SLIDE {max(1, range_ms // 2)}",
                                           f"WINDOW RANGE {range_ms} FIXED", f"WINDOW RANGE {range_ms} SLIDE",
                                           f"WINDOW ELEMS {max(1, range_ms // 2)}"]), label="group window")
        other = data.draw(st.sampled_from(PREDICATES[:2]), label="group predicate")
        where = f"{{ ?s {read} ?a {{ ?s {other} ?w {group} }} }}"
    rules = f"""PREFIX : <{ex}>
REGISTER STREAM link1 AS
CONSTRUCT {{ ?s :fed1 ?a }} {_window_text(data.draw, ex + "s")}
WHERE {where}
REGISTER STREAM link2 AS
CONSTRUCT {{ ?s :fed2 ?b }} {_window_text(data.draw, ex + "s")}
WHERE {{ SELECT ?s ({second.replace("?v", "?a")} AS ?b) WHERE {{ ?s :fed1 ?a }} GROUP BY ?s }}
REGISTER QUERY last AS
SELECT ?s (COUNT(*) AS ?n) (SUM(?b) AS ?total) {_window_text(data.draw, ex + "s")}
WHERE {{ ?s :fed2 ?b }} GROUP BY ?s
"""
    queries = list(parse_rules(rules, "chain.rq"))
    events = data.draw(streams())
    note(rules)
    note_case(queries, events)
    engine = Engine(queries)
    got = engine.push(sorted(events, key=lambda e: (e.end, e.start))) + engine.flush()
    assert_same_answers(reference.evaluate(queries, events), got)


@seeded
@_settings(150)
@given(query=grouped_subquery_queries(), events=streams())
def test_engine_equals_reference_with_grouped_subqueries(query, events):
    note_case(query, events)
    assert_same(query, events, run_engine(query, events))


@seeded
@_settings(100)
@given(query=grouped_subquery_queries(), events=streams(), triples=background_triples())
def test_engine_equals_reference_with_grouped_subqueries_over_background(query, events, triples):
    assert_same_with_background([query], events, triples)


@st.composite
def describe_cases(draw):
    """A DESCRIBE query (of a variable, every variable, an IRI, a pattern
    of one or two triples) and a background whose description of a
    resource runs through blank nodes, cycles included."""
    from cep.rules import parse_rules
    from tests.property.strategies import EX, PREDICATES, SUBJECTS

    p, q = (draw(st.sampled_from(PREDICATES)) for _ in range(2))
    what = draw(st.sampled_from(["?s", "?s ?o", "*", SUBJECTS[0]]))
    where = draw(st.sampled_from([f"?s {p} ?o", f"?s {p} ?o . ?s {q} ?x", f"?s {p} ?o . ?o {q} ?x"]))
    (query,) = parse_rules(f"DESCRIBE {what} WHERE {{ {where} }}", "describe.rq")
    triples = draw(background_triples())
    nodes = ["_:b1", "_:b2"]
    links = draw(st.lists(st.tuples(st.sampled_from(SUBJECTS + nodes), st.sampled_from(PREDICATES),
                                    st.sampled_from(nodes + [f'"{EX}x"'])), max_size=4))
    return query, triples + links


@seeded
@_settings(150)
@given(case=describe_cases(), events=streams())
def test_engine_equals_reference_on_describe(case, events):
    """DESCRIBE's answers: the solution's triples about each resource and
    its concise bounded description in the background (docs/language.md,
    DESCRIBE)."""
    query, triples = case
    assert_same_with_background([query], events, triples)


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    """A real SPARQL endpoint (Oxigraph) for the SERVICE cases, one for the module."""
    from cep.service.oxigraph import Oxigraph
    with Oxigraph(tmp_path_factory.mktemp("endpoint")) as server:
        yield server


@seeded
@settings(max_examples=examples(60), deadline=None, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(case=service_queries(), events=streams())
def test_engine_equals_reference_with_service(endpoint, case, events):
    """SERVICE over a snapshot of an endpoint's graph (docs/language.md,
    SERVICE), joined, in OPTIONAL or deep in a (windowed) pattern, with
    OPTIONAL, FILTER and blank nodes inside: the engine against the real
    endpoint holding the snapshot, with a budget that covers every
    candidate, answers as the reference over the snapshot."""
    from cep.service.options import ServiceOptions
    from tests.property.strategies import service_at

    query, graph = case
    query = service_at(query, endpoint.query_url)
    endpoint.update("DELETE WHERE { ?s ?p ?o }")
    if graph:
        endpoint.update("INSERT DATA { " + " . ".join(" ".join(t) for t in sorted(graph)) + " }")
    note_case([query], events)
    note(f"endpoint graph: {sorted(graph)}")
    engine = Engine([query], services=ServiceOptions(allow=[endpoint.base], gamma=1000))
    got = engine.push(events) + engine.flush()
    assert_same_answers(reference.evaluate([query], events, services={endpoint.query_url: graph}), got)


@seeded
@_settings(100)
@given(data=st.data())
def test_engine_equals_reference_on_named_windows_of_different_sizes(data):
    """RSP-QL's WINDOW ?w { P } over named windows of different sizes,
    alone or beside WINDOW <w> { P } (joined, OPTIONAL, UNION), with report
    policies and RSTREAM/ISTREAM/DSTREAM, translated from the query text:
    the union of each window's solutions at every named window's
    evaluation times (a count window's: every instant it counts)."""
    from cep.rules import parse_rules
    from tests.property.strategies import named_window_queries, records, streamed
    text = data.draw(named_window_queries())
    note(text)
    queries = parse_rules(text, "q.rq")
    engine = Engine(queries)
    events = data.draw(streamed(data.draw(streams(repeats=2))))
    if data.draw(st.booleans(), label="multi-triple events"):
        events = data.draw(records(events))
    note_case(queries, events)
    got = engine.push(events) + engine.flush()
    event(f"answers: {min(len(got), 3)}" + (" (RANGE UNBOUNDED)" if "UNBOUNDED" in text else ""))
    assert_same_answers(reference.evaluate(queries, events), got)
