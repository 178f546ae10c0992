"""Suggestions computed ahead and read back (docs/assist.md).

Two stages are assisted (``ASSISTED``): ``answers`` (one suggestion per question: ranked elements)
and ``prefilter`` (one per screen: the two judgments' probabilities).

* ``assist_refill``: after a submission (and on a lead's request), queue a ``suggestions`` job when
  the project has a backend, none is running, and one of a queue's next ``assist_ahead`` units (or an
  active control item's) has no suggestion yet. Never inside a lease's transaction.
* ``suggestions_job_work``: the job's work. Calls the backend for each such unit, one at a time, and
  stores the outcome (a failure too: it counts in the error rate, and the item is served without a
  suggestion). Idempotent: a re-run does what is still missing.
* ``suggestion_for``: what ``next`` shows with an assignment of an assisted stage: one indexed query,
  or none when the project has no backend or the unit is among the hidden share. Control items read
  it the same way as real ones (their units get suggestions the same way), so a suggestion is no tell.
  Nor is its absence: real items can come without one (the backend failing, or the queue outrunning the
  job) while a control item's was computed long ago, so a gold item's suggestion is left out as often as
  the stage's recent real work went without one (``_miss_share``), decided per assignment by a keyed hash
  an annotator cannot compute.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, Model, OuterRef, QuerySet

from annotation.draws import secret_draw
from annotation.exceptions import ApplicationError
from annotation.models import (
    Assignment,
    AssistJob,
    AssistUse,
    GoldItem,
    Project,
    Purpose,
    Question,
    QuestionState,
    Screen,
    ScreenState,
    Stage,
    Suggestion,
    SuggestionStatus,
    SuggestionUse,
)
from annotation.permissions import project_require_lead
from annotation.selectors.screens import screen_payload
from pipeline.jobs.lifecycle import Outcome, Progress, job_create, jobs_alive

from .client import AssistError, Backend, backend_call
from .contract import JUDGMENTS, suggest_request

logger = logging.getLogger(__name__)

# How many ranked elements the workspace receives (the first is the pre-annotation).
SHOWN = 5
# A pre-filtering judgment is suggested (its box pre-set by "g") when the backend's probability is
# above this: 0.5 itself ("cannot tell", as the baseline says of the sync) suggests no flag.
JUDGMENT_SUGGESTED_ABOVE = 0.5
# How many of a stage's latest real submissions tell how often real work goes without a suggestion.
MISS_WINDOW = 50


@dataclass(frozen=True)
class Assisted:
    """An assisted stage: its unit (``question`` or ``screen``: the ``Suggestion`` column keyed) and
    the key of the backend's reply it keeps (``elements``, ``judgments``)."""

    stage: str
    unit: str
    key: str

    def waiting(self, project: Project) -> QuerySet[Any]:
        """The units the stage's queue will serve next, oldest first (as the queue orders them)."""
        if self.unit == "question":
            return Question.objects.filter(screen__project=project, state=QuestionState.ANSWERING).order_by("pk")
        return Screen.objects.filter(project=project, state=ScreenState.PREFILTER, app__non_english=False).order_by(
            "queue_key", "pk"
        )

    def gold(self, project: Project) -> QuerySet[Any]:
        """The units of the stage's active gold items (control and qualification items)."""
        model: type[Model] = Question if self.unit == "question" else Screen
        field = "question" if self.unit == "question" else "screen"
        active = GoldItem.objects.filter(stage=self.stage, active=True, **{field: OuterRef("pk")})
        scope = {"screen__project": project} if self.unit == "question" else {"project": project}
        return model.objects.filter(Exists(active), **scope).order_by("pk")  # type: ignore[attr-defined]


ASSISTED: dict[str, Assisted] = {
    Stage.ANSWERS: Assisted(stage=Stage.ANSWERS, unit="question", key="elements"),
    Stage.PREFILTER: Assisted(stage=Stage.PREFILTER, unit="screen", key="judgments"),
}


def suggestion_hidden(*, project: Project, question_id: int | None = None, screen_id: int | None = None) -> bool:
    """Whether the unit (a question, or a screen of pre-filtering) is among the project's
    ``assist_hidden_share`` shown without suggestions: a fixed draw per project and unit, the same for
    every annotator (so the crowd is measured without the model on the same items)."""
    share = project.assist_hidden_share
    if share <= 0:
        return False
    if share >= 1:
        return True
    unit = str(question_id) if screen_id is None else f"screen:{screen_id}"
    digest = hashlib.sha256(f"assist-hidden:{project.pk}:{unit}".encode()).hexdigest()
    return int(digest[:8], 16) / 0xFFFFFFFF < share


def _shown(stage: str, result: dict[str, Any], version: str) -> dict[str, Any] | None:
    if stage == Stage.ANSWERS:
        elements = result.get("elements") or []
        return {"model_version": version, "elements": elements[:SHOWN]} if elements else None
    judgments = result.get("judgments") or {}
    if not judgments:
        return None
    scores = {name: float(judgments.get(name, 0.0)) for name in JUDGMENTS}
    flags = {name: score > JUDGMENT_SUGGESTED_ABOVE for name, score in scores.items()}
    return {"model_version": version, "judgments": flags, "scores": scores}


def _miss_share(*, project: Project, stage: str) -> float:
    """How often the stage's latest ``MISS_WINDOW`` real submissions went without a suggestion beyond the
    hidden share (which control items meet alike): ``(none - hidden) / (1 - hidden)``, 0 with no history."""
    uses = list(
        AssistUse.objects.filter(project=project, stage=stage, purpose=Purpose.WORK)
        .order_by("-pk")
        .values_list("use", flat=True)[:MISS_WINDOW]
    )
    hidden = project.assist_hidden_share
    if not uses or hidden >= 1:
        return 0.0
    none = sum(1 for use in uses if use == SuggestionUse.NONE) / len(uses)
    return max(0.0, (none - hidden) / (1 - hidden))


def _gold_draw(assignment_id: int) -> float:
    """A number in [0, 1) fixed per assignment, keyed by the site's secret: an annotator who sees the
    assignment's id cannot compute it."""
    return secret_draw("assist-gold", assignment_id)


def suggestion_for(
    *,
    project: Project,
    question_id: int | None = None,
    screen_id: int | None = None,
    assignment: Assignment | None = None,
) -> dict[str, Any] | None:
    """The suggestion shown with a question (answers: ``{"model_version", "elements": [...]}``, ranked,
    best first) or a screen of pre-filtering (``{"model_version", "judgments": {name: bool},
    "scores": {name: probability}}``), or ``None`` (no backend, hidden, not computed yet, or the
    backend failed). ``assignment``: the one it is shown with; a gold item's (control, qualification)
    is left out as often as real work lately went without one (one query more, gold items only)."""
    if not project.assist_url or suggestion_hidden(project=project, question_id=question_id, screen_id=screen_id):
        return None
    if question_id is not None:
        stage, rows = Stage.ANSWERS, Suggestion.objects.filter(stage=Stage.ANSWERS, question_id=question_id)
    else:
        assert screen_id is not None, "a question or a screen"
        rows = Suggestion.objects.filter(stage=Stage.PREFILTER, screen_id=screen_id, question__isnull=True)
        stage = Stage.PREFILTER
    row = rows.filter(status=SuggestionStatus.OK).values_list("result", "model_version").first()
    if row is None:
        return None
    if assignment is not None and assignment.purpose != Purpose.WORK:
        miss = _miss_share(project=project, stage=stage)
        if miss > 0 and _gold_draw(assignment.pk) < miss:
            return None
    return _shown(stage, row[0] or {}, row[1])


# --- computing ahead ---------------------------------------------------------------------------


def _missing(project: Project, assisted: Assisted) -> tuple[QuerySet[Any], QuerySet[Any]]:
    """The queue's next units and the active control items' units without a suggestion (a failed one
    is tried again by the next job)."""
    done = Suggestion.objects.filter(
        stage=assisted.stage, status=SuggestionStatus.OK, **{assisted.unit: OuterRef("pk")}
    )
    return (
        assisted.waiting(project).alias(done=Exists(done)).filter(done=False),
        assisted.gold(project).alias(done=Exists(done)).filter(done=False),
    )


def _targets(project: Project, assisted: Assisted) -> list[Any]:
    queue, gold = _missing(project, assisted)
    related = ("screen", "screen__app", "screen__project") if assisted.unit == "question" else ("app", "project")
    ahead = project.assist_ahead
    picked = list(queue.select_related(*related)[:ahead]) + list(gold.select_related(*related)[:ahead])
    return list({unit.pk: unit for unit in picked}.values())


def _something_missing(project: Project, stages: list[str]) -> bool:
    for stage in stages:
        queue, gold = _missing(project, ASSISTED[stage])
        if queue[: project.assist_ahead].exists() or gold.exists():
            return True
    return False


def assist_refill(*, project: Project, user: Any = None, stage: str | None = None) -> AssistJob | None:
    """Queue a ``suggestions`` job if there is something to suggest and none is running (else ``None``),
    started by ``user`` (``None``: nobody's, the refill after a submit). ``stage``: look only at that
    stage's units (a submission's stage; the job then does every assisted stage). Two or three queries
    per stage looked at when the project has a backend; none when it has not or the stage is not assisted."""
    if not project.assist_url or (stage is not None and stage not in ASSISTED):
        return None
    if jobs_alive(AssistJob.objects.filter(project=project)).exists():
        return None
    if not _something_missing(project, [stage] if stage is not None else list(ASSISTED)):
        return None
    return job_create(model=AssistJob, project=project, user=user, stage=stage or Stage.ANSWERS)


def assist_refill_for_lead(*, project: Project, user: Any) -> AssistJob | None:
    """A lead's "compute suggestions now" (leads of the project and site admins)."""
    project_require_lead(user=user, project=project)
    if not project.assist_url:
        raise ApplicationError("Set the backend's address (assist_url) first.", field="assist_url")
    return assist_refill(project=project, user=user)


def assist_after_submit(*, assignment: Any) -> None:
    """After any submission's transaction: keep the suggestions ahead of the queue. A failure here
    never fails the submission (it is logged)."""
    project = assignment.project
    if not project.assist_url:
        return
    try:
        assist_refill(project=project, stage=assignment.stage)
    except Exception:  # the submission is done; suggestions are a convenience
        logger.exception("suggestions: could not queue a job for %s", project.slug)


def short_answers_suggested(
    *,
    project: Project,
    backend: Backend,
    question: Question,
    elements: list[str],
    full_answer: str,
    screen: dict[str, Any] | None = None,
) -> list[str]:
    """The backend's short answers (stage ``short-answers``) of one answer of ``question`` (its
    elements' texts and full answer), best first, blanks and repeats left out; ``AssistError`` when the
    call fails, breaks the contract or gives nothing. ``screen``: the question's screen payload, when
    the caller has it (one query less per answer)."""
    screen = screen if screen is not None else screen_payload(screen=question.screen)
    body = suggest_request(
        stage="short-answers",
        project=project.slug,
        screen=screen,
        question={"id": question.pk, "text": question.final_text or question.text},
        answer={"elements": elements, "full_answer": full_answer},
    )
    reply = backend_call(backend=backend, body=body, screen=screen)
    texts = list(dict.fromkeys(a["text"] for a in reply.result["short_answers"]))  # checked: non-blank
    if not texts:
        raise AssistError("the backend gave no short answer")
    return texts


def suggestion_compute(*, project: Project, unit: Any, backend: Backend, assisted: Assisted) -> Suggestion:
    """Call the backend for ``unit`` (a question of answers, a screen of pre-filtering) and store the
    outcome (ok or failed), counting the call."""
    if assisted.unit == "question":
        screen = screen_payload(screen=unit.screen)
        question: dict[str, Any] | None = {"id": unit.pk, "text": unit.text}
        key: dict[str, Any] = {"question": unit}
        defaults = {"project": project, "screen_id": unit.screen_id, "status": SuggestionStatus.FAILED}
    else:
        screen, question = screen_payload(screen=unit), None
        key = {"screen": unit, "question": None}
        defaults = {"project": project, "status": SuggestionStatus.FAILED}
    body = suggest_request(stage=assisted.stage, project=project.slug, screen=screen, question=question)
    row, _ = Suggestion.objects.get_or_create(stage=assisted.stage, **key, defaults=defaults)
    row.calls += 1
    try:
        reply = backend_call(backend=backend, body=body, screen=screen)
    except AssistError as exc:
        row.failures += 1
        row.status, row.error, row.result = SuggestionStatus.FAILED, str(exc), {}
    else:
        row.status, row.error, row.latency_ms = SuggestionStatus.OK, "", reply.latency_ms
        row.model_version = reply.result["model_version"]
        row.result = {assisted.key: reply.result[assisted.key]}
    row.save()
    return row


def suggestions_job_work(*, job: AssistJob, progress: Progress) -> Outcome:
    """The ``suggestions`` job: suggestions for the next units of every assisted stage's queue and for
    their control items' units. The result counts them all, and per stage (``by_stage``)."""
    project = job.project
    backend = Backend.of(project)
    if backend is None:
        return Outcome(result={"suggested": 0, "failed": 0, "note": "the project has no backend"})
    targets = [(assisted, unit) for assisted in ASSISTED.values() for unit in _targets(project, assisted)]
    progress(0, len(targets))
    counts = {"suggested": 0, "failed": 0}
    by_stage: dict[str, dict[str, int]] = {str(stage): {"suggested": 0, "failed": 0} for stage in ASSISTED}
    for n, (assisted, unit) in enumerate(targets, 1):
        row = suggestion_compute(project=project, unit=unit, backend=backend, assisted=assisted)
        outcome = "suggested" if row.status == SuggestionStatus.OK else "failed"
        counts[outcome] += 1
        by_stage[assisted.stage][outcome] += 1
        progress(n, len(targets))
    return Outcome(result={**counts, "by_stage": by_stage})
