"""Answers: pool, never the author, never twice, per-split counts, element validation."""

from __future__ import annotations

import pytest

from annotation.exceptions import ApplicationError, ConflictError, PermissionDeniedError
from annotation.models import (
    Answer,
    AnswerElement,
    AssignmentStatus,
    ControlResult,
    Purpose,
    QuestionState,
    Standing,
    StandingStatus,
)
from pipeline.engine import assignment_next, assignment_payload, assignment_submit
from pipeline.quality.gold import gold_item_create
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
