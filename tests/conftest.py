from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.http import HttpRequest
from rest_framework.test import APIClient

from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, UserFactory

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TESTS = Path(__file__).resolve().parent
# What makes a test ``serial`` (issue 22 §14; ``make pytest`` runs the rest on parallel workers, each
# with its own test database): Chromium, Docker, nginx and the services tests (tests/ci/), and the
# fixtures that use the one Redis broker and its queue (a worker of one xdist process would consume
# another's tasks, on another test database) or start servers of their own.
SERIAL_MARKS = {"browser", "image"}
SERIAL_FIXTURES = {"celery_broker", "celery_worker", "redis_server", "live_server", "browser", "new_page"}
SERIAL_FOLDERS = (TESTS / "ci",)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``serial`` the tests that must not run beside others (before ``-m`` selects)."""
    for item in items:
        path = Path(str(item.fspath)).resolve()
        if (
            SERIAL_MARKS.intersection(mark.name for mark in item.iter_markers())
            or SERIAL_FIXTURES.intersection(getattr(item, "fixturenames", ()))
            or any(folder in path.parents for folder in SERIAL_FOLDERS)
        ):
            item.add_marker(pytest.mark.serial)


@pytest.fixture(autouse=True)
def _throttle_counts_reset():
    """Every test starts with no login failures or API request counts in the cache (they are
    keyed by the client's address, which every test shares)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _steady_queue(request, monkeypatch):
    """The queues serve work in a random order (``queue_key``, claimed from a random pivot:
    ``pipeline.engine.services._claim``). Tests that follow units through a queue get them oldest
    first: keys count up as units are created and every claim starts at the queue's head. A test
    of the shuffled order itself is marked ``shuffled_queue`` and gets the real thing."""
    if request.node.get_closest_marker("shuffled_queue"):
        yield
        return
    import itertools

    from annotation.models import Question, Screen

    counter = itertools.count(1)
    fields = [model._meta.get_field("queue_key") for model in (Screen, Question)]
    originals = [field.default for field in fields]
    for field in fields:
        field.default = lambda: next(counter)
        field.__dict__.pop("_get_default", None)  # Django caches the default's callable
    monkeypatch.setattr("pipeline.engine.services._pivot", lambda: 0)
    try:
        yield
    finally:
        for field, original in zip(fields, originals, strict=True):
            field.default = original
            field.__dict__.pop("_get_default", None)


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Every test writes its files under its own temporary folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "media")},
        },
    }


@pytest.fixture(autouse=True)
def _control_draw_seeded(monkeypatch):
    """The control draw (``pipeline.quality.standing.control_random``, the system's randomness in
    the product) from a seeded generator: a test's control items are the same on every run,
    whatever ids the database hands out."""
    import random

    from pipeline.quality import standing

    monkeypatch.setattr(standing, "control_random", random.Random(20))


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture
def project(db):
    return ProjectFactory(slug="demo")


@pytest.fixture
def annotator(project):
    user = UserFactory(username="annie")
    MembershipFactory(project=project, user=user)
    return user


@pytest.fixture
def lead(project):
    user = UserFactory(username="leo")
    MembershipFactory(project=project, user=user, role="lead")
    return user


@pytest.fixture
def outsider(db):
    return UserFactory(username="otto")


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


def login_request() -> HttpRequest:
    """What ``Client.login`` passes to ``authenticate``: django-axes guards every password check
    and needs the request (and its client address) it would lock out."""
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = "127.0.0.1"
    return request


def login(client, user) -> None:
    assert client.login(request=login_request(), username=user.username, password=PASSWORD)


def _celery_pools_reset(app) -> None:
    """Forget every pooled broker connection (the app's and kombu's global registry), so that the next
    message goes to the broker configured now and never to a pool a previous test closed."""
    from kombu import pools

    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None
    pools.reset()


@pytest.fixture
def celery_broker(settings):
    """Tasks leave eager mode and travel through the Redis broker (``CELERY_BROKER_URL``) while the test runs;
    the queue is purged first. Yields the Celery app. A worker must be started to consume them."""
    import os

    from annotation.celery import app

    broker = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
    # Read the app's configuration before touching Django's settings: Celery loads them lazily, and
    # would otherwise "restore" the non-eager values below for every later test.
    old = {k: app.conf[k] for k in ("broker_url", "task_always_eager", "result_backend", "task_default_queue")}
    assert old["task_always_eager"] is True
    settings.CELERY_BROKER_URL = broker
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.update(broker_url=broker, task_always_eager=False, result_backend=None)
    _celery_pools_reset(app)
    app.control.purge()  # messages left by an interrupted earlier run must not reach this worker
    try:
        yield app
    finally:
        app.conf.update(**old)
        _celery_pools_reset(app)


@pytest.fixture
def celery_worker(celery_broker):
    """A real Celery worker (solo pool, on a thread of this process) consuming from the Redis broker.

    Tasks queued while it runs leave eager mode and travel through Redis. Use with
    ``@pytest.mark.django_db(transaction=True)`` so that the worker's connection sees the test's rows.
    """
    from celery.contrib.testing.worker import start_worker

    with start_worker(celery_broker, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=30):
        yield celery_broker


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """moto's S3-compatible server (``moto[server]``, requirements-dev.txt) on a free local port,
    for the whole session: the endpoint URL."""
    import shutil
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    moto = shutil.which("moto_server") or str(Path(sys.executable).with_name("moto_server"))
    proc = subprocess.Popen(
        [moto, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.fixture
def s3_storage(settings, moto_server):
    """The default storage on S3 (django-storages against the moto server), in a fresh bucket."""
    import uuid

    import boto3

    bucket = f"screenqa-test-{uuid.uuid4().hex[:12]}"
    boto3.client(
        "s3",
        endpoint_url=moto_server,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=bucket)
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": bucket,
                "endpoint_url": moto_server,
                "region_name": "us-east-1",
                "access_key": "testing",
                "secret_key": "testing",
                "default_acl": None,
                "file_overwrite": True,
            },
        },
    }
    return bucket
