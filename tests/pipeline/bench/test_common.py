"""Benchmark helpers."""

from __future__ import annotations

import pytest

from annotation.models import Answer, AnswerElement, App, Project, Question, ReleaseJob, Screen
from pipeline.bench.common import project_delete_fast
from tests.factories import ProjectFactory, ScreenFactory

pytestmark = pytest.mark.django_db


def populate(project: Project) -> None:
    screen = ScreenFactory(project=project, split="train", state="answering")
    question = Question.objects.create(screen=screen, source="questions-1", position=0, text="Q?", state="kept")
    answer = Answer.objects.create(question=question, verdict="answered", question_text="Q?", full_answer="A.")
    AnswerElement.objects.create(answer=answer, position=0, left=0, top=0, right=5, bottom=5, text="a")
    ReleaseJob.objects.create(project=project, kind="export")


def test_deletes_the_project_and_everything_under_it_only():
    # given two projects with screens, questions, answers, elements and jobs
    doomed, kept = ProjectFactory(slug="doomed"), ProjectFactory(slug="kept")
    populate(doomed)
    populate(kept)
    # when the benchmark project is deleted
    project_delete_fast("doomed")
    # then nothing of it is left, and the other project is whole
    assert not Project.objects.filter(slug="doomed").exists()
    for model in (Screen, App, ReleaseJob):
        assert model.objects.count() == 1
    assert (Question.objects.count(), Answer.objects.count(), AnswerElement.objects.count()) == (1, 1, 1)
    assert Screen.objects.get().project.slug == "kept"
    project_delete_fast("absent")  # a missing project is not an error
