"""Question passes: caps, two different writers, finalisation into answering or no-questions."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.exceptions import ApplicationError
from annotation.models import Assignment, Question, QuestionSource, QuestionState, ScreenState
from pipeline.engine import assignment_next, assignment_payload, assignment_submit, split_for, stage_get
from tests.factories import ProjectFactory
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
    from django.utils import timezone

    from pipeline.engine import stage_get

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
def test_pausing_a_writer_drops_only_their_unanswered_pass_one_questions(project, requeue):
    # given a writer's questions in every state an answer can leave them, and questions of others
    writer, other = member(project, "writer"), member(project, "other")
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    elsewhere = screens(ProjectFactory(slug="elsewhere"), 1, state=ScreenState.ANSWERING, split="train")[0]

    def asked(text, *, author=writer, state=QuestionState.ANSWERING, done=0, source=QuestionSource.PASS_1, at=screen):
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
        )

    waiting = asked("Nobody answered this yet?")
    drafting = asked("Still a draft?", state=QuestionState.DRAFTING)
    started = asked("One answer so far?", done=1)
    almost = asked("Two answers so far?", done=2)
    answered = asked("All three answers?", state=QuestionState.ANSWERED, done=3)
    pass_two = asked("Written in pass two?", source=QuestionSource.PASS_2)
    theirs = asked("Another writer's?", author=other)
    other_project = asked("In another project?", at=elsewhere)
    # when the writer is withdrawn from pass 1 (a rule paused them)
    withdrawn = stage_get("questions-1").withdraw(project=project, user=writer, requeue=requeue, now=timezone.now())
    # then the questions nobody has answered yet leave the release; answered work, even one answer, stays
    states = {
        q.text: (q.state, q.drop_reason)
        for q in Question.objects.filter(
            pk__in=[x.pk for x in (waiting, drafting, started, almost, answered, pass_two, theirs, other_project)]
        )
    }
    dropped = (QuestionState.DROPPED, "author-paused")
    assert states == {
        waiting.text: dropped,
        drafting.text: dropped,
        started.text: (QuestionState.ANSWERING, ""),
        almost.text: (QuestionState.ANSWERING, ""),
        answered.text: (QuestionState.ANSWERED, ""),
        pass_two.text: (QuestionState.ANSWERING, ""),
        theirs.text: (QuestionState.ANSWERING, ""),
        other_project.text: (QuestionState.ANSWERING, ""),
    }
    assert withdrawn == 2
