"""Helpers shared by the benchmarks."""

from __future__ import annotations

from django.db import connection, transaction

from annotation.models import Answer as AnswerModel
from annotation.models import AnswerElement, App, Project, Question, ReleaseJob, Screen


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
