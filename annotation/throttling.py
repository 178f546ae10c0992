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
the default cache: Redis in production, so every web process shares them. While that cache
cannot be reached, they live in this process (``ThrottleCache``): the API keeps answering,
and each process still holds every client to the rates (issue 19 §3).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.core.cache import cache as shared_cache
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.cache.backends.locmem import LocMemCache
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, BaseThrottle, SimpleRateThrottle, UserRateThrottle

from annotation.outages import CACHE_ERRORS

logger = logging.getLogger(__name__)


class ThrottleCache(BaseCache):
    """The throttles' counts: the default cache, or while it cannot be reached, a cache of this
    process (the counts restart there, and each web process counts on its own: a client may make
    up to the rate times the number of processes while the outage lasts; without a fallback it
    would be no answer at all, or no limit).

    After a failure the shared cache is left alone for ``RETRY_SECONDS`` (a cache that times out
    instead of refusing would add its timeout to every request), then tried again. One warning
    when the outage starts in this process and one line when it ends; the failure's text goes to
    the log, never to a client.
    """

    RETRY_SECONDS = 5.0

    def __init__(self) -> None:
        super().__init__({})
        self._local = LocMemCache("screenqa-throttles", {"OPTIONS": {"MAX_ENTRIES": 100_000}})
        self._lock = threading.Lock()
        self._retry_at = 0.0  # monotonic time before which the shared cache is not asked
        self._down = False

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        return self._call("get", key, default, version)

    def set(self, key: str, value: Any, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        self._call("set", key, value, timeout, version)

    def _call(self, method: str, *args: Any) -> Any:
        if time.monotonic() >= self._retry_at:
            try:
                result = getattr(shared_cache, method)(*args)
            except CACHE_ERRORS as exc:
                self._failed(exc)
            else:
                if self._down:
                    self._recovered()
                return result
        return getattr(self._local, method)(*args)

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            self._retry_at = time.monotonic() + self.RETRY_SECONDS
            if not self._down:
                self._down = True
                logger.warning(
                    "The cache cannot be reached (%s: %s): the API throttles count in this process "
                    "until it answers again.",
                    type(exc).__name__,
                    exc,
                )

    def _recovered(self) -> None:
        with self._lock:
            if self._down:
                self._down = False
                logger.warning("The cache answers again: the API throttles count in it again.")


# One per process, shared by every throttle (DRF gives each throttle class a ``cache`` attribute).
throttle_cache = ThrottleCache()


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
    cache = throttle_cache

    def get_rate(self) -> str | None:
        return _rate(self.scope)

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


class UserThrottle(UserRateThrottle):
    cache = throttle_cache

    def get_rate(self) -> str | None:
        return _rate(self.scope)


class TokenFailureThrottle(SimpleRateThrottle):
    """Wrong ``Authorization: Token`` keys per client. ``blocked`` reads (no write);
    ``failed`` records one wrong key."""

    scope = "token_failure"
    cache = throttle_cache

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
