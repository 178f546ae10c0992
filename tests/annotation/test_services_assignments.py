"""Generic assignment mechanics: lazy expiry, renewal, release, skip, drafts, extend."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import Assignment, AssignmentStatus, ScreenState
from annotation.services.assignments import (
    DRAFT_MAX_BYTES,
    assignment_draft_save,
    assignment_expire_leases,
    assignment_leases_end,
    assignment_release,
    assignment_skip,
)
from pipeline.engine import assignment_double_leases, assignment_extend, assignment_next, assignment_payload
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


def expire(assignment: Assignment) -> None:
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def test_expired_lease_returns_to_the_queue_lazily(project):
    # given A's lease on the only screen has run out
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    first = assignment_next(project=project, user=a, stage="questions-1")
    assert assignment_next(project=project, user=b, stage="questions-1") is None
    expire(first)
    # when B asks for work
    second = assignment_next(project=project, user=b, stage="questions-1")
    # then B gets the same screen and A's lease is marked expired
    assert second is not None and second.screen_id == first.screen_id
    first.refresh_from_db()
    assert first.status == AssignmentStatus.EXPIRED


def test_own_expired_lease_nobody_took_is_renewed(project):
    a = member(project, "a")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    first = assignment_next(project=project, user=a, stage="questions-1")
    expire(first)
    again = assignment_next(project=project, user=a, stage="questions-1")
    assert again.pk == first.pk
    assert again.lease_expires_at > timezone.now() + timedelta(minutes=29)


def test_lease_lasts_the_projects_lease_minutes(project):
    project.lease_minutes = 7
    project.save()
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    remaining = lease.lease_expires_at - timezone.now()
    assert timedelta(minutes=6) < remaining <= timedelta(minutes=7)


def test_release_gives_work_back_and_is_idempotent(project):
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    released = assignment_release(assignment_id=lease.pk, user=a)
    assert released.status == AssignmentStatus.RELEASED
    assert assignment_release(assignment_id=lease.pk, user=a).status == AssignmentStatus.RELEASED
    other = assignment_next(project=project, user=b, stage="questions-1")
    assert other.screen_id == lease.screen_id


def test_skip_needs_a_reason_and_is_never_offered_again_to_the_skipper(project):
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    with pytest.raises(ApplicationError) as err:
        assignment_skip(assignment_id=lease.pk, user=a, reason="  ")
    assert err.value.field == "reason"
    skipped = assignment_skip(assignment_id=lease.pk, user=a, reason="screen is blank")
    assert skipped.status == AssignmentStatus.SKIPPED and skipped.skip_reason == "screen is blank"
    assert assignment_next(project=project, user=a, stage="questions-1") is None
    assert assignment_next(project=project, user=b, stage="questions-1").screen_id == lease.screen_id


def test_draft_is_saved_and_comes_back_in_the_payload(project):
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    assignment_draft_save(assignment_id=lease.pk, user=a, draft={"questions": ["half a quest"]})
    again = assignment_next(project=project, user=a, stage="questions-1")
    assert assignment_payload(assignment=again)["draft"] == {"questions": ["half a quest"]}


def test_draft_rules(project):
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    with pytest.raises(ApplicationError) as err:
        assignment_draft_save(assignment_id=lease.pk, user=a, draft=["not", "an", "object"])  # type: ignore[arg-type]
    assert err.value.field == "draft"
    with pytest.raises(ApplicationError):
        assignment_draft_save(assignment_id=lease.pk, user=a, draft={"x": "y" * DRAFT_MAX_BYTES})
    with pytest.raises(NotFoundError):
        assignment_draft_save(assignment_id=lease.pk, user=b, draft={})
    # a released assignment still keeps a draft (nothing typed is lost)
    assignment_release(assignment_id=lease.pk, user=a)
    assert assignment_draft_save(assignment_id=lease.pk, user=a, draft={"k": 1}).draft == {"k": 1}


def test_extend_renews_an_open_lease_and_refuses_a_closed_one(project):
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    expire(lease)
    extended = assignment_extend(assignment_id=lease.pk, user=a)
    assert extended.lease_expires_at > timezone.now() + timedelta(minutes=29)
    with pytest.raises(NotFoundError):
        assignment_extend(assignment_id=lease.pk, user=b)
    expire(lease)
    assert assignment_next(project=project, user=b, stage="questions-1") is not None  # B reclaims it
    with pytest.raises(ConflictError):
        assignment_extend(assignment_id=lease.pk, user=a)


def test_expire_leases_marks_only_runout_leases(project):
    a, b = member(project, "a"), member(project, "b")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    old = assignment_next(project=project, user=a, stage="questions-1")
    live = assignment_next(project=project, user=b, stage="questions-1")
    expire(old)
    assert assignment_expire_leases(project=project) == 1
    old.refresh_from_db()
    live.refresh_from_db()
    assert (old.status, live.status) == (AssignmentStatus.EXPIRED, AssignmentStatus.LEASED)


def test_double_lease_detector_finds_an_overlap(project):
    # given two writers whose leases of one screen overlapped in time (made by hand)
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    now = timezone.now()
    assert assignment_double_leases(project=project) == 0
    first = Assignment.objects.create(
        project=project,
        stage="questions-1",
        screen=screen,
        annotator=a,
        status="submitted",
        lease_expires_at=now + timedelta(minutes=30),
        submitted_at=now,
    )
    Assignment.objects.filter(pk=first.pk).update(created_at=now - timedelta(minutes=5), updated_at=now)
    second = Assignment.objects.create(
        project=project, stage="questions-1", screen=screen, annotator=b, lease_expires_at=now + timedelta(minutes=30)
    )
    Assignment.objects.filter(pk=second.pk).update(created_at=now - timedelta(minutes=1))
    # then the detector counts it
    assert assignment_double_leases(project=project) == 1


def test_leases_end_only_live_ones_keeping_drafts(project):
    # given A holds one lease with a draft and has submitted another; B holds one
    a, b = member(project, "a"), member(project, "b")
    screens(project, 3, state=ScreenState.QUESTIONS_1)
    done = assignment_next(project=project, user=a, stage="questions-1")
    Assignment.objects.filter(pk=done.pk).update(status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now())
    held = assignment_next(project=project, user=a, stage="questions-1")
    assignment_draft_save(assignment_id=held.pk, user=a, draft={"questions": ["Kept?"]})
    other = assignment_next(project=project, user=b, stage="questions-1")
    now = timezone.now()
    # when every assignment of A's is ended (twice: idempotent)
    assert assignment_leases_end(leases=Assignment.objects.filter(annotator=a), now=now) == 1
    assert assignment_leases_end(leases=Assignment.objects.filter(annotator=a), now=now) == 0
    # then only the live one is released, with its draft; the submitted one and B's are untouched
    statuses = dict(Assignment.objects.values_list("pk", "status"))
    assert statuses == {done.pk: "submitted", held.pk: "released", other.pk: "leased"}
    assert Assignment.objects.get(pk=held.pk).draft == {"questions": ["Kept?"]}
    assert assignment_leases_end(leases=Assignment.objects.filter(annotator=b), now=now, status="expired") == 1
    with pytest.raises(ValueError, match="not 'submitted'"):
        assignment_leases_end(leases=Assignment.objects.all(), now=now, status="submitted")
