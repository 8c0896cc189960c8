"""Windows of infinite width, [RANGE UNBOUNDED STEP d START t0]
(docs/language.md, "Windows of infinite width"): everything from t0 to
each close, on both the engine and the reference (checked_answers
compares them); a grouped query's state does not grow with the stream;
what is refused."""

import pytest

from cep.engine import Engine
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from tests.unit.test_report_policies import SPARSE
from tests.unit.test_windows import INT, MIN, PREFIX, run, table

EPOCH = '"1970-01-01T00:00:00Z"'
GROUPED = f"""SELECT ?c (COUNT(*) AS ?n) (MAX(?p) AS ?m)
FROM STREAM <http://e/s> [RANGE UNBOUNDED STEP 20m START {EPOCH}]
WHERE {{ ?c :price ?p }} GROUP BY ?c"""


def test_everything_from_the_start_to_each_close():
    # acme 1 at 10, 2 at 12, 3 at 50; closes 20, 40, 60 (the first at or after 50, the last instant)
    assert table(run(GROUPED, SPARSE), "c", "n", "m") == [
        (0, 20, "acme", "2", "2"), (0, 40, "acme", "2", "2"), (0, 60, "acme", "3", "3")]


def test_a_plain_query_keeps_every_solution():
    answers = run(f"""SELECT ?p FROM STREAM <http://e/s> [RANGE UNBOUNDED STEP 30m START {EPOCH}]
WHERE {{ ?c :price ?p }}""", SPARSE)
    assert sorted((a.end // MIN, a.binding("p").split('"')[1]) for a in answers) == [
        (30, "1"), (30, "2"), (60, "1"), (60, "2"), (60, "3")]


def test_a_grouped_query_holds_a_pane_per_group_not_the_stream():
    engine = Engine(parse_rules(PREFIX + GROUPED))

    def price(i):  # three companies, one price a minute
        return Event(f"<http://e/c{i % 3}>", "<http://e/price>", f'"{i}"^^{INT}', i * MIN, i * MIN)

    sizes = []
    for chunk in range(4):
        engine.push([price(i) for i in range(chunk * 300, chunk * 300 + 300)])
        engine.flush_table(final=False)
        state = engine.state()
        # a folded pane per company, and those of the 20 minutes since the last close
        assert state.count(b"$wpart") <= 3 + 3 and state.count(b"$wsol") <= 20
        sizes.append(len(state))
    assert max(sizes) - min(sizes) < 200, sizes  # flat: not 300 events' worth more per chunk


@pytest.mark.parametrize("window, message", [
    (f"RANGE UNBOUNDED TUMBLING START {EPOCH}", r"q\.rq:2:\d+: a window of infinite width does not tumble"),
    ("RANGE UNBOUNDED STEP 1m", r"q\.rq:2:\d+: RANGE UNBOUNDED holds everything from the window's start t0"),
])
def test_unbounded_refused(window, message):
    with pytest.raises(QueryError, match=message):
        parse_rules(PREFIX + f"SELECT ?c FROM STREAM <http://e/s> [{window}] WHERE {{ ?c :price ?p }}", "q.rq")


FED = """PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
REGISTER STREAM producer AS CONSTRUCT { :fed :fedp ?x } FROM STREAM <http://example.org/s>
  [RANGE UNBOUNDED STEP 3ms START "1969-12-31T23:59:59.998Z"^^xsd:dateTime REPORT EVERY 2ms] WHERE { :s1 :p ?x }
"""


def fed_run(consumer):
    """The producer above and a consumer of its triples, over :s1 :p 0 at
    0 and 2 ms: the engine's answers, checked equal to the reference's."""
    from cep import reference

    rules = parse_rules(FED + consumer)
    zero = '"0"^^<http://www.w3.org/2001/XMLSchema#integer>'
    events = [Event("<http://example.org/s1>", "<http://example.org/p>", zero, t, t) for t in (0, 2)]
    engine = Engine(rules)
    got = engine.push(events) + engine.flush()
    assert sorted((a.query, a.start, a.end) for a in got) == \
        sorted((a.query, a.start, a.end) for a in reference.evaluate(rules, events))
    return got


def test_an_unbounded_window_evaluated_off_its_step_and_fed_back_ends_where_the_reference_does():
    # t0 = -2 ms: closes every 3 ms from 1 (1, 4, 7), evaluations every 2 ms
    # from 1 (1, 3, 5, 7). The stream's last instant is 2: the first close at
    # or after it is 4, the first evaluation at or after that 5, whose window
    # (-2, 4] holds the whole stream. So the producer reports at 1, 3 and 5,
    # and stops. Its triple fed back at 5 is a result of that evaluation, not
    # a solution of its own window (its pattern does not read it; a cycle
    # through a window is refused): counting it as the stream's last instant
    # would have the window's own output extend its evaluations (to 7 here;
    # with a step and a period of 1h and 59m, by hours), which no bounded
    # window does either (it stops when its windows hold none of its solutions).
    got = fed_run("REGISTER QUERY consumer AS SELECT * WHERE { :fed :fedp ?f } SEQ { ?s :p ?x }\n")
    assert sorted(a.end for a in got if a.query == "producer") == [1, 3, 5]
    # a fed triple at 1 or 3 before the event at 2: only the one at 1 is followed
    assert [(a.start, a.end) for a in got if a.query == "consumer"] == [(1, 2)]


def test_an_unbounded_window_reads_the_triples_fed_back_after_the_last_instant():
    # The consumer's window holds the producer's triples, fed at 1, 3 and 5:
    # the one at 5 comes after the stream's last instant (2) but is one of
    # the consumer's solutions, so the consumer is evaluated until a window
    # holds it, as a bounded window reports every solution it holds: its
    # closes 1, 4, 7 count 1, 2 and 3 triples.
    got = fed_run("""REGISTER QUERY consumer AS SELECT (COUNT(*) AS ?n) FROM STREAM <http://example.org/s>
  [RANGE UNBOUNDED STEP 3ms START "1969-12-31T23:59:59.998Z"^^xsd:dateTime] WHERE { :fed :fedp ?f }
""")
    assert sorted((a.end, a.binding("n").split('"')[1]) for a in got if a.query == "consumer") == [
        (1, "1"), (4, "2"), (7, "3")]
