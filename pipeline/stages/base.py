"""What a stage is: one module that declares everything about it (docs/engine.md, "Adding a stage").

A stage module defines a subclass of ``StageDefinition``; the registry
(``pipeline.stages.registry``) finds it. Everything else (the engine, the REST API, the
workspace pages, the project's progress, the scripted crowd) looks stages up there and asks
the definition; nothing outside a stage's module branches on its name.

A definition declares:

* ``name``/``label`` (an ``annotation.models.Stage`` value) and its ``unit`` (``units.SCREEN``,
  ``units.QUESTION``);
* the queue: ``queue`` (units open to a user, oldest first), ``queue_inputs`` (the project
  settings ``queue`` reads: they key its compiled SQL), ``open_to`` (the fresh re-check used
  by late submits), ``check_access``;
* the rules: ``clean`` runs ``submit_serializer`` (no writes, so a refused body loses
  nothing), ``apply`` writes the submission and moves the unit on, inside the transaction
  that marks the assignment submitted, holding the unit's and the assignment's locks;
* the wire format: ``submit_serializer`` and ``payload_serializer`` (+ ``payload_extra``);
* the page: ``template``, ``controller`` (the ES module under ``frontend/static/frontend/
  workspace/stages/``), ``viewer`` options, ``limits`` and ``messages`` (shared with the
  page's script), ``form_body`` / ``form_state`` (an HTML form as a submit body / as a
  draft), ``draft_lines`` (a closed assignment's draft as text), ``page_context``;
* its contribution to the project's progress: ``pending``;
* quality control (docs/quality.md): whether it has gold items and how a submission scores
  against one (``gold_score``, ``gold_answer``), whether its submissions are reviewed and the
  rules a reviewer rejects by (``review_reasons``), what a rejection does (``review_rejected``)
  and what undoes it when the review itself is withdrawn (``review_reverted``), what happens to
  a stopped annotator's work (``withdraw``; every stage says, or declares ``withdraws_nothing``
  with the reason: the registry test holds it) and what a lead's overturning of that decision
  brings back (``restore``);
* model assistance (docs/assist.md), for an assisted stage: the suggestion shown with an assignment
  (``suggestion``), what a submission did with it (``suggestion_use``), and the suggestion as a
  submission (``suggestion_submission``, to score it against a gold answer), and where the stage's
  own record keeps the use (``suggestion_kept``);
* how the scripted crowd works it: ``crowd_submission`` (and ``crowd_lead_step``, and
  ``crowd_gold_fit``: whether a lead would make a unit gold).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any, ClassVar

from django.db.models import Exists, Q, QuerySet
from django.http import QueryDict
from rest_framework import serializers

from annotation.db import compiled
from annotation.exceptions import ApplicationError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Membership,
    Project,
    Purpose,
    QualityEvent,
    Question,
    Role,
    Screen,
    SuggestionUse,
)
from pipeline.assist.service import ASSISTED

from .units import Unit
from .wire import TEXT_MAX, AssignmentPayloadSerializer, validated


class StageDefinition:
    name: ClassVar[str]
    label: ClassVar[str]
    short_label: ClassVar[str]  # for narrow table columns
    unit: ClassVar[Unit]
    queue_inputs: ClassVar[tuple[str, ...]] = ()
    submit_serializer: ClassVar[type[serializers.Serializer]]
    # its own, with ``stage = wire.stage_name_field(name)`` (the registry checks it)
    payload_serializer: ClassVar[type[AssignmentPayloadSerializer]]
    template: ClassVar[str]
    controller: ClassVar[str]
    # How the page's screenshot viewer starts: VH labels drawn, plain drag pans, boxes shown.
    viewer: ClassVar[dict[str, bool]] = {"labels": False, "drag_pans": True, "boxes": False}
    # Messages of the page's own checks (the server's form checks use the same text).
    messages: ClassVar[dict[str, str]] = {}
    # Whether scripted annotators sometimes skip (only where others can pick the work up).
    crowd_skips: ClassVar[bool] = False
    # Quality control: a stage with gold qualifies annotators on gold items and mixes control
    # items into its queue; a reviewed stage's submissions are sampled for review (a writing stage
    # without gold qualifies its writers by the review of their first submissions).
    has_gold: ClassVar[bool] = False
    reviewed: ClassVar[bool] = True
    # Whether work waiting in this stage keeps the project from post-processing (review does not).
    blocks_release: ClassVar[bool] = True
    review_reasons: ClassVar[dict[str, str]] = {}
    # A stage whose work is reviewing others' (done by leads and reviewers, not the crowd).
    reviewing: ClassVar[bool] = False
    # A stage whose work leaves nothing in the release says why here instead of defining
    # ``withdraw`` and ``restore`` (tests/pipeline/stages/test_registry.py holds every stage to one).
    withdraws_nothing: ClassVar[str] = ""
    # Balanced gold (docs/quality.md, "Balanced gold"): the classes of this stage's gold answers, each
    # the answer's values at some keys. A constant answer is right on one class only, so the gold pick
    # takes each qualification item (every gold item with ``gold_balanced_controls``) from a class
    # drawn at random among those it could serve, each alike (``pipeline.quality.gold.gold_pick``): a
    # constant answer scores about one item in the number of classes, and nothing served before
    # tells which class comes next.
    gold_classes: ClassVar[tuple[Mapping[str, Any], ...]] = ()
    gold_balanced_controls: ClassVar[bool] = False

    # --- who and what ----------------------------------------------------------------------

    def check_access(self, *, user: Any, membership: Membership | None) -> None:
        """Raise ``PermissionDeniedError`` if a member may not work on this stage (``annotation.permissions``)."""

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        """Units open to ``user``, oldest first (unlocked; the engine claims with skip-locked).

        Reads of ``project`` other than its key must be named in ``queue_inputs``."""
        raise NotImplementedError

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        """Fresh re-check of a locked unit: may ``user`` hold a lease on it now?

        ``own`` is the user's assignment being resumed (excluded from the counts)."""
        raise NotImplementedError

    def capacity(self, *, project: Project, unit_answers_needed: int | None) -> int:
        """How many live leases one unit may have at once (checked by ``assignment_double_leases``)."""
        return 1

    def available_count(self, *, project: Project, user: Any, now: datetime) -> int:
        return self.queue(project=project, user=user, now=now).count()

    # --- rules -----------------------------------------------------------------------------

    def limits(self, *, project: Project) -> dict[str, int]:
        """The numbers of this stage's rules for ``project`` (the serializer, form and page read them)."""
        return {"text_max": TEXT_MAX}

    def submit_context(self, *, assignment: Assignment) -> dict[str, Any]:
        return {"assignment": assignment, "limits": self.limits(project=assignment.project)}

    def clean(self, *, assignment: Assignment, data: dict[str, Any]) -> dict[str, Any]:
        """The normalised submission, or ``ApplicationError(field=...)``. No writes."""
        return validated(self.submit_serializer(data=data, context=self.submit_context(assignment=assignment)))

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        """Write the submission and move the unit on. Caller holds unit and assignment locks."""
        raise NotImplementedError

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        """The stage's own fields of the ``next`` payload (declared by ``payload_serializer``)."""
        return {}

    # --- model assistance (docs/assist.md) ------------------------------------------------------

    @property
    def assisted(self) -> bool:
        """Whether the stage shows a backend's suggestions: said once, by ``ASSISTED`` (which computes them)."""
        return self.name in ASSISTED

    def suggestion(self, *, assignment: Assignment) -> dict[str, Any] | None:
        """The suggestion shown with ``assignment`` (the same read for control items and real work)."""
        return None

    def suggestion_use(self, *, suggestion: dict[str, Any] | None, cleaned: dict[str, Any]) -> str:
        """What a submission did with the suggestion shown: ``SuggestionUse`` (``accepted`` unchanged,
        ``edited``, ``none`` shown)."""
        return SuggestionUse.NONE

    def suggestion_submission(self, *, suggestion: dict[str, Any], cleaned: dict[str, Any]) -> dict[str, Any]:
        """The suggestion as a submission, to score it against a gold answer with ``gold_score``."""
        raise NotImplementedError

    def suggestion_kept(self, *, assignment: Assignment, use: str) -> None:
        """Keep ``use`` on the stage's own record of a real submission (inside the submit's transaction)."""

    # --- the page --------------------------------------------------------------------------

    def form_body(self, *, post: QueryDict, assignment: Assignment) -> dict[str, Any]:
        """The submit body of the page's form, or ``ApplicationError(field=...)`` with the page's message."""
        raise NotImplementedError

    def form_state(self, *, post: QueryDict) -> dict[str, Any]:
        """What the page posted, as a draft-shaped state (a refused submit loses nothing)."""
        raise NotImplementedError

    def draft_lines(self, *, draft: dict[str, Any]) -> list[tuple[str, str]]:
        """A closed assignment's draft as ``(label, text)`` lines, so nothing typed is out of reach."""
        return []

    def page_context(self, *, payload: dict[str, Any], state: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
        """Extra template context of the stage's page."""
        return {}

    # --- quality control ---------------------------------------------------------------------

    def gold_answer(self, *, submission: dict[str, Any]) -> dict[str, Any]:
        """What a gold item keeps of an accepted (normalised) submission."""
        return dict(submission)

    def gold_score(self, *, given: dict[str, Any], gold: dict[str, Any], project: Project) -> tuple[bool, str]:
        """Whether a normalised submission matches a gold answer, and why not (for the feedback)."""
        raise NotImplementedError

    def gold_unit(self, *, gold: Any) -> dict[str, Any]:
        """What a lease of the gold item ``gold`` records as its unit (as ``Unit.lease``): the same
        fields a real lease of the stage has, so that its payload is built the same way."""
        return {"screen_id": gold.screen_id, "question": gold.question}

    def gold_pick_rules(self, *, project: Project, user: Any, purpose: str) -> dict[str, Any]:
        """How the gold pick (``pipeline.quality.gold.gold_pick``) narrows and orders this stage's gold
        items for ``user`` serving one for ``purpose`` (qualification or control): ``exclude`` (a
        ``Q`` over ``GoldItem``: never served to them), ``prefer`` (order expressions put first) and
        ``balance`` (the classes, one drawn at random). Default: ``gold_classes`` balanced for a
        qualification item (for every gold item with ``gold_balanced_controls``), a qualification item
        served only while every class the annotator could get is servable (``every_class``). No query."""
        if self.gold_classes and purpose == Purpose.QUALIFICATION:
            return {"balance": self.gold_classes, "every_class": True}
        if self.gold_classes and self.gold_balanced_controls:
            return {"balance": self.gold_classes}
        return {}

    def gold_unit_waiting(self) -> Q | Exists:
        """Over ``GoldItem``: its unit still waits in this stage's queue (served as a gold item only
        once it has left it, ``pipeline.quality.gold.gold_servable``)."""
        return Q(pk__in=[])

    def after_submit(self, *, assignment: Assignment) -> None:
        """After a submission's transaction: project-wide consequences that take the project's
        lock (which must not be taken while holding a unit's lock)."""

    def review_rejected(self, *, reviewed: Assignment, reason: str, now: datetime) -> None:
        """A reviewer rejected ``reviewed`` (a submission of this stage): undo what needs undoing.
        Caller holds the locks of the reviewed unit and assignment."""

    def review_reverted(self, *, reviewed: Assignment, now: datetime) -> dict[str, int]:
        """The rejection of ``reviewed`` was withdrawn (its reviewer was stopped): bring back what
        ``review_rejected`` took out, unless others redid it meanwhile. Returns ``{"restored",
        "redone"}`` counts. Default: a rejection of this stage took nothing out."""
        return {"restored": 0, "redone": 0}

    def withdraw(
        self,
        *,
        project: Project,
        user: Any,
        requeue: bool,
        now: datetime,
        event: QualityEvent | None = None,
        assignments: Collection[int] | None = None,
    ) -> int:
        """Take a stopped annotator's work in this stage out of the release (``requeue``: and ask
        other annotators to do it again); returns how many items. ``event`` is the quality
        decision that stopped them (``status_after`` paused or not qualified): the items are
        marked with it, so a lead who overturns it brings them back (``restore``). Every stage
        defines it or declares ``withdraws_nothing``. ``assignments``: only the work of these of the
        annotator's assignments (the provisional work held back, ``pipeline.quality.provisional``);
        ``None``: all of it."""
        return 0

    def restore(self, *, project: Project, user: Any, event: QualityEvent, now: datetime) -> dict[str, int]:
        """A lead overturned ``event`` (reinstated the annotator): bring back what it withdrew in
        this stage, except what others redid meanwhile. Returns ``{"restored", "redone"}`` (and
        the stage's own counts of what stayed out and why)."""
        return {"restored": 0, "redone": 0}

    # --- progress and crowd ----------------------------------------------------------------

    def pending(self, *, project: Project, screens: dict[str, int], questions: dict[str, int]) -> int:
        """Units still waiting in this stage (``screens``/``questions``: counts by state, read once
        for every stage). The project is ready for post-processing when no stage has any."""
        return 0

    def crowd_lead_step(self, *, project: Project) -> dict[str, Any] | None:
        """What a lead does before the scripted crowd works this stage (``None``: nothing)."""
        return None

    def crowd_gold_fit(self, *, payload: dict[str, Any]) -> bool:
        """Whether a lead would make this unit gold: its right answer is clear (every careful
        scripted annotator agrees with the scripted truth on it)."""
        return True

    def crowd_submission(self, *, payload: dict[str, Any], actor: Any) -> dict[str, Any]:
        """The submit body a scripted annotator (``devtools.crowd``) sends for ``payload``.

        ``actor`` has ``rng`` (a seeded ``random.Random``) and ``noisy(truth) -> bool``; stages
        read its profile's shares with defaults (``getattr``), and the writing stages its
        ``rule_broken(text)`` (the writing rule a question breaks, or None) when it has one."""
        raise NotImplementedError


# --- queue helpers --------------------------------------------------------------------------


def live_q(now: datetime) -> Q:
    return Q(status=AssignmentStatus.LEASED, lease_expires_at__gt=now)


def stale_q(now: datetime) -> Q:
    """Leases whose time ran out but that nobody reclaimed yet (still ``leased``)."""
    return Q(status=AssignmentStatus.LEASED, lease_expires_at__lte=now)


def taken_by_user_q(user: Any) -> Q:
    """The user holds, did or declined this unit: never offered to them again."""
    return Q(
        annotator=user,
        status__in=[AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED],
    )


def others_live_lease_exists(*, stage: str, now: datetime, own: Assignment | None, screen: Screen) -> bool:
    """Whether anybody but ``own`` holds a live lease of ``screen`` in ``stage`` (compiled once per stage)."""

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


def screen_questions(screen: Screen, *, not_from: Assignment | None = None) -> list[Question]:
    """The screen's questions in order; ``not_from`` leaves out those an assignment wrote
    (so re-checking an already accepted submission does not find its own questions)."""
    qs = Question.objects.filter(screen=screen).order_by("position")
    if not_from is not None:
        qs = qs.exclude(origin=not_from)
    return list(qs)


def question_brief(question: Question) -> dict[str, Any]:
    return {"id": question.pk, "text": question.text}


# --- crowd helpers --------------------------------------------------------------------------


def crowd_share(key: str) -> float:
    """A number in [0, 1] fixed by ``key``: a scripted crowd's shared "truth" (the same for every
    scripted annotator, e.g. whether an app is non-English)."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


# --- form helpers ---------------------------------------------------------------------------


def form_text(post: QueryDict, name: str) -> str:
    return (post.get(name) or "").strip()


def form_flag(post: QueryDict, name: str) -> bool:
    return (post.get(name) or "").lower() in {"1", "on", "true", "yes"}


def form_refuse(message: str, *, field: str) -> ApplicationError:
    return ApplicationError(message, field=field)


_FIELD_LABELS = {
    "non_english_app": "Non-English app",
    "vh_out_of_sync": "VH out of sync",
    "verdict": "Verdict",
    "elements": "Elements",
    "full_answer": "Full answer",
    "question": "Question",
    "questions": "Questions",
    "note": "Note",
}


def submission_lines(value: dict[str, Any]) -> list[tuple[str, str]]:
    """A (normalised) submission or a gold answer as ``(label, text)`` lines a person reads: the
    review page, and an annotator's feedback (their answer next to the gold one)."""
    lines = []
    for key, item in value.items():
        if isinstance(item, bool):
            text = "yes" if item else "no"
        elif isinstance(item, list):
            parts = [str(e.get("text") or f"box {e.get('bounds')}") if isinstance(e, dict) else str(e) for e in item]
            text = " · ".join(f"{n}. {p}" for n, p in enumerate(parts, 1)) or "none"
        elif item in (None, ""):
            continue
        else:
            text = str(item)
        lines.append((_FIELD_LABELS.get(key, key.replace("_", " ").capitalize()), text))
    return lines


def trusted(*, user: Any, membership: Membership | None) -> bool:
    """Leads and site admins are never gated by quality control."""
    return bool(getattr(user, "is_superuser", False)) or (membership is not None and membership.role == Role.LEAD)


def qualification_mode(stage: StageDefinition) -> str:
    """``gold`` (a set of gold items), ``review`` (the first submissions are reviewed) or ``""``."""
    if stage.has_gold:
        return "gold"
    return "review" if stage.reviewed else ""
