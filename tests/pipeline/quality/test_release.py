"""pipeline/quality/release.py called directly: the release manifest's quality section, bucket by bucket
(standing and evidence, withdrawal causes, control accuracy, withdrawn evidence, app-language drops, reviews)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    PrefilterJudgment,
    Purpose,
    QualityEvent,
    Question,
    QuestionState,
    Review,
    Screen,
    ScreenState,
    Standing,
    StandingStatus,
)
from pipeline.quality.release import (
    app_language_drops,
    control_accuracy,
    released_on_withdrawn_evidence,
    reviews_done,
    stage_evidence,
)
from tests.factories import AppFactory, MembershipFactory, ProjectFactory
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


T0 = timezone.now() - timedelta(days=1)


def kept_answer(project, user, *, at=None, review_state="", kept=True, state=QuestionState.KEPT, **kw):
    """An answer of ``user`` (an assignment submitted ``at`` minutes after T0; none when ``at`` is None)."""
    (screen,) = screens(project, 1)
    question = answering_question(screen, text="What is it?")
    Question.objects.filter(pk=question.pk).update(state=state)
    assignment = None
    if at is not None:
        when = T0 + timedelta(minutes=at)
        assignment = Assignment.objects.create(
            project=project,
            stage="answers",
            screen=screen,
            question=question,
            annotator=user,
            status=AssignmentStatus.SUBMITTED,
            purpose=Purpose.WORK,
            lease_expires_at=when,
            submitted_at=when,
            review_state=review_state,
        )
    return Answer.objects.create(
        assignment=assignment,
        question=question,
        annotator=user,
        verdict="answered",
        question_text="Q?",
        kept=kept,
        **kw,
    )


def control(project, user, *, at, correct=True, stage="answers", purpose=Purpose.CONTROL):
    (screen,) = screens(project, 1)
    question = answering_question(screen, text="Gold?") if stage == "answers" else None
    gold = GoldItem.objects.create(project=project, stage=stage, screen=screen, question=question, answer={})
    when = T0 + timedelta(minutes=at)
    assignment = Assignment.objects.create(
        project=project,
        stage=stage,
        screen=screen,
        question=question,
        annotator=user,
        status=AssignmentStatus.SUBMITTED,
        purpose=purpose,
        gold=gold,
        lease_expires_at=when,
        submitted_at=when,
    )
    result = ControlResult.objects.create(
        assignment=assignment, gold=gold, project=project, user=user, stage=stage, purpose=purpose, correct=correct
    )
    ControlResult.objects.filter(pk=result.pk).update(created_at=when)
    return result


def test_in_release_by_standing_and_evidence(project):
    elsewhere = ProjectFactory(slug="elsewhere")
    lead, root, ann, rex, kim, nob = (member(project, n) for n in ("lead", "root", "ann", "rex", "kim", "nob"))
    lead.memberships.update(role="lead")
    root.is_superuser = True
    root.save()
    MembershipFactory(project=elsewhere, user=nob, role="lead")  # a lead elsewhere only
    for user, status in ((ann, StandingStatus.ACTIVE), (rex, StandingStatus.ACTIVE), (kim, StandingStatus.PAUSED)):
        Standing.objects.create(project=project, user=user, stage="answers", status=status)
    Standing.objects.create(project=elsewhere, user=nob, stage="answers", status=StandingStatus.ACTIVE)
    Standing.objects.create(project=project, user=nob, stage="prefilter", status=StandingStatus.ACTIVE)
    # rex was paused by a rule, then reinstated by a lead; ann was reinstated, then a rule acted again;
    # kim's last event is a reinstatement but she is paused now
    for user, rules in ((rex, ("control-accuracy", "lead-reinstate")), (ann, ("lead-reinstate", "agreement"))):
        for rule in rules:
            QualityEvent.objects.create(project=project, user=user, stage="answers", rule=rule)
    QualityEvent.objects.create(project=project, user=kim, stage="answers", rule="lead-reinstate")
    QualityEvent.objects.create(project=elsewhere, user=ann, stage="answers", rule="lead-reinstate")
    # ann passed control items at 10, 20 and 30 minutes; failed one at 40; passed a qualification
    # item, a pre-filtering control item and one in another project at 50
    for at in (10, 20, 30):
        control(project, ann, at=at)
    control(project, ann, at=40, correct=False)
    control(project, ann, at=50, purpose=Purpose.QUALIFICATION)
    control(project, ann, at=50, stage="prefilter")
    control(elsewhere, ann, at=50)
    # ann's answers: before them all, at the first one (not after it), between, after all (one
    # accepted in review, one not), and one with no submission time (every control counts)
    for at, review in ((0, ""), (10, ""), (25, ""), (35, "accepted"), (36, "sampled"), (None, "")):
        kept_answer(project, ann, at=at, review_state=review)
    kept_answer(project, rex, at=0, review_state="accepted")
    kept_answer(project, kim, at=0)
    for user in (lead, root, nob, None):
        kept_answer(project, user, at=None)
    # decoys: an answer not kept, one of a question not kept, another project's
    kept_answer(project, ann, at=1, kept=False, drop_reason="disagrees")
    kept_answer(project, ann, at=2, state=QuestionState.ANSWERED)
    kept_answer(elsewhere, ann, at=3)
    found = stage_evidence(project=project)["answers"]["in_release"]
    assert found == {
        "total": 12,
        "by_standing": {
            "active": {"controlled": 4, "review_accepted": 1, "provisional": 1},
            "lead": 2,
            "no_standing": 2,
            "paused": {"controlled": 0, "review_accepted": 0, "provisional": 1},
            "reinstated": {"controlled": 0, "review_accepted": 1, "provisional": 0},
        },
        "passed_controls_after": {"0": 4, "1": 1, "2": 1, "3+": 2},
    }
    assert list(found["by_standing"]) == ["active", "lead", "no_standing", "paused", "reinstated"]


def test_withdrawn_items_by_cause(project):
    ann, lead = member(project, "ann"), member(project, "lead", role="lead")
    rule = QualityEvent.objects.create(
        project=project, user=ann, stage="answers", rule="agreement", status_after="paused"
    )
    failed = QualityEvent.objects.create(
        project=project, user=ann, stage="answers", rule="review", status_after="not_qualified"
    )
    by_lead = QualityEvent.objects.create(project=project, user=ann, stage="answers", rule="lead-pause", actor=lead)
    # given answers taken out: rejected in review, withdrawn by a rule's pause (with and without
    # its event), by a not-qualified decision, by a lead's pause; and decoys: an answer dropped by
    # post-processing, another project's withdrawn answer
    kept_answer(project, ann, at=1, kept=False, drop_reason="review-rejected", withdrawn_by=failed)
    kept_answer(project, ann, at=2, kept=False, drop_reason="withdrawn", withdrawn_by=rule)
    kept_answer(project, ann, at=3, kept=False, drop_reason="withdrawn")
    kept_answer(project, ann, at=4, kept=False, drop_reason="withdrawn", withdrawn_by=failed)
    kept_answer(project, ann, at=5, kept=False, drop_reason="withdrawn", withdrawn_by=by_lead)
    kept_answer(project, ann, at=6, kept=False, drop_reason="disagrees")
    kept_answer(ProjectFactory(slug="elsewhere"), ann, at=7, kept=False, drop_reason="withdrawn")
    # and a question of a writer who did not qualify (no event: the reason says it)
    (screen,) = screens(project, 1)
    written = answering_question(screen, text="Why?")
    Question.objects.filter(pk=written.pk).update(state=QuestionState.DROPPED, drop_reason="author-not-qualified")
    found = stage_evidence(project=project)
    assert found["answers"]["withdrawn"] == {
        "rule-pause": 2,
        "not-qualified-by-review": 1,
        "review-rejected": 1,
        "lead-pause": 1,
    }
    assert found["questions-1"]["withdrawn"] == {"rule-pause": 0, "not-qualified-by-review": 1, "review-rejected": 0}


def test_control_accuracy_of_one_annotator(project):
    ann = member(project, "ann")
    for at, correct in ((1, True), (2, True), (3, False)):
        control(project, ann, at=at, correct=correct)
    control(project, ann, at=4, correct=False, purpose=Purpose.QUALIFICATION)
    control(ProjectFactory(slug="elsewhere"), ann, at=5, correct=False)
    one = {"annotators": 1, "min": 0.6667, "q1": 0.6667, "median": 0.6667, "q3": 0.6667, "max": 0.6667}
    assert control_accuracy(project=project) == {"answers": one}


def judgment(screen, user, *, withdrawn=""):
    assignment = Assignment.objects.create(
        project=screen.project,
        stage="prefilter",
        screen=screen,
        annotator=user,
        status=AssignmentStatus.SUBMITTED,
        purpose=Purpose.WORK,
        lease_expires_at=T0,
        submitted_at=T0,
    )
    return PrefilterJudgment.objects.create(
        assignment=assignment,
        screen=screen,
        annotator=user,
        non_english_app=False,
        vh_out_of_sync=False,
        withdrawn_reason=withdrawn,
    )


def test_released_on_withdrawn_evidence_counts_screens_short_of_judgments(project):
    project.prefilter_judgments = 2
    project.save()
    a, b, c = member(project, "a"), member(project, "b"), member(project, "c")
    short, waiting, fine, empty = screens(project, 4, state=ScreenState.ANSWERING, split="train")
    Screen.objects.filter(pk=waiting.pk).update(state=ScreenState.QUESTIONS_1)
    # given: one withdrawn and one counting judgment (short), the same on a screen still in the
    # question passes, one counting judgment and none withdrawn, and the short case on a screen
    # without kept questions
    for screen, judges in ((short, 2), (waiting, 2), (empty, 2)):
        judgment(screen, a, withdrawn="withdrawn")
        for user in (b, c)[: judges - 1]:
            judgment(screen, user)
    judgment(fine, b)
    for screen in (short, waiting, fine):
        for k in range(2):
            q = answering_question(screen, text=f"Question {k}?")
            Question.objects.filter(pk=q.pk).update(state=QuestionState.KEPT)
    answering_question(short, text="Still waiting?")
    answering_question(empty, text="Not kept?")
    elsewhere = ProjectFactory(slug="elsewhere", prefilter_judgments=2)
    (far,) = screens(elsewhere, 1, state=ScreenState.ANSWERING, split="train")
    judgment(far, a, withdrawn="withdrawn")
    Question.objects.filter(pk=answering_question(far, text="Far?").pk).update(state=QuestionState.KEPT)
    # then the short screen and its two kept questions
    assert released_on_withdrawn_evidence(project=project) == {"screens": 1, "questions": 2}


def test_app_language_drops_and_reviews_done(project):
    elsewhere = ProjectFactory(slug="elsewhere")
    for owner, non_english, by in (
        (project, True, "rule"),
        (project, True, "lead"),
        (project, True, "lead"),
        (project, False, "lead"),
        (elsewhere, True, "rule"),
    ):
        AppFactory(project=owner, non_english=non_english, language_set_by=by)
    # screens excluded for their app (one of them before its pre-filtering), for another reason, elsewhere
    for owner, reason, came_from in (
        (project, "non_english", "answering"),
        (project, "non_english", "prefilter"),
        (project, "non_english", ""),
        (project, "vh_out_of_sync", "prefilter"),
        (elsewhere, "non_english", "answering"),
    ):
        (screen,) = screens(owner, 1)
        Screen.objects.filter(pk=screen.pk).update(
            state=ScreenState.EXCLUDED, exclusion_reason=reason, excluded_from=came_from
        )
    for owner, state, reason in (
        (project, QuestionState.DROPPED, "non-english-app"),
        (project, QuestionState.DROPPED, "invalid"),
        (elsewhere, QuestionState.DROPPED, "non-english-app"),
    ):
        q = answering_question(screens(owner, 1)[0], text="Why?")
        Question.objects.filter(pk=q.pk).update(state=state, drop_reason=reason)
    assert app_language_drops(project=project) == {
        "apps_non_english": {"rule": 1, "lead": 2},
        "screens_excluded": 2,
        "questions_dropped": 1,
    }
    # reviews standing per reviewed stage: done and rejected; a withdrawn review and another
    # project's review are not counted
    reviewer, writer = member(project, "rev"), member(project, "w")
    for owner, stage, verdict, withdrawn in (
        (project, "questions-1", "accepted", False),
        (project, "questions-1", "rejected", False),
        (project, "questions-1", "rejected", True),
        (project, "not-answerable", "rejected", False),
        (elsewhere, "questions-1", "rejected", False),
    ):
        (screen,) = screens(owner, 1)
        done = Assignment.objects.create(
            project=owner,
            stage=stage,
            screen=screen,
            annotator=writer,
            status=AssignmentStatus.SUBMITTED,
            purpose=Purpose.WORK,
            lease_expires_at=T0,
            submitted_at=T0,
        )
        Review.objects.create(
            reviewed=None if withdrawn else done,
            withdrawn_from=done if withdrawn else None,
            reviewer=reviewer,
            verdict=verdict,
            reason="" if verdict == "accepted" else "duplicate",
            withdrawn_reason="withdrawn" if withdrawn else "",
        )
    assert reviews_done(project=project) == {
        "not-answerable": {"done": 1, "rejected": 1},
        "questions-1": {"done": 2, "rejected": 1},
    }
    assert list(reviews_done(project=project)) == ["not-answerable", "questions-1"]
