"""Answers: pool, never the author, never twice, per-split counts, element validation."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, PermissionDeniedError
from annotation.models import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    AssistUse,
    Candidate,
    ControlResult,
    GoldItem,
    Membership,
    Purpose,
    QualityEvent,
    Question,
    QuestionState,
    Standing,
    StandingStatus,
    Suggestion,
    SuggestionStatus,
    SuggestionUse,
)
from pipeline.decisions.decide import REASON_AUTHOR_PAUSED
from pipeline.engine import assignment_next, assignment_payload, assignment_submit
from pipeline.quality.gold import gold_item_create
from pipeline.stages.answers import Answers, answers_restore, answers_withdraw
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


def answered(**over):
    body = {
        "question": "What is the title?",
        "verdict": "answered",
        "elements": [{"vh_index": 1, "text": "Label 1"}, {"bounds": [0, 0, 100, 50], "text": "Logo"}],
        "full_answer": "The title is Label 1.",
    }
    body.update(over)
    return body


def _lease(project, user, question, *, minutes=10, status=AssignmentStatus.LEASED, now=None):
    """An answers assignment of ``user`` on ``question`` made directly (not by ``next``): ``minutes``
    from ``now`` until it runs out; a submitted one has its submission time."""
    now = now or timezone.now()
    return Assignment.objects.create(
        project=project,
        annotator=user,
        stage="answers",
        screen=question.screen,
        question=question,
        status=status,
        lease_expires_at=now + timedelta(minutes=minutes),
        submitted_at=now if status == AssignmentStatus.SUBMITTED else None,
    )


def test_answer_is_stored_with_ordered_elements(project):
    author, a = member(project, "author"), member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen, author=author)
    lease = assignment_next(project=project, user=a, stage="answers")
    payload = assignment_payload(assignment=lease)
    assert payload["question"] == {"id": question.pk, "text": "What is shown?"}
    assert [c["vh_index"] for c in payload["screen"]["candidates"]] == [1, 2, 3]
    assignment_submit(assignment_id=lease.pk, user=a, data=answered(question="  What is the  title? "))
    answer = Answer.objects.get()
    assert (answer.question_text, answer.verdict, answer.annotator) == ("What is the title?", "answered", a)
    elements = list(AnswerElement.objects.filter(answer=answer).order_by("position"))
    assert [(e.vh_index, e.bounds, e.text) for e in elements] == [
        (1, [10, 10, 500, 80], "Label 1"),
        (None, [0, 0, 100, 50], "Logo"),
    ]
    question.refresh_from_db()
    assert (question.answers_done, question.state) == (1, QuestionState.ANSWERED)


def test_candidate_text_defaults_to_the_vh_text(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    assignment_submit(assignment_id=lease.pk, user=a, data=answered(elements=[{"vh_index": 2}]))
    assert AnswerElement.objects.get().text == f"Label 2 of {screen.rico_id}"


def test_three_different_answerers_for_validation_and_never_the_author(project):
    author = member(project, "author")
    answerers = [member(project, n) for n in ("a", "b", "c", "d")]
    (screen,) = screens(project, 1)
    question = answering_question(screen, author=author, needed=3)
    assert assignment_next(project=project, user=author, stage="answers") is None
    leases = [assignment_next(project=project, user=u, stage="answers") for u in answerers[:3]]
    assert {lease.question_id for lease in leases} == {question.pk}
    # three live leases fill the three slots: the fourth gets nothing
    assert assignment_next(project=project, user=answerers[3], stage="answers") is None
    for user, lease in zip(answerers, leases, strict=False):
        assignment_submit(assignment_id=lease.pk, user=user, data=answered())
        # never twice by one annotator
        assert assignment_next(project=project, user=user, stage="answers") is None
    question.refresh_from_db()
    assert (question.answers_done, question.state) == (3, QuestionState.ANSWERED)


def test_only_the_answer_pool_answers(project):
    outside_pool = member(project, "writer", pool=False)
    (screen,) = screens(project, 1)
    answering_question(screen)
    with pytest.raises(PermissionDeniedError):
        assignment_next(project=project, user=outside_pool, stage="answers")


@pytest.mark.parametrize("verdict", ["invalid", "not_answerable"])
def test_invalid_and_not_answerable_need_no_elements(project, verdict):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    assignment_submit(
        assignment_id=lease.pk,
        user=a,
        data={"question": "What?", "verdict": verdict, "elements": [], "full_answer": ""},
    )
    assert Answer.objects.get().verdict == verdict
    question.refresh_from_db()
    assert question.state == QuestionState.ANSWERED


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"question": ""}, "question"),
        ({"verdict": "maybe"}, "verdict"),
        ({"elements": []}, "elements"),
        ({"elements": "Label 1"}, "elements"),
        ({"elements": [{"vh_index": 99, "text": "x"}]}, "elements[0].vh_index"),
        ({"elements": [{"vh_index": 1, "text": "a"}, {"vh_index": 1, "text": "b"}]}, "elements[1].vh_index"),
        ({"elements": [{"vh_index": 1, "bounds": [0, 0, 5, 5], "text": "x"}]}, "elements[0]"),
        ({"elements": [{"text": "x"}]}, "elements[0]"),
        (
            {"elements": [{"vh_index": 1, "text": "ok"}, {"bounds": [0, 0, 1081, 50], "text": "x"}]},
            "elements[1].bounds",
        ),
        ({"elements": [{"bounds": [10, 10, 10, 50], "text": "x"}]}, "elements[0].bounds"),
        ({"elements": [{"bounds": [-1, 0, 10, 50], "text": "x"}]}, "elements[0].bounds"),
        ({"elements": [{"bounds": [0, 0, 10], "text": "x"}]}, "elements[0].bounds"),
        ({"elements": [{"bounds": [0, 0, 10, 10.5], "text": "x"}]}, "elements[0].bounds"),
        ({"elements": [{"bounds": [0, 0, 10, 10], "text": "  "}]}, "elements[0].text"),
        ({"elements": [{"bounds": [0, 0, 10, 10]}]}, "elements[0].text"),
        ({"elements": [{"bounds": [0, 0, 10, 10], "text": "x", "score": 1}]}, "elements[0].score"),
        ({"full_answer": ""}, "full_answer"),
        ({"verdict": "invalid"}, "elements"),
    ],
)
def test_bad_answers_name_the_field_and_store_nothing(project, over, field):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=answered(**over))
    assert err.value.field == field
    assert not Answer.objects.exists()
    question.refresh_from_db()
    lease.refresh_from_db()
    assert question.answers_done == 0 and lease.status == AssignmentStatus.LEASED


def test_a_late_answer_to_a_full_question_is_refused_and_kept_as_draft(project):
    # given A's lease ran out and B answered the only slot
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    answering_question(screen)
    late = assignment_next(project=project, user=a, stage="answers")
    late.lease_expires_at = late.created_at
    late.save()
    mine = assignment_next(project=project, user=b, stage="answers")
    assignment_submit(assignment_id=mine.pk, user=b, data=answered())
    # when A submits
    with pytest.raises(ConflictError):
        assignment_submit(assignment_id=late.pk, user=a, data=answered(full_answer="Mine."))
    # then nothing is stored for A but the content is kept
    late.refresh_from_db()
    assert late.status == AssignmentStatus.EXPIRED and late.draft["full_answer"] == "Mine."
    assert Answer.objects.count() == 1


def test_a_late_answer_is_refused_while_live_leases_hold_every_slot(project):
    # given a question needing two answers: A's lease ran out, then B and C leased the two slots
    a, b, c = member(project, "a"), member(project, "b"), member(project, "c")
    (screen,) = screens(project, 1)
    question = answering_question(screen, needed=2)
    late = assignment_next(project=project, user=a, stage="answers")
    late.lease_expires_at = late.created_at
    late.save()
    held = [assignment_next(project=project, user=u, stage="answers") for u in (b, c)]
    assert {lease.question_id for lease in held} == {question.pk}
    late.refresh_from_db()
    assert late.status == AssignmentStatus.EXPIRED
    # when A submits (no answer is stored yet: only the live leases fill the question)
    with pytest.raises(ConflictError):
        assignment_submit(assignment_id=late.pk, user=a, data=answered(full_answer="Mine."))
    # then nothing is stored for A, and B and C still answer in their slots
    assert not Answer.objects.exists()
    for user, lease in zip((b, c), held, strict=True):
        assignment_submit(assignment_id=lease.pk, user=user, data=answered())
    question.refresh_from_db()
    assert (question.answers_done, question.state) == (2, QuestionState.ANSWERED)


def _gold_answers_item(project, lead):
    """A gold item of the answers stage: the right answer is candidate 1 of a screen."""
    (screen,) = screens(project, 1)
    question = answering_question(screen, text="What does the first label say?")
    question.state = QuestionState.KEPT  # gold only: no real work waits on it
    question.save(update_fields=["state"])
    right = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    return gold_item_create(project=project, stage="answers", screen=screen, question=question, answer=right, user=lead)


@pytest.mark.parametrize("purpose", [Purpose.CONTROL, Purpose.QUALIFICATION])
@pytest.mark.parametrize(
    ("verdict", "elements", "correct"),
    [
        ("answered", [{"vh_index": 1}], True),  # the gold's element
        ("answered", [{"vh_index": 2}], False),  # the right verdict, the wrong element
        ("answered", [{"vh_index": 1}, {"vh_index": 3}], True),  # the gold's element and an extra (release rule)
        ("not_answerable", [], False),  # the wrong verdict
    ],
)
def test_a_gold_item_is_scored_against_the_gold_answer(project, lead, purpose, verdict, elements, correct):
    # given one gold item of the answers stage, and an annotator who gets it as a control item
    # (active, every lease a control item) or as a qualification item (new to the stage)
    item = _gold_answers_item(project, lead)
    (waiting,) = screens(project, 1)
    answering_question(waiting)  # real work waits too (a control item is served only then)
    project.control_rate = project.control_rate_new = 1.0
    project.save(update_fields=["control_rate", "control_rate_new"])
    a = member(project, "a")
    if purpose == Purpose.CONTROL:
        Standing.objects.create(project=project, user=a, stage="answers", status=StandingStatus.ACTIVE)
    lease = assignment_next(project=project, user=a, stage="answers")
    assert (lease.purpose, lease.gold_id) == (purpose, item.pk)
    # when they answer it
    body = answered(question=item.question.text, verdict=verdict, elements=elements)
    if verdict != "answered":
        body.update(elements=[], full_answer="")
    assignment_submit(assignment_id=lease.pk, user=a, data=body)
    # then it scores against the gold answer: the verdict alone is not enough
    result = ControlResult.objects.get(assignment=lease)
    assert (result.purpose, result.correct) == (purpose, correct)
    assert bool(result.feedback["why"]) is not correct


@pytest.mark.parametrize("full_answer", ["", "   ", None, "missing"])
def test_a_missing_full_answer_says_what_to_write(project, full_answer):
    # given an answer without its full answer (absent, null, blank)
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    body = answered(full_answer=full_answer)
    if full_answer == "missing":
        del body["full_answer"]
    # when it is submitted, then the refusal says what to do, not "This must be text."
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=body)
    assert (err.value.field, err.value.message) == ("full_answer", "Write the answer as a full sentence.")


# --- the refusals' words, the box's edges, what is stored (mutation testing, docs/mutation.md) -----


@pytest.mark.parametrize(
    ("elements", "field", "message"),
    [
        (
            [{"vh_index": 99, "text": "x"}],
            "elements[0].vh_index",
            "No candidate element with this vh_index on this screen.",
        ),
        (
            [{"vh_index": 1, "text": "a"}, {"vh_index": 1, "text": "b"}],
            "elements[1].vh_index",
            "This candidate is already in the answer.",
        ),
        ([{"text": "x"}], "elements[0]", "Give either a vh_index (a candidate) or bounds (a drawn box)."),
        (
            [{"bounds": [0, 10, 10, 10], "text": "x"}],
            "elements[0].bounds",
            "The box must have a positive area (right > left, bottom > top).",
        ),
        (
            [{"bounds": [0, 0, 10, 1921], "text": "x"}],
            "elements[0].bounds",
            "The box must lie inside the 1080x1920 screenshot.",
        ),
        ([{"bounds": [0, 0, 10, 10], "text": ""}], "elements[0].text", "This may not be empty."),
        ([{"bounds": [0, 0, 10, 10], "text": 7}], "elements[0].text", "This must be text."),
        ([], "elements", "An answer needs at least one element (a candidate or a drawn box)."),
    ],
)
def test_a_refused_element_says_what_is_wrong(project, elements, field, message):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    assert (screen.width, screen.height) == (1080, 1920)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=answered(elements=elements))
    assert (err.value.field, str(err.value.message)) == (field, message)


@pytest.mark.parametrize("bounds", [[0, 0, 1, 1], [0, 0, 1080, 1920], [1079, 1919, 1080, 1920]])
def test_a_box_may_touch_the_screenshots_edges(project, bounds):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    assignment_submit(assignment_id=lease.pk, user=a, data=answered(elements=[{"bounds": bounds, "text": "x"}]))
    assert AnswerElement.objects.get().bounds == bounds


@pytest.mark.parametrize(
    "bounds",
    [
        [0, 0, 10, 10, 10],
        [0, 0, 10],
        ["0", "0", "10", "10"],
        [0.0, 0, 10, 10],
        5,  # not a list at all
        "abcd",
        {"a": 1, "b": 2, "c": 3, "d": 4},
    ],
)
def test_a_box_is_four_whole_numbers(project, bounds):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=answered(elements=[{"bounds": bounds, "text": "x"}]))
    assert err.value.field == "elements[0].bounds"
    assert not Answer.objects.exists()


def test_only_the_candidates_asked_for_are_read(project):
    # given a screen whose candidate 3 is asked for, and an answer naming candidates 3 then 1
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    assignment_submit(assignment_id=lease.pk, user=a, data=answered(elements=[{"vh_index": 3}, {"vh_index": 1}]))
    # then each element is its own candidate, in the order given
    assert [(e.vh_index, e.text) for e in AnswerElement.objects.order_by("position")] == [
        (3, f"Label 3 of {screen.rico_id}"),
        (1, f"Label 1 of {screen.rico_id}"),
    ]


def test_an_answer_keeps_its_assignment_full_answer_and_box_corners(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    body = answered(elements=[{"bounds": [5, 7, 100, 50], "text": "Logo"}], full_answer="It shows the logo.")
    assignment_submit(assignment_id=lease.pk, user=a, data=body)
    answer = Answer.objects.get()
    assert (answer.assignment_id, answer.full_answer) == (lease.pk, "It shows the logo.")
    element = AnswerElement.objects.get()
    assert (element.left, element.top, element.right, element.bottom) == (5, 7, 100, 50)


@pytest.mark.parametrize(
    ("full_answer", "stored"), [(None, ""), ("", ""), ("It cannot be told.", "It cannot be told.")]
)
def test_an_invalid_verdict_stores_no_elements_and_its_optional_sentence(project, full_answer, stored):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    assignment_submit(
        assignment_id=lease.pk,
        user=a,
        data={"question": "What?", "verdict": "invalid", "elements": [], "full_answer": full_answer},
    )
    answer = Answer.objects.get()
    assert (answer.verdict, answer.full_answer) == ("invalid", stored)
    assert not AnswerElement.objects.exists()


@pytest.mark.parametrize(
    ("state", "done", "needed"),
    [(QuestionState.ANSWERING, 2, 2), (QuestionState.DROPPED, 0, 2)],
    ids=["full", "dropped while leased"],
)
def test_a_submit_to_a_question_that_takes_no_more_answers_is_refused(project, state, done, needed):
    # given a lease on a question, which then filled up or was dropped (by a lead, a withdrawal)
    a = member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen, needed=needed)
    lease = assignment_next(project=project, user=a, stage="answers")
    reason = {"drop_reason": "a lead dropped it"} if state == QuestionState.DROPPED else {}
    Question.objects.filter(pk=question.pk).update(state=state, answers_done=done, **reason)
    # when the answer comes, then it is refused with the reason
    with pytest.raises(ConflictError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=answered())
    assert str(err.value.message) == "This question already has all its answers."
    assert not Answer.objects.exists()


def test_the_author_cannot_answer_even_with_a_lease_made_by_hand(project):
    # given a lease on the author's own question (not one `next` gives: made directly)
    author = member(project, "author")
    (screen,) = screens(project, 1)
    question = answering_question(screen, author=author)
    lease = _lease(project, author, question)
    with pytest.raises(PermissionDeniedError) as err:
        assignment_submit(assignment_id=lease.pk, user=author, data=answered())
    assert str(err.value.message) == "You wrote this question; somebody else answers it."
    assert not Answer.objects.exists()


def test_the_queue_holds_the_projects_open_questions_that_live_leases_do_not_fill(project):
    # given, in this project: a question needing 2 with one live lease (open), one needing 1 with a
    # live lease (full), one needing 1 whose lease ran out (open), a finished one, the user's own;
    # and an open question in another project
    stage = Answers()
    now = timezone.now()
    user, other = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    half = answering_question(screen, needed=2, text="Half?")
    full = answering_question(screen, needed=1, text="Full?")
    lapsed = answering_question(screen, needed=1, text="Lapsed?")
    done = answering_question(screen, needed=1, text="Done?")
    Question.objects.filter(pk=done.pk).update(state=QuestionState.ANSWERED, answers_done=1)
    answering_question(screen, author=user, text="Mine?")
    for question, minutes in ((half, 10), (full, 10), (lapsed, -1)):
        _lease(project, other, question, minutes=minutes, now=now)
    elsewhere = ProjectFactory(slug="elsewhere")
    (far,) = screens(elsewhere, 1)
    answering_question(far, text="Elsewhere?")
    # then the queue is the open ones of this project, in queue order
    queued = list(stage.queue(project=project, user=user, now=now))
    assert {q.text for q in queued} == {"Half?", "Lapsed?"}
    assert [q.pk for q in queued] == [q.pk for q in sorted(queued, key=lambda q: (q.queue_key, q.pk))]
    # and a question the user already holds is not theirs again
    _lease(project, user, lapsed, minutes=0, status=AssignmentStatus.SUBMITTED, now=now)
    assert [q.text for q in stage.queue(project=project, user=user, now=now)] == ["Half?"]


def test_open_to_checks_the_state_the_author_the_users_own_work_and_the_slots(project):
    stage = Answers()
    now = timezone.now()
    author, a, b = member(project, "author"), member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    question = answering_question(screen, author=author, needed=2)
    assert stage.open_to(unit=question, user=a, now=now)
    assert not stage.open_to(unit=question, user=author, now=now)

    def lease(user, *, minutes=10, status=AssignmentStatus.LEASED):
        return _lease(project, user, question, minutes=minutes, status=status, now=now)

    # a's own live lease: not open to a again, but open to a when checking that very lease
    own = lease(a)
    assert not stage.open_to(unit=question, user=a, now=now)
    assert stage.open_to(unit=question, user=a, now=now, own=own)
    # b's live lease and a's fill both slots: not open to a third, nor to a's lease beyond them
    lease(b)
    assert not stage.open_to(unit=question, user=author, now=now)
    c = member(project, "c")
    assert not stage.open_to(unit=question, user=c, now=now)
    assert stage.open_to(unit=question, user=a, now=now, own=own)  # a's own lease keeps its slot
    # a lapsed lease takes no slot (only answers leases have a question: a database constraint)
    Assignment.objects.filter(annotator=b).update(lease_expires_at=now - timedelta(minutes=1))
    assert stage.open_to(unit=question, user=c, now=now)
    # a submitted answer of c's means c never answers again
    lease(c, status=AssignmentStatus.SUBMITTED, minutes=-5)
    assert not stage.open_to(unit=question, user=c, now=now)
    # a question no longer answering is open to nobody
    question.state = QuestionState.ANSWERED
    assert not stage.open_to(unit=question, user=member(project, "d"), now=now)


def test_gold_score_words_and_boxes():
    stage = Answers()
    project = ProjectFactory.build(agreement_use_boxes=True)
    box = {"text": "Save", "bounds": [0, 0, 100, 50]}
    elsewhere = {"text": "Save", "bounds": [500, 900, 600, 950]}
    answered_gold = {"verdict": "answered", "elements": [box]}
    assert stage.gold_score(given={"verdict": "invalid"}, gold=answered_gold, project=project) == (
        False,
        "The verdict was invalid, the right one is answered.",
    )
    # verdicts without elements: the verdict alone decides, the elements may be absent
    assert stage.gold_score(
        given={"verdict": "not_answerable"}, gold={"verdict": "not_answerable"}, project=project
    ) == (
        True,
        "",
    )
    assert stage.gold_score(given={"verdict": "answered", "elements": [box]}, gold=answered_gold, project=project) == (
        True,
        "",
    )
    # the same text in another place does not agree when the project compares boxes
    assert stage.gold_score(
        given={"verdict": "answered", "elements": [elsewhere]}, gold=answered_gold, project=project
    ) == (
        False,
        "The elements do not agree with the right answer (texts, or boxes where they are compared).",
    )
    assert stage.gold_score(given={"verdict": "answered"}, gold=answered_gold, project=project)[0] is False


def test_gold_answer_keeps_the_verdict_elements_and_question():
    stage = Answers()
    element = {"vh_index": 1, "text": "Save", "bounds": [0, 0, 10, 10]}
    submission = {"verdict": "answered", "elements": [element], "question": "What?", "full_answer": "Save."}
    kept = stage.gold_answer(submission=submission)
    assert kept == {"verdict": "answered", "elements": [element], "question": "What?"}
    assert kept["elements"][0] is not element  # a copy: the submission may change later
    assert stage.gold_answer(submission={"verdict": "invalid"}) == {
        "verdict": "invalid",
        "elements": [],
        "question": "",
    }


def test_limits_and_the_suggestion_in_the_payload(project):
    assert Answers().limits(project=project) == {"text_max": 1000, "full_answer_max": 5000, "elements_max": 50}
    a = member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    assert assignment_payload(assignment=lease)["suggestion"] is None
    project.assist_url = "http://127.0.0.1:9/"
    project.save(update_fields=["assist_url"])
    Suggestion.objects.create(
        project=project,
        stage="answers",
        screen=screen,
        question=question,
        status=SuggestionStatus.OK,
        result={"elements": [{"vh_index": 1, "text": "Label 1", "bounds": [10, 10, 500, 80], "score": 0.9}]},
        model_version="baseline-1",
    )
    lease.refresh_from_db()
    shown = assignment_payload(assignment=lease)["suggestion"]
    assert shown["model_version"] == "baseline-1" and shown["elements"][0]["vh_index"] == 1


def test_a_site_admin_outside_the_pool_may_answer(project):
    admin = UserFactory(username="root", is_superuser=True)
    Answers().check_access(user=admin, membership=None)
    with pytest.raises(PermissionDeniedError):
        Answers().check_access(
            user=member(project, "w", pool=False), membership=Membership.objects.get(user__username="w")
        )


def test_control_items_wait_on_answering_questions_only(project, lead):
    # given a gold item of the answers stage and no question waiting for answers
    item = _gold_answers_item(project, lead)
    project.control_rate = project.control_rate_new = 1.0
    project.save(update_fields=["control_rate", "control_rate_new"])
    a = member(project, "a")
    Standing.objects.create(project=project, user=a, stage="answers", status=StandingStatus.ACTIVE)
    # then no control item is served (nothing real waits), whatever the rate
    assert assignment_next(project=project, user=a, stage="answers") is None
    (screen,) = screens(project, 1)
    answering_question(screen)
    assert assignment_next(project=project, user=a, stage="answers").gold_id == item.pk


# --- withdrawing answers and bringing them back ------------------------------------------------


def _answers_of(project, question, users):
    """Each of ``users`` answers ``question`` through the engine; the answers, in order."""
    for user in users:
        lease = assignment_next(project=project, user=user, stage="answers")
        assert lease.question_id == question.pk
        assignment_submit(assignment_id=lease.pk, user=user, data=answered())
    return list(Answer.objects.filter(question=question).order_by("pk"))


def test_withdrawing_requeues_each_question_by_its_withdrawn_answers_never_below_zero(project):
    # given a question with three answers, and one counted done once only (a lead's correction)
    users = [member(project, n) for n in "abc"]
    (screen,) = screens(project, 1)
    question = answering_question(screen, needed=3)
    answers = _answers_of(project, question, users)
    # nothing to withdraw: 0, and nothing changes
    assert answers_withdraw(Answer.objects.none(), reason="withdrawn", requeue=True) == 0
    # when one of the three is withdrawn, the question waits for one more
    assert answers_withdraw(Answer.objects.filter(pk=answers[0].pk), reason="withdrawn", requeue=True) == 1
    question.refresh_from_db()
    assert (question.answers_done, question.state) == (2, QuestionState.ANSWERING)
    # an answer already withdrawn is not withdrawn twice
    assert answers_withdraw(Answer.objects.filter(pk=answers[0].pk), reason="withdrawn", requeue=True) == 0
    # when the two others go while the count says one, the count stops at zero
    Question.objects.filter(pk=question.pk).update(answers_done=1)
    assert (
        answers_withdraw(Answer.objects.filter(pk__in=[answers[1].pk, answers[2].pk]), reason="withdrawn", requeue=True)
        == 2
    )
    question.refresh_from_db()
    assert question.answers_done == 0


def test_restoring_nothing_says_so(project):
    assert answers_restore(Answer.objects.none(), requeued=True, now=timezone.now()) == {
        "restored": 0,
        "redone": 0,
        "kept_out": 0,
    }


def test_restoring_brings_back_only_quality_withdrawals_into_free_places(project):
    # given a question needing 3: a's and b's answers withdrawn by quality control, c's answer kept,
    # d's dropped by post-processing (not a quality reason)
    a, b, c, d, e = (member(project, n) for n in "abcde")
    (screen,) = screens(project, 1)
    question = answering_question(screen, needed=4)
    first, second, kept, late = _answers_of(project, question, [a, b, c, d])
    Answer.objects.filter(pk=late.pk).update(kept=False, drop_reason="disagrees")
    answers_withdraw(Answer.objects.filter(pk__in=[first.pk, second.pk]), reason="withdrawn", requeue=True)
    question.refresh_from_db()
    assert (question.answers_done, question.state) == (2, QuestionState.ANSWERING)
    # and e holds a live lease on it (another question's lease does not count)
    _lease(project, e, question)
    (other_screen,) = screens(project, 1)
    other = answering_question(other_screen)
    _lease(project, a, other)
    # when all four are restored (the lead overturned the decision): places = 4 - 2 done - 1 leased = 1
    every = Answer.objects.filter(question=question)
    assert answers_restore(every, requeued=True, now=timezone.now()) == {"restored": 1, "redone": 1, "kept_out": 0}
    first.refresh_from_db(), second.refresh_from_db(), kept.refresh_from_db(), late.refresh_from_db()
    assert (first.kept, first.drop_reason, first.withdrawn_by) == (True, "", None)
    assert (second.kept, second.drop_reason) == (False, "withdrawn")
    assert (late.kept, late.drop_reason) == (False, "disagrees")
    question.refresh_from_db()
    assert (question.answers_done, question.state) == (3, QuestionState.ANSWERING)


def test_restoring_the_last_place_finishes_the_question(project):
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    question = answering_question(screen, needed=2)
    _, second = _answers_of(project, question, [a, b])
    answers_withdraw(Answer.objects.filter(pk=second.pk), reason="withdrawn", requeue=True)
    assert answers_restore(Answer.objects.filter(pk=second.pk), requeued=True, now=timezone.now())["restored"] == 1
    question.refresh_from_db()
    assert (question.answers_done, question.state) == (2, QuestionState.ANSWERED)


@pytest.mark.parametrize(
    ("state", "reason", "back"),
    [
        (QuestionState.DROPPED, REASON_AUTHOR_PAUSED, False),  # its question dropped by quality control: out
        (QuestionState.DROPPED, "disagree", True),  # dropped by post-processing: decided again
        (QuestionState.KEPT, "", True),  # kept by post-processing: decided again
        (QuestionState.ANSWERED, "", True),
    ],
)
def test_restoring_without_requeue_decides_the_question_again_unless_predecided(project, state, reason, back):
    # given an answer withdrawn without requeue (the project keeps paused work out, nobody redoes it)
    a = member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen)
    (answer,) = _answers_of(project, question, [a])
    answers_withdraw(Answer.objects.filter(pk=answer.pk), reason="withdrawn", requeue=False)
    Question.objects.filter(pk=question.pk).update(state=state, drop_reason=reason)
    counts = answers_restore(Answer.objects.filter(pk=answer.pk), requeued=False, now=timezone.now())
    assert counts == {"restored": int(back), "redone": 0, "kept_out": int(not back)}
    question.refresh_from_db()
    answer.refresh_from_db()
    assert answer.kept is back
    if back:
        assert (question.state, question.drop_reason, question.answers_done) == (QuestionState.ANSWERED, "", 1)
    else:
        assert (question.state, question.drop_reason) == (QuestionState.DROPPED, REASON_AUTHOR_PAUSED)


def test_the_stage_withdraws_and_restores_one_annotators_answers_in_one_project(project, lead):
    # given a's answers in this project (two questions) and in another, and b's answer
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    q1, q2 = answering_question(screen, text="One?"), answering_question(screen, text="Two?")
    (mine_1,) = _answers_of(project, q1, [a])
    (mine_2,) = _answers_of(project, q2, [a])
    other_project = ProjectFactory(slug="other")
    MembershipFactory(project=other_project, user=a)
    (far_screen,) = screens(other_project, 1)
    far = answering_question(far_screen)
    (far_answer,) = _answers_of(other_project, far, [a])
    q3 = answering_question(screen, text="Three?")
    (theirs,) = _answers_of(project, q3, [b])
    stage, now = Answers(), timezone.now()
    # and a's answer rejected in review (another decision), which the pause does not take and its
    # overturning does not bring back
    q4 = answering_question(screen, text="Four?")
    (rejected,) = _answers_of(project, q4, [a])
    stage.review_rejected(reviewed=rejected.assignment, reason="wrong-element", now=now)
    event = QualityEvent.objects.create(project=project, user=a, stage="answers", rule="lead", figures={})
    # when only the first assignment's answer is withdrawn
    assert (
        stage.withdraw(project=project, user=a, requeue=True, now=now, event=event, assignments=[mine_1.assignment_id])
        == 1
    )
    # then the rest stays; and withdrawing all of a's takes the other one in this project only
    assert stage.withdraw(project=project, user=a, requeue=True, now=now, event=event) == 1
    kept = dict(Answer.objects.values_list("pk", "kept"))
    assert kept == {mine_1.pk: False, mine_2.pk: False, far_answer.pk: True, theirs.pk: True, rejected.pk: False}
    # and b's answer withdrawn by another decision does not come back with a's
    other_event = QualityEvent.objects.create(project=project, user=b, stage="answers", rule="lead", figures={})
    stage.withdraw(project=project, user=b, requeue=True, now=now, event=other_event)
    # when the lead overturns a's decision (the work was requeued by default), a's come back
    assert stage.restore(project=project, user=a, event=event, now=now)["restored"] == 2
    rejected.refresh_from_db()
    assert rejected.kept is False
    assert dict(Answer.objects.values_list("pk", "kept")) == {
        mine_1.pk: True,
        mine_2.pk: True,
        far_answer.pk: True,
        theirs.pk: False,
        rejected.pk: False,
    }


@pytest.mark.parametrize(
    ("figures", "requeued"), [({}, True), ({"paused_work": "requeue"}, True), ({"paused_work": "keep"}, False)]
)
def test_a_restore_reads_whether_the_work_was_requeued_from_the_decision(project, figures, requeued):
    # given a's answer withdrawn, and the question then answered by b (its place taken if requeued)
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    question = answering_question(screen)
    _answers_of(project, question, [a])
    event = QualityEvent.objects.create(project=project, user=a, stage="answers", rule="lead", figures=figures)
    Answers().withdraw(project=project, user=a, requeue=True, now=timezone.now(), event=event)
    _answers_of(project, question, [b])
    counts = Answers().restore(project=project, user=a, event=event, now=timezone.now())
    # requeued: b redid it and a's stays out; kept (not requeued): a's comes back beside b's
    assert counts["redone" if requeued else "restored"] == 1


def test_a_reverted_review_brings_back_only_the_answer_it_rejected(project):
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    question = answering_question(screen, needed=2)
    first, second = _answers_of(project, question, [a, b])
    stage = Answers()
    for answer in (first, second):
        stage.review_rejected(reviewed=answer.assignment, reason="wrong-element", now=timezone.now())
    assert stage.review_reverted(reviewed=first.assignment, now=timezone.now())["restored"] == 1
    assert dict(Answer.objects.values_list("pk", "kept")) == {first.pk: True, second.pk: False}
    # an answer rejected in review, then withdrawn by a pause: the review's revert does not bring it
    Answer.objects.filter(pk=second.pk).update(drop_reason="withdrawn")
    assert stage.review_reverted(reviewed=second.assignment, now=timezone.now())["restored"] == 0


def test_a_lease_that_ran_out_or_was_given_back_does_not_bar_its_annotator(project):
    stage = Answers()
    a = member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen, needed=2)
    (other_screen,) = screens(project, 1)
    other = answering_question(other_screen)
    # a's lease on another question does not bar a from this one
    _lease(project, a, other)
    assert stage.open_to(unit=question, user=a, now=timezone.now())
    for status in (AssignmentStatus.EXPIRED, AssignmentStatus.RELEASED):
        lease = _lease(project, a, question, minutes=-1)
        Assignment.objects.filter(pk=lease.pk).update(status=status)
        assert stage.open_to(unit=question, user=a, now=timezone.now())


def test_the_queue_follows_the_queue_key_not_the_id(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    made = [answering_question(screen, text=f"Q{i}?") for i in range(4)]
    for question, key in zip(made, (40, 30, 10, 20), strict=True):
        Question.objects.filter(pk=question.pk).update(queue_key=key)
    queued = Answers().queue(project=project, user=a, now=timezone.now())
    assert [q.text for q in queued] == ["Q2?", "Q3?", "Q1?", "Q0?"]


def test_an_element_without_text_says_which(project):
    # given a candidate whose label is empty (the page has nothing to pre-fill) and a drawn box sent with
    # a null text
    a = member(project, "a")
    (screen,) = screens(project, 1)
    Candidate.objects.filter(screen=screen, vh_index=2).update(text="", content_desc="")
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    for elements, message in (
        ([{"vh_index": 2}], "This may not be empty."),
        ([{"bounds": [0, 0, 10, 10], "text": None}], "This must be text."),
    ):
        with pytest.raises(ApplicationError) as err:
            assignment_submit(assignment_id=lease.pk, user=a, data=answered(elements=elements))
        assert (err.value.field, str(err.value.message)) == ("elements[0].text", message)


def test_restoring_counts_every_answer_kept_out_or_redone_and_goes_on_after_them(project, lead):
    # given a's answers to five questions, withdrawn by one decision: two questions then dropped by
    # quality control (their writer paused), two answered by others meanwhile, one still open
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    questions = [answering_question(screen, text=f"Q{i}?") for i in range(5)]
    for question in questions:
        _answers_of(project, question, [a])
    event = QualityEvent.objects.create(project=project, user=a, stage="answers", rule="lead", figures={})
    Answers().withdraw(project=project, user=a, requeue=True, now=timezone.now(), event=event)
    for question in questions[:2]:
        Question.objects.filter(pk=question.pk).update(state=QuestionState.DROPPED, drop_reason=REASON_AUTHOR_PAUSED)
    for question in questions[2:4]:
        _answers_of(project, question, [b])
    # when the decision is overturned
    counts = answers_restore(Answer.objects.filter(annotator=a), requeued=True, now=timezone.now())
    # then each is counted, and the last one (after the others in id order) comes back
    assert counts == {"restored": 1, "redone": 2, "kept_out": 2}
    back = Answer.objects.get(annotator=a, question=questions[4])
    assert (back.kept, back.drop_reason, back.withdrawn_by) == (True, "", None)


def test_an_answer_without_elements_for_a_verdict_that_needs_none(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    lease = assignment_next(project=project, user=a, stage="answers")
    assignment_submit(assignment_id=lease.pk, user=a, data={"question": "What?", "verdict": "not_answerable"})
    answer = Answer.objects.get()
    assert (answer.verdict, answer.full_answer) == ("not_answerable", "")
    assert not AnswerElement.objects.exists()


def test_the_queue_breaks_ties_by_id(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    made = [answering_question(screen, text=f"Q{i}?") for i in range(3)]
    Question.objects.filter(pk__in=[q.pk for q in made]).update(queue_key=7)
    queued = Answers().queue(project=project, user=a, now=timezone.now())
    assert [q.pk for q in queued] == sorted(q.pk for q in made)


def test_a_gold_item_whose_question_still_waits_for_answers_is_not_served(project, lead):
    # given a gold item whose question is still answering (real work could lease it too)
    item = _gold_answers_item(project, lead)
    Question.objects.filter(pk=item.question_id).update(state=QuestionState.ANSWERING)
    (screen,) = screens(project, 1)
    answering_question(screen)
    project.control_rate = project.control_rate_new = 1.0
    project.save(update_fields=["control_rate", "control_rate_new"])
    a = member(project, "a")
    Standing.objects.create(project=project, user=a, stage="answers", status=StandingStatus.ACTIVE)
    lease = assignment_next(project=project, user=a, stage="answers")
    assert lease.gold_id is None


def test_the_api_schema_says_a_box_is_four_integers():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    bounds = schema["components"]["schemas"]["AnswerElementRequest"]["properties"]["bounds"]
    assert (bounds["type"], bounds["items"], bounds["minItems"], bounds["maxItems"]) == (
        "array",
        {"type": "integer"},
        4,
        4,
    )


def test_a_suggestion_submitted_unchanged_is_its_first_element_as_an_answer():
    # what a rubber stamp would send: the first-ranked element, its index, box and text (not its score)
    suggestion = {
        "elements": [
            {"vh_index": 3, "bounds": (10, 20, 300, 60), "text": "Wi-Fi", "score": 0.9},
            {"vh_index": 5, "bounds": [10, 80, 300, 120], "text": "On", "score": 0.4},
        ]
    }
    submission = Answers().suggestion_submission(suggestion=suggestion, cleaned={"question": "Which network?"})
    assert submission == {
        "verdict": "answered",
        "elements": [{"vh_index": 3, "bounds": [10, 20, 300, 60], "text": "Wi-Fi"}],
        "question": "Which network?",
    }
    assert Answers().suggestion_submission(suggestion=suggestion, cleaned={})["question"] == ""


# --- suggestion_use: what "accepted" means (docs/assist.md) ----------------------------------------

DRAWN = {"elements": [{"vh_index": None, "bounds": [10, 20, 300, 60], "text": "Wi-Fi", "score": 0.9}]}
PICKED = {"elements": [{"vh_index": 3, "bounds": [10, 20, 300, 60], "text": "Wi-Fi", "score": 0.9}]}


def _use(suggestion, *elements, verdict="answered"):
    return Answers().suggestion_use(suggestion=suggestion, cleaned={"verdict": verdict, "elements": list(elements)})


@pytest.mark.parametrize(
    ("suggestion", "element", "use"),
    [
        # a suggested drawn box is accepted by giving back the same box (as a list or a tuple) and text
        (DRAWN, {"bounds": [10, 20, 300, 60], "text": "Wi-Fi"}, "accepted"),
        (DRAWN, {"bounds": (10, 20, 300, 60), "text": " Wi-Fi  "}, "accepted"),  # the text's spaces: no edit
        (DRAWN, {"vh_index": None, "bounds": [10, 20, 300, 60], "text": "Wi-Fi"}, "accepted"),
        # ...not by a candidate with the same box, another box, no box, or another text
        (DRAWN, {"vh_index": 3, "bounds": [10, 20, 300, 60], "text": "Wi-Fi"}, "edited"),
        (DRAWN, {"bounds": [10, 20, 300, 61], "text": "Wi-Fi"}, "edited"),
        (DRAWN, {"text": "Wi-Fi"}, "edited"),
        (DRAWN, {"bounds": [10, 20, 300, 60], "text": "WiFi"}, "edited"),
        # a suggested candidate: the same index and text, whatever box the page kept
        (PICKED, {"vh_index": 3, "text": "Wi-Fi"}, "accepted"),
        (PICKED, {"vh_index": 3, "bounds": [0, 0, 1, 1], "text": "Wi-Fi"}, "accepted"),
        (PICKED, {"vh_index": 4, "text": "Wi-Fi"}, "edited"),
        (PICKED, {"bounds": [10, 20, 300, 60], "text": "Wi-Fi"}, "edited"),
    ],
)
def test_a_suggestion_is_accepted_only_by_giving_back_its_element(suggestion, element, use):
    assert _use(suggestion, element) == use


def test_a_suggested_element_with_no_text_is_accepted_by_an_element_without_one():
    empty = {"elements": [{"vh_index": None, "bounds": [10, 20, 300, 60], "text": "", "score": 0.9}]}
    assert _use(empty, {"bounds": [10, 20, 300, 60]}) == "accepted"
    assert _use(empty, {"bounds": [10, 20, 300, 60], "text": None}) == "accepted"
    assert _use(empty, {"bounds": [10, 20, 300, 60], "text": "x"}) == "edited"


def test_a_suggestion_is_accepted_only_as_the_whole_answer():
    top = {"vh_index": 3, "text": "Wi-Fi"}
    assert _use(PICKED, top, {"vh_index": 4, "text": "On"}) == "edited"  # its element and one more
    assert _use(PICKED, {"vh_index": 4, "text": "On"}, top) == "edited"
    assert _use(PICKED, top, verdict="not_answerable") == "edited"
    assert _use(PICKED) == "edited"
    assert _use(None, top) == "none"
    assert _use({"elements": []}, top) == "none"


def test_a_control_items_suggestion_is_left_out_as_often_as_real_answers_lately_went_without_one(project):
    from pipeline.assist.service import _gold_draw

    project.assist_url = "http://127.0.0.1:9"
    project.save()
    author, a = member(project, "author"), member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen, author=author)
    Suggestion.objects.create(
        project=project,
        stage="answers",
        question=question,
        screen=screen,
        status=SuggestionStatus.OK,
        calls=1,
        result={"elements": [{"vh_index": 3, "bounds": [10, 20, 300, 60], "text": "Wi-Fi", "score": 0.9}]},
        model_version="m1",
    )
    control = _lease(project, a, question)
    work = _lease(project, member(project, "b"), question)
    gold = GoldItem.objects.create(project=project, stage="answers", question=question, screen=screen, answer={})
    Assignment.objects.filter(pk=control.pk).update(purpose=Purpose.CONTROL, gold=gold)
    control.refresh_from_db()
    shown = Answers().suggestion(assignment=control)
    assert shown is not None and shown["elements"][0]["text"] == "Wi-Fi"  # no history: nothing to match
    # the stage's recent real answers all went without a suggestion (the backend was down)
    for user in (member(project, "c"), member(project, "d")):
        done = _lease(project, user, answering_question(screen, author=author), status=AssignmentStatus.SUBMITTED)
        AssistUse.objects.create(
            assignment=done, project=project, user=user, stage="answers", purpose="work", use=SuggestionUse.NONE
        )
    assert _gold_draw(control.pk) < 1.0
    assert Answers().suggestion(assignment=control) is None  # a control item goes without one too
    assert Answers().suggestion(assignment=work)["model_version"] == "m1"  # real work shows what there is
