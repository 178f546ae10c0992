"""Styled 403 / 404 / 500 pages, the favicon, and refusals logged without a traceback."""

from __future__ import annotations

import logging
import sys

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import server_error

from annotation.logfilters import RefusalsWithoutTraceback
from tests.conftest import login
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_an_annotator_opening_a_lead_page_gets_the_styled_403_and_one_log_line(client, caplog, settings):
    # given an annotator of the project
    annotator = UserFactory(username="ann")
    MembershipFactory(project=ProjectFactory(slug="demo"), user=annotator)
    login(client, annotator)
    # when they open the lead's import page
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get("/projects/demo/release/postprocess/")
    # then they get the site's page saying why, with the site's navigation, not a bare "403 Forbidden"
    assert response.status_code == 403
    page = response.content.decode()
    assert 'data-testid="error-403"' in page and "Back to your projects" in page
    assert 'class="topbar"' in page and "favicon.svg" in page
    # and the server's console handler logs one line for it, without the traceback (a refusal is no error)
    records = [r for r in caplog.records if r.name == "django.request"]
    # (the console handler's filter runs first and takes the traceback off the record itself)
    assert len(records) == 1 and records[0].status_code == 403
    assert "refusals" in settings.LOGGING["handlers"]["console"]["filters"]
    assert records[0].exc_info is None
    assert "Traceback" not in logging.Formatter().format(records[0])


def test_a_page_that_does_not_exist_gets_the_styled_404(client):
    login(client, UserFactory(username="ann"))
    response = client.get("/projects/nowhere/")
    assert response.status_code == 404
    assert 'data-testid="error-404"' in response.content.decode()


def test_a_server_error_gets_the_styled_500_and_keeps_its_traceback():
    # given Django's server error handler (it renders without a request context)
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    assert 'data-testid="error-500"' in response.content.decode()
    # and the refusal filter leaves server errors' tracebacks alone
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord(
            "django.request", logging.ERROR, __file__, 1, "Internal Server Error", (), sys.exc_info()
        )
    record.status_code = 500
    RefusalsWithoutTraceback().filter(record)
    assert "Traceback" in logging.Formatter().format(record)


def test_the_favicon_is_served(client: Client):
    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (301, "/static/frontend/favicon.svg")
