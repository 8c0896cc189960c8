"""The Spark engine (cep.spark) on a real local Spark: the same answers as
the in-process engine, on batch DataFrames and on streams read file by
file, with late events reported."""

from __future__ import annotations

import random
from collections import Counter

import pyarrow as pa
import pytest

from cep.engine import Engine
from cep.events import Event
from cep.rules import parse_rules
from tests.spark.support import micro_batch_answers, write_files
from tests.unit.test_streaming_sparql import MIN, PREFIX, count, table

pytestmark = pytest.mark.spark
EVENTS = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()), ("t", pa.int64())])

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RULES = f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
REGISTER QUERY pairs AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :b ?y }} FILTER (getDURATION() < "PT0.05S"^^xsd:duration)
REGISTER QUERY drops AS
SELECT ?k ?x ?y WHERE {{ ?k :a ?x }} SEQ {{ ?k :a ?y }} FILTER (?y < ?x * 0.5 && getDURATION() < "PT0.03S"^^xsd:duration)
REGISTER STREAM both AS
CONSTRUCT {{ ?k :saw _:e . _:e :value ?x }} WHERE {{ ?k :a ?x }} EQUALS {{ ?k :b ?x }}
"""


def stream(n: int, seed: int):
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        t = i // 2 * 3 + rng.randint(0, 1)  # ties: some events are simultaneous
        rows.append((f"<{EX}k{rng.randint(0, 6)}>", f"<{EX}{rng.choice('ab')}>",
                     f'"{rng.randint(1, 20)}"^^<{XSD}integer>', t))
    return rows


def in_process(rows, rules=RULES):
    engine = Engine(parse_rules(rules, "r.rq"))
    answers = engine.push([Event(s, p, o, t, t) for s, p, o, t in rows]) + engine.flush()
    return sorted(_key(a.query, dict(a.bindings), [list(t) for t in a.triples], a.start, a.end) for a in answers)


def on_spark(result_rows):
    out = []
    for r in result_rows:
        assert r["kind"] == "answer"
        triples = [[t["s"], t["p"], t["o"]] for t in r["triples"]] if r["triples"] else []
        out.append(_key(r["query"], r["bindings"] or {}, triples,
                        round(r["start"].timestamp() * 1000), round(r["end"].timestamp() * 1000)))
    return sorted(out)


def _key(query, bindings, triples, start, end):
    # blank node labels differ from engine to engine: compare the shapes
    labels = {}
    shaped = tuple(tuple(labels.setdefault(x, f"_:{len(labels)}") if x.startswith("_:") else x for x in t)
                   for t in triples)
    return (query, tuple(sorted(bindings.items())), shaped, start, end)


def run_stream(spark, tmp_path, chunks, name, lateness, buckets, rules=RULES, ontology=None):
    """detect() over a stream of Parquet files, one per chunk and per
    micro-batch, to the end of the files: (the query, its output rows)."""
    from cep.spark import detect

    folder = tmp_path / "in"
    write_files(folder, chunks, EVENTS)
    events = spark.readStream.schema("s string, p string, o string, t long").option(
        "maxFilesPerTrigger", 1).parquet(str(folder))
    query = (detect(events, rules, lateness=lateness, buckets=buckets, ontology=ontology)
             .writeStream.format("memory").queryName(name).outputMode("append")
             .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    query.awaitTermination()
    return query, spark.sql(f"select * from {name}").collect()


def test_batch_dataframe_gives_the_in_process_answers(spark):
    from cep.spark import detect

    rows = stream(600, seed=3)
    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    got = on_spark(detect(df, RULES, buckets=3).collect())
    expected = in_process(rows)
    assert len(expected) > 50 and got == expected


def test_bind_values_and_subqueries_on_spark_give_the_in_process_answers(spark):
    """The rules' unary steps (BIND, a join with inline data, a subquery
    that keeps its solutions once per instant) run alike in each group."""
    from cep.spark import detect

    rules = f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
REGISTER QUERY bound AS
SELECT ?k ?x ?d WHERE {{ ?k :a ?x BIND (?x * 2 AS ?d) VALUES ?x {{ 1 2 3 4 5 }} }}
REGISTER QUERY nested AS
SELECT ?k ?x ?n WHERE {{ ?k :b ?x {{ SELECT ?k (?y + 1 AS ?n) WHERE {{ ?k :a ?y }} }}
  FILTER (getDURATION() < "PT0.004S"^^xsd:duration) }}
"""
    rows = stream(400, seed=7)
    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    got = on_spark(detect(df, rules, buckets=3).collect())
    expected = in_process(rows, rules)
    assert {a[0] for a in expected} == {"bound", "nested"} and got == expected


def test_stream_read_file_by_file_gives_the_in_process_answers(spark, tmp_path):
    """Files arrive one a micro-batch, each out of time order within the
    lateness; the answers equal the in-process engine's on the whole stream.
    Two closing files of :a events far later in time (which answer nothing)
    move the watermark past the data: the first sets the latest time seen
    to more than the lateness after the data, so the watermark of the
    second's micro-batch is past every event of the data."""
    rows = stream(900, seed=5)
    end = max(t for *_, t in rows)
    closing = [[(f"<{EX}k{k}>", f"<{EX}a>", f'"1"^^<{XSD}integer>', end + dt) for k in range(7)]
               for dt in (2500, 2600)]
    chunks = [rows[i:i + 300] for i in range(0, len(rows), 300)] + closing
    rng = random.Random(1)
    for chunk in chunks:
        rng.shuffle(chunk)  # arrival order is not time order (lateness covers it)
    query, result = run_stream(spark, tmp_path, chunks, "answers_stream", lateness="1 second", buckets=3)
    assert [r for r in result if r["kind"] == "late"] == []
    assert on_spark(result) == in_process(rows + closing[0] + closing[1])
    progress = query.lastProgress
    assert progress["stateOperators"][0]["numRowsTotal"] > 0


def test_late_events_are_reported_and_change_nothing(spark, tmp_path):
    early = [(f"<{EX}k1>", f"<{EX}a>", f'"{i}"^^<{XSD}integer>', 10_000 + i) for i in range(5)]
    later = [(f"<{EX}k1>", f"<{EX}b>", f'"9"^^<{XSD}integer>', 10_020)]
    far = [(f"<{EX}k1>", f"<{EX}a>", f'"1"^^<{XSD}integer>', 60_000)]
    late = [(f"<{EX}k1>", f"<{EX}b>", f'"7"^^<{XSD}integer>', 10_010)]  # after the watermark passed it
    closing = [(f"<{EX}k1>", f"<{EX}a>", f'"1"^^<{XSD}integer>', 120_000)]
    _, result = run_stream(spark, tmp_path, [early + later, far, late, closing], "answers_late",
                           lateness="0 seconds", buckets=2)
    late_rows = [r for r in result if r["kind"] == "late"]
    assert [(r["s"], r["p"], r["o"]) for r in late_rows] == [late[0][:3]]
    assert "watermark" in late_rows[0]["reason"]
    answers = on_spark([r for r in result if r["kind"] == "answer"])
    assert answers == in_process(early + later + far + closing)


SOSA = "http://www.w3.org/ns/sosa/"
SENSORS = "http://example.org/sensors#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
BACKGROUND_RULES = f"""PREFIX sosa: <{SOSA}>
PREFIX : <{SENSORS}>
REGISTER QUERY platforms AS
SELECT ?p WHERE {{ ?p a sosa:Platform }}
REGISTER QUERY results AS
SELECT ?obs ?v WHERE {{ ?obs sosa:hasSimpleResult ?v }}
REGISTER QUERY observed AS
SELECT ?obs ?sensor ?station WHERE {{ ?obs sosa:madeBySensor ?sensor . ?station sosa:hosts ?sensor }}
REGISTER QUERY sensors AS
SELECT ?s WHERE {{ ?s a sosa:Sensor }}
"""


def test_background_knowledge_on_spark_gives_the_in_process_answers(spark):
    """Routing modulo the ontology (a subclass's events reach a class
    pattern; domains and ranges move the key to the object), background
    joins and the facts broadcast to the workers, on a batch DataFrame in
    several buckets: the in-process engine's answers."""
    from pathlib import Path

    from cep.background.knowledge import load_background
    from cep.spark import detect

    background = load_background([Path(__file__).resolve().parents[2] / "ontologies" / "sensors.ttl"])
    rng = random.Random(5)
    rows = []
    for i in range(300):
        station, sensor, obs = (f"<{SENSORS}{k}{rng.randint(0, 5)}>" for k in ("station", "bpr", "obs"))
        kind = rng.randrange(4)
        if kind == 0:
            rows.append((station, RDF_TYPE, f"<{SENSORS}{rng.choice(['DARTBuoy', 'Buoy', 'PressureRecorder'])}>", i))
        elif kind == 1:
            rows.append((obs, f"<{SENSORS}waterColumnHeight>", f'"{rng.randint(1, 9)}.5"^^<{XSD}decimal>', i))
        elif kind == 2:
            rows.append((obs, f"<{SOSA}madeBySensor>", rng.choice([sensor, f"<{SENSORS}bpr21418>"]), i))
        else:
            rows.append((station, f"<{SOSA}hosts>", sensor, i))
    queries = parse_rules(BACKGROUND_RULES, "sensors.rq")
    engine = Engine(queries, background=background)
    answers = engine.push([Event(s, p, o, t, t) for s, p, o, t in rows]) + engine.flush()
    expected = sorted(_key(a.query, dict(a.bindings), [], a.start, a.end) for a in answers)
    assert {a.query for a in answers} == {"platforms", "results", "observed", "sensors"}

    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    assert on_spark(detect(df, queries, ontology=background, buckets=3).collect()) == expected


ROADS = """@prefix : <http://example.org/> .
:a :road :b . :b :road :c . :c :road :a . :c :road :d . :d :tram :e . :f :road :g .
"""
PATH_RULES = f"""PREFIX : <{EX}>
REGISTER QUERY reachable AS
SELECT ?v ?to WHERE {{ ?v :at ?from . ?from (:road|:tram)+ ?to }}
REGISTER QUERY route AS
SELECT ?v WHERE {{ ?v :from ?x . ?v :to ?y . ?x :road+ ?y }}
"""


def test_property_paths_on_spark_give_the_in_process_answers(spark, tmp_path):
    """Paths over the broadcast background graph, joined with events that
    are partitioned by their vehicle: the in-process engine's answers."""
    from cep.background.knowledge import load_background
    from cep.spark import detect

    path = tmp_path / "roads.ttl"
    path.write_text(ROADS)
    background = load_background([path])
    rng = random.Random(9)
    rows = [(f"<{EX}v{rng.randint(0, 9)}>", f"<{EX}{rng.choice(['at', 'from', 'to'])}>",
             f"<{EX}{rng.choice('abcdefg')}>", i) for i in range(200)]
    queries = parse_rules(PATH_RULES, "paths.rq")
    engine = Engine(queries, background=background)
    answers = engine.push([Event(s, p, o, t, t) for s, p, o, t in rows]) + engine.flush()
    expected = sorted(_key(a.query, dict(a.bindings), [], a.start, a.end) for a in answers)
    assert {a.query for a in answers} == {"reachable", "route"}
    assert any(dict(a.bindings).get("to") == f"<{EX}e>" for a in answers)  # over the tram, too

    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    assert on_spark(detect(df, queries, ontology=background, buckets=3).collect()) == expected


DESCRIBE_RULES = f"""PREFIX : <{EX}>
REGISTER QUERY places AS DESCRIBE ?from WHERE {{ ?v :at ?from }}
"""


def test_describe_on_spark_gives_the_in_process_answers(spark, tmp_path):
    """DESCRIBE reads the description of a place in the background facts
    of the worker (cep_runtime:cep_describe/4): the in-process answers."""
    from cep.background.knowledge import load_background
    from cep.spark import detect

    path = tmp_path / "roads.ttl"
    path.write_text(ROADS)
    background = load_background([path])
    rows = [(f"<{EX}v{i % 3}>", f"<{EX}at>", f"<{EX}{'abcdefg'[i % 7]}>", i) for i in range(20)]
    queries = parse_rules(DESCRIBE_RULES, "places.rq")
    engine = Engine(queries, background=background)
    answers = engine.push([Event(s, p, o, t, t) for s, p, o, t in rows]) + engine.flush()
    expected = sorted(_key(a.query, {}, [list(t) for t in a.triples], a.start, a.end) for a in answers)
    assert (f"<{EX}a>", f"<{EX}road>", f"<{EX}b>") in answers[0].triples  # the background's

    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    assert on_spark(detect(df, queries, ontology=background, buckets=3).collect()) == expected


UPDATE_RULES = f"""PREFIX : <{EX}>
REGISTER UPDATE closing AS DELETE {{ ?a :road ?b }} WHERE {{ ?a :closed ?b }}
REGISTER UPDATE opening AS INSERT {{ ?a :road ?b }} WHERE {{ ?a :opened ?b }}
REGISTER QUERY reachable AS SELECT ?v ?to WHERE {{ ?v :at ?from . ?from :road+ ?to }}
REGISTER QUERY next AS SELECT ?v ?to WHERE {{ ?v :at ?from . ?from :road ?to }}
REGISTER QUERY closures AS SELECT ?a ?b WHERE {{ ?a :closed ?b }}
"""


def _roads(tmp_path):
    from cep.background.knowledge import load_background

    path = tmp_path / "roads.ttl"
    path.write_text(ROADS)
    return load_background([path])


def _update_rows(n: int, seed: int):
    """Vans asking where they can go, and roads closing and opening."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        t = i // 2 * 3 + rng.randint(0, 1)  # some simultaneous
        if rng.random() < 0.3:
            rows.append((f"<{EX}{rng.choice('abcdefg')}>", f"<{EX}{rng.choice(['closed', 'opened'])}>",
                         f"<{EX}{rng.choice('abcdefg')}>", t))
        else:
            rows.append((f"<{EX}v{rng.randint(0, 9)}>", f"<{EX}at>", f"<{EX}{rng.choice('abcdefg')}>", t))
    return rows


def _in_process_answers(rules, rows, background):
    engine = Engine(parse_rules(rules, "roads.rq"), background=background)
    answers = engine.push([Event(s, p, o, t, t) for s, p, o, t in rows]) + engine.flush()
    return sorted(_key(a.query, dict(a.bindings), [], a.start, a.end) for a in answers)


def test_an_update_on_spark_changes_the_later_detection_and_not_the_earlier(spark, tmp_path):
    from cep.spark import detect

    rows = [(f"<{EX}van>", f"<{EX}at>", f"<{EX}a>", 1), (f"<{EX}a>", f"<{EX}closed>", f"<{EX}b>", 2),
            (f"<{EX}van>", f"<{EX}at>", f"<{EX}a>", 3)]
    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    got = [(r["query"], r["bindings"].get("to"), round(r["start"].timestamp() * 1000))
           for r in detect(df, UPDATE_RULES, ontology=_roads(tmp_path), buckets=3).collect()
           if r["query"] == "next"]
    assert sorted(got) == [("next", f"<{EX}b>", 1)]  # :a :road :b only, and closed at 2
    # a rule set of updates alone runs (in one group) and answers nothing
    updates = "\n".join(UPDATE_RULES.splitlines()[:3])
    assert detect(df, updates, ontology=_roads(tmp_path), buckets=3).collect() == []


def test_update_rules_on_spark_give_the_in_process_answers(spark, tmp_path):
    """Every group runs the update rules on copies of the events they
    read, so the queries of every bucket see the same background; the
    copies answer nothing (the closures query answers each closure once)."""
    from cep.spark import detect

    background = _roads(tmp_path)
    rows = _update_rows(400, seed=11)
    expected = _in_process_answers(UPDATE_RULES, rows, background)
    without = _in_process_answers(f"PREFIX : <{EX}>\n" + "\n".join(UPDATE_RULES.splitlines()[3:]), rows, background)
    assert expected != without and {k[0] for k in expected} == {"reachable", "next", "closures"}
    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    assert on_spark(detect(df, UPDATE_RULES, ontology=background, buckets=3).collect()) == expected


def test_a_window_on_spark_reads_the_background_at_its_evaluation_time(spark, tmp_path):
    """A windowed query in a rule set with updates reads the background as
    the updates up to each evaluation time left it, on Spark as in process
    (where the reference checks it, tests/unit/test_background_updates.py)."""
    _updates_and_a_query_give_the_in_process_answers(
        spark, tmp_path, "SELECT ?v ?to FROM STREAM <http://example.org/s> [RANGE 6ms STEP 3ms]"
                         " WHERE { ?v :at ?from . ?from :road ?to } GROUP BY ?v ?to")


def test_groups_with_windows_of_their_own_on_spark_read_the_background_at_the_evaluation_time(spark, tmp_path):
    """Each part of a query whose groups have windows of their own reads
    the background as the updates up to the evaluation time left it, the
    last 5 events' part as the first part's time window (golden case
    window_group_background_updates, with the reference)."""
    _updates_and_a_query_give_the_in_process_answers(
        spark, tmp_path, "SELECT ?v ?to ?w ?n FROM STREAM <http://example.org/s> [RANGE 6ms STEP 3ms]"
                         " WHERE { ?v :at ?from . ?from :road ?to { ?w :at ?to . ?to :road ?n WINDOW ELEMS 5 } }")


def _updates_and_a_query_give_the_in_process_answers(spark, tmp_path, query):
    """The first three update rules of UPDATE_RULES and `query`, over 300
    random rows in three buckets on Spark: the in-process answers."""
    from cep.spark import detect

    rules = "\n".join(UPDATE_RULES.splitlines()[:3]) + f"\nREGISTER QUERY routes AS {query}\n"
    background = _roads(tmp_path)
    rows = _update_rows(300, seed=5)
    expected = _in_process_answers(rules, rows, background)
    assert expected
    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    assert on_spark(detect(df, rules, ontology=background, buckets=3).collect()) == expected


def test_update_rules_on_a_stream_give_the_in_process_answers_and_report_a_late_closure_once(spark, tmp_path):
    background = _roads(tmp_path)
    rows = _update_rows(600, seed=12)
    end = max(t for *_, t in rows)
    late = [(f"<{EX}a>", f"<{EX}closed>", f"<{EX}b>", 5)]  # after the closing files moved the watermark
    # closing files move the watermark past the data (a place with no road: no answer)
    closing = [[(f"<{EX}v0>", f"<{EX}at>", f"<{EX}nowhere>", end + dt)] for dt in (2500, 2600)]
    chunks = [rows[i:i + 200] for i in range(0, len(rows), 200)]
    rng = random.Random(2)
    for chunk in chunks:
        rng.shuffle(chunk)  # within the lateness
    _, result = run_stream(spark, tmp_path, chunks + closing + [late], "answers_updates", lateness="1 second",
                           buckets=3, rules=UPDATE_RULES, ontology=background)
    assert [(r["s"], r["p"], r["o"]) for r in result if r["kind"] == "late"] == [late[0][:3]]
    expected = _in_process_answers(UPDATE_RULES, rows + closing[0] + closing[1], background)
    assert len(expected) > 1000 and on_spark([r for r in result if r["kind"] == "answer"]) == expected


def test_detect_loads_the_files_a_rule_file_names_by_from(spark, tmp_path):
    from cep.spark import detect

    (tmp_path / "roads.ttl").write_text(ROADS)
    rules = tmp_path / "reach.rq"
    rules.write_text(PATH_RULES.replace("WHERE {{ ?v :at".replace("{{", "{"), "FROM <roads.ttl> WHERE { ?v :at"))
    df = spark.createDataFrame([(f"<{EX}v1>", f"<{EX}at>", f"<{EX}c>", 1)], "s string, p string, o string, t long")
    got = sorted(r["bindings"]["to"] for r in detect(df, str(rules)).collect())
    assert got == [f"<{EX}{x}>" for x in "abcde"]  # c -> a -> b -> c, c -> d, d :tram e


CHAINED_RULES = f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
REGISTER STREAM hot AS
CONSTRUCT {{ ?k :hot ?x }} WHERE {{ ?k :a ?x FILTER (?x > 8) }}
REGISTER STREAM rising AS
CONSTRUCT {{ ?k :rising ?y . ?k :mark _:m }} WHERE {{ {{ ?k :hot ?x }} SEQ {{ ?k :hot ?y }}
  FILTER (?y > ?x && getDURATION() < "PT0.02S"^^xsd:duration) }}
REGISTER QUERY seen AS
SELECT ?k ?x ?r WHERE {{ ?k :b ?x OPTIONAL {{ ?k :rising ?r FILTER (?r > ?x) }} }}
"""
# the same chain, and a rule whose triples hold a constant where the
# events hold their key: its class runs in one group
GLOBAL_RULES = CHAINED_RULES + f"""REGISTER STREAM tally AS
CONSTRUCT {{ :all :rose ?k }} WHERE {{ ?k :rising ?y }}
REGISTER QUERY risers AS
SELECT ?k ?x WHERE {{ {{ :all :rose ?k }} SEQ {{ ?k :b ?x }} }}
"""


def test_chained_rules_on_spark_give_the_in_process_answers(spark):
    """CONSTRUCT rules whose triples other queries read (the Q-closure)
    run in one class; with the key in the derived triples it runs in 3
    buckets, else in one group. Both give the in-process answers, and the
    fed-back triples change them."""
    from cep.spark import detect, plan

    rows = stream(600, seed=13)
    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    for rules, buckets in ((CHAINED_RULES, (3,)), (GLOBAL_RULES, (1,))):
        assert plan(rules, buckets=3).buckets == buckets
        queries = parse_rules(rules, "chain.rq")
        engine = Engine(queries)
        answers = engine.push([Event(s, p, o, t, t) for s, p, o, t in rows]) + engine.flush()
        expected = sorted(_key(a.query, dict(a.bindings), [list(t) for t in a.triples], a.start, a.end)
                          for a in answers)
        assert len(expected) > 100 and any(a.query == "seen" and dict(a.bindings).get("r") for a in answers)
        assert rules == CHAINED_RULES or any(a.query == "risers" for a in answers)
        assert on_spark(detect(df, rules, buckets=3).collect()) == expected


WINDOW_RULES = f"""PREFIX : <{EX}>
REGISTER QUERY per_key AS
SELECT ?k (COUNT(*) AS ?n) (SUM(?x) AS ?total)
FROM STREAM <{EX}s> [RANGE 20ms STEP 10ms]
WHERE {{ ?k :a ?x }} GROUP BY ?k
"""


def test_a_window_closes_on_spark_when_the_watermark_passes_it_without_a_row_of_its_group(spark, tmp_path):
    """k0's events all come in the first file; every later file holds only
    keys of other buckets, the last ones far later in time. k0's group is
    called again only by its event-time timeout, when the watermark passes
    its next window: its windows must all be answered, as the in-process
    engine answers them once event time has passed them."""
    buckets = 3
    names = [f"<{EX}k{i}>" for i in range(12)]
    # the bucket of each key, as the engine's router computes it
    row = spark.sql("select " + ", ".join(f"pmod(xxhash64('{n}'), {buckets})" for n in names)).collect()[0]
    bucket = dict(zip(names, row))
    others = [n for n in names[1:] if bucket[n] != bucket[names[0]]]
    first = [(names[0], f"<{EX}a>", f'"{i}"^^<{XSD}integer>', 1000 + 7 * i) for i in range(10)]
    middle = [(others[i % len(others)], f"<{EX}a>", f'"{i}"^^<{XSD}integer>', 1070 + 5 * i) for i in range(20)]
    end = 1200
    closing = [[(others[0], f"<{EX}a>", f'"1"^^<{XSD}integer>', end + dt)] for dt in (2500, 2600)]
    _, result = run_stream(spark, tmp_path, [first, middle] + closing, "answers_windows", lateness="1 second",
                           buckets=buckets, rules=WINDOW_RULES)
    got = [r for r in on_spark(result) if r[1][0] == ("k", names[0])]
    engine = Engine(parse_rules(WINDOW_RULES, "w.rq"))
    rows = first + middle + closing[0] + closing[1]
    answers = engine.push([Event(s, p, o, t, t) for s, p, o, t in rows])
    expected = sorted(_key(a.query, dict(a.bindings), [], a.start, a.end) for a in answers)
    expected = [r for r in expected if r[1][0] == ("k", names[0])]
    # k0's windows close at 1000, 1010, ..., 1080 (the last holds its event at 1063)
    assert len(expected) == 9 and got == expected


def test_an_event_that_no_query_reads_moves_the_watermark_past_a_window(spark, tmp_path):
    """Event time is the stream's, whichever of its events the queries
    read, as in process (cep/io/follow.py: the latest end read): the last
    file holds only an event of a predicate no query reads, far later, and
    the windows of the keys' last events close (each key's group called by
    its event-time timeout), as in process."""
    queries = parse_rules(PREFIX + "SELECT ?x ?a FROM STREAM <http://e/td> [RANGE 10m TUMBLING] WHERE { ?x :a ?a }")
    stream = [count("x1", "a", 1, 1), count("x2", "a", 2, 3), count("x1", "a", 3, 12), count("x2", "a", 4, 14)]
    unread = [count("z", "other", 0, 40)]
    answers, expected = micro_batch_answers(spark, tmp_path, queries, [stream[:2], stream[2:], unread], 30 * MIN)
    assert table(expected, "x", "a") == [(0, 10, "x1", "1"), (0, 10, "x2", "2"), (10, 20, "x1", "3"),
                                         (10, 20, "x2", "4")]
    assert Counter(answers) == Counter(expected)

def test_a_window_due_at_the_epoch_on_a_stream(spark, tmp_path):
    """An event at 1970-01-01T00:00Z makes its window due at 0, where
    PySpark refuses an event-time timeout (it must be positive): the group
    waits for the next one instead, and the answers are the in-process
    engine's (the random streams of test_equivalence found this)."""
    rows = [[(f"<{EX}k0>", f"<{EX}a>", f'"1"^^<{XSD}integer>', 0)],
            [(f"<{EX}k1>", f"<{EX}a>", f'"2"^^<{XSD}integer>', 5)],
            [(f"<{EX}k1>", f"<{EX}a>", f'"3"^^<{XSD}integer>', 3000)]]
    _, result = run_stream(spark, tmp_path, rows, "answers_epoch", lateness="1 second", buckets=2,
                           rules=WINDOW_RULES)
    engine = Engine(parse_rules(WINDOW_RULES, "w.rq"))
    answers = engine.push([Event(s, p, o, t, t) for chunk in rows for s, p, o, t in chunk]) + engine.flush()
    # Spark's watermark ends at 3000 + 1 - 1001 ms: the windows before it closed (k0's at 0 and 10, k1's at 10 and 20)
    expected = sorted(_key(a.query, dict(a.bindings), [], a.start, a.end) for a in answers if a.end < 2000)
    assert len(expected) == 4 and on_spark(result) == expected


FED_WINDOW_RULES = f"""PREFIX : <{EX}>
REGISTER STREAM averaged AS
CONSTRUCT {{ ?k :average ?m }} FROM STREAM <{EX}s> [RANGE 20ms STEP 10ms]
WHERE {{ SELECT ?k (AVG(?x) AS ?m) WHERE {{ ?k :a ?x }} GROUP BY ?k }}
REGISTER QUERY above AS
SELECT ?k ?m ?x WHERE {{ {{ ?k :average ?m }} SEQ {{ ?k :a ?x }} FILTER (?x > ?m) }} WITHIN "PT0.03S"
"""


def test_a_windowed_construct_fed_back_on_spark_gives_the_in_process_answers(spark):
    """The averages of a window are events read by a SEQ, in the buckets
    of their key (the class keeps 3 buckets: the derived triples hold the
    key)."""
    from cep.spark import detect, plan

    rows = stream(400, seed=5)
    assert plan(FED_WINDOW_RULES, buckets=3).buckets == (3,)
    engine = Engine(parse_rules(FED_WINDOW_RULES, "fed.rq"))
    answers = engine.push([Event(s, p, o, t, t) for s, p, o, t in rows]) + engine.flush()
    expected = sorted(_key(a.query, dict(a.bindings), [list(t) for t in a.triples], a.start, a.end)
                      for a in answers)
    assert sum(a.query == "above" for a in answers) > 20
    df = spark.createDataFrame(rows, "s string, p string, o string, t long")
    assert on_spark(detect(df, FED_WINDOW_RULES, buckets=3).collect()) == expected
