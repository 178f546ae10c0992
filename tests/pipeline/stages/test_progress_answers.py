"""pipeline.stages.progress past "with questions": answers per split, stuck questions, held leases."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, Membership
from pipeline.stages.progress import SplitAnswers, project_progress
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


def test_answers_by_split(project):
    train, validation = screens(project, 2)
    answering_question(train, needed=1)
    validation.split = "validation"
    validation.save()
    q = answering_question(validation, needed=3)
    q.answers_done = 2
    q.save()
    assert project_progress(project=project).answers_by_split == [
        SplitAnswers("train", 1, 0, 1),
        SplitAnswers("validation", 1, 2, 3),
    ]


def test_stuck_counts_the_pool_less_the_author_and_who_answered(project):
    # given a pool of three, one of them the author of two validation questions that need three answers
    author = member(project, "author")
    first = member(project, "p1")
    member(project, "p2")
    member(project, "outside", pool=False)
    screen = screens(project, 1, split="validation")[0]
    questions = [answering_question(screen, author=author, needed=3, text=f"Q{i}?") for i in range(2)]
    progress = project_progress(project=project)
    # then both are stuck: two answerers besides the author, three answers needed
    assert [(s.count, s.answers_needed, s.splits) for s in progress.stuck] == [(2, 3, ("validation",))]
    assert progress.stuck[0].message == (
        "2 validation questions need a third answerer other than their author: add members to the answer pool."
    )
    # when one answer is in, p1 has answered and p2 remains: still one short
    Assignment.objects.create(
        project=project,
        stage="answers",
        screen=screen,
        question=questions[0],
        annotator=first,
        status=AssignmentStatus.SUBMITTED,
        submitted_at=timezone.now(),
        lease_expires_at=timezone.now(),
    )
    questions[0].answers_done = 1
    questions[0].save()
    assert project_progress(project=project).stuck[0].count == 2
    # when a third person joins the pool, nothing is stuck
    member(project, "p3")
    assert project_progress(project=project).stuck == []
    # and when the author leaves the pool, nothing changes for their own questions' count
    Membership.objects.filter(user=author).update(in_answer_pool=False)
    assert project_progress(project=project).stuck == []


def test_stuck_groups_by_answers_needed_and_costs_nothing_when_no_question_waits(project, django_assert_num_queries):
    # given no question waiting for answers: the stuck figure reads nothing more than the split counts
    member(project, "solo")
    progress = project_progress(project=project)
    assert progress.answers_by_split == []
    with django_assert_num_queries(0):
        assert progress.stuck == []
    # given a pool of one: a train question needing 1 (open to them), train and test ones needing 2
    author = member(project, "author", pool=False)
    train = screens(project, 1, split="train")[0]
    test = screens(project, 1, split="test")[0]
    answering_question(train, author=author, needed=1, text="Open?")
    for screen in (train, test, test):
        answering_question(screen, author=author, needed=2, text="Short?")
    stuck = project_progress(project=project).stuck
    # then one group: three questions needing 2, in both splits
    assert [(s.answers_needed, s.count, s.splits) for s in stuck] == [(2, 3, ("train", "test"))]


def test_held_counts_live_leases_per_stage(project):
    user = member(project, "u")
    screen = screens(project, 1)[0]
    for minutes in (10, -1):
        Assignment.objects.create(
            project=project,
            stage="prefilter",
            screen=screen if minutes > 0 else screens(project, 1)[0],
            annotator=user,
            lease_expires_at=timezone.now() + timedelta(minutes=minutes),
        )
    assert project_progress(project=project).held == {"prefilter": 1}
