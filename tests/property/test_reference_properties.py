"""Properties of the reference evaluator itself (no engine needed).

Timewise monotonicity (paper, section 4.2): answers over a time prefix of
the stream must stay answers when later events arrive. What holds for the
definitions as the reference implements them:

- prefixes by END time: for every operator, the answers over the events that
  end before t are exactly the answers over the whole stream that end before
  t (a solution's interval ends at the latest end of the events it uses, and
  every optional operator only looks for partners that end no later than the
  mandatory part). So answers are final once their end time has passed,
  which is what an engine processing events in end-time order needs.
- a prefix is the events that end before t with event time at t (until=t):
  NOTSEQ gives an answer once its deadline is before t, as the engine
  does when time passes it; the whole stream is then taken with time far
  past its end (LATE), where every deadline has passed.
- prefixes by START time: monotone for point events (start = end), and for
  every query without LeftJoin / EqLeftJoin; with those two operators and
  events that last, a later-starting event can end inside the mandatory part's
  interval and take its unmatched answer away (counterexamples in
  tests/unit/test_reference.py).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cep import reference
from cep.algebra import ops
from cep.algebra.bags import PREFIX as ALT_PREFIX
from tests.property.strategies import (
    MAX_TIME, WITHOUT_LEFT_JOINS, examples, multiset, note_case, operator_queries, patterns, queries, seeded,
    streams,
)

SETTINGS = settings(
    max_examples=examples(200),
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TIMES = st.integers(0, MAX_TIME + 6)
LATE = MAX_TIME + 100  # after every event and every deadline of the streams
ANY_QUERY = st.one_of(queries(), operator_queries())


def answers(query, events, until=LATE):
    return multiset(reference.evaluate([query], events, until=until))


def included(small, large) -> bool:
    return not (small - large)


@seeded
@SETTINGS
@given(query=ANY_QUERY, events=streams(), t=TIMES)
def test_end_time_prefix_gives_exactly_the_answers_ending_before(query, events, t):
    note_case(query, events)
    prefix = answers(query, [e for e in events if e.end < t], until=t)
    whole = reference.evaluate([query], events, until=LATE)
    assert prefix == multiset(a for a in whole if a.end < t)


@seeded
@SETTINGS
@given(query=ANY_QUERY, events=streams(), t1=TIMES, t2=TIMES)
def test_end_time_prefixes_are_monotone(query, events, t1, t2):
    note_case(query, events)
    t1, t2 = min(t1, t2), max(t1, t2)
    assert included(answers(query, [e for e in events if e.end < t1], until=t1),
                    answers(query, [e for e in events if e.end < t2], until=t2))


@seeded
@SETTINGS
@given(query=ANY_QUERY, events=streams(intervals=False), t=TIMES)
def test_start_time_prefixes_are_monotone_for_point_events(query, events, t):
    note_case(query, events)
    assert included(answers(query, [e for e in events if e.start < t], until=t), answers(query, events))


@seeded
@SETTINGS
@given(query=st.one_of(queries(operators=WITHOUT_LEFT_JOINS), operator_queries(WITHOUT_LEFT_JOINS)),
       events=streams(), t=TIMES)
def test_start_time_prefixes_are_monotone_without_leftjoin_and_eqleftjoin(query, events, t):
    note_case(query, events)
    assert included(answers(query, [e for e in events if e.start < t]), answers(query, events))


# ------------------------------------------------------------- algebra laws


@seeded
@SETTINGS
@given(left=patterns(2), right=patterns(2), events=streams())
def test_temporal_joins_are_joins_restricted_by_time(left, right, events):
    def solutions(op):
        return visible(reference.solutions(op, events))
    join, seq, eq = solutions(ops.Join(left, right)), solutions(ops.SeqJoin(left, right)), solutions(ops.EqJoin(left, right))
    assert join == solutions(ops.Join(right, left))
    assert solutions(ops.Union_(left, right)) == solutions(ops.Union_(right, left))
    assert seq <= join and eq <= join
    assert eq == solutions(ops.EqJoin(right, left))
    lefts, rights = solutions(left), solutions(right)
    assert seq == {reference.merge(a, b) for a in lefts for b in rights
                   if reference.compatible(a, b) and a[2] < b[1]}


def visible(solutions) -> set:
    """The solutions without the hidden variables of UNION and VALUES
    (cep.algebra.bags), which are named by the operator's place in the
    query: the same pattern at another place binds other ones."""
    return {(frozenset((k, v) for k, v in mu if not k.startswith(ALT_PREFIX)), ts, te) for mu, ts, te in solutions}


@seeded
@SETTINGS
@given(mandatory=patterns(2), optional=patterns(2), events=streams())
def test_optional_operators_extend_or_keep_every_mandatory_solution(mandatory, optional, events):
    """Every solution of an optional operator is a mandatory solution or a
    merge with it; every mandatory solution is kept or extended."""
    base = visible(reference.solutions(mandatory, events))
    for op in (ops.LeftJoin(mandatory, optional), ops.EqLeftJoin(mandatory, optional),
               ops.SeqRightJoin(optional, mandatory)):
        result = visible(reference.solutions(op, events))
        for mu, ts, te in base:
            assert any(dict(mu).items() <= dict(m2).items() and te == te2 and ts2 <= ts
                       for m2, ts2, te2 in result), (op, (mu, ts, te))
        for mu, ts, te in result:
            assert any(dict(m1).items() <= dict(mu).items() and te1 == te for m1, _, te1 in base)


@seeded
@SETTINGS
@given(query=queries(), events=streams(max_events=6), data=st.data())
def test_simultaneous_stream_is_plain_sparql_without_temporal_operators(query, events, data):
    """Downward compatibility (section 4.2): with every event at one time
    stamp, SEQ finds nothing, EQUALS is a join, and every solution has the
    interval [t, t]."""
    t = data.draw(st.integers(0, MAX_TIME), label="t")
    flat = [e.__class__(e.s, e.p, e.o, t, t) for e in events]
    absence = _uses_absence(query.pattern)  # a NOTSEQ answer ends at its deadline, after t
    for mu, ts, te in reference.solutions(query.pattern, flat):
        assert (ts, te) == (t, t) or absence
    if isinstance(query.pattern, ops.SeqJoin):
        assert reference.solutions(query.pattern, flat) == set()
    if isinstance(query.pattern, ops.EqJoin) and not absence:  # a NOTSEQ answer lasts to its deadline
        p = query.pattern
        assert reference.solutions(p, flat) == reference.solutions(ops.Join(p.left, p.right), flat)


def _uses_absence(op) -> bool:
    return isinstance(op, ops.SeqAbsence) or any(_uses_absence(c) for c in ops.children(op))
