"""The SERVICE endpoint client against a real SPARQL 1.1 server (Oxigraph,
tests/endpoint.py) and, for the faults a real server does not show on
demand, a scripted local HTTP server."""

import time

import pytest

from cep.service import endpoint
from cep.service.endpoint import EndpointError
from tests.endpoint import Scripted, oxigraph_server  # noqa: F401 (the fixture)

E = "http://example.org/"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"


def test_rows_of_a_select_from_oxigraph_in_json(oxigraph_server):
    oxigraph_server.update(f'INSERT DATA {{ <{E}u1> <{E}followers> 12000 . <{E}u2> <{E}name> "Ann"@en . '
                           f'<{E}u3> <{E}followers> 7 }}')
    names, rows = endpoint.select(oxigraph_server.query_url,
                                  f"SELECT ?u ?n ?l WHERE {{ {{ ?u <{E}followers> ?n }} UNION "
                                  f"{{ ?u <{E}name> ?l }} }}", timeout=10)
    assert names == ["u", "n", "l"]
    assert sorted(rows, key=str) == sorted([
        (f"<{E}u1>", f'"12000"^^{INT}', None),
        (f"<{E}u3>", f'"7"^^{INT}', None),
        (f"<{E}u2>", None, '"Ann"@en')], key=str)


def test_xml_results_read_as_json_ones():
    xml = (b'<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head>'
           b'<variable name="u"/><variable name="n"/></head><results><result>'
           b'<binding name="u"><uri>http://example.org/u1</uri></binding>'
           b'<binding name="n"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">5</literal></binding>'
           b'</result><result><binding name="u"><bnode>b0</bnode></binding></result></results></sparql>')
    with Scripted(xml, "application/sparql-results+xml") as server:
        names, rows = endpoint.select(server.url, "SELECT * {}", timeout=10)
    assert names == ["u", "n"]
    assert rows == [(f"<{E}u1>", f'"5"^^{INT}'), ("_:b0", None)]


def test_an_http_error_is_said_with_its_status(oxigraph_server):
    with pytest.raises(EndpointError) as e:
        endpoint.select(oxigraph_server.query_url, "SELECT WHERE nonsense", timeout=10)
    assert e.value.kind == "http" and "HTTP 400" in str(e.value)


def test_an_endpoint_that_is_down(oxigraph_server):
    oxigraph_server.stop()
    with pytest.raises(EndpointError) as e:
        endpoint.select(oxigraph_server.query_url, "SELECT * {}", timeout=10)
    assert e.value.kind == "down" and oxigraph_server.query_url in str(e.value)


@pytest.mark.parametrize("body", [b"{not json", b'{"head": {"vars": ["x"]}}',
                                  b'{"head": {"vars": ["x"]}, "results": {"bindings": '
                                  b'[{"x": {"type": "uri", "value": "not an absolute IRI"}}]}}'])
def test_malformed_results(body):
    with Scripted(body) as server:
        with pytest.raises(EndpointError) as e:
            endpoint.select(server.url, "SELECT * {}", timeout=10)
    assert e.value.kind == "malformed"


def test_a_deeply_nested_json_answer_is_malformed():
    """Nested deeper than Python's JSON parser goes: malformed results (the
    evaluation answers from the view), not an error that stops the run."""
    body = b'{"head": {"vars": ["x"]}, "results": {"bindings": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    with Scripted(body) as server:
        with pytest.raises(EndpointError) as e:
            endpoint.select(server.url, "SELECT * {}", timeout=10)
    assert e.value.kind == "malformed"


def test_an_xml_answer_is_read_where_the_format_puts_its_elements():
    """Results are the children of <results>, bindings those of <result>:
    a result nested in another is no result (the outer binds nothing), and
    a hostile answer of 50,000 nested results is read in linear time (a
    walk of every result's descendants took the square: past the timeout)."""
    ns = b'<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="x"/></head><results>'
    nested = ns + b"<result>" * 50_000 + b"</result>" * 50_000 + b"</results></sparql>"
    with Scripted(nested, "application/sparql-results+xml") as server:
        assert endpoint.select(server.url, "SELECT * {}", timeout=30) == (["x"], [(None,)])


def test_a_slow_endpoint_costs_at_most_the_timeout():
    with Scripted(b'{"head": {"vars": []}, "results": {"bindings": []}}', delay=30) as server:
        began = time.monotonic()
        with pytest.raises(EndpointError) as e:
            endpoint.select(server.url, "SELECT * {}", timeout=0.3)
        waited = time.monotonic() - began
    assert e.value.kind == "timeout"
    assert waited < 20  # a guard against a hang, far below the server's 30 s


def test_a_redirect_is_not_followed_to_another_host():
    """The allow-list names the hosts the engine calls: a redirect to
    another is an HTTP error, and the other host gets no request."""
    with Scripted(b'{"head": {"vars": []}, "results": {"bindings": []}}') as elsewhere:
        with Scripted(b"", status=302) as server:
            server.headers["Location"] = elsewhere.url
            with pytest.raises(EndpointError) as e:
                endpoint.select(server.url, "SELECT * {}", timeout=10)
    assert e.value.kind == "http" and "HTTP 302" in str(e.value)
    assert elsewhere.requests == 0


@pytest.mark.parametrize("body,kind", [
    (b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "http://example.org/a"}, '
     b'"x": {"type": "uri", "value": "http://example.org/b"}}]}}', "application/sparql-results+json"),
    (b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "http://example.org/a", '
     b'"value": "http://example.org/b"}}]}}', "application/sparql-results+json"),
    (b'<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="x"/>'
     b'</head><results><result><binding name="x"><uri>http://example.org/a</uri></binding>'
     b'<binding name="x"><uri>http://example.org/b</uri></binding></result></results></sparql>',
     "application/sparql-results+xml")])
def test_a_solution_that_binds_a_variable_twice_is_malformed(body, kind):
    """A solution has one binding per bound variable (SPARQL 1.1 Query
    Results JSON 3.2.2, XML 2.3.1): one that gives two is ambiguous, not
    read as the last of them."""
    with Scripted(body, kind) as server:
        with pytest.raises(EndpointError) as e:
            endpoint.select(server.url, "SELECT * {}", timeout=10)
    assert e.value.kind == "malformed" and "twice" in str(e.value)
