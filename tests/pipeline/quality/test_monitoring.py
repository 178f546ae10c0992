"""Monitoring as a clever worker meets it (pipeline/quality/standing.py with the sequential test of
pipeline/quality/sequential.py): leaving a control item counts as wrong whichever way it is left, a
good worker's slip does not pause them while three wrong answers do, the control rate rises while the
evidence speaks against someone, and writers qualifying by review are capped and timed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.exceptions import ConflictError, PermissionDeniedError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    Project,
    ReviewState,
    ScreenState,
    Standing,
    StandingStatus,
)
from pipeline.engine import (
    assignment_expire_leases,
    assignment_next,
    assignment_release,
    assignment_skip,
    assignment_submit,
)
from pipeline.quality.standing import control_rate_for, standing_act, standing_read
from tests.pipeline.quality.builders import RIGHT, WRONG, gold_prefilter
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


def controls_only(project: Project) -> None:
    """Every lease a control item (and many gold items to serve), beside real work that waits (a
    control item is served only then)."""
    screens(project, 2)
    project.control_rate = project.control_rate_new = 1.0
    project.save(update_fields=["control_rate", "control_rate_new"])


def active(project: Project, user, stage: str = "prefilter") -> Standing:
    return Standing.objects.create(project=project, user=user, stage=stage, status=StandingStatus.ACTIVE)


def control(project: Project, user) -> Assignment:
    lease = assignment_next(project=project, user=user, stage="prefilter")
    assert lease is not None and lease.purpose == "control"
    return lease


def status(user) -> str:
    return Standing.objects.get(user=user, stage="prefilter").status


@pytest.mark.parametrize("leave", ["skip", "release", "expire"])
def test_leaving_control_items_is_no_escape(project, leave):
    # given an active annotator whose every lease is a control item
    gold_prefilter(project, 6)
    controls_only(project)
    sly = member(project, "sly")
    active(project, sly)
    # when they leave three of them (the attack: skip what looks like a control, spam the rest)
    for _ in range(3):
        lease = control(project, sly)
        if leave == "skip":
            assignment_skip(assignment_id=lease.pk, user=sly, reason="unclear")
        elif leave == "release":
            assignment_release(assignment_id=lease.pk, user=sly)
        else:
            Assignment.objects.filter(pk=lease.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
            assignment_expire_leases(project=project)
    # then each counted as wrong, and three wrong in a row pause them
    results = ControlResult.objects.filter(user=sly)
    outcome = {"skip": "skipped", "release": "released", "expire": "expired"}[leave]
    assert [(r.correct, r.outcome) for r in results.order_by("pk")] == [(False, outcome)] * 3
    assert status(sly) == StandingStatus.PAUSED


def test_giving_back_a_released_lease_twice_counts_once(project):
    gold_prefilter(project, 3)
    controls_only(project)
    annie = member(project, "annie")
    active(project, annie)
    lease = control(project, annie)
    assignment_release(assignment_id=lease.pk, user=annie)
    assignment_release(assignment_id=lease.pk, user=annie)  # idempotent: no second result
    assert ControlResult.objects.filter(user=annie).count() == 1


def test_walking_away_from_an_untouched_control_item_keeps_it_for_later(project):
    # the workspace's beacon when an annotator leaves an item it opened by itself, untouched: a
    # control item stays theirs (neither a way out nor a wrong answer), and the next lease is it
    gold_prefilter(project, 3)
    controls_only(project)
    annie = member(project, "annie")
    active(project, annie)
    lease = control(project, annie)
    kept = assignment_release(assignment_id=lease.pk, user=annie, untouched_leave=True)
    assert kept.status == AssignmentStatus.LEASED and not ControlResult.objects.filter(user=annie).exists()
    assert assignment_next(project=project, user=annie, stage="prefilter").pk == lease.pk
    # real work left the same way goes back to the queue at once
    project.control_rate = project.control_rate_new = 0.0
    project.save(update_fields=["control_rate", "control_rate_new"])
    assignment_submit(assignment_id=lease.pk, user=annie, data={**RIGHT, "note": ""})
    screens(project, 1)
    real = assignment_next(project=project, user=annie, stage="prefilter")
    assert real.purpose == "work"
    gone = assignment_release(assignment_id=real.pk, user=annie, untouched_leave=True)
    assert gone.status == AssignmentStatus.RELEASED


def test_submitting_a_control_item_after_giving_it_back_is_refused_like_lost_work(project):
    gold_prefilter(project, 3)
    controls_only(project)
    annie = member(project, "annie")
    active(project, annie)
    lease = control(project, annie)
    assignment_release(assignment_id=lease.pk, user=annie)
    with pytest.raises(ConflictError, match="Your lease ended and this work went to someone else") as info:
        assignment_submit(assignment_id=lease.pk, user=annie, data={**RIGHT, "note": ""})
    assert info.value.extra == {"status": AssignmentStatus.RELEASED, "draft_saved": True}
    (result,) = ControlResult.objects.filter(user=annie)
    assert (result.correct, result.outcome) == (False, "released")


def test_a_good_workers_slips_do_not_pause_them_three_wrong_do(project):
    gold_prefilter(project, 30)
    controls_only(project)
    careful = member(project, "careful")
    active(project, careful)
    # a slip, then a long honest run, then another slip: never paused
    for body in [WRONG] + [RIGHT] * 10 + [WRONG] + [RIGHT] * 5 + [WRONG, WRONG]:
        assignment_submit(assignment_id=control(project, careful).pk, user=careful, data={**body, "note": ""})
        assert status(careful) == StandingStatus.ACTIVE
    # a third wrong answer close behind: paused, with the figures the test saw
    assignment_submit(assignment_id=control(project, careful).pk, user=careful, data={**WRONG, "note": ""})
    assert status(careful) == StandingStatus.PAUSED
    standing = Standing.objects.get(user=careful, stage="prefilter")
    assert standing.evidence >= project.monitoring_evidence


def test_a_bar_of_one_pauses_nobody_and_a_wrong_control_item_is_no_server_error(project):
    # given a project whose lead set the monitoring bar to 100% (the settings allow 0 to 1: the test is off)
    gold_prefilter(project, 6)
    controls_only(project)
    project.monitoring_threshold = 1.0
    project.save(update_fields=["monitoring_threshold"])
    annie = member(project, "annie")
    active(project, annie)
    # when an annotator answers control items wrong, then each is scored and nothing fails or pauses
    for _ in range(4):
        assignment_submit(assignment_id=control(project, annie).pk, user=annie, data={**WRONG, "note": ""})
    assert status(annie) == StandingStatus.ACTIVE
    assert ControlResult.objects.filter(user=annie, correct=False).count() == 4
    assert Standing.objects.get(user=annie).evidence == 0.0


def test_the_evidence_remembers_when_it_was_last_clear(project, lead):
    # given an active annotator meeting only control items
    gold_prefilter(project, 20)
    controls_only(project)
    annie = member(project, "annie")
    active(project, annie)

    def submit(body):  # the control item's submission time, and the standing after it
        lease = control(project, annie)
        assignment_submit(assignment_id=lease.pk, user=annie, data={**body, "note": ""})
        return Assignment.objects.get(pk=lease.pk).submitted_at, Standing.objects.get(user=annie)

    # a right one: the evidence is clear, as of that item
    first, standing = submit(RIGHT)
    assert standing.evidence == 0.0 and standing.evidence_clear_at == first
    clear = standing.evidence_clear_at
    # a wrong one and a right one after it: the evidence is above 0, and was last clear at the first
    for body in (WRONG, RIGHT):
        _, standing = submit(body)
        assert standing.evidence > 0 and standing.evidence_clear_at == clear
    # ten right ones clear it again, as of the one that did
    for _ in range(10):
        last, standing = submit(RIGHT)
        if standing.evidence == 0.0:
            break
    assert standing.evidence == 0.0 and standing.evidence_clear_at == last > clear
    # a lead's reinstate sets it too
    for _ in range(3):
        submit(WRONG)
    assert status(annie) == StandingStatus.PAUSED
    paused_clear = Standing.objects.get(user=annie).evidence_clear_at
    standing_act(project=project, user_id=annie.pk, stage="prefilter", action="reinstate", actor=lead)
    standing = Standing.objects.get(user=annie)
    assert standing.evidence == 0.0 and standing.evidence_clear_at > paused_clear


def test_the_control_rate_rises_while_the_evidence_speaks_against_someone(project):
    gold_prefilter(project, 6)
    screens(project, 10)
    project.control_rate_new, project.control_rate, project.control_rate_alert = 0.2, 0.1, 0.5
    project.save()
    annie = member(project, "annie")
    active(project, annie)
    standing = standing_read(project=project, user=annie, stage="prefilter")
    assert standing is not None and control_rate_for(project=project, standing=standing) == 0.2
    Standing.objects.filter(user=annie).update(items_done=60)
    assert (
        control_rate_for(project=project, standing=standing_read(project=project, user=annie, stage="prefilter")) == 0.1
    )
    Standing.objects.filter(user=annie).update(evidence=1.9)
    assert (
        control_rate_for(project=project, standing=standing_read(project=project, user=annie, stage="prefilter")) == 0.5
    )


def test_a_leads_reinstate_clears_the_evidence(project, lead):
    gold_prefilter(project, 6)
    controls_only(project)
    annie = member(project, "annie")
    active(project, annie)
    for _ in range(3):
        assignment_submit(assignment_id=control(project, annie).pk, user=annie, data={**WRONG, "note": ""})
    assert status(annie) == StandingStatus.PAUSED
    standing_act(project=project, user_id=annie.pk, stage="prefilter", action="reinstate", actor=lead)
    assert Standing.objects.get(user=annie).evidence == 0.0 and status(annie) == StandingStatus.ACTIVE


def test_releasing_hard_qualification_items_does_not_pick_an_easier_set(project):
    # given a two-item qualification set
    project.qualification_items = 2
    project.save(update_fields=["qualification_items"])
    gold_prefilter(project, 6)
    picky = member(project, "picky")
    # when the annotator gives back both items they were served, then answers two right
    for _ in range(2):
        lease = assignment_next(project=project, user=picky, stage="prefilter")
        assert lease.purpose == "qualification"
        assignment_release(assignment_id=lease.pk, user=picky)
    # then the set was decided on the two given back: wrong, not qualified
    assert status(picky) == StandingStatus.NOT_QUALIFIED
    assert set(ControlResult.objects.filter(user=picky).values_list("correct", "outcome")) == {(False, "released")}


class TestWritersQualifyingByReview:
    def test_a_qualifying_writer_waits_for_review_after_the_first_sets(self, project):
        project.qualification_review_sets = 2
        project.save(update_fields=["qualification_review_sets"])
        screens(project, 5, state=ScreenState.QUESTIONS_1)
        writer = member(project, "wren")
        for n in range(2):
            lease = assignment_next(project=project, user=writer, stage="questions-1")
            assignment_submit(assignment_id=lease.pk, user=writer, data={"questions": [f"What is {n}?"]})
        # the attack: pour out more before anyone has looked
        with pytest.raises(PermissionDeniedError, match="waiting for review"):
            assignment_next(project=project, user=writer, stage="questions-1")
        # once one set is reviewed, one more may be written (still qualifying: 1 of 2 decided)
        first = Assignment.objects.filter(annotator=writer, status=AssignmentStatus.SUBMITTED).order_by("pk").first()
        Assignment.objects.filter(pk=first.pk).update(review_state=ReviewState.ACCEPTED)
        assert assignment_next(project=project, user=writer, stage="questions-1") is not None

    def test_the_speed_rule_applies_to_qualifying_writers(self, project):
        project.fast_response_seconds, project.fast_response_count, project.fast_response_window = 5.0, 3, 10
        project.qualification_review_sets = 10
        project.save()
        screens(project, 6, state=ScreenState.QUESTIONS_1)
        spam = member(project, "spam")
        for _ in range(3):  # submits in microseconds
            lease = assignment_next(project=project, user=spam, stage="questions-1")
            assignment_submit(assignment_id=lease.pk, user=spam, data={"questions": []})
        standing = Standing.objects.get(user=spam, stage="questions-1")
        assert standing.status == StandingStatus.PAUSED and "less than 5 s" in standing.reason
