"""SERVICE endpoints that fail while the stream runs (docs/language.md,
"SERVICE", Faults): down, slow past the timeout, an HTTP error, malformed
results. The evaluation answers from the view, its report says stale,
the endpoint is tried again with a back-off, and no push waits beyond
the timeout. SILENT follows SPARQL 1.1. Against a real endpoint (Oxigraph,
stopped and started again) and a scripted local HTTP server."""

import json
import time

import pytest

from cep.engine import Engine
from cep.errors import EngineError
from cep.events import Event
from cep.rules import parse_rules
from cep.service.options import ServiceOptions
from tests.endpoint import Oxigraph, Scripted, oxigraph_server  # noqa: F401 (the fixture)

E = "http://e/"
MIN = 60_000
H = f"PREFIX : <{E}>\n"
INT = "http://www.w3.org/2001/XMLSchema#integer"
GUARD_S = 60  # a push must return well within this, whatever the endpoint does


def query(url: str, silent: bool = False):
    (q,) = parse_rules(H + f"SELECT ?u ?n {{ ?u :mentioned ?p SERVICE {'SILENT ' if silent else ''}<{url}> "
                           f"{{ ?u :followers ?n }} }}", "x.rq")
    return q


def mention(minute: int, user: int = 1) -> Event:
    return Event(f"<{E}u{user}>", f"<{E}mentioned>", f"<{E}p{minute}>", minute * MIN, minute * MIN)


def counts(answers):
    return [(a.end // MIN, a.binding("n").split('"')[1] if a.binding("n") else None) for a in answers]


def run(engine, minutes, between=None):
    """Each minute's mention pushed and processed; `between(minute)` first."""
    out = []
    for minute in minutes:
        if between is not None:
            between(minute)
        began = time.monotonic()
        out += engine.push([mention(minute)]) + engine.flush_table(final=False).to_list()
        assert time.monotonic() - began < GUARD_S
    return out


def results(count: int) -> bytes:
    """The SPARQL JSON answer of the pull (?v0 = ?n, ?v1 = ?u) and of a refresh (?v0)."""
    return json.dumps({"head": {"vars": ["v0", "v1"]}, "results": {"bindings": [
        {"v0": {"type": "literal", "value": str(count), "datatype": INT},
         "v1": {"type": "uri", "value": f"{E}u1"}}]}}).encode()


def test_the_endpoint_stopped_mid_run_then_back(oxigraph_server):
    oxigraph_server.update(f"INSERT DATA {{ <{E}u1> <{E}followers> 5 }}")
    engine = Engine([query(oxigraph_server.query_url)],
                    services=ServiceOptions(allow=[oxigraph_server.base], gamma=1, ranker="LRU"))

    def between(minute):
        if minute == 3:
            oxigraph_server.stop()
        if minute == 9:
            oxigraph_server.start()
            oxigraph_server.update(f"DELETE DATA {{ <{E}u1> <{E}followers> 5 }} ; "
                                   f"INSERT DATA {{ <{E}u1> <{E}followers> 6 }}")

    got = run(engine, range(1, 14), between)
    # answered at every minute, from the view while the endpoint was down
    assert [m for m, _ in counts(got)] == list(range(1, 14))
    assert set(n for m, n in counts(got) if m <= 9) == {"5"}
    assert counts(got)[-1] == (13, "6")
    reports = [r for r in engine.services.reports if r.time >= 3 * MIN]
    # tried at 3 (down), backed off 1, tried at 5, backed off 2, tried at 8, backed off 4, then back
    tried = [r.time // MIN for r in reports if r.error is None or "backed off" not in r.error]
    assert tried[:3] == [3, 5, 8]
    assert all(r.stale for r in reports if r.time < 13 * MIN)
    assert all("cannot be reached" in r.error for r in reports if r.time // MIN in (3, 5, 8))
    assert not reports[-1].stale and reports[-1].refreshes == 1


@pytest.mark.parametrize("fault, expected", [
    (dict(delay=30), "no answer within the timeout of 0.5 s"),
    (dict(status=500), "HTTP 500"),
    (dict(body=b"<html>oops</html>", content_type="text/html"), "malformed SPARQL results"),
    (dict(body=b'{"head": {"vars": ["v0"]}, "results": {"bindings": [{}]}}'), "leaves a variable of the pattern unbound"),
])
def test_a_faulty_endpoint_is_answered_from_the_view(fault, expected):
    with Scripted(results(5)) as server:
        engine = Engine([query(server.url)], services=ServiceOptions(allow=[server.url], gamma=1, ranker="LRU",
                                                                     timeout=0.5))

        def between(minute):
            if minute == 3:
                for name, value in fault.items():
                    setattr(server, name, value)

        got = run(engine, range(1, 7), between)
    assert counts(got) == [(m, "5") for m in range(1, 7)]
    faulty = [r for r in engine.services.reports if r.time >= 3 * MIN]
    assert faulty[0].stale and expected in faulty[0].error
    assert all(r.stale for r in faulty)
    assert "backed off" in faulty[1].error  # the next evaluation does not ask again


def test_an_endpoint_down_at_the_start_stops_the_run_unless_silent(tmp_path):
    server = Oxigraph(tmp_path / "store")  # never started: nothing listens on its port
    with pytest.raises(EngineError) as e:
        Engine([query(server.query_url)], services=ServiceOptions(allow=[server.base]))
    assert f"SERVICE <{server.query_url}>: cannot be reached" in str(e.value)
    assert "SERVICE SILENT would go on" in str(e.value)


def test_silent_gives_the_empty_solution_until_the_endpoint_answers(tmp_path):
    """SPARQL 1.1 Federated Query, 4: a SILENT SERVICE that fails is one
    solution with no binding; once the endpoint answers, its solutions."""
    server = Oxigraph(tmp_path / "store")
    engine = Engine([query(server.query_url, silent=True)], services=ServiceOptions(allow=[server.base]))

    def between(minute):
        if minute == 4:
            server.start()
            server.update(f"INSERT DATA {{ <{E}u1> <{E}followers> 9 }}")

    try:
        got = run(engine, range(1, 12), between)
    finally:
        server.stop()
    assert counts(got)[:4] == [(m, None) for m in range(1, 5)]
    assert counts(got)[-1] == (11, "9")
    assert all(a.binding("u") == f"<{E}u1>" for a in got)


def test_the_pull_reads_the_variables_by_name_whatever_order_the_endpoint_lists_them_in():
    """SPARQL JSON names each solution's variables: an endpoint that lists
    ?v1 before ?v0 (the spec says should, not must) gives the same view,
    and an answer that does not bind the variables asked for (?u, ?n) is
    malformed, not read by position."""
    swapped = json.dumps({"head": {"vars": ["v1", "v0"]}, "results": {"bindings": [
        {"v0": {"type": "literal", "value": "5", "datatype": INT}, "v1": {"type": "uri", "value": f"{E}u1"}}]}})
    with Scripted(swapped.encode()) as endpoint:
        engine = Engine([query(endpoint.url)], services=ServiceOptions(allow=[endpoint.url]))
        assert counts(engine.push([mention(1)]) + engine.flush()) == [(1, "5")]
    named = swapped.replace('"v0"', '"n"').replace('"v1"', '"u"')
    with Scripted(named.encode()) as endpoint:
        with pytest.raises(EngineError, match="malformed SPARQL results: a solution leaves a variable of the "
                                              "pattern unbound"):
            Engine([query(endpoint.url)], services=ServiceOptions(allow=[endpoint.url]))
