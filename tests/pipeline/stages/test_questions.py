"""Question passes: caps, two different writers, finalisation into answering or no-questions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    QualityEvent,
    Question,
    QuestionSource,
    QuestionState,
    ReviewState,
    Screen,
    ScreenState,
    StandingStatus,
)
from pipeline.decisions.decide import REASON_AUTHOR_NOT_QUALIFIED, REASON_AUTHOR_PAUSED
from pipeline.engine import assignment_next, assignment_payload, assignment_submit, split_for, stage_get
from pipeline.stages.questions import (
    _flags_apply,
    author_withdrawal_reason,
    questions_create,
    questions_drop,
    questions_restore,
)
from tests.factories import MembershipFactory, ProjectFactory
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


def write(project, user, stage, questions):
    lease = assignment_next(project=project, user=user, stage=stage)
    assert lease is not None, f"{user} got no {stage} work"
    return assignment_submit(assignment_id=lease.pk, user=user, data={"questions": questions})


def test_two_passes_by_two_writers_make_the_screen_answerable(project):
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    write(project, a, "questions-1", ["What is the title?", "Which tab is selected?"])
    screen.refresh_from_db()
    assert screen.state == ScreenState.QUESTIONS_2
    # the pass-1 writer never gets pass 2 of the screen
    assert assignment_next(project=project, user=a, stage="questions-2") is None
    lease = assignment_next(project=project, user=b, stage="questions-2")
    payload = assignment_payload(assignment=lease)
    assert [q["text"] for q in payload["previous_questions"]] == ["What is the title?", "Which tab is selected?"]
    assert payload["max_questions"] == 3
    assignment_submit(assignment_id=lease.pk, user=b, data={"questions": ["What is the price?"]})
    screen.refresh_from_db()
    split = split_for(project=project, rico_id=screen.rico_id)
    assert (screen.state, screen.split) == (ScreenState.ANSWERING, split)
    questions = list(Question.objects.filter(screen=screen).order_by("position"))
    assert [(q.position, q.source, q.author) for q in questions] == [
        (0, QuestionSource.PASS_1, a),
        (1, QuestionSource.PASS_1, a),
        (2, QuestionSource.PASS_2, b),
    ]
    assert {(q.state, q.answers_needed) for q in questions} == {
        (QuestionState.ANSWERING, project.answers_needed(split))
    }


def test_nothing_to_ask_twice_closes_the_screen(project):
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    write(project, a, "questions-1", [])
    write(project, b, "questions-2", [])
    screen.refresh_from_db()
    assert (screen.state, screen.split) == (ScreenState.NO_QUESTIONS, "")


def test_pass_two_alone_can_give_the_questions(project):
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    write(project, a, "questions-1", [])
    write(project, b, "questions-2", ["What time is it?"])
    screen.refresh_from_db()
    assert screen.state == ScreenState.ANSWERING


@pytest.mark.parametrize(
    ("stage", "questions", "field"),
    [
        ("questions-1", ["q1", "q2", "q3", "q4", "q5", "q6"], "questions"),
        ("questions-1", "What?", "questions"),
        ("questions-1", ["Fine?", "  "], "questions[1]"),
        ("questions-1", ["Fine?", 7], "questions[1]"),
        ("questions-1", ["Same?", "same?"], "questions[1]"),
        ("questions-1", ["x" * 1001], "questions[0]"),
    ],
)
def test_pass_one_validation(project, stage, questions, field):
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage=stage)
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data={"questions": questions})
    assert err.value.field == field
    assert not Question.objects.exists()


def test_pass_two_cap_and_repeats(project):
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    write(project, a, "questions-1", ["What is the title?"])
    lease = assignment_next(project=project, user=b, stage="questions-2")
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=b, data={"questions": ["a?", "b?", "c?", "d?"]})
    assert err.value.field == "questions"
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=b, data={"questions": ["what is the TITLE?"]})
    assert err.value.field == "questions[0]"


def test_caps_come_from_the_project(project):
    project.questions_pass1_cap = 2
    project.save()
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    assert assignment_payload(assignment=lease)["max_questions"] == 2
    with pytest.raises(ApplicationError):
        assignment_submit(assignment_id=lease.pk, user=a, data={"questions": ["a?", "b?", "c?"]})


def test_one_writer_at_a_time_per_screen(project):
    a, b = member(project, "a"), member(project, "b")
    first, second = screens(project, 2, state=ScreenState.QUESTIONS_1)
    assert assignment_next(project=project, user=a, stage="questions-1").screen_id == first.pk
    assert assignment_next(project=project, user=b, stage="questions-1").screen_id == second.pk
    assert assignment_next(project=project, user=member(project, "c"), stage="questions-1") is None


def test_database_refuses_the_same_writer_for_both_passes(project):
    # the constraint holds even if a code path forgot the check
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    write(project, a, "questions-1", [])
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            project=project, stage="questions-2", screen=screen, annotator=a, lease_expires_at=screen.imported_at
        )


def _pass_one(project):
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    write(project, a, "questions-1", ["How many photos are there?", "What is the title?"])
    lease = assignment_next(project=project, user=b, stage="questions-2")
    return b, lease, list(Question.objects.filter(screen=screen).order_by("position"))


def test_pass_two_flags_a_pass_one_question_with_a_writing_rule(project):
    b, lease, (counting, fine) = _pass_one(project)
    flags = [{"question_id": counting.pk, "reason": "counting"}]
    assignment_submit(assignment_id=lease.pk, user=b, data={"questions": ["Which tab is open?"], "flags": flags})
    counting.refresh_from_db()
    fine.refresh_from_db()
    assert (counting.flag_reason, counting.flagged_by_id, counting.state) == ("counting", lease.pk, "answering")
    assert fine.flag_reason == "" and fine.flagged_by is None  # the flag is feedback: the question stays


@pytest.mark.parametrize(
    ("flags", "field", "message"),
    [
        (lambda q: [{"question_id": q[0].pk, "reason": "ugly"}], "flags[0]", "Unknown reason"),
        (lambda q: [{"question_id": 999999, "reason": "counting"}], "flags[0]", "Not a pass-1 question"),
        (
            lambda q: [{"question_id": q[1].pk, "reason": "ads"}, {"question_id": q[1].pk, "reason": "counting"}],
            "flags[1]",
            "already flagged",
        ),
        (lambda q: [{"question_id": q[0].pk}], "flags[0].reason", "required"),
        (lambda q: [{"question_id": q[0].pk, "reason": "ads", "why": "x"}], "flags[0].why", "Unknown field"),
    ],
)
def test_pass_two_flag_validation(project, flags, field, message):
    b, lease, questions = _pass_one(project)
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=b, data={"questions": [], "flags": flags(questions)})
    assert err.value.field == field and message in err.value.message
    assert not Question.objects.exclude(flag_reason="").exists()


def test_pass_one_has_no_flags(project):
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data={"questions": [], "flags": []})
    assert err.value.field == "flags"


@pytest.mark.parametrize("how", ["review", "pause"])
def test_withdrawn_pass_two_work_takes_its_flags_back(project, how):
    b, lease, (counting, _fine) = _pass_one(project)
    flags = [{"question_id": counting.pk, "reason": "counting"}]
    assignment_submit(assignment_id=lease.pk, user=b, data={"questions": [], "flags": flags})
    stage = stage_get("questions-2")
    if how == "review":
        stage.review_rejected(reviewed=lease, reason="not-natural", now=timezone.now())
    else:
        stage.withdraw(project=project, user=b, requeue=True, now=timezone.now())
    counting.refresh_from_db()
    assert (counting.flag_reason, counting.flagged_by) == ("", None)
    lease.refresh_from_db()
    assert lease.submission["flags"] == flags  # the submission still says what was flagged


@pytest.mark.parametrize("requeue", [True, False])
def test_pausing_a_writer_drops_their_pass_one_questions_answered_or_not_but_those_a_review_accepted(project, requeue):
    # given a writer's questions in every state an answer can leave them, and questions of others
    writer, other = member(project, "writer"), member(project, "other")
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    elsewhere = screens(ProjectFactory(slug="elsewhere"), 1, state=ScreenState.ANSWERING, split="train")[0]

    def submitted(review_state):  # a set of the writer's (one a screen), as review left it
        (its_screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
        return _assignment(project, writer, its_screen, "questions-1", review_state=review_state)

    def asked(
        text,
        *,
        author=writer,
        state=QuestionState.ANSWERING,
        done=0,
        source=QuestionSource.PASS_1,
        at=screen,
        origin=None,
        **kw,
    ):
        position = Question.objects.filter(screen=at).count()
        return Question.objects.create(
            screen=at,
            author=author,
            source=source,
            position=position,
            text=text,
            state=state,
            answers_needed=3,
            answers_done=done,
            origin=origin,
            **kw,
        )

    waiting = asked("Nobody answered this yet?")
    drafting = asked("Still a draft?", state=QuestionState.DRAFTING)
    started = asked("One answer so far?", done=1)
    almost = asked("Two answers so far?", done=2)
    answered = asked("All three answers?", state=QuestionState.ANSWERED, done=3)
    kept = asked("Kept by post-processing?", state=QuestionState.KEPT, done=3)
    sampled = asked("Waiting for its review?", origin=submitted(ReviewState.SAMPLED), done=1)
    unsampled = asked("Never sampled for review?", origin=submitted(ReviewState.NONE))
    vouched = asked(
        "A reviewer accepted its set?", origin=submitted(ReviewState.ACCEPTED), done=3, state=QuestionState.ANSWERED
    )
    vouched_open = asked("Accepted, still answering?", origin=submitted(ReviewState.ACCEPTED))
    pass_two = asked("Written in pass two?", source=QuestionSource.PASS_2)
    theirs = asked("Another writer's?", author=other)
    other_project = asked("In another project?", at=elsewhere)
    already = asked("Dropped by post-processing?", state=QuestionState.DROPPED, drop_reason="no-answer")
    # when the writer is withdrawn from pass 1 (a rule paused them)
    withdrawn = stage_get("questions-1").withdraw(project=project, user=writer, requeue=requeue, now=timezone.now())
    # then their questions leave the release, answered or not (an answer does not vouch for its question),
    # but for the sets a review accepted; others' questions, pass two's and dropped ones are untouched
    states = {q.text: (q.state, q.drop_reason, q.dropped_from) for q in Question.objects.all()}
    out = "author-paused"
    assert states == {
        waiting.text: (QuestionState.DROPPED, out, QuestionState.ANSWERING),
        drafting.text: (QuestionState.DROPPED, out, QuestionState.DRAFTING),
        started.text: (QuestionState.DROPPED, out, QuestionState.ANSWERING),
        almost.text: (QuestionState.DROPPED, out, QuestionState.ANSWERING),
        answered.text: (QuestionState.DROPPED, out, QuestionState.ANSWERED),
        kept.text: (QuestionState.DROPPED, out, QuestionState.KEPT),
        sampled.text: (QuestionState.DROPPED, out, QuestionState.ANSWERING),
        unsampled.text: (QuestionState.DROPPED, out, QuestionState.ANSWERING),
        vouched.text: (QuestionState.ANSWERED, "", ""),
        vouched_open.text: (QuestionState.ANSWERING, "", ""),
        pass_two.text: (QuestionState.ANSWERING, "", ""),
        theirs.text: (QuestionState.ANSWERING, "", ""),
        other_project.text: (QuestionState.ANSWERING, "", ""),
        already.text: (QuestionState.DROPPED, "no-answer", ""),
    }
    assert withdrawn == 8


# --- the module's parts called directly (each filter with a decoy, each refusal's words) -------


def _assignment(project, user, screen, stage, *, status=AssignmentStatus.SUBMITTED, minutes=-5, now=None, **kw):
    """A question-writing assignment made directly (not by ``next``)."""
    now = now or timezone.now()
    return Assignment.objects.create(
        project=project,
        annotator=user,
        stage=stage,
        screen=screen,
        status=status,
        lease_expires_at=now + timedelta(minutes=minutes),
        submitted_at=now if status == AssignmentStatus.SUBMITTED else None,
        **kw,
    )


def _question(screen, text, *, author=None, state=QuestionState.ANSWERING, source=QuestionSource.PASS_1, **kw):
    position = Question.objects.filter(screen=screen).count()
    return Question.objects.create(
        screen=screen, author=author, source=source, position=position, text=text, state=state, **kw
    )


def test_questions_create_appends_after_the_last_position_with_author_origin_and_needed(project):
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    _question(screen, "Already here?")
    Question.objects.filter(screen=screen).update(position=4)  # a gap: positions continue after the last
    origin = _assignment(project, a, screen, "questions-2")
    questions_create(
        assignment=origin, screen=screen, texts=["One?", "Two?"], source=QuestionSource.PASS_2, state="answering"
    )
    made = list(Question.objects.filter(origin=origin).order_by("position"))
    needed = project.answers_needed("train")
    assert [(q.position, q.text, q.author_id, q.source, q.state, q.answers_needed) for q in made] == [
        (5, "One?", a.pk, QuestionSource.PASS_2, "answering", needed),
        (6, "Two?", a.pk, QuestionSource.PASS_2, "answering", needed),
    ]
    # a draft needs no answers yet; the first question of a screen is at position 0
    (empty,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    questions_create(assignment=origin, screen=empty, texts=["Draft?"], source=QuestionSource.PASS_1, state="drafting")
    draft = Question.objects.get(screen=empty)
    assert (draft.position, draft.answers_needed, draft.state) == (0, 0, "drafting")


def test_questions_drop_notes_the_state_left_and_the_event_and_leaves_dropped_ones_alone(project):
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    waiting = _question(screen, "Waiting?", author=a)
    drafting = _question(screen, "Draft?", author=a, state=QuestionState.DRAFTING)
    earlier = _question(screen, "Dropped before?", author=a, state=QuestionState.DROPPED, drop_reason="duplicate")
    event = QualityEvent.objects.create(project=project, user=a, stage="questions-1", rule="lead")
    dropped = questions_drop(written_by=Question.objects.filter(author=a), reason="author-paused", event=event)
    assert dropped == 2
    rows = {q.text: (q.state, q.drop_reason, q.dropped_from, q.withdrawn_by_id) for q in Question.objects.all()}
    assert rows == {
        waiting.text: ("dropped", "author-paused", "answering", event.pk),
        drafting.text: ("dropped", "author-paused", "drafting", event.pk),
        earlier.text: ("dropped", "duplicate", "", None),
    }


def test_the_withdrawal_reason_names_the_decision():
    assert author_withdrawal_reason(None) == REASON_AUTHOR_PAUSED
    assert author_withdrawal_reason(QualityEvent(status_after=StandingStatus.PAUSED)) == REASON_AUTHOR_PAUSED
    assert (
        author_withdrawal_reason(QualityEvent(status_after=StandingStatus.NOT_QUALIFIED)) == REASON_AUTHOR_NOT_QUALIFIED
    )


def test_questions_restore_puts_each_question_where_its_screen_is_now(project):
    a = member(project, "a")
    writing, answering, closed = (
        screens(project, 1, state=ScreenState.QUESTIONS_2)[0],
        screens(project, 1, state=ScreenState.ANSWERING, split="test")[0],
        screens(project, 1, state=ScreenState.EXCLUDED, exclusion_reason="non-english")[0],
    )

    def dropped(screen, text, was, *, reason="author-paused", needed=0):
        return _question(
            screen, text, author=a, state="dropped", drop_reason=reason, dropped_from=was, answers_needed=needed
        )

    during_passes = dropped(writing, "Written in pass 1?", "drafting")
    was_answering = dropped(answering, "Was answering?", "answering", needed=2)
    was_answered = dropped(answering, "Was answered?", "answered", needed=2)
    was_kept = dropped(answering, "Was kept?", "kept", needed=2)
    draft_since_split = dropped(answering, "A draft when dropped?", "drafting")
    draft_with_needed = dropped(answering, "A draft with its needed?", "drafting", needed=7)
    screen_gone = dropped(closed, "Its screen is excluded?", "answering", needed=2)
    not_quality = dropped(answering, "Dropped by post-processing?", "answering", reason="duplicate", needed=2)
    live = _question(answering, "Never dropped?", author=a, answers_needed=2)
    result = questions_restore(Question.objects.filter(author=a))
    assert result == {"restored": 6, "redone": 0, "kept_out": 1}
    rows = {q.text: (q.state, q.answers_needed, q.drop_reason, q.dropped_from) for q in Question.objects.all()}
    test_needed = project.answers_needed("test")
    assert rows == {
        during_passes.text: ("drafting", 0, "", ""),
        was_answering.text: ("answering", 2, "", ""),
        was_answered.text: ("answered", 2, "", ""),
        was_kept.text: ("answered", 2, "", ""),  # decided again: post-processing runs over it anew
        draft_since_split.text: ("answering", test_needed, "", ""),
        draft_with_needed.text: ("answering", 7, "", ""),
        screen_gone.text: ("dropped", 2, "author-paused", "answering"),
        not_quality.text: ("dropped", 2, "duplicate", "answering"),
        live.text: ("answering", 2, "", ""),
    }
    assert test_needed != 7


def test_questions_restore_clears_the_decision_that_dropped_them(project):
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    event = QualityEvent.objects.create(project=project, user=a, stage="questions-1", rule="lead")
    question = _question(
        screen, "Back?", author=a, state="dropped", drop_reason="author-not-qualified", dropped_from="answering"
    )
    Question.objects.filter(pk=question.pk).update(withdrawn_by=event)
    assert questions_restore(Question.objects.filter(pk=question.pk))["restored"] == 1
    question.refresh_from_db()
    assert (question.state, question.drop_reason, question.dropped_from, question.withdrawn_by) == (
        "answering",
        "",
        "",
        None,
    )


@pytest.mark.parametrize("stage", ["questions-1", "questions-2"])
def test_the_cap_is_allowed_and_one_more_is_refused_in_words(project, stage):
    project.questions_pass1_cap, project.questions_pass2_cap = 4, 2
    project.save()
    cap = 4 if stage == "questions-1" else 2
    serializer_class = stage_get(stage).submit_serializer
    context = {"limits": {"max_questions": cap}, "asked": []}
    texts = [f"Question number {i}?" for i in range(cap + 1)]
    assert serializer_class(data={"questions": texts[:cap]}, context=context).is_valid()
    refused = serializer_class(data={"questions": texts}, context=context)
    assert not refused.is_valid()
    assert refused.errors["questions"] == [f"At most {cap} questions in this pass."]
    not_a_list = serializer_class(data={"questions": "What?"}, context=context)
    assert not not_a_list.is_valid()
    assert not_a_list.errors["questions"] == ["Give a list of questions (an empty list means nothing to ask)."]


def test_repeats_are_refused_whatever_the_case_with_the_numbers_in_words():
    serializer_class = stage_get("questions-2").submit_serializer
    context = {"limits": {"max_questions": 5}, "asked": ["What is the TITLE?"]}
    already = serializer_class(data={"questions": ["Fine?", "what is the title?"]}, context=context)
    assert not already.is_valid()
    assert already.errors["questions"] == {"1": ["This question is already asked on this screen."]}
    repeated = serializer_class(data={"questions": ["A?", "B?", "b?"]}, context=context)
    assert not repeated.is_valid()
    assert repeated.errors["questions"] == {"2": ["Question 3 repeats question 2."]}
    assert serializer_class(data={"questions": ["A?", "B?"]}, context=context).is_valid()
    # pass 2's flags: each refusal names the flag by its place, and a good one passes
    flags_context = {**context, "flaggable": {7: "Q?"}, "flag_reasons": {"ads": "About an ad", "counting": "x"}}

    def flag_errors(flags):
        serializer = serializer_class(data={"questions": [], "flags": flags}, context=flags_context)
        return None if serializer.is_valid() else serializer.errors["flags"]

    assert flag_errors([{"question_id": 7, "reason": "ads"}]) is None
    assert flag_errors([{"question_id": 7, "reason": "nope"}]) == {"0": ["Unknown reason; one of ads, counting."]}
    assert flag_errors([{"question_id": 8, "reason": "ads"}]) == {"0": ["Not a pass-1 question of this screen."]}
    assert flag_errors([{"question_id": 7, "reason": "ads"}, {"question_id": 7, "reason": "ads"}]) == {
        "1": ["This question is already flagged."]
    }


@pytest.mark.parametrize("stage", ["questions-1", "questions-2"])
def test_open_to_checks_the_state_and_the_live_leases_of_others(project, stage):
    definition = stage_get(stage)
    now = timezone.now()
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=definition.screen_state)
    assert definition.open_to(unit=screen, user=a, now=now)
    others = _assignment(project, b, screen, stage, status=AssignmentStatus.LEASED, minutes=10, now=now)
    assert not definition.open_to(unit=screen, user=a, now=now)
    own = _assignment(project, a, screen, stage, status=AssignmentStatus.EXPIRED, minutes=-1, now=now)
    assert not definition.open_to(unit=screen, user=a, now=now, own=own)
    # b's own lease is open to b; once it lapses the screen is open to anybody
    assert definition.open_to(unit=screen, user=b, now=now, own=others)
    Assignment.objects.filter(pk=others.pk).update(lease_expires_at=now - timedelta(seconds=1))
    assert definition.open_to(unit=screen, user=a, now=now)
    # a screen in another state is open to nobody
    screen.state = ScreenState.ANSWERING
    assert not definition.open_to(unit=screen, user=a, now=now)


def test_pass_two_is_closed_to_the_pass_one_writer_only_once_they_submitted(project):
    pass2 = stage_get("questions-2")
    now = timezone.now()
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_2)
    # a lapsed pass-1 lease of a is not writing pass 1: pass 2 stays open to a, in the queue too
    _assignment(project, a, screen, "questions-1", status=AssignmentStatus.EXPIRED, minutes=-1, now=now)
    assert pass2.open_to(unit=screen, user=a, now=now)
    assert list(pass2.queue(project=project, user=a, now=now)) == [screen]
    # b submitted pass 1: not open to b, not in b's queue; still open to a
    _assignment(project, b, screen, "questions-1", now=now)
    assert not pass2.open_to(unit=screen, user=b, now=now)
    assert list(pass2.queue(project=project, user=b, now=now)) == []
    assert pass2.open_to(unit=screen, user=a, now=now)


def test_the_queue_is_this_projects_screens_in_key_order_less_leased_and_taken_ones(project):
    stage = stage_get("questions-1")
    now = timezone.now()
    a, b = member(project, "a"), member(project, "b")
    first, second, third, fourth = screens(project, 4, state=ScreenState.QUESTIONS_1)
    Screen.objects.filter(pk=first.pk).update(queue_key=30)
    Screen.objects.filter(pk=second.pk).update(queue_key=10)
    Screen.objects.filter(pk__in=[third.pk, fourth.pk]).update(queue_key=20)
    screens(ProjectFactory(slug="elsewhere"), 1, state=ScreenState.QUESTIONS_1)
    screens(project, 1, state=ScreenState.QUESTIONS_2)
    assert list(stage.queue(project=project, user=a, now=now)) == [second, third, fourth, first]
    _assignment(project, b, second, "questions-1", status=AssignmentStatus.LEASED, minutes=10, now=now)
    _assignment(project, a, third, "questions-1", status=AssignmentStatus.SKIPPED, now=now)
    _assignment(project, b, fourth, "questions-1", status=AssignmentStatus.EXPIRED, minutes=-1, now=now)
    assert list(stage.queue(project=project, user=a, now=now)) == [fourth, first]
    assert list(stage.queue(project=project, user=b, now=now)) == [third, fourth, first]


def test_apply_refuses_a_screen_past_its_pass_and_a_pass_two_by_the_pass_one_writer_in_words(project):
    now = timezone.now()
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_2)
    lease = _assignment(project, a, screen, "questions-1", status=AssignmentStatus.LEASED, minutes=10, now=now)
    with pytest.raises(ConflictError) as err:
        stage_get("questions-1").apply(assignment=lease, unit=screen, cleaned={"questions": ["Late?"]}, now=now)
    assert err.value.message == "This screen's questions for this pass are already written."
    Assignment.objects.filter(pk=lease.pk).update(status=AssignmentStatus.SUBMITTED, submitted_at=now)
    # a pass-1 writer who somehow holds pass 2 (the queue never offers it) is refused at apply
    other = _assignment(project, b, screen, "questions-2", status=AssignmentStatus.LEASED, minutes=10, now=now)
    other.annotator_id = a.pk  # the check reads the assignment's annotator
    with pytest.raises(ConflictError) as err:
        stage_get("questions-2").apply(assignment=other, unit=screen, cleaned={"questions": ["Mine?"]}, now=now)
    assert err.value.message == "You wrote pass 1 of this screen; pass 2 needs a different writer."
    assert not Question.objects.exists()
    screen.refresh_from_db()
    assert screen.state == ScreenState.QUESTIONS_2


def test_pass_one_moves_the_screen_to_pass_two_with_its_questions_as_drafts(project):
    now = timezone.now()
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = _assignment(project, a, screen, "questions-1", status=AssignmentStatus.LEASED, minutes=10, now=now)
    stage_get("questions-1").apply(assignment=lease, unit=screen, cleaned={"questions": ["A?", "B?"]}, now=now)
    assert Screen.objects.get(pk=screen.pk).state == ScreenState.QUESTIONS_2
    assert list(Question.objects.values_list("text", "state", "source", "origin_id")) == [
        ("A?", "drafting", QuestionSource.PASS_1, lease.pk),
        ("B?", "drafting", QuestionSource.PASS_1, lease.pk),
    ]


def test_pass_two_flags_only_pass_one_questions_of_its_own_screen(project):
    now = timezone.now()
    a, b = member(project, "a"), member(project, "b")
    screen, elsewhere = screens(project, 2, state=ScreenState.QUESTIONS_2)
    first = _question(screen, "How many photos?", author=a, state="drafting")
    second = _question(screen, "What is the sum?", author=a, state="drafting")
    ads = _question(screen, "What does the ad say?", author=a, state="drafting")
    pass_two = _question(screen, "Written in pass two?", author=b, state="drafting", source=QuestionSource.PASS_2)
    other_screen = _question(elsewhere, "On another screen?", author=a, state="drafting")
    _assignment(project, a, screen, "questions-1", now=now)
    lease = _assignment(project, b, screen, "questions-2", status=AssignmentStatus.LEASED, minutes=10, now=now)
    flags = [
        {"question_id": first.pk, "reason": "counting"},
        {"question_id": second.pk, "reason": "counting"},
        {"question_id": ads.pk, "reason": "ads"},
        {"question_id": pass_two.pk, "reason": "ads"},
        {"question_id": other_screen.pk, "reason": "ads"},
    ]
    stage_get("questions-2").apply(assignment=lease, unit=screen, cleaned={"questions": [], "flags": flags}, now=now)
    rows = {q.text: (q.flag_reason, q.flagged_by_id) for q in Question.objects.all()}
    assert rows == {
        first.text: ("counting", lease.pk),
        second.text: ("counting", lease.pk),
        ads.text: ("ads", lease.pk),
        pass_two.text: ("", None),
        other_screen.text: ("", None),
    }
    # and the screen got its split with the questions (pass 2 finishes the screen)
    assert Screen.objects.get(pk=screen.pk).state == ScreenState.ANSWERING


def _flagged_pass_two(project, *, writer="b", review_state=""):
    """A screen whose pass-1 question ``flagged`` a pass-2 writer flagged, with their pass-2 question."""
    now = timezone.now()
    a = member(project, f"{writer}-pass1")
    b = member(project, writer)
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    _assignment(project, a, screen, "questions-1", now=now)
    flagged = _question(screen, f"How many photos ({writer})?", author=a, answers_needed=2)
    submission = _assignment(
        project,
        b,
        screen,
        "questions-2",
        now=now,
        submission={
            "questions": [f"Which tab ({writer})?"],
            "flags": [{"question_id": flagged.pk, "reason": "counting"}],
        },
        review_state=review_state,
    )
    written = _question(
        screen, f"Which tab ({writer})?", author=b, source=QuestionSource.PASS_2, answers_needed=2, origin=submission
    )
    Question.objects.filter(pk=flagged.pk).update(flag_reason="counting", flagged_by=submission)
    return b, submission, flagged, written


def test_pass_two_withdraw_takes_back_this_writers_flags_in_this_project_only(project):
    b, _submission, flagged, written = _flagged_pass_two(project)
    _c, _theirs, their_flag, _ = _flagged_pass_two(project, writer="c")
    elsewhere = ProjectFactory(slug="elsewhere")
    MembershipFactory(project=elsewhere, user=b)
    now = timezone.now()
    (far,) = screens(elsewhere, 1, state=ScreenState.ANSWERING, split="train")
    far_flagged = _question(far, "Far away?", answers_needed=2)
    far_submission = _assignment(elsewhere, b, far, "questions-2", now=now)
    Question.objects.filter(pk=far_flagged.pk).update(flag_reason="ads", flagged_by=far_submission)
    withdrawn = stage_get("questions-2").withdraw(project=project, user=b, requeue=True, now=now)
    assert withdrawn == 1  # b's own pass-2 question, nobody answered it
    rows = {q.pk: (q.flag_reason, q.flagged_by_id) for q in Question.objects.filter(source=QuestionSource.PASS_1)}
    assert rows == {
        flagged.pk: ("", None),
        their_flag.pk: ("counting", _theirs.pk),
        far_flagged.pk: ("ads", far_submission.pk),
    }
    assert Question.objects.get(pk=written.pk).state == QuestionState.DROPPED


def test_pass_two_withdraw_of_some_submissions_leaves_the_others_flags(project):
    b, submission, flagged, written = _flagged_pass_two(project)
    now = timezone.now()
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    kept_flag = _question(screen, "Kept flag?", answers_needed=2)
    kept = _assignment(project, b, screen, "questions-2", now=now)
    kept_written = _question(screen, "Kept question?", author=b, source=QuestionSource.PASS_2, origin=kept)
    Question.objects.filter(pk=kept_flag.pk).update(flag_reason="ads", flagged_by=kept)
    withdrawn = stage_get("questions-2").withdraw(
        project=project, user=b, requeue=True, now=now, assignments=[submission.pk]
    )
    assert withdrawn == 1
    assert Question.objects.get(pk=flagged.pk).flagged_by_id is None
    assert Question.objects.get(pk=kept_flag.pk).flagged_by_id == kept.pk
    assert Question.objects.get(pk=written.pk).state == QuestionState.DROPPED
    assert Question.objects.get(pk=kept_written.pk).state == QuestionState.ANSWERING


def test_pass_one_withdraw_of_some_submissions_drops_only_their_questions(project):
    a = member(project, "a")
    now = timezone.now()
    one, two = screens(project, 2, state=ScreenState.ANSWERING, split="train")
    first = _assignment(project, a, one, "questions-1", now=now)
    second = _assignment(project, a, two, "questions-1", now=now)
    out = _question(one, "Goes?", author=a, origin=first, answers_needed=2)
    stays = _question(two, "Stays?", author=a, origin=second, answers_needed=2)
    event = QualityEvent.objects.create(
        project=project, user=a, stage="questions-1", rule="review", status_after=StandingStatus.NOT_QUALIFIED
    )
    dropped = stage_get("questions-1").withdraw(
        project=project, user=a, requeue=False, now=now, event=event, assignments=[first.pk]
    )
    assert dropped == 1
    out.refresh_from_db()
    assert (out.state, out.drop_reason, out.withdrawn_by_id) == ("dropped", "author-not-qualified", event.pk)
    assert Question.objects.get(pk=stays.pk).state == QuestionState.ANSWERING


def test_pass_two_restore_brings_back_the_questions_and_the_flags_review_did_not_reject(project):
    b, submission, flagged, written = _flagged_pass_two(project)
    now = timezone.now()
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    rejected_flag = _question(screen, "Flagged by a rejected set?", answers_needed=2)
    rejected = _assignment(
        project,
        b,
        screen,
        "questions-2",
        now=now,
        review_state=ReviewState.REJECTED,
        submission={"questions": [], "flags": [{"question_id": rejected_flag.pk, "reason": "ads"}]},
    )
    event = QualityEvent.objects.create(project=project, user=b, stage="questions-2", rule="lead")
    stage = stage_get("questions-2")
    assert stage.withdraw(project=project, user=b, requeue=True, now=now, event=event) == 1
    result = stage.restore(project=project, user=b, event=event, now=now)
    assert result == {"restored": 1, "redone": 0, "kept_out": 0}
    assert Question.objects.get(pk=written.pk).state == QuestionState.ANSWERING
    assert (Question.objects.get(pk=flagged.pk).flag_reason, Question.objects.get(pk=flagged.pk).flagged_by_id) == (
        "counting",
        submission.pk,
    )
    assert Question.objects.get(pk=rejected_flag.pk).flagged_by_id is None
    assert rejected.submission["flags"]  # it names a flag, which stays out


def test_restore_of_pass_one_brings_back_only_this_pass_of_this_decision(project):
    a = member(project, "a")
    now = timezone.now()
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    event = QualityEvent.objects.create(project=project, user=a, stage="questions-1", rule="lead")
    other_event = QualityEvent.objects.create(project=project, user=a, stage="questions-1", rule="lead")
    ours = _question(screen, "Ours?", author=a, answers_needed=2)
    pass_two = _question(screen, "Pass two, same decision?", author=a, answers_needed=2, source=QuestionSource.PASS_2)
    other = _question(screen, "Another decision?", author=a, answers_needed=2)
    questions_drop(
        written_by=Question.objects.filter(pk__in=[ours.pk, pass_two.pk]), reason="author-paused", event=event
    )
    questions_drop(written_by=Question.objects.filter(pk=other.pk), reason="author-paused", event=other_event)
    result = stage_get("questions-1").restore(project=project, user=a, event=event, now=now)
    assert result["restored"] == 1
    states = dict(Question.objects.values_list("text", "state"))
    assert states == {ours.text: "answering", pass_two.text: "dropped", other.text: "dropped"}


def test_a_reverted_rejection_restores_the_sets_questions_and_flags(project):
    _b, submission, flagged, written = _flagged_pass_two(project)
    _c, theirs, their_flag, their_written = _flagged_pass_two(project, writer="c")
    stage = stage_get("questions-2")
    now = timezone.now()
    stage.review_rejected(reviewed=submission, reason="not-natural", now=now)
    stage.review_rejected(reviewed=theirs, reason="not-natural", now=now)
    written.refresh_from_db()
    assert (written.state, written.drop_reason, written.dropped_from) == ("dropped", "review-rejected", "answering")
    assert Question.objects.get(pk=flagged.pk).flagged_by_id is None
    assert stage.review_reverted(reviewed=submission, now=now) == {"restored": 1, "redone": 0, "kept_out": 0}
    assert Question.objects.get(pk=written.pk).state == QuestionState.ANSWERING
    assert Question.objects.get(pk=flagged.pk).flagged_by_id == submission.pk
    # the other writer's rejected set stays rejected
    assert Question.objects.get(pk=their_written.pk).state == QuestionState.DROPPED
    assert Question.objects.get(pk=their_flag.pk).flagged_by_id is None


def test_a_reverted_rejection_keeps_a_question_dropped_for_another_reason(project):
    _b, submission, _flagged, written = _flagged_pass_two(project)
    Question.objects.filter(pk=written.pk).update(
        state="dropped", drop_reason="author-paused", dropped_from="answering"
    )
    assert stage_get("questions-2").review_reverted(reviewed=submission, now=timezone.now())["restored"] == 0
    assert Question.objects.get(pk=written.pk).drop_reason == "author-paused"


def test_flags_come_back_only_where_nobody_flagged_since_on_the_submissions_own_screen(project):
    _b, submission, flagged, _written = _flagged_pass_two(project)
    _c, theirs, their_flag, _ = _flagged_pass_two(project, writer="c")
    Question.objects.update(flag_reason="", flagged_by=None)
    # meanwhile c flagged b's question with another reason; b's submission also names c's screen's question
    Question.objects.filter(pk=flagged.pk).update(flag_reason="ads", flagged_by=theirs)
    submission.submission["flags"].append({"question_id": their_flag.pk, "reason": "ads"})
    pass_two = Question.objects.get(origin=theirs)
    submission.submission["flags"].append({"question_id": pass_two.pk, "reason": "ads"})
    _flags_apply([submission, Assignment(screen_id=flagged.screen_id, submission=None)])
    rows = {q.pk: (q.flag_reason, q.flagged_by_id) for q in Question.objects.all() if q.flag_reason}
    assert rows == {flagged.pk: ("ads", theirs.pk)}
    Question.objects.filter(pk=flagged.pk).update(flag_reason="", flagged_by=None)
    _flags_apply([submission])
    assert Question.objects.get(pk=flagged.pk).flag_reason == "counting"


def _post(**fields):
    from django.http import QueryDict

    post = QueryDict(mutable=True)
    for key, value in fields.items():
        post.setlist(key, value if isinstance(value, list) else [value])
    return post


def test_the_pages_form_state_keeps_what_was_typed_and_the_flags_chosen():
    pass1, pass2 = stage_get("questions-1"), stage_get("questions-2")
    post = _post(question=["A?", " ", "B?"], **{"flag-7": "ads", "flag-8": "", "flag-x": "ads", "flagged-9": "ads"})
    assert pass1.form_state(post=post) == {"questions": ["A?", " ", "B?"]}
    assert pass2.form_state(post=post) == {
        "questions": ["A?", " ", "B?"],
        "flags": [{"question_id": 7, "reason": "ads"}],
    }
    # the refusal of an empty set names the field, in the stage's words
    with pytest.raises(ApplicationError) as err:
        pass2.form_body(post=_post(question=[" "], **{"flag-7": "ads"}), assignment=None)
    assert (err.value.message, err.value.field) == (
        "Write at least one question, or choose “Nothing to ask”.",
        "questions",
    )
    assert pass2.form_body(post=_post(action="nothing", **{"flag-7": "ads"}), assignment=None) == {
        "questions": [],
        "flags": [{"question_id": 7, "reason": "ads"}],
    }


def test_the_page_shows_the_typed_questions_up_to_the_cap_and_the_flags_chosen():
    pass1, pass2 = stage_get("questions-1"), stage_get("questions-2")
    limits = {"max_questions": 3}
    previous = [{"id": 7, "text": "How many?"}, {"id": 8, "text": "What title?"}]
    payload = {"previous_questions": previous}
    typed = {"questions": ["A?", 5, "B?", "C?"], "flags": [{"question_id": 8, "reason": "ads"}, "junk"]}
    assert pass1.page_context(payload={}, state={"questions": ["A?"]}, limits=limits) == {
        "questions": ["A?", "", ""],
        "previous_questions": [],
    }
    context = pass2.page_context(payload=payload, state=typed, limits=limits)
    assert context == {
        "questions": ["A?", "", "B?"],
        "previous_questions": ["How many?", "What title?"],
        "flag_questions": [
            {"id": 7, "text": "How many?", "flag": ""},
            {"id": 8, "text": "What title?", "flag": "ads"},
        ],
        "flag_reasons": pass2.review_reasons,
    }
    # hostile or empty state: blank fields, no flags
    for state in ({}, {"questions": "A?", "flags": "ads"}, {"questions": None, "flags": None}):
        context = pass2.page_context(payload={"previous_questions": None}, state=state, limits=limits)
        assert context["questions"] == ["", "", ""] and context["flag_questions"] == []


def test_draft_lines_number_the_questions_typed():
    stage = stage_get("questions-1")
    assert stage.draft_lines(draft={"questions": ["A?", " ", 3, "B?"]}) == [("Question 1", "A?"), ("Question 4", "B?")]
    assert stage.draft_lines(draft={"questions": "A?"}) == []
    assert stage.draft_lines(draft={}) == []


def test_pending_counts_the_screens_waiting_in_each_pass():
    screens_by_state = {"questions-1": 4, "questions-2": 2, "answering": 9}
    assert stage_get("questions-1").pending(project=None, screens=screens_by_state, questions={}) == 4
    assert stage_get("questions-2").pending(project=None, screens=screens_by_state, questions={}) == 2
    assert stage_get("questions-2").pending(project=None, screens={}, questions={}) == 0


def test_pass_two_checks_against_the_screens_questions_but_its_own(project):
    now = timezone.now()
    project.questions_pass2_cap = 2
    project.save()
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_2)
    first = _assignment(project, a, screen, "questions-1", now=now)
    asked = _question(screen, "From pass one?", author=a, state="drafting", origin=first)
    lease = _assignment(project, b, screen, "questions-2", status=AssignmentStatus.LEASED, minutes=10, now=now)
    own = _question(
        screen, "Own, on a re-check?", author=b, state="drafting", source=QuestionSource.PASS_2, origin=lease
    )
    context = stage_get("questions-2").submit_context(assignment=lease)
    assert context["asked"] == [asked.text]
    assert context["flaggable"] == {asked.pk: asked.text}
    assert context["flag_reasons"] is stage_get("questions-2").review_reasons
    assert context["limits"] == {"max_questions": 2, "text_max": 1000}
    assert context["assignment"] == lease
    assert stage_get("questions-1").submit_context(assignment=lease)["asked"] == []
    payload = stage_get("questions-2").payload_extra(assignment=lease)
    assert payload == {
        "max_questions": 2,
        "previous_questions": [{"id": asked.pk, "text": asked.text}, {"id": own.pk, "text": own.text}],
    }


def test_questions_restore_counts_every_question_kept_out_wherever_it_is_in_the_list(
    project, django_assert_num_queries
):
    a = member(project, "a")
    (closed,) = screens(project, 1, state=ScreenState.EXCLUDED, exclusion_reason="non-english")
    (answering,) = screens(project, 1, state=ScreenState.ANSWERING, split="validation")
    (other,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")

    def dropped(screen, text, was="drafting", needed=0):
        return _question(
            screen,
            text,
            author=a,
            state="dropped",
            drop_reason="author-paused",
            dropped_from=was,
            answers_needed=needed,
        )

    # the kept-out questions come first (by id), then the ones that come back
    first_out, second_out = dropped(closed, "Out one?", "answering", 2), dropped(closed, "Out two?", "answering", 2)
    back = dropped(answering, "Back with the split's answers?")
    other_back = dropped(other, "Back on another screen?")
    # a live question that somehow kept an old quality reason is not touched (only dropped ones are)
    stale = _question(answering, "Answered, with an old reason?", author=a, state="answered", answers_needed=2)
    Question.objects.filter(pk=stale.pk).update(drop_reason="author-paused")
    # one read (each screen with its project) and one update per target (state and answers needed:
    # the validation and train splits need different numbers of answers)
    assert project.answers_needed("validation") != project.answers_needed("train")
    with django_assert_num_queries(3):
        result = questions_restore(Question.objects.filter(author=a))
    assert result == {"restored": 2, "redone": 0, "kept_out": 2}
    rows = {q.pk: (q.state, q.answers_needed) for q in Question.objects.all()}
    assert rows[first_out.pk] == rows[second_out.pk] == ("dropped", 2)
    assert rows[back.pk] == ("answering", project.answers_needed("validation"))
    assert rows[other_back.pk] == ("answering", project.answers_needed("train"))
    assert rows[stale.pk] == ("answered", 2)


def test_flags_come_back_only_on_the_pass_one_questions_the_submission_named(project):
    _b, submission, flagged, written = _flagged_pass_two(project)
    untouched = _question(flagged.screen, "Another pass-1 question?", answers_needed=2)
    Question.objects.update(flag_reason="", flagged_by=None)
    # the submission also names its own pass-2 question (only pass-1 questions take a flag)
    submission.submission["flags"].append({"question_id": written.pk, "reason": "ads"})
    _flags_apply([submission])
    rows = {q.pk: (q.flag_reason, q.flagged_by_id) for q in Question.objects.all()}
    assert rows == {
        flagged.pk: ("counting", submission.pk),
        untouched.pk: ("", None),
        written.pk: ("", None),
    }


def test_pass_two_restore_reapplies_only_this_writers_flags_in_this_project(project):
    b, submission, flagged, _written = _flagged_pass_two(project)
    c, _theirs, their_flag, _ = _flagged_pass_two(project, writer="c")
    # b also wrote pass 2 in another project, and c's flags were taken back when c was paused
    elsewhere = ProjectFactory(slug="elsewhere")
    MembershipFactory(project=elsewhere, user=b)
    now = timezone.now()
    (far,) = screens(elsewhere, 1, state=ScreenState.ANSWERING, split="train")
    far_question = _question(far, "Far away?", answers_needed=2)
    _assignment(
        elsewhere,
        b,
        far,
        "questions-2",
        now=now,
        submission={"questions": [], "flags": [{"question_id": far_question.pk, "reason": "ads"}]},
    )
    stage = stage_get("questions-2")
    stage.withdraw(project=project, user=c, requeue=True, now=now)
    event = QualityEvent.objects.create(project=project, user=b, stage="questions-2", rule="lead")
    stage.withdraw(project=project, user=b, requeue=True, now=now, event=event)
    stage.restore(project=project, user=b, event=event, now=now)
    assert Question.objects.get(pk=flagged.pk).flagged_by_id == submission.pk
    assert Question.objects.get(pk=their_flag.pk).flagged_by_id is None
    assert Question.objects.get(pk=far_question.pk).flagged_by_id is None


def test_pass_two_apply_refuses_only_the_writer_who_submitted_pass_one_of_this_screen(project):
    now = timezone.now()
    a, b = member(project, "a"), member(project, "b")
    screen, elsewhere = screens(project, 2, state=ScreenState.QUESTIONS_2)
    _assignment(project, a, screen, "questions-1", now=now)
    # b submitted pass 1 of another screen, judged this screen in pre-filtering, and let a pass-1 lease of it lapse
    _assignment(project, b, elsewhere, "questions-1", now=now)
    _assignment(project, b, screen, "prefilter", now=now)
    _assignment(project, b, screen, "questions-1", status=AssignmentStatus.EXPIRED, minutes=-1, now=now)
    lease = _assignment(project, b, screen, "questions-2", status=AssignmentStatus.LEASED, minutes=10, now=now)
    # a body without flags (the serializer always gives them) is fine too
    stage_get("questions-2").apply(assignment=lease, unit=screen, cleaned={"questions": ["Which tab?"]}, now=now)
    assert Screen.objects.get(pk=screen.pk).state == ScreenState.ANSWERING
    assert list(Question.objects.filter(screen=screen).values_list("text", flat=True)) == ["Which tab?"]


def test_pass_two_queue_leaves_out_what_the_writer_skipped(project):
    now = timezone.now()
    b = member(project, "b")
    kept, skipped = screens(project, 2, state=ScreenState.QUESTIONS_2)
    _assignment(project, b, skipped, "questions-2", status=AssignmentStatus.SKIPPED, now=now)
    assert list(stage_get("questions-2").queue(project=project, user=b, now=now)) == [kept]


def test_the_serializers_work_without_the_screens_context():
    # the stage always gives ``asked``, ``flaggable`` and ``flag_reasons``; without them nothing is asked
    # yet, no question can be flagged and no reason is known
    pass2 = stage_get("questions-2").submit_serializer
    bare = pass2(data={"questions": ["A?"]}, context={"limits": {"max_questions": 3}})
    assert bare.is_valid(), bare.errors
    flagged = pass2(
        data={"questions": [], "flags": [{"question_id": 7, "reason": "ads"}]},
        context={"limits": {"max_questions": 3}},
    )
    assert not flagged.is_valid()
    assert flagged.errors["flags"] == {"0": ["Not a pass-1 question of this screen."]}
    no_reasons = pass2(
        data={"questions": [], "flags": [{"question_id": 7, "reason": "ads"}]},
        context={"limits": {"max_questions": 3}, "flaggable": {7: "Q?"}},
    )
    assert not no_reasons.is_valid()
    assert no_reasons.errors["flags"] == {"0": ["Unknown reason; one of ."]}
