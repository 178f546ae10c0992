"""Pages under the Content-Security-Policy in Chromium: the API documentation (Swagger UI, ReDoc) and
the project page's state filter (the conftest fails a test on any CSP violation or JavaScript error)."""

from __future__ import annotations

import pytest

from tests.factories import MembershipFactory, ProjectFactory, ScreenFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def lead():
    project = ProjectFactory(slug="demo", name="Demo")
    user = UserFactory(username="leo")
    MembershipFactory(project=project, user=user, role="lead")
    return user


def test_swagger_ui_renders_the_schema(new_page, lead):
    page = new_page("leo")
    page.goto("/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "ScreenQA annotation platform API" in page.inner_text(".swagger-ui .info .title")
    # the operations come from the schema the page fetched
    page.wait_for_selector(".opblock-tag")
    assert page.locator(".opblock").count() > 10


def test_the_state_filter_applies_itself(new_page, lead):
    ScreenFactory(project=lead.memberships.get().project, rico_id="31")
    page = new_page("leo")
    page.goto("/projects/demo/")
    with page.expect_navigation():
        page.select_option("#state", "prefilter")
    assert "state=prefilter" in page.url
