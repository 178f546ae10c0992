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


def _rate(scope: str | None) -> str | None:
    """DRF reads the rates once, at import; the throttles here read them per request."""
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(scope) if scope else None
    return None if rate is None else str(rate)


class AnonThrottle(AnonRateThrottle):
    def get_rate(self) -> str | None:
        return _rate(self.scope)

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


class UserThrottle(UserRateThrottle):
    def get_rate(self) -> str | None:
        return _rate(self.scope)


class TokenFailureThrottle(SimpleRateThrottle):
    """Wrong ``Authorization: Token`` keys per client. ``blocked`` reads (no write);
    ``failed`` records one wrong key."""

    scope = "token_failure"

    def get_rate(self) -> str | None:
        return _rate(self.scope)

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}

    def _window(self, request: Any) -> tuple[str, list[float], float, int, int] | None:
        limit, duration = self.parse_rate(self.rate)
        if limit is None or duration is None:
            return None
        key = self.get_cache_key(request, None)
        now = self.timer()
        history = [t for t in self.cache.get(key, []) if t > now - duration]
        return key, history, now, limit, duration

    def blocked(self, request: Any) -> float | None:
        """Seconds to wait when the client has used up its wrong tokens, else ``None``."""
        window = self._window(request)
        if window is None:
            return None
        _key, history, now, limit, duration = window
        if len(history) < limit:
            return None
        return max(duration - (now - min(history)), 1.0)

    def failed(self, request: Any) -> None:
        window = self._window(request)
        if window is None:
            return
        key, history, now, _limit, duration = window
        self.cache.set(key, [now, *history], duration)
