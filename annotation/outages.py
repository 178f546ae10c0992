"""Outages of the services behind the app: which exceptions mean "the database, the cache, the broker
or the storage cannot be reached now", in one place (issue 19 §3).

* The API answers such an exception with the JSON ``Error`` body, status 503 and ``Retry-After``
  (``annotation.apis.errors.server_error``) instead of a 500: the request may work in a moment.
* The throttles count in this process while the cache is out (``annotation.throttling``).
* The health check names the services that are out (``annotation.apis.health``).
"""

from __future__ import annotations

import botocore.exceptions
import kombu.exceptions
import redis.exceptions
from django.db import InterfaceError, OperationalError

# Seconds a client is told to wait (``Retry-After``) before trying again: a restarted Redis or
# PostgreSQL container answers again within that.
RETRY_AFTER_SECONDS = 30

# Every error of the Redis client: refused or lost connections, timeouts, and a server that cannot
# answer yet (loading its dataset, a read-only replica after a failover).
CACHE_ERRORS: tuple[type[BaseException], ...] = (redis.exceptions.RedisError,)

_SERVICES: tuple[tuple[str, tuple[type[BaseException], ...]], ...] = (
    # Django wraps the driver's errors: a refused or lost connection, a server shutting down (and
    # the transient conflicts PostgreSQL asks a client to retry, which a retry may indeed cure).
    ("database", (OperationalError, InterfaceError)),
    ("cache", CACHE_ERRORS),
    # Celery wraps every transport's connection errors in kombu's OperationalError.
    ("broker", (kombu.exceptions.OperationalError,)),
    # botocore: endpoint unreachable, connect or read timeouts, a connection closed mid-answer.
    ("storage", (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError)),
)


def service_down(exc: BaseException | None) -> str | None:
    """The service (``database``, ``cache``, ``broker``, ``storage``) whose outage ``exc`` is, or
    ``None`` for any other error. Follows explicit causes (``raise ... from``)."""
    seen = 0
    while exc is not None and seen < 8:
        for name, errors in _SERVICES:
            if isinstance(exc, errors):
                return name
        exc = exc.__cause__
        seen += 1
    return None
