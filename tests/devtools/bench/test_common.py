"""Benchmark helpers."""

from __future__ import annotations

import pytest

from annotation.models import Answer, AnswerElement, App, Project, Question, ReleaseJob, Screen
from devtools.bench.common import project_delete_fast
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


def test_answering_project_has_the_split_sizes_and_question_slots():
    from devtools.bench.common import answering_project_create, bench_split

    # given an old project of the same slug
    populate(ProjectFactory(slug="bench-x"))
    # when a fresh one is generated with 27 questions over 20 screens of mixed sizes
    project, slots = answering_project_create(slug="bench-x", name="x", screens=20, questions=27, mixed_sizes=True)
    # then the old one is gone, the screens wait for answers with the 80/10/10 split
    screens = list(Screen.objects.filter(project__slug="bench-x").order_by("pk"))
    assert Project.objects.filter(slug="bench-x").get() == project and len(screens) == 20
    assert [s.split for s in screens] == [bench_split(i) for i in range(20)]
    assert {s.state for s in screens} == {"answering"} and not Question.objects.filter(screen__project=project).exists()
    assert [(s.width, s.height) for s in screens[:2]] == [(540, 960), (1080, 1920)]
    # and the 27 question slots are spread evenly (2 or 1 per screen), positions from 0
    per_screen = [sum(1 for s, _ in slots if s.pk == screen.pk) for screen in screens]
    assert len(slots) == 27 and per_screen == [2] * 7 + [1] * 13
    assert sorted(k for s, k in slots if s.pk == screens[0].pk) == [0, 1]
