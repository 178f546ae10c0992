"""Helpers shared by the benchmarks."""

from __future__ import annotations

from django.db import connection, transaction

from annotation.models import Answer as AnswerModel
from annotation.models import AnswerElement, App, Project, Question, ReleaseJob, Screen, ScreenState


def project_delete_fast(slug: str) -> None:
    """Delete a benchmark project and everything under it with set-based SQL.

    The ORM's cascade collector would load every row of a 400k-row project into memory.
    Table names come from the models' meta, never from input (hence the S608 waivers).
    """
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        return
    tables = {m: m._meta.db_table for m in (AnswerElement, AnswerModel, Question, Screen, App, ReleaseJob)}
    with transaction.atomic(), connection.cursor() as cursor:
        screens = f"SELECT id FROM {tables[Screen]} WHERE project_id = %s"  # noqa: S608
        questions = f"SELECT id FROM {tables[Question]} WHERE screen_id IN ({screens})"  # noqa: S608
        answers = f"SELECT id FROM {tables[AnswerModel]} WHERE question_id IN ({questions})"  # noqa: S608
        cursor.execute(f"DELETE FROM {tables[AnswerElement]} WHERE answer_id IN ({answers})", [project.pk])  # noqa: S608
        cursor.execute(f"DELETE FROM {tables[AnswerModel]} WHERE question_id IN ({questions})", [project.pk])  # noqa: S608
        cursor.execute(f"DELETE FROM {tables[Question]} WHERE screen_id IN ({screens})", [project.pk])  # noqa: S608
        cursor.execute(f"DELETE FROM {tables[Screen]} WHERE project_id = %s", [project.pk])  # noqa: S608
        cursor.execute(f"DELETE FROM {tables[App]} WHERE project_id = %s", [project.pk])  # noqa: S608
        cursor.execute(f"DELETE FROM {tables[ReleaseJob]} WHERE project_id = %s", [project.pk])  # noqa: S608
        project.delete()


BATCH = 5_000


def bench_split(index: int) -> str:
    """80/10/10 train/validation/test by screen index (deterministic)."""
    bucket = index % 10
    return "validation" if bucket == 8 else "test" if bucket == 9 else "train"


def answering_project_create(
    *, slug: str, name: str, screens: int, questions: int, mixed_sizes: bool = False
) -> tuple[Project, list[tuple[Screen, int]]]:
    """A fresh project (any old one of ``slug`` deleted) of ``screens`` screens waiting for
    answers, split 80/10/10, and the ``(screen, position)`` slots of ``questions`` questions
    spread evenly over them. ``mixed_sizes``: every 4th screen is 540x960, else 1080x1920.
    No images: every screen names one placeholder file."""
    project_delete_fast(slug)
    project = Project.objects.create(slug=slug, name=name, description=f"{screens}/{questions}")
    app = App.objects.create(project=project, package="com.example.bench")
    rows = [
        Screen(
            project=project,
            app=app,
            rico_id=str(i),
            image="screens/placeholder.png",
            width=540 if mixed_sizes and i % 4 == 0 else 1080,
            height=960 if mixed_sizes and i % 4 == 0 else 1920,
            vh={},
            content_sha256=f"{i:064d}",
            state=ScreenState.ANSWERING,
            split=bench_split(i),
        )
        for i in range(screens)
    ]
    Screen.objects.bulk_create(rows, batch_size=BATCH)
    per_screen = [questions // screens + (1 if i < questions % screens else 0) for i in range(screens)]
    return project, [(s, k) for s, n in zip(rows, per_screen, strict=True) for k in range(n)]
