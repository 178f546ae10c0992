"""What an annotator sees of their own quality (``pipeline.quality.mine``), and that a control
item is served exactly like real work."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import (
    Assignment,
    ControlResult,
    Question,
    Review,
    ReviewState,
    ScreenState,
    Standing,
    StandingStatus,
)
from annotation.permissions import member_get
from pipeline.engine import assignment_next, assignment_payload, assignment_submit
from pipeline.quality.mine import (
    control_figures_until,
    feedback_by_stage,
    my_work_figures,
    my_work_history,
    refusal_items,
    standing_views,
)
from pipeline.quality.report import quality_report
from tests.pipeline.quality.builders import (
    RIGHT,
    WRONG,
    fail_qualification,
    gold_prefilter,
    pause_on_control_items,
    work_prefilter,
)
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


def _shape(value):
    """The keys of a payload, recursively (lists by their first item): what a client could tell apart."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def test_a_control_lease_has_the_payload_of_real_work(project):
    # given a project that serves control items to new annotators only, and two active annotators
    project.control_rate_new, project.control_rate = 1.0, 0.0
    project.save()
    gold_prefilter(project, 1)
    screens(project, 1)
    new, seasoned = member(project, "new"), member(project, "seasoned")
    Standing.objects.create(project=project, user=new, stage="prefilter", status=StandingStatus.ACTIVE)
    Standing.objects.create(
        project=project, user=seasoned, stage="prefilter", status=StandingStatus.ACTIVE, items_done=500
    )

    # when each asks for work
    control = assignment_next(project=project, user=new, stage="prefilter")
    real = assignment_next(project=project, user=seasoned, stage="prefilter")

    # then one is a control item and the other real work, with payloads of the same shape
    assert (control.purpose, real.purpose) == ("control", "work")
    control_payload = assignment_payload(assignment=control)
    real_payload = assignment_payload(assignment=real)
    assert _shape(control_payload) == _shape(real_payload)
    assert control_payload["status"] == real_payload["status"] == "leased"
    text = str(control_payload).lower()
    assert "gold" not in text and "control" not in text and "purpose" not in text

    # and while it is open, the annotator's own history shows it as work
    [row] = my_work_history(project=project, user=new)
    assert (row.kind, row.control, row.open) == ("work", None, True)


def test_a_running_qualification_set_shows_progress_and_no_result(project):
    # given a new annotator one item into a set of three
    project.qualification_items = 3
    project.save()
    gold_prefilter(project, 3)
    annie = member(project, "annie")
    work_prefilter(project, annie, WRONG)

    # then the standing says how far the set is, and nothing says which answer was wrong
    view = standing_views(project=project, user=annie, membership=member_get(project=project, user=annie))["prefilter"]
    assert view.status == StandingStatus.QUALIFYING
    assert view.summary == "Qualifying: qualification set: 1 of 3 done"
    assert view.can_start
    [row] = my_work_history(project=project, user=annie)
    assert row.kind == "qualification" and row.control is None
    assert feedback_by_stage(project=project, user=annie) == []


def test_a_failed_qualification_gives_feedback_and_a_retry_time(project):
    gold_prefilter(project, 2)
    annie = member(project, "annie")

    fail_qualification(project, annie)

    view = standing_views(project=project, user=annie, membership=member_get(project=project, user=annie))["prefilter"]
    assert view.status == StandingStatus.NOT_QUALIFIED
    assert "1 of 2 right" in view.reason
    assert not view.can_start and view.has_feedback
    assert view.retry_at is not None and view.retry_at > timezone.now() + timedelta(hours=23)
    assert view.attempts_left == project.qualification_attempts - 1
    [(stage, kind, items)] = feedback_by_stage(project=project, user=annie)
    assert (stage.name, kind) == ("prefilter", "qualification")
    assert [i.correct for i in items] == [False, True]
    assert ("Non-English app", "yes") in items[0].given_lines
    assert ("Non-English app", "no") in items[0].gold_lines
    # the history now shows each result
    assert {row.control["correct"] for row in my_work_history(project=project, user=annie)} == {True, False}
    standing, wrong = refusal_items(project=project, user=annie, stage="prefilter")
    assert standing.status == StandingStatus.NOT_QUALIFIED and len(wrong) == 1


def test_a_retry_is_offered_once_the_cooldown_passed(project):
    gold_prefilter(project, 2)
    annie = member(project, "annie")
    fail_qualification(project, annie)
    Standing.objects.filter(user=annie).update(attempt_started_at=timezone.now() - timedelta(hours=25))

    view = standing_views(project=project, user=annie, membership=member_get(project=project, user=annie))["prefilter"]

    assert view.status == StandingStatus.NOT_QUALIFIED and view.can_start


def test_a_paused_annotator_reads_the_aggregate_never_the_control_items(project):
    # given an annotator paused by two wrong control items
    gold_prefilter(project, 2)
    annie = member(project, "annie")

    pause_on_control_items(project, annie)

    # then the standing says how many were right, and nothing names the items or their gold answers
    view = standing_views(project=project, user=annie, membership=member_get(project=project, user=annie))["prefilter"]
    assert view.status == StandingStatus.PAUSED and not view.can_start and not view.has_feedback
    assert view.reason == "0 of your last 2 control items were right"
    standing, wrong = refusal_items(project=project, user=annie, stage="prefilter")
    assert standing is not None and standing.status == StandingStatus.PAUSED and wrong == []
    assert feedback_by_stage(project=project, user=annie) == []
    history = my_work_history(project=project, user=annie)
    assert {row.kind for row in history} == {"work"} and all(row.control is None for row in history)
    # and their accuracy counts the control items of whole past days only
    figures = my_work_figures(project=project, user=annie)
    assert (figures.control_items, figures.control_correct, figures.control_accuracy) == (0, 0, None)
    ControlResult.objects.filter(user=annie).update(created_at=control_figures_until() - timedelta(minutes=1))
    figures = my_work_figures(project=project, user=annie)
    assert (figures.control_items, figures.control_correct, figures.control_accuracy) == (2, 0, 0.0)


def test_leads_are_never_gated(project, lead):
    gold_prefilter(project, 2)
    view = standing_views(project=project, user=lead, membership=member_get(project=project, user=lead))["prefilter"]
    assert (view.status, view.can_start, view.qualification_mode) == ("", True, "")


def test_history_and_figures_are_the_callers_own(project):
    # given two annotators who judged screens, one of whose submissions was rejected in review
    screens(project, 2)
    annie, bob = member(project, "annie"), member(project, "bob")
    mine = work_prefilter(project, annie, RIGHT)
    work_prefilter(project, bob, RIGHT)
    Assignment.objects.filter(pk=mine.pk).update(review_state=ReviewState.REJECTED)
    Review.objects.create(reviewed=mine, reviewer=bob, verdict="rejected", reason="sync", comment="Look again.")

    # then annie sees her item with the verdict, the rule's words and the comment; nothing of bob's
    [row] = my_work_history(project=project, user=annie)
    assert row.id == mine.pk
    assert row.review == {
        "verdict": "rejected",
        "verdict_label": "Rejected",
        "reason": "sync",
        "reason_label": "The VH sync of the main content was judged wrong",
        "comment": "Look again.",
    }
    figures = my_work_figures(project=project, user=annie)
    assert (figures.items_done, figures.reviewed, figures.review_acceptance) == (1, 1, 0.0)
    assert [(c.stage, c.submitted) for c in figures.per_stage] == [("prefilter", 1)]
    assert my_work_figures(project=project, user=bob).reviewed == 0


def test_a_pass_two_flag_reaches_the_pass_one_writer(project):
    # given carl wrote two questions in pass 1 and dana, in pass 2, flagged one of them
    carl, dana = member(project, "carl"), member(project, "dana")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    first = assignment_next(project=project, user=carl, stage="questions-1")
    assignment_submit(
        assignment_id=first.pk, user=carl, data={"questions": ["How many photos are there?", "What is the title?"]}
    )
    counting = Question.objects.get(text="How many photos are there?")
    second = assignment_next(project=project, user=dana, stage="questions-2")
    flags = [{"question_id": counting.pk, "reason": "counting"}]
    assignment_submit(assignment_id=second.pk, user=dana, data={"questions": [], "flags": flags})

    # then carl's My work shows it in his figures and next to his item
    figures = my_work_figures(project=project, user=carl)
    assert (figures.questions_written, figures.questions_flagged_pass2, figures.invalid_rate) == (2, 1, 0.5)
    [row] = my_work_history(project=project, user=carl)
    assert row.flags == [{"text": "How many photos are there?", "reason": "counting", "reason_label": "Needs counting"}]
    # and the lead's report counts it against carl (not against dana, who wrote nothing)
    rows = {r.username: r for r in quality_report(project=project)}
    assert (rows["carl"].questions_flagged_pass2, rows["carl"].invalid_rate) == (1, 0.5)
    assert rows["dana"].questions_written == 0 and my_work_history(project=project, user=dana)[0].flags == []


def test_a_stage_without_gold_does_not_promise_a_qualification_set(project):
    annie = member(project, "annie")
    views = standing_views(project=project, user=annie, membership=member_get(project=project, user=annie))
    assert views["prefilter"].why == ""  # no gold yet: they start active
    gold_prefilter(project, 2)
    views = standing_views(project=project, user=annie, membership=member_get(project=project, user=annie))
    assert views["prefilter"].why == "you start with a qualification set"


def test_a_second_attempt_says_the_first_was_not_passed(project):
    gold_prefilter(project, 6)
    annie = member(project, "annie")
    fail_qualification(project, annie)
    Standing.objects.filter(user=annie).update(
        status=StandingStatus.QUALIFYING, attempt=2, reason="qualification attempt 2"
    )
    view = standing_views(project=project, user=annie, membership=member_get(project=project, user=annie))["prefilter"]
    assert view.why == "attempt 2 of 3 (the last one was not passed); qualification set: 0 of 2 done"
