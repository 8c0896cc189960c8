"""A local SPARQL 1.1 endpoint: Oxigraph's server (`oxigraph serve`, the
`oxigraph` package of the test and bench dependencies, `make setup`) on
the loopback interface, over a store in a folder. For the tests, the
benchmark (bench/service.py) and the demo (examples/influencers).

    with Oxigraph(folder) as server:      # a free port, or Oxigraph(folder, port=7878); folder None: in memory
        server.update("INSERT DATA { <http://e/u1> <http://e/followers> 5 }")
        server.query_url                  # http://127.0.0.1:PORT/query
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

STARTUP_GUARD_S = 30  # a generous guard: the server answers within a second or two


def _program() -> str:
    found = Path(sys.executable).with_name("oxigraph")
    if found.exists():
        return str(found)
    on_path = shutil.which("oxigraph")
    if on_path is None:
        raise RuntimeError("the `oxigraph` server is not installed: `make setup` installs it (the test and "
                           "bench dependencies of pyproject.toml)")
    return on_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Oxigraph:
    """`folder`: where the store persists (it survives stop() and start());
    None: in memory (much faster to update: no write to disk)."""

    def __init__(self, folder: Path | None = None, port: int | None = None):
        self.folder = Path(folder) if folder is not None else None
        self.port = port or free_port()
        self.process = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def query_url(self) -> str:
        return self.base + "/query"

    def start(self) -> "Oxigraph":
        store = []
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            store = ["--location", str(self.folder)]
        self.process = subprocess.Popen(
            [_program(), "serve", *store, "--bind", f"127.0.0.1:{self.port}"],
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
