"""The annotator's side of quality control in the browser-facing pages: the standing per stage
on the workspace home, the page a refused stage shows, and "My work" (Django's test client on the
real engine). Given/when/then."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from annotation.models import Assignment, Review, ReviewState, Standing, StandingStatus
from pipeline.engine import assignment_next
from tests.conftest import login
from tests.pipeline.quality.builders import (
    RIGHT,
    fail_qualification,
    gold_prefilter,
    pause_on_control_items,
    work_prefilter,
)
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


def _my_work(slug="demo"):
    return reverse("frontend:my-work", kwargs={"slug": slug})


def _home(slug="demo"):
    return reverse("frontend:workspace", kwargs={"slug": slug})


def _row(html, stage):
    match = re.search(rf'<tr data-stage="{stage}">(.*?)</tr>', html, re.S)
    assert match, f"no row for {stage}"
    return match.group(1)


# --- who may see My work ---------------------------------------------------------------------------


def test_my_work_needs_a_login(client, project):
    response = client.get(_my_work())
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_my_work_is_404_for_non_members(client, project, outsider):
    login(client, outsider)
    assert client.get(_my_work()).status_code == 404


def test_my_work_shows_only_the_callers_items(client, project):
    # given two annotators who each judged a screen; annie's was rejected in review with a comment
    screens(project, 2)
    annie, bob = member(project, "annie"), member(project, "bob")
    mine = work_prefilter(project, annie, RIGHT)
    theirs = work_prefilter(project, bob, RIGHT)
    Assignment.objects.filter(pk=mine.pk).update(review_state=ReviewState.REJECTED)
    Review.objects.create(reviewed=mine, reviewer=bob, verdict="rejected", reason="sync", comment="Scroll first.")

    # when annie opens My work
    login(client, annie)
    html = client.get(_my_work()).content.decode()

    # then she sees her item with the verdict, the rule and the comment, and nothing of bob's
    assert f'data-assignment="{mine.pk}"' in html and f'data-assignment="{theirs.pk}"' not in html
    assert mine.screen.rico_id in html and theirs.screen.rico_id not in html
    assert "Rejected" in html and "The VH sync of the main content was judged wrong" in html
    assert "Scroll first." in html
    # and bob sees his own only (no review, no comment)
    client.logout()
    login(client, bob)
    html = client.get(_my_work()).content.decode()
    assert f'data-assignment="{theirs.pk}"' in html and "Scroll first." not in html


def test_my_work_links_an_open_item_back_to_its_page(client, project, annotator):
    screens(project, 1)
    lease = assignment_next(project=project, user=annotator, stage="prefilter")
    login(client, annotator)
    html = client.get(_my_work()).content.decode()
    assert reverse("frontend:workspace-assignment", kwargs={"slug": "demo", "pk": lease.pk}) in html


def test_my_work_refuses_an_unknown_stage_filter(client, project, annotator):
    login(client, annotator)
    response = client.get(_my_work() + "?stage=nope")
    assert response.status_code == 400
    assert "The stage is one of prefilter" in response.content.decode()


def test_the_workspace_and_nav_link_to_my_work(client, project, annotator):
    login(client, annotator)
    html = client.get(_home()).content.decode()
    assert html.count(f'href="{_my_work()}"') >= 2


# --- the standing on the workspace home --------------------------------------------------------------


def test_home_shows_a_running_qualification_set(client, project, annotator):
    project.qualification_items = 3
    project.save()
    gold_prefilter(project, 3)
    work_prefilter(project, annotator, RIGHT)
    login(client, annotator)
    row = _row(client.get(_home()).content.decode(), "prefilter")
    assert "Qualifying" in row and "qualification set: 1 of 3 done" in row
    assert "Open next" in row or "Check again" in row


def test_home_shows_not_qualified_with_retry_and_no_start_button(client, project, annotator):
    gold_prefilter(project, 2)
    fail_qualification(project, annotator)
    login(client, annotator)
    row = _row(client.get(_home()).content.decode(), "prefilter")
    assert "Not qualified" in row and "1 of 2 right" in row
    assert "You can try again after" in row and "2 attempts left" in row
    assert reverse("frontend:workspace-next", kwargs={"slug": "demo", "stage": "prefilter"}) not in row
    assert "See why" in row and 'data-testid="feedback-link"' in row


def test_the_review_stage_is_listed_for_reviewers_and_leads_only(client, project, annotator, lead):
    reviewer = member(project, "rita", role="reviewer")
    for user, listed in ((annotator, False), (reviewer, True), (lead, True)):
        client.logout()
        login(client, user)
        assert ('data-stage="review"' in client.get(_home()).content.decode()) is listed, user


# --- refused: paused or not qualified ---------------------------------------------------------------


def test_next_on_a_paused_stage_says_why_and_names_no_control_item(client, project, annotator):
    # given an annotator paused by their control items
    gold_prefilter(project, 2)
    pause_on_control_items(project, annotator)

    # when they ask for the next item of the stage
    login(client, annotator)
    response = client.get(reverse("frontend:workspace-next", kwargs={"slug": "demo", "stage": "prefilter"}))

    # then a page (403) says why, in aggregate: naming the control items would tell which screens
    # are gold (and their answers), and gold is served to everybody
    assert response.status_code == 403
    html = response.content.decode()
    assert 'data-testid="refused"' in html
    assert "You are paused in Pre-filtering: 0 of your last 2 control items were right" in html
    assert 'data-testid="feedback-item"' not in html and "The right answer" not in html
    # and the home has no start button for the stage, only a link to the feedback
    row = _row(client.get(_home()).content.decode(), "prefilter")
    assert "Paused" in row and "See why" in row and "Open next" not in row


def test_my_work_shows_the_decided_qualification_set_as_training(client, project, annotator):
    gold_prefilter(project, 2)
    fail_qualification(project, annotator)
    login(client, annotator)
    html = client.get(_my_work()).content.decode()
    assert "Pre-filtering: your qualification set" in html
    assert html.count('data-testid="feedback-item"') == 2
    assert 'data-correct="false"' in html and 'data-correct="true"' in html


def test_a_refused_answer_pool_stage_is_a_page_too(client, project):
    outside_pool = member(project, "nopool", pool=False)
    login(client, outside_pool)
    response = client.get(reverse("frontend:workspace-next", kwargs={"slug": "demo", "stage": "answers"}))
    assert response.status_code == 403
    assert "Only members of the answer pool may answer questions." in response.content.decode()


# --- a control item's page is the page of real work ------------------------------------------------


def _config(html):
    match = re.search(r'<script id="ws-config" type="application/json">(.*?)</script>', html, re.S)
    assert match
    return json.loads(match.group(1))


def _keys(value):
    if isinstance(value, dict):
        return {k: _keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_keys(value[0])] if value else []
    return type(value).__name__


def test_a_control_items_page_tells_nothing_apart(client, project):
    # given one annotator served a control item and another real work
    project.control_rate_new, project.control_rate = 1.0, 0.0
    project.save()
    gold_prefilter(project, 1)
    screens(project, 1)
    new, seasoned = member(project, "new"), member(project, "seasoned")
    Standing.objects.create(project=project, user=new, stage="prefilter", status=StandingStatus.ACTIVE)
    Standing.objects.create(
        project=project, user=seasoned, stage="prefilter", status=StandingStatus.ACTIVE, items_done=500
    )
    pages = {}
    for user in (new, seasoned):
        client.logout()
        login(client, user)
        lease = assignment_next(project=project, user=user, stage="prefilter")
        url = reverse("frontend:workspace-assignment", kwargs={"slug": "demo", "pk": lease.pk})
        pages[lease.purpose] = client.get(url).content.decode()

    # then the pages carry the same configuration shape and no word of gold or control
    assert set(pages) == {"control", "work"}
    assert _keys(_config(pages["control"])) == _keys(_config(pages["work"]))
    for html in pages.values():
        assert not re.search(r"\bgold\b|control item|qualification|purpose", html, re.I)
    # and the same form fields
    fields = {k: sorted(set(re.findall(r'name="([^"]+)"', v))) for k, v in pages.items()}
    assert fields["control"] == fields["work"]
