"""Brute force (issue 12 §4): who the client is, and the API's throttles.

* Logins (``/login/``, ``/admin/login/``) are guarded by django-axes (settings ``AXES_*``):
  after ``AXES_FAILURE_LIMIT`` wrong passwords for one username from one client, that pair is
  locked out (429, even with the right password) for ``AXES_COOLOFF_TIME``.
* The API: ``AnonThrottle`` (anonymous callers, per client) and ``UserThrottle`` (per user,
  session or token), and ``TokenFailureThrottle``: wrong tokens per client. DRF
  authenticates before it throttles, so a wrong token never reaches the usual throttles;
  ``annotation.authentication`` asks this one first and records each wrong key.

Rates are ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]`` (settings, from the environment; see
docs/operations.md), read on every request so that tests may override them. Counts live in
the default cache: Redis in production, so every web process shares them.
"""

from __future__ import annotations

from typing import Any

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, BaseThrottle, SimpleRateThrottle, UserRateThrottle


def client_ip(request: Any) -> str:
    """The client's address: ``REMOTE_ADDR``, or with ``NUM_PROXIES`` trusted proxies in front
    (the image's nginx role appends the peer it saw to ``X-Forwarded-For``) the address that
    many hops back. One definition for axes (``AXES_CLIENT_IP_CALLABLE``) and the throttles.
    A request with no address was made in-process (a management command, the test client's
    ``login``): it counts as this machine."""
    if not request.META.get("REMOTE_ADDR"):
        return "127.0.0.1"
    return str(BaseThrottle().get_ident(request))


class _LiveRate:
    """DRF reads the rates once, at import; these read them per request."""

    scope: str

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class AnonThrottle(_LiveRate, AnonRateThrottle):
    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


class UserThrottle(_LiveRate, UserRateThrottle):
    pass


class TokenFailureThrottle(_LiveRate, SimpleRateThrottle):
    """Wrong ``Authorization: Token`` keys per client. ``blocked`` reads (no write);
    ``failed`` records one wrong key."""

    scope = "token_failure"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}

    def blocked(self, request: Any) -> float | None:
        """Seconds to wait when the client has used up its wrong tokens, else ``None``."""
        if self.rate is None:
            return None
        self.key = self.get_cache_key(request, None)
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()
        if len(self.history) >= self.num_requests:
            return self.wait()
        return None

    def failed(self, request: Any) -> None:
        if self.rate is None:
            return
        self.blocked(request)
        self.history.insert(0, self.now)
        self.cache.set(self.key, self.history, self.duration)
