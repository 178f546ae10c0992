"""``/healthz``: the load balancer's and the container's probe. Anyone may call it.

It asks each service the site depends on whether it answers (issue 19 §3):

* ``database``: ``SELECT 1``. Without it nothing works: the answer is 503, so a load balancer
  stops sending requests here.
* ``cache`` (the throttles' counts), ``broker`` (background jobs; ``not used`` when jobs run in
  the web process) and ``storage`` (screenshots, uploads, exports): the site keeps serving
  without them (docs/operations.md, "Degraded modes"), so the answer stays 200 with
  ``"status": "degraded"``. All web processes share these services: failing the probe would
  take every one of them out of the load balancer at once, for an outage none of them can cure.

Anonymous callers learn which services are out, never why; a site admin (``is_staff``, logged in)
also gets the error of each, and the log has it always. Each probe is short: the cache and
broker connect with a 1 s timeout, the storage with 2 s and no retry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import Storage, default_storage
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from annotation.db import session

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_SECONDS = 2
_S3_PROBE_CLIENTS: dict[tuple[Any, ...], Any] = {}


def _database() -> None:
    session.ping()


def _cache() -> None:
    cache.get("healthz")


def _broker() -> str | None:
    if not settings.CELERY_BROKER_URL or getattr(settings, "SCREENQA_INPROCESS_THREADS", False):
        return "not used"
    from annotation.celery import app

    with app.connection_for_write(settings.CELERY_BROKER_URL, connect_timeout=1) as connection:
        connection.ensure_connection(max_retries=1, interval_start=0, timeout=PROBE_TIMEOUT_SECONDS)
    return None


def _s3_probe_client(storage: Any) -> Any:
    """A client of the storage's bucket with short timeouts and no retry (the storage's own waits a
    minute and retries), made once per process."""
    from botocore.config import Config

    key = (storage.bucket_name, storage.endpoint_url, storage.region_name, storage.access_key, storage.session_profile)
    client = _S3_PROBE_CLIENTS.get(key)
    if client is None:
        config = storage.client_config.merge(
            Config(
                connect_timeout=PROBE_TIMEOUT_SECONDS,
                read_timeout=PROBE_TIMEOUT_SECONDS,
                retries={"total_max_attempts": 1},
            )
        )
        client = storage._create_session().client(  # django-storages' own credentials rules
            "s3",
            region_name=storage.region_name,
            use_ssl=storage.use_ssl,
            endpoint_url=storage.endpoint_url,
            config=config,
            verify=storage.verify,
        )
        _S3_PROBE_CLIENTS[key] = client
    return client


def _storage() -> None:
    storage: Storage = default_storage
    bucket = getattr(storage, "bucket_name", None)
    if bucket:  # S3: the bucket exists and these credentials may use it
        _s3_probe_client(storage).head_bucket(Bucket=bucket)
    else:
        storage.exists("")


PROBES: dict[str, Callable[[], str | None]] = {
    "database": _database,
    "cache": _cache,
    "broker": _broker,
    "storage": _storage,
}


@require_safe  # GET and HEAD: a probe changes nothing
def healthz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    errors: dict[str, str] = {}
    for name, probe in PROBES.items():
        try:
            checks[name] = probe() or "ok"
        except Exception as exc:  # report, don't crash: the probe's job is to say what is out
            checks[name] = "error"
            errors[name] = f"{type(exc).__name__}: {exc}"[:300]
            logger.warning("healthz: the %s does not answer: %s", name, errors[name])
    if checks["database"] == "error":
        status, code = "error", 503
    else:
        status, code = ("degraded", 200) if errors else ("ok", 200)
    body: dict[str, Any] = {"status": status, "checks": checks}
    if errors and checks["database"] == "ok" and _staff(request):
        body["errors"] = errors
    return JsonResponse(body, status=code)


def _staff(request: HttpRequest) -> bool:
    """A logged-in site admin (the session is read only when there is something to tell)."""
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_staff)
