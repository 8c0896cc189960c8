"""Several streams in one query (C-SPARQL's FROM STREAM, FROM NAMED STREAM
and GRAPH; docs/language.md, "Windows and aggregates"): answers checked by
hand, each also compared with the reference evaluator."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cep import terms
from cep.algebra import sexpr
from cep.errors import QueryError
from cep.events import Event, events_of
from cep.io.readers import read_events as read_events_table
from cep.rules import parse_rules
from tests.unit.support import checked_answers
from tests.unit.test_cli import run


def read_events(paths):
    """The readers' events table as Events (the assertions here are on rows)."""
    table, rejects = read_events_table(paths)
    return events_of(table), rejects


M = 60_000  # a minute, ms
TOLL, CAM, OTHER = "<http://streams.org/tollgates>", "<http://streams.org/cameras>", "<http://streams.org/other>"
PREFIX = "PREFIX t: <http://t/>\n"

FULL_STREETS = PREFIX + """REGISTER QUERY full AS
SELECT ?street (COUNT(*) AS ?n)
FROM STREAM <http://streams.org/tollgates> [RANGE 5m TUMBLING]
FROM STREAM <http://streams.org/cameras> [RANGE 5m TUMBLING]
WHERE {
  { GRAPH <http://streams.org/tollgates> { ?g t:registers ?car . ?g t:placedIn ?street } }
  UNION
  { GRAPH <http://streams.org/cameras> { ?c t:registers ?car . ?c t:placedAt ?street } }
}
GROUP BY ?street
"""


def ev(s, p, o, minute, stream=""):
    return Event(f"<http://t/{s}>", f"<http://t/{p}>", f"<http://t/{o}>", minute * M, minute * M, stream=stream)


def rows(answers):
    return sorted((a.start // M, a.end // M, tuple((k, terms.canonical(v)) for k, v in a.bindings))
                  for a in answers)


def n(k):
    return f'"{k}"^^<http://www.w3.org/2001/XMLSchema#integer>'


def test_an_event_carries_a_stream_that_tells_occurrences_apart():
    a, b = ev("x", "p", "y", 1), ev("x", "p", "y", 1, TOLL)
    assert a != b and a == ev("x", "p", "y", 1) and len({a, b}) == 2


def test_full_streets_counts_the_passages_of_each_stream_by_its_own_pattern():
    events = [
        ev("g1", "registers", "car1", 1, TOLL), ev("g1", "placedIn", "main", 1, TOLL),
        ev("c1", "registers", "car2", 2, CAM), ev("c1", "placedAt", "main", 2, CAM),
        # a tollgate pattern split over two streams matches in neither
        ev("g2", "registers", "car3", 3, CAM), ev("g2", "placedIn", "side", 3, TOLL),
        # a camera's triples in the tollgate stream: not read by the camera branch
        ev("c2", "registers", "car4", 4, TOLL), ev("c2", "placedAt", "side", 4, TOLL),
        # a stream the query does not read
        ev("g3", "registers", "car5", 4, OTHER), ev("g3", "placedIn", "main", 4, OTHER),
    ]
    got = checked_answers(parse_rules(FULL_STREETS), events)
    assert rows(got) == [(0, 5, (("n", n(2)), ("street", "<http://t/main>")))]


def test_an_event_without_stream_is_read_by_both_streams():
    events = [ev("g1", "registers", "car1", 6), ev("g1", "placedIn", "main", 6),
              ev("g1", "placedAt", "main", 6)]
    got = checked_answers(parse_rules(FULL_STREETS), events)
    # the tollgate branch and the camera branch both match: two solutions
    assert rows(got) == [(5, 10, (("n", n(2)), ("street", "<http://t/main>")))]


def test_a_default_pattern_reads_every_from_stream_stream():
    queries = parse_rules(PREFIX + """SELECT ?car
FROM STREAM <http://streams.org/tollgates> [RANGE 5m TUMBLING]
FROM STREAM <http://streams.org/cameras> [RANGE 5m TUMBLING]
WHERE { ?g t:registers ?car . ?g t:placedIn ?street }""")
    events = [ev("g1", "registers", "car1", 1, TOLL), ev("g1", "placedIn", "main", 1, CAM),
              ev("g2", "registers", "car2", 2, OTHER), ev("g2", "placedIn", "main", 2, TOLL),
              ev("g3", "registers", "car3", 3), ev("g3", "placedIn", "main", 3, CAM)]
    got = checked_answers(queries, events)
    assert sorted(a.binding("car") for a in got) == ["<http://t/car1>", "<http://t/car3>"]


def test_a_named_stream_is_read_only_through_graph():
    queries = parse_rules(PREFIX + """SELECT ?car ?street
FROM STREAM <http://streams.org/tollgates> [RANGE 5m TUMBLING]
FROM NAMED STREAM <http://streams.org/cameras> [RANGE 5m TUMBLING]
WHERE { ?g t:registers ?car GRAPH <http://streams.org/cameras> { ?c t:sees ?car . ?c t:placedAt ?street } }""")
    text = sexpr.query(queries[0])
    assert "(streams <http://streams.org/tollgates> (named <http://streams.org/cameras>))" in text
    assert "(triple ?c <http://t/sees> ?car (graph <http://streams.org/cameras>))" in text
    events = [ev("g1", "registers", "car1", 1, TOLL), ev("c1", "sees", "car1", 1, CAM),
              ev("c1", "placedAt", "main", 1, CAM),
              # the named stream's registrations are not read by the default pattern
              ev("g2", "registers", "car2", 2, CAM), ev("c1", "sees", "car2", 2, CAM),
              # nor are the tollgate stream's sightings read by the GRAPH
              ev("g3", "registers", "car3", 3, TOLL), ev("c1", "sees", "car3", 3, TOLL)]
    got = checked_answers(queries, events)
    assert [(a.binding("car"), a.binding("street")) for a in got] == [("<http://t/car1>", "<http://t/main>")]


def test_a_count_window_counts_the_events_of_the_query_streams():
    queries = parse_rules(PREFIX + """SELECT (COUNT(*) AS ?n)
FROM STREAM <http://streams.org/tollgates> [TRIPLES 2]
WHERE { ?g t:registers ?car }""")
    events = [ev("g1", "registers", "car1", 1, TOLL), ev("g2", "registers", "car2", 2, CAM),
              ev("g3", "registers", "car3", 3, TOLL), ev("g4", "registers", "car4", 4)]
    got = checked_answers(queries, events)
    # evaluations at the instants of the query's events: 1, 3 and 4 (not 2)
    assert [(a.start // M, a.end // M, a.binding("n")) for a in got] == [(1, 1, n(1)), (1, 3, n(2)), (3, 4, n(2))]


@pytest.mark.parametrize("text, message", [
    ("SELECT * FROM STREAM <http://s> [RANGE 5m TUMBLING] WHERE { GRAPH <http://u> { ?s ?p ?o } }",
     "x.rq:1:67: GRAPH <http://u>: the query does not read that stream"),
    ("SELECT * FROM STREAM <http://s> [RANGE 5m TUMBLING] WHERE { GRAPH ?g { ?s ?p ?o } }",
     "x.rq:1:67: GRAPH ?g is not supported"),
    ("SELECT * FROM STREAM <http://s> [RANGE 5m TUMBLING]\n FROM STREAM <http://u> [RANGE 10m TUMBLING] "
     "WHERE { ?s ?p ?o }", "2:2: the streams the patterns outside GRAPH read have one window"),
    ("SELECT * FROM STREAM <http://s> [TRIPLES 3]\n FROM STREAM <http://u> [RANGE 10m TUMBLING] "
     "WHERE { ?s ?p ?o }", "2:2: the streams the patterns outside GRAPH read have one window"),
    ("SELECT * WHERE { GRAPH <http://s> { ?s ?p ?o } }",
     "1:18: GRAPH <http://s> names a stream, and the query reads none"),
    ("SELECT * FROM STREAM <http://s> [TRIPLES 3] FROM STREAM <http://s> [TRIPLES 3] WHERE { ?s ?p ?o }",
     "1:45: the query reads the stream <http://s> twice"),
])
def test_errors_name_their_place(text, message):
    with pytest.raises(QueryError) as err:
        parse_rules(text, "x.rq")
    assert message in str(err.value)


def test_count_windows_of_one_rule_set_read_the_same_streams():
    from cep.engine import Engine

    queries = parse_rules(PREFIX + """SELECT * FROM STREAM <http://a> [TRIPLES 2] WHERE { ?s t:p ?o }
SELECT * FROM STREAM <http://b> [TRIPLES 2] WHERE { ?s t:p ?o }""")
    with pytest.raises(QueryError, match="count windows of one rule set count the events of the same streams"):
        Engine(queries)


def test_cep_run_names_the_stream_of_each_file(tmp_path, capsys):
    rules = tmp_path / "full.rq"
    rules.write_text(FULL_STREETS)

    def line(s, p, o, minute):
        return json.dumps({"s": f"<http://t/{s}>", "p": f"<http://t/{p}>", "o": f"<http://t/{o}>", "t": minute * M})
    toll = tmp_path / "toll.jsonl"
    toll.write_text("\n".join([line("g1", "registers", "car1", 1), line("g1", "placedIn", "main", 1),
                               line("c9", "placedAt", "main", 1)]) + "\n")
    cams = tmp_path / "cams.jsonl"
    cams.write_text("\n".join([line("c1", "registers", "car2", 2), line("c1", "placedAt", "main", 2),
                               line("g9", "placedIn", "main", 2),
                               # a row with a stream of its own keeps it
                               json.dumps({"s": "<http://t/g1>", "p": "<http://t/registers>",
                                           "o": "<http://t/car3>", "t": M, "stream": TOLL})]) + "\n")
    code, out, err = run(["run", rules, "--events", f"http://streams.org/tollgates={toll}",
                          f"<http://streams.org/cameras>={cams}", "--quiet"], capsys)
    assert code == 0, err
    answers = [json.loads(x) for x in out.splitlines()]
    # tollgate g1 with car1 and car3, camera c1 with car2
    assert [(a["bindings"]["street"], a["bindings"]["n"]) for a in answers] == [
        ({"type": "uri", "value": "http://t/main"},
         {"type": "literal", "value": "3", "datatype": "http://www.w3.org/2001/XMLSchema#integer"})]


def test_a_table_file_with_a_stream_column(tmp_path):
    table = pa.table({"s": ["<http://t/g1>", "<http://t/g1>", "<http://t/g2>"],
                      "p": ["<http://t/registers>", "<http://t/placedIn>", "<http://t/registers>"],
                      "o": ["<http://t/car1>", "<http://t/main>", "<http://t/car2>"],
                      "t": [M, M, 2 * M], "stream": ["http://streams.org/tollgates", TOLL, None]})
    path = tmp_path / "mixed.parquet"
    pq.write_table(table, path)
    csv = tmp_path / "mixed.csv"
    csv.write_text("s,p,o,t,stream\n<http://t/g1>,<http://t/registers>,<http://t/car1>,60000,"
                   "http://streams.org/cameras\n<http://t/g1>,<http://t/registers>,<http://t/car1>,60000,\n")
    events, rejects = read_events([path])
    assert not rejects
    assert [e.stream for e in events] == [TOLL, TOLL, ""]
    events2, rejects = read_events([f"{OTHER}={csv}"])
    assert not rejects and sorted(e.stream for e in events2) == [CAM, OTHER]
    got = checked_answers(parse_rules(FULL_STREETS), events)
    assert rows(got) == [(0, 5, (("n", n(1)), ("street", "<http://t/main>")))]
