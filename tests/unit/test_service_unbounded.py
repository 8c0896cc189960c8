"""SERVICE over a window of infinite width, [RANGE UNBOUNDED STEP d START
t0] (docs/language.md, "SERVICE"), against a real endpoint (Oxigraph,
tests/endpoint.py): each evaluation joins every solution since t0 with
the view as maintained for it, the candidates of WSJ are the entries any
of those solutions needed, and the view is maintained at the window's
own evaluation times, t0 + k * STEP."""

from cep.engine import Engine
from cep.rules import parse_rules
from cep.service.options import ServiceOptions
from tests.endpoint import oxigraph_server  # noqa: F401 (the fixture)
from tests.unit.test_service import E, H, MIN, followers, mention, remote_and_local, rows

X = H + "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
UNBOUNDED = """REGISTER QUERY influential AS
SELECT ?u (COUNT(?p) AS ?mentions) ?n
{from_}FROM STREAM <http://e/s> [RANGE UNBOUNDED STEP 5m START "1970-01-01T00:00:30Z"^^xsd:dateTime]
WHERE {{ ?u :mentioned ?p . {background} }}
GROUP BY ?u ?n HAVING (COUNT(?p) >= 2 && ?n > 10000)
"""


def test_an_unbounded_window_answers_as_over_the_same_data_given_locally(oxigraph_server, tmp_path):
    """A budget that covers every candidate, an endpoint that does not
    change: the answers of the query with its background given locally.
    The view is maintained at the window's evaluation times (30 s past
    each 5 minutes, from its START), and its candidates are every user
    mentioned since t0, however long ago."""
    stream = [mention(1 + (i * 5) % 8, i, i) for i in range(1, 8)] + [mention(3, i, i) for i in range(8, 30)]
    with_service, got, expected = remote_and_local(oxigraph_server, tmp_path, X + UNBOUNDED, stream)
    assert got and rows(got) == rows(expected)
    reports = with_service.services.reports
    # the last (30:30) is after the stream's last instant (29:00): it has its own maintenance too
    assert [r.time for r in reports] == [30_000 + k * 5 * MIN for k in range(7)]
    # users 2-8 were mentioned in the first 7 minutes alone (3 later too): every later window needs them
    assert [r.candidates for r in reports] == [0, 5, 7, 7, 7, 7, 7]
    assert all(r.refreshes == r.candidates and r.freshness == 1.0 and not r.stale for r in reports)


def test_with_a_small_budget_an_unbounded_window_rejoins_its_old_solutions(oxigraph_server):
    """LRU with gamma 1 over three users, their counts changed at minute
    3: the users refresh in turn, one per evaluation, and each evaluation
    joins every solution since t0 with the view as maintained for it. A
    user mentioned only in the first two minutes stays a candidate (a
    window of width 2 minutes would have dropped it) and its old
    solutions get the new count from its first refresh on."""
    followers(oxigraph_server, {1: 1, 2: 1, 3: 1})
    (q,) = parse_rules(X + f"""SELECT ?u ?p ?n
FROM STREAM <{E}s> [RANGE UNBOUNDED STEP 1m START "1970-01-01T00:00:00Z"^^xsd:dateTime]
WHERE {{ ?u :mentioned ?p . SERVICE <{oxigraph_server.query_url}> {{ ?u :followers ?n }} }}""", "x.rq")
    engine = Engine([q], services=ServiceOptions(allow=[oxigraph_server.base], gamma=1, ranker="LRU"))
    answers = []
    for minute in range(1, 9):
        if minute == 3:  # the evaluations from minute 3 on read the new counts
            followers(oxigraph_server, {1: 2, 2: 2, 3: 2})
        answers += engine.push([mention(u, minute, minute * 10 + u) for u in ((1, 2, 3) if minute < 3 else (1,))])
        answers += engine.flush_table(final=False).to_list()
    answers += engine.flush()
    reports = [r for r in engine.services.reports if r.time]
    assert [(r.time // MIN, r.candidates, r.keys) for r in reports] == [
        (t, 3, ((f"<{E}u{1 + (t - 1) % 3}>",),)) for t in range(1, 9)]
    refreshed_new = {f"<{E}u3>": 3, f"<{E}u1>": 4, f"<{E}u2>": 5}  # the first refresh at minute 3 or later
    evaluations = {}
    for a in answers:
        new = refreshed_new[a.binding("u")] <= a.end // MIN
        assert a.start == 0 and a.binding("n").split('"')[1] == ("2" if new else "1"), a
        evaluations.setdefault(a.end // MIN, set()).add(a.binding("p"))
    # each evaluation holds every solution since t0: u2's and u3's of minutes 1 and 2 to the end
    assert {t: len(ps) for t, ps in evaluations.items()} == {t: 3 * min(t, 2) + max(0, t - 2) for t in range(1, 9)}


def test_explain_says_the_view_of_an_unbounded_window(tmp_path, capsys):
    from cep import cli

    rules = tmp_path / "q.rq"
    rules.write_text(X + UNBOUNDED.format(from_="", background="SERVICE <http://h:1/q> { ?u :followers ?n }"))
    assert cli.main(["explain", str(rules)]) == 0
    out = capsys.readouterr().out
    assert ("maintained at each evaluation (every 300000ms, window unbounded); joined at each evaluation of the "
            "window, after its maintenance") in out
    assert "default WSJ and LRU" in out
