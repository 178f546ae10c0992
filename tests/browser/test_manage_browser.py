"""A site admin starts a project in Chromium without the Django admin: creates it, edits its
settings (a bad value is explained, not a server error), invites a member; the member accepts the
link, lands on the guidelines once, and finds them linked from the workspace afterwards. A lead
decides an app's language on the actions page, both ways, and hands a held lease to a member found by
typing part of their name."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, Membership, Project, QuestionState, ScreenState
from tests.browser.conftest import shoot, watch
from tests.factories import (
    AppFactory,
    MembershipFactory,
    ProjectFactory,
    QuestionFactory,
    ScreenFactory,
    UserFactory,
)

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


def test_lead_marks_an_app_non_english_then_declares_it_english(new_page):
    # given a project with an app whose screens are at two stages, one with a question being answered
    project = ProjectFactory(slug="langs", name="Langs")
    MembershipFactory(project=project, user=UserFactory(username="lena"), role="lead")
    app = AppFactory(project=project, package="com.hola")
    waiting = ScreenFactory(project=project, app=app)
    answering = ScreenFactory(project=project, app=app, state=ScreenState.ANSWERING, split="train")
    question = QuestionFactory(screen=answering, state=QuestionState.ANSWERING, answers_needed=1)
    page = new_page("lena")
    page.goto("/projects/langs/actions/")
    row = page.locator("tr[data-app='com.hola']")
    assert "undecided" in row.inner_text()

    # when the lead marks the app non-English: every screen leaves, its question is dropped
    row.get_by_role("button", name="Mark non-English").click()
    page.wait_for_selector("text=com.hola is non-English: 2 screen(s) excluded")
    row = page.locator("tr[data-app='com.hola']")
    assert "non-English" in row.inner_text() and "a lead" in row.inner_text()
    question.refresh_from_db()
    assert (question.state, question.drop_reason) == (QuestionState.DROPPED, "non-english-app")

    # and then declares it English: the screens and the question are back where they were
    row.get_by_role("button", name="Declare English").click()
    page.wait_for_selector("text=com.hola is English: 2 screen(s) restored")
    shoot(page, "manage-app-language")
    row = page.locator("tr[data-app='com.hola']")
    assert row.get_by_role("button", name="Mark non-English").is_visible()
    assert row.get_by_role("button", name="Declare English").count() == 0
    waiting.refresh_from_db()
    answering.refresh_from_db()
    question.refresh_from_db()
    assert (waiting.state, answering.state) == (ScreenState.PREFILTER, ScreenState.ANSWERING)
    assert (question.state, question.drop_reason) == (QuestionState.ANSWERING, "")


def test_lead_hands_a_lease_to_a_member_found_by_typing_part_of_the_name(new_page):
    # given a project of 40 crowd accounts, one of whom holds a screen
    project = ProjectFactory(slug="crowded", name="Crowded")
    MembershipFactory(project=project, user=UserFactory(username="lena"), role="lead")
    crowd = [UserFactory(username=f"crowded/worker-{n:02}") for n in range(40)]
    for user in crowd:
        MembershipFactory(project=project, user=user)
    held = Assignment.objects.create(
        project=project,
        stage="questions-1",
        screen=ScreenFactory(project=project, state=ScreenState.QUESTIONS_1),
        annotator=crowd[0],
        lease_expires_at=timezone.now() + timedelta(minutes=30),
    )
    page = new_page("lena")
    page.goto("/projects/crowded/leases/")
    assert page.locator("#lease-members option").count() == 0  # no member is written into the page

    # when the lead types part of a name, the field offers the members holding it, and no others
    field = page.locator(f"tr[data-assignment='{held.pk}'] input[name=username]")
    field.fill("ker-3")
    page.wait_for_function("document.querySelectorAll('#lease-members option').length === 10")
    offered = page.eval_on_selector_all("#lease-members option", "els => els.map(e => e.value)")
    assert offered == [f"crowded/worker-{n}" for n in range(30, 40)]
    shoot(page, "manage-leases-reassign")

    # and the one chosen gets the lease
    field.fill("crowded/worker-37")
    page.locator(f"tr[data-assignment='{held.pk}']").get_by_role("button", name="Reassign").click()
    page.wait_for_selector("text=Handed to crowded/worker-37.")
    held.refresh_from_db()
    assert (held.annotator, held.status) == (crowd[37], AssignmentStatus.LEASED)
    assert Assignment.objects.filter(project=project, status=AssignmentStatus.LEASED).count() == 1


def test_lead_creates_crowd_accounts_in_bulk_and_a_person_joins_with_their_own_account(browser, live_server, new_page):
    project = ProjectFactory(slug="crowd", name="Crowd")
    MembershipFactory(project=project, user=UserFactory(username="lena"), role="lead")
    olga = UserFactory(username="olga")
    page = new_page("lena", width=1366, height=900)
    page.goto("/projects/crowd/members/")

    # a CSV with a bad row creates nothing and names the row
    page.fill("#members-bulk textarea[name=csv]", "ann\nbad name\nbob,bob@example.org\n")
    page.click("#members-bulk button[type=submit]")
    assert "Line 2 (bad name)" in page.inner_text("#bulk-errors")
    assert Membership.objects.filter(project=project).count() == 1

    # the fixed CSV becomes a job; its page shows it done and gives the credentials once
    page.fill("#members-bulk textarea[name=csv]", "ann\nbob,bob@example.org\ncy\n")
    page.click("#members-bulk button[type=submit]")
    page.wait_for_url("**/projects/crowd/members/jobs/*/")
    page.wait_for_selector("[data-summary=created]")
    assert page.inner_text("[data-summary=created]") == "3"
    shoot(page, "manage-member-job")
    with page.expect_download() as download:
        page.click("[data-testid=download-credentials]")
    lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert [line.split(",")[0] for line in lines] == ["username", "crowd/ann", "crowd/bob", "crowd/cy"]
    page.reload()
    assert "Downloaded" in page.inner_text("#credentials")

    # a person with an account of their own is invited by username and accepts on their home page
    page.goto("/projects/crowd/members/")
    page.fill("#invite input[name=username]", "olga")
    page.click("#invite button[type=submit]")
    page.wait_for_selector("[data-testid=invitation-url]")
    guest = new_page("olga")
    guest.goto("/")
    guest.click("#invitations button:has-text('Accept')")
    guest.wait_for_url("**/projects/crowd/guidelines/")
    assert Membership.objects.filter(project=project, user=olga).exists()

    # the members page tells project accounts (credentials the lead manages) from personal ones
    page.goto("/projects/crowd/members/")
    assert page.locator("tr[data-account=project]").count() == 3
    assert "personal account" in page.inner_text("tr[data-username=olga]")
    assert page.locator("tr[data-username=olga] button:has-text('Show token')").count() == 0
    page.click("tr[data-username='crowd/ann'] button:has-text('Show token')")
    assert page.inner_text("[data-testid=token]")
    shoot(page, "manage-members-accounts")
