"""Gold items: a unit of a stage with its right answer, for qualification and monitoring.

A lead makes them by promoting an accepted submission (optionally edited), by importing a
public-format release with ``import_release --gold``, or by writing one (admin, API, command).
The answer is validated by the stage's own submit serializer, so a gold answer is always a
submission the stage would accept.
"""

from __future__ import annotations

import math
import random
import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    GoldSource,
    Project,
    Purpose,
    Question,
    QuestionSource,
    Review,
    ReviewState,
    Screen,
    Stage,
    Standing,
    StandingStatus,
)
from pipeline.decisions.agreement import AnswerView, ElementView, agreement_group
from pipeline.decisions.decide import agreement_settings_for
from pipeline.stages.registry import stage_get, stages


def _stage_with_gold(name: str) -> Any:
    stage = stage_get(name)
    if not stage.has_gold:
        raise ApplicationError(f"The stage {name!r} has no gold items (it is qualified by review).", field="stage")
    return stage


def _as_submit_body(answer: dict[str, Any]) -> dict[str, Any]:
    """A normalised submission (or a gold answer) back as a submit body: an element normalised to
    ``{"vh_index", "bounds", "text"}`` names either its candidate or its drawn box, not both."""
    elements = answer.get("elements")
    if not isinstance(elements, list):
        return answer
    body = []
    for element in elements:
        if isinstance(element, dict) and "vh_index" in element and "bounds" in element:
            drop = "bounds" if element["vh_index"] is not None else "vh_index"
            element = {k: v for k, v in element.items() if k != drop}
        body.append(element)
    return {**answer, "elements": body}


def _validated_answer(*, stage: Any, unit_assignment: Assignment, answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` as the stage would accept it from an annotator of ``unit_assignment``'s unit."""
    cleaned = stage.clean(assignment=unit_assignment, data=_as_submit_body(answer))
    return stage.gold_answer(submission=cleaned)


def gold_item_create(
    *,
    project: Project,
    stage: str,
    screen: Screen,
    question: Question | None,
    answer: dict[str, Any],
    user: Any,
    source: str = GoldSource.MANUAL,
    origin: Assignment | None = None,
    note: str = "",
) -> GoldItem:
    """A gold item of ``stage`` for ``screen`` (``question`` for the answers stage) with ``answer``
    (a submit body of the stage, validated by it). ``ConflictError`` when the unit already has one."""
    definition = _stage_with_gold(stage)
    if screen.project_id != project.pk or (question is not None and question.screen_id != screen.pk):
        raise NotFoundError("No such screen or question in this project.")
    if (definition.unit.field == "question") != (question is not None):
        raise ApplicationError(f"A gold item of {stage} names a {definition.unit.name}.", field="question")
    # A gold review's unit is the reviewed submission (``origin``): its stage's rules check the answer.
    reviewed = origin if definition.reviewing else None
    if definition.reviewing and origin is None:
        raise ApplicationError("A gold review names the reviewed submission.", field="origin")
    probe = Assignment(project=project, stage=stage, screen=screen, question=question, reviewed=reviewed)
    cleaned = _validated_answer(stage=definition, unit_assignment=probe, answer=answer)
    try:
        with transaction.atomic():
            return GoldItem.objects.create(
                project=project,
                stage=stage,
                screen=screen,
                question=question,
                answer=cleaned,
                source=source,
                origin=origin,
                created_by=user if getattr(user, "is_authenticated", False) else None,
                note=note,
            )
    except IntegrityError as exc:
        raise ConflictError("This item is already gold.") from exc


def gold_unit_create(
    *,
    project: Project,
    stage: str,
    rico_id: str,
    answer: dict[str, Any],
    user: Any,
    question_id: int | None = None,
    question_text: str | None = None,
    note: str = "",
) -> GoldItem:
    """A gold item written by a lead (the API, the ``gold`` command), its unit named as they name
    it: the screen by ``rico_id`` and, for the answers stage, the question on that screen by
    ``question_id`` or by its text (as written or as post-processed). ``NotFoundError`` with the
    field when the project has no such screen or question; then as ``gold_item_create``."""
    screen = Screen.objects.filter(project=project, rico_id=rico_id).first()
    if screen is None:
        raise NotFoundError("No screen with this rico_id in the project.", field="rico_id")
    question = None
    if question_id is not None:
        question = Question.objects.filter(pk=question_id, screen=screen).first()
        if question is None:
            raise NotFoundError("No question with this id on the screen.", field="question_id")
    elif question_text is not None:
        named = Q(text=question_text) | Q(final_text=question_text)
        question = Question.objects.filter(named, screen=screen).order_by("pk").first()
        if question is None:
            raise NotFoundError("No question with this text on the screen.", field="question")
    return gold_item_create(
        project=project,
        stage=stage,
        screen=screen,
        question=question,
        answer=answer,
        user=user,
        source=GoldSource.MANUAL,
        note=note,
    )


def gold_promote(*, project: Project, assignment_id: int, user: Any, answer: dict[str, Any] | None = None) -> GoldItem:
    """Make an accepted submission gold, its answer as submitted or as the lead edited it."""
    found = (
        Assignment.objects.select_related("screen", "question", "reviewed")
        .filter(pk=assignment_id, project=project, status=AssignmentStatus.SUBMITTED, purpose=Purpose.WORK)
        .first()
    )
    if found is None:
        raise NotFoundError("No accepted submission with this id in the project.")
    found.project = project
    # A review promoted: a gold review, its unit the submission it reviewed (``review_gold``).
    origin = found.reviewed if found.stage == Stage.REVIEW else found
    standing_review = Review.objects.filter(assignment=found, reviewed__isnull=False)
    if origin is None or (found.stage == Stage.REVIEW and not standing_review.exists()):
        raise NotFoundError("No accepted submission with this id in the project (a review withdrawn or second).")
    return gold_item_create(
        project=project,
        stage=found.stage,
        screen=found.screen,
        question=found.question,
        answer=answer if answer is not None else dict(found.submission or {}),
        user=user,
        source=GoldSource.PROMOTED,
        origin=origin,
    )


# How many recent submissions the gold page offers to promote.
PROMOTABLE_LIMIT = 50


def gold_promotable(*, project: Project, stage: str | None = None, limit: int = PROMOTABLE_LIMIT) -> list[Assignment]:
    """The newest accepted submissions (real work, submitted, not rejected in review) of the stages
    with gold, ``stage`` or all, whose unit is not gold yet: what the gold page offers a lead to
    promote. Each with its screen, question and annotator. One query."""
    return list(gold_promotable_query(project=project, stage=stage, limit=limit))


def gold_promotable_query(
    *, project: Project, stage: str | None = None, limit: int = PROMOTABLE_LIMIT
) -> QuerySet[Assignment]:
    """``gold_promotable``'s statement: a walk of ``assignment_submitted_newest`` that stops after
    ``limit`` rows, not a sort of every submission (``EXPLAIN`` checked in the tests)."""
    names = [stage] if stage else _gold_stage_names()
    for name in names:
        _stage_with_gold(name)
    gold_screens = GoldItem.objects.filter(
        project=project, stage=OuterRef("stage"), screen=OuterRef("screen"), question__isnull=True
    )
    gold_questions = GoldItem.objects.filter(project=project, stage=OuterRef("stage"), question=OuterRef("question"))
    # A review's unit is the submission it reviewed, not its screen or question: a gold review of one
    # submission must not hide the reviews of others on the same screen. And only a review that
    # stands and decides can be promoted (``gold_promote`` refuses a withdrawn or second one).
    gold_reviews = GoldItem.objects.filter(project=project, stage=Stage.REVIEW, origin=OuterRef("reviewed"))
    deciding = Review.objects.filter(assignment=OuterRef("pk"), reviewed__isnull=False, second_of__isnull=True)
    reviewing = Q(reviewed__isnull=False)
    found = (
        Assignment.objects.filter(
            project=project, stage__in=names, status=AssignmentStatus.SUBMITTED, purpose=Purpose.WORK
        )
        .exclude(review_state=ReviewState.REJECTED)
        .exclude(~reviewing & Exists(gold_screens) & Q(question__isnull=True))
        .exclude(~reviewing & Exists(gold_questions) & Q(question__isnull=False))
        .exclude(reviewing & (Exists(gold_reviews) | ~Exists(deciding)))
        .select_related("screen", "question", "annotator")
        .defer("draft", "screen__vh")
        .order_by("-submitted_at", "-pk")
    )
    return found[:limit]


def _gold_stage_names() -> list[str]:
    return [name for name, definition in stages().items() if definition.has_gold]


def gold_set_active(*, project: Project, gold_id: int, active: bool) -> GoldItem:
    gold = GoldItem.objects.filter(pk=gold_id, project=project).first()
    if gold is None:
        raise NotFoundError("Gold item not found.")
    gold.active = active
    gold.save(update_fields=["active"])
    return gold


def gold_servable(*, project: Project, stage: str) -> QuerySet[GoldItem]:
    """The gold items of ``stage`` that may be served at all: active, not retired (served fewer
    than ``gold_exposures_max`` times; 0: never retired) and whose unit has left the stage's queue
    (``StageDefinition.gold_unit_waiting``): a unit still waiting there could come to the same
    annotator as real work too, and a control lease of it would move their ``available`` count
    differently from a real one."""
    return _in_use(project=project, stage=stage).exclude(_stage_with_gold(stage).gold_unit_waiting())


def _in_use(*, project: Project, stage: str) -> QuerySet[GoldItem]:
    """Active gold items of ``stage`` not retired (served fewer than ``gold_exposures_max`` times)."""
    items = GoldItem.objects.filter(project=project, stage=stage, active=True)
    if project.gold_exposures_max:
        items = items.filter(exposures__lt=project.gold_exposures_max)
    return items


def gold_servable_stages(*, project: Project) -> set[str]:
    """The stages that have a servable gold item (``gold_servable``). One query."""
    servable = Q(pk__in=[])
    for name, definition in stages().items():
        if definition.has_gold:
            servable |= Q(Q(stage=name), ~definition.gold_unit_waiting())
    items = GoldItem.objects.filter(servable, project=project, active=True)
    if project.gold_exposures_max:
        items = items.filter(exposures__lt=project.gold_exposures_max)
    return set(items.values_list("stage", flat=True).distinct())


def gold_available(*, project: Project, stage: str) -> int:
    return gold_servable(project=project, stage=stage).count()


def gold_open_to(*, project: Project, stage: str, user: Any) -> QuerySet[GoldItem]:
    """The servable gold items ``user`` may get (``gold_servable``): never one they were served
    before, however that lease ended, and never a unit they met as real work in the stage (a screen
    they judged, a question they answered) nor a question they wrote. Either would be a repeat that
    real work never is, and so a tell."""
    return _open_to(gold_servable(project=project, stage=stage), stage=stage, user=user)


def gold_coming_to(*, project: Project, stage: str, user: Any) -> QuerySet[GoldItem]:
    """The gold items ``user`` could get (as ``gold_open_to``) once their unit has left the stage's queue:
    active and not retired, but their screen or question still waits for real work (a gold item made from
    a validation question with one of its three answers, or from a train question the lead asks to be
    answered twice). A qualification set short of items waits for these rather than being decided on a
    few, but only while somebody is active in the stage to finish those units: with nobody (the first
    annotators of a stage) waiting would wait for ever, so none is coming then."""
    if not Standing.objects.filter(project=project, stage=stage, status=StandingStatus.ACTIVE).exists():
        return GoldItem.objects.none()
    items = _in_use(project=project, stage=stage).filter(_stage_with_gold(stage).gold_unit_waiting())
    return _open_to(items, stage=stage, user=user)


def _open_to(items: QuerySet[GoldItem], *, stage: str, user: Any) -> QuerySet[GoldItem]:
    """Of gold ``items``, those ``user`` may get (``gold_open_to``)."""
    field = _stage_with_gold(stage).unit.field
    seen = Assignment.objects.filter(annotator=user, gold__isnull=False).values("gold_id")
    items = items.exclude(pk__in=seen)
    if field in ("screen", "question"):  # a gold review's unit is its origin: the stage's own rules
        worked = Assignment.objects.filter(
            annotator=user, stage=stage, purpose=Purpose.WORK, **{field: OuterRef(field)}
        )
        items = items.exclude(Exists(worked))
    if field == "question":
        items = items.exclude(question__author=user)
    return items


def _class_of(balance: Sequence[Mapping[str, Any]]) -> Case:
    """Over ``GoldItem``: the number of the class of ``balance`` its answer is in, -1 for none."""
    return Case(
        *(
            When(Q(**{f"answer__{key}": value for key, value in cls.items()}), then=Value(number))
            for number, cls in enumerate(balance)
        ),
        default=Value(-1),
        output_field=IntegerField(),
    )


def gold_class_label(cls: Mapping[str, Any]) -> str:
    """A class of gold answers in words: its verdict, or the flags it sets ("no flag" for none)."""
    parts = [str(v).replace("_", " ") for v in cls.values() if isinstance(v, str)]
    parts += [key.replace("_", " ") for key, v in cls.items() if v is True]
    return ", ".join(parts) or "no flag"


@dataclass(frozen=True)
class GoldBalance:
    """One stage's servable gold by class of answers (``StageDefinition.gold_classes``), and the classes
    a constant answer of which passes every qualification set: fewer than ``needed`` servable items
    of all the other classes together, so any set holds at least the share that qualifies of its class."""

    stage: str
    label: str
    classes: list[tuple[str, int]]
    needed: int
    constant_passes: list[str]
    # active gold items not servable yet: their unit still waits in the stage's queue (``gold_coming_to``)
    waiting: int = 0
    qualification_items: int = 0

    @property
    def servable(self) -> int:
        return sum(n for _, n in self.classes)

    @property
    def qualifications_wait(self) -> bool:
        """Fewer servable items than a qualification set takes, or servable items of one class only,
        while others wait for their units: sets wait for them (``standing.qualification_check``,
        ``gold_pick``'s ``every_class``), and nobody qualifies until others have finished those units."""
        classes = sum(1 for _, n in self.classes if n)
        return self.waiting > 0 and (self.servable < self.qualification_items or classes < 2)


def qualification_allowed_wrong(size: int, threshold: float) -> int:
    """How many wrong items a sample of ``size`` may hold and still reach ``threshold`` (the float
    product is rounded down first: 0.7 x 10 is 7.000000000000001)."""
    return size - math.ceil(threshold * size - 1e-9)


def _others_needed(project: Project) -> int:
    """How many gold items of other kinds a constant answer must be able to meet before an attempt can
    fail it: one wrong more than the first sample allows, and with a second sample
    (``qualification_extra_items``, ``standing.qualification_sample``) one more than that allows too
    (the known-bad items all used up in the first, the second would be all of the constant's kind)."""
    threshold, extra = project.qualification_threshold, project.qualification_extra_items
    needed = qualification_allowed_wrong(project.qualification_items, threshold) + 1
    if extra:
        needed += qualification_allowed_wrong(extra, threshold) + 1
    return needed


def gold_balance(*, project: Project) -> list[GoldBalance]:
    """Per stage with balanced gold: the servable items of each class, and which constant answers
    would pass every qualification attempt (``_others_needed``). One query per stage."""
    needed = _others_needed(project)
    rows = []
    for name, definition in stages().items():
        if not (definition.has_gold and definition.gold_classes):
            continue
        counts: Counter[int] = Counter()
        waiting = 0
        for gold_class, unit_waiting, n in (
            _in_use(project=project, stage=name)
            .annotate(
                gold_class=_class_of(definition.gold_classes),
                unit_waiting=ExpressionWrapper(definition.gold_unit_waiting(), output_field=BooleanField()),
            )
            .order_by()
            .values_list("gold_class", "unit_waiting")
            .annotate(n=Count("pk"))
            .values_list("gold_class", "unit_waiting", "n")
        ):
            if unit_waiting:
                waiting += n
            else:
                counts[gold_class] += n
        total = sum(counts.values())
        labels = [gold_class_label(cls) for cls in definition.gold_classes]
        passes = [labels[number] for number in range(len(labels)) if counts[number] and total - counts[number] < needed]
        classes = [(labels[number], counts[number]) for number in range(len(labels))]
        if counts[-1]:
            classes.append(("other", counts[-1]))
        rows.append(GoldBalance(name, definition.label, classes, needed, passes, waiting, project.qualification_items))
    return rows


# Draws the class of a balanced gold pick: the operating system's randomness, which nothing an
# annotator sees, nor the code, predicts (tests put a seeded ``random.Random`` here).
gold_random: random.Random = secrets.SystemRandom()


def gold_pick(
    *,
    project: Project,
    stage: str,
    user: Any,
    exclude: Q | None = None,
    prefer: Sequence[Any] = (),
    balance: Sequence[Mapping[str, Any]] = (),
    every_class: bool = False,
) -> GoldItem | None:
    """A gold item ``user`` may get (``gold_open_to``), after the stage's own rules
    (``StageDefinition.gold_pick_rules``: ``exclude`` items never for ``user``, ``prefer`` order
    first), the least served first and, among those, in a random order of the database's (nothing an
    annotator could compute); ``None`` when none is left.

    ``balance`` (the stage's ``gold_classes``): the item comes from one class of answers drawn with
    equal chances among the classes the open items hold (an answer in none of them is a class of its
    own), so a class the project lacks never leaves the annotator without gold. One query more.
    ``every_class`` (qualification items): ``None`` while the open items hold one class only and another
    class the annotator could get is held by items whose units are still in the queue (``gold_coming_to``):
    a set drawn meanwhile would be of that one class, and passes a constant answer (the adversarial
    benchmark's constant answerer qualified so when the only servable answers gold was not answerable).
    With two classes open the draw goes on: a constant answer is right on about half. One query more."""
    items = gold_open_to(project=project, stage=stage, user=user)
    if exclude is not None:
        items = items.exclude(exclude)
    if balance:
        items = items.annotate(gold_class=_class_of(balance))
        held = sorted(items.order_by().values_list("gold_class", flat=True).distinct())
        if every_class and len(held) < 2:
            coming = gold_coming_to(project=project, stage=stage, user=user)
            if exclude is not None:
                coming = coming.exclude(exclude)
            later = coming.annotate(gold_class=_class_of(balance)).exclude(gold_class__in=held)
            if later.exists():
                return None
        if held:
            items = items.filter(gold_class=gold_random.choice(held))
    return items.select_related("screen", "screen__app", "question").order_by(*prefer, "exposures", "?").first()


def gold_exposed(*, gold: GoldItem) -> None:
    """Count one serving of ``gold`` (its lease was just made)."""
    GoldItem.objects.filter(pk=gold.pk).update(exposures=F("exposures") + 1)


def gold_items_with_results(*, project: Project, stage: str | None = None) -> QuerySet[GoldItem]:
    """Gold items with how annotators fared on each (``served``, ``correct``): a bad gold item
    shows up as one most annotators "fail"."""
    items = GoldItem.objects.filter(project=project)
    if stage:
        items = items.filter(stage=stage)
    # Correlated counts, not a join grouped over every result: a page of items counts only its own.
    results = ControlResult.objects.filter(gold=OuterRef("pk")).order_by().values("gold")
    served = results.annotate(n=Count("pk")).values("n")
    correct = results.filter(correct=True).annotate(n=Count("pk")).values("n")
    return (
        items.select_related("screen", "question")
        .annotate(
            served=Coalesce(Subquery(served, output_field=IntegerField()), 0),
            correct=Coalesce(Subquery(correct, output_field=IntegerField()), 0),
        )
        .order_by("stage", "pk")
    )


def _release_answer_body(answer: Any, question_text: str) -> dict[str, Any]:
    """A submit body of the answers stage from an imported release answer (drawn boxes: the
    release keeps boxes and texts, not always the candidate)."""
    elements = [{"bounds": [e.left, e.top, e.right, e.bottom], "text": e.text} for e in answer.elements.all()]
    full = answer.full_answer or (f"It says {', '.join(e['text'] for e in elements)}." if elements else "")
    return {"question": question_text, "verdict": answer.verdict, "elements": elements, "full_answer": full}


def gold_from_release(*, project: Project, user: Any, limit: int | None = None) -> dict[str, Any]:
    """Answers gold from a public-format release imported into ``project`` (``import_release
    --gold``): for each imported question without gold, the answer its release answers agree on
    (the first of the largest agreeing group under the project's agreement rule; a question with
    one answer takes it). Questions whose answers agree on nothing, or whose answer the answers
    stage would refuse (a box outside the screenshot, an empty text), are skipped and counted.
    Idempotent: a question that is already gold is left alone. ``limit``: at most that many new
    gold items. Returns ``{"created", "already_gold", "skipped": {reason: n}}``."""
    stage = _stage_with_gold("answers")
    settings = agreement_settings_for(project)
    gold_questions = set(
        GoldItem.objects.filter(project=project, stage="answers", question__isnull=False).values_list(
            "question_id", flat=True
        )
    )
    questions = (
        Question.objects.filter(screen__project=project, source=QuestionSource.IMPORTED)
        .select_related("screen")
        .prefetch_related(
            Prefetch(
                "answers",
                queryset=Answer.objects.filter(kept=True).prefetch_related(
                    Prefetch("elements", queryset=AnswerElement.objects.order_by("position"))
                ),
            )
        )
        .order_by("pk")
    )
    created, already = 0, 0
    skipped: Counter[str] = Counter()
    for question in questions.iterator(chunk_size=500):
        if limit is not None and created >= limit:
            break
        if question.pk in gold_questions:
            already += 1
            continue
        answers = list(question.answers.all())
        if not answers:
            skipped["no-answer"] += 1
            continue
        views = [
            AnswerView(
                verdict=a.verdict,
                elements=tuple(
                    ElementView(text=e.text, bounds=(e.left, e.top, e.right, e.bottom)) for e in a.elements.all()
                ),
            )
            for a in answers
        ]
        group = agreement_group(views, settings=settings).group if len(answers) > 1 else (0,)
        if not group:
            skipped["no-agreement"] += 1
            continue
        text = question.final_text or question.text
        probe = Assignment(project=project, stage=stage.name, screen=question.screen, question=question)
        try:
            cleaned = _validated_answer(
                stage=stage, unit_assignment=probe, answer=_release_answer_body(answers[group[0]], text)
            )
        except ApplicationError:
            skipped["refused-by-stage"] += 1
            continue
        try:
            with transaction.atomic():
                GoldItem.objects.create(
                    project=project,
                    stage=stage.name,
                    screen=question.screen,
                    question=question,
                    answer=cleaned,
                    source=GoldSource.IMPORTED,
                    created_by=user if getattr(user, "is_authenticated", False) else None,
                    note="from the imported release",
                )
        except IntegrityError:
            already += 1
            continue
        created += 1
    return {"created": created, "already_gold": already, "skipped": dict(skipped)}
