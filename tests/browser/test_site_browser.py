"""The site pages in Chromium: log in, follow an import job's progress, see a screen's overlay."""

from __future__ import annotations

import pytest

from annotation.models import ImportJob
from tests.factories import CandidateFactory, MembershipFactory, ProjectFactory, ScreenFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_progress_polling_and_overlay(new_page):
    # given a lead, a running import job and a screen with a candidate
    project = ProjectFactory(slug="demo", name="Demo")
    lead = UserFactory(username="leo")
    MembershipFactory(project=project, user=lead, role="lead")
    screen = ScreenFactory(project=project, rico_id="31")
    CandidateFactory(screen=screen, left=5, top=5, right=80, bottom=40)
    job = ImportJob.objects.create(
        project=project, source="imports/a.zip", source_kind="zip", status="running", processed=1, total=4
    )
    # when the lead logs in through the form and opens the job
    page = new_page("leo")
    page.goto(f"/imports/{job.pk}/")
    block = f"#job-import-{job.pk}"
    assert "1 of 4 screens" in page.inner_text(block)
    # and the job advances then finishes in the background
    ImportJob.objects.filter(pk=job.pk).update(processed=3)
    page.wait_for_function(f"document.querySelector('{block}').innerText.includes('3 of 4 screens')")
    ImportJob.objects.filter(pk=job.pk).update(
        status="done",
        processed=4,
        result={"imported": 3, "already_present": 0, "rejected": [{"name": "9", "reason": "VH is not JSON"}]},
    )
    # then the page shows the summary (the poll that sees the job done reloads the page), and stops polling
    page.wait_for_selector("[data-summary=imported]", timeout=5000)
    assert page.inner_text("[data-summary=imported]") == "3"
    assert "VH is not JSON" in page.inner_text(block)
    assert page.get_attribute(block, "hx-trigger") is None
    # and the screen page shows the overlay the API rendered for this session
    page.goto("/projects/demo/screens/31/")
    page.wait_for_function("document.querySelector('figure.overlay img').complete")
    assert page.evaluate("document.querySelector('figure.overlay img').naturalWidth") == 108
