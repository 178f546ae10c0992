"""`/healthz`: the load balancer's and the container's probe. Anyone may call it. Services that are out:
tests/annotation/test_outages.py."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_answers_ok_when_every_service_answers(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "ok", "broker": "ok", "storage": "ok"},
    }


@pytest.mark.django_db
def test_the_broker_is_not_used_when_jobs_run_in_the_web_process(client, settings):
    settings.CELERY_BROKER_URL = None  # the embedded default
    assert client.get("/healthz").json()["checks"]["broker"] == "not used"


@pytest.mark.django_db
def test_needs_no_login_and_runs_one_query(client, django_assert_num_queries):
    with django_assert_num_queries(1):
        assert client.get("/healthz").status_code == 200
