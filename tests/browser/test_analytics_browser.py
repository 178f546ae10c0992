"""The lead's analysis page in Chromium, on a project a scripted crowd has worked through and
post-processing has judged: every chart is drawn, with its numbers."""

from __future__ import annotations

import pytest

from devtools.crowd import crowd_simulate
from pipeline.jobs.runner import job_run_now
from tests.browser.conftest import shoot
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_reads_the_analysis_of_a_worked_project(new_page):
    # given a project worked through by a scripted crowd, then post-processed
    project = ProjectFactory(slug="demo", name="Demo")
    MembershipFactory(project=project, user=UserFactory(username="leo"), role="lead")
    crowd_simulate(project=project, annotators=6, seed=3, new_screens=30)
    job_run_now(kind="postprocess", project_slug="demo")
    page = new_page("leo", width=1366, height=2250)  # tall: the whole page in one screenshot

    # when the lead follows the link from the project page
    page.goto("/projects/demo/")
    page.click("#release a[href='/projects/demo/analysis/']")
    page.wait_for_load_state()

    # then the funnel, both histograms, the stacked shares and the annotators' sparklines are drawn
    assert page.url.endswith("/projects/demo/analysis/")
    assert page.locator("svg.a-funnel rect.bar").count() == 6
    assert page.locator("text[data-step='imported']").text_content() == "30"
    assert page.locator("svg.columns-questions rect.bar").count() == 9
    assert page.locator("svg.columns-boxes rect.bar").count() == 10
    assert page.locator("#answer-sources .stack .seg").count() == 6
    assert page.locator("#categories tr[data-category]").count() >= 2
    assert page.locator("#annotators svg.spark").count() == 7  # the crowd, and its lead (who reviews)
    assert "52.0%" in page.inner_text("#answer-sources")
    shoot(page, "lead-analysis")
