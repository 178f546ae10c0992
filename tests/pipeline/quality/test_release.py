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
    release_quality_figures,
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


def control(project, user, *, at, correct=True, stage="answers", purpose=Purpose.CONTROL, reviewed=None):
    """A control item ``user`` did ``at`` minutes after T0 (``reviewed``: the submission a review
    stage's gold item shows)."""
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
        reviewed=reviewed,
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


def test_an_author_let_in_without_a_qualification_set_is_counted_apart(project):
    # given three active answerers: one let in without a set (no gold was servable nor coming when they
    # arrived) who still owes it, the others qualified (one of them after being let in so)
    ann, una, late = (member(project, n) for n in ("ann", "una", "late"))
    for user in (ann, una, late):
        Standing.objects.create(
            project=project, user=user, stage="answers", status=StandingStatus.ACTIVE, qualification_owed=user == una
        )
    for user in (ann, una, late):
        kept_answer(project, user, at=0)
    # then the manifest says whose work stands on no qualification
    found = stage_evidence(project=project)["answers"]["in_release"]["by_standing"]
    assert found["active"] == {"controlled": 0, "review_accepted": 0, "provisional": 2}
    assert found["unqualified"] == {"controlled": 0, "review_accepted": 0, "provisional": 1}


def test_withdrawn_items_by_cause(project):
    ann, lead = member(project, "ann"), member(project, "lead", role="lead")
    rule = QualityEvent.objects.create(
        project=project, user=ann, stage="answers", rule="agreement", status_after="paused"
    )
    failed = QualityEvent.objects.create(
        project=project, user=ann, stage="answers", rule="review", status_after="not_qualified"
    )
    by_lead = QualityEvent.objects.create(project=project, user=ann, stage="answers", rule="lead-pause", actor=lead)
    owed = QualityEvent.objects.create(
        project=project, user=ann, stage="answers", rule="qualification-failed", status_after="not_qualified"
    )
    # given answers taken out: rejected in review, withdrawn by a rule's pause (with and without
    # its event), by a not-qualified decision, by a lead's pause, by a failed set its author owed; and
    # decoys: an answer dropped by post-processing, another project's withdrawn answer
    kept_answer(project, ann, at=8, kept=False, drop_reason="withdrawn", withdrawn_by=owed)
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
        "owed-qualification-failed": 1,
        "lead-pause": 1,
    }
    assert found["questions-1"]["withdrawn"] == {
        "rule-pause": 0,
        "not-qualified-by-review": 1,
        "review-rejected": 0,
        "owed-qualification-failed": 0,
    }


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


def written(project, author, *, source="questions-1", state=QuestionState.KEPT, review_state="", **kw):
    """A question ``author`` wrote in ``source`` on a screen of its own (its writing assignment
    reviewed as ``review_state``; no assignment for a question without an author)."""
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    origin = None
    if author is not None:
        origin = Assignment.objects.create(
            project=screen.project,
            stage=source,
            screen=screen,
            annotator=author,
            status=AssignmentStatus.SUBMITTED,
            purpose=Purpose.WORK,
            lease_expires_at=T0,
            submitted_at=T0,
            review_state=review_state,
        )
    return Question.objects.create(
        screen=screen,
        author=author,
        origin=origin,
        source=source,
        position=0,
        text="What is it for?",
        state=state,
        **kw,
    )


def test_questions_count_in_the_stage_that_wrote_them(project):
    elsewhere = ProjectFactory(slug="elsewhere")
    ann, kim, lead = member(project, "ann"), member(project, "kim"), member(project, "lead", role="lead")
    # ann is active in pass 1, paused in the not-answerable stage (the project keeps her work) and
    # has no standing in pass 2; kim is qualifying in pass 2
    for user, stage, status in (
        (ann, "questions-1", StandingStatus.ACTIVE),
        (ann, "not-answerable", StandingStatus.PAUSED),
        (kim, "questions-2", StandingStatus.QUALIFYING),
    ):
        Standing.objects.create(project=project, user=user, stage=stage, status=status)
    control(project, ann, at=30)  # a passed control item of another stage vouches for no question
    rule = QualityEvent.objects.create(
        project=project, user=ann, stage="questions-1", rule="agreement", status_after="paused"
    )
    failed = QualityEvent.objects.create(
        project=project, user=ann, stage="questions-1", rule="review", status_after="not_qualified"
    )
    # pass 1 in the release: ann's set accepted in review, her set not reviewed yet, a lead's, one
    # without an author (from before quality control)
    written(project, ann, review_state="accepted")
    written(project, ann, review_state="sampled")
    written(project, lead)
    written(project, None)
    # pass 1 taken out: rejected in review, withdrawn by a rule's pause (with and without its
    # event), by a failed qualification
    dropped = {"state": QuestionState.DROPPED}
    written(project, ann, drop_reason="review-rejected", **dropped)
    written(project, ann, drop_reason="author-paused", withdrawn_by=rule, **dropped)
    written(project, ann, drop_reason="author-paused", **dropped)
    written(project, ann, drop_reason="author-not-qualified", withdrawn_by=failed, **dropped)
    # pass 2: kim's set accepted in review, ann's; one withdrawn by a rule's pause
    written(project, kim, source="questions-2", review_state="accepted")
    written(project, ann, source="questions-2")
    written(project, kim, source="questions-2", drop_reason="author-paused", **dropped)
    # the not-answerable stage: ann's question kept while she is paused, one rejected in review
    written(project, ann, source="not-answerable")
    written(project, ann, source="not-answerable", drop_reason="review-rejected", **dropped)
    # decoys: a question not decided yet, one post-processing dropped, one dropped for its app, an
    # imported one, another project's kept and withdrawn ones
    written(project, ann, state=QuestionState.ANSWERED)
    written(project, ann, drop_reason="invalid", **dropped)
    written(project, ann, drop_reason="non-english-app", **dropped)
    written(project, None, source="imported")
    written(elsewhere, ann, review_state="accepted")
    written(elsewhere, ann, drop_reason="author-paused", **dropped)
    found = stage_evidence(project=project)
    counts = {"lead": 0, "no_standing": 0}
    assert found["questions-1"] == {
        "items": "questions",
        "in_release": {
            "total": 4,
            "by_standing": {
                "active": {"controlled": 0, "review_accepted": 1, "provisional": 1},
                "lead": 1,
                "no_standing": 1,
            },
        },
        "withdrawn": {
            "rule-pause": 2,
            "not-qualified-by-review": 1,
            "review-rejected": 1,
            "owed-qualification-failed": 0,
        },
    }
    assert found["questions-2"] == {
        "items": "questions",
        "in_release": {
            "total": 2,
            "by_standing": {
                **counts,
                "no_standing": 1,
                "qualifying": {"controlled": 0, "review_accepted": 1, "provisional": 0},
            },
        },
        "withdrawn": {
            "rule-pause": 1,
            "not-qualified-by-review": 0,
            "review-rejected": 0,
            "owed-qualification-failed": 0,
        },
    }
    assert found["not-answerable"] == {
        "items": "questions",
        "in_release": {
            "total": 1,
            "by_standing": {**counts, "paused": {"controlled": 0, "review_accepted": 0, "provisional": 1}},
        },
        "withdrawn": {
            "rule-pause": 0,
            "not-qualified-by-review": 0,
            "review-rejected": 1,
            "owed-qualification-failed": 0,
        },
    }


def submitted(project, user, stage):
    """``user``'s submission in a writing stage, on a screen of its own."""
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    return Assignment.objects.create(
        project=project,
        stage=stage,
        screen=screen,
        annotator=user,
        status=AssignmentStatus.SUBMITTED,
        purpose=Purpose.WORK,
        lease_expires_at=T0,
        submitted_at=T0,
    )


def reviewed(submission, reviewer, *, at=0, verdict="accepted", withdrawn_by=None, withdrawn=False, second=False):
    """``reviewer``'s review of ``submission``, submitted ``at`` minutes after T0: standing, a second
    review, or withdrawn by quality control."""
    when = T0 + timedelta(minutes=at)
    given = Assignment.objects.create(
        project=submission.project,
        stage="review",
        screen=submission.screen,
        annotator=reviewer,
        reviewed=submission,
        status=AssignmentStatus.SUBMITTED,
        purpose=Purpose.WORK,
        lease_expires_at=when,
        submitted_at=when,
    )
    return Review.objects.create(
        reviewed=None if withdrawn or second else submission,
        second_of=submission if second else None,
        withdrawn_from=submission if withdrawn else None,
        withdrawn_reason="withdrawn" if withdrawn else "",
        withdrawn_by=withdrawn_by,
        assignment=given,
        reviewer=reviewer,
        verdict=verdict,
        reason="" if verdict == "accepted" else "duplicate",
    )


def test_reviews_in_the_quality_section(project):
    project.prefilter_judgments = 1  # one judge a screen: no Dawid-Skene estimate
    project.save()
    elsewhere = ProjectFactory(slug="elsewhere")
    rev, lead, w = member(project, "rev"), member(project, "lead", role="lead"), member(project, "w")
    Standing.objects.create(project=project, user=rev, stage="review", status=StandingStatus.ACTIVE)
    rule = QualityEvent.objects.create(
        project=project, user=rev, stage="review", rule="agreement", status_after="paused"
    )
    AppFactory(project=project, non_english=True, language_set_by="rule")  # no app marked by a lead
    # rev reviews a pass-1 set (accepted) at 10 minutes, passes a control item of the review stage
    # at 15, reviews a pass-2 set (rejected) at 20; a lead reviews a not-answerable question
    reviewed(submitted(project, w, "questions-1"), rev, at=10)
    control(project, rev, at=15, stage="review", reviewed=submitted(project, w, "questions-1"))
    reviewed(submitted(project, w, "questions-2"), rev, at=20, verdict="rejected")
    reviewed(submitted(project, w, "not-answerable"), lead, at=30)
    # withdrawn reviews (by the rule's pause, with and without its event) and a second review
    # count in no stage; neither do another project's reviews
    for event in (rule, None):
        reviewed(submitted(project, w, "questions-1"), rev, verdict="rejected", withdrawn=True, withdrawn_by=event)
    reviewed(submitted(project, w, "questions-2"), rev, second=True)
    for withdrawn in (False, True):
        reviewed(submitted(elsewhere, w, "questions-1"), rev, verdict="rejected", withdrawn=withdrawn)
    figures = release_quality_figures(project=project)
    assert figures["stages"]["review"] == {
        "items": "reviews",
        "in_release": {
            "total": 3,
            "by_standing": {
                "active": {"controlled": 1, "review_accepted": 0, "provisional": 1},
                "lead": 1,
                "no_standing": 0,
            },
            "passed_controls_after": {"0": 1, "1": 1, "2": 0, "3+": 0},
        },
        "withdrawn": {
            "rule-pause": 2,
            "not-qualified-by-review": 0,
            "review-rejected": 0,
            "owed-qualification-failed": 0,
        },
    }
    one = {"annotators": 1, "min": 1.0, "q1": 1.0, "median": 1.0, "q3": 1.0, "max": 1.0}
    assert {part: found for part, found in figures.items() if part != "stages"} == {
        "app_language": {"apps_non_english": {"rule": 1, "lead": 0}, "screens_excluded": 0, "questions_dropped": 0},
        "control_accuracy": {"review": one},
        "reviews": {
            "not-answerable": {"done": 1, "rejected": 0},
            "questions-1": {"done": 1, "rejected": 0},
            "questions-2": {"done": 1, "rejected": 1},
        },
        "prefilter_judges": None,
    }


def test_control_accuracy_is_a_distribution_per_stage(project):
    ann, bob, cy = (member(project, n) for n in ("ann", "bob", "cy"))
    # answers: ann 1 of 2, bob 2 of 2, cy 3 of 4; pre-filtering: ann 0 of 1, bob 1 of 1
    for user, stage, results in (
        (ann, "answers", (True, False)),
        (bob, "answers", (True, True)),
        (cy, "answers", (True, True, True, False)),
        (ann, "prefilter", (False,)),
        (bob, "prefilter", (True,)),
    ):
        for at, correct in enumerate(results):
            control(project, user, at=at, correct=correct, stage=stage)
    assert control_accuracy(project=project) == {
        "answers": {"annotators": 3, "min": 0.5, "q1": 0.625, "median": 0.75, "q3": 0.875, "max": 1.0},
        "prefilter": {"annotators": 2, "min": 0.0, "q1": 0.25, "median": 0.5, "q3": 0.75, "max": 1.0},
    }


def test_reinstated_is_read_from_the_last_decision_in_time(project):
    rex, ann = member(project, "rex"), member(project, "ann")
    for user in (rex, ann):
        Standing.objects.create(project=project, user=user, stage="answers", status=StandingStatus.ACTIVE)
        kept_answer(project, user, at=0)
    # rex: a lead's reinstatement at 10 minutes, recorded before a rule's decision dated 5 minutes
    # (the rule's transaction committed last): the reinstatement is the last word
    reinstate = QualityEvent.objects.create(project=project, user=rex, stage="answers", rule="lead-reinstate")
    rule = QualityEvent.objects.create(project=project, user=rex, stage="answers", rule="agreement")
    for event, at in ((reinstate, 10), (rule, 5)):
        QualityEvent.objects.filter(pk=event.pk).update(created_at=T0 + timedelta(minutes=at))
    # ann: a reinstatement and a rule's decision at the same instant: the later recorded (the
    # higher id) is the last word, whatever order the rows come in
    later = QualityEvent.objects.latest("pk").pk + 100
    for pk, rule in ((later + 2, "agreement"), (later + 1, "lead-reinstate")):
        QualityEvent.objects.create(pk=pk, project=project, user=ann, stage="answers", rule=rule)
    QualityEvent.objects.filter(user=ann).update(created_at=T0 + timedelta(minutes=20))
    found = stage_evidence(project=project)["answers"]["in_release"]["by_standing"]
    assert found == {
        "active": {"controlled": 0, "review_accepted": 0, "provisional": 1},
        "lead": 0,
        "no_standing": 0,
        "reinstated": {"controlled": 0, "review_accepted": 0, "provisional": 1},
    }
