"""SERVICE on the Spark engine (docs/language.md, "SERVICE"): each group's
engine keeps its own views of the endpoint (a real one: Oxigraph,
tests/endpoint.py), and its state the entries its keys need; the answers
are those of the in-process engine. An endpoint the run does not allow is
refused on the driver, before Spark runs anything."""

from __future__ import annotations

from collections import Counter

import pytest

from cep.engine import Engine
from cep.errors import QueryError
from cep.rules import parse_rules
from cep.service.options import ServiceOptions
from tests.endpoint import Counting, oxigraph_server  # noqa: F401 (the fixture)
from tests.spark.support import EVENT_DDL, event_rows, output_columns, split_rows
from tests.unit.test_service import E, H, WINDOWED, followers, mention

pytestmark = pytest.mark.spark


def test_a_windowed_service_query_answers_on_spark_as_in_process(spark, oxigraph_server):
    """... and the groups a worker process serves share one initial pull
    (ServiceOptions.snapshot): fewer downloads of the whole view than
    groups (one per Python worker; before, one per group)."""
    from cep.spark import detect
    from cep.spark.routing import bucket_of

    followers(oxigraph_server, {u: (u * 7919) % 30000 for u in range(1, 9)})
    with Counting(oxigraph_server.query_url) as proxy:
        queries = parse_rules(H + WINDOWED.format(
            from_="", background=f"SERVICE <{proxy.url}> {{ ?u :followers ?n }}"), "remote.rq")
        stream = [mention(1 + (i * 5) % 8, i, i) for i in range(1, 40)]
        options = ServiceOptions(allow=[proxy.base], gamma=8)
        engine = Engine(queries, services=options)
        expected = engine.push(stream) + engine.flush()
        pull = engine.services.states[0].view.spec.pull_query()
        proxy.queries.clear()
        events = spark.createDataFrame(event_rows(stream), EVENT_DDL)
        answers, others = split_rows(output_columns(detect(events, queries, buckets=6, services=options)).collect())
        groups = len({bucket_of(e.s, 6) for e in stream})
        assert not others
        assert expected and Counter(answers) == Counter(expected)
        assert groups >= 4 and 1 <= proxy.pulls(pull) < groups


def test_an_endpoint_not_allowed_is_refused_on_the_driver(spark):
    from cep.spark import detect

    queries = parse_rules(H + f"SELECT * {{ ?u :m ?p SERVICE <http://127.0.0.1:9/q> {{ ?u :f ?n }} }}", "x.rq")
    events = spark.createDataFrame(event_rows([mention(1, 1, 1)]), EVENT_DDL)
    with pytest.raises(QueryError, match="is not in the run's allowed endpoints"):
        detect(events, queries, services=ServiceOptions(allow=[f"{E}"[:-1]]))


def test_service_forms_and_a_query_policy_answer_on_spark_as_in_process(spark, oxigraph_server):
    """OPTIONAL, FILTER and a blank node inside SERVICE, SERVICE inside
    OPTIONAL, and the query's own policy (@service): the workers' engines
    answer as the in-process one."""
    from cep.spark import detect

    followers(oxigraph_server, {u: 40 * u for u in range(1, 7)})
    oxigraph_server.update("INSERT DATA { " + " . ".join(f"<{E}u{u}> <{E}city> <{E}c{u % 2}>" for u in (1, 2, 4))
                           + " }")
    url = oxigraph_server.query_url
    queries = parse_rules(H + f"""@service gamma=8,ranker=LRU
SELECT ?u ?p ?n ?c FROM STREAM <{E}s> [RANGE 4m STEP 2m]
WHERE {{ ?u :mentioned ?p OPTIONAL {{ SERVICE <{url}> {{ ?u :followers ?n ; :followers [] OPTIONAL {{ ?u :city ?c }}
         FILTER(?n > 60) }} }} }}
""", "forms.rq")
    stream = [mention(1 + (i * 5) % 8, i, i) for i in range(1, 20)]
    options = ServiceOptions(allow=[oxigraph_server.base], proposer="WST")
    engine = Engine(queries, services=options)
    expected = engine.push(stream) + engine.flush()
    events = spark.createDataFrame(event_rows(stream), EVENT_DDL)
    answers, others = split_rows(output_columns(detect(events, queries, buckets=3, services=options)).collect())
    assert not others
    assert {a.binding("c") for a in expected} > {None} and {a.binding("n") for a in expected} > {None}
    assert Counter(answers) == Counter(expected)


def test_a_workers_bucket_of_a_key_is_the_routers(spark):
    """A group keeps the SERVICE entries of its bucket (cep.spark.worker.
    view_part): the worker's bucket_of must be the router's pmod(xxhash64)."""
    from pyspark.sql import functions as F

    from cep.spark.routing import bucket_of

    words = [f"<{E}u{u}>" for u in range(20)] + ["", "é<http://ex.org/ü>" * 3, '"5"', "x" * 45]
    rows = (spark.createDataFrame([(w,) for w in words], "s string")
            .select("s", F.pmod(F.xxhash64("s"), F.lit(3)).alias("b")).collect())
    assert [r.b for r in rows] == [bucket_of(r.s, 3) for r in rows]


def test_a_service_query_over_an_unbounded_window_answers_on_spark_as_in_process(spark, oxigraph_server):
    """RANGE UNBOUNDED with SERVICE (one group reads every event, its
    view whole) and a budget smaller than its candidates: each evaluation
    rejoins every solution since t0, as in process."""
    from cep.spark import detect
    from tests.unit.test_service_unbounded import UNBOUNDED, X

    followers(oxigraph_server, {u: (u * 7919) % 30000 for u in range(1, 9)})
    queries = parse_rules(X + UNBOUNDED.format(
        from_="", background=f"SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }}"), "remote.rq")
    stream = [mention(1 + (i * 5) % 8, i, i) for i in range(1, 25)]
    options = ServiceOptions(allow=[oxigraph_server.base], gamma=2, ranker="LRU")
    engine = Engine(queries, services=options)
    expected = engine.push(stream) + engine.flush()
    events = spark.createDataFrame(event_rows(stream), EVENT_DDL)
    answers, others = split_rows(output_columns(detect(events, queries, buckets=3, services=options)).collect())
    assert not others
    assert expected and Counter(answers) == Counter(expected)


def test_the_evaluations_after_the_last_instant_are_maintained_on_spark_as_in_process(spark, oxigraph_server):
    """Each evaluation after the stream's last instant has its own
    maintenance in the workers too: three users whose counts changed
    after the initial pull, one refresh per evaluation (one group, so
    that the budget is over the same candidates as in process), and the
    windows from the third evaluation on read every user's new count."""
    from cep.spark import detect
    from tests.unit.test_service import MIN, PINNED, PINNED_STREAM, pinned_run

    def both(queries, options):
        engine = Engine(queries, services=options)
        expected = engine.push(PINNED_STREAM) + engine.flush()
        events = spark.createDataFrame(event_rows(PINNED_STREAM), EVENT_DDL)
        return expected, split_rows(output_columns(detect(events, queries, buckets=1, services=options)).collect())

    expected, (answers, others) = pinned_run(oxigraph_server, PINNED, both)
    assert not others
    assert {a.binding("u") for a in answers if a.end // MIN == 3 and '"2"' in a.binding("n")} == {
        f"<{E}u{u}>" for u in (1, 2, 3)}
    assert expected and Counter(answers) == Counter(expected)


def test_cep_run_on_spark_writes_the_service_reports_of_the_in_process_run(spark, oxigraph_server, tmp_path,
                                                                           monkeypatch, capsys):
    """--service-report on Spark: the workers return each evaluation's
    report, and the console's run writes them as JSON Lines, with the
    group and bucket that made them. In one group (one bucket: the budget
    is over the same candidates as in process) they are the in-process
    run's, evaluation for evaluation (the latency apart)."""
    import json

    import cep.spark
    from cep import cli
    from tests.unit.test_service import report_run

    plan = cep.spark.plan
    monkeypatch.setattr(cep.spark, "plan", lambda queries, buckets, *a, **k: plan(queries, 1, *a, **k))
    run, log = report_run(oxigraph_server, tmp_path)
    assert cli.main(run) == 0, capsys.readouterr().err
    local = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    assert cli.main(run + ["--engine", "spark"]) == 0, capsys.readouterr().err
    on_spark = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(local) == 6 and sum(r["refreshes"] for r in local) == 5
    assert all((r.pop("group"), r.pop("bucket")) == (0, 0) and r.pop("latency") > 0 for r in on_spark)
    assert all(r.pop("latency") > 0 for r in local)
    assert on_spark == local


def test_service_in_groups_with_windows_of_their_own_answers_on_spark_as_the_reference(spark, oxigraph_server):
    """SERVICE in the groups of queries whose groups have windows of their
    own (tests/unit/test_service_reference.py): over an endpoint that does
    not change, the workers' answers are the reference's."""
    import random

    from cep import reference
    from cep.spark import detect
    from tests.unit.test_service_reference import GROUP_QUERIES, random_case

    url = oxigraph_server.query_url
    graph, stream = random_case(random.Random(7))
    oxigraph_server.update("DELETE WHERE { ?s ?p ?o }")
    oxigraph_server.update("INSERT DATA { " + " . ".join(" ".join(t) for t in sorted(graph)) + " }")
    queries = parse_rules(H + GROUP_QUERIES.format(url=url), "groups.rq")
    expected = reference.evaluate(queries, stream, services={url: graph})
    events = spark.createDataFrame(event_rows(stream), EVENT_DDL)
    options = ServiceOptions(allow=[oxigraph_server.base], gamma=100)
    answers, others = split_rows(output_columns(detect(events, queries, buckets=3, services=options)).collect())
    assert not others
    assert {a.query for a in expected} == {"first", "other", "joined", "optional", "counted"}
    assert Counter(answers) == Counter(expected)


def test_service_joined_above_groups_with_windows_of_their_own_answers_on_spark_as_the_reference(
        spark, oxigraph_server):
    """SERVICE joined above the groups of queries whose groups have windows
    of their own, and in queries whose first group counts events
    (tests/unit/test_service_reference.py, ABOVE_QUERIES, COUNTED_QUERIES):
    over an endpoint that does not change, the workers' answers are the
    reference's. They were refused on the driver."""
    import random

    from cep import reference
    from cep.spark import detect
    from tests.unit.test_service_reference import ABOVE_QUERIES, COUNTED_QUERIES, random_case

    url = oxigraph_server.query_url
    graph, stream = random_case(random.Random(7))
    oxigraph_server.update("DELETE WHERE { ?s ?p ?o }")
    oxigraph_server.update("INSERT DATA { " + " . ".join(" ".join(t) for t in sorted(graph)) + " }")
    queries = parse_rules(H + (ABOVE_QUERIES + "\n" + COUNTED_QUERIES).format(url=url), "above.rq")
    expected = reference.evaluate(queries, stream, services={url: graph})
    events = spark.createDataFrame(event_rows(stream), EVENT_DDL)
    options = ServiceOptions(allow=[oxigraph_server.base], gamma=100)
    answers, others = split_rows(output_columns(detect(events, queries, buckets=3, services=options)).collect())
    assert not others
    assert {a.query for a in expected} == {"union", "joined", "second", "counted", "inside", "later", "above"}
    assert Counter(answers) == Counter(expected)


def test_service_in_a_union_operands_group_is_maintained_on_spark_as_in_process(spark, oxigraph_server):
    """The view of a SERVICE in the other operand's group of a UNION
    around the first group is maintained at the query's evaluations, those
    of the other group's window too, in the workers as in process: three
    users like a post at 1, their counts changed after the initial pull
    (1 to 2), one refresh per evaluation (one group, LRU): at 2 (the first
    group's window; the :liked group's has not closed) u1's, at 3 (the
    :liked group's alone) u2's, so its window (0,3] reads u3's old count
    there, and at 4 u3's, read over the same window (0,3], closed last."""
    from cep.spark import detect
    from tests.unit.test_service import MIN, like, pinned_run

    text = H + ("SELECT ?u ?p ?n FROM STREAM <http://e/s> WINDOW RANGE 2 MINUTE FIXED WHERE {{ "
                "{{ ?u :mentioned ?p }} UNION {{ ?u :liked ?p SERVICE <{url}> {{ ?u :followers ?n }} "
                "WINDOW RANGE 3 MINUTE FIXED }} }}")
    stream = [like(u, 1, u) for u in (1, 2, 3)] + [mention(1, 2, 9)]

    def both(queries, options):
        engine = Engine(queries, services=options)
        expected = engine.push(stream) + engine.flush()
        events = spark.createDataFrame(event_rows(stream), EVENT_DDL)
        return expected, split_rows(output_columns(detect(events, queries, buckets=1, services=options)).collect())

    expected, (answers, others) = pinned_run(oxigraph_server, text, both)
    assert not others
    counts = sorted((a.end // MIN, int(a.binding("u")[-2]), int(a.binding("n").split('"')[1])) for a in answers
                    if a.binding("n") is not None)
    assert counts == [(3, 1, 2), (3, 2, 2), (3, 3, 1), (4, 1, 2), (4, 2, 2), (4, 3, 2)]
    assert Counter(answers) == Counter(expected)
