"""Not-answerable stage: sample size to reach the target, deterministic sample, one question."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.http import QueryDict
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Purpose,
    QualityEvent,
    Question,
    QuestionSource,
    QuestionState,
    ReviewState,
    Screen,
    ScreenState,
)
from pipeline.engine import assignment_next, assignment_payload, assignment_submit, not_answerable_start
from pipeline.stages.not_answerable import NotAnswerableSubmitSerializer, _allocate, not_answerable_default_size
from pipeline.stages.registry import stage_get
from tests.factories import MembershipFactory, ProjectFactory
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


def project_with_questions(project, n_screens=6, per_screen=3):
    made = screens(project, n_screens)
    for screen in made:
        for k in range(per_screen):
            answering_question(screen, text=f"Question {k} on {screen.rico_id}?")
    return made


def test_default_sample_reaches_the_target_and_a_repeat_adds_nothing(project):
    # 18 questions, none not-answerable: ceil((0.1 * 18 - 0) / 0.9) = 2 screens
    project_with_questions(project)
    result = not_answerable_start(project=project)
    assert (result["questions"], result["requested"], result["sampled"]) == (18, 2, 2)
    assert Screen.objects.filter(not_answerable_sampled=True).count() == 2
    again = not_answerable_start(project=project)
    assert (again["pending"], again["sampled"]) == (2, 0)


def test_sample_is_deterministic(project, django_db_blocker):
    made = project_with_questions(project)
    not_answerable_start(project=project, sample_size=3)
    chosen = set(Screen.objects.filter(not_answerable_sampled=True).values_list("rico_id", flat=True))
    Screen.objects.update(not_answerable_sampled=False)
    not_answerable_start(project=project, sample_size=3)
    assert chosen == set(Screen.objects.filter(not_answerable_sampled=True).values_list("rico_id", flat=True))
    assert len(chosen) == 3 and chosen <= {s.rico_id for s in made}


def split_screens(project, split, n, per_screen):
    made = screens(project, n)
    for screen in made:
        screen.split = split
        screen.save(update_fields=["split"])
        for k in range(per_screen):
            answering_question(screen, text=f"Question {k} on {screen.rico_id}?")
    return made


def test_the_sample_is_stratified_so_every_split_reaches_the_target(project):
    # given 80 train questions (one already not-answerable), 30 validation and 20 test questions
    split_screens(project, "train", 40, 2)
    first = Question.objects.filter(screen__split="train").order_by("pk").first()
    Question.objects.filter(pk=first.pk).update(source=QuestionSource.NOT_ANSWERABLE)
    split_screens(project, "validation", 15, 2)
    split_screens(project, "test", 10, 2)
    # when the lead starts the stage with the default size
    result = not_answerable_start(project=project)
    # then each split gets what it needs to reach 10% on its own: ceil((8 - 1) / 0.9) = 8,
    # ceil(3 / 0.9) = 4, ceil(2 / 0.9) = 3
    assert {s: row["sampled"] for s, row in result["splits"].items()} == {"train": 8, "validation": 4, "test": 3}
    sampled = Screen.objects.filter(not_answerable_sampled=True)
    assert {s: sampled.filter(split=s).count() for s in ("train", "validation", "test")} == {
        "train": 8,
        "validation": 4,
        "test": 3,
    }
    assert result["splits"]["train"]["share"] == round(1 / 80, 4)
    # and a given size is spread in proportion to what each split still needs
    Screen.objects.update(not_answerable_sampled=False)
    given = not_answerable_start(project=project, sample_size=30)
    assert {s: row["sampled"] for s, row in given["splits"].items()} == {"train": 16, "validation": 8, "test": 6}


@pytest.mark.parametrize("size", [0, 5001, "ten", 2.5])
def test_bad_sample_size(project, size):
    with pytest.raises(ApplicationError) as err:
        not_answerable_start(project=project, sample_size=size)
    assert err.value.field == "sample_size"


def test_one_writer_adds_one_question_that_then_needs_answers(project):
    writer, answerer = member(project, "w"), member(project, "a")
    project_with_questions(project, n_screens=1, per_screen=2)
    not_answerable_start(project=project, sample_size=1)
    lease = assignment_next(project=project, user=writer, stage="not-answerable")
    assert len(assignment_payload(assignment=lease)["previous_questions"]) == 2
    with pytest.raises(ApplicationError) as err:
        assignment_submit(
            assignment_id=lease.pk, user=writer, data={"question": "question 0 on " + lease.screen.rico_id + "?"}
        )
    assert err.value.field == "question"
    assignment_submit(assignment_id=lease.pk, user=writer, data={"question": "What is the weather in Paris?"})
    question = Question.objects.get(source=QuestionSource.NOT_ANSWERABLE)
    assert (question.state, question.answers_needed, question.author) == (QuestionState.ANSWERING, 1, writer)
    assert assignment_next(project=project, user=member(project, "x"), stage="not-answerable") is None

    # it goes through answers like any other question, never to its author
    def answer_all(user):
        seen = []
        while (nxt := assignment_next(project=project, user=user, stage="answers")) is not None:
            seen.append(nxt.question_id)
            assignment_submit(
                assignment_id=nxt.pk,
                user=user,
                data={"question": "Q?", "verdict": "not_answerable", "elements": [], "full_answer": ""},
            )
        return seen

    assert question.pk not in answer_all(writer)
    assert answer_all(answerer) == [question.pk]
    question.refresh_from_db()
    assert question.state == QuestionState.ANSWERED


# --- the stage's rules, one by one ---------------------------------------------------------------


def na_stage():
    return stage_get("not-answerable")


def sampled(project, n=1, **kw):
    """``n`` screens in answering, sampled for the stage (one question each)."""
    made = screens(project, n, **kw)
    for screen in made:
        answering_question(screen, text=f"What is on {screen.rico_id}?")
    Screen.objects.filter(pk__in=[s.pk for s in made]).update(not_answerable_sampled=True)
    for screen in made:
        screen.refresh_from_db()
    return made


def na_assignment(screen, user, status, *, expires_in=60, stage="not-answerable"):
    now = timezone.now()
    return Assignment.objects.create(
        project=screen.project,
        stage=stage,
        screen=screen,
        annotator=user,
        status=status,
        purpose=Purpose.WORK,
        lease_expires_at=now + timedelta(minutes=expires_in),
        submitted_at=now if status == AssignmentStatus.SUBMITTED else None,
    )


def test_the_queue_holds_the_projects_sampled_answering_screens_nobody_took(project):
    writer, other = member(project, "w"), member(project, "o")
    # given decoys made first: another project's sampled screen, a sampled screen not in answering,
    # an answering screen not sampled, one another writer holds a live lease of, one the writer
    # skipped, and one whose question is written
    elsewhere = ProjectFactory(slug="elsewhere")
    sampled(elsewhere)
    (not_answering,) = screens(project, 1)
    Screen.objects.filter(pk=not_answering.pk).update(not_answerable_sampled=True)
    (not_sampled,) = screens(project, 1)
    answering_question(not_sampled)
    leased, skipped, written = sampled(project, 3)
    na_assignment(leased, other, AssignmentStatus.LEASED)
    na_assignment(skipped, writer, AssignmentStatus.SKIPPED)
    na_assignment(written, other, AssignmentStatus.SUBMITTED)
    # and three open screens, their queue keys in the opposite order of their ids, two keys equal
    first, second, third = sampled(project, 3)
    for screen, key in ((third, 5), (second, 7), (first, 7)):  # rewritten last: the first id last on disk
        Screen.objects.filter(pk=screen.pk).update(queue_key=key)
    # when the writer's queue is read, then it holds the open screens by queue key, then id
    queue = na_stage().queue(project=project, user=writer, now=timezone.now())
    assert list(queue.values_list("pk", flat=True)) == [third.pk, first.pk, second.pk]


def test_open_to_a_sampled_answering_screen_without_its_question_or_anothers_live_lease(project):
    writer, other = member(project, "w"), member(project, "o")
    now = timezone.now()
    stage = na_stage()
    screen, done, held = sampled(project, 3)
    # given the screen has another stage's submission and an expired lease of the stage, it is open
    na_assignment(screen, other, AssignmentStatus.SUBMITTED, stage="prefilter")
    na_assignment(screen, other, AssignmentStatus.LEASED, expires_in=-5)
    assert stage.open_to(unit=screen, user=writer, now=now) is True
    # a screen whose question is written, or that another writer holds, is not
    na_assignment(done, other, AssignmentStatus.SUBMITTED)
    assert stage.open_to(unit=done, user=writer, now=now) is False
    lease = na_assignment(held, other, AssignmentStatus.LEASED)
    assert stage.open_to(unit=held, user=writer, now=now) is False
    # except to the holder resuming their own lease
    assert stage.open_to(unit=held, user=other, now=now, own=lease) is True
    # nor a screen not sampled, or not in answering
    screen.not_answerable_sampled = False
    assert stage.open_to(unit=screen, user=writer, now=now) is False
    screen.not_answerable_sampled, screen.state = True, ScreenState.EXCLUDED
    assert stage.open_to(unit=screen, user=writer, now=now) is False


def test_apply_refuses_a_screen_not_waiting_for_its_question(project):
    writer = member(project, "w")
    (screen,) = sampled(project)
    lease = na_assignment(screen, writer, AssignmentStatus.LEASED)
    # given the screen is in answering but not sampled (and, next, sampled but no longer answering)
    for state, sampled_flag in ((ScreenState.ANSWERING, False), (ScreenState.EXCLUDED, True)):
        screen.state, screen.not_answerable_sampled = state, sampled_flag
        with pytest.raises(ConflictError) as err:
            na_stage().apply(assignment=lease, unit=screen, cleaned={"question": "Why?"}, now=timezone.now())
        assert str(err.value) == "This screen is not waiting for a not-answerable question."
    assert not Question.objects.filter(source=QuestionSource.NOT_ANSWERABLE).exists()


def test_a_question_already_asked_is_refused_but_not_the_submissions_own(project):
    writer = member(project, "w")
    (screen,) = sampled(project)
    lease = na_assignment(screen, writer, AssignmentStatus.LEASED)
    # a question of the screen, in another case, is refused with its message
    with pytest.raises(ApplicationError) as err:
        na_stage().clean(assignment=lease, data={"question": f"WHAT IS ON {screen.rico_id}?"})
    assert (err.value.field, str(err.value)) == ("question", "This question is already asked on this screen.")
    # a submission re-checked once its question is written does not meet its own question
    Question.objects.create(
        screen=screen, author=writer, origin=lease, source=QuestionSource.NOT_ANSWERABLE, position=1, text="Who?"
    )
    assert na_stage().clean(assignment=lease, data={"question": "Who?"}) == {"question": "Who?"}
    # and the serializer alone (no screen's questions in its context) refuses nothing
    assert NotAnswerableSubmitSerializer(data={"question": "Who?"}, context={}).is_valid()


def test_the_page_form_and_draft(project):
    stage = na_stage()
    with pytest.raises(ApplicationError) as err:
        stage.form_body(post=QueryDict("question=+"), assignment=None)
    assert (err.value.field, str(err.value)) == ("question", "Write one question that this screen cannot answer.")
    assert stage.form_state(post=QueryDict("question=Why%3F")) == {"question": "Why?"}
    assert stage.form_state(post=QueryDict("")) == {"question": ""}
    assert stage.draft_lines(draft={"question": "Why?"}) == [("Question", "Why?")]
    assert stage.draft_lines(draft={"question": "  "}) == []
    assert stage.draft_lines(draft={"question": 3}) == []
    assert stage.draft_lines(draft={}) == []
    payload = {"previous_questions": [{"id": 1, "text": "One?"}, {"id": 2, "text": "Two?"}]}
    assert stage.page_context(payload=payload, state={}, limits={}) == {"previous_questions": ["One?", "Two?"]}
    assert stage.page_context(payload={"previous_questions": None}, state={}, limits={}) == {"previous_questions": []}
    assert stage.page_context(payload={}, state={}, limits={}) == {"previous_questions": []}


def test_pending_counts_the_projects_sampled_answering_screens_without_their_question(project):
    other = member(project, "o")
    # given decoys: another project's sampled screen, a sampled screen not in answering, an
    # unsampled answering screen, and a sampled screen whose question is written
    sampled(ProjectFactory(slug="elsewhere"))
    (not_answering,) = screens(project, 1)
    Screen.objects.filter(pk=not_answering.pk).update(not_answerable_sampled=True)
    answering_question(screens(project, 1)[0])
    done, waiting, held = sampled(project, 3)
    na_assignment(done, other, AssignmentStatus.SUBMITTED)
    na_assignment(waiting, other, AssignmentStatus.SUBMITTED, stage="prefilter")
    na_assignment(held, other, AssignmentStatus.LEASED)
    # then two screens are pending: the one with another stage's submission and the one leased
    assert na_stage().pending(project=project, screens={}, questions={}) == 2


def na_question(screen, author, origin, *, state=QuestionState.ANSWERING, source=QuestionSource.NOT_ANSWERABLE, **kw):
    return Question.objects.create(
        screen=screen,
        author=author,
        origin=origin,
        source=source,
        position=Question.objects.filter(screen=screen).count(),
        text=f"Question {Question.objects.count()}?",
        state=state,
        answers_needed=1,
        **kw,
    )


def test_a_rejected_review_drops_the_submissions_question_and_reverting_it_restores_it(project):
    writer = member(project, "w")
    first, second = sampled(project, 2)
    reviewed = na_assignment(first, writer, AssignmentStatus.SUBMITTED)
    other_work = na_assignment(second, writer, AssignmentStatus.SUBMITTED)
    # given another submission's question (made first), one dropped for another reason, and the reviewed one's
    decoy = na_question(second, writer, other_work)
    paused = na_question(first, writer, reviewed, state=QuestionState.DROPPED, drop_reason="author-paused")
    mine = na_question(first, writer, reviewed)
    # when the review rejects it, then only its question is dropped, as rejected in review
    na_stage().review_rejected(reviewed=reviewed, reason="answerable", now=timezone.now())
    rows = dict(Question.objects.values_list("pk", "state"))
    assert (rows[decoy.pk], rows[mine.pk]) == (QuestionState.ANSWERING, QuestionState.DROPPED)
    assert Question.objects.get(pk=mine.pk).drop_reason == "review-rejected"
    # when the rejection is reverted, then it is back waiting for answers; the other drop stays
    restored = na_stage().review_reverted(reviewed=reviewed, now=timezone.now())
    assert restored["restored"] == 1
    rows = dict(Question.objects.values_list("pk", "state"))
    assert (rows[mine.pk], rows[paused.pk]) == (QuestionState.ANSWERING, QuestionState.DROPPED)


def test_withdraw_drops_the_writers_not_answerable_questions_but_accepted_sets_and_restore_brings_them_back(project):
    writer, other = member(project, "w"), member(project, "o")
    elsewhere = ProjectFactory(slug="elsewhere")
    MembershipFactory(project=elsewhere, user=writer)
    (far,) = sampled(elsewhere)
    screen, later, accepted = sampled(project, 3)
    own = na_assignment(screen, writer, AssignmentStatus.SUBMITTED)
    second = na_assignment(later, writer, AssignmentStatus.SUBMITTED)
    vouched = na_assignment(accepted, writer, AssignmentStatus.SUBMITTED)
    Assignment.objects.filter(pk=vouched.pk).update(review_state=ReviewState.ACCEPTED)
    # given decoys made first: the writer's question in another project, another writer's, the
    # writer's pass-1 question, one of a set a review accepted (answered in full)
    decoys = [
        na_question(far, writer, None),
        na_question(screen, other, None),
        na_question(screen, writer, None, source=QuestionSource.PASS_1),
        na_question(accepted, writer, vouched, state=QuestionState.ANSWERED),
    ]
    mine = na_question(screen, writer, own)
    mine_answered = na_question(screen, writer, own, state=QuestionState.ANSWERED)  # answers do not vouch
    later_one = na_question(later, writer, second, answers_done=1)
    event = QualityEvent.objects.create(
        project=project, user=writer, stage="not-answerable", rule="control-accuracy", status_after="paused"
    )
    # when only the first submission's work is withdrawn, then only its questions go, answered or not
    stage = na_stage()
    n = stage.withdraw(
        project=project, user=writer, requeue=False, now=timezone.now(), event=event, assignments=[own.pk]
    )
    assert n == 2
    gone = Question.objects.get(pk=mine.pk)
    assert (gone.state, gone.drop_reason, gone.withdrawn_by) == (QuestionState.DROPPED, "author-paused", event)
    gone = Question.objects.get(pk=mine_answered.pk)
    assert (gone.state, gone.dropped_from, gone.withdrawn_by) == (QuestionState.DROPPED, QuestionState.ANSWERED, event)
    # when all of it is withdrawn, then the later one goes too and the decoys stay
    assert stage.withdraw(project=project, user=writer, requeue=False, now=timezone.now(), event=event) == 1
    assert Question.objects.get(pk=later_one.pk).state == QuestionState.DROPPED
    assert all(Question.objects.get(pk=q.pk).state == q.state for q in decoys)
    # and a writer who did not qualify loses theirs for that reason
    failed = QualityEvent.objects.create(
        project=project, user=other, stage="not-answerable", rule="review", status_after="not_qualified"
    )
    assert stage.withdraw(project=project, user=other, requeue=False, now=timezone.now(), event=failed) == 1
    assert Question.objects.get(pk=decoys[1].pk).drop_reason == "author-not-qualified"
    # when the pause is undone, then the event's not-answerable questions of the project come back;
    # a pass-1 question and another project's question withdrawn by it stay dropped
    Question.objects.filter(pk__in=[decoys[0].pk, decoys[2].pk]).update(
        state=QuestionState.DROPPED,
        drop_reason="author-paused",
        dropped_from=QuestionState.ANSWERING,
        withdrawn_by=event,
    )
    restored = stage.restore(project=project, user=writer, event=event, now=timezone.now())
    assert restored["restored"] == 3
    states = dict(Question.objects.values_list("pk", "state"))
    assert (states[mine.pk], states[later_one.pk]) == (QuestionState.ANSWERING, QuestionState.ANSWERING)
    assert states[mine_answered.pk] == QuestionState.ANSWERED
    assert (states[decoys[0].pk], states[decoys[2].pk], states[decoys[1].pk]) == (QuestionState.DROPPED,) * 3


def test_default_size_counts_per_split_what_counts(project):
    other = member(project, "o")
    # given another project's sampled screen (made first), then in train 10 live questions and a
    # dropped one on two screens, the second sampled with its question written (not pending)
    sampled(ProjectFactory(slug="elsewhere"))
    first, written = split_screens(project, "train", 2, 5)
    na_question(first, None, None, state=QuestionState.DROPPED, source=QuestionSource.PASS_1, drop_reason="invalid")
    Screen.objects.filter(pk=written.pk).update(not_answerable_sampled=True)
    na_assignment(written, other, AssignmentStatus.SUBMITTED)
    # in test 3 questions, one of them not-answerable; in validation a sampled screen, no question yet
    (tested,) = split_screens(project, "test", 1, 3)
    Question.objects.filter(pk=tested.questions.order_by("pk").first().pk).update(source=QuestionSource.NOT_ANSWERABLE)
    (empty,) = split_screens(project, "validation", 1, 0)
    Screen.objects.filter(pk=empty.pk).update(state=ScreenState.ANSWERING, not_answerable_sampled=True)
    # then train needs ceil(0.1 * 10 / 0.9) = 2, test has its 10% already, validation has no question
    assert not_answerable_default_size(project=project) == {
        "questions": 13,
        "not_answerable_questions": 1,
        "pending": 1,
        "default": 2,
        "target": 0.1,
        "splits": {
            "train": {"questions": 10, "not_answerable_questions": 0, "pending": 0, "default": 2, "share": 0.0},
            "test": {"questions": 3, "not_answerable_questions": 1, "pending": 0, "default": 0, "share": 0.3333},
            "validation": {"questions": 0, "not_answerable_questions": 0, "pending": 1, "default": 0, "share": 0.0},
        },
    }
    # and a target of 100% asks for the most the sample takes
    project.not_answerable_target = 1
    assert not_answerable_default_size(project=project)["splits"]["train"]["default"] == 5000


def test_a_size_larger_than_the_screens_left_samples_them_all(project):
    project_with_questions(project, n_screens=3, per_screen=1)
    result = not_answerable_start(project=project, sample_size=10)
    assert (result["requested"], result["sampled"], result["available"]) == (10, 3, 3)
    assert Screen.objects.filter(not_answerable_sampled=True).count() == 3


def test_allocate_by_largest_remainder_within_each_splits_room():
    # 3 by 3:7 is 0.9 and 2.1: the larger remainder (a's) takes the third screen
    assert _allocate(requested=3, weights={"a": 3, "b": 7}, room={"a": 10, "b": 20}) == {"a": 1, "b": 2}
    # 13 by 3:7 is 3.9 and 9.1: a's 3 screens get the one left over
    assert _allocate(requested=13, weights={"a": 3, "b": 7}, room={"a": 10, "b": 20}) == {"a": 4, "b": 9}
    # a full split's share goes to the others, evenly when they weigh nothing
    assert _allocate(requested=5, weights={"a": 1, "b": 0, "c": 0}, room={"a": 1, "b": 5, "c": 5}) == {
        "a": 1,
        "b": 2,
        "c": 2,
    }
    # more than the room: every split full
    assert _allocate(requested=9, weights={"a": 1, "b": 1}, room={"a": 2, "b": 3}) == {"a": 2, "b": 3}
