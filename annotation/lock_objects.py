"""Every row lock of the domain, taken here and only here, in one order:

    project -> user -> screen -> question -> assignment -> answer

(``project_lock`` and ``user_lock`` serialise a lead's project-wide action and one
annotator's own requests; they come first because they guard the others.)

A service that needs several locks takes them through these helpers in that
order, inside ``transaction.atomic()``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Model, QuerySet
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


# Compiled queue claims: key -> (SQL, where each parameter comes from), or None when the key
# did not check out (then the ORM compiles every time).
_CLAIM_SQL: dict[Hashable, tuple[str, list[tuple[str | None, Any]]] | None] = {}
_STAND_IN_PK = -(10**12)
_STAND_IN_TIME = datetime(1970, 1, 2, 3, 4, 5, 424242, tzinfo=UTC)


def _stand_in(name: str, value: Any, n: int) -> Any:
    if isinstance(value, Model):
        other = copy.copy(value)
        other.pk = _STAND_IN_PK - n
        return other
    if isinstance(value, datetime):
        return _STAND_IN_TIME.replace(microsecond=424242 - n)
    raise TypeError(f"no stand-in for {name}={value!r}")


def _as_param(value: Any) -> Any:
    return value.pk if isinstance(value, Model) else value


def _claim_compile(build: Callable[[dict[str, Any]], QuerySet], values: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    queryset = build(values).select_for_update(skip_locked=True, of=("self",))[:1]
    sql, params = queryset.query.get_compiler(connection=connection).as_sql()
    return sql, tuple(params)


def queue_claim_first_values(
    *, key: Hashable, build: Callable[[dict[str, Any]], QuerySet], values: dict[str, Any]
) -> tuple[Any, ...] | None:
    """Lock the first row of a queue like ``screen_claim_first`` (skip-locked, ``of=self``)
    and return its row of ``build(values)``, an ordered ``values_list`` of plain columns.

    The statement is compiled once per ``key`` (PostgreSQL; the ORM spends ~2 ms building
    and compiling a queue query, more than the database needs): the first time, ``build`` is
    called with stand-ins for ``values`` (model instances, datetimes) to learn where each
    value goes among the SQL parameters, and the result is checked against a build with the
    real values (same SQL, same parameters); a key that does not check out is never cached.
    ``key`` must determine the shape of the query (everything but ``values``).
    """
    if connection.vendor != "postgresql":
        rows = list(build(values).select_for_update(skip_locked=True, of=("self",))[:1])
        return tuple(rows[0]) if rows else None
    if key not in _CLAIM_SQL:
        stand_ins = {name: _stand_in(name, value, n) for n, (name, value) in enumerate(values.items())}
        sql, params = _claim_compile(build, stand_ins)
        by_param = {_as_param(v): name for name, v in stand_ins.items()}
        sources = [(by_param.get(p), p) for p in params]
        real_sql, real_params = _claim_compile(build, values)
        filled = tuple(_as_param(values[name]) if name else p for name, p in sources)
        _CLAIM_SQL[key] = (sql, sources) if (sql, filled) == (real_sql, real_params) else None
    cached = _CLAIM_SQL[key]
    if cached is None:
        sql, params = _claim_compile(build, values)
    else:
        sql, sources = cached
        params = tuple(_as_param(values[name]) if name else p for name, p in sources)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return tuple(row) if row is not None else None
