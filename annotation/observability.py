"""What operators watch: structured logs with a request context, Prometheus metrics, Sentry (docs/operations.md).

Everything is here, so the product's code gains only thin calls at its single points (a lease made, a
submission recorded, a job run) and the hot path a constant cost:

* **Request context.** ``RequestContextMiddleware`` takes the request id from the proxy's ``X-Request-ID``
  (or makes one), answers it back, and keeps the request in a context variable; ``ContextFilter`` puts
  ``request_id``, ``annotator`` and ``project`` on every log record, read from it without a query. A job's
  task carries the context in its headers (``before_task_publish``) into the worker (``task_prerun``).
* **Metrics.** Counters and histograms of ``prometheus_client``, written per process into
  ``PROMETHEUS_MULTIPROC_DIR`` when it is set (gunicorn's processes, Celery's pool: multiprocess mode), and
  the queue depth per project and stage read from the database when scraped (``queue_depth_provider``, which
  ``pipeline`` registers: this layer does not know the stages). ``metrics`` serves them to site admins or to
  the bearer of ``SCREENQA_METRICS_TOKEN``; everybody else gets 403.
* **Sentry.** ``sentry_init`` switches the SDK on when ``SENTRY_DSN`` is set (the settings call it).
"""

from __future__ import annotations

import contextlib
import contextvars
import hmac
import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

logger = logging.getLogger("screenqa.request")

# --- request context ------------------------------------------------------------------------------------------

REQUEST_ID_HEADER = "X-Request-ID"
# What a request id from outside may look like (nginx's $request_id is 32 hex digits; a UUID passes too).
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")

# The request being served (its user and URL are read only when a record is logged), and the context a task
# brought along from the request that queued it.
_request: contextvars.ContextVar[Any] = contextvars.ContextVar("screenqa_request", default=None)
_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("screenqa_request_id", default="")
_carried: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("screenqa_carried", default={})  # noqa: B039

HEADER_KEYS = ("screenqa_request_id", "screenqa_annotator", "screenqa_project")


def request_id() -> str:
    """The current request's (or the running task's) id; empty outside both."""
    return _request_id.get() or _carried.get().get("screenqa_request_id", "")


def _user_of(request: Any) -> Any:
    """The request's user if authentication has already loaded it (the session's lazy user once read, or the
    user DRF authenticated), else ``None``: a log line never costs a query."""
    user = request.__dict__.get("user")
    if user is None:
        return None
    from django.utils.functional import empty

    wrapped = getattr(user, "_wrapped", user)  # SimpleLazyObject: loaded or not
    if wrapped is None or wrapped is empty:
        return None
    return wrapped if getattr(wrapped, "is_authenticated", False) else None


def current_context() -> dict[str, str]:
    """``request_id``, ``annotator`` (username) and ``project`` (slug) of what is being served, ``""`` where
    unknown."""
    request = _request.get()
    if request is None:
        carried = _carried.get()
        return {
            "request_id": carried.get("screenqa_request_id", ""),
            "annotator": carried.get("screenqa_annotator", ""),
            "project": carried.get("screenqa_project", ""),
        }
    user = _user_of(request)
    match = getattr(request, "resolver_match", None)
    project = match.kwargs.get("slug", "") if match is not None else ""
    return {
        "request_id": _request_id.get(),
        "annotator": user.get_username() if user is not None else "",
        "project": str(project),
    }


class ContextFilter(logging.Filter):
    """Puts ``request_id``, ``annotator`` and ``project`` on every record (empty outside a request or task)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in current_context().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _route(request: Any) -> str:
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return match.view_name or match.route or "unnamed"
    return "unmatched"  # 404s before any view, static files served by WhiteNoise, redirects of the middleware


class RequestContextMiddleware:
    """First of the middleware: the request id, the log context, the request's log line and its latency."""

    def __init__(self, get_response: Callable[[Any], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        started = time.perf_counter()
        given = request.META.get("HTTP_X_REQUEST_ID", "")
        rid = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        request.request_id = rid
        tokens = (_request.set(request), _request_id.set(rid))
        try:
            response = self.get_response(request)
            elapsed = time.perf_counter() - started
            response[REQUEST_ID_HEADER] = rid
            route = _route(request)
            method = request.method if request.method in _METHODS else "other"  # labels stay a bounded set
            REQUEST_LATENCY.labels(route=route, method=method, status=str(response.status_code)).observe(elapsed)
            logger.info(
                "%s %s %s %.1f ms",
                request.method,
                request.path,
                response.status_code,
                elapsed * 1000,
                extra={
                    "route": route,
                    "method": request.method,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": round(elapsed * 1000, 2),
                },
            )
            return response
        finally:
            _request.reset(tokens[0])
            _request_id.reset(tokens[1])


# --- Celery: the request's context travels with the task it queues ------------------------------------------


def _task_published(headers: dict[str, Any] | None = None, **_: Any) -> None:
    if headers is None:
        return
    context = current_context()
    for key in HEADER_KEYS:
        value = context[key.removeprefix("screenqa_")]
        if value:
            headers.setdefault(key, value)


def _task_started(task: Any = None, **_: Any) -> None:
    request = getattr(task, "request", None)
    if request is None:
        return
    extra = getattr(request, "headers", None) or {}
    carried = {key: str(getattr(request, key, None) or extra.get(key) or "") for key in HEADER_KEYS}
    if not any(carried.values()):
        return  # eager or in-process: the context copied from the request stays
    # The task's own token: task_postrun resets it (a worker's process serves one task at a time).
    request.screenqa_context_token = _carried.set(carried)


def _task_finished(task: Any = None, **_: Any) -> None:
    token = getattr(getattr(task, "request", None), "screenqa_context_token", None)
    if token is not None:
        with contextlib.suppress(ValueError):  # set in another context (a thread): nothing to undo here
            _carried.reset(token)


def _worker_started(**_: Any) -> None:
    """The worker role's metrics (jobs run there): served on ``WORKER_METRICS_PORT`` of its own network."""
    port = os.environ.get("WORKER_METRICS_PORT")
    if not port:
        return
    from prometheus_client import start_http_server

    bind = os.environ.get("WORKER_METRICS_BIND", "0.0.0.0")  # noqa: S104 (the worker's own network)
    start_http_server(int(port), addr=bind, registry=scrape_registry())


def _worker_process_ended(**_: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid())


def connect() -> None:
    """Connect the Celery signals (``AnnotationConfig.ready``); idempotent."""
    from celery import signals

    signals.before_task_publish.connect(_task_published, dispatch_uid="screenqa-publish-context")
    signals.task_prerun.connect(_task_started, dispatch_uid="screenqa-task-context")
    signals.task_postrun.connect(_task_finished, dispatch_uid="screenqa-task-context-end")
    signals.worker_ready.connect(_worker_started, dispatch_uid="screenqa-worker-metrics")
    signals.worker_process_shutdown.connect(_worker_process_ended, dispatch_uid="screenqa-worker-process-end")


# --- metrics ---------------------------------------------------------------------------------------------------

REQUEST_LATENCY = Histogram(
    "screenqa_http_request_duration_seconds",
    "Time to answer a request, by route (URL name), method and status.",
    ["route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
LEASES = Counter("screenqa_leases", "New leases handed out, by stage and purpose.", ["stage", "purpose"])
SUBMITS = Counter("screenqa_submits", "Submissions accepted, by stage and purpose.", ["stage", "purpose"])
PAUSES = Counter("screenqa_pauses", "Annotators paused in a stage by quality monitoring.", ["stage"])
CONTROL_RESULTS = Counter(
    "screenqa_control_results",
    "Gold items scored (qualification and control), by stage, purpose, outcome and whether right.",
    ["stage", "purpose", "outcome", "correct"],
)
JOB_DURATION = Histogram(
    "screenqa_job_duration_seconds",
    "Runs of background jobs, by kind and outcome (done, failed, lost to another run).",
    ["kind", "outcome"],
    buckets=(0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600),
)
JOB_FAILURES = Counter("screenqa_job_failures", "Background job runs that failed, by kind.", ["kind"])


def lease_made(*, stage: str, purpose: str) -> None:
    LEASES.labels(stage=stage, purpose=purpose).inc()


def submit_recorded(*, stage: str, purpose: str) -> None:
    SUBMITS.labels(stage=stage, purpose=purpose).inc()


def job_ran(*, kind: str, outcome: str, seconds: float) -> None:
    JOB_DURATION.labels(kind=kind, outcome=outcome).observe(seconds)
    if outcome == "failed":
        JOB_FAILURES.labels(kind=kind).inc()


def _standing_saved(sender: Any, instance: Any, update_fields: Iterable[str] | None = None, **_: Any) -> None:
    """A standing saved with its status paused (``pipeline.quality.standing`` writes status changes so)."""
    if instance.status == "paused" and (update_fields is None or "status" in update_fields):
        PAUSES.labels(stage=instance.stage).inc()


def _control_result_saved(sender: Any, instance: Any, created: bool = False, **_: Any) -> None:
    if created:
        CONTROL_RESULTS.labels(
            stage=instance.stage,
            purpose=instance.purpose,
            outcome=instance.outcome,
            correct="true" if instance.correct else "false",
        ).inc()


def connect_models() -> None:
    """Pauses and control results, counted from the rows the quality rules save (``AnnotationConfig.ready``)."""
    from django.db.models.signals import post_save

    from annotation.models import ControlResult, Standing

    post_save.connect(_standing_saved, sender=Standing, dispatch_uid="screenqa-metrics-pause")
    post_save.connect(_control_result_saved, sender=ControlResult, dispatch_uid="screenqa-metrics-control")


# Queue depth per (project slug, stage): set by ``pipeline`` (its app's ready), read at scrape time.
queue_depth_provider: Callable[[], Iterable[tuple[str, str, int]]] | None = None


class QueueDepthCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "screenqa_queue_depth", "Units waiting in each stage of each project.", labels=["project", "stage"]
        )
        if queue_depth_provider is None:
            return
        try:
            depths = list(queue_depth_provider())
        except Exception:  # the database is out: the other metrics still answer (and the gauge is absent)
            logger.warning("metrics: the queue depths could not be read", exc_info=True)
            return
        for project, stage, depth in depths:
            family.add_metric([project, stage], depth)
        yield family


def scrape_registry() -> CollectorRegistry:
    """What a scrape reads: every process's files (multiprocess mode) or this process's metrics."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


def metrics_text(*, with_queues: bool = True) -> bytes:
    registry = scrape_registry()
    text = generate_latest(registry)
    if with_queues:
        queues = CollectorRegistry(auto_describe=False)
        queues.register(QueueDepthCollector())
        text += generate_latest(queues)
    return text


def metrics_allowed(request: Any) -> bool:
    """Site admins (a session), or the bearer of ``SCREENQA_METRICS_TOKEN`` (Prometheus)."""
    from django.conf import settings

    token = getattr(settings, "SCREENQA_METRICS_TOKEN", None)
    given = request.META.get("HTTP_AUTHORIZATION", "")
    if token and given.startswith("Bearer ") and hmac.compare_digest(given[7:].strip().encode(), token.encode()):
        return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated and user.is_staff)


def metrics(request: Any) -> Any:
    """``GET /metrics``: the Prometheus text format, for site admins and the token's bearer; 403 otherwise."""
    from django.http import HttpResponse, HttpResponseForbidden, HttpResponseNotAllowed

    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    if not metrics_allowed(request):
        return HttpResponseForbidden(
            "Metrics are for site admins, or send Authorization: Bearer <SCREENQA_METRICS_TOKEN>.\n",
            content_type="text/plain",
        )
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE_LATEST)


# --- Sentry ----------------------------------------------------------------------------------------------------


def sentry_init(dsn: str | None, *, environment: str | None = None, traces: float = 0.0) -> bool:
    """Switch Sentry on when a DSN is given (errors of requests, jobs and logged exceptions); ``False`` if not."""
    if not dsn:
        return False
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        release=os.environ.get("SCREENQA_RELEASE") or None,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        traces_sample_rate=traces,
        send_default_pii=False,  # no usernames, addresses or cookies leave the site
        before_send=_sentry_tags,
    )
    return True


def _sentry_tags(event: Any, hint: dict[str, Any]) -> Any:  # sentry_sdk.types.Event
    """The request id and project of the request or job the error happened in, to find its log lines."""
    context = current_context()
    tags = event.setdefault("tags", {})
    for key in ("request_id", "project"):
        if context[key]:
            tags.setdefault(key, context[key])
    return event
