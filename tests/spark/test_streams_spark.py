"""Several streams in one query on the Spark engine: a batch DataFrame
with a stream column gives the in-process engine's answers."""

from __future__ import annotations

from collections import Counter

from cep.rules import parse_rules
from tests.spark.support import in_process, output_columns, split_rows
from tests.unit.test_streams import CAM, FULL_STREETS, TOLL, ev


def on_spark(spark, queries, events, **options) -> tuple:
    """(answers, other rows) of detect() over a batch DataFrame of the
    events with their stream column (None where an event names none)."""
    from cep.spark import detect

    rows = [(e.s, e.p, e.o, e.start, e.end, e.stream.strip("<>") or None) for e in events]
    df = spark.createDataFrame(rows, "s string, p string, o string, t long, t_end long, stream string")
    return split_rows(output_columns(detect(df, queries, **options)).collect())


def test_a_two_stream_query_on_spark_answers_as_in_process(spark):
    queries = parse_rules(FULL_STREETS)
    events = [
        ev("g1", "registers", "car1", 1, TOLL), ev("g1", "placedIn", "main", 1, TOLL),
        ev("c1", "registers", "car2", 2, CAM), ev("c1", "placedAt", "main", 2, CAM),
        ev("g2", "registers", "car3", 3, CAM), ev("g2", "placedIn", "side", 3, TOLL),
        ev("g3", "registers", "car4", 6), ev("g3", "placedIn", "side", 6),
    ]
    answers, others = on_spark(spark, queries, events, buckets=2)
    expected = in_process(queries, events)
    assert not others
    assert len(expected) == 2
    assert Counter(answers) == Counter(expected)


def test_events_without_a_stream_column_are_of_every_stream(spark):
    from cep.spark import detect

    queries = parse_rules(FULL_STREETS)
    events = [ev("g3", "registers", "car4", 6), ev("g3", "placedIn", "side", 6), ev("g3", "placedAt", "side", 6)]
    df = spark.createDataFrame([(e.s, e.p, e.o, e.start, e.end) for e in events],
                               "s string, p string, o string, t long, t_end long")
    answers, others = split_rows(output_columns(detect(df, queries)).collect())
    assert not others and Counter(answers) == Counter(in_process(queries, events)) and len(answers) == 1


def test_timestamp_of_a_stream_on_spark_answers_as_in_process(spark):
    """C-SPARQL's timestamp(?v, <stream>) (tests/unit/test_timestamp.py
    has the hand-checked answers): the stream of each event reaches the
    leaf rules on Spark as in process."""
    from tests.unit.test_timestamp import HEAD, OAK, PALM, STREAMS, on

    queries = parse_rules(HEAD + f"""SELECT DISTINCT ?car {STREAMS}
WHERE {{ ?c1 :registers ?car . ?c2 :registers ?car
         FILTER (timestamp(?car, {OAK}) > timestamp(?car, {PALM})) }}""")
    events = [on(PALM, "p", "registers", "car1", 1), on(OAK, "o", "registers", "car1", 3),
              on(OAK, "o", "registers", "car2", 2), on(PALM, "p", "registers", "car2", 4),
              on("", "x", "registers", "car4", 6), on(PALM, "p", "registers", "car4", 7)]
    answers, others = on_spark(spark, queries, events)
    expected = in_process(queries, events)
    assert not others and len(expected) == 1
    assert Counter(answers) == Counter(expected)


def test_named_windows_on_spark_answer_as_in_process(spark):
    """RSP-QL's FROM NAMED WINDOW / WINDOW ?w over events of two streams
    (tests/unit/test_named_windows.py has the hand-checked answers)."""
    from tests.unit.test_named_windows import HEAD

    queries = parse_rules(HEAD + "WHERE { WINDOW ?w { ?g t:registers ?car } }")
    events = [ev("g", "registers", "car1", 1, TOLL), ev("c", "registers", "car2", 2, CAM),
              ev("x", "registers", "car3", 3)]
    answers, others = on_spark(spark, queries, events)
    expected = in_process(queries, events)
    assert not others and len(expected) == 4
    assert Counter(answers) == Counter(expected)
