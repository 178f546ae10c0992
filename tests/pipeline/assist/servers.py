"""Local HTTP servers for the assist tests: the baseline backend, a backend that fails or is slow,
and a fake of the OpenAI-compatible chat API. No network beyond 127.0.0.1, no weights."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from devtools.assist_baseline.server import Config, make_server


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def baseline(config: Config | None = None) -> Iterator[str]:
    with serving(make_server("127.0.0.1", 0, config or Config())) as url:
        yield url


@contextmanager
def scripted(reply: Callable[[dict[str, Any]], tuple[int, Any]], *, delay: float = 0.0) -> Iterator[tuple[str, list]]:
    """A server answering every POST with ``reply(body)`` (status, JSON) after ``delay`` seconds;
    yields its URL and the list of bodies (and headers) it received."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            seen.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
            time.sleep(delay)
            status, payload = reply(body)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as url:
        yield url, seen


def openai_reply(content: str) -> Callable[[dict[str, Any]], tuple[int, Any]]:
    """A fake ``/v1/chat/completions``: the reply's message is ``content``."""
    return lambda body: (200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})
