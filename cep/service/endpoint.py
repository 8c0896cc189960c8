"""A SPARQL endpoint over HTTP: the SPARQL 1.1 protocol's query operation
(POST, form-encoded), results in SPARQL 1.1 Query Results JSON or XML,
read into rows of canonical N-Triples text (None for an unbound variable).

Every request has a deadline: a slow endpoint (one that accepts the
connection and answers late, or trickles its answer) costs at most the
time given, whatever the socket does, because the request runs on a
worker thread that the caller stops waiting for. What goes wrong is one
error type, EndpointError, saying what and where (down, HTTP status,
malformed results, past the timeout).
"""

from __future__ import annotations

import concurrent.futures
import json
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

from cep import terms
from cep.errors import CepError
from cep.io.tables import unique_keys

ACCEPT = "application/sparql-results+json, application/sparql-results+xml;q=0.9"
RESULTS_NS = "{http://www.w3.org/2005/sparql-results#}"
MAX_RESULT_BYTES = 256 << 20  # a result larger than this is refused, not read into memory

# Requests run here; the caller waits at most its deadline. A request past
# it keeps its thread until its socket times out too (the same timeout),
# so a few threads are enough even when an endpoint hangs.
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="cep-service")


class EndpointError(CepError):
    """A request to an endpoint failed: `kind` is "down", "http",
    "malformed" or "timeout"."""

    def __init__(self, endpoint: str, kind: str, detail: str):
        self.endpoint, self.kind, self.detail = endpoint, kind, detail
        super().__init__(f"SERVICE <{endpoint}>: {detail}")


def select(endpoint: str, query: str, timeout: float) -> tuple[list[str], list[tuple]]:
    """The variables and rows of a SELECT `query` sent to `endpoint`, within
    `timeout` seconds; raises EndpointError."""
    future = _POOL.submit(_request, endpoint, query, timeout)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise EndpointError(endpoint, "timeout", f"no answer within the timeout of {timeout:g} s") from None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is not followed (it is an HTTP error): the allow-list
    names the hosts the engine calls, and a redirect would name another."""

    def redirect_request(self, *_):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _request(endpoint: str, query: str, timeout: float):
    body = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(endpoint, data=body, method="POST", headers={
        "Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded"})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            kind = response.headers.get_content_type()
            data = response.read(MAX_RESULT_BYTES + 1)
    except urllib.error.HTTPError as e:
        raise EndpointError(endpoint, "http", f"HTTP {e.code} {e.reason}") from None
    except (TimeoutError, OSError) as e:  # refused, reset, unreachable, socket timeout (URLError is an OSError)
        reason = getattr(e, "reason", e)
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise EndpointError(endpoint, "timeout", f"no answer within the timeout of {timeout:g} s") from None
        raise EndpointError(endpoint, "down", f"cannot be reached ({reason})") from None
    if len(data) > MAX_RESULT_BYTES:
        raise EndpointError(endpoint, "malformed", f"a result of more than {MAX_RESULT_BYTES:,} bytes")
    try:
        if kind.endswith("xml"):
            return read_xml(data)
        return read_json(data)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, ET.ParseError, terms.TermError) as e:
        # (RecursionError: JSON nested deeper than Python's parser goes)
        raise EndpointError(endpoint, "malformed", f"malformed SPARQL results ({kind}): {e}") from None


def read_json(data: bytes) -> tuple[list[str], list[tuple]]:
    """SPARQL 1.1 Query Results JSON Format -> (variables, rows). A solution
    is an object of one member per bound variable (section 3.2.2): one that
    names a variable twice (or a term its "value" twice) is ambiguous, and
    the answer malformed (tables.unique_keys)."""
    doc = json.loads(data, object_pairs_hook=unique_keys)
    names = list(doc["head"]["vars"])
    rows = []
    for binding in doc["results"]["bindings"]:
        if not isinstance(binding, dict):
            raise ValueError("a solution that is not an object")
        rows.append(tuple(_term_json(binding[n]) if n in binding else None for n in names))
    return names, rows


def _term_json(obj: dict) -> str:
    kind, value = obj["type"], obj["value"]
    if not isinstance(value, str):
        raise ValueError(f"a value that is not a string: {value!r}")
    if kind == "uri":
        return terms.checked(terms.iri(value))
    if kind == "bnode":
        return terms.checked("_:" + value)
    if kind in ("literal", "typed-literal"):
        return terms.checked(terms.literal(value, obj.get("datatype"), obj.get("xml:lang")))
    raise ValueError(f"a term of unknown type {kind!r}")


def read_xml(data: bytes) -> tuple[list[str], list[tuple]]:
    """SPARQL Query Results XML Format -> (variables, rows)."""
    root = ET.fromstring(data)
    if root.tag != RESULTS_NS + "sparql":
        raise ValueError(f"the root element is {root.tag}, not sparql")
    # each element among its parent's children, where the format puts it (a walk of all the
    # descendants of each result would cost the square of their depth in a hostile answer)
    names = [v.attrib["name"] for v in root.find(RESULTS_NS + "head").findall(RESULTS_NS + "variable")]
    rows = []
    for result in root.find(RESULTS_NS + "results").findall(RESULTS_NS + "result"):
        found = {}
        for binding in result.findall(RESULTS_NS + "binding"):
            (term,) = list(binding)
            if binding.attrib["name"] in found:  # one binding per bound variable (section 2.3.1), as in JSON
                raise ValueError(f"a solution that binds ?{binding.attrib['name']} twice")
            found[binding.attrib["name"]] = _term_xml(term)
        rows.append(tuple(found.get(n) for n in names))
    return names, rows


def _term_xml(e) -> str:
    text = e.text or ""
    if e.tag == RESULTS_NS + "uri":
        return terms.checked(terms.iri(text))
    if e.tag == RESULTS_NS + "bnode":
        return terms.checked("_:" + text)
    if e.tag == RESULTS_NS + "literal":
        lang = e.attrib.get("{http://www.w3.org/XML/1998/namespace}lang")
        return terms.checked(terms.literal(text, e.attrib.get("datatype"), lang))
    raise ValueError(f"a term element {e.tag}")
