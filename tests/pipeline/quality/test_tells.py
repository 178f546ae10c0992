"""Control items cannot be told apart from real work (issue 20, items 2 and 7), tried as a clever
annotator would: reading ``available`` around each ``next`` over the API, asking again after a
204, meeting a screen twice, computing the draw, reading "My work" right after a submit, and
collecting gold from many accounts."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import (
    Assignment,
    GoldItem,
    Project,
    Purpose,
    QuestionState,
    ScreenState,
    Standing,
    StandingStatus,
)
from pipeline.engine import (
    assignment_expire_leases,
    assignment_next,
    assignment_release,
    stage_get,
    stages_for_user,
)
from pipeline.quality import standing as quality_standing
from pipeline.quality.gold import gold_open_to, gold_pick, gold_promote
from pipeline.quality.mine import my_work_history
from pipeline.quality.standing import StandingBrief, plan_next
from tests.conftest import login
from tests.factories import ScreenFactory
from tests.pipeline.quality.builders import RIGHT, gold_prefilter, work_prefilter
from tests.pipeline.quality.report_builders import START, question
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


def rates(project: Project, rate: float) -> None:
    project.control_rate = project.control_rate_new = project.control_rate_alert = rate
    project.save(update_fields=["control_rate", "control_rate_new", "control_rate_alert"])


def active(project: Project, name: str) -> Any:
    user = member(project, name)
    Standing.objects.create(project=project, user=user, stage="prefilter", status=StandingStatus.ACTIVE)
    return user


def waiting(api_client: Any, project: Project) -> int:
    """The ``available`` figure of pre-filtering, as the API gives it to the caller."""
    rows = api_client.get(f"/api/projects/{project.slug}/stages/").json()
    return next(row["available"] for row in rows if row["stage"] == "prefilter")


# --- 2(a): the available figure --------------------------------------------------------------------


def test_available_moves_alike_for_control_and_real_leases(project, api_client):
    # given gold, 30 screens waiting, an active annotator and a control rate of 50%
    gold_prefilter(project, 20)
    screens(project, 30)
    rates(project, 0.5)
    annie = active(project, "annie")
    login(api_client, annie)
    seen: dict[str, set[tuple[int, int]]] = {Purpose.CONTROL: set(), Purpose.WORK: set()}
    # when they read the figure before and after each `next` and after each submit
    for _ in range(16):
        before = waiting(api_client, project)
        lease = api_client.post(f"/api/projects/{project.slug}/stages/prefilter/next/").json()
        after_next = waiting(api_client, project)
        submitted = api_client.post(f"/api/assignments/{lease['id']}/submit/", RIGHT, format="json")
        assert submitted.status_code == 200
        after_submit = waiting(api_client, project)
        purpose = Assignment.objects.get(pk=lease["id"]).purpose
        seen[purpose].add((before - after_next, after_next - after_submit))
    # then the figure fell by one at every `next` and stayed at every submit, control item or not
    assert seen == {Purpose.CONTROL: {(1, 0)}, Purpose.WORK: {(1, 0)}}


def one_lease(project: Project, api_client: Any, rate: float) -> tuple[int, dict[str, Any]]:
    """An active annotator's ``available`` before one ``next`` over the API, and the lease: a control item
    at a rate of 1, real work at 0."""
    gold_prefilter(project, 2)
    screens(project, 5)
    rates(project, rate)
    login(api_client, active(project, "annie"))
    before = waiting(api_client, project)
    lease = api_client.post(f"/api/projects/{project.slug}/stages/prefilter/next/").json()
    assert Assignment.objects.get(pk=lease["id"]).purpose == (Purpose.CONTROL if rate else Purpose.WORK)
    return before, lease


@pytest.mark.parametrize("rate", [1.0, 0.0], ids=["control", "work"])
def test_giving_an_item_back_moves_available_alike(project, api_client, rate):
    before, lease = one_lease(project, api_client, rate)
    assert waiting(api_client, project) == before - 1
    api_client.post(f"/api/assignments/{lease['id']}/release/")
    assert waiting(api_client, project) == before


@pytest.mark.parametrize("rate", [1.0, 0.0], ids=["control", "work"])
def test_a_lease_left_to_run_out_moves_available_alike(project, api_client, rate):
    # given an item leased and never submitted (a control item left to run out counts as wrong)
    before, lease = one_lease(project, api_client, rate)
    # when its time runs out: lapsed but not yet swept, then swept by the expiry task
    Assignment.objects.filter(pk=lease["id"]).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    lapsed = waiting(api_client, project)
    assert assignment_expire_leases(project=project) == 1
    swept = waiting(api_client, project)
    # then the figure reads the same either way at each step
    assert (before - lapsed, before - swept) == (1, 0)


def test_a_lead_reads_the_exact_figure(project, lead):
    gold_prefilter(project, 2)
    screens(project, 4)
    [row] = [r for r in stages_for_user(project=project, user=lead) if r["stage"] == "prefilter"]
    assert row["available"] == 4


def test_no_control_item_comes_when_no_real_work_waits(project):
    # given gold and an annotator every lease of whom would be a control item, and no real work
    gold_prefilter(project, 5)
    rates(project, 1.0)
    annie = active(project, "annie")
    # when they ask again and again after "nothing for you"
    # then nothing comes: a lease after a 204 (or at "available 0") could only be a control item
    for _ in range(10):
        assert assignment_next(project=project, user=annie, stage="prefilter") is None
    # and once real work waits, control items are served again
    screens(project, 1)
    assert assignment_next(project=project, user=annie, stage="prefilter").purpose == Purpose.CONTROL


# --- 2(c): never a unit met before ----------------------------------------------------------------


def test_a_control_item_is_never_a_screen_the_annotator_judged_as_real_work(project, lead):
    # given a screen annie judged as real work, then promoted to gold
    screens(project, 3)
    rates(project, 0.0)
    annie, bob = active(project, "annie"), active(project, "bob")
    judged = work_prefilter(project, annie, RIGHT)
    gold = gold_promote(project=project, assignment_id=judged.pk, user=lead)
    rates(project, 1.0)
    # when both ask for work with every lease a control item
    theirs = assignment_next(project=project, user=annie, stage="prefilter")
    others = assignment_next(project=project, user=bob, stage="prefilter")
    # then annie never meets her screen again (real work instead), bob gets it as a control item
    assert theirs.purpose == Purpose.WORK and theirs.screen_id != gold.screen_id
    assert (others.purpose, others.gold_id) == (Purpose.CONTROL, gold.pk)


def test_a_gold_item_given_back_is_not_served_again(project):
    [gold] = gold_prefilter(project, 1)
    screens(project, 3)
    rates(project, 1.0)
    annie = active(project, "annie")
    lease = assignment_next(project=project, user=annie, stage="prefilter")
    assert lease.gold_id == gold.pk
    assignment_release(assignment_id=lease.pk, user=annie)
    again = assignment_next(project=project, user=annie, stage="prefilter")
    assert again.purpose == Purpose.WORK


def test_gold_still_waiting_in_the_queue_is_not_served(project):
    # given a gold item on a screen that still waits for pre-filtering judgments
    screen = ScreenFactory(project=project, state=ScreenState.PREFILTER)
    GoldItem.objects.create(project=project, stage="prefilter", screen=screen, answer=dict(RIGHT))
    annie = active(project, "annie")
    # then it is nobody's control item until the screen has left the stage
    assert gold_pick(project=project, stage="prefilter", user=annie) is None
    screen.state = ScreenState.QUESTIONS_1
    screen.save(update_fields=["state"])
    assert gold_pick(project=project, stage="prefilter", user=annie).screen_id == screen.pk


def test_an_answers_control_item_is_never_a_question_they_wrote_or_answered(project):
    annie, bob, cleo = (member(project, name) for name in ("annie", "bob", "cleo"))
    written = question(project, author=annie, state=QuestionState.ANSWERED)
    answered = question(project, state=QuestionState.ANSWERED)
    Assignment.objects.create(
        project=project,
        annotator=bob,
        stage="answers",
        screen=answered.screen,
        question=answered,
        status="submitted",
        lease_expires_at=START,
        submitted_at=START,
    )
    body = {"verdict": "not_answerable", "elements": [], "question": "", "full_answer": ""}
    for q in (written, answered):
        GoldItem.objects.create(project=project, stage="answers", screen=q.screen, question=q, answer=body)
    open_to = {u.username: set(gold_open_to(project=project, stage="answers", user=u)) for u in (annie, bob, cleo)}
    assert {g.question_id for g in open_to["annie"]} == {answered.pk}
    assert {g.question_id for g in open_to["bob"]} == {written.pk}
    assert {g.question_id for g in open_to["cleo"]} == {written.pk, answered.pk}


# --- 2(d): the draw -------------------------------------------------------------------------------


def test_the_draw_is_the_systems_randomness_and_keeps_the_rate(monkeypatch):
    # given the product's random source (not the seeded one the tests put in its place)
    monkeypatch.undo()
    assert isinstance(quality_standing.control_random, secrets.SystemRandom)
    # when one annotator with the same counts asks 4000 times at a rate of 30%
    project = Project(control_rate=0.3, control_rate_new=0.3, control_new_items=0)
    brief = StandingBrief(StandingStatus.ACTIVE, 0, 10, 3)
    user = get_user_model()(pk=7)
    plans = [
        plan_next(stage=stage_get("prefilter"), project=project, user=user, membership=None, standing=brief, now=START)
        for _ in range(4000)
    ]
    # then the same inputs give both answers (nothing to compute from the code), at the rate:
    # 1200 expected, sd 29; the bounds are 5 sd (a false failure about once in 3 million runs)
    controls = sum(plan.purpose == Purpose.CONTROL for plan in plans)
    assert 1055 <= controls <= 1345


# --- 7: gold exposures ----------------------------------------------------------------------------


def test_a_gold_item_is_retired_after_its_exposures_and_the_lead_sees_them(project, lead, api_client, client):
    # given one gold item that may be served twice and three annotators whose every lease is a control item
    Project.objects.filter(pk=project.pk).update(gold_exposures_max=2)
    project.refresh_from_db()
    [gold] = gold_prefilter(project, 1)
    screens(project, 3)
    rates(project, 1.0)
    leases = [assignment_next(project=project, user=active(project, n), stage="prefilter") for n in "abc"]
    # then two got it, the third real work
    assert [lease.purpose for lease in leases] == [Purpose.CONTROL, Purpose.CONTROL, Purpose.WORK]
    assert GoldItem.objects.get(pk=gold.pk).exposures == 2
    # and the lead reads the exposures on the API and the gold page
    login(api_client, lead)
    [row] = api_client.get(f"/api/projects/{project.slug}/quality/gold/").json()["results"]
    assert (row["exposures"], row["retired"]) == (2, True)
    login(client, lead)
    html = client.get(f"/projects/{project.slug}/quality/gold/").content.decode()
    assert 'data-col="exposures">2 <span' in html and "data-retired" in html


# --- 7: My work -----------------------------------------------------------------------------------


def test_my_work_reads_the_same_for_a_submitted_control_item_and_real_work(project, api_client):
    # given an annotator who did one control item and one real item (no review sampling)
    gold_prefilter(project, 1)
    screens(project, 2)
    Project.objects.filter(pk=project.pk).update(review_rate=0)
    project.refresh_from_db()
    annie = active(project, "annie")
    rates(project, 1.0)
    control = work_prefilter(project, annie, RIGHT)
    rates(project, 0.0)
    real = work_prefilter(project, annie, RIGHT)
    assert (control.purpose, real.purpose) == (Purpose.CONTROL, Purpose.WORK)
    # then their history rows differ only in what every item differs in
    rows = {row.id: row for row in my_work_history(project=project, user=annie)}
    personal = {"id", "rico_id", "created_at", "submitted_at"}

    def shown(row: Any) -> dict[str, Any]:
        return {k: v for k, v in vars(row).items() if k not in personal}

    assert shown(rows[control.pk]) == shown(rows[real.pk])
    # and so do the API's, and its figures count no control item scored today
    login(api_client, annie)
    body = api_client.get(f"/api/projects/{project.slug}/my-work/").json()
    items = {row["id"]: row for row in body["history"]}
    assert {k: v for k, v in items[control.pk].items() if k not in personal} == {
        k: v for k, v in items[real.pk].items() if k not in personal
    }
    assert body["figures"]["control_items"] == 0 and body["feedback"] == []
    assert "gold" not in str(body["history"]).lower()


def test_the_api_lists_recent_accepted_submissions_to_promote(project, lead, api_client):
    screens(project, 2)
    rates(project, 0.0)
    annie = active(project, "annie")
    first, second = (work_prefilter(project, annie, RIGHT) for _ in range(2))
    login(api_client, lead)
    url = f"/api/projects/{project.slug}/quality/gold/promotable/"
    rows = api_client.get(url, {"stage": "prefilter"}).json()
    assert [r["assignment_id"] for r in rows] == [second.pk, first.pk]
    assert (rows[0]["annotator"], rows[0]["submission"]["non_english_app"]) == ("annie", False)
    gold_promote(project=project, assignment_id=second.pk, user=lead)
    assert [r["assignment_id"] for r in api_client.get(url).json()] == [first.pk]
    bad = api_client.get(url, {"stage": "questions-1"})
    assert bad.status_code == 400 and bad.json()["field"] == "stage"
