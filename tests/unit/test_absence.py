"""NOTSEQ, absence by a deadline (docs/language.md, "NOTSEQ"): hand-checked
cases, each also compared with the reference evaluator."""

import pytest

from cep import reference
from cep.engine import Engine
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.support import checked_answers

EX = "http://example.org/"
M = 60_000  # a minute, in ms
PREFIX = f"PREFIX : <{EX}>\n"
UNCONFIRMED = PREFIX + """SELECT ?order WHERE
  { ?order :committed ?t } NOTSEQ "PT10M" { ?order :confirmed ?c }"""


def ev(s, p, minute, o=1):
    return Event(f"<{EX}{s}>", f"<{EX}{p}>", f'"{o}"^^<http://www.w3.org/2001/XMLSchema#integer>',
                 minute * M, minute * M)


def rows(answers):
    return sorted((dict(a.bindings)["order"].rsplit("/", 1)[1][:-1], a.start // M, a.end // M) for a in answers)


def test_the_issue_case_fires_from_the_passage_of_event_time():
    """In time: no answer; late: an answer at commit + 10m; never
    confirmed: an answer as soon as an event of another order passes the
    deadline."""
    queries = parse_rules(UNCONFIRMED, "t.rq")
    events = [ev("o1", "committed", 0), ev("o1", "confirmed", 5),    # in time
              ev("o2", "committed", 1), ev("o2", "confirmed", 12),   # late
              ev("o3", "committed", 2),                              # never
              ev("o9", "other", 13), ev("o9", "other", 14)]
    engine = Engine(queries)
    # o3's deadline (0:12) passes when the event of o9 at 0:13 is processed
    # (push holds back its last instant, 0:14, until later events or flush)
    first = engine.push(events)
    assert rows(first) == [("o2", 1, 11), ("o3", 2, 12)]
    assert engine.flush() == []
    assert rows(checked_answers(queries, events)) == [("o2", 1, 11), ("o3", 2, 12)]


def test_a_confirmation_at_the_deadline_is_in_time_one_at_the_commit_is_not():
    queries = parse_rules(UNCONFIRMED, "t.rq")
    events = [ev("o1", "committed", 0), ev("o1", "confirmed", 10),   # e2 = e1 + d: in time
              ev("o2", "committed", 1), ev("o2", "confirmed", 1),    # e1 = s2: not after the commit
              ev("o9", "other", 20)]
    assert rows(checked_answers(queries, events)) == [("o2", 1, 11)]


def test_the_right_groups_filter_decides_what_counts():
    queries = parse_rules(PREFIX + """SELECT ?order WHERE
      { ?order :committed ?t } NOTSEQ "PT10M" { ?order :confirmed ?c FILTER (?c > ?t) }""", "t.rq")
    events = [ev("o1", "committed", 0, o=5), ev("o1", "confirmed", 3, o=4),   # filtered out
              ev("o2", "committed", 0, o=5), ev("o2", "confirmed", 3, o=6),   # counts
              ev("o9", "other", 20)]
    assert rows(checked_answers(queries, events)) == [("o1", 0, 10)]


def test_notseq_nested_as_the_left_operand_of_a_seq():
    """An order not confirmed in time, then cancelled: the SEQ starts
    after the absence answer ends (its deadline)."""
    queries = parse_rules(PREFIX + """SELECT ?order WHERE {
      { { ?order :committed ?t } NOTSEQ "PT10M" { ?order :confirmed ?c } }
      SEQ { ?order :cancelled ?x } }""", "t.rq")
    events = [ev("o1", "committed", 0), ev("o1", "cancelled", 5), ev("o1", "cancelled", 11),
              ev("o2", "committed", 0), ev("o2", "cancelled", 10),            # at the deadline: not after
              ev("o3", "committed", 0), ev("o3", "confirmed", 4), ev("o3", "cancelled", 12)]
    assert rows(checked_answers(queries, events)) == [("o1", 0, 11)]


def test_close_windows_fires_a_deadline_with_no_event():
    queries = parse_rules(UNCONFIRMED, "t.rq")
    engine = Engine(queries)
    assert engine.push([ev("o1", "committed", 0)]) == []
    assert engine.flush_table(final=False).to_list() == []
    assert engine.close_windows(10 * M).to_list() == []           # event time at 0:10: not past it
    assert rows(engine.close_windows(10 * M + 1).to_list()) == [("o1", 0, 10)]
    assert engine.close_windows(20 * M).to_list() == []           # fired once
    expected = reference.evaluate(queries, [ev("o1", "committed", 0)], until=10 * M + 1)
    assert rows(expected) == [("o1", 0, 10)]


def test_state_and_restore_keep_the_pending_deadlines():
    queries = parse_rules(UNCONFIRMED, "t.rq")
    first = Engine(queries)
    first.push([ev("o1", "committed", 0), ev("o2", "committed", 1)])
    first.flush_table(final=False)
    state = first.state()
    second = Engine(queries)
    second.restore(state)
    later = [ev("o2", "confirmed", 5), ev("o9", "other", 30)]
    got = second.push(later) + second.flush()
    assert rows(got) == [("o1", 0, 10)]
    whole = [ev("o1", "committed", 0), ev("o2", "committed", 1)] + later
    assert rows(checked_answers(queries, whole)) == rows(got)


def test_at_the_end_of_the_stream_every_deadline_fires():
    queries = parse_rules(UNCONFIRMED, "t.rq")
    events = [ev("o1", "committed", 0), ev("o2", "committed", 5), ev("o9", "other", 10)]
    # o1's deadline is the last event's time; o2's is after it: the stream
    # has ended, nothing can confirm o2 any more
    assert rows(checked_answers(queries, events)) == [("o1", 0, 10), ("o2", 5, 15)]
    # with event time known only to have reached 10:10, o2's deadline has not passed
    engine = Engine(queries)
    engine.push(events)
    got = engine.flush_table(final=False).to_list() + engine.close_windows(10 * M + 1).to_list()
    assert rows(got) == [("o1", 0, 10)]


def test_a_pending_solution_is_dropped_once_fired_or_cancelled():
    queries = parse_rules(UNCONFIRMED, "t.rq")
    engine = Engine(queries)
    engine.push([ev("o1", "committed", 0), ev("o2", "committed", 0), ev("o2", "confirmed", 1),
                 ev("o9", "other", 30)])
    engine.flush()
    assert not engine.advance(31 * M)  # no partial match left


def test_notseq_makes_its_spark_groups_wake_on_event_time():
    from cep.spark import routing

    assert [routing.timed(q) for q in parse_rules(UNCONFIRMED, "t.rq")] == [True]
    assert not routing.timed(parse_rules(PREFIX + "SELECT ?o WHERE { ?o :committed ?t }", "u.rq")[0])


def test_notseq_with_rule_chaining_is_refused_for_now():
    text = PREFIX + """REGISTER STREAM late AS CONSTRUCT { ?order :late ?t } WHERE
      { ?order :committed ?t } NOTSEQ "PT10M" { ?order :confirmed ?c }
    REGISTER QUERY lates AS SELECT ?order WHERE { ?order :late ?t }"""
    with pytest.raises(QueryError, match="NOTSEQ in a rule set with rule chaining"):
        Engine(parse_rules(text, "t.rq"))


@pytest.mark.parametrize("policy", ["recent", "chronological"])
def test_a_policy_does_not_consume_the_confirmation(policy):
    """Under a consumption policy the steps of the left part consume, those
    of the confirmation do not: the confirmation of two events at the
    deadline (3 ms) cancels it, as without a policy (the property tests
    found it firing under `recent`: the confirmation's join had consumed)."""
    rules = PREFIX + f"""@policy {policy}
        SELECT * WHERE {{ ?s :p ?x . {{ {{ ?s :p ?x }} SEQ {{ ?s :p ?x }} }} NOTSEQ "PT0.001S"
                                    {{ ?s :q ?x . :s2 :q ?x }} }}"""
    zero = '"0"^^<http://www.w3.org/2001/XMLSchema#integer>'
    events = [Event(f"<{EX}{s}>", f"<{EX}{p}>", zero, t, t)
              for s, p, t in (("s1", "p", 0), ("s1", "p", 2), ("s1", "q", 3), ("s2", "q", 3))]
    engine = Engine(parse_rules(rules, "x.rq"))
    assert engine.push(events) + engine.flush() == []
    assert reference.evaluate(parse_rules(rules.replace(f"@policy {policy}", ""), "x.rq"), events) == []


def test_flush_table_says_whether_the_stream_ended():
    """A flush_table that does not say `final` is refused: with a default
    of "more may come", a caller that meant the end of the stream lost
    the deadlines that end fires."""
    engine = Engine(parse_rules(UNCONFIRMED, "t.rq"))
    engine.push([ev("o1", "committed", 0)])
    with pytest.raises(TypeError):
        engine.flush_table()
    assert rows(engine.flush_table(final=True).to_list()) == [("o1", 0, 10)]
