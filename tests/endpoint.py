"""A real SPARQL 1.1 endpoint for tests: Oxigraph's server (`oxigraph
serve`, the `oxigraph` package of the test dependencies) on a free port of
the loopback interface, over a store in a temporary folder.

    with Oxigraph(tmp_path) as server:
        server.update("INSERT DATA { <http://e/u1> <http://e/followers> 5 }")
        server.query_url      # http://127.0.0.1:PORT/query

`oxigraph_server` is the pytest fixture: a started server, stopped after
the test. stop() and start() again (same port, same store) make an
endpoint that goes down and comes back mid-run.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

STARTUP_GUARD_S = 30  # a generous guard: the server answers within a second or two


def _program() -> str:
    found = Path(sys.executable).with_name("oxigraph")
    if found.exists():
        return str(found)
    on_path = shutil.which("oxigraph")
    if on_path is None:
        pytest.fail("the `oxigraph` server is not installed: `make setup` installs the test dependencies")
    return on_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Oxigraph:
    def __init__(self, folder: Path, port: int | None = None):
        self.folder = Path(folder)
        self.port = port or free_port()
        self.process = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def query_url(self) -> str:
        return self.base + "/query"

    def start(self) -> "Oxigraph":
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [_program(), "serve", "--location", str(self.folder), "--bind", f"127.0.0.1:{self.port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + STARTUP_GUARD_S
        while True:
            try:
                self._post("/query", {"query": "ASK {}"}, "application/x-www-form-urlencoded")
                return self
            except (urllib.error.URLError, ConnectionError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"oxigraph serve did not start on port {self.port}")
                time.sleep(0.05)

    def stop(self):
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STARTUP_GUARD_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def update(self, text: str):
        """A SPARQL 1.1 Update request (INSERT DATA, DELETE/INSERT WHERE)."""
        self._post("/update", text, "application/sparql-update")

    def _post(self, path: str, data, content_type: str):
        body = urllib.parse.urlencode(data).encode() if isinstance(data, dict) else data.encode()
        request = urllib.request.Request(self.base + path, data=body, method="POST",
                                         headers={"Content-Type": content_type})
        with urllib.request.urlopen(request, timeout=STARTUP_GUARD_S) as response:
            return response.read()

    def __enter__(self):
        return self.start()

    def __exit__(self, *_):
        self.stop()


@pytest.fixture
def oxigraph_server(tmp_path):
    with Oxigraph(tmp_path / "store") as server:
        yield server


class Scripted:
    """A small HTTP server on the loopback interface that answers every
    request as told: `body` with `content_type` and `status`, after
    `delay` seconds (the faults a real endpoint shows: slow, HTTP errors,
    malformed results). `requests` counts the requests it got."""

    def __init__(self, body: bytes = b"", content_type: str = "application/sparql-results+json",
                 status: int = 200, delay: float = 0.0):
        import http.server
        import threading

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

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.server.shutdown()
        self.server.server_close()
