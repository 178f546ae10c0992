"""`/healthz`: the load balancer's and the container's probe. Anyone may call it."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_answers_ok_when_the_database_answers(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_needs_no_login_and_runs_one_query(client, django_assert_num_queries):
    with django_assert_num_queries(1):
        assert client.get("/healthz").status_code == 200
