"""The review stage (``pipeline/stages/review.py``): its queue and who it is open to (the author never,
the first reviewer never the second), the submit body's rules, what a verdict does to the reviewed
submission (double review's second verdict decides nothing), the payload, gold reviews' scoring and
pick rules, a stopped reviewer's reviews withdrawn and brought back, the page helpers and ``pending``.

Submissions and review leases are mostly rows made here (each test's decoys are one row away from what
it offers); the engine (``assignment_next`` / ``assignment_submit``) where that is how it is reached."""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.db import compiled
from annotation.draws import secret_draw
from annotation.exceptions import ApplicationError, ConflictError, PermissionDeniedError
from annotation.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    Membership,
    Purpose,
    QualityEvent,
    Question,
    QuestionState,
    Review,
    ReviewState,
    Screen,
    ScreenState,
)
from pipeline.engine import assignment_next, assignment_submit
from pipeline.quality import gold as gold_module
from pipeline.quality.gold import gold_pick
from pipeline.stages.registry import stage_get
from pipeline.stages.review import ReviewStage, _double_drawn
from pipeline.stages.signals import review_recorded, reviews_withdrawn
from tests.factories import ProjectFactory, UserFactory
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db

ACCEPT = {"verdict": "accepted", "reason": "", "comment": ""}
REJECT = {"verdict": "rejected", "reason": "counting", "comment": "Counting is not allowed."}
QUESTION_REASONS = (
    "not-natural, not-on-screen, counting, arithmetic, comparison, ads, long-paragraph, yes-no, duplicate"
)
ANSWER_REASONS = "wrong-element, missing-element, order, text, box, full-answer, verdict, question-edit"


@pytest.fixture
def stage() -> ReviewStage:
    found = stage_get("review")
    assert isinstance(found, ReviewStage)
    return found


@pytest.fixture(autouse=True)
def _claims_compiled_afresh():
    """Every test compiles the review claim and its fresh re-check itself (``annotation.db.compiled``
    keeps a statement per process: a cached one runs none of ``queue``)."""
    compiled.forget(("first", ("claim", "review")))
    compiled.forget(("first", ("exists", ("still-open", "review"))))


@pytest.fixture
def sent():
    """What the review stage signalled: ``recorded`` as ``(sender, reviewed id, now)``, ``withdrawn`` as
    ``(sender, [(reviewed id, review time, project loaded with it)], now)``."""
    got: dict[str, list[Any]] = {"recorded": [], "withdrawn": []}

    def on_recorded(sender: Any, **kw: Any) -> None:
        got["recorded"].append((sender, kw["reviewed"].pk, kw["now"]))

    def on_withdrawn(sender: Any, **kw: Any) -> None:
        rows = [(a.pk, at, "project" in a._state.fields_cache) for a, at in kw["withdrawn"]]
        got["withdrawn"].append((sender, rows, kw["now"]))

    review_recorded.connect(on_recorded, weak=False, dispatch_uid="test-review-recorded")
    reviews_withdrawn.connect(on_withdrawn, weak=False, dispatch_uid="test-reviews-withdrawn")
    try:
        yield got
    finally:
        review_recorded.disconnect(dispatch_uid="test-review-recorded")
        reviews_withdrawn.disconnect(dispatch_uid="test-reviews-withdrawn")


# --- rows ----------------------------------------------------------------------------------------


def configure(project: Any, **values: Any) -> None:
    for name, value in values.items():
        setattr(project, name, value)
    project.save(update_fields=list(values))


def submission(
    project: Any,
    author: Any,
    *,
    stage: str = "questions-1",
    state: str = ReviewState.SAMPLED,
    status: str = AssignmentStatus.SUBMITTED,
    double: bool = False,
    body: dict[str, Any] | None = None,
    question: Question | None = None,
) -> Assignment:
    """A submitted assignment of ``stage`` by ``author`` on a screen of its own, ``state`` with review."""
    screen = question.screen if question is not None else screens(project, 1, state=ScreenState.QUESTIONS_2)[0]
    now = timezone.now()
    return Assignment.objects.create(
        project=project,
        screen=screen,
        question=question,
        stage=stage,
        annotator=author,
        status=status,
        lease_expires_at=now,
        submitted_at=now if status == AssignmentStatus.SUBMITTED else None,
        review_state=state,
        review_double=double,
        submission=body if body is not None else {"questions": ["What does label 1 say?"]},
    )


def review_lease(
    reviewed: Assignment,
    user: Any,
    *,
    status: str = AssignmentStatus.LEASED,
    expires: Any = None,
    purpose: str = Purpose.WORK,
    gold: GoldItem | None = None,
) -> Assignment:
    """A review assignment of ``reviewed`` held (or given back, or submitted) by ``user``."""
    now = timezone.now()
    return Assignment.objects.create(
        project=reviewed.project,
        screen_id=reviewed.screen_id,
        stage="review",
        annotator=user,
        status=status,
        lease_expires_at=expires or now + timedelta(minutes=30),
        submitted_at=now if status == AssignmentStatus.SUBMITTED else None,
        reviewed=reviewed,
        purpose=purpose,
        gold=gold,
    )


def first_review(reviewed: Assignment, user: Any, verdict: str = "accepted", reason: str = "") -> Review:
    """``user``'s deciding review of ``reviewed`` (its state set to the verdict)."""
    lease = review_lease(reviewed, user, status=AssignmentStatus.SUBMITTED)
    made = Review.objects.create(reviewed=reviewed, assignment=lease, reviewer=user, verdict=verdict, reason=reason)
    Assignment.objects.filter(pk=reviewed.pk).update(review_state=verdict)
    return made


def second_review(reviewed: Assignment, user: Any, verdict: str = "accepted", *, withdrawn_by: Any = None) -> Review:
    """``user``'s second review of ``reviewed`` (double review); ``withdrawn_by``: withdrawn by that event."""
    lease = review_lease(reviewed, user, status=AssignmentStatus.SUBMITTED)
    reason = "" if verdict == "accepted" else "counting"
    if withdrawn_by is None:
        return Review.objects.create(
            second_of=reviewed, assignment=lease, reviewer=user, verdict=verdict, reason=reason
        )
    return Review.objects.create(
        second_of=reviewed,
        withdrawn_from=reviewed,
        withdrawn_reason="withdrawn",
        withdrawn_by=withdrawn_by,
        assignment=lease,
        reviewer=user,
        verdict=verdict,
        reason=reason,
    )


def drafted(reviewed: Assignment, *texts: str) -> list[Question]:
    """Questions ``reviewed`` wrote (a pass-1 set), waiting for pass 2."""
    return [
        Question.objects.create(
            screen_id=reviewed.screen_id,
            author_id=reviewed.annotator_id,
            origin=reviewed,
            source="questions-1",
            position=n,
            text=text,
            state=QuestionState.DRAFTING,
        )
        for n, text in enumerate(texts)
    ]


def pause_event(project: Any, user: Any) -> QualityEvent:
    return QualityEvent.objects.create(
        project=project,
        user=user,
        stage="review",
        rule="control-accuracy",
        status_before="active",
        status_after="paused",
    )


def fresh(assignment: Assignment) -> Assignment:
    return Assignment.objects.get(pk=assignment.pk)


def ids(queryset: Any) -> list[int]:
    return [a.pk for a in queryset]


# --- access --------------------------------------------------------------------------------------


def test_reviewers_leads_and_site_admins_review_and_annotators_are_refused(project, stage):
    # given a reviewer, a lead, an annotator of the project, and a site admin who is no member
    people = {role: member(project, role, role=role) for role in ("reviewer", "lead", "annotator")}
    admin = UserFactory(username="root", is_superuser=True)
    # then reviewers, leads and the site admin (no membership) get in
    for role in ("reviewer", "lead"):
        stage.check_access(user=people[role], membership=Membership.objects.get(user=people[role]))
    stage.check_access(user=admin, membership=None)
    # and an annotator, or a user without a membership, is refused with the rule's words
    for user, membership in (
        (people["annotator"], Membership.objects.get(user=people["annotator"])),
        (people["reviewer"], None),
    ):
        with pytest.raises(PermissionDeniedError) as refused:
            stage.check_access(user=user, membership=membership)
        assert refused.value.message == "Only the project's reviewers and leads review work."


# --- the queue -----------------------------------------------------------------------------------


def test_the_queue_offers_the_projects_sampled_submissions_oldest_first_but_never_the_callers_own(project, stage):
    # given submissions waiting for review, and decoys: the caller's own, one not sampled, one decided,
    # a lease still open (sampled: nothing submitted), and another project's
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    waiting = [submission(project, wes) for _ in range(3)]
    submission(project, rita)
    submission(project, wes, state=ReviewState.NONE)
    submission(project, wes, state=ReviewState.ACCEPTED)
    submission(project, wes, status=AssignmentStatus.LEASED)
    other = ProjectFactory(slug="other")
    submission(other, member(other, "olga"))
    # then the queue is the three, in id order
    assert ids(stage.queue(project=project, user=rita, now=timezone.now())) == [w.pk for w in waiting]


def test_the_queue_leaves_out_what_another_reviewer_holds_a_live_lease_on(project, stage):
    # given five submissions: one leased by another reviewer until after now (taken), one whose lease
    # runs out exactly now, one given back, one held as a gold review (a control lease), one free
    rita, bob, wes = (
        member(project, "rita", role="reviewer"),
        member(project, "bob", role="reviewer"),
        member(project, "wes"),
    )
    now = timezone.now()
    held, ran_out, given_back, as_gold, free = (submission(project, wes) for _ in range(5))
    review_lease(held, bob, expires=now + timedelta(microseconds=1))
    review_lease(ran_out, bob, expires=now)
    review_lease(given_back, bob, status=AssignmentStatus.RELEASED)
    gold = GoldItem.objects.create(
        project=project, stage="review", screen=as_gold.screen, answer=ACCEPT, origin=as_gold
    )
    review_lease(as_gold, bob, purpose=Purpose.CONTROL, gold=gold)
    # then everything but the held one is offered
    assert ids(stage.queue(project=project, user=rita, now=now)) == [ran_out.pk, given_back.pk, as_gold.pk, free.pk]


def test_the_queue_never_offers_again_what_the_caller_skipped_and_still_offers_what_they_gave_back(project, stage):
    rita, bob, wes = (
        member(project, "rita", role="reviewer"),
        member(project, "bob", role="reviewer"),
        member(project, "wes"),
    )
    # given a submission rita skipped, one she gave back, and one bob skipped
    skipped, given_back, skipped_by_bob = (submission(project, wes) for _ in range(3))
    review_lease(skipped, rita, status=AssignmentStatus.SKIPPED)
    review_lease(given_back, rita, status=AssignmentStatus.RELEASED)
    review_lease(skipped_by_bob, bob, status=AssignmentStatus.SKIPPED)
    # then her queue has the two others
    assert ids(stage.queue(project=project, user=rita, now=timezone.now())) == [given_back.pk, skipped_by_bob.pk]


def test_the_queue_offers_decided_submissions_waiting_for_their_second_review(project, stage):
    # given decided submissions: two sampled for double review (accepted, rejected) with no second
    # review, one whose second review was withdrawn, and decoys: one whose second review stands, one
    # decided and not sampled for it, one marked for it but never sampled for review
    ann, bob, lead, wes = (
        member(project, n, role=r)
        for n, r in (("ann", "reviewer"), ("bob", "reviewer"), ("lead", "lead"), ("wes", "annotator"))
    )
    accepted = submission(project, wes, double=True)
    first_review(accepted, ann)
    rejected = submission(project, wes, double=True)
    first_review(rejected, ann, "rejected", "counting")
    second_gone = submission(project, wes, double=True)
    first_review(second_gone, ann)
    second_review(second_gone, lead, withdrawn_by=pause_event(project, lead))
    seconded = submission(project, wes, double=True)
    first_review(seconded, ann)
    second_review(seconded, lead)
    single = submission(project, wes)
    first_review(single, ann)
    submission(project, wes, state=ReviewState.NONE, double=True)
    # then bob gets the three waiting for a second review
    assert ids(stage.queue(project=project, user=bob, now=timezone.now())) == [accepted.pk, rejected.pk, second_gone.pk]
    # and their first reviewer none of them (they reviewed each), the lead only the two they never had
    assert ids(stage.queue(project=project, user=ann, now=timezone.now())) == []
    assert ids(stage.queue(project=project, user=lead, now=timezone.now())) == [accepted.pk, rejected.pk]


# --- open to -------------------------------------------------------------------------------------


def test_a_sampled_submission_is_open_unless_another_reviewer_holds_a_live_lease(project, stage):
    rita, bob, wes = (
        member(project, "rita", role="reviewer"),
        member(project, "bob", role="reviewer"),
        member(project, "wes"),
    )
    now = timezone.now()
    reviewed = submission(project, wes)
    # free: open to a reviewer, never to its author
    assert stage.open_to(unit=reviewed, user=rita, now=now) is True
    assert stage.open_to(unit=reviewed, user=wes, now=now) is False
    # a lease whose time ran out exactly now, or given back, or a gold review's: still open
    review_lease(reviewed, bob, expires=now)
    Assignment.objects.filter(reviewed=reviewed).update(status=AssignmentStatus.RELEASED)
    review_lease(reviewed, bob, expires=now)
    gold = GoldItem.objects.create(
        project=project, stage="review", screen=reviewed.screen, answer=ACCEPT, origin=reviewed
    )
    review_lease(reviewed, bob, purpose=Purpose.CONTROL, gold=gold)
    assert stage.open_to(unit=reviewed, user=rita, now=now) is True
    # another submission's live lease does not close this one
    review_lease(submission(project, wes), bob)
    assert stage.open_to(unit=reviewed, user=rita, now=now) is True
    # a live lease closes it, but for its holder asking about their own lease
    Assignment.objects.filter(reviewed=reviewed, purpose=Purpose.WORK, status=AssignmentStatus.LEASED).update(
        status=AssignmentStatus.EXPIRED
    )
    mine = review_lease(reviewed, rita, expires=now + timedelta(microseconds=1))
    assert stage.open_to(unit=reviewed, user=bob, now=now) is False
    assert stage.open_to(unit=reviewed, user=rita, now=now) is False
    assert stage.open_to(unit=reviewed, user=rita, now=now, own=mine) is True
    assert stage.open_to(unit=reviewed, user=bob, now=now, own=review_lease(submission(project, wes), bob)) is False


def test_a_decided_submission_is_open_only_for_its_second_review_by_another_reviewer(project, stage):
    ann, bob, lead, wes = (
        member(project, n, role=r)
        for n, r in (("ann", "reviewer"), ("bob", "reviewer"), ("lead", "lead"), ("wes", "annotator"))
    )
    now = timezone.now()
    single = submission(project, wes)
    first_review(single, ann)
    double = submission(project, wes, double=True)
    first_review(double, ann, "rejected", "counting")
    # a decided submission not sampled for double review is closed; one sampled for it is open to
    # another reviewer, never to its first reviewer nor its author
    assert stage.open_to(unit=fresh(single), user=bob, now=now) is False
    assert stage.open_to(unit=fresh(double), user=bob, now=now) is True
    assert stage.open_to(unit=fresh(double), user=ann, now=now) is False
    assert stage.open_to(unit=fresh(double), user=wes, now=now) is False
    # a withdrawn second review leaves it open; a standing one closes it
    second_review(double, lead, withdrawn_by=pause_event(project, lead))
    assert stage.open_to(unit=fresh(double), user=bob, now=now) is True
    second_review(double, lead)
    assert stage.open_to(unit=fresh(double), user=bob, now=now) is False


def test_the_second_review_is_open_only_once_decided_and_sampled_for_it(project, stage):
    ann, bob, wes = (
        member(project, "ann", role="reviewer"),
        member(project, "bob", role="reviewer"),
        member(project, "wes"),
    )
    # given a submission marked for double review but still waiting for its first review: closed
    marked_waiting = submission(project, wes, double=True)
    assert stage._second_open(reviewed=marked_waiting, user_id=bob.pk) is False
    # given one ann rejected, and bob's deciding review of another submission (a decoy)
    rejected = submission(project, wes, double=True)
    first_review(rejected, ann, "rejected", "counting")
    first_review(submission(project, wes), bob)
    # then bob may give its second review, ann not
    assert stage._second_open(reviewed=fresh(rejected), user_id=bob.pk) is True
    assert stage._second_open(reviewed=fresh(rejected), user_id=ann.pk) is False


# --- the submit body -----------------------------------------------------------------------------


def test_an_acceptance_carries_no_reason_and_keeps_its_comment(project, stage):
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    lease = review_lease(submission(project, wes), rita)
    # when an acceptance names a rule anyway, the rule is dropped
    cleaned = stage.clean(assignment=lease, data={"verdict": "accepted", "reason": "counting", "comment": "Fine."})
    assert cleaned == {"verdict": "accepted", "reason": "", "comment": "Fine."}


def test_a_rejection_names_a_rule_of_the_reviewed_stage(project, stage):
    # given a review of a question set and one of an answer
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    of_set = review_lease(submission(project, wes), rita)
    question = answering_question(screens(project, 1)[0])
    of_answer = review_lease(
        submission(project, wes, stage="answers", question=question, body={"verdict": "answered"}), rita
    )
    # then a rule of the reviewed stage is taken as given
    body = {"verdict": "rejected", "reason": "counting", "comment": "Two numbers."}
    assert stage.clean(assignment=of_set, data=body) == body
    assert stage.clean(assignment=of_answer, data={**body, "reason": "order"}) == {**body, "reason": "order"}
    # and another stage's rule, or none, is refused with the reviewed stage's rules
    for lease, reason, choices in (
        (of_set, "order", QUESTION_REASONS),
        (of_set, "", QUESTION_REASONS),
        (of_answer, "counting", ANSWER_REASONS),
    ):
        with pytest.raises(ApplicationError) as refused:
            stage.clean(assignment=lease, data={**body, "reason": reason})
        assert (refused.value.field, refused.value.message) == (
            "reason",
            f"Say which rule it breaks: one of {choices}.",
        )


# --- a verdict -----------------------------------------------------------------------------------


def test_an_acceptance_records_the_review_and_decides_the_submission(project, stage, sent):
    # given a question set waiting for review in a project with no double review
    configure(project, review_double_rate=0.0)
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    reviewed = submission(project, wes)
    questions = drafted(reviewed, "What does label 1 say?")
    lease = review_lease(reviewed, rita)
    now = timezone.now()
    # when rita accepts it
    stage.apply(assignment=lease, unit=fresh(reviewed), cleaned={**ACCEPT, "comment": "Good."}, now=now)
    # then her review stands with the verdict, the submission is accepted and not drawn for double review
    review = Review.objects.get()
    assert (review.reviewed_id, review.second_of_id, review.assignment_id, review.reviewer_id) == (
        reviewed.pk,
        None,
        lease.pk,
        rita.pk,
    )
    assert (review.verdict, review.reason, review.comment) == ("accepted", "", "Good.")
    after = fresh(reviewed)
    assert (after.review_state, after.review_double) == (ReviewState.ACCEPTED, False)
    # and the questions stay; the verdict was signalled once
    assert Question.objects.get(pk=questions[0].pk).state == QuestionState.DRAFTING
    assert sent["recorded"] == [(ReviewStage, reviewed.pk, now)]


def test_a_rejection_takes_the_question_set_out_of_the_release(project, stage, sent):
    configure(project, review_double_rate=0.0)
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    reviewed = submission(project, wes)
    questions = drafted(reviewed, "How many items?", "What is the sum?")
    other = submission(project, wes)
    kept = drafted(other, "What does label 1 say?")
    now = timezone.now()
    stage.apply(assignment=review_lease(reviewed, rita), unit=fresh(reviewed), cleaned=dict(REJECT), now=now)
    review = Review.objects.get()
    assert (review.verdict, review.reason, review.comment) == ("rejected", "counting", "Counting is not allowed.")
    assert fresh(reviewed).review_state == ReviewState.REJECTED
    dropped = Question.objects.filter(pk__in=[q.pk for q in questions]).values_list("state", "drop_reason")
    assert list(dropped) == [(QuestionState.DROPPED, "review-rejected")] * 2
    assert Question.objects.get(pk=kept[0].pk).state == QuestionState.DRAFTING
    assert sent["recorded"] == [(ReviewStage, reviewed.pk, now)]


def test_a_rejected_answer_leaves_the_release_and_its_question_waits_for_another(project):
    # given an answer waiting for review (through the engine: review_rate 1)
    configure(project, review_rate=1.0, review_double_rate=0.0)
    ann, rita = member(project, "ann"), member(project, "rita", role="reviewer")
    question = answering_question(screens(project, 1)[0], text="What does label 1 say?")
    lease = assignment_next(project=project, user=ann, stage="answers")
    body = {
        "question": question.text,
        "verdict": "answered",
        "elements": [{"vh_index": 1}],
        "full_answer": "It says so.",
    }
    answered = assignment_submit(assignment_id=lease.pk, user=ann, data=body)
    assert answered.review_state == ReviewState.SAMPLED
    # when rita rejects it through the engine
    review = assignment_next(project=project, user=rita, stage="review")
    assert review.reviewed_id == answered.pk
    assignment_submit(
        assignment_id=review.pk, user=rita, data={"verdict": "rejected", "reason": "order", "comment": ""}
    )
    # then the answer is out and the question waits for one more answer
    answer = Answer.objects.get(assignment=answered)
    assert (answer.kept, answer.drop_reason) == (False, "review-rejected")
    assert Question.objects.get(pk=question.pk).state == QuestionState.ANSWERING
    assert fresh(answered).review_state == ReviewState.REJECTED


def test_a_rejected_judgment_sends_its_screen_back_each_time_the_rejection_stands(
    project, stage, django_capture_on_commit_callbacks
):
    # given a screen one judge sent to pass 1 (judgment sampled for review), its writer holding it
    configure(project, review_rate=1.0, review_double_rate=0.0)
    jo, wes, rita = member(project, "jo"), member(project, "wes"), member(project, "rita", role="reviewer")
    (screen,) = screens(project, 1)
    lease = assignment_next(project=project, user=jo, stage="prefilter")
    judged = assignment_submit(
        assignment_id=lease.pk, user=jo, data={"non_english_app": False, "vh_out_of_sync": False}
    )
    assert judged.review_state == ReviewState.SAMPLED
    writing = assignment_next(project=project, user=wes, stage="questions-1")
    assert writing.screen_id == screen.pk
    # when rita rejects the judgment
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        review = review_lease(judged, rita)
        rejection = {"verdict": "rejected", "reason": "language", "comment": ""}
        stage.apply(assignment=review, unit=fresh(judged), cleaned=rejection, now=now)
    Assignment.objects.filter(pk=review.pk).update(status=AssignmentStatus.SUBMITTED, submitted_at=now)
    # then the screen goes back to pre-filtering and the writer's lease ends then
    assert Screen.objects.get(pk=screen.pk).state == ScreenState.PREFILTER
    assert (fresh(writing).status, fresh(writing).updated_at) == (AssignmentStatus.EXPIRED, now)
    # when her review is withdrawn the judgment decides the screen again; a writer takes it
    event = pause_event(project, rita)
    with django_capture_on_commit_callbacks(execute=True):
        assert stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=event) == 1
    assert Screen.objects.get(pk=screen.pk).state == ScreenState.QUESTIONS_1
    again = assignment_next(project=project, user=wes, stage="questions-1")
    assert again.screen_id == screen.pk and again.pk != writing.pk
    # when a lead reinstates her, the rejection does it again
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        assert stage.restore(project=project, user=rita, event=event, now=now) == {"restored": 1, "redone": 0}
    assert Screen.objects.get(pk=screen.pk).state == ScreenState.PREFILTER
    assert (fresh(again).status, fresh(again).updated_at) == (AssignmentStatus.EXPIRED, now)


def test_the_double_review_draw_follows_the_project_rate(project, stage):
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    # at rate 1 every decided submission is drawn; at rate 0 none
    configure(project, review_double_rate=1.0)
    drawn = submission(project, wes)
    stage.apply(assignment=review_lease(drawn, rita), unit=fresh(drawn), cleaned=dict(ACCEPT), now=timezone.now())
    assert fresh(drawn).review_double is True
    configure(project, review_double_rate=0.0)
    never = submission(project, wes)
    stage.apply(assignment=review_lease(never, rita), unit=fresh(never), cleaned=dict(ACCEPT), now=timezone.now())
    assert fresh(never).review_double is False
    # a submission drawn before (its first review withdrawn) stays drawn
    again = submission(project, wes, double=True)
    stage.apply(assignment=review_lease(again, rita), unit=fresh(again), cleaned=dict(ACCEPT), now=timezone.now())
    assert fresh(again).review_double is True


def test_the_double_review_draw_is_a_number_fixed_by_the_submission_and_the_site_secret(project):
    wes = member(project, "wes")
    for reviewed in (submission(project, wes) for _ in range(3)):
        drawn = secret_draw("double-review", reviewed.pk)
        # not the plain hash of the submission's id that its writer knows
        assert drawn != int.from_bytes(hashlib.sha256(f"double-review\x1f{reviewed.pk}".encode()).digest()[:8]) / 2**64
        # drawn below a rate just above its number, not at the number itself
        assert _double_drawn(reviewed=reviewed, rate=drawn) is False
        assert _double_drawn(reviewed=reviewed, rate=math.nextafter(drawn, 1.0)) is True
        assert _double_drawn(reviewed=reviewed, rate=0.0) is False
        assert _double_drawn(reviewed=reviewed, rate=1.0) is True


def test_a_second_review_is_recorded_and_decides_nothing(project, stage, sent):
    # given a question set accepted by ann and sampled for double review
    ann, bob, wes = (
        member(project, "ann", role="reviewer"),
        member(project, "bob", role="reviewer"),
        member(project, "wes"),
    )
    reviewed = submission(project, wes, double=True)
    questions = drafted(reviewed, "What does label 1 say?")
    first_review(reviewed, ann)
    lease = review_lease(reviewed, bob)
    # when bob rejects it
    stage.apply(assignment=lease, unit=fresh(reviewed), cleaned={**REJECT, "comment": "Counts."}, now=timezone.now())
    # then his review is a second review: it names the submission as second_of, and nothing moves
    second = Review.objects.get(reviewer=bob)
    assert (second.reviewed_id, second.second_of_id, second.assignment_id) == (None, reviewed.pk, lease.pk)
    assert (second.verdict, second.reason, second.comment, second.withdrawn_reason) == (
        "rejected",
        "counting",
        "Counts.",
        "",
    )
    assert (fresh(reviewed).review_state, fresh(reviewed).review_double) == (ReviewState.ACCEPTED, True)
    assert Question.objects.get(pk=questions[0].pk).state == QuestionState.DRAFTING
    assert sent["recorded"] == []


def test_a_decided_submission_refuses_another_deciding_review(project, stage):
    ann, bob, lead, wes = (
        member(project, n, role=r)
        for n, r in (("ann", "reviewer"), ("bob", "reviewer"), ("lead", "lead"), ("wes", "annotator"))
    )
    single = submission(project, wes)
    first_review(single, ann)
    double = submission(project, wes, double=True)
    first_review(double, ann)
    second_review(double, lead)
    # not sampled for double review, or its second review in: already reviewed
    for reviewed, user in ((single, bob), (double, bob)):
        with pytest.raises(ConflictError) as refused:
            stage.apply(
                assignment=review_lease(reviewed, user), unit=fresh(reviewed), cleaned=dict(ACCEPT), now=timezone.now()
            )
        assert refused.value.message == "This submission is already reviewed."
    # and the first reviewer never gives the second review
    waiting = submission(project, wes, double=True)
    first_review(waiting, ann)
    with pytest.raises(ConflictError):
        stage.apply(
            assignment=review_lease(waiting, ann), unit=fresh(waiting), cleaned=dict(ACCEPT), now=timezone.now()
        )
    assert Review.objects.filter(second_of__isnull=False).count() == 1


def test_double_review_through_the_engine_never_serves_the_first_reviewer_the_second(project):
    # given two writers' sets in a project that reviews all and double-reviews all
    configure(project, review_rate=1.0, review_double_rate=1.0, qualification_review_sets=1)
    ann, bob = member(project, "ann", role="reviewer"), member(project, "bob", role="reviewer")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    sets = []
    for n in range(2):
        writer = member(project, f"w{n}")
        lease = assignment_next(project=project, user=writer, stage="questions-1")
        sets.append(
            assignment_submit(
                assignment_id=lease.pk, user=writer, data={"questions": [f"What does label {n + 1} say?"]}
            )
        )
    # when ann decides both
    for reviewed in sets:
        lease = assignment_next(project=project, user=ann, stage="review")
        assert lease.reviewed_id == reviewed.pk
        assignment_submit(assignment_id=lease.pk, user=ann, data=dict(ACCEPT))
    # then ann gets nothing more; bob gets both as second reviews, which decide nothing
    assert assignment_next(project=project, user=ann, stage="review") is None
    for reviewed in sets:
        lease = assignment_next(project=project, user=bob, stage="review")
        assert lease.reviewed_id == reviewed.pk
        assignment_submit(assignment_id=lease.pk, user=bob, data=dict(REJECT))
    assert assignment_next(project=project, user=bob, stage="review") is None
    assert [fresh(s).review_state for s in sets] == [ReviewState.ACCEPTED] * 2
    assert Review.objects.filter(second_of__in=sets, reviewer=bob, verdict="rejected").count() == 2


def test_a_late_review_is_taken_while_nobody_else_holds_the_submission(project):
    # given a reviewer whose lease was given back
    configure(project, review_double_rate=0.0)
    rita, bob, wes = (
        member(project, "rita", role="reviewer"),
        member(project, "bob", role="reviewer"),
        member(project, "wes"),
    )
    taken, free = submission(project, wes), submission(project, wes)
    late = review_lease(taken, rita, status=AssignmentStatus.RELEASED)
    review_lease(taken, bob)
    # when another reviewer holds the submission now, her late submit is refused (her body kept)
    with pytest.raises(ConflictError) as refused:
        assignment_submit(assignment_id=late.pk, user=rita, data=dict(ACCEPT))
    assert refused.value.extra == {"status": "released", "draft_saved": True}
    assert fresh(taken).review_state == ReviewState.SAMPLED
    # and one nobody holds takes it
    other = review_lease(free, rita, status=AssignmentStatus.RELEASED)
    assert assignment_submit(assignment_id=other.pk, user=rita, data=dict(ACCEPT)).status == AssignmentStatus.SUBMITTED
    assert fresh(free).review_state == ReviewState.ACCEPTED


# --- the payload ---------------------------------------------------------------------------------


def test_the_payload_shows_a_question_set_with_its_questions_in_order_and_the_rules(project, stage):
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    body = {"questions": ["What is the title?", "Which tab is on?"]}
    reviewed = submission(project, wes, body=body)
    # questions written in another order than their positions
    Question.objects.create(
        screen_id=reviewed.screen_id, origin=reviewed, source="questions-1", position=1, text="Which tab is on?"
    )
    Question.objects.create(
        screen_id=reviewed.screen_id, origin=reviewed, source="questions-1", position=0, text="What is the title?"
    )
    lease = review_lease(reviewed, rita)
    with CaptureQueriesContext(connection) as queries:
        extra = stage.payload_extra(assignment=lease)
    assert extra == {
        "reviewed": {
            "stage": "questions-1",
            "label": "Questions, pass 1",
            "submission": body,
            "question": None,
            "questions": [{"text": "What is the title?"}, {"text": "Which tab is on?"}],
            "reasons": stage_get("questions-1").review_reasons,
        }
    }
    assert len(queries) == 2


def test_the_payload_of_an_answer_shows_the_question_answered_in_two_queries(project, stage):
    rita, ann = member(project, "rita", role="reviewer"), member(project, "ann")
    question = answering_question(screens(project, 1)[0], text="What does label 1 say?")
    body = {"verdict": "not_answerable", "elements": [], "full_answer": ""}
    lease = review_lease(submission(project, ann, stage="answers", question=question, body=body), rita)
    with CaptureQueriesContext(connection) as queries:
        extra = stage.payload_extra(assignment=lease)
    assert extra["reviewed"] == {
        "stage": "answers",
        "label": "Answers",
        "submission": body,
        "question": {"text": "What does label 1 say?"},
        "questions": [],
        "reasons": stage_get("answers").review_reasons,
    }
    assert len(queries) == 2  # the submission with its question, its questions written


# --- gold reviews --------------------------------------------------------------------------------


def test_a_gold_review_is_scored_by_the_verdict_alone(project, stage):
    # the same verdict is right, whatever rule a rejection names; a wrong one says what was right
    rejected = {"verdict": "rejected", "reason": "ads", "comment": ""}
    assert stage.gold_score(given=dict(ACCEPT), gold=dict(ACCEPT), project=project) == (True, "")
    assert stage.gold_score(given=dict(REJECT), gold=rejected, project=project) == (True, "")
    assert stage.gold_score(given=dict(ACCEPT), gold=rejected, project=project) == (
        False,
        "This submission breaks a rule (ads): reject it.",
    )
    assert stage.gold_score(given=dict(ACCEPT), gold={**rejected, "reason": ""}, project=project) == (
        False,
        "This submission breaks a rule (see the rules): reject it.",
    )
    assert stage.gold_score(given=dict(REJECT), gold=dict(ACCEPT), project=project) == (
        False,
        "This submission keeps the rules: accept it.",
    )


def test_a_gold_reviews_lease_names_its_submission_as_a_real_one_does(project, stage):
    reviewed = submission(project, member(project, "wes"))
    gold = GoldItem.objects.create(
        project=project, stage="review", screen=reviewed.screen, answer=ACCEPT, origin=reviewed
    )
    assert stage.gold_unit(gold=gold) == {"screen_id": reviewed.screen_id, "reviewed_id": reviewed.pk}


def gold_review(project: Any, author: Any, verdict: str, **fields: Any) -> GoldItem:
    origin = submission(project, author, state=verdict)
    answer = {"verdict": verdict, "reason": "" if verdict == "accepted" else "ads", "comment": ""}
    return GoldItem.objects.create(
        project=project, stage="review", screen=origin.screen, answer=answer, origin=origin, **fields
    )


def met(user: Any, gold: GoldItem, *, stage: str = "review") -> None:
    """``user`` had ``gold`` as a control review (its result recorded)."""
    now = timezone.now()
    lease = Assignment.objects.create(
        project=gold.project,
        screen=gold.screen,
        stage="review",
        annotator=user,
        status=AssignmentStatus.SUBMITTED,
        lease_expires_at=now,
        submitted_at=now,
        reviewed=gold.origin,
        purpose=Purpose.CONTROL,
        gold=gold,
    )
    ControlResult.objects.create(
        assignment=lease, gold=gold, project=gold.project, user=user, stage=stage, purpose=Purpose.CONTROL, correct=True
    )


def test_the_gold_pick_never_serves_a_reviewers_own_submission_nor_one_they_had(project, stage):
    # given gold reviews: of rita's own set, of a set she reviewed for real, of one she had as a gold
    # review, and of two sets only others reviewed (the lead decided one of them)
    rita, lead, wes = (
        member(project, "rita", role="reviewer"),
        member(project, "lead", role="lead"),
        member(project, "wes"),
    )
    own = gold_review(project, rita, "accepted")
    had_real = gold_review(project, wes, "accepted")
    review_lease(had_real.origin, rita, status=AssignmentStatus.SUBMITTED)
    had_gold = gold_review(project, wes, "rejected")
    met(rita, had_gold)
    by_lead = gold_review(project, wes, "rejected")
    review_lease(by_lead.origin, lead, status=AssignmentStatus.SUBMITTED)
    never = gold_review(project, wes, "accepted")
    # and a set rita reviewed that is no gold review
    review_lease(submission(project, wes), rita, status=AssignmentStatus.SUBMITTED)
    rules = stage.gold_pick_rules(project=project, user=rita, purpose=Purpose.QUALIFICATION)
    left = GoldItem.objects.filter(project=project).exclude(rules["exclude"]).order_by("pk")
    assert ids(left) == [by_lead.pk, never.pk]
    assert ids(
        GoldItem.objects.filter(project=project)
        .exclude(stage.gold_pick_rules(project=project, user=lead, purpose=Purpose.CONTROL)["exclude"])
        .order_by("pk")
    ) == [
        own.pk,
        had_real.pk,
        had_gold.pk,
        never.pk,
    ]


@pytest.mark.parametrize("purpose", [Purpose.QUALIFICATION, Purpose.CONTROL])
def test_every_gold_review_is_balanced_between_the_verdicts_without_a_query(project, stage, purpose):
    # a reviewer's qualification set and control reviews alike: accepting everything cannot pass
    rita = member(project, "rita", role="reviewer")
    with CaptureQueriesContext(connection) as queries:
        rules = stage.gold_pick_rules(project=project, user=rita, purpose=purpose)
    assert len(queries) == 0
    assert rules["balance"] == ({"verdict": "accepted"}, {"verdict": "rejected"}) == ReviewStage.gold_classes
    # (a qualification item waits while a kind of gold is not servable yet: ``every_class``)
    assert set(rules) == {"exclude", "balance"} | ({"every_class"} if purpose == Purpose.QUALIFICATION else set())


def test_the_verdict_of_the_next_gold_review_is_not_told_by_those_before(project, stage, monkeypatch):
    # given as many known-good as known-bad gold reviews, and a reviewer who guesses each verdict from
    # those she met before (the one she met less often, a rejection on a tie: the old rule of the pick)
    monkeypatch.setattr(gold_module, "gold_random", random.Random(7))
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    for verdict in ("accepted", "rejected") * 20:
        gold_review(project, wes, verdict)
    guessed, served = 0, Counter()
    for _ in range(20):
        rules = stage.gold_pick_rules(project=project, user=rita, purpose=Purpose.CONTROL)
        item = gold_pick(project=project, stage="review", user=rita, **rules)
        guess = "rejected" if served["rejected"] <= served["accepted"] else "accepted"
        guessed += guess == item.answer["verdict"]
        served[item.answer["verdict"]] += 1
        met(rita, item)
    # then each verdict comes about half of the time and the guess is right about half of the time
    assert 6 <= served["rejected"] <= 14 and 6 <= guessed <= 14


# --- withdraw ------------------------------------------------------------------------------------


def test_a_stopped_reviewers_reviews_let_go_of_their_submissions(project, stage, sent):
    # given rita's rejection of one set and acceptance of another (made in the other order than the
    # sets'), and decoys: bob's review, rita's review in another project
    rita, bob, wes = (
        member(project, "rita", role="reviewer"),
        member(project, "bob", role="reviewer"),
        member(project, "wes"),
    )
    rejected_set, accepted_set, bobs = (
        submission(project, wes, double=True),
        submission(project, wes),
        submission(project, wes),
    )
    dropped = drafted(rejected_set, "How many items?")
    given = [first_review(accepted_set, rita), first_review(rejected_set, rita, "rejected", "counting")]
    stage_get("questions-1").review_rejected(reviewed=rejected_set, reason="counting", now=timezone.now())
    assert Question.objects.get(pk=dropped[0].pk).state == QuestionState.DROPPED
    first_review(bobs, bob)
    other = ProjectFactory(slug="other")
    elsewhere = submission(other, member(other, "olga"))
    first_review(elsewhere, rita)
    event = pause_event(project, rita)
    now = timezone.now()
    # when her reviews in the project are withdrawn
    assert stage.withdraw(project=project, user=rita, requeue=False, now=now, event=event) == 2
    # then each stays for the record, naming its submission and the decision
    rows = Review.objects.filter(reviewer=rita, withdrawn_by=event).order_by("withdrawn_from_id")
    assert list(rows.values_list("reviewed_id", "withdrawn_from_id", "withdrawn_reason")) == [
        (None, rejected_set.pk, "withdrawn"),
        (None, accepted_set.pk, "withdrawn"),
    ]
    # and the submissions wait for review again (the double-review mark stays), the rejection undone
    for reviewed in (rejected_set, accepted_set):
        assert (fresh(reviewed).review_state, fresh(reviewed).updated_at) == (ReviewState.SAMPLED, now)
    assert fresh(rejected_set).review_double is True
    assert list(Question.objects.filter(pk=dropped[0].pk).values_list("state", "drop_reason")) == [
        (QuestionState.DRAFTING, "")
    ]
    # and the decoys stand
    assert Review.objects.get(reviewer=bob).reviewed_id == bobs.pk
    assert Review.objects.get(withdrawn_by__isnull=True, reviewer=rita).reviewed_id == elsewhere.pk
    assert (fresh(bobs).review_state, fresh(elsewhere).review_state) == (ReviewState.ACCEPTED, ReviewState.ACCEPTED)
    # and the withdrawal was signalled once, by submission id, with each review's time (projects loaded)
    times = {r.pk: r.created_at for r in given}
    assert sent["withdrawn"] == [
        (ReviewStage, [(rejected_set.pk, times[given[1].pk], True), (accepted_set.pk, times[given[0].pk], True)], now)
    ]


def test_a_withdrawn_rejection_of_an_answer_brings_the_answer_back(project, stage):
    configure(project, review_rate=1.0, review_double_rate=0.0)
    ann, rita = member(project, "ann"), member(project, "rita", role="reviewer")
    question = answering_question(screens(project, 1)[0], text="What does label 1 say?")
    lease = assignment_next(project=project, user=ann, stage="answers")
    body = {
        "question": question.text,
        "verdict": "answered",
        "elements": [{"vh_index": 1}],
        "full_answer": "It says so.",
    }
    answered = assignment_submit(assignment_id=lease.pk, user=ann, data=body)
    review = assignment_next(project=project, user=rita, stage="review")
    assignment_submit(
        assignment_id=review.pk, user=rita, data={"verdict": "rejected", "reason": "order", "comment": ""}
    )
    assert (
        stage.withdraw(project=project, user=rita, requeue=True, now=timezone.now(), event=pause_event(project, rita))
        == 1
    )
    answer = Answer.objects.get(assignment=answered)
    assert (answer.kept, answer.drop_reason) == (True, "")
    assert Question.objects.get(pk=question.pk).state == QuestionState.ANSWERED


def test_a_stopped_reviewers_second_reviews_stop_counting(project, stage, sent):
    # given rita's second reviews of two sets and her first review of a third, and decoys: her second
    # review withdrawn by an earlier decision, bob's second review, her second review in another project
    ann, rita, bob, wes = (
        member(project, n, role=r)
        for n, r in (("ann", "reviewer"), ("rita", "reviewer"), ("bob", "reviewer"), ("wes", "annotator"))
    )
    seconded = [submission(project, wes, double=True) for _ in range(2)]
    for reviewed in seconded:
        first_review(reviewed, ann)
        second_review(reviewed, rita, "rejected")
    decided = submission(project, wes)
    first_review(decided, rita)
    earlier = pause_event(project, rita)
    before = submission(project, wes, double=True)
    first_review(before, ann)
    old = second_review(before, rita, withdrawn_by=earlier)
    bobs = submission(project, wes, double=True)
    first_review(bobs, ann)
    second_review(bobs, bob)
    other = ProjectFactory(slug="other")
    elsewhere = submission(other, member(other, "olga"), double=True)
    first_review(elsewhere, member(other, "otis", role="reviewer"))
    second_review(elsewhere, rita)
    event = pause_event(project, rita)
    # when her reviews are withdrawn: two second reviews and a first one
    assert stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=event) == 3
    # then the second reviews name their submission as withdrawn from and keep second_of
    gone = Review.objects.filter(withdrawn_by=event, second_of__isnull=False).order_by("second_of_id")
    assert list(gone.values_list("second_of_id", "withdrawn_from_id", "withdrawn_reason")) == [
        (s.pk, s.pk, "withdrawn") for s in seconded
    ]
    # and the submissions they were of stay decided by their first review
    assert [fresh(s).review_state for s in seconded] == [ReviewState.ACCEPTED] * 2
    # and the decoys are left as they were
    assert Review.objects.get(pk=old.pk).withdrawn_by_id == earlier.pk
    assert Review.objects.get(reviewer=bob).withdrawn_reason == ""
    assert Review.objects.get(second_of=elsewhere).withdrawn_reason == ""
    assert [rows for _, rows, _ in sent["withdrawn"]] == [
        [(decided.pk, Review.objects.get(withdrawn_from=decided).created_at, True)]
    ]


def test_withdrawing_only_second_reviews_signals_no_withdrawn_review(project, stage, sent):
    ann, rita, wes = (
        member(project, "ann", role="reviewer"),
        member(project, "rita", role="reviewer"),
        member(project, "wes"),
    )
    reviewed = submission(project, wes, double=True)
    first_review(reviewed, ann)
    second_review(reviewed, rita)
    with CaptureQueriesContext(connection) as queries:
        count = stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=None)
    assert count == 1 and sent["withdrawn"] == []
    assert len(queries) == 2  # the second reviews' update, the first reviews' list
    assert Review.objects.get(reviewer=rita).withdrawn_reason == "withdrawn"


def test_nothing_to_withdraw_is_zero(project, stage, sent):
    rita = member(project, "rita", role="reviewer")
    assert stage.withdraw(project=project, user=rita, requeue=True, now=timezone.now()) == 0
    assert sent["withdrawn"] == []


def test_withdrawing_some_assignments_takes_only_their_reviews(project, stage):
    ann, rita, wes = (
        member(project, "ann", role="reviewer"),
        member(project, "rita", role="reviewer"),
        member(project, "wes"),
    )
    firsts = [submission(project, wes) for _ in range(2)]
    reviews = [first_review(s, rita) for s in firsts]
    doubles = [submission(project, wes, double=True) for _ in range(2)]
    seconds = []
    for reviewed in doubles:
        first_review(reviewed, ann)
        seconds.append(second_review(reviewed, rita))
    # when only one deciding review's and one second review's assignments are withdrawn
    chosen = [reviews[1].assignment_id, seconds[0].assignment_id]
    assert stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), assignments=chosen) == 2
    withdrawn = set(Review.objects.filter(reviewer=rita).exclude(withdrawn_reason="").values_list("pk", flat=True))
    assert withdrawn == {reviews[1].pk, seconds[0].pk}
    assert [fresh(s).review_state for s in firsts] == [ReviewState.ACCEPTED, ReviewState.SAMPLED]


# --- restore -------------------------------------------------------------------------------------


def test_a_reinstated_reviewers_reviews_come_back_where_nobody_redid_them(project, stage, sent):
    # given rita's four reviews withdrawn: of a set the lead reviewed again meanwhile, of one somebody
    # is reviewing now, and of two nobody touched (a rejection, an acceptance), made in the other
    # order than the sets'; a gold review's lease and a given-back lease on the untouched ones
    rita, bob, lead, wes = (
        member(project, n, role=r)
        for n, r in (("rita", "reviewer"), ("bob", "reviewer"), ("lead", "lead"), ("wes", "annotator"))
    )
    redone, busy, rejected_set, accepted_set = (submission(project, wes) for _ in range(4))
    dropped = drafted(rejected_set, "How many items?")
    for reviewed, verdict in (
        (accepted_set, "accepted"),
        (rejected_set, "rejected"),
        (busy, "accepted"),
        (redone, "accepted"),
    ):
        first_review(reviewed, rita, verdict, "counting" if verdict == "rejected" else "")
    event = pause_event(project, rita)
    stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=event)
    first_review(redone, lead)
    review_lease(busy, bob)
    gold = GoldItem.objects.create(
        project=project, stage="review", screen=accepted_set.screen, answer=ACCEPT, origin=accepted_set
    )
    review_lease(accepted_set, bob, purpose=Purpose.CONTROL, gold=gold)
    review_lease(rejected_set, bob, status=AssignmentStatus.RELEASED)
    sent["recorded"].clear()
    now = timezone.now()
    # when a lead reinstates her
    assert stage.restore(project=project, user=rita, event=event, now=now) == {"restored": 2, "redone": 2}
    # then the two untouched come back and do again what they did
    back = Review.objects.filter(reviewer=rita, withdrawn_by__isnull=True).order_by("reviewed_id")
    assert list(back.values_list("reviewed_id", "withdrawn_from_id", "withdrawn_reason")) == [
        (rejected_set.pk, None, ""),
        (accepted_set.pk, None, ""),
    ]
    assert (fresh(rejected_set).review_state, fresh(accepted_set).review_state) == (
        ReviewState.REJECTED,
        ReviewState.ACCEPTED,
    )
    assert list(Question.objects.filter(pk=dropped[0].pk).values_list("state", "drop_reason")) == [
        (QuestionState.DROPPED, "review-rejected")
    ]
    assert sent["recorded"] == [(ReviewStage, rejected_set.pk, now), (ReviewStage, accepted_set.pk, now)]
    # and the other two stay withdrawn: the lead's review stands, the lease holds its submission
    stays = Review.objects.filter(reviewer=rita, withdrawn_by=event).order_by("withdrawn_from_id")
    assert list(stays.values_list("reviewed_id", "withdrawn_from_id")) == [(None, redone.pk), (None, busy.pk)]
    assert (fresh(redone).review_state, fresh(busy).review_state) == (ReviewState.ACCEPTED, ReviewState.SAMPLED)


def test_a_review_whose_submission_has_a_standing_review_is_not_restored(project, stage):
    # given rita's two withdrawn reviews; the first set has a standing review again though it waits
    # for review (a lead set it back by hand)
    rita, lead, wes = (
        member(project, "rita", role="reviewer"),
        member(project, "lead", role="lead"),
        member(project, "wes"),
    )
    taken, free = submission(project, wes), submission(project, wes)
    for reviewed in (taken, free):
        first_review(reviewed, rita)
    event = pause_event(project, rita)
    stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=event)
    first_review(taken, lead)
    Assignment.objects.filter(pk=taken.pk).update(review_state=ReviewState.SAMPLED)
    assert stage.restore(project=project, user=rita, event=event, now=timezone.now()) == {"restored": 1, "redone": 1}
    assert Review.objects.get(reviewer=rita, reviewed__isnull=False).reviewed_id == free.pk


def test_a_reinstated_reviewers_second_reviews_come_back_unless_another_stands(project, stage):
    # given rita's three withdrawn second reviews: one whose submission got another second review
    # meanwhile, one whose other second review was withdrawn too, and one nobody touched
    ann, rita, bob, lead, wes = (
        member(project, n, role=r)
        for n, r in (
            ("ann", "reviewer"),
            ("rita", "reviewer"),
            ("bob", "reviewer"),
            ("lead", "lead"),
            ("wes", "annotator"),
        )
    )
    seconded, other_gone, untouched = (submission(project, wes, double=True) for _ in range(3))
    for reviewed in (seconded, other_gone, untouched):
        first_review(reviewed, ann)
        second_review(reviewed, rita, "rejected")
    event = pause_event(project, rita)
    assert stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=event) == 3
    second_review(seconded, bob)
    second_review(other_gone, lead, withdrawn_by=pause_event(project, lead))
    # when a lead reinstates her: two come back, the one redone stays withdrawn
    assert stage.restore(project=project, user=rita, event=event, now=timezone.now()) == {"restored": 2, "redone": 1}
    mine = Review.objects.filter(reviewer=rita).order_by("second_of_id")
    assert list(mine.values_list("second_of_id", "withdrawn_from_id", "withdrawn_reason", "withdrawn_by")) == [
        (seconded.pk, seconded.pk, "withdrawn", event.pk),
        (other_gone.pk, None, "", None),
        (untouched.pk, None, "", None),
    ]
    # and the submissions stay decided by their first review
    assert {fresh(s).review_state for s in (seconded, other_gone, untouched)} == {ReviewState.ACCEPTED}


def test_restore_brings_back_only_the_decisions_reviews_of_the_reviewer(project, stage):
    rita, bob, wes = (
        member(project, "rita", role="reviewer"),
        member(project, "bob", role="reviewer"),
        member(project, "wes"),
    )
    mine, earlier, bobs = submission(project, wes), submission(project, wes), submission(project, wes)
    # given rita's review withdrawn by an earlier pause, and this pause's withdrawal of her review and
    # (a decoy naming the same event) of bob's
    first_review(earlier, rita)
    old = pause_event(project, rita)
    stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=old)
    first_review(mine, rita)
    first_review(bobs, bob)
    event = pause_event(project, rita)
    stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=event)
    stage.withdraw(project=project, user=bob, requeue=False, now=timezone.now(), event=event)
    # then restoring this pause brings back hers only
    assert stage.restore(project=project, user=rita, event=event, now=timezone.now()) == {"restored": 1, "redone": 0}
    assert [fresh(s).review_state for s in (mine, earlier, bobs)] == [
        ReviewState.ACCEPTED,
        ReviewState.SAMPLED,
        ReviewState.SAMPLED,
    ]


def test_restoring_nothing_is_one_query(project, stage):
    rita = member(project, "rita", role="reviewer")
    event = pause_event(project, rita)
    with CaptureQueriesContext(connection) as queries:
        assert stage.restore(project=project, user=rita, event=event, now=timezone.now()) == {
            "restored": 0,
            "redone": 0,
        }
    assert len(queries) == 1


def test_restoring_a_review_loads_its_submissions_project_with_it(project, stage):
    rita, wes = member(project, "rita", role="reviewer"), member(project, "wes")
    reviewed = submission(project, wes)
    first_review(reviewed, rita)
    event = pause_event(project, rita)
    stage.withdraw(project=project, user=rita, requeue=False, now=timezone.now(), event=event)
    with CaptureQueriesContext(connection) as queries:
        stage.restore(project=project, user=rita, event=event, now=timezone.now())
    # the withdrawn reviews, the submissions (locked, with the project), the live leases, the standing
    # review check, the review, the submission, the writer's standing (qualification by review)
    assert len(queries) == 7, [q["sql"] for q in queries]


# --- the page ------------------------------------------------------------------------------------


def test_the_pages_form_is_a_verdict_with_its_reason_and_comment(project, stage):
    lease = None
    accept = QueryDict("action=accept&reason=+ads+&comment=+Fine.+")
    assert stage.form_body(post=accept, assignment=lease) == {
        "verdict": "accepted",
        "reason": "ads",
        "comment": "Fine.",
    }
    reject = QueryDict("action=reject&reason=counting&comment=Two+numbers.")
    assert stage.form_body(post=reject, assignment=lease) == {
        "verdict": "rejected",
        "reason": "counting",
        "comment": "Two numbers.",
    }
    assert stage.form_body(post=QueryDict(""), assignment=lease) == {"verdict": "rejected", "reason": "", "comment": ""}


def test_the_pages_state_keeps_what_was_posted(stage):
    assert stage.form_state(post=QueryDict("reason=ads&comment=+Odd+")) == {"reason": "ads", "comment": " Odd "}
    assert stage.form_state(post=QueryDict("action=accept")) == {"reason": "", "comment": ""}


def test_a_drafts_lines_are_its_reason_and_comment_when_given(stage):
    assert stage.draft_lines(draft={"reason": "ads", "comment": "An advert."}) == [
        ("Reason", "ads"),
        ("Comment", "An advert."),
    ]
    assert stage.draft_lines(draft={"reason": "", "comment": "Only this."}) == [("Comment", "Only this.")]
    assert stage.draft_lines(draft={"reason": "ads"}) == [("Reason", "ads")]
    assert stage.draft_lines(draft={}) == []


def test_the_page_shows_the_submission_but_its_elements_and_questions(stage):
    reviewed = {
        "stage": "answers",
        "submission": {
            "verdict": "answered",
            "elements": [{"text": "Buy"}],
            "questions": ["What?"],
            "full_answer": "It says buy.",
        },
    }
    context = stage.page_context(payload={"reviewed": reviewed}, state={}, limits={})
    assert context == {
        "reviewed": reviewed,
        "reviewed_lines": [("Verdict", "answered"), ("Full answer", "It says buy.")],
    }


# --- progress ------------------------------------------------------------------------------------


def test_pending_counts_the_projects_submissions_waiting_for_review(project, stage):
    ann, wes = member(project, "ann", role="reviewer"), member(project, "wes")
    for _ in range(2):
        submission(project, wes)
    # decoys: decided (waiting for a second review too), not sampled, not submitted, another project's
    waiting_second = submission(project, wes, double=True)
    first_review(waiting_second, ann)
    submission(project, wes, state=ReviewState.NONE)
    submission(project, wes, status=AssignmentStatus.LEASED)
    other = ProjectFactory(slug="other")
    submission(other, member(other, "olga"))
    assert stage.pending(project=project, screens={}, questions={}) == 2
