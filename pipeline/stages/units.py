"""What a stage hands out: its *unit* of work (a screen, or a question), as a small strategy.

The engine never asks which kind of unit a stage has: it asks the unit to lock itself, to
say which assignments are its own, what a lease of it records, and what the lease claim
loads with it (the unit, its screen and the screen's app, for the payload). A new kind of
unit (an answer to review, a test item) is one more ``Unit`` here and a foreign key on
``Assignment`` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from django.db.models import BooleanField, Case, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce

from annotation.db.compiled import Load, load_row
from annotation.lock_objects import question_lock, screen_lock
from annotation.models import App, Assignment, Question, Screen


@dataclass(frozen=True)
class Claimed:
    """A unit the lease claim locked, with what came along: its screen, whether it has leases
    whose time ran out (to be marked expired before a new one is written), and the screen's
    candidates when the claim brought them (``None``: read them when the payload is built)."""

    unit: Any
    screen: Screen
    stale: bool
    candidates: list[dict[str, Any]] | None


class Unit:
    """A kind of unit. ``field``: the ``Assignment`` foreign key that names it."""

    name: ClassVar[str]
    field: ClassVar[str]
    model: ClassVar[type[Any]]
    # What the claim loads, in row order: the unit first, then its screen and app.
    loads: ClassVar[tuple[Load, ...]]
    # The outer reference to the unit's screen id inside a queue query (for its candidates).
    screen_ref: ClassVar[str]
    # Whether the unit's model has a random ``queue_key`` (``annotation.models.screens``): its
    # queues are ordered by it and claimed from a random pivot (``pipeline.engine.services``).
    shuffled: ClassVar[bool] = True

    def lock(self, *, assignment: Assignment) -> Any:
        """Row-lock the assignment's unit (``annotation.lock_objects``), loaded for the stage's rules."""
        raise NotImplementedError

    def assignments(self, stage: str, condition: Q) -> QuerySet[Assignment]:
        """``stage``'s assignments of the outer unit that match ``condition``, read through the unit's
        own foreign key index whatever the planner's statistics say.

        A queue (and so every lease claim) asks this of each unit it passes: is it leased, has the
        caller done it. With ``condition`` as plain SQL, PostgreSQL may answer it with an index on
        ``condition``'s columns instead (the caller's past work in the stage, every live lease of the
        database), read once and kept beside the queue: cheap by the planner's estimate on statistics
        taken when the table was small, linear in the annotator's history in fact (1,169 rows read for
        one claim, 1.3 ms of its 1.9 ms, docs/performance.md). Wrapped in a ``CASE``, which no index
        serves, ``condition`` is only checked on the rows the unit's key finds: a few
        (``tests/pipeline/engine/test_claim_plan.py``)."""
        opaque = Case(When(condition, then=Value(True)), default=Value(False), output_field=BooleanField())
        return Assignment.objects.filter(**{self.field: OuterRef("pk")}, stage=stage).filter(opaque)

    def has(self, stage: str, condition: Q) -> Q:
        """Whether the outer unit has an assignment of ``stage`` that matches ``condition`` (``assignments``): a
        scalar sub-query, probed per unit, never turned into a join that reads every match (as an
        ``EXISTS`` can be: a merge or hash anti-join over the whole index)."""
        hit = self.assignments(stage, condition).order_by().annotate(hit=Value(True)).values("hit")[:1]
        return Q(Coalesce(Subquery(hit, output_field=BooleanField()), Value(False)))

    def of(self, unit: Any) -> dict[str, Any]:
        """Filter keyword arguments that select the assignments of ``unit``."""
        return {f"{self.field}_id": unit.pk}

    def lease(self, unit: Any) -> dict[str, Any]:
        """What an assignment of ``unit`` records (its screen always; the unit's own key)."""
        raise NotImplementedError

    def claimed(self, row: tuple[Any, ...], *, stale: bool, candidates: list[dict[str, Any]] | None) -> Claimed:
        """The claim's row (the ``loads`` columns) as loaded models."""
        raise NotImplementedError


class ScreenUnit(Unit):
    name = "screen"
    field = "screen"
    model = Screen
    loads = (Load(Screen, plain=True), Load(App, "app__", plain=True))
    screen_ref = "pk"

    def lock(self, *, assignment: Assignment) -> Screen:
        screen = screen_lock(screen_id=assignment.screen_id, with_vh=False)  # no stage reads the VH
        screen.project = assignment.project
        return screen

    def lease(self, unit: Screen) -> dict[str, Any]:
        return {"screen_id": unit.pk}

    def claimed(self, row: tuple[Any, ...], *, stale: bool, candidates: list[dict[str, Any]] | None) -> Claimed:
        screen, app = load_row(self.loads, row)
        screen.app = app
        return Claimed(unit=screen, screen=screen, stale=stale, candidates=candidates)


class QuestionUnit(Unit):
    name = "question"
    field = "question"
    model = Question
    loads = (
        Load(Question, plain=True),
        Load(Screen, "screen__", plain=True),
        Load(App, "screen__app__", plain=True),
    )
    screen_ref = "screen_id"

    def lock(self, *, assignment: Assignment) -> Question:
        assert assignment.question_id is not None
        return question_lock(question_id=assignment.question_id)

    def lease(self, unit: Question) -> dict[str, Any]:
        return {"screen_id": unit.screen_id, "question": unit}

    def claimed(self, row: tuple[Any, ...], *, stale: bool, candidates: list[dict[str, Any]] | None) -> Claimed:
        question, screen, app = load_row(self.loads, row)
        screen.app = app
        question.screen = screen
        return Claimed(unit=question, screen=screen, stale=stale, candidates=candidates)


SCREEN = ScreenUnit()
QUESTION = QuestionUnit()


# Each stage's unit, by stage name: filled by the registry when it finds the stages (the review
# stage's unit locks the unit of the stage it reviews).
UNIT_OF_STAGE: dict[str, Unit] = {}


class SubmissionUnit(Unit):
    """A submitted assignment, handed out for review. Its lock is the reviewed stage's unit (a
    rejection may reopen it: a question waits for another answer), then the reviewed assignment."""

    name = "submission"
    field = "reviewed"
    shuffled = False  # the review stage serves submissions oldest first
    model = Assignment
    loads = (Load(Assignment), Load(Screen, "screen__", plain=True), Load(App, "screen__app__", plain=True))
    screen_ref = "screen_id"

    def lock(self, *, assignment: Assignment) -> Assignment:
        from annotation.lock_objects import assignment_lock

        assert assignment.reviewed_id is not None
        reviewed = Assignment.objects.get(pk=assignment.reviewed_id)
        reviewed.project = assignment.project
        UNIT_OF_STAGE[reviewed.stage].lock(assignment=reviewed)
        locked = assignment_lock(assignment_id=reviewed.pk)
        locked.project = assignment.project
        return locked

    def lease(self, unit: Assignment) -> dict[str, Any]:
        return {"screen_id": unit.screen_id, "reviewed": unit}

    def claimed(self, row: tuple[Any, ...], *, stale: bool, candidates: list[dict[str, Any]] | None) -> Claimed:
        reviewed, screen, app = load_row(self.loads, row)
        screen.app = app
        reviewed.screen = screen
        return Claimed(unit=reviewed, screen=screen, stale=stale, candidates=candidates)


SUBMISSION = SubmissionUnit()
