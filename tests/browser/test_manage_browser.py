"""A site admin starts a project in Chromium without the Django admin: creates it, edits its
settings (a bad value is explained, not a server error), invites a member; the member accepts the
link, lands on the guidelines once, and finds them linked from the workspace afterwards."""

from __future__ import annotations

import re

import pytest

from annotation.models import Membership, Project
from tests.browser.conftest import shoot, watch
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_admin_creates_a_project_and_invites_a_member_who_reads_the_guidelines(browser, live_server, new_page):
    UserFactory(username="root", is_superuser=True)
    page = new_page("root", width=1366, height=900)

    # the admin creates a project from the home page
    page.click("text=New project")
    page.fill("input[name=name]", "Phones")
    page.fill("input[name=slug]", "phones")
    page.click("#project-create button[type=submit]")
    page.wait_for_url("**/projects/phones/settings/")
    assert page.input_value("input[name=answers_validation]") == "3"  # the papers' defaults
    shoot(page, "manage-settings")

    # a split that does not add up is explained next to the field, and nothing is saved
    page.fill("input[name=split_train]", "70")
    page.click("#project-settings > button[type=submit]")
    assert "add up to 90%" in page.inner_text("[data-field=split_train]")
    page.fill("input[name=split_train]", "60")
    page.fill("input[name=split_validation]", "20")
    page.fill("input[name=split_test]", "20")
    page.fill("input[name=lease_minutes]", "20")
    page.click("#project-settings > button[type=submit]")
    page.wait_for_selector("text=Settings saved.")
    project = Project.objects.get(slug="phones")
    assert (project.split_train, project.split_test, project.lease_minutes) == (60, 20, 20)

    # the admin invites an answerer
    page.click(".subnav >> text=Members")
    page.select_option("#invite select[name=role]", "annotator")
    page.check("#invite input[name=in_answer_pool]")
    page.click("#invite button[type=submit]")
    url = page.inner_text("[data-testid=invitation-url]")
    assert re.search(r"/invitations/[\w-]+/$", url)
    shoot(page, "manage-members")

    # the invited person opens the link (no account yet), chooses a username and password
    context = browser.new_context(viewport={"width": 1366, "height": 900}, base_url=live_server.url)
    errors: list[str] = []
    try:
        guest = context.new_page()
        watch(guest, errors)
        guest.goto(url)
        guest.fill("input[name=username]", "ivy")
        guest.fill("input[name=password]", "correct horse battery")
        guest.fill("input[name=password_again]", "correct horse battery")
        guest.click("#accept button[type=submit]")
        guest.wait_for_url("**/projects/phones/guidelines/")
        # the guidelines welcome them once, with the papers' rules
        assert guest.locator("#welcome").is_visible()
        assert "No yes/no" in guest.inner_text("#guidelines")
        shoot(guest, "manage-guidelines")
        member = Membership.objects.get(project=project, user__username="ivy")
        assert member.in_answer_pool and member.guidelines_seen_at is not None
        # the project page does not show them again, and the workspace links them
        guest.goto("/projects/phones/")
        assert guest.locator("#guidelines-once").count() == 0
        guest.goto("/projects/phones/work/")
        assert guest.locator("[data-testid=guidelines-link]").get_attribute("href") == "/projects/phones/guidelines/"
        guest.goto("/projects/phones/guidelines/")
        assert guest.locator("#welcome").count() == 0
        # the link is used up
        guest.goto(url)
        assert "already used" in guest.inner_text("main")
    finally:
        context.close()
    assert not errors, errors
