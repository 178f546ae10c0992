"""Half-open connections, and how long the site takes to answer while they are held.

Shared by the proxy test (processes on this machine) and the image test (containers). A half-open
connection sends part of a request and then nothing: half a request line or header block, or whole
headers that announce a body which never comes.
"""

from __future__ import annotations

import http.client
import socket
import time
from dataclasses import dataclass, field


def hold_half_open(
    host: str, port: int, count: int, *, path: str = "/healthz", bodies: bool = True
) -> list[socket.socket]:
    """``count`` connections, each left in the middle of a request: inside the header block, or (every
    other one, with ``bodies``) after headers that promise a body of 10,000 bytes, 10 of them sent."""
    sockets = []
    for i in range(count):
        sock = socket.create_connection((host, port), timeout=5)
        if i % 2 == 0 or not bodies:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: slow".encode())
        else:
            sock.sendall(
                f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                'Content-Length: 10000\r\n\r\n{"note": '.encode()
            )
        sockets.append(sock)
    time.sleep(0.5)  # let the server accept them all (they sit in its listen backlog until then)
    return sockets


def still_open(sockets: list[socket.socket]) -> int:
    """How many of ``sockets`` the server has neither answered nor closed."""
    open_ = 0
    for sock in sockets:
        sock.setblocking(False)
        try:
            data = sock.recv(1)
        except BlockingIOError:
            open_ += 1
        except OSError:
            pass
        else:
            if data == b"":
                continue  # closed by the server
        finally:
            sock.setblocking(True)
    return open_


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


@dataclass
class Timings:
    """Seconds per request (``None``: no answer within the timeout) and the statuses seen."""

    seconds: list[float | None] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)

    @property
    def answered(self) -> list[float]:
        return [s for s in self.seconds if s is not None]

    @property
    def worst(self) -> float:
        return max(self.answered, default=float("inf")) if len(self.answered) == len(self.seconds) else float("inf")

    def summary(self) -> str:
        answered = sorted(self.answered)
        if not answered:
            return f"0/{len(self.seconds)} answered"
        median = answered[len(answered) // 2]
        return (
            f"{len(answered)}/{len(self.seconds)} answered, median {median * 1000:.0f} ms, "
            f"worst {answered[-1] * 1000:.0f} ms, statuses {sorted(set(self.statuses))}"
        )


def timed(
    host: str,
    port: int,
    method: str,
    path: str,
    *,
    count: int,
    timeout: float,
    headers: dict[str, str] | None = None,
) -> Timings:
    """``count`` requests, one connection each, and how long each took to be answered."""
    timings = Timings()
    for _ in range(count):
        start = time.monotonic()
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
        try:
            conn.request(method, path, body=b"" if method == "POST" else None, headers=headers or {})
            response = conn.getresponse()
            response.read()
        except OSError:
            timings.seconds.append(None)
        else:
            timings.seconds.append(time.monotonic() - start)
            timings.statuses.append(response.status)
        finally:
            conn.close()
    return timings
