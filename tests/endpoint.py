"""A real SPARQL 1.1 endpoint for tests: Oxigraph's server (`oxigraph
serve`, the `oxigraph` package of the test dependencies) on a free port of
the loopback interface, over a store in a temporary folder
(cep.service.oxigraph.Oxigraph).

`oxigraph_server` is the pytest fixture: a started server, stopped after
the test. stop() and start() again (same port, same store) make an
endpoint that goes down and comes back mid-run. `Scripted` is a small
local HTTP server for the faults a real server does not show on demand.
"""

from __future__ import annotations

import time

import pytest

from cep.service.oxigraph import Oxigraph


@pytest.fixture
def oxigraph_server(tmp_path):
    with Oxigraph(tmp_path / "store") as server:
        yield server


class _Loopback:
    """An HTTP server of `handler` on a free port of the loopback
    interface, serving from a thread while entered."""

    def _serve(self, handler) -> str:
        import http.server
        import threading

        handler.log_message = lambda *_: None
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.server.shutdown()
        self.server.server_close()


class Scripted(_Loopback):
    """A small HTTP server on the loopback interface that answers every
    request as told: `body` with `content_type` and `status`, after
    `delay` seconds (the faults a real endpoint shows: slow, HTTP errors,
    malformed results). `requests` counts the requests it got."""

    def __init__(self, body: bytes = b"", content_type: str = "application/sparql-results+json",
                 status: int = 200, delay: float = 0.0):
        import http.server

        self.body, self.content_type, self.status, self.delay = body, content_type, status, delay
        self.headers = {}  # more response headers (Location)
        self.requests = 0
        script = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                script.requests += 1
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(script.delay)
                try:
                    self.send_response(script.status)
                    self.send_header("Content-Type", script.content_type)
                    self.send_header("Content-Length", str(len(script.body)))
                    for name, value in script.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(script.body)
                except OSError:  # the client gave up waiting
                    pass

            do_GET = do_POST  # a redirected request may come as a GET

        self.url = self._serve(Handler) + "/sparql"


class Counting(_Loopback):
    """A pass-through to a real endpoint (`target`, its query URL) on the
    loopback interface that keeps the SPARQL query of each request it
    forwards (`queries`): what the engines asked of the endpoint, from
    whichever process they run in. A query text put in `pinned` (an
    initial pull, say) is answered as its first request was, whatever the
    endpoint holds since: an endpoint that changed just after it was read."""

    def __init__(self, target: str):
        import http.server
        import threading
        import urllib.parse
        import urllib.request

        self.queries: list[str] = []
        self.pinned: set[str] = set()
        first = {}  # query -> its first answer
        lock = threading.Lock()
        counting = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                query = urllib.parse.parse_qs(body.decode())["query"][0]
                counting.queries.append(query)
                with lock:
                    kept = first.get(query) if query in counting.pinned else None
                if kept is None:
                    kept = self.forward(body)
                    with lock:
                        first.setdefault(query, kept)
                answer, kind, status = kept
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def forward(self, body: bytes) -> tuple:
                request = urllib.request.Request(target, data=body, method="POST", headers={
                    name: self.headers[name] for name in ("Accept", "Content-Type") if self.headers[name]})
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.read(), response.headers["Content-Type"], response.status

        self.base = self._serve(Handler)
        self.url = f"{self.base}/query"

    def pulls(self, text: str) -> int:
        """The requests that asked for `text` (a pattern's whole view)."""
        return sum(1 for q in self.queries if q == text)
