"""Redis down (issue 19 §3), for real: the cache and the broker point at a ``redis-server`` of the test's
own, which the test stops. The API keeps serving what needs no cache (the throttles count in this
process meanwhile, and still refuse), answers a JSON 503 where it cannot work (queueing a job), and
``/healthz`` says what is out without saying why to anonymous callers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from annotation import throttling
from annotation.apis.errors import UNAVAILABLE
from annotation.models import Screen
from tests.ci.throwaway import REDIS, RedisServer
from tests.conftest import _celery_pools_reset, login
from tests.factories import UserFactory, job_of_kind
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.skipif(REDIS is None, reason="redis-server is not installed (the test starts its own)")


@pytest.fixture
def redis_server(tmp_path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_cache(redis_server, monkeypatch) -> Iterator[RedisServer]:
    """The default cache on the throwaway Redis, as production configures it, and throttles whose
    per-process fallback starts empty and tries Redis again at once (no 5 s pause). The cache is
    restored before the suite's own fixtures clear it (``override_settings``, not ``settings``)."""
    caches = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_server.url,
            "KEY_PREFIX": "screenqa",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2},
        }
    }
    fresh = throttling.ThrottleCache()
    fresh.RETRY_SECONDS = 0
    for throttle in (throttling.AnonThrottle, throttling.UserThrottle, throttling.TokenFailureThrottle):
        monkeypatch.setattr(throttle, "cache", fresh)
    with override_settings(CACHES=caches):
        yield redis_server


def rates(settings, **rates: str) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates},
    }


def redis_keys(server: RedisServer) -> list[bytes]:
    import redis

    return redis.Redis.from_url(server.url).keys("*")


def test_the_throttles_use_the_one_per_process_fallback():
    assert throttling.AnonThrottle.cache is throttling.throttle_cache
    assert throttling.UserThrottle.cache is throttling.throttle_cache
    assert throttling.TokenFailureThrottle.cache is throttling.throttle_cache


@pytest.mark.django_db
def test_with_redis_down_the_api_serves_screens_and_work(redis_cache, caplog):
    # Given an annotator of a project with screens, and the API working on Redis
    project = member_project()
    annie = member(project, "annie")
    rico_id = Screen.objects.filter(project=project).first().rico_id
    client = Client(raise_request_exception=False)
    login(client, annie)
    base = f"/api/projects/{project.slug}/screens/{rico_id}/"
    assert client.get(base).status_code == 200
    assert redis_keys(redis_cache), "the throttles count in Redis while it answers"
    # When Redis stops
    redis_cache.stop()
    # then the screen, its screenshot and view hierarchy and the engine's `next` still answer
    with caplog.at_level(logging.WARNING, logger="annotation.throttling"):
        for path in (base, base + "image/", base + "vh/", base + "overlay/"):
            response = client.get(path)
            assert response.status_code == 200, (path, response.status_code, response.content[:300])
        response = client.post(f"/api/projects/{project.slug}/stages/prefilter/next/")
        assert response.status_code == 200, response.content[:300]
    # with one log line saying why
    outage = [r for r in caplog.records if "cache cannot be reached" in r.getMessage()]
    assert len(outage) == 1 and "ConnectionError" in outage[0].getMessage()


@pytest.mark.django_db
def test_with_redis_down_the_throttles_still_refuse(redis_cache, settings, api_client):
    # Given tight rates, and Redis stopped
    rates(settings, anon="3/min", token_failure="3/min")
    redis_cache.stop()
    # anonymous callers are still held to their rate (counted in this process)
    statuses = [api_client.get("/api/schema/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    # and so are wrong tokens: guessing keys gets no faster while Redis is out
    guesses = [
        api_client.get("/api/projects/demo/screens/1/", HTTP_AUTHORIZATION=f"Token {'0' * 39}{n}").status_code
        for n in range(5)
    ]
    assert guesses[:3] == [401, 401, 401] or guesses[:3] == [403, 403, 403], guesses
    assert guesses[3:] == [429, 429], guesses


@pytest.mark.django_db
def test_once_redis_answers_again_the_throttles_count_in_it_again(redis_cache, api_client, caplog):
    redis_cache.stop()
    assert api_client.get("/api/schema/").status_code == 200  # counted in this process
    redis_cache.start()
    with caplog.at_level(logging.WARNING, logger="annotation.throttling"):
        assert api_client.get("/api/schema/").status_code == 200
    assert any(b"throttle_anon" in key for key in redis_keys(redis_cache))
    assert any("answers again" in r.getMessage() for r in caplog.records)


# --- the health check -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_healthz_reports_redis_down_without_saying_why_to_anonymous_callers(redis_cache, caplog):
    # Given Redis up: every service answers
    client = Client(raise_request_exception=False)
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "ok", "broker": "ok", "storage": "ok"},
    }
    # When Redis stops
    redis_cache.stop()
    with caplog.at_level(logging.WARNING, logger="annotation.apis.health"):
        response = client.get("/healthz")
    # then the site still serves (200: the load balancer keeps it) and says the cache is out, not why
    assert response.status_code == 200
    assert response.json() == {
        "status": "degraded",
        "checks": {"database": "ok", "cache": "error", "broker": "ok", "storage": "ok"},
    }
    assert "Connection" not in response.content.decode() and "111" not in response.content.decode()
    # the log says why
    logged = [r.getMessage() for r in caplog.records]
    assert any("cache does not answer" in line and "ConnectionError" in line for line in logged), logged
    # and so does the answer to a logged-in site admin
    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    login(client, admin)
    staff = client.get("/healthz").json()
    assert staff["checks"]["cache"] == "error"
    assert staff["errors"]["cache"].startswith("ConnectionError: ")
    # while a member who is not staff learns no more than anyone
    annie = UserFactory(username="annie-member")
    login(client, annie)
    assert "errors" not in client.get("/healthz").json()


@pytest.mark.django_db
def test_healthz_reports_the_broker_down(settings, redis_server):
    settings.CELERY_BROKER_URL = redis_server.url
    redis_server.stop()
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "degraded" and response.json()["checks"]["broker"] == "error"


@pytest.mark.django_db
def test_healthz_reports_the_storage_down(s3_storage, moto_server, settings):
    assert Client().get("/healthz").json()["checks"]["storage"] == "ok"
    # a bucket that is gone, then a store that does not answer
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            **settings.STORAGES["default"],
            "OPTIONS": {**settings.STORAGES["default"]["OPTIONS"], "bucket_name": "no-such-bucket"},
        },
    }
    assert Client().get("/healthz").json()["checks"]["storage"] == "error"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            **settings.STORAGES["default"],
            "OPTIONS": {**settings.STORAGES["default"]["OPTIONS"], "endpoint_url": "http://127.0.0.1:9"},
        },
    }
    response = Client().get("/healthz")
    assert response.status_code == 200 and response.json()["checks"]["storage"] == "error"


@pytest.mark.django_db
def test_healthz_is_503_when_the_database_is_out(monkeypatch):
    from django.db import OperationalError

    def down() -> None:
        raise OperationalError('connection to server at "postgres" failed: Connection refused')

    monkeypatch.setattr("annotation.db.session.ping", down)
    response = Client(raise_request_exception=False).get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "error" and response.json()["checks"]["database"] == "error"
    assert "refused" not in response.content.decode()


# --- the broker down: what cannot work answers a JSON 503 ----------------------------------------------


@pytest.fixture
def broker_down(settings, redis_server, monkeypatch) -> Iterator[None]:
    """Tasks leave eager mode for the throwaway Redis, which is stopped."""
    from annotation.celery import app

    old = {k: app.conf[k] for k in ("broker_url", "task_always_eager")}
    monkeypatch.setenv("CELERY_BROKER_URL", redis_server.url)  # Celery reads it before its settings
    settings.CELERY_BROKER_URL = redis_server.url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.update(broker_url=redis_server.url, task_always_eager=False)
    _celery_pools_reset(app)
    redis_server.stop()
    try:
        yield
    finally:
        app.conf.update(**old)
        _celery_pools_reset(app)


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_queueing_a_job_is_a_json_503(broker_down):
    # Given a lead and a failed import
    project = member_project()
    lead = member(project, "leo", role="lead")
    job = job_of_kind(kind="import", project=project, status="failed", error="OSError: disk full")
    token = Token.objects.create(user=lead).key
    # when the lead runs it again while the broker is out
    response = Client(raise_request_exception=False).post(
        f"/api/imports/{job.pk}/retry/", HTTP_AUTHORIZATION=f"Token {token}"
    )
    # then the answer is the API's JSON 503, with when to try again
    assert response.status_code == 503, response.content[:500]
    assert response["Content-Type"] == "application/json" and response["Retry-After"] == "30"
    assert response.json() == {"detail": UNAVAILABLE}


def member_project():
    from tests.factories import ProjectFactory

    project = ProjectFactory(slug="outage")
    screens(project, 2)
    return project
