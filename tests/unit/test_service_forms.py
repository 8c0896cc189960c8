"""SERVICE beyond one run-wide policy over a basic graph pattern
(docs/language.md, "SERVICE"): a query's own policy (`@service`); FILTER,
OPTIONAL and blank nodes inside SERVICE, and SERVICE inside OPTIONAL, as
SPARQL 1.1 Federated Query defines them; against a real endpoint
(Oxigraph, tests/endpoint.py). tests/unit/test_service_reference.py draws
these forms on random streams against the reference evaluator."""

import pytest

from cep.algebra import sexpr
from cep.engine import Engine
from cep.errors import QueryError
from cep.rules import parse_rules
from cep.service.options import ServiceOptions
from tests.endpoint import Scripted, oxigraph_server  # noqa: F401 (the fixture)
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


def run(server, query: str, events, **policy):
    (q,) = parse_rules(H + query.replace("URL", server.query_url), "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[server.base], **policy))
    answers = engine.push(events) + engine.flush()
    return q, engine, sorted((a.end // MIN, tuple(sorted((k, v.split('"')[1] if '"' in v else v)
                                                          for k, v in a.bindings))) for a in answers)


def profile(server):
    followers(server, {1: 20000, 2: 5, 3: 700})
    server.update(f"INSERT DATA {{ <{E}u1> <{E}city> <{E}rome> . <{E}u3> <{E}city> <{E}oslo> }}")


U = {u: f"<{E}u{u}>" for u in range(1, 5)}
P = {p: f"<{E}p{p}>" for p in range(1, 5)}


def test_optional_inside_service_leaves_its_variables_unbound_where_the_endpoint_has_none(oxigraph_server):
    profile(oxigraph_server)
    _, _, got = run(oxigraph_server, "SELECT * { ?u :mentioned ?p SERVICE <URL> { ?u :followers ?n "
                                     "OPTIONAL { ?u :city ?c } } }", [mention(u, u, u) for u in (1, 2, 4)])
    assert got == [(1, (("c", f"<{E}rome>"), ("n", "20000"), ("p", P[1]), ("u", U[1]))),
                   (2, (("n", "5"), ("p", P[2]), ("u", U[2])))]


def test_a_filter_inside_service_reads_the_service_group_only(oxigraph_server):
    """FILTER(?n > ?min): ?min is bound by the stream, outside the SERVICE
    group, where SPARQL evaluates the group on its own: unbound there, so
    the FILTER is an error and keeps nothing (with a warning); a FILTER on
    the group's own variables keeps the view's solutions it holds for."""
    profile(oxigraph_server)
    events = [mention(u, u, u) for u in (1, 2, 3)]
    _, _, got = run(oxigraph_server, "SELECT ?u ?n { ?u :mentioned ?p SERVICE <URL> { ?u :followers ?n "
                                     "FILTER(?n > 100) } }", events)
    assert got == [(1, (("n", "20000"), ("u", U[1]))), (3, (("n", "700"), ("u", U[3])))]
    q, _, got = run(oxigraph_server, "SELECT ?u ?n { ?u :mentioned ?p BIND(1 AS ?min) SERVICE <URL> { "
                                     "?u :followers ?n FILTER(?n > ?min) } }", events)
    assert got == [] and any("?min in the FILTER is never bound" in w for w in q.warnings)


def test_a_blank_node_inside_service_is_a_variable_the_answers_do_not_show(oxigraph_server):
    """Two distinct friends named alike: the pattern ?u :knows [ :name ?l ]
    has two solutions at the endpoint (one per blank node), as SPARQL
    counts them."""
    oxigraph_server.update(f"INSERT DATA {{ <{E}u1> <{E}knows> _:a, _:b . _:a <{E}name> \"ann\" . "
                           f"_:b <{E}name> \"ann\" }}")
    _, _, got = run(oxigraph_server, "SELECT ?u ?l { ?u :mentioned ?p SERVICE <URL> { ?u :knows [ :name ?l ] } }",
                    [mention(1, 1, 1), mention(2, 2, 2)])
    assert got == [(1, (("l", "ann"), ("u", U[1])))] * 2


def test_service_inside_optional_keeps_a_solution_without_a_match(oxigraph_server):
    profile(oxigraph_server)
    _, _, got = run(oxigraph_server, "SELECT * { ?u :mentioned ?p OPTIONAL { SERVICE <URL> { ?u :followers ?n } "
                                     "FILTER(?n > 100 && ?p != :p3) } }", [mention(u, u, u) for u in (1, 2, 3, 4)])
    assert got == [(1, (("n", "20000"), ("p", P[1]), ("u", U[1]))), (2, (("p", P[2]), ("u", U[2]))),
                   (3, (("p", P[3]), ("u", U[3]))), (4, (("p", P[4]), ("u", U[4])))]


def test_a_windowed_optional_service_is_joined_at_each_evaluation_with_the_view_maintained_for_it(oxigraph_server):
    """A user's count changes at minute 3: every window evaluated from then
    on joins the solutions it holds with the new count (the LRU budget
    covers both users), including the solutions found before; a user the
    endpoint does not know is kept alone."""
    followers(oxigraph_server, {1: 1})
    (q,) = parse_rules(H + f"SELECT ?u ?p ?n FROM STREAM <{E}s> [RANGE 3m STEP 1m] WHERE {{ ?u :mentioned ?p "
                           f"OPTIONAL {{ SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }} }} }}", "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], gamma=2, ranker="LRU"))
    answers = []
    for minute in range(1, 6):
        if minute == 3:
            followers(oxigraph_server, {1: 2})
        answers += engine.push([mention(1, minute, 10 * minute + 1), mention(2, minute, 10 * minute + 2)])
        answers += engine.flush_table(final=False).to_list()
    answers += engine.flush()
    seen = {(a.binding("u"), a.end // MIN >= 3, (a.binding("n") or "-").split('"')[-2:][0]) for a in answers}
    assert seen == {(U[1], False, "1"), (U[1], True, "2"), (U[2], False, "-"), (U[2], True, "-")}
    assert any(a.binding("p") == f"<{E}p11>" and a.end // MIN == 3 and '"2"' in a.binding("n") for a in answers)


def test_silent_with_a_failed_endpoint_joins_its_empty_solution_whatever_its_filter(tmp_path):
    with Scripted(b"", status=500) as server:
        (q,) = parse_rules(H + f"SELECT ?u ?n {{ ?u :mentioned ?p SERVICE SILENT <{server.url}> "
                               f"{{ ?u :followers ?n FILTER(?n > 100) }} }}", "x.rq")
        engine = Engine([q], services=ServiceOptions(allow=[server.url]))
        got = engine.push([mention(1, 1, 1)]) + engine.flush()
    assert [(a.binding("u"), a.binding("n")) for a in got] == [(U[1], None)]


def test_a_join_key_bound_only_in_an_optional_group_of_the_service_is_refused():
    (q,) = parse_rules(H + "SELECT * { ?u :mentioned ?p SERVICE <http://h:1/q> { ?x :followers ?n "
                           "OPTIONAL { ?x :alias ?u } } }", "x.rq")
    with pytest.raises(QueryError) as e:
        Engine([q], services=ServiceOptions(allow=["http://h:1"]))
    assert str(e.value).startswith("x.rq:2:29: SERVICE <http://h:1/q>: its join key ?u is bound only in its "
                                   "OPTIONAL part")


def test_service_forms_have_a_text_that_reads_back():
    (q,) = parse_rules(H + "SELECT * { ?u :m ?p OPTIONAL { SERVICE <http://h/q> { ?u :f ?n ; :g [] "
                           "OPTIONAL { ?u :c ?c } OPTIONAL { ?c :d ?d } FILTER(?n > 3) } FILTER(?n < 9) } }", "x.rq")
    assert sexpr.read_query(q.name, sexpr.query(q)) == q
    service = q.pattern.right
    assert [len(part) for part in service.optional] == [1, 1] and service.filter is not None


def liked(user: int, minute: int, thing: int):
    from cep.events import Event
    return Event(f"<{E}u{user}>", f"<{E}liked>", f"<{E}x{thing}>", minute * MIN, minute * MIN)


DEEP = ("SELECT ?u ?p ?n ?q FROM STREAM <http://e/s> [RANGE 5m STEP 1m] WHERE {{ {{ ?u :mentioned ?p . "
        "SERVICE <{url}> {{ ?u :followers ?n }} }} SEQ {{ ?u :liked ?q {extra}}} }}")


def test_a_service_deep_in_a_windowed_pattern_is_joined_at_each_evaluation(oxigraph_server):
    """SERVICE inside a SEQ operand: its join is taken to the top of the
    pattern (the same solutions), so the solution found at minute 2 is
    joined, at each later evaluation, with the view maintained for it:
    the count read from minute 3 on."""
    followers(oxigraph_server, {1: 1})
    (q,) = parse_rules(H + DEEP.format(url=oxigraph_server.query_url, extra=""), "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], gamma=1, ranker="LRU"))
    answers = []
    for minute, events in ((1, [mention(1, 1, 1)]), (2, [liked(1, 2, 1)]), (3, []), (4, []), (5, [])):
        if minute == 3:
            followers(oxigraph_server, {1: 2})
        answers += engine.push(events + [mention(9, minute, 90 + minute)])
        answers += engine.flush_table(final=False).to_list()
    answers += engine.flush()
    seen = sorted({(a.end // MIN, a.binding("n").split('"')[1]) for a in answers if a.binding("u") == U[1]})
    assert seen[0] == (2, "1") and all(n == "2" for end, n in seen if end >= 3) and len(seen) > 2


def test_a_service_whose_variables_the_rest_of_the_pattern_reads_is_joined_when_found(tmp_path, capsys):
    from cep import cli

    rules = tmp_path / "q.rq"
    rules.write_text(H + DEEP.format(url="http://h:1/q", extra=". ?q :rated ?n "))
    assert cli.main(["explain", str(rules)]) == 0
    assert "joined when a stream solution is found" in capsys.readouterr().out
    rules.write_text(H + DEEP.format(url="http://h:1/q", extra=""))
    assert cli.main(["explain", str(rules)]) == 0
    assert "joined at each evaluation of the window, after its maintenance" in capsys.readouterr().out


def test_xxh64_is_the_specifications():
    from cep.spark.routing import bucket_of, xxh64

    assert [xxh64(b""), xxh64(b"a"), xxh64(b"abc"), xxh64(b"Nobody inspects the spammish repetition")] == [
        0xEF46DB3751D8E999, 0xD24EC4F1A98C6E5B, 0x44BC2CF5AD770999, 0xFBCEA83C8A378BF1]
    assert {bucket_of(f"<{E}u{u}>", 3) for u in range(30)} == {0, 1, 2}


def test_a_spark_group_holds_the_part_of_the_view_its_bucket_needs(oxigraph_server):
    """On Spark a group gets the events whose partition value (?u) falls in
    its bucket: its engine keeps the view entries of those users only,
    and the groups' parts together are the whole view. (That the answers
    are the in-process engine's: tests/spark/test_service_spark.py.)"""
    from cep.spark import plan, worker
    from cep.spark.routing import bucket_of

    followers(oxigraph_server, {u: u for u in range(1, 13)})
    queries = parse_rules(H + COUNTED.format(annotation="", name="q", url=oxigraph_server.query_url), "x.rq")
    spec = plan(queries, buckets=3, services=ServiceOptions(allow=[oxigraph_server.base]))
    assert spec.buckets == (3,)
    parts = []
    for bucket in range(3):
        engine = worker._engine(spec, 0, bucket)[0]
        keys = {key[0] for key in engine.services.states[0].view.entries}
        assert keys and all(bucket_of(k, 3) == bucket for k in keys)
        parts.append(keys)
        state = engine.state()  # a restored group holds its part too
        engine.restore(state)
        assert {key[0] for key in engine.services.states[0].view.entries} == keys
    assert set().union(*parts) == {f"<{E}u{u}>" for u in range(1, 13)} and sum(map(len, parts)) == 12
