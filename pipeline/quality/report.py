"""The lead's quality figures (docs/quality.md, "Leads"): per annotator of a project, per stage or
over all stages, what quality control knows of their work; per annotator, control accuracy over
time with the items behind each point, and their quality events; per gold item, how annotators
fared on it.

``quality_report`` runs a fixed number of grouped queries however many annotators and items the
project has (the tests count them): memberships, standings, control results, reviews, assignment
durations and skips, the questions they wrote, and the answers of decided validation/test
questions (agreement is computed in Python with ``pipeline.decisions.agreement``, as
post-processing does). On PostgreSQL the median duration is ``percentile_cont(0.5)`` in the same
grouped query as the counts; elsewhere (SQLite) it is taken in Python over the durations one query
brings (``statistics.median``, the same figure).

The quality page and its API do not call ``quality_report`` for every member on each view: they
read the figures the ``quality-figures`` job stored (``pipeline.quality.figures``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from statistics import median
from typing import Any

from django.db import connection
from django.db.models import (
    Aggregate,
    Count,
    F,
    FloatField,
    Func,
    Q,
    QuerySet,
)
from django.db.models.functions import TruncDate

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    Membership,
    Project,
    Purpose,
    QualityEvent,
    Question,
    ReviewState,
    Split,
    Stage,
    Standing,
)
from pipeline.decisions.decide import DECIDABLE_STATES, agreement_settings_for
from pipeline.decisions.selectors import answer_records
from pipeline.stages import stage_filter

from .consensus import majority_of
from .gold import gold_items_with_results
from .review_gold import reviewer_agreement
from .rules import RULES
from .writers import written_questions

# A gold item "most fail": at least this many results, and fewer than this share right.
GOLD_SUSPECT_MIN_SERVED = 3
GOLD_SUSPECT_SHARE = 0.5


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


@dataclass
class StageStanding:
    """An annotator's standing in one stage, with their last qualification attempt's score."""

    stage: str
    status: str
    reason: str
    attempt: int
    items_done: int
    qualification_correct: int = 0
    qualification_items: int = 0

    @property
    def qualification_score(self) -> float | None:
        return _share(self.qualification_correct, self.qualification_items)


@dataclass
class AnnotatorFigures:
    """What quality control knows of one annotator's work (in one stage, or all of them)."""

    user_id: int
    username: str
    role: str
    standings: list[StageStanding] = field(default_factory=list)
    control_correct: int = 0
    control_items: int = 0
    agreement_agreed: int = 0
    agreement_answers: int = 0
    reviews_accepted: int = 0
    reviews_rejected: int = 0
    questions_written: int = 0
    questions_flagged: int = 0  # judged invalid or not answerable by an answerer
    questions_flagged_pass2: int = 0  # flagged by the screen's pass-2 writer
    questions_faulted: int = 0  # either of the two (each question once)
    # Reviewers: their verdicts on double-reviewed submissions against the other reviewer's.
    review_agreement_agreed: int = 0
    review_agreement_compared: int = 0
    submitted: int = 0
    skips: int = 0
    median_seconds: float | None = None

    @property
    def control_accuracy(self) -> float | None:
        return _share(self.control_correct, self.control_items)

    @property
    def agreement(self) -> float | None:
        return _share(self.agreement_agreed, self.agreement_answers)

    @property
    def review_agreement(self) -> float | None:
        """Share of their reviews of double-reviewed submissions with the other reviewer's verdict."""
        return _share(self.review_agreement_agreed, self.review_agreement_compared)

    @property
    def invalid_rate(self) -> float | None:
        """Share of their questions an answerer judged invalid or a pass-2 writer flagged."""
        return _share(self.questions_faulted, self.questions_written)

    @property
    def qualification_score(self) -> float | None:
        """The lowest last-attempt score of the stages they qualified (or tried to) on gold."""
        scores = [s.qualification_score for s in self.standings if s.qualification_score is not None]
        return min(scores) if scores else None

    @property
    def status(self) -> str:
        """The worst of their stage standings (paused first), for sorting and a glance."""
        order = ["paused", "not_qualified", "qualifying", "active"]
        found = [s.status for s in self.standings]
        return next((status for status in order if status in found), "")


# Columns of the quality page and API, and what sorts them (``?sort=`` / ``?sort=-...``).
SORT_KEYS: dict[str, Any] = {
    "username": lambda r: r.username.casefold(),
    "status": lambda r: ["paused", "not_qualified", "qualifying", "active", ""].index(r.status),
    "qualification": lambda r: r.qualification_score,
    "control": lambda r: r.control_accuracy,
    "agreement": lambda r: r.agreement,
    "accepted": lambda r: r.reviews_accepted,
    "rejected": lambda r: r.reviews_rejected,
    "invalid": lambda r: r.invalid_rate,
    "median": lambda r: r.median_seconds,
    "submitted": lambda r: r.submitted,
    "skips": lambda r: r.skips,
}


def report_sort(rows: list[AnnotatorFigures], sort: str) -> list[AnnotatorFigures]:
    """``rows`` sorted by a column of ``SORT_KEYS`` (``-`` first: descending); blank figures last."""
    key = sort.removeprefix("-")
    if key not in SORT_KEYS:
        raise ApplicationError(f"Unknown sort {sort!r}; one of {', '.join(SORT_KEYS)}.", field="sort")
    get = SORT_KEYS[key]
    present = [r for r in rows if get(r) is not None]
    missing = [r for r in rows if get(r) is None]
    present.sort(key=lambda r: (get(r), r.username.casefold()), reverse=sort.startswith("-"))
    return present + missing


def quality_report(
    *,
    project: Project,
    stage: str | None = None,
    user_id: int | None = None,
    sort: str = "username",
    agreement: dict[int, tuple[int, int]] | None = None,
) -> list[AnnotatorFigures]:
    """Every member of ``project`` (or only ``user_id``) with their quality figures, in ``stage``
    or over every stage, sorted by ``sort``. Ten queries, whatever the size of the project.
    ``agreement``: ``agreement_by_user`` already computed (the figures job computes it once for
    the two reports that show it)."""
    stage = stage_filter(stage)
    members = Membership.objects.filter(project=project).select_related("user").order_by("user__username")
    if user_id is not None:
        members = members.filter(user_id=user_id)
    rows = {m.user_id: AnnotatorFigures(m.user_id, m.user.username, m.role) for m in members}
    if not rows:
        return []

    def scoped(qs: QuerySet[Any], *, stage_field: str = "stage", user_field: str = "user_id") -> QuerySet[Any]:
        qs = qs.filter(**{f"{user_field}__in": list(rows)})
        return qs.filter(**{stage_field: stage}) if stage else qs

    _add_standings(rows, scoped(Standing.objects.filter(project=project)), project=project, scoped=scoped)
    _add_control(rows, scoped(ControlResult.objects.filter(project=project, purpose=Purpose.CONTROL)))
    work = scoped(Assignment.objects.filter(project=project, purpose=Purpose.WORK), user_field="annotator_id")
    _add_work(rows, work)
    _add_questions(rows, project=project, stage=stage)
    if stage in (None, Stage.ANSWERS):
        found = agreement if agreement is not None else agreement_by_user(project=project, user_id=user_id)
        for member_id, (agreed, answers) in found.items():
            if member_id in rows:
                rows[member_id].agreement_agreed, rows[member_id].agreement_answers = agreed, answers
    if stage in (None, Stage.REVIEW):
        for reviewer_id, (agreed, compared) in reviewer_agreement(project=project, user_ids=list(rows)).items():
            rows[reviewer_id].review_agreement_agreed, rows[reviewer_id].review_agreement_compared = agreed, compared
    return report_sort(list(rows.values()), sort)


def _add_standings(
    rows: dict[int, AnnotatorFigures], standings: QuerySet[Any], *, project: Project, scoped: Any
) -> None:
    found = list(
        standings.order_by("stage").values_list("user_id", "stage", "status", "reason", "attempt", "items_done")
    )
    # The last attempt's qualification results, per user and stage (one grouped query).
    quals = scoped(ControlResult.objects.filter(project=project, purpose=Purpose.QUALIFICATION))
    by_attempt = {
        (u, s, a): (c, n)
        for u, s, a, c, n in quals.values("user_id", "stage", "attempt")
        .annotate(c=Count("pk", filter=Q(correct=True)), n=Count("pk"))
        .values_list("user_id", "stage", "attempt", "c", "n")
    }
    for user_id, stage, status, reason, attempt, items_done in found:
        correct, items = by_attempt.get((user_id, stage, attempt), (0, 0))
        if not items:  # an attempt started without results yet: show the one before
            correct, items = by_attempt.get((user_id, stage, attempt - 1), (0, 0))
        rows[user_id].standings.append(StageStanding(stage, status, reason, attempt, items_done, correct, items))


def _add_control(rows: dict[int, AnnotatorFigures], results: QuerySet[Any]) -> None:
    for user_id, correct, items in (
        results.values("user_id")
        .annotate(c=Count("pk", filter=Q(correct=True)), n=Count("pk"))
        .values_list("user_id", "c", "n")
    ):
        rows[user_id].control_correct, rows[user_id].control_items = correct, items


class _Median(Aggregate):
    """PostgreSQL's ``percentile_cont(0.5)``: the median, the mean of the middle two for an even
    count (as ``statistics.median``)."""

    function = "PERCENTILE_CONT"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def _add_work(rows: dict[int, AnnotatorFigures], work: QuerySet[Any]) -> None:
    """Counts and the median duration of their real work (submitted, skipped or reviewed). On
    PostgreSQL one grouped query computes both (``percentile_cont``): no row of work comes into
    Python. Elsewhere (SQLite) the durations come in one query and the median is taken in Python
    (``_add_work_in_python``)."""
    done = work.filter(
        Q(status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED])
        | Q(review_state__in=[ReviewState.ACCEPTED, ReviewState.REJECTED])
    )
    if connection.vendor == "postgresql":
        seconds = Func(
            F("submitted_at"),
            F("created_at"),
            template="EXTRACT(EPOCH FROM (%(expressions)s))",
            arg_joiner=" - ",
            output_field=FloatField(),
        )
        submitted = Q(status=AssignmentStatus.SUBMITTED)
        for user_id, n_submitted, n_skipped, accepted, rejected, middle in (
            done.order_by()
            .values("annotator_id")
            .annotate(
                s=Count("pk", filter=submitted),
                k=Count("pk", filter=Q(status=AssignmentStatus.SKIPPED)),
                a=Count("pk", filter=Q(review_state=ReviewState.ACCEPTED)),
                r=Count("pk", filter=Q(review_state=ReviewState.REJECTED)),
                m=_Median(seconds, filter=submitted & Q(submitted_at__isnull=False)),
            )
            .values_list("annotator_id", "s", "k", "a", "r", "m")
        ):
            row = rows[user_id]
            row.submitted, row.skips, row.reviews_accepted, row.reviews_rejected = (
                n_submitted,
                n_skipped,
                accepted,
                rejected,
            )
            row.median_seconds = round(middle, 1) if middle is not None else None
        return
    _add_work_in_python(rows, done)


def _add_work_in_python(rows: dict[int, AnnotatorFigures], done: QuerySet[Any]) -> None:
    """``_add_work`` on a database without ``percentile_cont`` (SQLite): the counts and durations of
    ``done`` (their work submitted, skipped or reviewed) come in one query, and the median is taken in
    Python (``statistics.median``: the mean of the middle two for an even count, as
    ``percentile_cont(0.5)``). It only reads ``values_list`` rows, so the tests call it directly on
    PostgreSQL too and check it gives the figures of the grouped query."""
    durations: dict[int, list[float]] = defaultdict(list)
    for user_id, status, review_state, created_at, submitted_at in done.values_list(
        "annotator_id", "status", "review_state", "created_at", "submitted_at"
    ).iterator(chunk_size=5000):
        row = rows[user_id]
        if status == AssignmentStatus.SUBMITTED:
            row.submitted += 1
            if submitted_at is not None:
                durations[user_id].append((submitted_at - created_at).total_seconds())
        elif status == AssignmentStatus.SKIPPED:
            row.skips += 1
        row.reviews_accepted += review_state == ReviewState.ACCEPTED
        row.reviews_rejected += review_state == ReviewState.REJECTED
    for user_id, found in durations.items():
        rows[user_id].median_seconds = round(median(found), 1)


def _add_questions(rows: dict[int, AnnotatorFigures], *, project: Project, stage: str | None) -> None:
    for author_id, found in written_questions(project=project, author_ids=list(rows), stage=stage).items():
        row = rows[author_id]
        row.questions_written, row.questions_flagged = found.written, found.flagged
        row.questions_flagged_pass2, row.questions_faulted = found.flagged_pass2, found.faulted


def agreement_by_user(*, project: Project, user_id: int | None = None) -> dict[int, tuple[int, int]]:
    """Per annotator, ``(agreed, answers)``: their answers to validation/test questions whose answers
    are all in, and how many of them agree with the majority: in the largest group of
    pairwise-agreeing answers, that group more than half of the answers
    (``pipeline.decisions.agreement``; a tie: none agrees). ``user_id``: only the questions they
    answered (and only their figures)."""
    questions = Question.objects.filter(
        screen__project=project, screen__split__in=[Split.VALIDATION, Split.TEST], state__in=DECIDABLE_STATES
    )
    if user_id is not None:  # one annotator: only the questions they answered
        questions = questions.filter(answers__annotator_id=user_id)
    question_ids = list(questions.values_list("pk", flat=True))
    found: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    if not question_ids:
        return {}
    settings = agreement_settings_for(project)
    for answers in answer_records(question_ids).values():
        if len(answers) < 2:
            continue
        if user_id is not None and not any(a.annotator_id == user_id for a in answers):
            continue
        majority = majority_of([a.view for a in answers], settings=settings)
        for i, answer in enumerate(answers):
            who = answer.annotator_id
            if who is not None and (user_id is None or who == user_id):
                found[who][0] += i in majority
                found[who][1] += 1
    return {member: (agreed, n) for member, (agreed, n) in found.items()}


# --- one annotator ---------------------------------------------------------------------------------


@dataclass
class AccuracyPoint:
    """Control accuracy of one day (or one run of N control items), with the results behind it."""

    label: str
    correct: int
    items: int
    results: list[ControlResult]

    @property
    def accuracy(self) -> float:
        return self.correct / self.items


def control_timeline(
    *, project: Project, user_id: int, stage: str | None = None, per: int | None = None
) -> list[AccuracyPoint]:
    """The annotator's control items in order, grouped by day (``per`` None) or in runs of ``per``
    items, each point with its results (the given and gold answers, and why). One query."""
    stage = stage_filter(stage)
    if per is not None and per < 1:
        raise ApplicationError("per is a number of control items, 1 or more.", field="per")
    results = (
        ControlResult.objects.filter(project=project, user_id=user_id, purpose=Purpose.CONTROL)
        .select_related("gold", "gold__screen", "gold__question", "assignment")
        .annotate(day=TruncDate("created_at"))
        .order_by("created_at", "pk")
    )
    if stage:
        results = results.filter(stage=stage)
    groups: dict[str, list[ControlResult]] = defaultdict(list)
    for n, result in enumerate(results):
        day: date = result.day  # type: ignore[attr-defined]
        label = day.isoformat() if per is None else f"{n // per * per + 1}–{n // per * per + per}"
        groups[label].append(result)
    return [AccuracyPoint(label, sum(r.correct for r in rs), len(rs), rs) for label, rs in groups.items()]


def member_get_for_report(*, project: Project, user_id: int) -> Membership:
    found = Membership.objects.filter(project=project, user_id=user_id).select_related("user").first()
    if found is None:
        raise NotFoundError("This user is not a member of the project.")
    return found


def quality_events(*, project: Project, user_id: int | None = None, stage: str | None = None) -> QuerySet[QualityEvent]:
    """The project's quality events, newest first, with who they are about and who acted."""
    stage = stage_filter(stage)
    events = QualityEvent.objects.filter(project=project).select_related("user", "actor")
    if user_id is not None:
        events = events.filter(user_id=user_id)
    if stage:
        events = events.filter(stage=stage)
    return events.order_by("-created_at", "-pk")


def rule_label(rule: str) -> str:
    return RULES.get(rule, rule)


# --- gold items ------------------------------------------------------------------------------------


@dataclass
class GoldStat:
    gold: Any
    served: int
    correct: int

    @property
    def share(self) -> float | None:
        return _share(self.correct, self.served)

    @property
    def suspect(self) -> bool:
        """Most annotators fail it: perhaps the gold answer is wrong."""
        return self.served >= GOLD_SUSPECT_MIN_SERVED and self.correct / self.served < GOLD_SUSPECT_SHARE


def gold_stat_rows(*, project: Project, stage: str | None = None) -> QuerySet[Any]:
    """Each gold item (of ``stage``), by stage then id, with ``served`` and ``correct``: a queryset the
    caller paginates (the counts are correlated subqueries, so only a page's items are counted)."""
    return gold_items_with_results(project=project, stage=stage_filter(stage))


def gold_stats_of(items: Iterable[Any]) -> list[GoldStat]:
    return [GoldStat(g, g.served, g.correct) for g in items]


def gold_stats(*, project: Project, stage: str | None = None) -> list[GoldStat]:
    """Each gold item (of ``stage``) with how often it was served and answered right. One query."""
    return gold_stats_of(gold_stat_rows(project=project, stage=stage))


def gold_stat(*, project: Project, gold_id: int) -> GoldStat:
    found = gold_items_with_results(project=project).filter(pk=gold_id).first()
    if found is None:
        raise NotFoundError("Gold item not found.")
    return GoldStat(found, found.served, found.correct)  # type: ignore[attr-defined]
