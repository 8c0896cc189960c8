"""The in-process engine on small hand-checked streams: every operator,
simultaneity, absence, deduplication, windows and expiry, policies, late
events, CONSTRUCT, and event data that looks like Prolog."""

import os
import subprocess
import sys

import pyarrow as pa
import pytest

from cep import reference
from cep.algebra import ops
from cep.engine import Engine
from cep.events import ANSWERS, Event, answers_of, events_table

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
k, x, y, z, w = (ops.Var(n) for n in "kxyzw")


def iri(n):
    return f"<{EX}{n}>"


def num(i):
    return f'"{i}"^^<{XSD}integer>'


def bgp(*triples):
    return ops.BGP(tuple(ops.Triple(s, iri(p), o) for s, p, o in triples))


def ev(s, p, o, start, end=None):
    return Event(iri(s), iri(p), num(o) if isinstance(o, int) else iri(o), start, start if end is None else end)


def select(pattern, name="q", projection=None, distinct=False, **options):
    items = None if projection is None else tuple(ops.ProjectItem(v) for v in projection)
    return ops.Query(name, "select", pattern, projection=items, distinct=distinct,
                     options=tuple(sorted(options.items())))


def run(queries, events, batch=None):
    engine = Engine(queries if isinstance(queries, list) else [queries])
    answers = []
    if batch:
        for i in range(0, len(events), batch):
            answers += engine.push(events[i:i + batch])
    else:
        answers += engine.push(events)
    return answers + engine.flush()


def rows(answers):
    """(start, end, {var: local name or int}) sorted, for readable asserts."""
    out = []
    for a in answers:
        b = {}
        for name, term in a.bindings:
            if term.startswith("<"):
                b[name] = term[len(EX) + 1:-1]
            else:
                b[name] = int(term.split('"')[1])
        out.append((a.start, a.end, b))
    return sorted(out, key=repr)


def test_seq_joins_only_strictly_later_events():
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))))
    events = [ev("k1", "a", 1, 1), ev("k1", "b", 10, 1), ev("k1", "b", 2, 2), ev("k2", "b", 3, 3),
              ev("k1", "b", 4, 4)]
    assert rows(run(q, events)) == [
        (1, 2, {"k": "k1", "x": 1, "y": 2}),
        (1, 4, {"k": "k1", "x": 1, "y": 4}),
    ]


def test_equals_joins_simultaneous_events_in_any_order():
    q = select(ops.EqJoin(bgp((k, "a", x)), bgp((k, "b", y))))
    events = [ev("k1", "b", 2, 5), ev("k1", "a", 1, 5), ev("k1", "a", 3, 6), ev("k1", "b", 4, 7)]
    assert rows(run(q, events)) == [(5, 5, {"k": "k1", "x": 1, "y": 2})]


def test_juxtaposition_joins_in_any_order_with_the_spanning_interval():
    q = select(ops.Join(bgp((k, "a", x)), bgp((k, "b", y))))
    events = [ev("k1", "b", 1, 1), ev("k1", "a", 2, 3), ev("k2", "a", 3, 4)]
    assert rows(run(q, events)) == [(1, 3, {"k": "k1", "x": 2, "y": 1})]


def test_optionalseq_joins_an_earlier_optional_part_or_stands_alone():
    q = select(ops.SeqRightJoin(bgp((k, "opt", z)), bgp((k, "m", x))))
    events = [ev("k1", "opt", 7, 1), ev("k1", "m", 1, 2), ev("k2", "m", 2, 2),
              ev("k3", "opt", 8, 3), ev("k3", "m", 3, 3)]  # simultaneous: not before
    assert rows(run(q, events)) == [
        (1, 2, {"k": "k1", "x": 1, "z": 7}),
        (2, 2, {"k": "k2", "x": 2}),
        (3, 3, {"k": "k3", "x": 3}),
    ]


def test_equalsoptional_waits_for_the_whole_instant():
    # the optional part arrives after the mandatory one, at the same instant
    q = select(ops.EqLeftJoin(bgp((k, "m", x)), bgp((k, "opt", z))))
    events = [ev("k1", "m", 1, 5), ev("k1", "opt", 9, 5), ev("k2", "m", 2, 5), ev("k2", "opt", 8, 6)]
    assert rows(run(q, events)) == [
        (5, 5, {"k": "k1", "x": 1, "z": 9}),
        (5, 5, {"k": "k2", "x": 2}),
    ]


def test_equalsoptional_condition_decides_absence():
    cond = ops.Call(">", z, ops.Const(num(5)))
    q = select(ops.EqLeftJoin(bgp((k, "m", x)), bgp((k, "opt", z)), cond))
    events = [ev("k1", "m", 1, 5), ev("k1", "opt", 3, 5), ev("k2", "m", 2, 6), ev("k2", "opt", 9, 6)]
    assert rows(run(q, events)) == [
        (5, 5, {"k": "k1", "x": 1}),
        (6, 6, {"k": "k2", "x": 2, "z": 9}),
    ]


def test_optional_takes_parts_ending_no_later_than_the_mandatory_part():
    q = select(ops.LeftJoin(bgp((k, "m", x)), bgp((k, "opt", z))))
    events = [ev("k1", "opt", 1, 1), ev("k1", "m", 1, 4), ev("k1", "opt", 2, 4),
              ev("k2", "m", 2, 5), ev("k2", "opt", 3, 6)]
    assert rows(run(q, events)) == [
        (1, 4, {"k": "k1", "x": 1, "z": 1}),
        (4, 4, {"k": "k1", "x": 1, "z": 2}),
        (5, 5, {"k": "k2", "x": 2}),
    ]


def test_union_gives_both_branches():
    q = select(ops.Union_(bgp((k, "a", x)), bgp((k, "b", y))))
    events = [ev("k1", "a", 1, 1), ev("k1", "b", 2, 1)]
    assert rows(run(q, events)) == [(1, 1, {"k": "k1", "x": 1}), (1, 1, {"k": "k1", "y": 2})]


def test_filter_and_window():
    dur = ops.Const(f'"PT0.005S"^^<{XSD}duration>')  # 5 ms
    cond = ops.Call("and", ops.Call("<", y, x), ops.Call("<", ops.Call("getDURATION"), dur))
    q = select(ops.Filter(cond, ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y)))))
    events = [ev("k1", "a", 10, 0), ev("k1", "b", 5, 3), ev("k1", "b", 50, 4), ev("k1", "b", 1, 5)]
    assert rows(run(q, events)) == [(0, 3, {"k": "k1", "x": 10, "y": 5})]


def test_two_derivations_of_one_solution_give_one_answer():
    # a@[1,5] b@3: the BGP's interval is [1,5] whichever b is used; two b
    # occurrences of the same triple at 2 and 3 give the same solution
    q = select(ops.Join(bgp((k, "a", x)), bgp((k, "b", y))))
    events = [ev("k1", "b", 1, 2), ev("k1", "b", 1, 3), ev("k1", "a", 1, 1, 5)]
    assert rows(run(q, events)) == [(1, 5, {"k": "k1", "x": 1, "y": 1})]


def test_projection_keeps_duplicates_and_distinct_removes_them():
    pattern = ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y)))
    events = [ev("k1", "a", 1, 1), ev("k1", "a", 2, 1), ev("k1", "b", 3, 2)]
    assert len(run(select(pattern, projection=[k]), events)) == 2
    assert len(run(select(pattern, projection=[k], distinct=True), events)) == 1


def test_select_expression():
    q = ops.Query("q", "select", ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))),
                  projection=(ops.ProjectItem(k), ops.ProjectItem(z, ops.Call("+", x, y)),
                              ops.ProjectItem(w, ops.Call("/", x, ops.Const(num(0))))))
    (answer,) = run(q, [ev("k1", "a", 2, 1), ev("k1", "b", 3, 2)])
    assert answer.binding("z") == num(5)
    assert answer.binding("w") is None  # division by zero: an error leaves it unbound


def test_construct_instantiates_the_template_with_fresh_blank_nodes():
    template = (ops.Triple("_:e", iri("first"), x), ops.Triple("_:e", iri("second"), y),
                ops.Triple(k, iri("nothing"), z))
    q = ops.Query("c", "construct", ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))), template=template)
    answers = run(q, [ev("k1", "a", 1, 1), ev("k1", "b", 2, 2), ev("k1", "b", 3, 3)])
    assert [len(a.triples) for a in answers] == [2, 2]  # the triple with unbound ?z is skipped
    subjects = {a.triples[0][0] for a in answers}
    assert len(subjects) == 2 and all(s.startswith("_:") for s in subjects)
    assert answers[0].triples[0][0] == answers[0].triples[1][0]


@pytest.mark.parametrize(
    "policy, expected",
    [
        ("unrestricted", [(1, 3, 10), (1, 4, 11), (2, 3, 10), (2, 4, 11)]),
        ("chronological", [(1, 3, 10), (2, 4, 11)]),
        ("recent", [(2, 3, 10), (2, 4, 11)]),
    ],
)
def test_consumption_policies(policy, expected):
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))), policy=policy)
    events = [ev("k1", "a", 1, 1), ev("k1", "a", 2, 2), ev("k1", "b", 10, 3), ev("k1", "b", 11, 4)]
    got = sorted((r[2]["x"], r[1], r[2]["y"]) for r in rows(run(q, events)))
    assert got == expected


@pytest.mark.parametrize(
    "policy, expected",
    [
        ("unrestricted", [(1, 3, 10), (1, 4, 11), (2, 4, 11)]),
        # the filter decides which goal a policy may take: a skips the
        # candidate that fails it and takes the next one
        ("chronological", [(1, 3, 10), (2, 4, 11)]),
        ("recent", [(1, 3, 10), (2, 4, 11)]),
    ],
)
def test_consumption_policies_take_only_candidates_that_pass_the_filter(policy, expected):
    cond = ops.Call("<", ops.Call("+", x, ops.Const(num(8))), y)  # ?x + 8 < ?y
    q = select(ops.Filter(cond, ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y)))), policy=policy)
    events = [ev("k1", "a", 1, 1), ev("k1", "a", 2, 2), ev("k1", "b", 10, 3), ev("k1", "b", 11, 4)]
    got = sorted((r[2]["x"], r[1], r[2]["y"]) for r in rows(run(q, events)))
    assert got == expected


@pytest.mark.parametrize("policy, expected", [("recent", [(2, 3, 10)]), ("chronological", [(1, 3, 10)])])
def test_policies_take_an_instants_events_in_a_fixed_order(policy, expected):
    """a1 and a2 end at one instant: the most recent of them is the one
    taken last (by start, then by the terms' text), whatever order they
    arrive in."""
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))), policy=policy)
    a1, a2, b = ev("k1", "a", 1, 1), ev("k1", "a", 2, 1), ev("k1", "b", 10, 3)
    for events in ([a1, a2, b], [a2, a1, b]):
        assert sorted((r[2]["x"], r[1], r[2]["y"]) for r in rows(run(q, events))) == expected


def test_a_repeated_event_is_one_event_that_a_policy_consumes_once():
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))), policy="chronological")
    events = [ev("k1", "a", 1, 1), ev("k1", "a", 1, 1), ev("k1", "b", 10, 3), ev("k1", "b", 11, 4)]
    assert [(r[2]["x"], r[1], r[2]["y"]) for r in rows(run(q, events))] == [(1, 3, 10)]


def test_batches_split_inside_an_instant_give_the_same_answers():
    q = select(ops.EqLeftJoin(bgp((k, "m", x)), bgp((k, "opt", z))))
    events = [ev("k1", "m", 1, 5), ev("k1", "opt", 9, 5), ev("k2", "m", 2, 5), ev("k2", "m", 3, 6)]
    whole = rows(run(q, events))
    for size in (1, 2, 3):
        assert rows(run(q, events, batch=size)) == whole


def test_a_batch_out_of_time_order_answers_as_the_same_events_in_order():
    """A push sorts its events by end only when they are out of order, and
    holds back its latest instant (the rows after the sort): both in one
    batch, across batches, and with an instant split between two pushes."""
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))))
    ordered = [ev(f"k{i % 3}", "a" if i % 4 < 2 else "b", i, i // 3 - i % 2, i // 3) for i in range(36)]
    shuffled = [e for block in range(0, 36, 6) for e in ordered[block:block + 6][::-1]]  # two instants a block
    expected = rows(run(q, ordered))
    assert len(expected) > 20
    for size in (None, 6, 12):
        assert rows(run(q, shuffled, batch=size)) == expected


def test_a_push_made_of_several_calls_of_the_rules_answers_as_one_call(monkeypatch):
    """A push's events go to the rules in calls of about CHUNK_EVENTS,
    each call's answers read on its own (Engine._batch): the same answers,
    in the same order, as one call."""
    import cep.engine

    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))))
    events = [ev(f"k{i % 3}", "a" if i % 2 else "b", i, i // 2) for i in range(40)]

    def answers(chunk):
        monkeypatch.setattr(cep.engine, "CHUNK_EVENTS", chunk)
        engine = Engine([q])
        return [(a.start, a.end, a.bindings) for a in engine.push(events) + engine.flush()]

    one = answers(10_000)
    assert len(one) > 50
    assert answers(3) == one


def test_late_events_are_reported_not_processed():
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))))
    engine = Engine([q])
    engine.push([ev("k1", "a", 1, 1), ev("k1", "b", 2, 5), ev("k1", "b", 3, 6)])
    late = engine.push([Event(iri("k1"), iri("b"), num(4), 2, 2, source="in.jsonl:7")])
    assert late == [] and len(engine.late) == 1
    assert engine.late[0].source == "in.jsonl:7" and "late" in engine.late[0].reason
    assert len(engine.flush()) == 1  # b@6 with a@1


def test_goals_expire_past_their_window():
    """The goal store stays bounded over a stream far longer than the window."""
    dur = ops.Const(f'"PT0.1S"^^<{XSD}duration>')
    q = select(ops.Filter(ops.Call("<", ops.Call("getDURATION"), dur),
                          ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y)))))
    engine = Engine([q])
    sizes = []
    for chunk in range(30):
        events = [ev(f"k{i % 50}", "a", i, chunk * 1000 + i) for i in range(1000)]
        engine.push(events)
        sizes.append(_store_size(engine))
    # 30,000 goals arrive, one a millisecond; a goal lives for the 100 ms
    # window, plus at most one generation (25 ms: goals are dropped by whole
    # generations of a quarter window) and one sweep period (another 25 ms)
    assert max(sizes) <= 150


def test_a_band_join_stores_goals_by_band_and_forgets_empty_bands():
    """?y < ?x * 0.7 within 100 ms: goals are stored under (key, band of
    ?x * 0.7); the bands of a key whose goals expired are forgotten too; the
    answers are those of the reference evaluator."""
    dur = ops.Const(f'"PT0.1S"^^<{XSD}duration>')
    scaled = ops.Call("*", x, ops.Const(f'"0.7"^^<{XSD}decimal>'))
    cond = ops.Call("and", ops.Call("<", y, scaled), ops.Call("<", ops.Call("getDURATION"), dur))
    q = select(ops.Filter(cond, ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y)))))
    engine = Engine([q])
    assert "cep_band" in engine.compiled.program(engine.module)
    stream, answers, sizes, bands = [], [], [], []
    for chunk in range(6):
        # an event a millisecond; values over many bands (1-1000), then few (5000-5600)
        low, span = (1, 1000) if chunk < 3 else (5000, 600)
        events = [ev(f"k{i % 5}", "a" if i % 3 else "b", low + (chunk * 300 + i) * 7919 % span, chunk * 300 + i)
                  for i in range(300)]
        stream += events
        answers += engine.push(events)
        sizes.append(_store_size(engine))
        bands.append(_count(engine, "g2_l_bands(_,_)") + _band_store(engine, "g2_l")[1])
    answers += engine.flush()
    # (16 bands a doubling) the band lists shrink once the early goals expire
    assert max(sizes) <= 150
    assert min(bands[:3]) > 40 and max(bands[4:]) <= 5 * 4
    expected = reference.multiset(reference.evaluate([q], stream))
    assert sum(expected.values()) > 100 and reference.multiset(answers) == expected



def test_a_pair_waiting_in_a_seq_expires_by_its_start_not_its_end():
    """A SEQ of three within 10 s stores the pair (:a at 0 s, :b at 9 s)
    as a goal: no solution ending from 15 s on can take it (it would span
    more than 10 s), so the sweep drops it then, though it ended at 9 s."""
    from cep.rules import parse_rules

    text = f"""PREFIX : <{EX}>
        SELECT * WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} SEQ {{ ?k :c ?z }}
        FILTER (getDURATION() < "PT10S"^^<{XSD}duration>)"""
    engine = Engine(parse_rules(text))
    assert engine.push([ev("k", "a", 1, 0), ev("k", "b", 2, 9_000)]) + engine.flush() == []
    assert engine.advance(9_500) is True  # the pair can still meet a :c before 10 s
    got = engine.push([ev("k", "c", 3, 9_800)]) + engine.flush()
    assert rows(got) == [(0, 9_800, {"k": "k", "x": 1, "y": 2, "z": 3})]
    assert engine.advance(15_000) is False  # both goals started more than a window ago

def _count(engine, goal):
    (result,) = list(engine.session.prolog.query(f"aggregate_all(count, {engine.module}:{goal}, C)"))
    return result["C"]


def _store_size(engine):
    module = engine.module
    names = [f"g{n.id}_l" for n in engine.compiled.plan.nodes if getattr(n, "op", None) is ops.SeqJoin]
    total = 0
    for name in names:
        (result,) = list(engine.session.prolog.query(f"aggregate_all(count, {module}:{name}(_,_,_,_,_), C)"))
        total += result["C"] + _band_store(engine, name)[0]
    return total


def _band_store(engine, store):
    """(goals, bands) of a band store the C library keeps (prolog/cep_fast.c);
    without it the store is dynamic facts, which _count reads."""
    (result,) = list(engine.session.prolog.query(
        f"findall(K-B, ( cep_fast:cep_band_goals({engine.module}, Gs), "
        f"member(band_goals({store}, _, K, B, Goals), Gs), member(_, Goals) ), Ps), "
        f"length(Ps, N), sort(Ps, Bs), length(Bs, D)"))
    return result["N"], result["D"]


def test_event_text_that_looks_like_prolog_stays_data():
    nasty_iri = f"<{EX}x'),halt,('>"
    nasty_literal = '"foo\'), halt. %\\\\ \\"bar\\" \\t"'
    q = select(ops.SeqJoin(ops.BGP((ops.Triple(k, iri("a"), x),)), ops.BGP((ops.Triple(k, iri("b"), y),))))
    events = [Event(nasty_iri, iri("a"), nasty_literal, 1, 1), Event(nasty_iri, iri("b"), num(1), 2, 2)]
    (answer,) = run(q, events)
    assert answer.binding("k") == nasty_iri
    assert answer.binding("x") == nasty_literal


def test_prolog_decoder_gives_the_same_answers_as_the_c_decoder():
    code = (
        "from tests.unit.test_engine import *\n"
        "q = select(ops.SeqJoin(bgp((k, 'a', x)), bgp((k, 'b', y))))\n"
        "events = [ev(f'k{i % 3}', 'ab'[i % 2], i, i) for i in range(40)]\n"
        "events.append(Event(iri('k1'), iri('b'), '\"t\\\\tab\"@en', 50, 50))\n"
        "print(sorted((a.start, a.end, a.bindings) for a in run(q, events)))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = []
    for env_extra in ({}, {"CEP_NO_FOREIGN": "1"}):
        env = dict(os.environ, **env_extra)
        proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1] and outs[0].count("(") > 10


@pytest.mark.parametrize("condition, kept", [
    ('?x IN (1, "a")', True),        # one = is true
    ('?x IN ("a", 1)', True),        # an error before the true test does not matter
    ('?x IN (2, "a")', False),       # no true, one error: an error, the filter drops it
    ('?x NOT IN (2, "a")', False),   # !error is an error
    ('?x NOT IN (2, 3)', True),
    ('?x IN ()', False),
    ('?x NOT IN ()', True),
])
def test_in_is_a_disjunction_of_equals_with_errors(condition, kept):
    from cep.rules import parse_rules
    query, = parse_rules(f"PREFIX : <{EX}>\nSELECT ?x WHERE {{ ?s :q ?x FILTER ({condition}) }}")
    assert len(run(query, [ev("s1", "q", 1, 0)])) == (1 if kept else 0)


@pytest.mark.parametrize("no_foreign", [False, True])
def test_terms_beyond_ascii_cross_the_batch_unchanged(no_foreign):
    code = (
        "from tests.unit.test_engine import *\n"
        "q = select(ops.SeqJoin(bgp((k, 'a', x)), bgp((k, 'b', y))))\n"
        "events = [Event('<http://example.org/caf\u00e9>', iri('a'), '\"\u65e5\u672c \\\\\"q\\\\\"\"@ja', 1, 1),\n"
        "          Event('<http://example.org/caf\u00e9>', iri('b'), '\"\U0001F600\"', 2, 2),\n"
        "          Event('<http://example.org/x\\\\u0020y>', iri('a'), num(10**30), 3, 3),\n"
        "          Event('<http://example.org/x\\\\u0020y>', iri('b'), '\"-007\"^^<http://www.w3.org/2001/XMLSchema#integer>', 4, 4)]\n"
        "engine = Engine([q])\n"  # unchecked: an escaped space is refused by the check of pushed rows
        "for a in engine.push_table(events_table(events), checked=True).to_list() + engine.flush():\n"
        "    print(repr(sorted(a.bindings)))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, **({"CEP_NO_FOREIGN": "1"} if no_foreign else {}))
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [
        repr([("k", "<http://example.org/caf\u00e9>"), ("x", '"\u65e5\u672c \\"q\\""@ja'), ("y", '"\U0001F600"')]),
        # an IRI with an escaped space keeps its escape; literals their lexical form
        repr([("k", "<http://example.org/x\\u0020y>"), ("x", num(10**30)),
              ("y", '"-007"^^<http://www.w3.org/2001/XMLSchema#integer>')]),
    ]


@pytest.mark.parametrize("value", [2**63 - 1, 2**63, 10**19 - 1, -(2**63), -(2**63) - 1, -(10**19 - 1)])
def test_integers_of_nineteen_digits_cross_the_batch_unchanged(value):
    # the C decoder took 19 digits beyond 2^63 - 1 (9999999999999999999) for a
    # negative number (-8446744073709551617): an answer with another value
    q = select(ops.SeqJoin(bgp((k, 'a', x)), bgp((k, 'b', y))))
    answers = run(q, [ev("k1", "a", value, 1), ev("k1", "b", 1, 2)])
    assert [dict(a.bindings)["x"] for a in answers] == [num(value)]


def test_column_conversion_takes_the_fast_path_only_for_plain_iris_and_integers():
    import pyarrow as pa

    from cep.runtime.batch import column_text
    from cep.terms import TermError

    terms = [iri("a"), "<http://example.org/caf\u00e9>", "<http://example.org/x\\u0020y>", num(5), num(-5),
             '"+5"^^<http://www.w3.org/2001/XMLSchema#integer>', '"5"', '"\u0665"^^<http://www.w3.org/2001/XMLSchema#integer>']
    got = column_text(pa.array(terms)).to_pylist()
    assert got[0] == f"I{EX}a"
    assert got[1].startswith("P'http://example.org/caf\\xe9\\")
    assert got[2].startswith("P'http://example.org/x y'")
    assert got[3:5] == ["i5", "i-5"]
    assert got[5].startswith('Plv("+5"')  # another term than 5: its text kept
    assert got[6].startswith('P"5"')
    assert got[7].startswith("Pl(")  # an Arabic-Indic digit is no xsd:integer lexical form
    # a term that only starts like an IRI is not taken verbatim (terms.prolog_text judges it)
    with pytest.raises(TermError, match="malformed IRI"):
        column_text(pa.array([f"<{EX}a"]))
    # a column of few distinct terms is converted once per term
    many = pa.array([iri("a"), num(1)] * 100)
    assert column_text(many).to_pylist() == [f"I{EX}a", "i1"] * 100


def test_a_column_of_terms_is_dictionary_encoded_when_its_terms_repeat():
    import pyarrow as pa

    from cep.events import repeating

    assert repeating(pa.array([num(i) for i in range(10_000)])) is None  # a number in every row
    sensors = pa.array([iri(f"s{i % 1500}") for i in range(20_000)])  # in turn
    encoded = repeating(sensors)
    assert len(encoded.dictionary) == 1500 and encoded.dictionary.take(encoded.indices).equals(sensors)
    assert repeating(sensors, share=4) is None  # 1,500 of the 4,096 looked at are distinct: more than 1/4
    assert repeating(pa.array([num(i % 6000) for i in range(10_000)])) is None  # 60% distinct: not worth it
    assert repeating(pa.array([num(i % 500) for i in range(10_000)]), share=4) is not None


DECIMAL_FORMS = [
    "1.50", "-0.0", "+3", ".5", "5.", "-.5", "+.5", "007.50", "-007.50", "0", "-0", "+0.000", "000", "100.00",
    "-100.0", "0.2", "0.04", "0.008", "3.125", "12.34", "123456789.123456789", "12345678901234567.8",
    "123456789012345678", "-999999999999999999", "0.999999999999999999", "-0.000000000000000005",
    "1.000000000000000000000", "0000000000000000000000001.5",
    # beyond int64 arithmetic: the slow path, same text
    "1234567890123456789", "0.0000000000000000001", "999999999999999999.5", "1" * 60 + "." + "5" * 60,
    # no xsd:decimal lexical form: kept as l(Lexical, Datatype), or trimmed as the slow path does
    "1e2", "1.5e0", ".", "-", "+", "", "1.2.3", "1,5", "--1", "+-1", " 1.5", "1.5 ", "NaN", "INF", "0x10",
    "\u0661.\u0665", "\u00311.5",
]


def test_decimals_take_a_columnar_path_with_the_slow_paths_text():
    import random

    import pyarrow as pa

    from cep import terms
    from cep.runtime.batch import _decimals, column_text, field

    rng = random.Random(20260101)
    forms = list(DECIMAL_FORMS)
    for _ in range(3000):
        digits = [rng.choice("0123456789" if i % 3 else "0") for i in range(rng.randint(0, 24))]
        point = rng.randint(0, len(digits))
        forms.append(rng.choice(["", "-", "+"]) + "".join(digits[:point]) + rng.choice([".", ""]) + "".join(digits[point:]))
    column = [f'"{f}"^^<{terms.XSD_DECIMAL}>' for f in forms]
    slow = [field(t) for t in column]
    assert column_text(pa.array(column)).to_pylist() == slow
    assert column_text(pa.array(column[:500] * 40)).to_pylist() == slow[:500] * 40  # through the dictionary
    fast = _decimals(pa.array(column)).to_pylist()
    # the fast path takes the canonical forms only (another form is another term, l/2)
    taken = [f for f, x in zip(forms, fast) if x is not None and x.startswith("Pdec(")]
    assert all(terms.canonical_lexical(f, terms.XSD_DECIMAL) == f for f in taken)
    assert taken[:10] == [f for f in DECIMAL_FORMS[:28] if terms.canonical_lexical(f, terms.XSD_DECIMAL) == f]
    assert len(taken) > 40
    assert sum(x is not None for x in fast) > 2000  # and the other forms of a decimal, as lv/3
    # the fast path leaves the term cache alone: a stream of prices does not fill it
    before = terms.prolog_text.cache_info().currsize
    column_text(pa.array([f'"{rng.randint(0, 10**6)}.{rng.randint(0, 99):02d}"^^<{terms.XSD_DECIMAL}>'
                          for _ in range(500)]))
    assert terms.prolog_text.cache_info().currsize == before


def test_columnar_answers_give_a_table_per_query():
    import pyarrow as pa

    q1 = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))), name="pairs")
    q2 = select(bgp((k, "a", x)), name="as", projection=[x])
    engine = Engine([q1, q2])
    table = pa.table({"s": [iri("k1"), iri("k1"), iri("k2")], "p": [iri("a"), iri("b"), iri("b")],
                      "o": [num(1), num(2), num(3)], "start": [10, 20, 30]})
    batch = engine.push_table(table)
    assert len(batch) == 2  # the instant 30 is held back
    tables = batch.tables()
    assert tables["pairs"].column_names == ["start", "end", "k", "x", "y"]
    assert tables["pairs"].to_pylist() == [{"start": 10, "end": 20, "k": iri("k1"), "x": num(1), "y": num(2)}]
    assert tables["as"].to_pylist() == [{"start": 10, "end": 10, "x": num(1)}]
    assert len(engine.flush_table(final=False)) == 0
    assert [a.query for a in batch.to_list()] == ["as", "pairs"]


def test_the_answer_table_holds_bindings_as_a_map_and_triples_in_the_order_found():
    q1 = select(ops.SeqRightJoin(bgp((k, "b", y)), bgp((k, "a", x))), name="opt")
    q2 = ops.Query("made", "construct", bgp((k, "a", x)), template=(ops.Triple(k, iri("saw"), x),))
    engine = Engine([q1, q2])
    first = engine.push_table(events_table([ev("k1", "a", 1, 10), ev("k2", "b", 3, 15), ev("k2", "a", 2, 20),
                                            ev("k3", "a", 4, 40)]))
    last = engine.flush_table(final=True)
    table = pa.concat_tables([first.answers(), last.answers()])
    assert table.schema == ANSWERS
    found = pa.concat_arrays([first.table["q"].combine_chunks(), last.table["q"].combine_chunks()]).to_pylist()
    assert table["query"].to_pylist() == [engine.layouts[q].name for q in found]  # as found, not by query
    got = {(r["query"], r["start"], r["end"]): r for r in table.to_pylist()}
    assert sorted(got) == [("made", 10, 10), ("made", 20, 20), ("made", 40, 40),
                           ("opt", 10, 10), ("opt", 15, 20), ("opt", 40, 40)]
    assert sorted(got["opt", 10, 10]["bindings"]) == [("k", iri("k1")), ("x", num(1))]  # ?y unbound: left out
    assert sorted(got["opt", 15, 20]["bindings"]) == [("k", iri("k2")), ("x", num(2)), ("y", num(3))]
    assert got["opt", 10, 10]["triples"] is None and got["made", 20, 20]["bindings"] is None
    assert got["made", 20, 20]["triples"] == [{"s": iri("k2"), "p": iri("saw"), "o": num(2)}]
    assert first.to_list() == answers_of(first.answers())


def test_answer_lines_of_any_width_are_read(monkeypatch):
    """An answer line longer than Arrow's CSV block (at most 2 GiB: a
    SELECT of 40,000 expressions over long values) is read on its own.
    The block is made 1 MiB here, and the wide answers' lines 3 MB."""
    import cep.engine

    long = '"' + "a" * 100_000 + '"'
    exprs = tuple(ops.ProjectItem(ops.Var(f"v{i}"), ops.Call("concat", x, ops.Const(f'"{i}"'))) for i in range(30))
    wide = ops.Query("wide", "select", bgp((k, "a", x)), projection=exprs)
    narrow = select(bgp((k, "b", y)), name="narrow")
    events = [Event(iri(f"k{i}"), iri("a"), long, i, i) if i % 3 else ev(f"k{i}", "b", i, i) for i in range(9)]
    monkeypatch.setattr(cep.engine, "ANSWER_BLOCK", 1 << 20)
    got = run([wide, narrow], events)
    assert [a.query for a in got] == ["narrow", "wide", "wide"] * 3
    assert all(a.binding("v29") == long[:-1] + '29"' for a in got if a.query == "wide")
    assert [a.binding("y") for a in got if a.query == "narrow"] == [num(0), num(3), num(6)]


def test_left_only_parts_of_a_seq_filter_are_computed_once_per_goal():
    from cep import reference
    from cep.compile import compile_queries
    from cep.rules import parse_rules

    (q,) = parse_rules(f"""PREFIX : <{EX}>
        SELECT * WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }}
        FILTER (?y < ?x * 2 && ?y + ?x > 3 && getDURATION() < "PT0.01S"^^<{XSD}duration>)""")
    program = compile_queries([q]).program("m")
    insert = program.split("\ns2_l(")[1].split("fail.")[0]   # the goal-insertion rule
    check = program.split("\ns2_r(")[1].split("\n\n")[0]
    assert "cep_mul" in insert and "cep_mul" not in check.split("n2(")[0]  # ?x * 2 once per goal
    values = [num(1), num(3), f'"2.5"^^<{XSD}decimal>', '"x"', num(-4)]
    events = [Event(iri(f"k{i % 2}"), iri("a" if i % 3 else "b"), values[i % len(values)], i, i) for i in range(30)]
    engine = Engine([q])
    got = engine.push(events) + engine.flush()
    expected = reference.evaluate([q], events)
    assert sorted(got) == sorted(expected) and expected


def test_an_engine_continues_from_the_state_of_another():
    """Engine.state / restore (what the Spark engine keeps in its state
    store): a stream cut in two, the second half run by a new engine from
    the first's state, answers as one engine over the whole stream."""
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))))
    events = [ev(f"k{i % 3}", "a" if i % 2 else "b", i, i) for i in range(40)]
    whole = run(q, events)
    first = Engine([q])
    got = first.push(events[:20]) + first.flush()
    second = Engine([q])
    second.restore(first.state())
    got += second.push(events[20:]) + second.flush()
    assert len(whole) > 20 and reference.multiset(got) == reference.multiset(whole)


# A state restored in a process of its own: SWI-Prolog reads serialized
# terms unchecked, and bytes that are none abort the whole process
RESTORE = r"""
import sys
from cep.algebra import ops
from cep.engine import Engine
from cep.errors import EngineError
from cep.events import Event

EX = "http://example.org/"
k, x, y = ops.Var("k"), ops.Var("x"), ops.Var("y")
def query(p, q):
    return ops.Query("q", "select", ops.SeqJoin(ops.BGP((ops.Triple(k, f"<{EX}{p}>", x),)),
                                                ops.BGP((ops.Triple(k, f"<{EX}{q}>", y),))))
first = Engine([query("a", "b")])
first.push([Event(f"<{EX}k>", f"<{EX}a>", '"1"', 1, 1)])
first.flush_table(final=False)
state = first.state()
header, _, goals = state.partition(b"\n")
for name, bad, rules in [("damaged", header + b"\n" + goals[:len(goals) // 2] + b"xyz", ("a", "b")),
                         ("not a state", b'{"last": 1}\nxyz', ("a", "b")), ("garbage", b"xyz", ("a", "b")),
                         ("other rules", state, ("c", "d"))]:
    try:
        Engine([query(*rules)]).restore(bad)
        print(name, "restored")
    except EngineError as exc:
        print(name, "refused:", exc)
"""


def test_a_state_of_other_rules_or_damaged_is_refused_not_a_crash():
    proc = subprocess.run([sys.executable, "-c", RESTORE], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == [
        "damaged refused: Engine.restore: the state is damaged (its checksum differs)",
        "not a state refused: Engine.restore: not a state of an engine (Engine.state()) of this version",
        "garbage refused: Engine.restore: not a state of an engine (Engine.state()) of this version",
        "other rules refused: Engine.restore: a state of an engine of other rules"]


def test_advancing_event_time_prunes_goals_past_their_window():
    """Engine.advance (a watermark with no event): goals are dropped once
    their window has passed, and answers are those of the stream as if
    nothing had been advanced; without a window the goals stay."""
    from cep.rules import parse_rules

    text = f"""PREFIX : <{EX}>
        SELECT * WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT1S"^^<{XSD}duration>)"""
    events = [ev(f"k{i % 3}", "a", i, 10 * i) for i in range(10)]
    later = [ev("k0", "b", 1, 500), ev("k1", "b", 2, 5_000)]
    engine = Engine(parse_rules(text))
    got = engine.push(events) + engine.flush()
    assert engine.advance(400) is True  # still inside the window of the :a goals
    got += engine.push(later[:1]) + engine.flush()
    assert engine.advance(4_000) is False  # past every window: nothing pending
    got += engine.push(later[1:]) + engine.flush()
    assert reference.multiset(got) == reference.multiset(run(engine.compiled.queries[0], events + later))
    assert len(got) == 4  # k0's :a events at 0, 30, 60, 90 ms each meet the :b at 500 ms

    unbounded = Engine(parse_rules(text.split(" FILTER")[0]))
    unbounded.push(events)
    unbounded.flush()
    assert unbounded.advance(10**12) is True


def test_a_terms_field_does_not_depend_on_the_other_terms_of_its_column():
    """column_text looks only for the shapes a column's terms have (a
    column of numbers skips the IRIs' checks): each term of any mixture
    gets the field it gets alone."""
    import random

    import pyarrow as pa

    from cep.runtime.batch import column_text

    xsd = "http://www.w3.org/2001/XMLSchema#"
    terms = [iri("a"), "<http://example.org/caf\u00e9>", num(5), num(-5), num(0), f'"07"^^<{xsd}integer>',
             '"5"', '"a\\"b"', '"chat"@fr', f'"2.50"^^<{xsd}decimal>', f'"-0.5"^^<{xsd}decimal>', "_:b1",
             f'"2026-01-01T00:00:00Z"^^<{xsd}dateTime>']
    alone = {t: column_text(pa.array([t])).to_pylist()[0] for t in terms}
    rng = random.Random(5)
    for _ in range(200):
        pool = rng.sample(terms, rng.randint(1, 4))  # a few shapes, one alone at times
        column = [rng.choice(pool) for _ in range(rng.randint(1, 8))]
        assert column_text(pa.array(column)).to_pylist() == [alone[t] for t in column], column


MALFORMED = [  # (event, why it is set aside)
    (Event(iri("k9"), iri("a"), num(9), 2**70, 2**70), "its times are not epoch milliseconds"),
    (Event(iri("k9"), iri("a"), num(9), True, 25), "its times are not epoch milliseconds"),
    (Event(iri("k9"), iri("a"), num(9), 30, 25), "end is before start"),
    (Event("k9", iri("a"), num(9), 25, 25), "column s: not an N-Triples term"),
    (Event(iri("k9"), iri("a"), '"9\n', 25, 25), "column o: malformed literal"),
]


@pytest.mark.parametrize("bad, why", MALFORMED, ids=["beyond-64-bits", "bool", "end-before-start", "term", "literal"])
def test_a_malformed_pushed_event_is_set_aside_and_the_stream_goes_on(bad, why):
    """A malformed event pushed into the engine is reported in `rejects`
    and the rest of the stream answers as without it: the instant held
    back before it and the events beside it are not lost."""
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))))
    good = [[ev("k1", "a", 1, 10)], [ev("k1", "b", 2, 20), ev("k2", "a", 3, 25)], [ev("k2", "b", 4, 40)]]
    expected = rows(run(q, [e for batch in good for e in batch]))
    assert expected == [(10, 20, {"k": "k1", "x": 1, "y": 2}), (25, 40, {"k": "k2", "x": 3, "y": 4})]
    engine = Engine([q])
    got = engine.push(good[0]) + engine.push([bad] + good[1]) + engine.push(good[2]) + engine.flush()
    assert rows(got) == expected
    assert [(r.source, r.reason.startswith(why)) for r in engine.rejects] == [("row 0 of the pushed events", True)]


def test_a_malformed_row_of_a_pushed_table_is_set_aside_and_named_by_its_source():
    q = select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))))
    engine = Engine([q])
    first = engine.push_table(events_table([ev("k1", "a", 1, 10)]))
    table = events_table([ev("k1", "b", 2, 20), Event(iri("k2"), iri("a"), "<bad iri>", 25, 25, "in.nt:7"),
                          ev("k2", "a", 3, 25), ev("k2", "b", 4, 40)])
    got = first.to_list() + engine.push_table(table).to_list() + engine.flush()
    assert rows(got) == [(10, 20, {"k": "k1", "x": 1, "y": 2}), (25, 40, {"k": "k2", "x": 3, "y": 4})]
    assert [(r.source, r.text) for r in engine.rejects] == [("in.nt:7", f"{iri('k2')} {iri('a')} <bad iri> 25 25")]


def test_rejects_of_push_and_of_push_table_read_alike():
    """push sets aside an event whose times are not integers, push_table a
    row its check refuses: both name the row and show s p o start end."""
    engine = Engine([select(bgp((k, "a", x)))])
    engine.push([ev("k1", "a", 1, 10), Event(iri("k2"), iri("a"), num(2), "20", 20)])
    engine.push_table(events_table([Event(iri("k3"), iri("a"), num(3), 30, 25)]))
    assert [(r.source, r.text) for r in engine.rejects] == [
        ("row 1 of the pushed events", f"{iri('k2')} {iri('a')} {num(2)} '20' 20"),
        ("row 0 of the pushed events", f"{iri('k3')} {iri('a')} {num(3)} 30 25")]


def test_a_checked_table_with_a_row_without_a_time_is_an_error():
    """push_table(checked=True) takes rows that were checked: one without
    an end time breaks that, and is a clear error, not a row dropped in
    silence; the instant held back before it is kept."""
    engine = Engine([select(ops.SeqJoin(bgp((k, "a", x)), bgp((k, "b", y))))])
    engine.push([ev("k1", "a", 1, 10)])
    table = events_table([ev("k1", "b", 2, 20), ev("k1", "b", 3, 30)])
    no_end = table.set_column(4, "end", pa.array([20, None], pa.int64()))
    with pytest.raises(ValueError, match=r"row 1 has no start or end time"):
        engine.push_table(no_end, checked=True)
    got = engine.push_table(table, checked=True).to_list() + engine.flush()
    assert rows(got) == [(10, 20, {"k": "k1", "x": 1, "y": 2}), (10, 30, {"k": "k1", "x": 1, "y": 3})]


def pushed(columns: dict):
    """The rows of a table of these columns pushed into an engine of
    `?k :a ?x`: (its rows, its rejects' reasons)."""
    engine = Engine([select(bgp((k, "a", x)))])
    got = engine.push_table(pa.table(columns)).to_list() + engine.flush()
    return rows(got), [(r.source, r.reason) for r in engine.rejects]


T = 1_767_225_600_000  # 2026-01-01T00:00:00Z
KS, AS, XS = [iri("k1"), iri("k2")], [iri("a")] * 2, [num(1), num(2)]
WANT = [(T, T, {"k": "k1", "x": 1}), (T + 1, T + 1, {"k": "k2", "x": 2})]


@pytest.mark.parametrize("columns", [
    {"s": pa.array(KS).dictionary_encode(), "p": pa.array(AS, pa.large_string()), "o": pa.array(XS, pa.string_view()),
     "start": pa.array([T, T + 1], pa.int64())},
    {"s": pa.array([t.encode() for t in KS], pa.binary()), "p": AS, "o": XS, "start": pa.array([T, T + 1], pa.uint64())},
    {"s": KS, "p": AS, "o": XS, "start": pa.array([T, T + 1], pa.float64())},
    {"s": KS, "p": AS, "o": XS, "start": pa.array([T * 1000, T * 1000 + 1999], pa.timestamp("us", tz="UTC"))},
    {"s": KS, "p": AS, "o": XS, "start": pa.array([T * 10**6, T * 10**6 + 10**6], pa.timestamp("ns"))},
    {"s": KS, "p": AS, "o": XS, "start": pa.array([T, T + 1], pa.timestamp("ms", tz="+05:00"))},
], ids=["dictionary-large-view", "binary-uint64", "float", "timestamp-us", "timestamp-ns", "timestamp-ms-zone"])
def test_a_pushed_table_of_other_arrow_types_gives_its_values(columns):
    """Text as dictionary, large, view or UTF-8 bytes; times as any
    integer, floats of integer value, or timestamps (the instant, in epoch
    milliseconds, floored: a timestamp column's raw numbers are in its
    unit, and seconds were taken for milliseconds, nanoseconds refused)."""
    assert pushed(columns) == (WANT, [])


def test_a_pushed_timestamp_in_seconds_or_a_date_is_its_instant():
    got, rejects = pushed({"s": KS, "p": AS, "o": XS,
                           "start": pa.array([T // 1000, T // 1000 + 86_400], pa.timestamp("s"))})
    assert [r[0] for r in got] == [T, T + 86_400_000] and rejects == []
    got, _ = pushed({"s": KS[:1], "p": AS[:1], "o": XS[:1], "start": pa.array([20454], pa.date32())})  # 2026-01-01
    assert [r[0] for r in got] == [T]


def test_a_pushed_value_no_event_can_have_is_a_reject_naming_it():
    got, rejects = pushed({"s": pa.array([KS[0].encode(), b"<http://example.org/\xff>", KS[1].encode()]),
                           "p": [iri("a")] * 3, "o": [num(1), num(5), num(2)],
                           "start": pa.array([T, T, T + 1.5]), "end": pa.array([T, T, T + 1.5])})
    assert got == WANT[:1]
    assert rejects == [("row 1 of the pushed events", "column s is not UTF-8 text"),
                       ("row 2 of the pushed events",
                        f"start is {T + 1.5!r}, not epoch milliseconds, an integer of 64 bits")]
    got, rejects = pushed({"s": KS, "p": AS, "o": XS, "start": pa.array([T, 2**64 - 1], pa.uint64())})
    assert got == WANT[:1] and [r for _, r in rejects] == [
        f"start is {2**64 - 1}, not epoch milliseconds, an integer of 64 bits"]


@pytest.mark.parametrize("columns, error", [
    ({"s": pa.array([[t] for t in KS]), "p": AS, "o": XS, "start": [T, T]}, "column s is list<item: string>, not text"),
    ({"s": KS, "p": AS, "o": pa.array([{"v": 1}, {"v": 2}]), "start": [T, T]}, "column o is struct<v: int64>"),
    ({"s": KS, "p": AS, "o": XS, "start": ["1", "2"]}, "column start is string, not times"),
    ({"s": KS, "p": AS, "start": [T, T]}, "the table has no column o"),
], ids=["list", "struct", "text-times", "no-object"])
def test_a_pushed_table_whose_columns_cannot_hold_events_is_a_clear_error(columns, error):
    with pytest.raises((TypeError, ValueError), match=error.replace("[", r"\[")):
        pushed(columns)


def test_a_pushed_table_of_no_rows_of_any_type_gives_nothing():
    assert pushed({name: pa.array([]) for name in ("s", "p", "o", "start", "end")}) == ([], [])


@pytest.mark.parametrize("bad, why", [
    (Event(iri("k2"), iri("a"), 7, T + 1, T + 1), "its o is int, not text"),
    (Event(iri("k2").encode(), iri("a"), num(2), T + 1, T + 1), "its s is bytes, not text"),
    (Event(iri("k2"), iri("a"), ["x"], T + 1, T + 1), "its o is list, not text"),
    (Event(iri("k2"), iri("a"), num(2), T + 1, T + 1, source=9), "its source is int, not text"),
    (Event(iri("k2"), iri("a"), num(2), T + 1, T + 1, stream=3), "its stream is int, not text"),
    (Event(iri("k2"), iri("a"), '"\ud800"', T + 1, T + 1), "its o is not Unicode text: it holds a lone surrogate"),
], ids=["int", "bytes", "list", "source", "stream", "surrogate"])
def test_a_pushed_event_whose_fields_are_no_text_is_a_reject_not_a_traceback(bad, why):
    """Event's fields are typed text; push is given anything Python holds:
    what no events table can hold is set aside, the rest goes on."""
    engine = Engine([select(bgp((k, "a", x)))])
    got = engine.push([ev("k1", "a", 1, T), bad]) + engine.flush()
    assert rows(got) == WANT[:1]
    assert [(r.source, r.reason) for r in engine.rejects] == [("row 1 of the pushed events", why)]
