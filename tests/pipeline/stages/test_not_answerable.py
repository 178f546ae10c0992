"""Not-answerable stage: sample size to reach the target, deterministic sample, one question."""

from __future__ import annotations

import pytest

from annotation.exceptions import ApplicationError
from annotation.models import Question, QuestionSource, QuestionState, Screen
from pipeline.engine import assignment_next, assignment_payload, assignment_submit, not_answerable_start
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
