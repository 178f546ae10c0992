"""What every stage tells the engine (``pipeline.stages.engine``), and validation helpers.

A stage is a queue of *units* (a screen, or a question for ``answers``). The engine asks
the stage for its queue, re-checks a locked unit with ``open_to``, validates a submit
with ``clean`` (no writes, so a rejected body loses nothing) and applies it with
``apply`` inside the transaction that marks the assignment submitted, so a screen or
question is never stranded between stages.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from django.db.models import Exists, OuterRef, Q, QuerySet

from annotation.db import compiled
from annotation.exceptions import ApplicationError, PermissionDeniedError
from annotation.models import Assignment, AssignmentStatus, Membership, Project, Question, Screen

TEXT_MAX = 1000
NOTE_MAX = 2000
FULL_ANSWER_MAX = 5000


class StageRules:
    stage: ClassVar[str]
    label: ClassVar[str]
    unit: ClassVar[str] = "screen"  # or "question"

    def check_access(self, *, user: Any, membership: Membership | None) -> None:
        """Raise ``PermissionDeniedError`` if a member may not work on this stage."""

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        """Units open to ``user``, oldest first (unlocked; the engine locks with skip-locked)."""
        raise NotImplementedError

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        """Fresh re-check of a locked unit: may ``user`` hold a lease on it now?

        ``own`` is the user's assignment being resumed (excluded from the counts).
        """
        raise NotImplementedError

    def clean(self, *, assignment: Assignment, data: dict[str, Any]) -> dict[str, Any]:
        """The normalised submission, or ``ApplicationError(field=...)``. No writes."""
        raise NotImplementedError

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        """Write the submission and move the unit on. Caller holds unit and assignment locks."""
        raise NotImplementedError

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        return {}

    def queue_shape(self, *, project: Project) -> tuple[Any, ...] | None:
        """What, besides the project, user and time, decides the SQL of ``queue`` (its
        compiled claim is cached per stage and shape); ``None``: compile every time."""
        return None

    def unit_has(self, condition: Q) -> Exists:
        """``Exists`` over this stage's assignments of the outer unit matching ``condition``."""
        if self.unit == "question":
            return Exists(Assignment.objects.filter(condition, question=OuterRef("pk"), stage=self.stage))
        return screen_has(self.stage, condition)

    def available_count(self, *, project: Project, user: Any, now: datetime) -> int:
        return self.queue(project=project, user=user, now=now).count()


def require_answer_pool(*, user: Any, membership: Membership | None) -> None:
    if getattr(user, "is_superuser", False):
        return
    if membership is None or not membership.in_answer_pool:
        raise PermissionDeniedError("Only members of the answer pool may answer questions.")


# --- queue helpers --------------------------------------------------------------------


def live_q(now: datetime) -> Q:
    return Q(status=AssignmentStatus.LEASED, lease_expires_at__gt=now)


def stale_q(now: datetime) -> Q:
    """Leases whose time ran out but that nobody reclaimed yet (still ``leased``)."""
    return Q(status=AssignmentStatus.LEASED, lease_expires_at__lte=now)


def screen_has(stage: str, condition: Q) -> Exists:
    """``Exists`` over the assignments of the outer screen in ``stage`` matching ``condition``."""
    return Exists(Assignment.objects.filter(condition, screen=OuterRef("pk"), stage=stage))


def question_has(condition: Q) -> Exists:
    return Exists(Assignment.objects.filter(condition, question=OuterRef("pk"), stage="answers"))


def taken_by_user_q(user: Any) -> Q:
    """The user holds, did or declined this unit: never offered to them again."""
    return Q(
        annotator=user,
        status__in=[AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED],
    )


def others_live_lease_exists(*, stage: str, now: datetime, own: Assignment | None, screen: Screen) -> bool:
    """Whether anybody but ``own`` holds a live lease of ``screen`` in ``stage``: the fresh
    re-check of the leasing hot path (one statement compiled once per stage)."""

    def build(values: dict[str, Any]) -> QuerySet[Assignment]:
        qs = Assignment.objects.filter(live_q(values["now"]), stage=stage, screen_id=values["screen_id"])
        return qs.exclude(pk=values["own_id"]) if "own_id" in values else qs

    values: dict[str, Any] = {"now": now, "screen_id": screen.pk}
    if own is not None:
        values["own_id"] = own.pk
    return compiled.exists(key=("others-live", stage, own is not None), build=build, values=values)


def user_submitted_exists(*, stage: str, screen: Screen, user: Any) -> bool:
    """Whether ``user`` submitted ``stage`` of ``screen`` (compiled once per stage)."""

    def build(values: dict[str, Any]) -> QuerySet[Assignment]:
        mine = Assignment.objects.filter(screen_id=values["screen_id"], annotator_id=values["user_id"])
        return mine.filter(stage=stage, status=AssignmentStatus.SUBMITTED)

    return compiled.exists(
        key=("user-submitted", stage), build=build, values={"screen_id": screen.pk, "user_id": user.pk}
    )


# --- validation helpers -----------------------------------------------------------------


def require_keys(data: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ApplicationError(f"Unknown field {unknown[0]!r}.", field=unknown[0])


def clean_text(value: Any, *, field: str, max_length: int = TEXT_MAX, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ApplicationError("This must be text.", field=field)
    text = " ".join(value.split())  # one line, single spaces: what annotators meant
    if required and not text:
        raise ApplicationError("This may not be empty.", field=field)
    if len(text) > max_length:
        raise ApplicationError(f"This is longer than {max_length} characters.", field=field)
    return text


def clean_bool(value: Any, *, field: str) -> bool:
    if not isinstance(value, bool):
        raise ApplicationError("This must be true or false.", field=field)
    return value


def clean_question_list(value: Any, *, field: str, cap: int, taken: list[str] | None = None) -> list[str]:
    """0..cap distinct question texts (an empty list means "nothing to ask")."""
    if not isinstance(value, list):
        raise ApplicationError("Give a list of questions (an empty list means nothing to ask).", field=field)
    if len(value) > cap:
        raise ApplicationError(f"At most {cap} questions in this pass.", field=field)
    seen = {t.casefold() for t in (taken or [])}
    texts: list[str] = []
    for i, item in enumerate(value):
        text = clean_text(item, field=f"{field}[{i}]")
        if text.casefold() in seen:
            raise ApplicationError("This question is already asked on this screen.", field=f"{field}[{i}]")
        seen.add(text.casefold())
        texts.append(text)
    return texts


def screen_questions(screen: Screen, *, not_from: Assignment | None = None) -> list[Question]:
    """The screen's questions in order; ``not_from`` leaves out those an assignment wrote
    (so re-checking an already accepted submission does not find its own questions)."""
    qs = Question.objects.filter(screen=screen).order_by("position")
    if not_from is not None:
        qs = qs.exclude(origin=not_from)
    return list(qs)


def question_brief(question: Question) -> dict[str, Any]:
    return {"id": question.pk, "text": question.text}
