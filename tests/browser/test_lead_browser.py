"""A lead's pages in Chromium, on a project a scripted crowd has worked through: the stage funnel,
post-processing results with agreement shares, the short-answer review and the exports."""

from __future__ import annotations

import pytest

from devtools.crowd import crowd_simulate
from pipeline.jobs.runner import job_run_now
from tests.browser.conftest import shoot
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_follows_a_project_from_funnel_to_export(new_page):
    # given a project worked through by a scripted crowd, then post-processed
    project = ProjectFactory(slug="demo", name="Demo")
    MembershipFactory(project=project, user=UserFactory(username="leo"), role="lead")
    crowd_simulate(project=project, annotators=6, seed=3, new_screens=30)
    job_run_now(kind="postprocess", project_slug="demo")
    job_run_now(kind="short-answers", project_slug="demo")
    page = new_page("leo", width=1366, height=900)

    # when the lead opens the project: the funnel is drawn, with the release links
    page.goto("/projects/demo/")
    assert page.locator("svg.funnel rect.bar").count() >= 4
    assert page.locator("a[href='/projects/demo/release/postprocess/']").is_visible()
    shoot(page, "lead-project")

    # the post-processing page shows the agreement shares and the decisions
    page.goto("/projects/demo/release/postprocess/")
    text = page.inner_text("main")
    assert "all agree" in text.lower() or "all" in text.lower()
    shoot(page, "lead-postprocess")

    # the short-answer review shows a sample with editable short answers
    page.goto("/projects/demo/release/short-answers/")
    page.wait_for_load_state()
    assert page.locator("textarea").count() >= 1
    shoot(page, "lead-short-answers")

    # and an export started from the browser finishes and offers its download
    page.goto("/projects/demo/exports/")
    assert page.is_checked("input[name=format][value=screenqa]")  # the public format is the default
    page.locator("#export-start button[type=submit]").click()
    page.wait_for_selector("a[href*='/download/']", timeout=20_000)
    shoot(page, "lead-export")
