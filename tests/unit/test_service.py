"""SERVICE (SPARQL 1.1 Federated Query) in rules: its syntax and algebra,
the run's allow-list, and its answers against a real endpoint (Oxigraph,
tests/endpoint.py), compared with the same query over the same data
given locally as background."""

from pathlib import Path

import pytest

from cep.algebra import ops, sexpr
from cep.engine import Engine
from cep.errors import QueryError
from cep.events import Event
from cep.rules import parse_rules
from cep.service.options import ServiceOptions
from tests.endpoint import Scripted, oxigraph_server  # noqa: F401 (the fixture)

E = "http://e/"
MIN = 60_000
H = f"PREFIX : <{E}>\n"


def mention(user: int, minute: int, post: int, end_minute=None) -> Event:
    end = minute if end_minute is None else end_minute
    return Event(f"<{E}u{user}>", f"<{E}mentioned>", f"<{E}p{post}>", minute * MIN, end * MIN)


def followers(server, counts: dict):
    """The endpoint's follower counts made `counts` (user -> count)."""
    server.update(f"DELETE WHERE {{ ?u <{E}followers> ?n }}")
    if counts:
        server.update("INSERT DATA { " + " . ".join(f"<{E}u{u}> <{E}followers> {n}" for u, n in counts.items())
                      + " }")


def rows(answers):
    return sorted((a.start // MIN, a.end // MIN, tuple(sorted(a.bindings))) for a in answers)


def test_service_is_a_pattern_of_the_algebra_with_a_text_that_reads_back():
    (q,) = parse_rules(H + "SELECT * { ?u :mentioned ?p SERVICE SILENT <http://h:1/sparql> "
                           "{ ?u :followers ?n ; :name ?l } }", "x.rq")
    service = q.pattern.right
    assert isinstance(service, ops.Service) and service.silent and service.endpoint == "http://h:1/sparql"
    assert service.vars == (ops.Var("l"), ops.Var("n"), ops.Var("u"))
    assert ops.is_table(service)
    assert sexpr.read_query(q.name, sexpr.query(q)) == q


@pytest.mark.parametrize("text, message", [
    ("SELECT * { ?u :m ?p SERVICE ?e { ?u :f ?n } }", "2:29: SERVICE ?e: an endpoint named by a variable"),
    ("SELECT * { ?u :m ?p SERVICE <ftp://h/x> { ?u :f ?n } }", "2:29: SERVICE <ftp://h/x>: an endpoint is an http"),
    ("SELECT * { ?u :m ?p SERVICE <http://h/> { ?u :f ?n OPTIONAL { ?u :c ?c FILTER(?c > 1) } } }",
     "2:41: SERVICE { ... } takes triple patterns"),
    ("SELECT * { ?u :m ?p SERVICE <http://h/> { ?u :f ?n OPTIONAL { ?u :c ?c } ?u :g ?g } }",
     "2:41: SERVICE { ... } takes triple patterns"),
    ("SELECT * { ?u :m ?p SERVICE <http://h/> { { ?u :f ?n } UNION { ?u :g ?n } } }",
     "2:41: SERVICE { ... } takes triple patterns"),
    ("SELECT * { ?u :m ?p SERVICE <http://h/> { ?u :f+ ?n } }", "2:41: SERVICE { ... } takes triple patterns"),
])
def test_what_service_does_not_take(text, message):
    with pytest.raises(QueryError) as e:
        parse_rules(H + text, "x.rq")
    assert str(e.value).startswith("x.rq:" + message)


def like(user: int, minute: int, post: int) -> Event:
    return Event(f"<{E}u{user}>", f"<{E}liked>", f"<{E}p{post}>", minute * MIN, minute * MIN)


# Groups with windows of their own (Streaming SPARQL), the query's window
# 2 minutes FIXED (closes at 2, 4, 6, ...) and the :liked group's 3
# minutes FIXED (3, 6, ...), so that a UNION's leading groups make the
# query's evaluations 2, 3, 4, 6, ...; at each, each group reads the
# window it closed last (docs/language.md, "A window per pattern"), and a
# SERVICE is joined with its group's solutions there, with the view
# maintained for that evaluation. The stream: u1 mentions p1 at 1 and
# likes p2 at 2, mentions p3 at 3 (the evaluations up to 2 made), u3 (no
# count at the endpoint) mentions p4 at 4 (those up to 3 made), the end
# of the stream (4, 6). The endpoint's counts are 1 for the evaluations up
# to 2, then 5, then 7 from 4 on. Rows: (start, end, ?u, ?p, ?n).
SERVICE_IN_GROUPS = {
    # 2: (0,2] holds p1, the view as pulled; 3: the first group's window
    # is (0,2] still, the :liked group's (0,3] p2, the view maintained at
    # 3 (an evaluation of the :liked window's alone), u1's count 5; 4:
    # (2,4] holds p3 with u1's count at 4, 7 (found when it was 5), and
    # p4 (u3: no partner), the :liked group's (0,3] p2 again
    "first group": ("{{ {{ ?u :mentioned ?p SERVICE <{url}> {{ ?u :followers ?n }} }} UNION "
                    "{{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} }}",
                    [(0, 2, 1, 1, 1), (0, 3, 1, 1, 5), (0, 3, 1, 2, None), (2, 4, 1, 2, None), (2, 4, 1, 3, 7)]),
    # the :liked group's p2 at 3 with u1's count then, 5, and at 4 (its
    # window (0,3] closed last) with the count at 4, 7
    "other group": ("{{ {{ ?u :mentioned ?p }} UNION {{ ?u :liked ?p SERVICE <{url}> {{ ?u :followers ?n }} "
                    "WINDOW RANGE 3 MINUTE FIXED }} }}",
                    [(0, 2, 1, 1, None), (0, 3, 1, 1, None), (0, 3, 1, 2, 5), (2, 4, 1, 2, 7), (2, 4, 1, 3, None),
                     (2, 4, 3, 4, None)]),
    # no UNION: evaluated at 2, 4, 6; at 2 the :liked group has not
    # closed (no answer); at 4 (2,4] holds p3, joined with the :liked
    # group's (0,3] (u1 liked p2) and u1's count at 4, 7
    "no UNION": ("?u :mentioned ?p SERVICE <{url}> {{ ?u :followers ?n }} "
                 "{{ ?u :liked ?q WINDOW RANGE 3 MINUTE FIXED }}",
                 [(2, 4, 1, 3, 7)]),
}


@pytest.mark.parametrize("where, expected", SERVICE_IN_GROUPS.values(), ids=SERVICE_IN_GROUPS.keys())
def test_service_in_a_query_whose_groups_have_windows_of_their_own(oxigraph_server, where, expected):
    """Each evaluation joins each group's solutions in its window with the
    view as maintained for that evaluation, at the times of every leading
    group's window (hand-checked above). The engine gave no answers where
    the SERVICE was in the first group and the reference gives them,
    failed with a KeyError in the UNION's other group, and maintained the
    view at the first group's times alone."""
    followers(oxigraph_server, {1: 1})
    (q,) = parse_rules(H + f"SELECT ?u ?p ?n FROM STREAM <{E}s> WINDOW RANGE 2 MINUTE FIXED WHERE {{ "
                       + where.format(url=oxigraph_server.query_url) + " }", "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base]))
    got = engine.push([mention(1, 1, 1), like(1, 2, 2)]) + engine.push([mention(1, 3, 3)])
    followers(oxigraph_server, {1: 5})
    got += engine.push([mention(3, 4, 4)])
    followers(oxigraph_server, {1: 7})
    got += engine.flush()

    def row(a):
        n = a.binding("n")
        return (a.start // MIN, a.end // MIN, int(a.binding("u")[-2]), int(a.binding("p")[-2]),
                None if n is None else int(n.split('"')[1]))
    assert sorted(map(row, got)) == expected


# A SERVICE joined above the groups is joined with each group that binds
# its join key (a join distributes over UNION, and joins commute), so
# each evaluation joins the groups' combined solutions with the view as
# maintained for it (docs/language.md, "SERVICE"); the stream, the
# windows and the endpoint's counts as above
ABOVE_THE_GROUPS = {
    # a UNION of the groups: the first group's rows with u1's count at
    # each evaluation (p1 at 2 with 1, at 3 with 5; p3 at 4 with 7; u3's
    # p4 has no partner), and the :liked group's p2 at 3 (5) and at 4 (7)
    "UNION": ("{{ {{ ?u :mentioned ?p }} UNION {{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} }} "
              "SERVICE <{url}> {{ ?u :followers ?n }}",
              [(0, 2, 1, 1, 1), (0, 3, 1, 1, 5), (0, 3, 1, 2, 5), (2, 4, 1, 2, 7), (2, 4, 1, 3, 7)]),
    # and a FILTER above reading the view's variable: at 2 u1's count is 1
    "UNION, FILTER": ("{{ {{ ?u :mentioned ?p }} UNION {{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} }} "
                      "SERVICE <{url}> {{ ?u :followers ?n }} FILTER(?n > 4)",
                      [(0, 3, 1, 1, 5), (0, 3, 1, 2, 5), (2, 4, 1, 2, 7), (2, 4, 1, 3, 7)]),
    # a join of two groups with windows of their own: evaluated at 2, 4,
    # 6; at 4 (2,4] holds p3, joined with the :liked group's (0,3] and
    # u1's count at 4, 7
    "join": ("{{ ?u :mentioned ?p WINDOW RANGE 2 MINUTE FIXED }} {{ ?u :liked ?q WINDOW RANGE 3 MINUTE FIXED }} "
             "SERVICE <{url}> {{ ?u :followers ?n }}",
             [(2, 4, 1, 3, 7)]),
}


@pytest.mark.parametrize("where, expected", ABOVE_THE_GROUPS.values(), ids=ABOVE_THE_GROUPS.keys())
def test_service_joined_above_groups_with_windows_of_their_own(oxigraph_server, where, expected):
    """Hand-checked above, over an endpoint whose counts change between
    evaluations: the view is maintained for each of the query's
    evaluations and joined with the groups' solutions there. It was
    refused ("SERVICE joined with groups that have windows of their own
    is not supported")."""
    test_service_in_a_query_whose_groups_have_windows_of_their_own(oxigraph_server, where, expected)


# OPTIONAL { SERVICE } above the groups is no join with them: refused
OPTIONAL_ABOVE = (f"SELECT * FROM STREAM <{E}s> WINDOW RANGE 2 MINUTE FIXED WHERE {{ {{ {{ ?u :mentioned ?p }} "
                  f"UNION {{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} }} "
                  f"OPTIONAL {{ SERVICE <http://127.0.0.1:9/q> {{ ?u :followers ?n }} }} }}")


@pytest.mark.parametrize("line, message", [
    (OPTIONAL_ABOVE, "SERVICE over groups that have windows of their own is supported joined with them"),
    # the first group says when the query is evaluated
    (f"SELECT * FROM STREAM <{E}s> WINDOW RANGE 2 MINUTE FIXED WHERE {{ SERVICE <http://127.0.0.1:9/q> "
     f"{{ ?u :followers ?n }} {{ ?u :liked ?q WINDOW RANGE 3 MINUTE FIXED }} }}",
     "SERVICE written before the groups with windows of their own"),
    # a FILTER between reads the view's variable: joined below it, the SERVICE would change its solutions
    (f"SELECT * FROM STREAM <{E}s> WINDOW RANGE 2 MINUTE FIXED WHERE {{ {{ {{ ?u :mentioned ?p }} UNION "
     f"{{ ?u :liked ?p WINDOW RANGE 3 MINUTE FIXED }} FILTER(!BOUND(?n)) }} SERVICE <http://127.0.0.1:9/q> "
     f"{{ ?u :followers ?n }} }}", "SERVICE joined with groups that have windows of their own is not supported "
                                   "here"),
], ids=["under OPTIONAL", "written first", "a FILTER reads its variable"])
def test_service_above_groups_with_windows_of_their_own_that_no_group_takes_is_refused(line, message):
    """A SERVICE is joined with its groups' solutions in their windows;
    where no group can take it, it is refused at the SERVICE, with what
    to do."""
    (q,) = parse_rules(H + line, "x.rq")
    with pytest.raises(QueryError) as e:
        Engine([q], services=ServiceOptions(allow=["http://127.0.0.1:9"]))
    assert str(e.value).startswith(f"x.rq:2:{line.index('SERVICE') + 1}: {message}"), e.value


def test_service_in_a_group_whose_window_counts_events_under_time_based_evaluations_is_refused():
    """A query evaluated at the times of time-based windows maintains its
    views then, with the entries the solutions in each group's window
    need; a count window's solutions have no time bound that says which:
    refused at the SERVICE."""
    line = (f"SELECT * FROM STREAM <{E}s> WINDOW RANGE 2 MINUTE FIXED WHERE {{ {{ ?u :mentioned ?p }} "
            f"{{ ?u :liked ?q SERVICE <http://127.0.0.1:9/q> {{ ?u :followers ?n }} WINDOW ELEMS 3 }} }}")
    (q,) = parse_rules(H + line, "x.rq")
    with pytest.raises(QueryError) as e:
        Engine([q], services=ServiceOptions(allow=["http://127.0.0.1:9"]))
    assert str(e.value).startswith(f"x.rq:2:{line.index('SERVICE') + 1}: SERVICE in a group whose window counts "
                                   f"events, in a query evaluated at the times of time-based windows"), e.value


# A query whose first group counts events is evaluated at every instant,
# its views maintained as a query's over a count window: before each call
# of the rules, which processes the instants before the latest pushed (an
# instant is complete when a later one comes, or at the end), with the
# entries needed by the solutions found since the last. Two mentions by
# u1 at 1 and 2 are pushed (instant 1 processed: the first maintenance,
# no candidate, the view as pulled: u1's count 1); the count becomes 5;
# u3 mentions p3 at 3 (instant 2 processed: u1's entry a candidate,
# refreshed, 5); the count becomes 7; the end (instant 3: 7). The first
# group's window holds the last 2 events: {p1} at 1, {p1, p2} at 2,
# {p2, p3} at 3 (u3: no partner). The :liked group holds nothing, OPTIONAL.
# Rows: (start, end, ?u, ?p, ?n).
COUNTED_FIRST = [(1, 1, 1, 1, 1), (1, 2, 1, 1, 5), (1, 2, 1, 2, 5), (2, 3, 1, 2, 7)]


@pytest.mark.parametrize("where", [
    "{{ ?u :mentioned ?p SERVICE <{url}> {{ ?u :followers ?n }} WINDOW ELEMS 2 }} "
    "OPTIONAL {{ ?u :liked ?q WINDOW RANGE 3 MINUTE FIXED }}",
    "{{ ?u :mentioned ?p WINDOW ELEMS 2 }} OPTIONAL {{ ?u :liked ?q WINDOW RANGE 3 MINUTE FIXED }} "
    "SERVICE <{url}> {{ ?u :followers ?n }}",
], ids=["in it", "above the groups"])
def test_service_in_a_query_whose_first_group_counts_events(oxigraph_server, where):
    """Hand-checked above, against an endpoint whose counts change between
    pushes: the rows of the same query over one count window (today's
    schedule for such a query). It was refused ("SERVICE in a group whose
    window counts events, or in a query whose first group's does")."""
    followers(oxigraph_server, {1: 1})
    (q,) = parse_rules(H + f"SELECT ?u ?p ?n FROM STREAM <{E}s> WINDOW RANGE 2 MINUTE FIXED WHERE {{ "
                       + where.format(url=oxigraph_server.query_url) + " }", "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base]))
    got = engine.push([mention(1, 1, 1), mention(1, 2, 2)])
    followers(oxigraph_server, {1: 5})
    got += engine.push([mention(3, 3, 3)])
    followers(oxigraph_server, {1: 7})
    got += engine.flush()

    def row(a):
        return (a.start // MIN, a.end // MIN, int(a.binding("u")[-2]), int(a.binding("p")[-2]),
                int(a.binding("n").split('"')[1]))
    assert sorted(map(row, got)) == COUNTED_FIRST


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_cep_run_refuses_service_above_such_groups_on_either_engine(tmp_path, capsys, engine):
    """The refusal is the compiler's: `cep run` says it with the file,
    line and column, on the driver before Spark starts."""
    from cep import cli

    rules = tmp_path / "q.rq"
    rules.write_text(H + OPTIONAL_ABOVE + "\n")
    events = tmp_path / "e.trig"
    events.write_text(f"<{E}g> {{ <{E}u1> <{E}mentioned> <{E}p1> }}\n")
    assert cli.main(["run", str(rules), "--events", str(events), "--engine", engine,
                     "--service-allow", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert f"{rules}:2:{OPTIONAL_ABOVE.index('SERVICE') + 1}: SERVICE over groups" in err, err


def test_an_endpoint_not_allowed_is_refused_before_anything_is_sent():
    with Scripted(b"") as server:
        (q,) = parse_rules(H + f"SELECT * {{ ?u :m ?p SERVICE <{server.url}> {{ ?u :f ?n }} }}", "x.rq")
        for options in (None, ServiceOptions(allow=["http://127.0.0.1:1"])):
            with pytest.raises(QueryError) as e:
                Engine([q], services=options)
            assert str(e.value) == (f"x.rq:2:21: SERVICE <{server.url}> is not in the run's allowed endpoints: "
                                    f"allow it with --service-allow (Engine(services=ServiceOptions(allow=[...])))")
        assert server.requests == 0


def test_the_allow_list_takes_an_endpoint_or_an_origin():
    options = ServiceOptions(allow=["http://a:1/sparql", "http://b:2"])
    assert options.allows("http://a:1/sparql") and not options.allows("http://a:1/other")
    assert options.allows("http://b:2/any/path") and not options.allows("http://b:20/sparql")


def test_a_solution_joined_with_the_endpoint_keeps_the_stream_part_interval(oxigraph_server):
    followers(oxigraph_server, {1: 20000, 2: 5})
    (q,) = parse_rules(H + f"SELECT ?u ?n {{ ?u :mentioned ?p SERVICE <{oxigraph_server.query_url}> "
                           f"{{ ?u :followers ?n }} FILTER(?n > 10000) }}", "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base]))
    got = engine.push([mention(1, 1, 1, 3), mention(2, 2, 2, 4), mention(3, 5, 3)]) + engine.flush()
    assert rows(got) == [(1, 3, (("n", f'"20000"^^<http://www.w3.org/2001/XMLSchema#integer>'), ("u", f"<{E}u1>")))]


WINDOWED = """REGISTER QUERY influential AS
SELECT ?u (COUNT(?p) AS ?mentions) ?n
{from_}FROM STREAM <http://e/s> [RANGE 10m STEP 5m]
WHERE {{ ?u :mentioned ?p . {background} }}
GROUP BY ?u ?n HAVING (COUNT(?p) >= 2 && ?n > 10000)
"""


def remote_and_local(server, tmp_path, template: str, stream):
    """(the engine of the query with its followers from the endpoint,
    gamma 8, its answers to the stream, those of the query with the same
    followers given locally); template takes {from_} and {background}."""
    counts = {u: (u * 7919) % 30000 for u in range(1, 9)}
    followers(server, counts)
    (tmp_path / "followers.ttl").write_text(
        "".join(f"<{E}u{u}> <{E}followers> {n} .\n" for u, n in counts.items()))
    remote = parse_rules(template.format(from_="", background=f"SERVICE <{server.query_url}> {{ ?u :followers ?n }}"),
                         str(tmp_path / "remote.rq"))
    local = parse_rules(template.format(from_="FROM <followers.ttl>\n", background="?u :followers ?n"),
                        str(tmp_path / "local.rq"))
    with_service = Engine(remote, services=ServiceOptions(allow=[server.base], gamma=8))
    with_background = Engine(local)
    return (with_service, with_service.push(stream) + with_service.flush(),
            with_background.push(stream) + with_background.flush())


def test_a_windowed_query_answers_as_over_the_same_data_given_locally(oxigraph_server, tmp_path):
    """A budget that covers every candidate, and an endpoint that does not
    change: the answers of the query with its background given locally."""
    with_service, got, expected = remote_and_local(oxigraph_server, tmp_path, H + WINDOWED,
                                                   [mention(1 + (i * 5) % 8, i, i) for i in range(1, 60)])
    assert got and rows(got) == rows(expected)
    reports = with_service.services.reports
    # one evaluation per slide, each with its maintenance: those after the last instant (59) too, up to the last window that holds a solution
    assert [r.time // MIN for r in reports] == list(range(0, 70, 5))
    assert all(r.refreshes <= 8 and r.freshness == 1.0 and not r.stale for r in reports)


def test_without_a_view_each_evaluation_reads_the_endpoint(oxigraph_server):
    followers(oxigraph_server, {1: 5})
    (q,) = parse_rules(H + f"SELECT ?u ?n {{ ?u :mentioned ?p SERVICE <{oxigraph_server.query_url}> "
                           f"{{ ?u :followers ?n }} }}", "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], view=False))
    first = engine.push([mention(1, 1, 1), mention(1, 2, 2)])
    followers(oxigraph_server, {1: 7})
    second = engine.push([mention(1, 3, 3)]) + engine.flush()
    values = [(a.end // MIN, a.binding("n").split('"')[1]) for a in first + second]
    assert values == [(1, "5"), (2, "7"), (3, "7")]
    assert [r.refreshes for r in engine.services.reports] == [1, 1, 1]


def test_cep_run_calls_the_endpoints_it_is_allowed_and_refuses_the_others(oxigraph_server, tmp_path, capsys):
    import json

    from cep import cli

    followers(oxigraph_server, {1: 20000})
    rules = tmp_path / "q.rq"
    rules.write_text(H + f"SELECT ?u ?n {{ ?u :mentioned ?p SERVICE <{oxigraph_server.query_url}> "
                         f"{{ ?u :followers ?n }} }}\n")
    events = tmp_path / "e.jsonl"
    events.write_text(json.dumps({"s": f"<{E}u1>", "p": f"<{E}mentioned>", "o": f"<{E}p1>",
                                  "t": "2026-01-01T00:00:00Z"}) + "\n")
    assert cli.main(["run", str(rules), "--events", str(events), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{rules}:2:33: SERVICE <" in err and "is not in the run's allowed endpoints: allow it with " \
                                                   "--service-allow" in err
    code = cli.main(["run", str(rules), "--events", str(events), "--quiet", "--service-allow", oxigraph_server.base,
                     "--service-policy", "ranker=lru,gamma=3,timeout=2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["bindings"]["n"]["value"] == "20000"
    assert cli.main(["run", str(rules), "--events", str(events), "--service-policy", "gamma=3,rho=1"]) == 2
    assert "give the refresh budget gamma or the latency bound rho, not both" in capsys.readouterr().err


def report_run(server, folder) -> tuple[list, Path]:
    """`cep run` of a windowed SERVICE query over two users, mentioned at
    minutes 0 to 2, LRU with gamma 1, writing its reports (--service-report):
    (its arguments, the reports' file)."""
    import json

    followers(server, {1: 20000, 2: 5})
    rules, events, log = folder / "q.rq", folder / "e.jsonl", folder / "service.jsonl"
    rules.write_text(H + f"SELECT ?u ?n FROM STREAM <{E}s> [RANGE 3m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                         f"SERVICE <{server.query_url}> {{ ?u :followers ?n }} }}\n")
    events.write_text("".join(json.dumps({"s": f"<{E}u{u}>", "p": f"<{E}mentioned>", "o": f"<{E}p{m}{u}>",
                                          "t": f"2026-01-01T00:0{m}:00Z"}) + "\n" for m in range(3) for u in (1, 2)))
    return (["run", str(rules), "--events", str(events), "--quiet", "--service-allow", server.base,
             "--service-policy", "gamma=1,ranker=LRU", "--service-report", str(log)], log)


def test_cep_run_writes_each_evaluations_report(oxigraph_server, tmp_path, capsys):
    """--service-report: a JSON line per evaluation of the view, as the
    engine's reports say it (those after the last instant too). On Spark
    the console's run writes them (tests/spark/test_service_spark.py);
    with --out, whose file sink writes the answers alone, it is refused."""
    import json
    from datetime import datetime, timezone

    from cep import cli

    run, log = report_run(oxigraph_server, tmp_path)
    assert cli.main(run) == 0, capsys.readouterr().err
    t0 = int(datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp() * 1000)
    reports = [json.loads(line) for line in log.read_text().splitlines()]
    # the first before the first instant (nothing in its window), the last two after the last instant (2)
    assert [((r["time"] - t0) // MIN, r["candidates"], r["budget"], r["refreshes"]) for r in reports] == [
        (-1, 0, 1, 0)] + [(m, 2, 1, 1) for m in range(5)]
    assert [r["keys"] for r in reports[1:]] == [[[f"<{E}u{1 + m % 2}>"]] for m in range(5)]  # LRU: in turn
    assert all(r["query"] == "q" and r["endpoint"] == oxigraph_server.query_url and not r["stale"]
               and r["latency"] > 0 and 0.5 <= r["freshness"] <= 1 for r in reports)
    assert cli.main(run + ["--engine", "spark", "--out", str(tmp_path / "out")]) == 2
    assert "--service-report with --engine spark and --out" in capsys.readouterr().err


def test_with_a_small_budget_the_answers_follow_the_policy(oxigraph_server):
    """LRU with gamma 1 over three users refreshes them in turn, one per
    evaluation; each window joins its solutions with the view as
    maintained for it: a user's new count from the first refresh that
    read it on."""
    followers(oxigraph_server, {1: 1, 2: 1, 3: 1})
    (q,) = parse_rules(H + f"SELECT ?u ?p ?n FROM STREAM <{E}s> [RANGE 3m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                           f"SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }} }}", "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], gamma=1, ranker="LRU"))
    answers = []
    for minute in range(1, 10):
        if minute == 3:  # the evaluations from minute 3 on read the new counts
            followers(oxigraph_server, {1: 2, 2: 2, 3: 2})
        answers += engine.push([mention(u, minute, minute * 10 + u) for u in (1, 2, 3)])
        answers += engine.flush_table(final=False).to_list()
    answers += engine.flush()
    reports = [r for r in engine.services.reports if r.refreshes]
    # to the last window that holds a solution (11: the last instant is 9), each evaluation maintained
    assert [(r.time // MIN, r.keys) for r in reports] == [
        (t, ((f"<{E}u{1 + (t - 1) % 3}>",),)) for t in range(1, 12)]
    refreshed_new = {r.keys[0][0]: r.time // MIN for r in reports[::-1] if r.time // MIN >= 3}
    assert refreshed_new == {f"<{E}u3>": 3, f"<{E}u1>": 4, f"<{E}u2>": 5}
    assert len(answers) == 3 * 9 * 3  # each solution in three windows
    for a in answers:
        new = refreshed_new[a.binding("u")] <= a.end // MIN
        assert a.binding("n").split('"')[1] == ("2" if new else "1"), a


def _count(answer) -> str:
    return answer.binding("n").split('"')[1]


def test_each_evaluation_after_the_last_instant_has_its_own_maintenance(oxigraph_server):
    """Algorithm 1 maintains the view before each evaluation, those the end
    of the stream makes too: counts changed after the evaluation of the
    last instant (4) are read by the evaluations after it (5 and 6; gamma
    covers the candidates), as over an endpoint read at each evaluation
    (view=off)."""
    (q,) = parse_rules(H + f"SELECT ?u ?p ?n FROM STREAM <{E}s> [RANGE 3m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                           f"SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }} }}", "x.rq")

    def run(**policy):
        followers(oxigraph_server, {1: 1, 2: 1})
        engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], **policy))
        before = engine.push([mention(u, m, 10 * m + u) for m in range(1, 5) for u in (1, 2)])
        before += engine.flush_table(final=False).to_list()  # the evaluations up to the last instant
        followers(oxigraph_server, {1: 2, 2: 2})
        return before, engine.flush()

    before, after = run(gamma=2, ranker="LRU")
    assert {(a.end // MIN, _count(a)) for a in before} == {(t, "1") for t in range(1, 5)}
    assert {(a.end // MIN, _count(a)) for a in after} == {(5, "2"), (6, "2")}
    assert rows(before + after) == rows(sum(run(view=False), []))


def pinned_run(server, queries_text: str, run):
    """`run(queries, options)`'s answers (the in-process engine's, or
    Spark's) with LRU and gamma 1, over an endpoint whose follower counts
    (1 each) change to 2 just after its initial pull (a pass-through that
    answers every pull as the first: tests.endpoint.Counting)."""
    from tests.endpoint import Counting

    followers(server, {1: 1, 2: 1, 3: 1})
    with Counting(server.query_url) as proxy:
        queries = parse_rules(queries_text.format(url=proxy.url), "x.rq")
        options = ServiceOptions(allow=[proxy.base], gamma=1, ranker="LRU")
        proxy.pinned.add(Engine(queries, services=options).services.states[0].view.spec.pull_query())
        followers(server, {1: 2, 2: 2, 3: 2})
        return run(queries, options)


PINNED = H + """SELECT ?u ?p ?n FROM STREAM <http://e/s> [RANGE 4m STEP 1m]
WHERE {{ ?u :mentioned ?p . SERVICE <{url}> {{ ?u :followers ?n }} }}"""
PINNED_STREAM = [mention(u, m, 10 * m + u) for m in (1, 2) for u in (1, 2, 3)]


@pytest.mark.parametrize("stream, new_users, answered", [
    # 3 to 5 are after the stream's last instant (2); the windows hold 1, 2, 2, 2, 1 minutes of 3 users
    (PINNED_STREAM, {1: 1, 2: 2, 3: 3, 4: 3, 5: 3}, 3 * 8),
    # 2 to 4 are in a gap: their windows hold minute 1 alone
    ([mention(u, 1, u) for u in (1, 2, 3)] + [mention(1, 20, 9)], {1: 1, 2: 2, 3: 3, 4: 3}, 3 * 4),
], ids=["end of the stream", "gap in event time"])
def test_evaluations_without_events_of_their_own_go_on_refreshing_under_the_budget(oxigraph_server, stream,
                                                                                    new_users, answered):
    """Three users whose counts changed after the initial pull, one
    refresh per evaluation: each evaluation refreshes one more user, also
    those that no event of their own reaches (after the stream's last
    instant, or before an event past a gap in event time, which closes
    them all at once), so the windows from the third on read the new count
    of every user. Answers: users with the new count, by window."""
    def in_process(queries, options):
        engine = Engine(queries, services=options)
        return engine.push(stream) + engine.flush()

    answers = pinned_run(oxigraph_server, PINNED, in_process)
    new = {t: {a.binding("u") for a in answers if a.end // MIN == t and _count(a) == "2"} for t in new_users}
    assert {t: len(users) for t, users in new.items()} == new_users
    assert len([a for a in answers if a.end // MIN in new_users]) == answered


def windowed_reports(server, **policy):
    followers(server, {u: 100 * u for u in range(1, 5)})
    (q,) = parse_rules(H + f"SELECT ?u ?n FROM STREAM <{E}s> [RANGE 3m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                           f"SERVICE <{server.query_url}> {{ ?u :followers ?n }} }}", "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[server.base], **policy))
    engine.push([mention(u, m, 10 * m + u) for m in range(1, 8) for u in range(1, 5)])
    engine.flush()
    return [r for r in engine.services.reports if r.time >= 2 * MIN]


def test_each_evaluation_reports_its_refreshes_latency_and_estimated_freshness(oxigraph_server):
    covered = windowed_reports(oxigraph_server, gamma=4, ranker="LRU")
    assert all(r.candidates == 4 and r.refreshes == 4 and r.freshness == 1.0 and r.latency > 0 for r in covered)
    # WBM refreshes only the possibly stale: entries renewed past the next evaluation wait
    wbm = windowed_reports(oxigraph_server, gamma=4, ranker="WBM")
    assert all(r.freshness == 1.0 for r in wbm) and 0 in {r.refreshes for r in wbm} and \
        sum(r.refreshes for r in wbm) < 4 * len(wbm)
    never = windowed_reports(oxigraph_server, proposer="WST")
    assert all(r.candidates == 4 and r.refreshes == 0 and r.freshness == 0.0 for r in never)
    half = windowed_reports(oxigraph_server, gamma=2, ranker="LRU")
    assert all(r.refreshes == 2 for r in half) and {r.freshness for r in half} <= {0.5, 1.0}


def test_gamma_is_derived_from_the_latency_bound_rho(oxigraph_server):
    roomy = windowed_reports(oxigraph_server, rho=1000.0, ranker="LRU")
    assert all(r.budget >= 4 and r.refreshes == 4 for r in roomy)
    tight = windowed_reports(oxigraph_server, rho=1e-9, ranker="LRU")
    assert all(r.budget == 0 and r.refreshes == 0 for r in tight)


def test_an_evaluation_whose_estimated_freshness_falls_below_alpha_raises_an_alert(oxigraph_server):
    """The seed's R4: with alpha set, each evaluation whose estimated
    freshness is below it is flagged in its report and said, once, as a
    warning of the engine (cep run prints those as they come)."""
    followers(oxigraph_server, {u: 100 * u for u in range(1, 5)})
    (q,) = parse_rules(H + f"SELECT ?u ?n FROM STREAM <{E}s> [RANGE 3m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                           f"SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }} }}", "x.rq")

    def run(**policy):
        engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], alpha=0.75, **policy))
        engine.push([mention(u, m, 10 * m + u) for m in range(1, 8) for u in range(1, 5)])
        engine.flush()
        return engine, [r for r in engine.services.reports if r.time >= 2 * MIN]

    engine, never = run(proposer="WST")  # freshness 0 from the second evaluation on
    assert never and all(r.freshness == 0.0 and r.alert for r in never)
    alerts = [w for w in engine.warnings if "below alpha 0.75" in w]
    assert len(alerts) == sum(r.alert for r in engine.services.reports)
    assert alerts[0].startswith(f"query {never[0].query}, SERVICE <{oxigraph_server.query_url}> at ")
    assert "estimated freshness 0.00" in alerts[0] and "0 refreshes of 4 candidates, budget 10" in alerts[0]
    engine, half = run(gamma=2, ranker="LRU")  # 0.5 and 1.0 by turns: only the halves alert
    assert {(r.freshness, r.alert) for r in half} == {(0.5, True), (1.0, False)}
    assert len([w for w in engine.warnings if "below alpha" in w]) == sum(r.alert for r in engine.services.reports)
    engine, covered = run(gamma=4, ranker="LRU")
    assert not any(r.alert for r in covered) and not any("below alpha" in w for w in engine.warnings)


def test_cep_run_prints_the_alerts_as_warnings(oxigraph_server, tmp_path, capsys):
    import json

    from cep import cli

    followers(oxigraph_server, {1: 20000})
    rules = tmp_path / "q.rq"
    rules.write_text(H + f"SELECT ?u ?n FROM STREAM <{E}s> [RANGE 3m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                         f"SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }} }}\n")
    events = tmp_path / "e.jsonl"
    events.write_text("".join(json.dumps({"s": f"<{E}u1>", "p": f"<{E}mentioned>", "o": f"<{E}p{m}>",
                                          "t": f"2026-01-01T00:0{m}:30Z"}) + "\n" for m in range(3)))
    args = ["run", str(rules), "--events", str(events), "--quiet", "--service-allow", oxigraph_server.base]
    assert cli.main(args + ["--service-policy", "proposer=WST,alpha=0.5"]) == 0
    err = capsys.readouterr().err
    assert "warning: query " in err and "estimated freshness 0.00 is below alpha 0.5 (0 refreshes of 1 " \
                                        "candidates, budget 10)" in err
    assert cli.main(args + ["--service-policy", "ranker=LRU,alpha=0.5"]) == 0
    assert "below alpha" not in capsys.readouterr().err


def test_alpha_is_a_policy_key_from_0_to_1():
    assert ServiceOptions.parse((), "alpha=0.75,gamma=3").alpha == 0.75
    assert ServiceOptions().alpha is None
    for bad in ("alpha=1.5", "alpha=-0.1", "alpha=high"):
        with pytest.raises(ValueError, match="alpha"):
            ServiceOptions.parse((), bad)


def test_explain_shows_the_service_patterns_and_when_they_are_joined(tmp_path, capsys):
    from cep import cli

    rules = tmp_path / "q.rq"
    rules.write_text(H + WINDOWED.format(from_="", background="SERVICE SILENT <http://h:1/q> { ?u :followers ?n }"))
    assert cli.main(["explain", str(rules)]) == 0
    out = capsys.readouterr().out
    assert "== SERVICE patterns" in out
    assert "e1 = SERVICE SILENT <http://h:1/q> of influential: view (?n ?u), one entry per join key ?u" in out
    assert "joined at each evaluation of the window, after its maintenance" in out


def test_an_engine_state_holds_the_view_entries_its_stream_needed(oxigraph_server):
    """Engine.state() (what Spark keeps per group) carries the entries the
    stream needed, with their maintenance: an engine restored from it
    joins with them as the first engine would, not with what its own
    initial pull read; the entries never needed are as that pull made
    them."""
    followers(oxigraph_server, {1: 5, 2: 5})
    (q,) = parse_rules(H + f"SELECT ?u ?n FROM STREAM <{E}s> [RANGE 2m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                           f"SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }} }}", "x.rq")
    options = ServiceOptions(allow=[oxigraph_server.base], proposer="WST")  # never refreshed
    first = Engine([q], services=options)
    first.push([mention(1, m, m) for m in range(1, 5)])
    first.flush_table(final=False)
    saved = first.state()
    followers(oxigraph_server, {1: 7, 2: 7})
    restored = Engine([q], services=options)
    restored.restore(saved)
    got = restored.push([mention(1, 5, 5), mention(2, 6, 6)]) + restored.flush()
    assert {(a.binding("u"), a.binding("n").split('"')[1]) for a in got} == {(f"<{E}u1>", "5"), (f"<{E}u2>", "7")}
    report = restored.services.reports[-1]
    assert report.freshness < 1.0  # u1's entry kept its best-before: possibly stale


def test_engines_under_one_snapshot_share_one_initial_pull(oxigraph_server):
    """The initial pull under a named snapshot (ServiceOptions.snapshot:
    a Spark run's, shared by the groups one worker process serves) is
    downloaded once per process: a second engine under it, restored from
    the first's state, reads the entries its stream needed from that
    state and the others from the same download, even after the endpoint
    changed; another snapshot, or none (in process), pulls again."""
    from tests.endpoint import Counting

    followers(oxigraph_server, {1: 5, 2: 5})
    with Counting(oxigraph_server.query_url) as proxy:
        (q,) = parse_rules(H + f"SELECT ?u ?n FROM STREAM <{E}s> [RANGE 2m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                               f"SERVICE <{proxy.url}> {{ ?u :followers ?n }} }}", "x.rq")
        options = ServiceOptions(allow=[proxy.base], proposer="WST", snapshot="run-1")  # never refreshed
        first = Engine([q], services=options)
        first.push([mention(1, m, m) for m in range(1, 5)])
        first.flush_table(final=False)
        followers(oxigraph_server, {1: 7, 2: 7})
        second = Engine([q], services=options)
        second.restore(first.state())
        got = second.push([mention(1, 5, 5), mention(2, 6, 6)]) + second.flush()
        assert {(a.binding("u"), a.binding("n").split('"')[1]) for a in got} == {(f"<{E}u1>", "5"),
                                                                              (f"<{E}u2>", "5")}
        pull = first.services.states[0].view.spec.pull_query()
        assert proxy.pulls(pull) == 1
        for other in (ServiceOptions(allow=[proxy.base], snapshot="run-2"),
                      ServiceOptions(allow=[proxy.base]), ServiceOptions(allow=[proxy.base])):
            engine = Engine([q], services=other)
            got = engine.push([mention(2, 1, 1)]) + engine.flush()
            assert {a.binding("n").split('"')[1] for a in got} == {"7"}
        assert proxy.pulls(pull) == 4


def test_a_spark_worker_pulls_once_for_its_groups_and_a_restored_group_reads_its_state(oxigraph_server):
    """The streaming worker (without Spark: tests/unit/worker_harness.py),
    three groups of one worker process: one download of the run's initial
    pull for all three. After their engines are lost (a task re-run in that
    worker; the endpoint changed meanwhile), each group is restored from
    Spark's state: the entries its stream needed as they were, the others
    from the worker's download, with no new one."""
    from cep.spark import worker
    from cep.spark.routing import bucket_of
    from tests.endpoint import Counting
    from tests.unit.worker_harness import Harness

    followers(oxigraph_server, {u: 100 * u for u in range(1, 10)})
    with Counting(oxigraph_server.query_url) as proxy:
        rules = H + (f"SELECT ?u ?n FROM STREAM <{E}s> [RANGE 2m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                     f"SERVICE <{proxy.url}> {{ ?u :followers ?n }} }}")
        harness = Harness(rules, buckets=3, route=lambda e: (0, bucket_of(e.s, 3)),
                          services=ServiceOptions(allow=[proxy.base], proposer="WST"))
        assert len({bucket_of(f"<{E}u{u}>", 3) for u in range(1, 10)}) == 3
        worker._ENGINES.clear()
        before = harness.batch([mention(u, 1, u) for u in range(1, 9)])
        followers(oxigraph_server, {u: 7 for u in range(1, 10)})
        worker._ENGINES.clear()  # the engines lost: each group restored from its state
        harness.restart(harness.checkpoint())
        after = harness.batch([mention(u, 3, 10 + u) for u in range(1, 10)], end=True) + harness.drain()
        worker._ENGINES.clear()
    got = {(a.binding("u"), a.binding("n").split('"')[1]) for a in before.answers + after.answers}
    assert got == {(f"<{E}u{u}>", str(100 * u)) for u in range(1, 10)}
    assert proxy.queries == [f"SELECT ?v0 ?v1 WHERE {{ ?v1 <{E}followers> ?v0 }}"]  # one initial pull, no other


def test_a_spark_group_loads_only_the_view_entries_of_its_bucket(oxigraph_server, monkeypatch):
    """Each group's engine stores in Prolog the entries of the initial pull
    whose join key the router sends to its bucket (ServiceOptions.part,
    cep.spark.worker.view_part), never the whole view (before: the whole
    view, then the other buckets' part dropped); its answers are the
    in-process engine's."""
    from cep.service.view import View
    from cep.spark import worker
    from cep.spark.routing import bucket_of
    from tests.unit.worker_harness import Harness

    followers(oxigraph_server, {u: 100 * u for u in range(1, 13)})
    rules = H + (f"SELECT ?u ?n FROM STREAM <{E}s> [RANGE 2m STEP 1m] WHERE {{ ?u :mentioned ?p . "
                 f"SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }} }}")
    options = ServiceOptions(allow=[oxigraph_server.base], proposer="WST")
    stored = []  # (the engine's module, the keys it stored in Prolog)
    real_store = View._store
    monkeypatch.setattr(View, "_store", lambda view, items, now: (stored.append((view.module, [k for k, _ in items])),
                                                                  real_store(view, items, now))[1])
    harness = Harness(rules, buckets=3, route=lambda e: (0, bucket_of(e.s, 3)), services=options)
    worker._ENGINES.clear()
    stream = [mention(u, 1, u) for u in range(1, 13)]
    got = harness.batch(stream, end=True).answers + harness.drain().answers
    engines = {engine.module: bucket for (_, _, bucket, _), (engine, *_) in worker._ENGINES.items()}
    worker._ENGINES.clear()
    assert len(engines) == 3
    stored = [(module, keys) for module, keys in stored if keys]  # (a restore with nothing needed: none)
    assert {module for module, _ in stored} == set(engines)
    for module, keys in stored:
        assert {bucket_of(u, 3) for (u,) in keys} == {engines[module]}
    assert {k for _, keys in stored for k in keys} == {(f"<{E}u{u}>",) for u in range(1, 13)}
    expected = Engine(parse_rules(rules, "x.rq"), services=options)
    assert rows(got) == rows(expected.push(stream) + expected.flush())
