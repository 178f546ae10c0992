"""Quality control end to end in headless Chromium: an annotator qualifies on gold items through
the workspace, works, is paused by failing control items, and the lead reinstates them from the
quality page, after which they can work again."""

from __future__ import annotations

import re

import pytest

from annotation.models import (
    ControlResult,
    GoldItem,
    PrefilterJudgment,
    Project,
    Purpose,
    QualityEvent,
    ScreenState,
    Standing,
)
from tests.browser.conftest import generated_screens, shoot
from tests.factories import MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RIGHT = {"non_english_app": False, "vh_out_of_sync": False}


def _next(page, expect_status: int = 200):
    response = page.goto("/projects/demo/work/prefilter/next/")  # a GET never leases: a button POSTs
    assert response is not None and response.status == expect_status, response and response.status
    if expect_status == 200:
        if page.locator('[data-testid="open-next"]').count():
            page.click('[data-testid="open-next"]')
        page.wait_for_selector("#ws[data-ready]")
        page.wait_for_url(re.compile(r"/work/a/\d+/$"))
    return response


def _submit(page, *, wrong: bool = False) -> int:
    """Judge the open screen (``wrong``: as a non-English app) and submit; the assignment's id."""
    assignment_id = int(re.search(r"/work/a/(\d+)/$", page.url).group(1))
    if wrong:
        page.keyboard.press("e")
        assert page.is_checked("#non_english_app")
    page.keyboard.press("Control+Enter")
    page.wait_for_load_state()
    page.wait_for_function(f"!location.pathname.endsWith('/a/{assignment_id}/')")
    return assignment_id


def test_qualify_work_get_paused_and_be_reinstated_by_the_lead(demo, new_page):
    project: Project = demo["project"]
    # a project that qualifies on 2 gold items and pauses under 95% over the last 3 control items
    Project.objects.filter(pk=project.pk).update(
        qualification_items=2,
        control_rate=0,
        control_rate_new=0,
        monitoring_evidence=5.0,  # three wrong control items in a row
        review_rate=0,
    )
    lead = UserFactory(username="lena")
    MembershipFactory(project=project, user=lead, role="lead")
    # five gold screens (out of the queue) and three screens to pre-filter
    gold_screens = generated_screens(project, start_id=930000, kinds=("list", "settings", "login", "dialog", "webview"))
    for screen in gold_screens:
        screen.state = ScreenState.NO_QUESTIONS
        screen.save(update_fields=["state"])
        GoldItem.objects.create(project=project, stage="prefilter", screen=screen, answer=RIGHT)
    generated_screens(project, start_id=931000, kinds=("list", "settings", "login"))
    annotator = demo["annotator"]
    page = new_page("annotator")

    # when the annotator starts pre-filtering: a qualification set of 2 gold items, both right
    for _ in range(2):
        _next(page)
        _submit(page)
    standing = Standing.objects.get(user=annotator, stage="prefilter")
    assert (standing.status, standing.attempt) == ("active", 1)
    assert ControlResult.objects.filter(user=annotator, purpose=Purpose.QUALIFICATION, correct=True).count() == 2

    # they work on a real screen; meanwhile control items are turned up to every lease (the
    # workspace opens the next lease as the submit returns: a control item)
    _next(page)
    Project.objects.filter(pk=project.pk).update(control_rate=1, control_rate_new=1)
    real = _submit(page)
    assert PrefilterJudgment.objects.filter(assignment_id=real).exists()

    # three wrong control items pause them
    for _ in range(3):
        _next(page)
        _submit(page, wrong=True)
    standing.refresh_from_db()
    assert standing.status == "paused" and "0 of your last 3 control items" in standing.reason
    _next(page, expect_status=403)
    shoot(page, "quality-annotator-paused")

    # the lead opens the quality page and sees them paused
    lead_page = new_page("lena")
    lead_page.goto("/projects/demo/")
    lead_page.click("a[href='/projects/demo/quality/']")
    lead_page.wait_for_url(re.compile(r"/projects/demo/quality/$"))
    row = lead_page.locator('tr[data-annotator="annotator"]')
    assert "Pre-filtering: paused" in row.locator("[data-status]").inner_text()
    assert row.locator('[data-col="control"]').inner_text().startswith("0.0%")
    shoot(lead_page, "quality-project")
    # their page: the chart and the three wrong items
    lead_page.click('tr[data-annotator="annotator"] td a')
    lead_page.wait_for_selector("svg.qc-chart")
    assert lead_page.locator("tr[data-result]").count() == 3
    assert lead_page.locator('tr[data-rule="control-accuracy"]').count() == 1
    lead_page.locator("#accuracy").scroll_into_view_if_needed()
    shoot(lead_page, "quality-annotator")
    # and reinstates them
    lead_page.click('[data-stage="prefilter"] button[data-action="reinstate"]')
    lead_page.wait_for_selector("text=annotator reinstated in Pre-filtering")
    assert lead_page.locator('tr[data-stage="prefilter"] [data-status]').inner_text() == "active"
    event = QualityEvent.objects.get(user=annotator, rule="lead-reinstate")
    assert (event.actor, event.status_before, event.status_after) == (lead, "paused", "active")

    # the annotator can work again (the gold items are used up: real work)
    Project.objects.filter(pk=project.pk).update(control_rate=0, control_rate_new=0)
    _next(page)
    again = _submit(page)
    assert PrefilterJudgment.objects.filter(assignment_id=again).exists()


def test_a_qualification_set_waits_for_gold_still_in_the_queue_and_the_lead_is_told(demo, new_page):
    project: Project = demo["project"]
    Project.objects.filter(pk=project.pk).update(qualification_items=2, control_rate=0, control_rate_new=0)
    lead = UserFactory(username="lena")
    MembershipFactory(project=project, user=lead, role="lead")
    # given five gold screens, four of them still waiting to be pre-filtered, and a judge active in the
    # stage who can finish them
    gold_screens = generated_screens(project, start_id=932000, kinds=("list", "settings", "login", "dialog", "webview"))
    for n, screen in enumerate(gold_screens):
        if n == 0:
            screen.state = ScreenState.NO_QUESTIONS
            screen.save(update_fields=["state"])
        GoldItem.objects.create(project=project, stage="prefilter", screen=screen, answer=RIGHT)
    busy = UserFactory(username="busy")
    MembershipFactory(project=project, user=busy)
    Standing.objects.create(project=project, user=busy, stage="prefilter", status="active")
    annotator = demo["annotator"]
    page = new_page("annotator")
    # when the annotator does the one qualification item that can be served
    _next(page)
    _submit(page)
    # then asking for the next is refused with a reason to come back, and nothing is decided on one item
    page.goto("/projects/demo/work/prefilter/next/")
    with page.expect_response(lambda r: r.request.method == "POST") as refused:
        page.click('[data-testid="open-next"]')
    assert refused.value.status == 403
    page.wait_for_load_state()
    assert "not ready yet" in page.locator("main").inner_text()
    assert Standing.objects.get(user=annotator, stage="prefilter").status == "qualifying"
    shoot(page, "quality-qualification-waits")
    # and the lead's gold page says why
    lead_page = new_page("lena")
    lead_page.goto("/projects/demo/quality/gold/")
    warning = lead_page.locator('[data-gold-waiting="prefilter"]')
    assert "only 1 gold item can be served now and a qualification set takes 2" in warning.inner_text()
    shoot(lead_page, "quality-gold-waiting")
