"""Empty windows (docs/language.md, "Empty windows"): aggregates without
GROUP BY give a row at every evaluation, an empty window's too (COUNT 0),
on both the engine and the reference (checked_answers compares them);
which evaluations happen in a gap, before the first event and at the end;
the cap on a long gap; the Spark group that keeps such a query."""

from cep.engine import Engine
from cep.events import Event
from cep.rules import parse_rules
from cep.spark import routing
from tests.unit.test_windows import INT, MIN, PREFIX, price, run, table

SECOND = 1000
COUNT = "SELECT (COUNT(*) AS ?n) (SUM(?p) AS ?s) (AVG(?p) AS ?a) (MIN(?p) AS ?lo) FROM STREAM <http://e/s> [{}] " \
        "WHERE {{ ?c :price ?p }}"


def test_a_gap_between_events_gives_a_zero_row_at_each_evaluation():
    got = run(COUNT.format("RANGE 30m STEP 15m"), [price("acme", 10, 5), price("acme", 20, 80)])
    # from 15 (the first evaluation at or after 5) to 120, whose window
    # (90, 120] is the first past 80; (-15, 15] and (0, 30] hold 10, (60, 90]
    # and (75, 105] hold 20, the others are empty: COUNT 0, SUM 0, AVG 0, MIN unbound
    assert table(got, "n", "s", "a", "lo") == [
        (-15, 15, "1", "10", "10.0", "10"), (0, 30, "1", "10", "10.0", "10"),
        (15, 45, "0", "0", "0", None), (30, 60, "0", "0", "0", None), (45, 75, "0", "0", "0", None),
        (60, 90, "1", "20", "20.0", "20"), (75, 105, "1", "20", "20.0", "20"), (90, 120, "0", "0", "0", None)]


def test_a_window_whose_events_match_nothing_is_empty():
    other = Event("<http://e/acme>", "<http://e/rating>", '"A"', 40 * MIN, 40 * MIN)
    got = run(COUNT.format("RANGE 30m TUMBLING"), [price("acme", 10, 5), other])
    # (30, 60] holds only the rating; (60, 90] is the first window past 40
    assert table(got, "n") == [(0, 30, "1"), (30, 60, "0"), (60, 90, "0")]


def test_grouped_queries_give_no_row_for_an_empty_window():
    got = run("SELECT ?c (COUNT(*) AS ?n) FROM STREAM <http://e/s> [RANGE 30m STEP 15m] "
              "WHERE { ?c :price ?p } GROUP BY ?c", [price("acme", 10, 5), price("acme", 20, 80)])
    assert table(got, "c", "n") == [(-15, 15, "acme", "1"), (0, 30, "acme", "1"),
                                    (60, 90, "acme", "1"), (75, 105, "acme", "1")]


def test_the_evaluations_begin_at_the_first_event_and_at_the_start():
    start = '"1970-01-01T00:{:02d}:00Z"'
    events = [price("acme", 10, 35)]
    # START before the first event adds no evaluation before it: from 40
    assert table(run(COUNT.format(f"RANGE 10m TUMBLING START {start.format(0)}"), events), "n") == [
        (30, 40, "1"), (40, 50, "0")]
    # START after it: from the first close, 50 + 10; the event is in no window
    assert table(run(COUNT.format(f"RANGE 10m TUMBLING START {start.format(50)}"), events), "n") == [
        (50, 60, "0")]


def test_a_day_long_gap_is_evaluated_in_full():
    engine = Engine(parse_rules(PREFIX + "SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/s> [RANGE 1s STEP 1s] "
                                         "WHERE { ?c :price ?p }"))
    day = 86_400
    got = engine.push([price("acme", 1, 0), Event("<http://e/a>", "<http://e/price>", f'"2"^^{INT}',
                                                     day * SECOND, day * SECOND)]) + engine.flush()
    # 0 and day hold an event; 1 .. day - 1 and day + 1 are empty
    assert len(got) == day + 2
    assert sum(a.binding("n") == f'"0"^^{INT}' for a in got) == day
    assert engine.warnings == []


def test_a_gap_past_the_limit_is_cut_with_a_warning():
    engine = Engine(parse_rules(PREFIX + "REGISTER QUERY n AS SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/s> "
                                         "[RANGE 1s STEP 1s] WHERE { ?c :price ?p }"))
    late = 150_000  # seconds: more than 100,000 empty evaluations (cep_window:empty_run_limit/1)
    got = engine.push([price("acme", 1, 0), Event("<http://e/a>", "<http://e/price>", f'"2"^^{INT}',
                                                     late * SECOND, late * SECOND)]) + engine.flush()
    ends = [a.end // SECOND for a in got]
    # 0, the 100,000 empty ones from 1, then the event's window and the one past it
    assert ends == [0, *range(1, 100_001), late, late + 1]
    warning, = engine.warnings
    assert warning.startswith("n: its window was empty at 100,000 evaluations in a row, from "
                              "1970-01-01T00:00:01Z to 1970-01-02T03:46:40Z")
    assert "skipped" in warning


def test_a_spark_group_keeps_such_a_query_and_its_next_evaluation():
    rules = parse_rules(PREFIX + COUNT.format("RANGE 30m TUMBLING"))
    engine = Engine(rules)
    engine.push([price("acme", 10, 5), price("acme", 20, 6)])
    engine.flush_table(final=False)
    engine.close_windows(70 * MIN)  # windows 30 and 60 evaluated, nothing stored any more
    # the group stays, with a timeout at the next evaluation (90)
    assert engine.session.window_status(engine.module) == (90 * MIN, True)
    grouped = Engine(parse_rules(PREFIX + "SELECT ?c (COUNT(*) AS ?n) FROM STREAM <http://e/s> "
                                          "[RANGE 30m TUMBLING] WHERE { ?c :price ?p } GROUP BY ?c"))
    grouped.push([price("acme", 10, 5), price("acme", 20, 6)])
    grouped.flush_table(final=False)
    grouped.close_windows(70 * MIN)
    assert grouped.session.window_status(grouped.module) == (None, False)
    # at the end of the stream: (30, 60], the first window past the last
    # instant (6), was evaluated already; nothing more, nothing to keep
    assert engine.flush() == []
    assert engine.session.window_status(engine.module) == (None, False)
    # one group that gets every event
    query, = rules
    assert routing.partition_key(query) is None
    assert routing.Route((), None) in routing.classes(rules)[0].routes
    assert "an empty window's too" in routing.explain(rules)
