"""A stream is a multiset (docs/language.md, "Repeated events"): an event
repeated in the input counts once per record in a query over a window,
on both the engine and the reference (checked_answers compares them);
EP-SPARQL's event patterns read the stream as a set."""

import dataclasses
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cep.engine import Engine, _copy_indexes
from cep.events import Event, events_of, events_table
from cep.io.readers import read_file
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


def test_count_distinct_star_counts_a_repeated_solution_once_in_groups_with_windows():
    # DISTINCT * reads the solutions' bindings, not the hidden copy variables
    # that tell the copies apart (the reference had counted 2 x 2 = 4 here)
    events = [price("acme", 3, 1), price("acme", 3, 1)]
    counted = ("SELECT (COUNT(DISTINCT *) AS ?n) FROM STREAM <http://e/s> [RANGE 10m TUMBLING] "
               "WHERE { { ?c :price ?p WINDOW RANGE 10 MINUTE FIXED } { ?c :price ?p WINDOW RANGE 10 MINUTE FIXED } }")
    assert table(run(counted, events), "n")[0] == (0, 10, "1")


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


def test_a_query_with_a_consumption_policy_counts_an_event_once():
    # a choice (docs/language.md, "Repeated events"): a query with a policy
    # reads the stream as a set, windowed too; its rule set's other queries
    # read it as they would alone (w a multiset, as on Spark, where each
    # query may run apart)
    queries = parse_rules(PREFIX + "@policy recent\nREGISTER QUERY s AS SELECT ?a WHERE { ?c :price ?a }\n"
                          f"REGISTER QUERY w AS {COUNT}\n@policy chronological\nREGISTER QUERY v AS {COUNT}")
    engine = Engine(queries)
    got = engine.push([price("acme", 3, 1)] * 2) + engine.flush()
    assert sorted((a.query, a.binding("n")) for a in got if a.query != "s") == [
        ("v", f'"0"^^{INT}'), ("v", f'"1"^^{INT}'), ("w", f'"0"^^{INT}'), ("w", f'"2"^^{INT}')]
    assert [a.binding("a") for a in got if a.query == "s"] == [f'"3"^^{INT}']


def test_a_count_window_under_a_policy_counts_an_event_once_whatever_its_rule_set():
    # its window of the last 2 events: acme at 1, bolt twice at 2, one
    # event as a set, so at 2 it reaches back to acme (COUNT 2), alone or
    # beside a query that reads the copies (which counted bolt's twice:
    # the window held bolt alone, COUNT 1)
    elems = "SELECT (COUNT(*) AS ?n) FROM STREAM <http://e/s> WINDOW ELEMS 2 WHERE { ?c :price ?p }"
    events = [price("acme", 3, 1), price("bolt", 4, 2), price("bolt", 4, 2)]
    for siblings in ("", f"REGISTER QUERY w AS {COUNT}\n"):
        engine = Engine(parse_rules(PREFIX + siblings + f"@policy chronological\nREGISTER QUERY v AS {elems}"))
        got = engine.push(events) + engine.flush()
        assert sorted((a.start, a.end, a.binding("n")) for a in got if a.query == "v") == [
            (MIN, MIN, f'"1"^^{INT}'), (MIN, 2 * MIN, f'"2"^^{INT}')]


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


# One event = one record in every input (docs/io.md, "Inputs"; docs/language.md,
# "Repeated events"): a line given twice inside one event (a graph, a subject)
# is that event's triple once, as a triple written twice in a TriG graph is;
# the same triple at the same time in two events (two graphs, two rows, two
# files) is two events.
XSD_INT = "<http://www.w3.org/2001/XMLSchema#integer>"
PROV_AT = "<http://www.w3.org/ns/prov#generatedAtTime>"
AT = '"1970-01-01T00:01:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
ACME = f'<http://e/acme> <http://e/price> "3"^^{XSD_INT}'
RECORDS = {
    # N-Quads: g1's line twice is one triple of g1; g2 holds it again
    "nq": ([f"{ACME} <http://e/g1> .", f"{ACME} <http://e/g1> .", f"<http://e/g1> {PROV_AT} {AT} .",
            f"{ACME} <http://e/g2> .", f"<http://e/g2> {PROV_AT} {AT} ."], 2),
    # N-Triples: the subject is the event; its line twice is one triple of it
    "nt": ([f"{ACME} .", f"{ACME} .", f"<http://e/acme> {PROV_AT} {AT} ."], 1),
    # TriG: the same, a graph at a time
    "trig": ([f"<http://e/g1> {{ {ACME} . {ACME} }}", f"<http://e/g2> {{ {ACME} }}",
              f"<http://e/g1> {PROV_AT} {AT} .", f"<http://e/g2> {PROV_AT} {AT} ."], 2),
    # a line, a row: each is an event of its own
    "jsonl": ([json.dumps({"s": "<http://e/acme>", "p": "<http://e/price>", "o": f'"3"^^{XSD_INT}', "t": MIN})] * 2,
              2),
    "csv": (["s,p,o,t"] + [f'<http://e/acme>,<http://e/price>,"""3""^^{XSD_INT}",{MIN}'] * 2, 2),
}


@pytest.mark.parametrize("fmt", sorted(RECORDS) + ["parquet"])
def test_a_record_is_an_event_in_every_input(tmp_path, fmt):
    path = tmp_path / f"e.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.table({"s": ["<http://e/acme>"] * 2, "p": ["<http://e/price>"] * 2,
                                 "o": [f'"3"^^{XSD_INT}'] * 2, "t": [MIN, MIN]}), path)
        want = 2
    else:
        lines, want = RECORDS[fmt]
        path.write_text("\n".join(lines) + "\n")
    rejects = []
    events = events_of(read_file(path, rejects))
    assert rejects == []
    assert table(run(COUNT, events), "n") == [(0, 10, str(want)), (10, 20, "0")]  # then the empty window


def test_an_ntriples_event_in_two_files_is_two_events(tmp_path):
    # one record per file: the same subject, triple and time given by two files
    for name in ("a.nt", "b.nt"):
        (tmp_path / name).write_text(f"{ACME} .\n<http://e/acme> {PROV_AT} {AT} .\n")
    events = [e for name in ("a.nt", "b.nt") for e in events_of(read_file(tmp_path / name, []))]
    assert table(run(COUNT, events), "n") == [(0, 10, "2"), (10, 20, "0")]


def test_count_distinct_star_in_a_subquery_over_a_windows_content_counts_a_repeated_solution_once():
    # the engine had counted the hidden copy variables in DISTINCT * there (2)
    events = [price("acme", 3, 1), price("acme", 3, 1)]
    counted = ("SELECT ?n FROM STREAM <http://e/s> WINDOW ELEMS 1 "
               "WHERE { ?c :price ?p { SELECT (COUNT(DISTINCT *) AS ?n) WHERE { ?c :price ?p } } }")
    assert {row[2:] for row in table(run(counted, events), "n")} == {("1",)}
