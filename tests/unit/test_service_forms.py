"""SERVICE beyond one run-wide policy over a basic graph pattern
(docs/language.md, "SERVICE"): a query's own policy (`@service`), against
a real endpoint (Oxigraph, tests/endpoint.py)."""

import pytest

from cep.algebra import sexpr
from cep.engine import Engine
from cep.errors import QueryError
from cep.rules import parse_rules
from cep.service.options import ServiceOptions
from tests.endpoint import oxigraph_server  # noqa: F401 (the fixture)
from tests.unit.test_service import E, H, MIN, followers, mention

COUNTED = """{annotation}
REGISTER QUERY {name} AS
SELECT ?u ?p ?n FROM STREAM <http://e/s> [RANGE 3m STEP 1m]
WHERE {{ ?u :mentioned ?p . SERVICE <{url}> {{ ?u :followers ?n }} }}
"""


def test_service_annotation_is_a_query_option_with_a_text_that_reads_back():
    (q,) = parse_rules(H + "@service gamma=2, ranker=lru\n"
                           "SELECT * { ?u :m ?p SERVICE <http://h:1/q> { ?u :f ?n } }", "x.rq")
    assert q.option("service") == "gamma=2,ranker=lru"
    assert sexpr.read_query(q.name, sexpr.query(q)) == q


@pytest.mark.parametrize("annotation, message", [
    ("@service allow=http://h:2", "2:1: @service 'allow=http://h:2': expected key=value with key view"),
    ("@service gamma=1,rho=2", "2:1: @service: give the refresh budget gamma or the latency bound rho"),
    ("@service ranker=MRU", "2:1: @service: unknown SERVICE ranker 'MRU'"),
    ("@service gamma=-1", "2:1: @service: gamma is a number of refreshes"),
    ("@service gamma=1,gamma=2", "2:1: @service 'gamma=2': gamma is given twice"),
    ("@service", "2:1: @service takes key=value,..."),
])
def test_what_the_service_annotation_does_not_take(annotation, message):
    with pytest.raises(QueryError) as e:
        parse_rules(H + annotation + "\nSELECT * { ?u :m ?p SERVICE <http://h:1/q> { ?u :f ?n } }", "x.rq")
    assert str(e.value).startswith("x.rq:" + message)


def test_a_service_annotation_on_a_query_without_service_is_refused():
    with pytest.raises(QueryError) as e:
        parse_rules(H + "@service gamma=1\nSELECT * { ?u :m ?p }", "x.rq")
    assert str(e.value).startswith("x.rq:3:1: @service sets the policy of the query's SERVICE patterns: "
                                   "the query has none")


def test_a_query_policy_replaces_the_runs_for_its_views_only(oxigraph_server):
    """Two queries with the same SERVICE over the same stream: `never`
    says proposer=WST (never refreshed), `fresh` keeps the run's LRU with
    a budget that covers every user. After the endpoint changes, `fresh`
    reads the new counts at its next evaluation, `never` keeps the
    pulled ones; their reports say so."""
    followers(oxigraph_server, {1: 1, 2: 1})
    url = oxigraph_server.query_url
    queries = parse_rules(H + COUNTED.format(annotation="@service proposer=WST", name="never", url=url)
                          + COUNTED.format(annotation="", name="fresh", url=url), "x.rq")
    engine = Engine(queries, services=ServiceOptions(allow=[oxigraph_server.base], gamma=2, ranker="LRU"))
    answers = []
    for minute in range(1, 7):
        if minute == 3:
            followers(oxigraph_server, {1: 2, 2: 2})
        answers += engine.push([mention(u, minute, minute * 10 + u) for u in (1, 2)])
        answers += engine.flush_table(final=False).to_list()
    answers += engine.flush()
    counts = {(a.query, a.end // MIN, a.binding("n").split('"')[1]) for a in answers}
    assert {n for q, end, n in counts if q == "never"} == {"1"}
    assert {(end >= 3, n) for q, end, n in counts if q == "fresh"} == {(False, "1"), (True, "2")}
    refreshes = {q: sum(r.refreshes for r in engine.services.reports if r.query == q) for q in ("never", "fresh")}
    assert refreshes["never"] == 0 and refreshes["fresh"] > 0


def test_a_query_gamma_replaces_the_runs_rho_and_a_query_seed_its_own_random_choices(oxigraph_server):
    followers(oxigraph_server, {u: u for u in range(1, 5)})
    (q,) = parse_rules(H + COUNTED.format(annotation="@service gamma=3,ranker=RND,seed=7", name="q",
                                          url=oxigraph_server.query_url), "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], rho=1e-9))
    engine.push([mention(u, m, 10 * m + u) for m in range(1, 6) for u in range(1, 5)])
    engine.flush()
    reports = [r for r in engine.services.reports if r.time >= 2 * MIN]
    assert reports and all(r.budget == 3 and r.refreshes == 3 for r in reports)
    saved = engine.services.state()
    assert "rng" in saved["views"][0]  # its own generator, kept with the engine's state
    again = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], rho=1e-9))
    again.services.restore(saved)
    assert again.services.states[0].rng.getstate() == engine.services.states[0].rng.getstate()


def test_explain_shows_a_querys_own_service_policy(tmp_path, capsys):
    from cep import cli

    rules = tmp_path / "q.rq"
    rules.write_text(H + COUNTED.format(annotation="@service ranker=LRU,view=off", name="q", url="http://h:1/q"))
    assert cli.main(["explain", str(rules)]) == 0
    assert "    policy: its query's @service ranker=LRU,view=off, the run's for the other keys" in \
        capsys.readouterr().out
