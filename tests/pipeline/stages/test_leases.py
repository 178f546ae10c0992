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


def test_the_refusals_say_what_went_wrong(project, answers_lease):
    _, _, lease = answers_lease
    with pytest.raises(NotFoundError) as err:
        lease_free(project=ProjectFactory(slug="other"), assignment_id=lease.pk)
    assert err.value.message == "No such lease in this project."
    lease_free(project=project, assignment_id=lease.pk)
    with pytest.raises(ConflictError) as err:
        lease_free(project=project, assignment_id=lease.pk)
    assert err.value.message == "This lease is no longer held (submitted, released or run out)."


def test_a_lease_whose_time_is_up_this_instant_is_no_longer_held(project, answers_lease, monkeypatch):
    _, _, lease = answers_lease
    instant = timezone.now() + timedelta(minutes=1)
    Assignment.objects.filter(pk=lease.pk).update(lease_expires_at=instant)
    monkeypatch.setattr(timezone, "now", lambda: instant)
    with pytest.raises(ConflictError):
        lease_free(project=project, assignment_id=lease.pk)
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.LEASED


def test_freeing_returns_the_lease_with_its_project_read_once(project, answers_lease, django_assert_num_queries):
    _, _, lease = answers_lease
    with django_assert_num_queries(6) as captured:
        freed = lease_free(project=project, assignment_id=lease.pk)
        assert freed.project.slug == project.slug  # read with the lease, not again
    assert sum('"annotation_project"' in q["sql"] for q in captured.captured_queries) == 1


def test_the_list_is_this_projects_live_leases_oldest_first_in_one_query(project, django_assert_num_queries):
    author = member(project, "author")
    question = answering_question(screens(project, 1)[0], author=author, needed=4)
    holders = [member(project, f"holder{i}") for i in range(4)]
    newest, oldest, tied_first, tied_second = (_lease(project, holder, question) for holder in holders)
    holder = holders[0]
    now = timezone.now()
    Assignment.objects.filter(pk=newest.pk).update(created_at=now)
    Assignment.objects.filter(pk=oldest.pk).update(created_at=now - timedelta(minutes=3))
    Assignment.objects.filter(pk__in=[tied_first.pk, tied_second.pk]).update(created_at=now - timedelta(minutes=2))
    elsewhere = ProjectFactory(slug="elsewhere")
    _lease(elsewhere, holder, answering_question(screens(elsewhere, 1)[0], needed=1))
    with django_assert_num_queries(1):
        rows = [
            (
                a.pk,
                a.stage,
                a.purpose,
                a.created_at,
                a.lease_expires_at,
                a.annotator_id,
                a.annotator.username,
                a.screen.rico_id,
                a.question.text,
            )
            for a in lease_list(project=project)
        ]
    assert [row[0] for row in rows] == [oldest.pk, tied_first.pk, tied_second.pk, newest.pk]
    assert rows[0][1:3] == ("answers", "work") and rows[0][6:] == ("holder1", question.screen.rico_id, question.text)
