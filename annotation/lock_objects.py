"""Every row lock of the domain, taken here and only here, in one order:

    screen -> question -> assignment -> answer

A service that needs several locks takes them through these helpers in that
order, inside ``transaction.atomic()``.
"""

from __future__ import annotations

from django.db.models import QuerySet

from annotation.models import Assignment, ImportJob, Question, Screen


def screen_lock(*, screen_id: int) -> Screen:
    return Screen.objects.select_for_update().get(pk=screen_id)


def question_lock(*, question_id: int) -> Question:
    return Question.objects.select_for_update().get(pk=question_id)


def assignment_lock(*, assignment_id: int) -> Assignment:
    return Assignment.objects.select_for_update().get(pk=assignment_id)


def import_job_lock(*, job_id: int) -> ImportJob:
    return ImportJob.objects.select_for_update().get(pk=job_id)


def skip_locked(qs: QuerySet) -> QuerySet:
    """Queue reads: rows another transaction holds are skipped, never waited for."""
    return qs.select_for_update(skip_locked=True)
