"""What operators watch (annotation/observability.py, docs/operations.md): log lines with their request id,
annotator and project, in JSON; the request's context carried into the task it queues, through a real worker;
the metrics and who may read them. The real Prometheus server and Sentry: tests/ci/test_observability_servers.py.
"""

from __future__ import annotations

import io
import json
import logging
import pydoc
import re
import threading

import pytest
from django.test import RequestFactory
from prometheus_client import REGISTRY
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import observability
from annotation.celery import app as celery_app
from annotation.models import ScreenState, Standing, StandingStatus
from annotation.settings.base import logging_config
from tests.conftest import login
from tests.factories import UserFactory, job_of_kind
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


@pytest.fixture
def json_lines():
    """Every log record, formatted as production formats them (the settings' JSON formatter and filters)."""
    config = logging_config("json")
    spec = dict(config["formatters"]["line"])
    formatter = pydoc.locate(spec.pop("()"))(**spec)  # type: ignore[misc,operator]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    handler.addFilter(observability.ContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)


def token_client(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_request_line_has_time_level_logger_request_id_annotator_and_project(project, json_lines):
    annie = member(project, "annie")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    response = token_client(annie).post("/api/projects/demo/stages/questions-1/next/", HTTP_X_REQUEST_ID="edge-7f3a9c")
    assert response.status_code == 200
    assert response["X-Request-ID"] == "edge-7f3a9c"  # answered back, so a client can quote it
    (line,) = [r for r in json_lines() if r["logger"] == "screenqa.request"]
    assert line["level"] == "INFO"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00", line["timestamp"])
    assert line["request_id"] == "edge-7f3a9c"
    assert line["annotator"] == "annie"  # authenticated by token, inside DRF
    assert line["project"] == "demo"
    assert line["route"] == "api-stage-next" and line["status"] == 200 and line["duration_ms"] > 0


def test_a_page_line_names_the_logged_in_member_and_the_project(project, client, json_lines):
    login(client, member(project, "leo", role="lead"))
    response = client.get("/projects/demo/", HTTP_X_REQUEST_ID="page-1")
    assert response.status_code == 200
    lines = [r for r in json_lines() if r.get("request_id") == "page-1"]
    assert lines and all(r["annotator"] == "leo" and r["project"] == "demo" for r in lines)


def test_a_request_without_a_usable_id_gets_one(client, json_lines):
    for given in ("", "has spaces", "x" * 200, "a\u00e9"):
        response = client.get("/healthz", HTTP_X_REQUEST_ID=given)
        assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])
    ids = {r["request_id"] for r in json_lines() if r["logger"] == "screenqa.request"}
    assert len(ids) == 4  # one each, never the header's junk
    assert all(r["annotator"] == "" and r["project"] == "" for r in json_lines())


def test_logging_never_reads_the_user_from_the_database(client, django_assert_num_queries):
    # the session's user is loaded lazily; a log line must not be the one to load it
    with django_assert_num_queries(1):  # /healthz's own SELECT 1
        client.get("/healthz")


@pytest.mark.django_db(transaction=True)
def test_the_request_context_reaches_the_task_it_queues_through_a_real_worker(project, settings):
    from celery.contrib.testing.worker import start_worker

    annie = UserFactory(username="annie")
    seen: list[dict[str, str]] = []
    done = threading.Event()

    @celery_app.task(name="tests.observability.echo", shared=False)
    def echo() -> None:
        logging.getLogger("pipeline.jobs").info("in the task")
        seen.append(observability.current_context())
        done.set()

    request = RequestFactory().get("/projects/demo/", HTTP_X_REQUEST_ID="queued-by-42")
    request.user = annie
    request.resolver_match = type("Match", (), {"kwargs": {"slug": "demo"}, "view_name": "x", "route": "x"})()

    def view(request):
        echo.apply_async()
        from django.http import HttpResponse

        return HttpResponse("queued")

    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    try:
        celery_app.control.purge()
        with start_worker(celery_app, pool="solo", perform_ping_check=False, loglevel="WARNING"):
            observability.RequestContextMiddleware(view)(request)
            assert done.wait(30), "the worker did not run the task"
    finally:
        celery_app.conf.task_always_eager = eager
    assert seen == [{"request_id": "queued-by-42", "annotator": "annie", "project": "demo"}]


def test_a_job_run_in_the_web_process_keeps_the_request_context(project, settings, json_lines):
    """The embedded default runs a queued job on a thread of the web process: the thread gets the context."""
    from pipeline.jobs.queue import _run_in_thread

    seen: list[dict[str, str]] = []
    done = threading.Event()

    class Task:
        def apply(self, args, throw):
            seen.append(observability.current_context())
            done.set()

    request = RequestFactory().get("/")
    request.resolver_match = type("Match", (), {"kwargs": {"slug": "demo"}, "view_name": "x", "route": "x"})()

    def view(request):
        _run_in_thread(Task(), "import", 1)  # type: ignore[arg-type]
        from django.http import HttpResponse

        return HttpResponse()

    observability.RequestContextMiddleware(view)(request)
    assert done.wait(10)
    assert seen[0]["project"] == "demo" and seen[0]["request_id"] == request.request_id


# --- metrics --------------------------------------------------------------------------------------------------


def test_metrics_are_refused_to_anyone_but_site_admins_and_the_token(project, client, settings):
    settings.SCREENQA_METRICS_TOKEN = "s3cret-token-for-prometheus-0123456789"
    assert client.get("/metrics").status_code == 403  # anonymous
    annie = member(project, "annie")
    assert token_client(annie).get("/metrics").status_code == 403  # an API token is not the metrics token
    login(client, member(project, "leo", role="lead"))
    assert client.get("/metrics").status_code == 403  # a lead is not a site admin
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    anonymous = APIClient()
    assert (
        anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token-for-prometheus-0123456789").status_code == 200
    )
    settings.SCREENQA_METRICS_TOKEN = None
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 403  # no token set: none works
    staff = UserFactory(username="ops", is_staff=True)
    login(client, staff)
    response = client.get("/metrics")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain; version=")
    assert client.post("/metrics").status_code == 405


def test_leases_submits_latency_and_queue_depth_are_counted(project, client):
    annie = member(project, "annie")
    screens(project, 3, state=ScreenState.QUESTIONS_1)
    leases = sample("screenqa_leases_total", stage="questions-1", purpose="work")
    submits = sample("screenqa_submits_total", stage="questions-1", purpose="work")
    timed = sample("screenqa_http_request_duration_seconds_count", route="api-stage-next", method="POST", status="200")
    api = token_client(annie)
    lease = api.post("/api/projects/demo/stages/questions-1/next/").json()
    assert (
        api.post(f"/api/assignments/{lease['id']}/submit/", {"questions": ["What?"]}, format="json").status_code == 200
    )
    assert sample("screenqa_leases_total", stage="questions-1", purpose="work") == leases + 1
    assert sample("screenqa_submits_total", stage="questions-1", purpose="work") == submits + 1
    assert (
        sample("screenqa_http_request_duration_seconds_count", route="api-stage-next", method="POST", status="200")
        == timed + 1
    )
    login(client, UserFactory(username="ops", is_staff=True))
    text = client.get("/metrics").content.decode()
    assert re.search(r'^screenqa_queue_depth\{project="demo",stage="questions-1"\} 2\.0$', text, re.M), text[-3000:]
    assert 'screenqa_leases_total{purpose="work",stage="questions-1"}' in text


def test_pauses_and_control_results_are_counted(project):
    annie = member(project, "annie")
    pauses = sample("screenqa_pauses_total", stage="answers")
    standing = Standing.objects.create(project=project, user=annie, stage="answers", status=StandingStatus.ACTIVE)
    standing.status = StandingStatus.PAUSED
    standing.save(update_fields=["status"])
    standing.save(update_fields=["items_done"])  # still paused, but not paused again
    assert sample("screenqa_pauses_total", stage="answers") == pauses + 1
    before = sample(
        "screenqa_control_results_total", stage="answers", purpose="control", outcome="expired", correct="false"
    )
    row = type("Row", (), {"stage": "answers", "purpose": "control", "outcome": "expired", "correct": False})()
    observability._control_result_saved(sender=None, instance=row, created=True)
    observability._control_result_saved(sender=None, instance=row, created=False)
    after = sample(
        "screenqa_control_results_total", stage="answers", purpose="control", outcome="expired", correct="false"
    )
    assert after == before + 1


def test_job_durations_and_failures_are_counted(project):
    from pipeline.jobs.runner import job_run

    failures = sample("screenqa_job_failures_total", kind="import")
    runs = sample("screenqa_job_duration_seconds_count", kind="import", outcome="failed")
    job = job_of_kind(kind="import", project=project)  # its zip is not stored: the run fails
    with pytest.raises(Exception):
        job_run(kind="import", job_id=job.pk)
    assert sample("screenqa_job_failures_total", kind="import") == failures + 1
    assert sample("screenqa_job_duration_seconds_count", kind="import", outcome="failed") == runs + 1


def test_the_grafana_dashboard_reads_only_metrics_the_site_exports():
    from pathlib import Path

    dashboard = json.loads((Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    used = {name for expr in exprs for name in re.findall(r"\b(screenqa_[a-z_]+)", expr)}
    exported = (
        {"screenqa_queue_depth"}
        | {sample_name for metric in REGISTRY.collect() for sample_name in (s.name for s in metric.samples)}
        | {metric.name + suffix for metric in REGISTRY.collect() for suffix in ("_total", "_bucket", "_count", "_sum")}
    )
    assert used and used <= exported, used - exported


def test_request_labels_stay_a_bounded_set(client):
    before = sample("screenqa_http_request_duration_seconds_count", route="healthz", method="other", status="405")
    for method in ("BREW", "PROPFIND", "X" * 40):
        assert client.generic(method, "/healthz").status_code == 405
    after = sample("screenqa_http_request_duration_seconds_count", route="healthz", method="other", status="405")
    assert after == before + 3
    unmatched = sample("screenqa_http_request_duration_seconds_count", route="unmatched", method="GET", status="404")
    for i in range(3):
        client.get(f"/no-such-page-{i}/")
    assert sample("screenqa_http_request_duration_seconds_count", route="unmatched", method="GET", status="404") == (
        unmatched + 3
    )
