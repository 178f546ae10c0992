"""Every row lock of the domain, taken here and only here, in one order:

    project -> user -> screen -> question -> assignment -> answer

(``project_lock`` and ``user_lock`` serialise a lead's project-wide action and one
annotator's own requests; they come first because they guard the others.)

A service that needs several locks takes them through these helpers in that
order, inside ``transaction.atomic()``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import QuerySet
from django.db.transaction import TransactionManagementError

from annotation.models import Assignment, ImportJob, Project, Question, Screen


def project_lock(*, project_id: int) -> Project:
    return Project.objects.select_for_update().get(pk=project_id)


def user_lock(*, user_id: int) -> None:
    """One annotator's requests one at a time (e.g. two tabs asking for work at once).

    Reads only the key (the caller already has the user), with a hand-written statement:
    it is on the leasing hot path and the ORM's compilation cost more than the query.
    SQLite has no row locks; its transactions are ``BEGIN IMMEDIATE`` (one writer).
    """
    if not transaction.get_connection().in_atomic_block:
        raise TransactionManagementError("user_lock needs a transaction.")
    meta = get_user_model()._meta
    # Names from the model's metadata, values as parameters.
    sql = f'SELECT "{meta.pk.column}" FROM "{meta.db_table}" WHERE "{meta.pk.column}" = %s'  # noqa: S608
    if connection.features.has_select_for_update:
        sql += " FOR UPDATE"
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id])
        if cursor.fetchone() is None:
            raise get_user_model().DoesNotExist(f"user {user_id}")


def screen_lock(*, screen_id: int, with_vh: bool = True) -> Screen:
    """``with_vh=False`` leaves out the (possibly large) view hierarchy; it loads on access."""
    qs = Screen.objects.select_for_update()
    return (qs if with_vh else qs.defer("vh")).get(pk=screen_id)


def question_lock(*, question_id: int) -> Question:
    return Question.objects.select_for_update().get(pk=question_id)


def assignment_lock(*, assignment_id: int) -> Assignment:
    return Assignment.objects.select_for_update().get(pk=assignment_id)


def import_job_lock(*, job_id: int) -> ImportJob:
    return ImportJob.objects.select_for_update().get(pk=job_id)


def skip_locked(qs: QuerySet) -> QuerySet:
    """Queue reads: rows another transaction holds are skipped, never waited for."""
    return qs.select_for_update(skip_locked=True)


def screen_claim_first(*, queryset: QuerySet[Screen]) -> Screen | None:
    """Lock the first screen of a queue, skipping screens other transactions hold.

    ``queryset`` must be ordered (the queue order). Only the screen row is locked
    (``of=self``), not the rows of joined tables.
    """
    return queryset.select_for_update(skip_locked=True, of=("self",)).first()


def question_claim_first(*, queryset: QuerySet[Question]) -> Question | None:
    """Lock the first question of a queue, skipping questions other transactions hold."""
    return queryset.select_for_update(skip_locked=True, of=("self",)).first()
