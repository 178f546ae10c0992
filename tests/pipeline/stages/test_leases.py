"""pipeline.stages.leases: a lead frees or hands on a held lease, within the stage's rules."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from annotation.models import Assignment, AssignmentStatus, Standing, StandingStatus
from pipeline.stages.leases import lease_free, lease_list, lease_reassign
from tests.factories import ProjectFactory
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


def _lease(project, user, question, *, minutes: int = 10, **fields):
    return Assignment.objects.create(
        project=project,
        stage="answers",
        screen=question.screen,
        question=question,
        annotator=user,
        lease_expires_at=timezone.now() + timedelta(minutes=minutes),
        **fields,
    )


@pytest.fixture
def answers_lease(project):
    author = member(project, "author")
    holder = member(project, "holder")
    question = answering_question(screens(project, 1)[0], author=author, needed=3)
    return author, holder, _lease(project, holder, question)


def _active(project, user, stage="answers"):
    Standing.objects.create(project=project, user=user, stage=stage, status=StandingStatus.ACTIVE)


def test_list_shows_live_leases_only(project, answers_lease):
    _, holder, lease = answers_lease
    question = answering_question(screens(project, 1)[0], needed=1)
    _lease(project, holder, question, minutes=-1)  # ran out
    assert [a.pk for a in lease_list(project=project)] == [lease.pk]


def test_free_puts_it_back_and_refuses_twice(project, answers_lease):
    _, _, lease = answers_lease
    assert lease_free(project=project, assignment_id=lease.pk).status == AssignmentStatus.RELEASED
    with pytest.raises(ConflictError):
        lease_free(project=project, assignment_id=lease.pk)
    with pytest.raises(NotFoundError):
        lease_free(project=ProjectFactory(slug="other"), assignment_id=lease.pk)


def test_reassign_follows_the_stage_rules(project, answers_lease):
    author, holder, lease = answers_lease
    outside_pool = member(project, "nopool", pool=False)
    newcomer = member(project, "newcomer")
    paused = member(project, "paused")
    Standing.objects.create(project=project, user=paused, stage="answers", status=StandingStatus.PAUSED)
    ready = member(project, "ready")
    _active(project, ready)
    _active(project, author)
    # never to the question's author, never outside the answer pool, never unqualified or paused
    with pytest.raises(ApplicationError, match="not open to author"):
        lease_reassign(project=project, assignment_id=lease.pk, user_id=author.pk)
    with pytest.raises(PermissionDeniedError):
        lease_reassign(project=project, assignment_id=lease.pk, user_id=outside_pool.pk)
    for user in (newcomer, paused):
        with pytest.raises(ApplicationError, match="not qualified or is paused"):
            lease_reassign(project=project, assignment_id=lease.pk, user_id=user.pk)
    assert Assignment.objects.get(pk=lease.pk).annotator == holder
    # a qualified member of the pool gets it, with a fresh lease and no draft of the holder's
    Assignment.objects.filter(pk=lease.pk).update(draft={"note": "holder's"})
    moved = lease_reassign(project=project, assignment_id=lease.pk, user_id=ready.pk)
    stored = Assignment.objects.get(pk=lease.pk)
    assert (stored.annotator, stored.status, stored.draft) == (ready, AssignmentStatus.LEASED, {})
    assert stored.lease_expires_at > timezone.now() + timedelta(minutes=project.lease_minutes - 1)
    assert moved.pk == lease.pk


def test_reassign_refuses_someone_who_answered_already(project, answers_lease):
    _, _, lease = answers_lease
    other = member(project, "other")
    _active(project, other)
    _lease(project, other, lease.question, status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now())
    with pytest.raises(ApplicationError, match="not open to other"):
        lease_reassign(project=project, assignment_id=lease.pk, user_id=other.pk)


def test_qualification_items_stay_with_their_annotator(project, answers_lease):
    from annotation.models import GoldItem

    _, _, lease = answers_lease
    ready = member(project, "ready")
    _active(project, ready)
    gold = GoldItem.objects.create(
        project=project, stage="answers", screen=lease.screen, question=lease.question, answer={}
    )
    Assignment.objects.filter(pk=lease.pk).update(purpose="qualification", gold=gold)
    with pytest.raises(ApplicationError, match="cannot be handed"):
        lease_reassign(project=project, assignment_id=lease.pk, user_id=ready.pk)
