"""A ``redis-server`` of a test's own, to stop and start again: the broker or cache going away for real
(issue 19 §3), without touching the Redis other tests share."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

REDIS = shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """On a free port of 127.0.0.1, append-only as compose.yaml runs it (its data is kept across a
    stop and start, in ``folder``)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert REDIS, "redis-server is not installed"
        self.process = subprocess.Popen(
            [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes"],
            cwd=self.folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not self.answers():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop it (SIGTERM, as ``docker stop`` does): from now on its port refuses connections."""
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=15)
            self.process = None
