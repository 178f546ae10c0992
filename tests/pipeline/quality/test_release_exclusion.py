"""Release: work of annotators a rule paused, or who did not qualify, stays out of post-processing;
the release manifest reports the quality-control figures."""

from __future__ import annotations

import json

import pytest
from django.db import transaction
from django.utils import timezone

from annotation.exceptions import PermissionDeniedError
from annotation.lock_objects import standing_lock
from annotation.models import (
    Answer,
    AssignmentStatus,
    ControlResult,
    PausedWork,
    Question,
    QuestionState,
    Standing,
    StandingStatus,
)
from pipeline.engine import assignment_next_by_slug, assignment_submit, stage_get
from pipeline.jobs.runner import job_run_now
from pipeline.quality.gold import gold_item_create
from pipeline.quality.release import release_quality_figures
from pipeline.quality.standing import pause
from pipeline.release.export.service import release_export
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


def right_answer(question: Question) -> dict:
    return {
        "question": question.text,
        "verdict": "answered",
        "elements": [{"vh_index": 1}],
        "full_answer": "It says so.",
    }


@pytest.fixture
def crowd(project):
    """Four real questions (one answer each), two answers gold items, and a lead; ``ann`` and
    ``other`` active in the answers stage (qualified), no control items unless a test asks."""
    project.control_rate = project.control_rate_new = 0
    project.fast_response_seconds = 0
    project.save()
    made = screens(project, 6)
    real = [answering_question(s, text=f"What does label 1 of {s.rico_id} say?") for s in made[:4]]
    lead = member(project, "lead", role="lead")
    for screen in made[4:]:
        q = answering_question(screen, text="What is the first label?")
        Question.objects.filter(pk=q.pk).update(state=QuestionState.KEPT)  # gold only, no real work
        gold_item_create(project=project, stage="answers", screen=screen, question=q, answer=right_answer(q), user=lead)
    users = {name: member(project, name) for name in ("ann", "other")}
    for user in users.values():
        Standing.objects.create(project=project, user=user, stage="answers", status=StandingStatus.ACTIVE)
    return {"real": real, "lead": lead, **users}


def work(project, user) -> int:
    lease = assignment_next_by_slug(slug=project.slug, user=user, stage="answers")
    assert lease is not None
    return lease.assignment.pk


def answer_next(project, user) -> None:
    pk = work(project, user)
    lease_question = Question.objects.get(assignments__pk=pk)
    assignment_submit(assignment_id=pk, user=user, data=right_answer(lease_question))


def rule_pause(project, user) -> None:
    """What the control-accuracy rule does when it fires (``pipeline.quality.standing``)."""
    with transaction.atomic():
        standing = standing_lock(project_id=project.pk, user_id=user.pk, stage="answers")
        pause(
            stage=stage_get("answers"),
            standing=standing,
            project=project,
            rule="control-accuracy",
            reason="2 of your last 5 control items were right",
            figures={"items": 5, "correct": 2},
            now=timezone.now(),
        )


def test_work_of_an_annotator_a_rule_paused_is_withdrawn_requeued_and_not_released(project, crowd, tmp_path):
    ann, other = crowd["ann"], crowd["other"]
    answer_next(project, ann)
    answer_next(project, ann)
    open_lease = work(project, ann)  # a third item still open when the rule fires
    rule_pause(project, ann)
    # Then their answers are withdrawn and their questions wait for another annotator
    mine = Answer.objects.filter(annotator=ann)
    assert list(mine.values_list("kept", "drop_reason")) == [(False, "withdrawn"), (False, "withdrawn")]
    assert {q.state for q in Question.objects.filter(answers__annotator=ann)} == {QuestionState.ANSWERING}
    assert ann.assignments.get(pk=open_lease).status == AssignmentStatus.RELEASED
    # And the lease the pause released cannot be submitted afterwards
    with pytest.raises(PermissionDeniedError, match="paused"):
        assignment_submit(assignment_id=open_lease, user=ann, data=right_answer(crowd["real"][2]))
    # When another annotator does the work and the project is post-processed
    for _ in crowd["real"]:
        answer_next(project, other)
    assert assignment_next_by_slug(slug=project.slug, user=other, stage="answers") is None
    job_run_now(kind="postprocess", project_slug=project.slug)
    # Then the release holds only the other annotator's answers
    released = Answer.objects.filter(question__state=QuestionState.KEPT, kept=True)
    assert set(released.values_list("annotator__username", flat=True)) == {"other"}
    assert released.count() == 4
    # And the manifest says who the released answers are from and what quality control withdrew
    manifest = release_export(project=project, out_dir=tmp_path, fmt="screenqa")
    quality = json.loads((tmp_path / "manifest.json").read_text())["quality"]
    assert quality == manifest["quality"]
    answers = quality["stages"]["answers"]
    assert answers["in_release"]["total"] == 4
    assert answers["in_release"]["by_standing"] == {
        "active": {"controlled": 0, "review_accepted": 0, "provisional": 4},
        "lead": 0,
        "no_standing": 0,
    }
    assert answers["withdrawn"] == {
        "rule-pause": 2,
        "not-qualified-by-review": 0,
        "review-rejected": 0,
        "owed-qualification-failed": 0,
    }
    assert quality["reviews"] == {}


def test_a_project_that_keeps_paused_work_keeps_it(project, crowd):
    project.paused_work = PausedWork.KEEP
    project.save()
    answer_next(project, crowd["ann"])
    rule_pause(project, crowd["ann"])
    assert list(Answer.objects.filter(annotator=crowd["ann"]).values_list("kept", flat=True)) == [True]
    job_run_now(kind="postprocess", project_slug=project.slug)
    figures = release_quality_figures(project=project)["stages"]["answers"]
    assert figures["in_release"]["total"] == 1  # reported as a paused annotator's
    assert figures["in_release"]["by_standing"]["paused"] == {"controlled": 0, "review_accepted": 0, "provisional": 1}


def test_an_annotator_who_fails_the_qualification_never_answers_a_real_question(project, crowd):
    project.qualification_items = 2
    project.save()
    newcomer = member(project, "newcomer")
    for _ in range(2):
        pk = work(project, newcomer)  # qualification items: the gold questions
        assignment_submit(
            assignment_id=pk,
            user=newcomer,
            data={"question": "What is the first label?", "verdict": "invalid", "elements": [], "full_answer": ""},
        )
    assert Standing.objects.get(user=newcomer).status == StandingStatus.NOT_QUALIFIED
    assert ControlResult.objects.filter(user=newcomer, correct=False).count() == 2
    with pytest.raises(PermissionDeniedError, match="did not qualify"):
        assignment_next_by_slug(slug=project.slug, user=newcomer, stage="answers")
    assert not Answer.objects.filter(annotator=newcomer).exists()


def test_manifest_control_accuracy_is_a_distribution(project, crowd):
    project.control_rate = project.control_rate_new = 1.0
    project.monitoring_evidence = 50  # no pause here
    project.save()
    # ann gets both gold items as control items and answers one right, one wrong; other: both right
    for user, wrong in ((crowd["ann"], 1), (crowd["other"], 0)):
        for n in range(2):
            pk = work(project, user)
            body = right_answer(Question.objects.get(assignments__pk=pk))
            if n < wrong:
                body = {**body, "verdict": "not_answerable", "elements": [], "full_answer": ""}
            assignment_submit(assignment_id=pk, user=user, data=body)
    accuracy = release_quality_figures(project=project)["control_accuracy"]
    assert accuracy == {"answers": {"annotators": 2, "min": 0.5, "q1": 0.625, "median": 0.75, "q3": 0.875, "max": 1.0}}
