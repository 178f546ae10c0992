"""Every row lock of the domain, taken here and only here, in one order:

    project -> user -> screen -> question -> assignment -> answer -> standing

(``project_lock`` and ``user_lock`` serialise a lead's project-wide action and one
annotator's own requests; they come first because they guard the others.)

``job_lock`` stands apart: a background job's row is locked alone, for the moment its status
changes (``pipeline.jobs.lifecycle``), never while another of these locks is held.

A service that needs several locks takes them through these helpers in that
order, inside ``transaction.atomic()``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Model, QuerySet
from django.db.transaction import TransactionManagementError

from annotation.db import compiled, session
from annotation.models import Assignment, Job, Project, Question, Screen, Standing

J = TypeVar("J", bound=Job)


def project_lock(*, project_id: int) -> Project:
    return Project.objects.select_for_update().get(pk=project_id)


def user_lock(*, user_id: int, leasing: bool = False) -> None:
    """One annotator's requests one at a time (e.g. two tabs asking for work at once).

    Reads only the key (the caller already has the user), with a statement compiled once
    (``annotation.db.compiled``): it is on the leasing hot path. SQLite has no row locks; its
    transactions are ``BEGIN IMMEDIATE`` (one writer).

    ``leasing`` (the lease transaction of ``next`` only, never submits): the same statement sets
    two things for the rest of the transaction, at no round trip of its own:

    * the WAL flush is off (``annotation.db.session.commit_without_flush``), so its commit returns
      before its WAL reaches the disk. A lease is cheap to lose: if the server crashes within the
      last fraction of a second, the lease (and every later transaction, WAL is sequential) is
      simply gone, the unit is free again and nothing is inconsistent. It saves an fsync (several
      ms) and a round trip on the hot path;
    * prepared statements run their kept plan (``annotation.db.session.plans_kept``): the claim is
      not planned again on each lease.
    """
    if not transaction.get_connection().in_atomic_block:
        raise TransactionManagementError("user_lock needs a transaction.")
    settings = {"no_flush": session.commit_without_flush(), "kept": session.plans_kept()} if leasing else {}
    settings = {name: expression for name, expression in settings.items() if expression is not None}
    user_model = get_user_model()

    def build(values: dict[str, Any]) -> QuerySet[Any]:
        rows = user_model._default_manager.filter(pk=values["user_id"]).order_by()
        rows = rows.select_for_update(of=("self",))
        return rows.annotate(**settings).values_list("pk", *settings)

    row = compiled.fetch_one(key=("user-lock", bool(settings)), build=build, values={"user_id": user_id})
    if row is None:
        raise user_model.DoesNotExist(f"user {user_id}")


def _row_lock(model: type[Model], pk: int, *, exclude: tuple[str, ...] = ()) -> Any:
    """``model.objects.select_for_update().get(pk=pk)`` (without the ``exclude`` columns,
    which load on access), compiled once: the unit and assignment locks of every submit.

    Like ``get()``, it drops the model's default ordering: ordering by related fields
    (a screen by project, a question by screen) would join those tables, and a plain
    ``FOR UPDATE`` would then lock their rows too (the project row: every submit would
    queue on it, and deadlock with the foreign-key checks of other writers). ``of=self``
    keeps the lock on this row whatever the query joins.
    """
    load = compiled.Load(model, exclude=exclude)

    def build(values: dict[str, Any]) -> QuerySet[Any]:
        rows = model._default_manager.filter(pk=values["pk"]).order_by()
        return rows.select_for_update(of=("self",)).values_list(*load.paths)

    row = compiled.fetch_one(key=("row-lock", model._meta.label, exclude), build=build, values={"pk": pk})
    if row is None:
        raise model.DoesNotExist(f"{model._meta.object_name} {pk}")  # type: ignore[attr-defined]
    return load.instance(row)


def screen_lock(*, screen_id: int, with_vh: bool = True) -> Screen:
    """``with_vh=False`` leaves out the (possibly large) view hierarchy; it loads on access."""
    return cast(Screen, _row_lock(Screen, screen_id, exclude=() if with_vh else ("vh",)))


def question_lock(*, question_id: int) -> Question:
    return cast(Question, _row_lock(Question, question_id))


def assignment_lock(*, assignment_id: int) -> Assignment:
    return cast(Assignment, _row_lock(Assignment, assignment_id))


def job_lock(*, model: type[J], job_id: int) -> J:
    """A job row (any table of ``Job``), with its project; only the job row is locked (``of=self``)."""
    return model._default_manager.select_related("project").select_for_update(of=("self",)).get(pk=job_id)


def standing_lock(*, project_id: int, user_id: int, stage: str) -> Standing | None:
    """An annotator's standing in a stage (``None``: they have none). Last in the lock order: taken
    after the locks of the submission it follows."""
    return Standing.objects.select_for_update().filter(project_id=project_id, user_id=user_id, stage=stage).first()


def queue_claim(
    *,
    key: Hashable,
    build: Callable[[dict[str, Any]], QuerySet[Any]],
    values: dict[str, Any],
    inputs: compiled.Inputs | None = None,
) -> tuple[Any, ...] | None:
    """Lock the first row of a work queue, skipping rows other transactions hold (never
    waiting for them), and return its row of ``build(values)``: an ordered ``values_list``.

    Only the queue's own row is locked (``of=self``), not the rows of joined tables. The
    statement is compiled once per ``key`` and declared ``inputs`` (``annotation.db.compiled``:
    the ORM spends ~2 ms building and compiling a queue query, more than the database needs).
    """
    return compiled.fetch_one(
        key=("claim", key),
        build=lambda v: build(v).select_for_update(skip_locked=True, of=("self",)),
        values=values,
        inputs=inputs,
    )
