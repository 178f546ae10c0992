"""What an annotator sees of their own quality (``pipeline.quality.mine``), and that a control
item is served exactly like real work."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    Purpose,
    Question,
    QuestionSource,
    Review,
    ReviewState,
    ScreenState,
    Standing,
    StandingStatus,
    Verdict,
)
from annotation.permissions import member_get
from pipeline.engine import assignment_next, assignment_payload, assignment_submit
from pipeline.quality.mine import (
    control_figures_until,
    control_leases,
    feedback_by_stage,
    my_work_figures,
    my_work_history,
    qualification_feedback,
    refusal_items,
    standing_views,
)
from pipeline.quality.report import quality_report
from tests.factories import MembershipFactory, ProjectFactory
from tests.pipeline.quality.builders import (
    RIGHT,
    WRONG,
    fail_qualification,
    gold_prefilter,
    pause_on_control_items,
    work_prefilter,
)
from tests.pipeline.quality.report_builders import START, WHY_WRONG, answer, control, gold, question, work
from tests.pipeline.stages.helpers import answering_question, member, screens

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


def _views(project, user):
    return standing_views(project=project, user=user, membership=member_get(project=project, user=user))


def _other_project(user):
    other = ProjectFactory(slug="other")
    MembershipFactory(project=other, user=user)
    return other


def test_a_newcomer_reads_how_each_stage_starts(project):
    # given gold in pre-filtering, and an annotator who never worked
    gold_prefilter(project, 2)
    annie, bob = member(project, "annie"), member(project, "bob")
    Standing.objects.create(project=project, user=bob, stage="prefilter", status=StandingStatus.PAUSED)
    Standing.objects.create(project=_other_project(annie), user=annie, stage="prefilter", status=StandingStatus.PAUSED)

    views = _views(project, annie)

    # then pre-filtering starts with a set, the writing stages with review, the rest plainly
    assert views["prefilter"].summary == "Not started: you start with a qualification set"
    assert views["questions-1"].summary == "Not started: your first submissions are reviewed"
    assert views["answers"].summary == "Not started"  # gold-stage without gold yet
    assert (views["answers"].qualification_mode, views["answers"].why) == ("", "")
    first = views["prefilter"]
    assert (first.stage, first.label, first.status, first.status_label, first.reason) == (
        "prefilter",
        "Pre-filtering",
        "",
        "",
        "",
    )
    assert first.can_start and first.qualification_mode == "gold"
    assert (first.qualification_done, first.qualification_items, first.retry_at, first.attempts_left) == (
        None,
        None,
        None,
        None,
    )
    assert (first.has_feedback, first.attempt, first.attempts) == (False, 0, 0)


def test_the_set_counts_only_the_callers_done_items_of_the_running_attempt(project):
    # given annie qualifying in attempt 2 of a set of five, with decoys made first: bob's item,
    # annie's work, an item of attempt 1, one in another project, and one still leased
    project.qualification_items = 5
    project.save()
    annie, bob = member(project, "annie"), member(project, "bob")
    control(project, bob, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
    mine_work = work(project, annie)
    Assignment.objects.filter(pk=mine_work.pk).update(attempt=2)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
    other = _other_project(annie)
    control(other, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
    open_item = control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
    Assignment.objects.filter(pk=open_item.assignment_id).update(status=AssignmentStatus.LEASED)
    control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
    skipped = control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
    Assignment.objects.filter(pk=skipped.assignment_id).update(status=AssignmentStatus.SKIPPED)
    Standing.objects.create(project=project, user=annie, stage="prefilter", status=StandingStatus.QUALIFYING, attempt=2)

    view = _views(project, annie)["prefilter"]

    # then two are done (the submitted one and the skipped one)
    assert (view.qualification_done, view.qualification_items, view.attempt, view.attempts) == (2, 5, 2, 3)
    assert view.why == "attempt 2 of 3 (the last one was not passed); qualification set: 2 of 5 done"
    assert view.can_start and view.has_feedback and view.retry_at is None
    assert view.attempts_left == 1


def test_a_first_running_set_has_no_feedback_yet(project):
    gold_prefilter(project, 2)
    annie = member(project, "annie")
    Standing.objects.create(project=project, user=annie, stage="prefilter", status=StandingStatus.QUALIFYING, attempt=1)
    view = _views(project, annie)["prefilter"]
    assert (view.has_feedback, view.attempt, view.attempts_left, view.qualification_done) == (False, 1, 2, 0)
    assert view.why == f"qualification set: 0 of {project.qualification_items} done"


def test_an_active_annotator_qualified_once_has_feedback_and_no_set(project):
    annie = member(project, "annie")
    Standing.objects.create(
        project=project, user=annie, stage="prefilter", status=StandingStatus.ACTIVE, attempt=1, reason="qualified"
    )
    Standing.objects.create(project=project, user=annie, stage="questions-1", status=StandingStatus.ACTIVE)
    views = _views(project, annie)
    view = views["prefilter"]
    assert (view.status, view.status_label, view.reason, view.summary) == (
        "active",
        "Active",
        "qualified",
        "Active: qualified",
    )
    assert view.can_start and view.has_feedback
    assert (view.qualification_done, view.qualification_items, view.retry_at, view.attempt) == (None, None, None, 0)
    assert view.attempts_left == 2
    writing = views["questions-1"]
    assert (writing.qualification_mode, writing.attempts_left, writing.has_feedback) == ("review", None, False)


def test_no_attempt_left_means_no_retry(project):
    # given annie not qualified after more attempts than the project now allows
    annie = member(project, "annie")
    Standing.objects.create(
        project=project,
        user=annie,
        stage="prefilter",
        status=StandingStatus.NOT_QUALIFIED,
        attempt=4,
        attempt_started_at=timezone.now() - timedelta(days=30),
    )
    view = _views(project, annie)["prefilter"]
    assert (view.can_start, view.retry_at, view.attempts_left) == (False, None, 0)


def test_a_paused_annotator_may_not_start_and_has_no_retry_time(project):
    annie = member(project, "annie")
    Standing.objects.create(
        project=project,
        user=annie,
        stage="prefilter",
        status=StandingStatus.PAUSED,
        attempt=1,
        attempt_started_at=timezone.now() - timedelta(days=30),
    )
    view = _views(project, annie)["prefilter"]
    assert (view.can_start, view.retry_at, view.status_label) == (False, None, "Paused")


def test_control_leases_count_the_callers_control_items_held(project):
    # given annie's control items: one open, one submitted, one skipped, one released; and decoys
    annie, bob = member(project, "annie"), member(project, "bob")
    control(project, bob, correct=True)
    work(project, annie)
    control(_other_project(annie), annie, correct=True)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
    for status in ("leased", "submitted", "skipped", "released", "expired"):
        result = control(project, annie, correct=True)
        Assignment.objects.filter(pk=result.assignment_id).update(status=status)
    control(project, annie, correct=True, item=gold(project, stage="questions-1"))

    assert control_leases(project=project, user=annie) == {"prefilter": 3, "questions-1": 1}


def test_history_rows_carry_each_field(project):
    # given annie's items in two stages: a skip, an open lease, a reviewed pass-1 submission with
    # two questions (one flagged), and decoys (bob's, another project's, a released lease)
    annie, bob = member(project, "annie"), member(project, "bob")
    work(project, bob, at=START + timedelta(hours=5))
    work(_other_project(annie), annie, at=START + timedelta(hours=5))
    work(project, annie, status=AssignmentStatus.RELEASED, at=START + timedelta(hours=5))
    skipped = work(project, annie, status=AssignmentStatus.SKIPPED, at=START + timedelta(hours=1))
    Assignment.objects.filter(pk=skipped.pk).update(skip_reason="Blank screen")
    leased = work(project, annie, status=AssignmentStatus.LEASED, review_state="sampled", at=START + timedelta(hours=2))
    Assignment.objects.filter(pk=leased.pk).update(skip_reason="stale")
    wrote = work(project, annie, stage="questions-1", review_state="accepted", at=START)
    Review.objects.create(reviewed=wrote, reviewer=bob, verdict="accepted")
    for position, text, flag in ((1, "Second?", "counting"), (0, "First?", ""), (2, "Third?", "odd")):
        Question.objects.create(
            screen=wrote.screen,
            author=annie,
            origin=wrote,
            source=QuestionSource.PASS_1,
            position=position,
            text=text,
            flag_reason=flag,
        )

    rows = my_work_history(project=project, user=annie)

    # then newest first, each with its own fields
    assert [r.id for r in rows] == [leased.pk, skipped.pk, wrote.pk]
    top, skip, written = rows
    assert (top.status, top.open, top.review_state, top.skip_reason, top.submitted_at) == ("leased", True, "", "", None)
    assert (top.stage, top.stage_label, top.kind, top.rico_id, top.question) == (
        "prefilter",
        "Pre-filtering",
        "work",
        leased.screen.rico_id,
        "",
    )
    assert top.created_at == START + timedelta(hours=2)
    assert (skip.status, skip.open, skip.skip_reason) == ("skipped", False, "Blank screen")
    assert (written.status, written.open, written.review_state) == ("submitted", False, "accepted")
    assert written.submitted_at == START + timedelta(seconds=30)
    assert written.questions == ["First?", "Second?", "Third?"]
    assert written.flags == [
        {"text": "Second?", "reason": "counting", "reason_label": "Needs counting"},
        {"text": "Third?", "reason": "odd", "reason_label": "odd"},  # a reason the stage does not know
    ]
    assert written.review == {
        "verdict": "accepted",
        "verdict_label": "Accepted",
        "reason": "",
        "reason_label": "",
        "comment": "",
    }
    assert (top.review, written.control) == (None, None)
    # and one stage only, or the newest only
    assert [r.id for r in my_work_history(project=project, user=annie, stage="questions-1")] == [wrote.pk]
    assert [r.id for r in my_work_history(project=project, user=annie, limit=1)] == [leased.pk]


def test_history_ties_go_newest_id_first(project):
    annie = member(project, "annie")
    first, second = work(project, annie), work(project, annie)
    assert [r.id for r in my_work_history(project=project, user=annie)] == [second.pk, first.pk]


def test_a_decided_qualification_item_shows_its_result(project, django_assert_num_queries):
    # given annie's decided first set (one right, one wrong), and her running second set
    # (a skipped item of it scored wrong), and decoys: bob's set 1 and annie's set 1 elsewhere, running
    annie, bob = member(project, "annie"), member(project, "bob")
    other = _other_project(annie)
    Standing.objects.create(project=project, user=bob, stage="prefilter", status=StandingStatus.QUALIFYING, attempt=1)
    Standing.objects.create(project=other, user=annie, stage="prefilter", status=StandingStatus.QUALIFYING, attempt=1)
    given_back = control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
    Assignment.objects.filter(pk=given_back.assignment_id).update(status=AssignmentStatus.SKIPPED)
    wrong = control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
    control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
    Standing.objects.create(project=project, user=annie, stage="prefilter", status=StandingStatus.QUALIFYING, attempt=2)

    # the rows with screen, review and result; questions; running sets; second samples' items
    with django_assert_num_queries(4):
        running, decided, skipped = my_work_history(project=project, user=annie)
        [(row.rico_id, row.control) for row in (running, decided, skipped)]

    assert decided.id == wrong.assignment_id and decided.kind == "qualification"
    assert decided.control == {
        "correct": False,
        "purpose": "qualification",
        "given": {"non_english_app": True, "vh_out_of_sync": False},
        "gold": {"non_english_app": False, "vh_out_of_sync": False},
        "why": WHY_WRONG,
        "gold_hidden": False,
        "given_lines": [("VH out of sync", "no"), ("Non-English app", "yes")],
        "gold_lines": [("VH out of sync", "no"), ("Non-English app", "no")],
    }
    assert running.kind == "qualification" and running.control is None
    assert skipped.id == given_back.assignment_id and skipped.control is None


def test_control_figures_count_whole_past_days(project):
    at = datetime(2026, 3, 2, 15, 30, 12, 345, tzinfo=timezone.get_current_timezone())
    assert control_figures_until(at) == datetime(2026, 3, 2, tzinfo=timezone.get_current_timezone())
    assert control_figures_until() == timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)


def test_figures_count_each_status_and_only_control_results_of_past_days(project):
    # given annie's work: two submitted, a skip and an open lease in pre-filtering, a skip in
    # pass 1; control results: 1 of 3 right before today, one today, a qualification result before
    # today; and three reviews, two accepted; decoys of bob's and of another project
    annie, bob = member(project, "annie"), member(project, "bob")
    other = _other_project(annie)
    work(other, annie)
    control(other, annie, correct=True, at=START)
    work(project, bob)
    control(project, bob, correct=True, at=START)
    reviewed = [work(project, annie), work(project, annie)]
    work(project, annie, status=AssignmentStatus.SKIPPED)
    work(project, annie, status=AssignmentStatus.LEASED)
    work(project, annie, status=AssignmentStatus.RELEASED)
    work(project, annie, stage="questions-1", status=AssignmentStatus.SKIPPED)
    for right in (True, False, False):
        control(project, annie, correct=right, at=START)
    control(project, annie, correct=True, at=control_figures_until())  # today's first: not yet
    work(project, annie, stage="not-answerable", status=AssignmentStatus.LEASED)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1, at=START)
    for item, verdict in zip(
        [*reviewed, work(project, annie, stage="questions-2")], ("accepted", "accepted", "rejected"), strict=True
    ):
        Review.objects.create(
            reviewed=item, reviewer=bob, verdict=verdict, reason="" if verdict == "accepted" else "sync"
        )
    elsewhere = work(other, annie)
    Review.objects.create(reviewed=elsewhere, reviewer=bob, verdict="rejected", reason="sync")
    bobs = work(project, bob)
    Review.objects.create(reviewed=bobs, reviewer=annie, verdict="rejected", reason="sync")

    figures = my_work_figures(project=project, user=annie)

    # then (control results counted from the project's control items of past days only)
    assert (figures.items_done, figures.skipped) == (8, 2)  # gold items count as items done
    assert (figures.control_items, figures.control_correct, figures.control_accuracy) == (3, 1, 0.3333)
    assert (figures.reviewed, figures.review_accepted, figures.review_acceptance) == (3, 2, 0.6667)
    assert [(s.stage, s.label, s.submitted, s.skipped, s.open) for s in figures.per_stage] == [
        ("prefilter", "Pre-filtering", 7, 1, 1),
        ("questions-1", "Questions, pass 1", 0, 1, 0),
        ("questions-2", "Questions, pass 2", 1, 0, 0),
        ("not-answerable", "Not-answerable questions", 0, 0, 1),
    ]
    assert (figures.questions_written, figures.questions_flagged, figures.questions_faulted) == (0, 0, 0)
    assert figures.invalid_rate is None


def test_feedback_is_the_last_decided_set_only(project):
    # given annie not qualified after attempt 2 in pre-filtering; decoys made first: attempt 1's
    # result, a control result marked attempt 2, bob's, another stage's and another project's
    annie, bob = member(project, "annie"), member(project, "bob")
    control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
    control(project, annie, correct=False, attempt=2)
    control(project, bob, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
    control(
        project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=2, item=gold(project, stage="questions-1")
    )
    control(_other_project(annie), annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
    right = control(
        project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=2, at=START + timedelta(days=1)
    )
    wrong = control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
    standing = Standing.objects.create(
        project=project, user=annie, stage="prefilter", status=StandingStatus.NOT_QUALIFIED, attempt=2
    )

    items = qualification_feedback(project=project, user=annie, stage="prefilter", standing=standing)

    # then its two items, in the order served, each with what the annotator reads
    assert [i.assignment_id for i in items] == [right.assignment_id, wrong.assignment_id]
    first, second = items
    assert (first.stage, first.purpose, first.attempt, first.correct, first.why) == (
        "prefilter",
        "qualification",
        2,
        True,
        "",
    )
    assert first.rico_id == right.assignment.screen.rico_id and first.question == ""
    assert first.created_at == START + timedelta(days=1)
    assert (second.correct, second.why) == (False, WHY_WRONG)
    assert second.given_lines == [("VH out of sync", "no"), ("Non-English app", "yes")]
    assert second.gold_lines == [("VH out of sync", "no"), ("Non-English app", "no")]
    # and the refusal lists the wrong one only
    assert refusal_items(project=project, user=annie, stage="prefilter") == (standing, [second])
    # and no standing, or a first set still running, has none
    assert qualification_feedback(project=project, user=annie, stage="prefilter", standing=None) == []
    standing.status, standing.attempt = StandingStatus.QUALIFYING, 1
    assert qualification_feedback(project=project, user=annie, stage="prefilter", standing=standing) == []


def test_refusal_without_a_standing_or_while_active(project):
    # given decoys made first: bob's standing, annie's in another project and in another stage
    annie, bob = member(project, "annie"), member(project, "bob")
    Standing.objects.create(project=project, user=bob, stage="prefilter", status=StandingStatus.PAUSED)
    Standing.objects.create(project=_other_project(annie), user=annie, stage="prefilter", status=StandingStatus.PAUSED)
    Standing.objects.create(project=project, user=annie, stage="questions-1", status=StandingStatus.PAUSED)
    assert refusal_items(project=project, user=annie, stage="prefilter") == (None, [])
    control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
    active = Standing.objects.create(
        project=project, user=annie, stage="prefilter", status=StandingStatus.ACTIVE, attempt=1
    )
    assert refusal_items(project=project, user=annie, stage="prefilter") == (active, [])


def test_feedback_by_stage_follows_the_standings(project):
    # given annie qualified in answers (first), then not qualified in pre-filtering, each set decided
    annie, bob = member(project, "annie"), member(project, "bob")
    other = _other_project(annie)
    Standing.objects.create(project=project, user=bob, stage="not-answerable", status=StandingStatus.ACTIVE, attempt=1)
    Standing.objects.create(project=other, user=annie, stage="not-answerable", status=StandingStatus.ACTIVE, attempt=1)
    control(
        project,
        annie,
        correct=False,
        purpose=Purpose.QUALIFICATION,
        attempt=1,
        item=gold(project, stage="not-answerable"),
    )
    answers_gold = gold(project, stage="questions-1")
    Standing.objects.create(project=project, user=annie, stage="questions-1", status=StandingStatus.ACTIVE, attempt=1)
    Standing.objects.create(
        project=project, user=annie, stage="prefilter", status=StandingStatus.NOT_QUALIFIED, attempt=1
    )
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1, item=answers_gold)

    found = feedback_by_stage(project=project, user=annie)

    assert [(stage.name, kind, [i.correct for i in items]) for stage, kind, items in found] == [
        ("questions-1", "qualification", [True]),
        ("prefilter", "qualification", [True]),
    ]


def test_history_stops_at_its_limit(project):
    # given 201 skipped items (a skip holds no screen: one screen serves them all)
    annie = member(project, "annie")
    first = work(project, annie, status=AssignmentStatus.SKIPPED)
    Assignment.objects.bulk_create(
        Assignment(
            project=project,
            stage="prefilter",
            screen=first.screen,
            annotator=annie,
            status=AssignmentStatus.SKIPPED,
            lease_expires_at=first.lease_expires_at,
        )
        for _ in range(200)
    )
    rows = my_work_history(project=project, user=annie)
    assert len(rows) == 200 and first.pk not in {r.id for r in rows}


def test_standing_views_read_once_when_no_set_runs(project, django_assert_num_queries):
    # given gold everywhere, a lead, and an annotator started in every stage with gold
    gold_prefilter(project, 2)
    lead = member(project, "leo", role="lead")
    annie = member(project, "annie")
    for stage in ("prefilter", "answers", "review"):
        Standing.objects.create(project=project, user=annie, stage=stage, status=StandingStatus.ACTIVE, attempt=1)
    Standing.objects.create(project=project, user=lead, stage="prefilter", status=StandingStatus.PAUSED)
    for user in (lead, annie):
        membership = member_get(project=project, user=user)
        with django_assert_num_queries(1):
            views = standing_views(project=project, user=user, membership=membership)
    lead_view = standing_views(project=project, user=lead, membership=member_get(project=project, user=lead))
    assert (lead_view["prefilter"].status, lead_view["prefilter"].can_start) == ("", True)
    assert lead_view["questions-1"].qualification_mode == ""  # not even review
    assert views["prefilter"].status == "active"


def test_an_annotator_started_without_gold_has_no_feedback(project):
    annie = member(project, "annie")
    Standing.objects.create(project=project, user=annie, stage="prefilter", status=StandingStatus.ACTIVE, attempt=0)
    view = _views(project, annie)["prefilter"]
    assert (view.qualification_mode, view.has_feedback, view.attempts_left) == ("gold", False, 3)


def test_feedback_of_no_decided_set_reads_nothing(project, django_assert_num_queries):
    annie = member(project, "annie")
    control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=0)
    scored = control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
    running = Standing.objects.create(
        project=project, user=annie, stage="prefilter", status=StandingStatus.QUALIFYING, attempt=1
    )
    with django_assert_num_queries(0):
        assert qualification_feedback(project=project, user=annie, stage="prefilter", standing=running) == []
    running.status = StandingStatus.NOT_QUALIFIED
    with django_assert_num_queries(2):  # the results, and which items were of a second sample
        items = qualification_feedback(project=project, user=annie, stage="prefilter", standing=running)
        assert [(i.rico_id, i.question) for i in items] == [(scored.assignment.screen.rico_id, "")]


def test_a_second_sample_is_counted_in_the_set_the_annotator_sees(project):
    # given a set of 4 at 75% (one wrong allowed) with a second sample of 3, and gold for both
    project.qualification_items, project.qualification_threshold, project.qualification_extra_items = 4, 0.75, 3
    project.save()
    gold_prefilter(project, 8)
    annie = member(project, "annie")
    for body in (WRONG, WRONG, RIGHT, RIGHT):  # two wrong: one right item short
        work_prefilter(project, annie, body)
    # then the set goes on, and the home page says how far into the seven
    view = _views(project, annie)["prefilter"]
    assert view.status == StandingStatus.QUALIFYING
    assert view.why == "qualification set: 4 of 7 done"
    work_prefilter(project, annie, RIGHT)
    assert _views(project, annie)["prefilter"].why == "qualification set: 5 of 7 done"
    # and the three more decide it alone
    for _ in range(2):
        work_prefilter(project, annie, RIGHT)
    assert Standing.objects.get(user=annie).reason == "qualified with 3 of 3 more items (a second sample)"


def test_a_second_samples_items_show_whether_they_were_right_and_never_the_right_answer(project):
    # given a set of 4 at 75% with a second sample of 3: two wrong (one short), then the extra items,
    # one of them wrong again (the set fails): an account failing by one on purpose sees only 4 gold answers
    project.qualification_items, project.qualification_threshold, project.qualification_extra_items = 4, 0.75, 3
    project.save()
    gold_prefilter(project, 8)
    annie = member(project, "annie")
    served = [work_prefilter(project, annie, body) for body in (WRONG, RIGHT, WRONG, RIGHT, RIGHT, WRONG, RIGHT)]
    standing = Standing.objects.get(user=annie)
    assert (standing.status, standing.attempt) == (StandingStatus.NOT_QUALIFIED, 1)  # the set failed
    # the feedback of the decided set: the first four with the right answer, the three more without
    items = feedback_by_stage(project=project, user=annie)[0][2]
    assert [i.assignment_id for i in items] == [a.pk for a in served]
    assert [(i.correct, i.gold_hidden) for i in items] == [
        (False, False),
        (True, False),
        (False, False),
        (True, False),
        (True, True),
        (False, True),
        (True, True),
    ]
    assert all(i.gold_lines and i.given_lines for i in items[:4])
    assert items[0].why  # what differed, on a first-sample item
    assert all(i.gold_lines == [] and i.why == "" and i.given_lines for i in items[4:])
    # the history says the same, item by item
    rows = {row.id: row.control for row in my_work_history(project=project, user=annie)}
    for item in items:
        brief = rows[item.assignment_id]
        assert (brief["gold_hidden"], bool(brief["gold"]), bool(brief["gold_lines"])) == (
            item.gold_hidden,
            not item.gold_hidden,
            not item.gold_hidden,
        )
        assert brief["why"] == item.why and brief["correct"] == item.correct


def test_a_skipped_first_sample_item_does_not_shift_which_items_hide_their_right_answer(project):
    # given the same set, whose second item is skipped (it counts as wrong): one short again
    from pipeline.engine import assignment_skip

    project.qualification_items, project.qualification_threshold, project.qualification_extra_items = 4, 0.75, 3
    project.save()
    gold_prefilter(project, 8)
    annie = member(project, "annie")
    first = work_prefilter(project, annie, WRONG)
    skipped = assignment_next(project=project, user=annie, stage="prefilter")
    assignment_skip(assignment_id=skipped.pk, user=annie, reason="unclear")
    served = [first, skipped] + [work_prefilter(project, annie, RIGHT) for _ in range(5)]
    # then the first sample's four items (the skipped one among them) show their right answer, the
    # three extra items do not: the place in the attempt decides, not the count of results before
    items = feedback_by_stage(project=project, user=annie)[0][2]
    assert [i.assignment_id for i in items] == [a.pk for a in served]
    assert [i.gold_hidden for i in items] == [False, False, False, False, True, True, True]
    assert items[1].correct is False


def test_an_answers_item_shows_its_question_in_feedback_and_history(project, django_assert_num_queries):
    # given annie's decided set in the answers stage: one item on a question, right, its
    # feedback without a "why" (nothing differed)
    annie = member(project, "annie")
    [screen] = screens(project, 1)
    asked = answering_question(screen, text="What is the price?")
    result = control(
        project,
        annie,
        correct=True,
        purpose=Purpose.QUALIFICATION,
        attempt=1,
        item=gold(project, stage="answers", on=asked),
    )
    ControlResult.objects.filter(pk=result.pk).update(feedback={"given": RIGHT, "gold": RIGHT})
    standing = Standing.objects.create(
        project=project, user=annie, stage="answers", status=StandingStatus.NOT_QUALIFIED, attempt=1
    )

    # then the feedback names the question, read with the results (the results, the second samples)
    with django_assert_num_queries(2):
        [item] = qualification_feedback(project=project, user=annie, stage="answers", standing=standing)
        assert (item.rico_id, item.question, item.why) == (screen.rico_id, "What is the price?", "")
    # and so does the history row, read with the assignment (four queries, as with no question)
    with django_assert_num_queries(4):
        [row] = my_work_history(project=project, user=annie)
        assert (row.stage, row.rico_id, row.question) == ("answers", screen.rico_id, "What is the price?")
    assert (row.control["correct"], row.control["why"], row.control["gold_lines"]) == (
        True,
        "",
        [("VH out of sync", "no"), ("Non-English app", "no")],
    )


def test_figures_count_each_kind_of_fault_on_a_writers_questions(project):
    # given annie's four questions: one judged invalid, one not answerable, one flagged in pass 2
    # and judged invalid too, one with nothing against it; and bob, who wrote none
    annie, bob = member(project, "annie"), member(project, "bob")
    invalid, unanswerable, both, _fine = (question(project, author=annie) for _ in range(4))
    answer(invalid, bob, verdict=Verdict.INVALID)
    answer(unanswerable, bob, verdict=Verdict.NOT_ANSWERABLE)
    answer(both, bob, verdict=Verdict.INVALID)
    Question.objects.filter(pk=both.pk).update(flag_reason="counting")

    figures = my_work_figures(project=project, user=annie)

    # then each figure counts its own questions, a question with two faults once
    assert (
        figures.questions_written,
        figures.questions_flagged,
        figures.questions_flagged_pass2,
        figures.questions_faulted,
    ) == (4, 3, 1, 3)
    assert figures.invalid_rate == 0.75
    none = my_work_figures(project=project, user=bob)
    assert (none.questions_written, none.questions_flagged, none.questions_flagged_pass2, none.questions_faulted) == (
        0,
        0,
        0,
        0,
    )


def test_a_second_attempt_running_shows_the_first_sets_feedback(project):
    # given annie qualifying in attempt 2, after a failed first set
    annie = member(project, "annie")
    first = control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
    running = Standing.objects.create(
        project=project, user=annie, stage="prefilter", status=StandingStatus.QUALIFYING, attempt=2
    )

    # then the feedback is the first set's (the running one waits for its decision)
    items = qualification_feedback(project=project, user=annie, stage="prefilter", standing=running)
    assert [(i.assignment_id, i.attempt, i.correct) for i in items] == [(first.assignment_id, 1, False)]
    [(stage, _, listed)] = feedback_by_stage(project=project, user=annie)
    assert (stage.name, listed) == ("prefilter", items)


def test_a_site_admin_who_is_no_lead_is_never_gated(project):
    # given gold, and a site admin who is a plain annotator of the project, paused in pre-filtering
    gold_prefilter(project, 2)
    admin = member(project, "root")
    admin.is_superuser = True
    admin.save()
    Standing.objects.create(project=project, user=admin, stage="prefilter", status=StandingStatus.PAUSED)

    views = _views(project, admin)

    # then no stage gates them: not started, free to start, no qualification of any kind
    assert {(v.status, v.can_start, v.qualification_mode) for v in views.values()} == {("", True, "")}


def test_a_retry_is_offered_at_the_very_moment_the_cooldown_ends(project, monkeypatch):
    # given annie not qualified, her cooldown ending exactly now (a frozen clock)
    annie = member(project, "annie")
    now = timezone.now()
    Standing.objects.create(
        project=project,
        user=annie,
        stage="prefilter",
        status=StandingStatus.NOT_QUALIFIED,
        attempt=1,
        attempt_started_at=now - timedelta(hours=project.qualification_cooldown_hours),
        reason="1 of 2 right",
    )
    monkeypatch.setattr(timezone, "now", lambda: now)

    view = _views(project, annie)["prefilter"]

    # then she may start again, and the view names its stage
    assert (view.stage, view.label, view.status, view.retry_at, view.can_start) == (
        "prefilter",
        "Pre-filtering",
        "not_qualified",
        now,
        True,
    )


def test_figures_keep_nothing_of_leases_given_back(project):
    # given annie's one submitted item, and a released and an expired lease in the same stage
    annie = member(project, "annie")
    work(project, annie)
    work(project, annie, status=AssignmentStatus.RELEASED)
    work(project, annie, status=AssignmentStatus.EXPIRED)

    [counts] = my_work_figures(project=project, user=annie).per_stage

    # then the stage's counts hold the submitted item only, and no other figure
    assert vars(counts) == {"stage": "prefilter", "label": "Pre-filtering", "submitted": 1, "skipped": 0, "open": 0}
