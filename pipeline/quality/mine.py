"""What an annotator sees of their own work and quality (docs/quality.md, "What annotators see").

Selectors only (no writes), read by the workspace home, the "My work" page and its JSON twin:

* ``standing_views``: each stage's standing as the annotator reads it (qualifying with how far
  the set is, active, paused, not qualified), why, and whether and when they may start again;
* ``my_work_history``: their items, newest first, with the review verdict and, once its set is
  decided, how a qualification item scored;
* ``my_work_figures``: their counts per stage and their own figures;
* ``feedback_by_stage``, ``refusal_items``: the qualification items behind a decision, as training
  (their answer next to the gold one).

Control items are never told apart from real work, not even after they are submitted: the history
lists them as work, and the accuracy on them is an aggregate of whole past days
(``control_figures_until``). Gold is shared by every annotator: a control item named, or its gold
answer shown, is one a second account or a friend would recognise and answer from a table.
Qualification items are known as such; their feedback, as training, waits until the set is decided.
The right answers of a set's second sample (``standing.qualification_sample``: five more items when the
first ten fall one short) are never shown, only whether each was right: otherwise an account failing the
first ten by exactly one item, on purpose, would see half as much gold again per attempt.
Review's verdicts on a writer's monitored work (their real submissions since they became active in a stage
that qualifies by review: what ``review-rejections`` watches) are held back in the same way: the history
and the figures show the reviews made before today (``control_figures_until``), and no "waiting for
review" on that work. Shown at once, a rejection would tell a sly writer when review had caught them:
junk until one shows, honest until the evidence against them had cleared, junk again (docs/quality.md).
The verdicts on a qualification's sets show at once, as training.
Everything here reads the caller's own rows only (``annotator=user``, ``user=user``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    Membership,
    Project,
    Purpose,
    Review,
    ReviewVerdict,
    Standing,
    StandingStatus,
)
from pipeline.stages.base import StageDefinition, qualification_mode, submission_lines, trusted
from pipeline.stages.registry import stage_get, stages

from .gold import gold_servable_stages
from .standing import own_standings, retry_after
from .writers import written_questions

HISTORY_LIMIT = 200  # rows of the history a page or an API call returns at most
# Assignments that are part of an annotator's history (a released or expired lease is not work done).
HISTORY_STATUSES = (AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED)


@dataclass(frozen=True)
class StandingView:
    """An annotator's standing in one stage, in their words. ``status`` ``""``: not started."""

    stage: str
    label: str
    status: str
    status_label: str
    reason: str
    can_start: bool
    qualification_mode: str
    qualification_done: int | None = None
    qualification_items: int | None = None
    retry_at: datetime | None = None
    attempts_left: int | None = None
    has_feedback: bool = False
    attempt: int = 0
    attempts: int = 0

    @property
    def why(self) -> str:
        """Why the status is what it is (a running gold set: how far it is, and which attempt)."""
        if not self.status:
            return {"gold": "you start with a qualification set", "review": "your first submissions are reviewed"}.get(
                self.qualification_mode, ""
            )
        if self.status == StandingStatus.QUALIFYING and self.qualification_items:
            done = f"qualification set: {self.qualification_done} of {self.qualification_items} done"
            if self.attempt > 1:
                return f"attempt {self.attempt} of {self.attempts} (the last one was not passed); {done}"
            return done
        return self.reason

    @property
    def summary(self) -> str:
        """One line: the status and why ("Qualifying: qualification set: 3 of 10 done")."""
        label = self.status_label or "Not started"
        return f"{label}: {self.why}" if self.why else label


def standing_views(*, project: Project, user: Any, membership: Membership | None) -> dict[str, StandingView]:
    """Every stage's ``StandingView`` for ``user`` (``membership``: theirs, as ``member_get`` reads it;
    leads and site admins are never gated). One query, two while a qualification set runs."""
    now = timezone.now()
    is_trusted = trusted(user=user, membership=membership)
    rows = {s.stage: s for s in Standing.objects.filter(project=project, user=user)}
    qualification_done: dict[tuple[str, int], int] = {}
    if any(row.status == StandingStatus.QUALIFYING for row in rows.values()):
        qualification_done = {
            (row["stage"], row["attempt"]): row["n"]
            for row in Assignment.objects.filter(project=project, annotator=user, purpose=Purpose.QUALIFICATION)
            .exclude(status=AssignmentStatus.LEASED)  # given back or expired: done, and wrong
            .values("stage", "attempt")
            .annotate(n=Count("id"))
        }
    # A stage with gold qualifies newcomers on it only once a lead has made some (``standing._start``).
    unstarted_gold = not is_trusted and any(s.has_gold and s.name not in rows for s in stages().values())
    gold_stages = gold_servable_stages(project=project) if unstarted_gold else set()
    views = {}
    for stage in stages().values():
        mode = "" if is_trusted else qualification_mode(stage)
        row = rows.get(stage.name)
        if row is None and mode == "gold" and stage.name not in gold_stages:
            mode = ""  # no gold yet: they start active
        if row is None or is_trusted:
            views[stage.name] = StandingView(
                stage=stage.name,
                label=stage.label,
                status="",
                status_label="",
                reason="",
                can_start=True,
                qualification_mode=mode,
            )
            continue
        retry = retry_after(stage=stage, standing=row, project=project)
        can_start = row.status in (StandingStatus.QUALIFYING, StandingStatus.ACTIVE) or (
            row.status == StandingStatus.NOT_QUALIFIED and retry is not None and retry <= now
        )
        gold_set = mode == "gold" and row.status == StandingStatus.QUALIFYING
        decided_attempts = row.attempt - 1 if row.status == StandingStatus.QUALIFYING else row.attempt
        done = qualification_done.get((stage.name, row.attempt), 0) if gold_set else None
        # still qualifying with the set done: its second sample (``standing.qualification_sample``)
        set_size = project.qualification_items
        if done is not None and done >= set_size:
            set_size += project.qualification_extra_items
        views[stage.name] = StandingView(
            stage=stage.name,
            label=stage.label,
            status=row.status,
            status_label=StandingStatus(row.status).label,
            reason=row.reason,
            can_start=can_start,
            qualification_mode=mode,
            qualification_done=done,
            qualification_items=set_size if gold_set else None,
            retry_at=retry if row.status == StandingStatus.NOT_QUALIFIED else None,
            attempts_left=max(0, project.qualification_attempts - row.attempt) if mode == "gold" else None,
            has_feedback=mode == "gold" and decided_attempts > 0,
            attempt=row.attempt if gold_set else 0,
            attempts=project.qualification_attempts,
        )
    return views


def control_leases(*, project: Project, user: Any) -> dict[str, int]:
    """``{stage: control items the caller holds, did or skipped}``: what a real lease of theirs
    would have taken out of their queue for good (``taken_by_user_q``), so that their ``available``
    figure can count them as it counts real work. One query."""
    rows = (
        Assignment.objects.filter(project=project, annotator=user, purpose=Purpose.CONTROL, status__in=HISTORY_STATUSES)
        .values("stage")
        .annotate(n=Count("id"))
    )
    return {row["stage"]: row["n"] for row in rows}


# --- history -----------------------------------------------------------------------------------


@dataclass
class HistoryRow:
    id: int
    stage: str
    stage_label: str
    status: str
    created_at: datetime
    submitted_at: datetime | None
    rico_id: str
    question: str
    questions: list[str]
    open: bool
    kind: str  # "work" (control items too) or "qualification"
    review_state: str
    review: dict[str, str] | None = None
    control: dict[str, Any] | None = None
    skip_reason: str = ""
    # Their questions that the screen's pass-2 writer flagged: text, reason, reason_label.
    flags: list[dict[str, str]] = field(default_factory=list)


def _review_brief(review: Review, stage: StageDefinition) -> dict[str, str]:
    return {
        "verdict": review.verdict,
        "verdict_label": ReviewVerdict(review.verdict).label,
        "reason": review.reason,
        "reason_label": stage.review_reasons.get(review.reason, review.reason),
        "comment": review.comment,
    }


def _control_brief(result: ControlResult, *, gold_hidden: bool) -> dict[str, Any]:
    """A decided qualification item's result: the caller's answer, and the right one unless the item is
    of a second sample (``gold_hidden``: neither the right answer nor what differed)."""
    feedback = result.feedback or {}
    gold = {} if gold_hidden else feedback.get("gold") or {}
    return {
        "correct": result.correct,
        "purpose": result.purpose,
        "given": feedback.get("given") or {},
        "gold": gold,
        "why": "" if gold_hidden else feedback.get("why") or "",
        "gold_hidden": gold_hidden,
        "given_lines": submission_lines(feedback.get("given") or {}),
        "gold_lines": submission_lines(gold),
    }


def _second_sample(*, project: Project, user: Any) -> set[int]:
    """The caller's qualification items (assignment ids) served after the first ``qualification_items`` of
    their attempt: a second sample's. One query (a few rows a person)."""
    seen: Counter[tuple[str, int]] = Counter()
    second = set()
    for stage, attempt, pk in (
        Assignment.objects.filter(project=project, annotator=user, purpose=Purpose.QUALIFICATION)
        .order_by("pk")
        .values_list("stage", "attempt", "pk")
    ):
        seen[(stage, attempt)] += 1
        if seen[(stage, attempt)] > project.qualification_items:
            second.add(pk)
    return second


def my_work_history(
    *, project: Project, user: Any, stage: str | None = None, limit: int = HISTORY_LIMIT
) -> list[HistoryRow]:
    """The caller's items in ``project`` (one ``stage`` or all), newest first, at most ``limit``.
    Four queries: the assignments with their screen, question, review and control result; the
    questions they wrote; their standings (the qualification sets still running, the stages whose
    review verdicts are held back: ``_is_monitored``); their second samples' items."""
    mine = (
        Assignment.objects.filter(project=project, annotator=user, status__in=HISTORY_STATUSES)
        .select_related("screen", "question", "review_of", "control_result")
        .prefetch_related("questions_written")
        .order_by("-created_at", "-pk")
    )
    if stage:
        mine = mine.filter(stage=stage)
    standings = own_standings(project=project, user=user)
    running, monitored = standings.running, standings.monitored
    second = _second_sample(project=project, user=user)
    until = control_figures_until()
    rows = []
    for a in mine[:limit]:
        definition = stage_get(a.stage)
        done = a.status != AssignmentStatus.LEASED
        qualification = a.purpose == Purpose.QUALIFICATION
        kind = Purpose.QUALIFICATION if qualification else Purpose.WORK  # a control item is work, always
        review = getattr(a, "review_of", None)
        review_state = a.review_state if done else ""
        if _is_monitored(a, monitored):
            review = review if review is not None and review.created_at < until else None
            review_state = a.review_state if review is not None else ""
        result = getattr(a, "control_result", None) if a.status == AssignmentStatus.SUBMITTED else None
        if not qualification or (a.stage, a.attempt) in running:
            result = None  # a qualification item's: once the set is decided; a control item's: never
        written = sorted(a.questions_written.all(), key=lambda q: q.position)
        rows.append(
            HistoryRow(
                id=a.pk,
                stage=a.stage,
                stage_label=definition.label,
                status=a.status,
                created_at=a.created_at,
                submitted_at=a.submitted_at,
                rico_id=a.screen.rico_id,
                question=a.question.text if a.question is not None else "",
                questions=[q.text for q in written],
                open=not done,
                kind=kind,
                review_state=review_state,
                review=_review_brief(review, definition) if review is not None else None,
                control=_control_brief(result, gold_hidden=a.pk in second) if result is not None else None,
                skip_reason=a.skip_reason if a.status == AssignmentStatus.SKIPPED else "",
                flags=[
                    {
                        "text": q.text,
                        "reason": q.flag_reason,
                        "reason_label": definition.review_reasons.get(q.flag_reason, q.flag_reason),
                    }
                    for q in written
                    if q.flag_reason
                ],
            )
        )
    return rows


def _is_monitored(assignment: Assignment, monitored: dict[str, datetime]) -> bool:
    """Whether review's verdict on ``assignment`` is held back: real work of a stage in ``monitored``
    (``OwnStandings.monitored``), submitted since the writer became active there."""
    since = monitored.get(assignment.stage)
    return (
        since is not None
        and assignment.purpose == Purpose.WORK
        and assignment.submitted_at is not None
        and assignment.submitted_at > since
    )


def control_figures_until(now: datetime | None = None) -> datetime:
    """The control items an annotator's own accuracy counts are those scored before this: the start
    of today (server time). The figure moves once a day, by a whole day's control items, so it never
    names the item that moved it (a figure updated on each submit would mark every control item)."""
    local = timezone.localtime(now or timezone.now())
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


# --- figures -----------------------------------------------------------------------------------


@dataclass
class StageCounts:
    stage: str
    label: str
    submitted: int = 0
    skipped: int = 0
    open: int = 0


@dataclass
class Figures:
    items_done: int
    skipped: int
    control_items: int
    control_correct: int
    control_accuracy: float | None
    reviewed: int
    review_accepted: int
    review_acceptance: float | None
    # Stages whose verdicts on the caller's work since they qualified show from the next day (``_is_monitored``).
    reviews_held_back: list[str] = field(default_factory=list)
    questions_written: int = 0
    questions_flagged: int = 0  # judged invalid or not answerable by an answerer
    questions_flagged_pass2: int = 0  # flagged by the screen's pass-2 writer
    questions_faulted: int = 0  # either (each question once)
    per_stage: list[StageCounts] = field(default_factory=list)

    @property
    def invalid_rate(self) -> float | None:
        return round(self.questions_faulted / self.questions_written, 4) if self.questions_written else None


def my_work_figures(*, project: Project, user: Any) -> Figures:
    """The caller's counts per stage (submitted, skipped, open) and own figures: control accuracy
    (control items only, up to ``control_figures_until``; qualification sets are reported in the
    standing), review acceptance, and the pipeline's feedback on the questions they wrote (as the
    lead's report counts it). Five queries."""
    counts = (
        Assignment.objects.filter(project=project, annotator=user, status__in=HISTORY_STATUSES)
        .values("stage", "status")
        .annotate(n=Count("id"))
    )
    per_stage = {name: StageCounts(stage=name, label=s.label) for name, s in stages().items()}
    for row in counts:
        setattr(per_stage[row["stage"]], {"leased": "open"}.get(row["status"], row["status"]), row["n"])
    until = control_figures_until()
    control = ControlResult.objects.filter(
        project=project, user=user, purpose=Purpose.CONTROL, created_at__lt=until
    ).aggregate(items=Count("id"), correct=Count("id", filter=Q(correct=True)))
    shown = Review.objects.filter(reviewed__project=project, reviewed__annotator=user)
    monitored = own_standings(project=project, user=user).monitored
    for stage, since in monitored.items():  # held back as in the history
        shown = shown.exclude(
            reviewed__stage=stage,
            reviewed__purpose=Purpose.WORK,
            reviewed__submitted_at__gt=since,
            created_at__gte=until,
        )
    reviews = shown.aggregate(items=Count("id"), accepted=Count("id", filter=Q(verdict=ReviewVerdict.ACCEPTED)))
    questions = written_questions(project=project, author_ids=[user.pk]).get(user.pk)
    return Figures(
        items_done=sum(s.submitted for s in per_stage.values()),
        skipped=sum(s.skipped for s in per_stage.values()),
        control_items=control["items"],
        control_correct=control["correct"],
        control_accuracy=round(control["correct"] / control["items"], 4) if control["items"] else None,
        reviewed=reviews["items"],
        review_accepted=reviews["accepted"],
        review_acceptance=round(reviews["accepted"] / reviews["items"], 4) if reviews["items"] else None,
        reviews_held_back=sorted(monitored),
        questions_written=questions.written if questions else 0,
        questions_flagged=questions.flagged if questions else 0,
        questions_flagged_pass2=questions.flagged_pass2 if questions else 0,
        questions_faulted=questions.faulted if questions else 0,
        per_stage=[s for s in per_stage.values() if s.submitted or s.skipped or s.open],
    )


# --- feedback ----------------------------------------------------------------------------------


@dataclass
class FeedbackItem:
    assignment_id: int
    stage: str
    purpose: str
    attempt: int
    rico_id: str
    question: str
    correct: bool
    given_lines: list[tuple[str, str]]
    gold_lines: list[tuple[str, str]]
    why: str
    created_at: datetime
    gold_hidden: bool = False  # an item of the set's second sample: only whether it was right


def _feedback(results: Any, *, second: set[int]) -> list[FeedbackItem]:
    """Results as feedback; those of ``second`` (assignment ids of second samples) without the right answer."""
    items = []
    for r in results:
        hidden = r.assignment_id in second
        feedback = r.feedback or {}
        items.append(
            FeedbackItem(
                assignment_id=r.assignment_id,
                stage=r.stage,
                purpose=r.purpose,
                attempt=r.attempt,
                rico_id=r.assignment.screen.rico_id,
                question=r.assignment.question.text if r.assignment.question is not None else "",
                correct=r.correct,
                given_lines=submission_lines(feedback.get("given") or {}),
                gold_lines=[] if hidden else submission_lines(feedback.get("gold") or {}),
                why="" if hidden else feedback.get("why") or "",
                created_at=r.created_at,
                gold_hidden=hidden,
            )
        )
    return items


def _results(*, project: Project, user: Any, stage: str) -> Any:
    return ControlResult.objects.filter(project=project, user=user, stage=stage).select_related(
        "assignment__screen", "assignment__question"
    )


def qualification_feedback(*, project: Project, user: Any, stage: str, standing: Standing | None) -> list[FeedbackItem]:
    """Every item of the caller's last decided qualification set in ``stage`` (passed or not), in
    the order served, a second sample's without the right answer; a set still running shows nothing.
    Two queries."""
    if standing is None:
        return []
    last = standing.attempt - 1 if standing.status == StandingStatus.QUALIFYING else standing.attempt
    if last <= 0:
        return []
    rows = _results(project=project, user=user, stage=stage).filter(purpose=Purpose.QUALIFICATION, attempt=last)
    return _feedback(rows.order_by("assignment_id"), second=_second_sample(project=project, user=user))


def refusal_items(*, project: Project, user: Any, stage: str) -> tuple[Standing | None, list[FeedbackItem]]:
    """Why the caller may not work in ``stage`` now: their standing, and the items they got wrong in
    the qualification set that failed. A pause by control items lists none (its reason says how many
    were right): naming them would tell which screens are gold, and gold is served to everybody."""
    standing = Standing.objects.filter(project=project, user=user, stage=stage).first()
    if standing is None:
        return None, []
    if standing.status == StandingStatus.NOT_QUALIFIED:
        done = qualification_feedback(project=project, user=user, stage=stage, standing=standing)
        return standing, [i for i in done if not i.correct]
    return standing, []


def feedback_by_stage(*, project: Project, user: Any) -> list[tuple[StageDefinition, str, list[FeedbackItem]]]:
    """Per stage the caller has a standing in: (stage, kind, items) for a decided qualification set
    (kind ``qualification``; control items are never listed, ``refusal_items``)."""
    found = []
    for standing in Standing.objects.filter(project=project, user=user).order_by("pk"):
        definition = stage_get(standing.stage)
        items = qualification_feedback(project=project, user=user, stage=standing.stage, standing=standing)
        if items:
            found.append((definition, "qualification", items))
    return found
