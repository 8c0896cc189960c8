"""A stream is a multiset (docs/language.md, "Repeated events"): an event
repeated in the input counts once per record in a query over a window,
on both the engine and the reference (checked_answers compares them);
EP-SPARQL's event patterns read the stream as a set."""

import dataclasses

import pyarrow as pa

from cep.engine import Engine, _copy_indexes
from cep.events import Event, events_table
from cep.rules import parse_rules
from tests.unit.test_windows import INT, MIN, PREFIX, price, run, table

WINDOW = "FROM STREAM <http://e/s> [RANGE 10m TUMBLING]"
COUNT = f"SELECT (COUNT(*) AS ?n) (SUM(?p) AS ?sum) {WINDOW} WHERE {{ ?c :price ?p }}"
# aggregates without GROUP BY give a row for (10, 20] too, the first window
# past the stream, empty (docs/language.md, "Empty windows")


def sourced(event, source):
    return dataclasses.replace(event, source=source)


def test_an_event_given_twice_counts_twice_in_a_window():
    events = [price("acme", 3, 1), price("acme", 3, 1), price("bolt", 4, 2)]
    assert table(run(COUNT, events), "n", "sum") == [(0, 10, "3", "10"), (10, 20, "0", "0")]


def test_a_plain_windowed_select_gives_a_row_per_copy_and_distinct_one():
    events = [price("acme", 3, 1), price("acme", 3, 1)]
    plain = f"SELECT ?c ?p {WINDOW} WHERE {{ ?c :price ?p }}"
    assert table(run(plain, events), "c", "p") == [(0, 10, "acme", "3")] * 2
    assert table(run(plain.replace("SELECT", "SELECT DISTINCT"), events), "c", "p") == [(0, 10, "acme", "3")]
    counted = f"SELECT (COUNT(DISTINCT ?c) AS ?n) {WINDOW} WHERE {{ ?c :price ?p }}"
    assert table(run(counted, events), "n") == [(0, 10, "1"), (10, 20, "0")]


def test_records_are_told_apart_by_their_source():
    # one record holding the triple twice is one event (a graph is a set); two records are two
    same = [sourced(price("acme", 3, 1), "g1"), sourced(price("acme", 3, 1), "g1")]
    two = [sourced(price("acme", 3, 1), "g1"), sourced(price("acme", 3, 1), "g2")]
    assert table(run(COUNT, same), "n") == [(0, 10, "1"), (10, 20, "0")]
    assert table(run(COUNT, two), "n") == [(0, 10, "2"), (10, 20, "0")]


def test_a_join_multiplies_the_copies():
    # acme's price twice, its rating three times: 6 solutions; bolt's once each: 1
    rating = [Event("<http://e/acme>", "<http://e/rating>", '"A"', 2 * MIN, 2 * MIN)] * 3
    events = [price("acme", 3, 1)] * 2 + rating + [price("bolt", 4, 1),
                                                   Event("<http://e/bolt>", "<http://e/rating>", '"B"', MIN, MIN)]
    query = f"SELECT ?c (COUNT(*) AS ?n) {WINDOW} WHERE {{ ?c :price ?p . ?c :rating ?r }} GROUP BY ?c"
    assert table(run(query, events), "c", "n") == [(0, 10, "acme", "6"), (0, 10, "bolt", "1")]


def test_optional_over_the_window_keeps_the_copies():
    events = [price("acme", 3, 1)] * 2 + [Event("<http://e/acme>", "<http://e/rating>", '"A"', 2 * MIN, 2 * MIN)]
    query = f"SELECT ?c ?r {WINDOW} WHERE {{ ?c :price ?p OPTIONAL {{ ?c :rating ?r }} }}"
    assert [row[2:] for row in table(run(query, events), "c", "r")] == [("acme", "A")] * 2


def test_an_event_pattern_reads_the_stream_as_a_set():
    events = [price("acme", 3, 1)] * 2 + [price("acme", 5, 2)] * 3
    answers = run("SELECT ?a ?b WHERE { { ?c :price ?a } SEQ { ?c :price ?b } }", events)
    assert len(answers) == 1


def test_a_rule_set_with_a_consumption_policy_counts_an_event_once():
    # not yet a multiset there: the policy's events are a set (cep.engine._distinct_events)
    queries = parse_rules(PREFIX + "@policy recent\nREGISTER QUERY s AS SELECT ?a WHERE { ?c :price ?a }\n"
                          f"REGISTER QUERY w AS {COUNT}")
    engine = Engine(queries)
    got = engine.push([price("acme", 3, 1)] * 2) + engine.flush()
    assert [a.binding("n") for a in got if a.query == "w"] == [f'"1"^^{INT}', f'"0"^^{INT}']


def test_copy_indexes_number_the_records_of_each_event_in_place():
    e, f = price("acme", 3, 1), price("bolt", 4, 1)
    table_ = events_table([sourced(e, "g1"), f, sourced(e, "g2"), sourced(e, "g1"), e, f])
    table_ = table_.append_column("updates_only", pa.array([False] * 6))
    g1, f1, g2, g1_again, own, f2 = _copy_indexes(table_).to_pylist()
    # e's three records (g1, g2, and a row without a source) are copies 0, 1, 2; g1's rows one record
    assert sorted([g1, g2, own]) == [0, 1, 2] and g1_again == g1
    assert sorted([f1, f2]) == [0, 1]
    updates = table_.set_column(table_.schema.get_field_index("updates_only"), "updates_only",
                                pa.array([False, False, False, False, True, True]))
    g1, f1, g2, _, own, f2 = _copy_indexes(updates).to_pylist()
    assert (own, f2, f1) == (0, 0, 0) and sorted([g1, g2]) == [0, 1]  # updates are sets: no copies


def test_a_window_of_triples_holds_a_repeated_triple_once():
    # [TRIPLES n] holds the last n triples; acme's price given twice at 1 is one
    # of them (at its later place): at 1, [TRIPLES 1] holds it, one row, not one
    # per copy; at 2, [TRIPLES 2] holds it and bolt's price (window from 1)
    events = [price("acme", 3, 1), price("acme", 3, 1), price("bolt", 4, 2)]
    for n, at, rows in ((1, 1, [(1, 1, "acme")]), (2, 2, [(1, 2, "acme"), (1, 2, "bolt")])):
        query = f"SELECT ?c FROM STREAM <http://e/s> [TRIPLES {n}] WHERE {{ ?c :price ?p }}"
        assert [row for row in table(run(query, events), "c") if row[1] == at] == rows
