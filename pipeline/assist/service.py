"""Suggestions computed ahead and read back (docs/assist.md).

* ``assist_refill``: after a submission (and on a lead's request), queue a ``suggestions`` job when
  the project has a backend, none is running, and one of the queue's next ``assist_ahead`` questions
  (or an active control item's) has no suggestion yet. Never inside a lease's transaction.
* ``suggestions_job_work``: the job's work. Calls the backend for each such question, one at a time,
  and stores the outcome (a failure too: it counts in the error rate, and the item is served
  without a suggestion). Idempotent: a re-run does what is still missing.
* ``suggestion_for``: what ``next`` shows with an answers assignment: one indexed query, or none when
  the project has no backend or the question is among the hidden share. Control items read it the
  same way as real ones (their questions get suggestions the same way), so a suggestion is no tell.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from annotation.exceptions import ApplicationError
from annotation.models import AssistJob, GoldItem, Project, Question, QuestionState, Stage, Suggestion, SuggestionStatus
from annotation.permissions import project_require_lead
from annotation.selectors.screens import screen_payload
from pipeline.jobs.lifecycle import Outcome, Progress, job_create, jobs_alive

from .client import AssistError, Backend, backend_call
from .contract import suggest_request

logger = logging.getLogger(__name__)

# How many ranked elements the workspace receives (the first is the pre-annotation).
SHOWN = 5


def suggestion_hidden(*, project: Project, question_id: int) -> bool:
    """Whether ``question_id`` is among the project's ``assist_hidden_share`` shown without suggestions:
    a fixed draw per project and question, the same for every annotator (so the crowd is measured
    without the model on the same items)."""
    share = project.assist_hidden_share
    if share <= 0:
        return False
    if share >= 1:
        return True
    digest = hashlib.sha256(f"assist-hidden:{project.pk}:{question_id}".encode()).hexdigest()
    return int(digest[:8], 16) / 0xFFFFFFFF < share


def suggestion_for(*, project: Project, question_id: int) -> dict[str, Any] | None:
    """The suggestion shown with ``question_id``: ``{"model_version", "elements": [...]}`` (ranked,
    best first), or ``None`` (no backend, hidden, not computed yet, or the backend failed)."""
    if not project.assist_url or suggestion_hidden(project=project, question_id=question_id):
        return None
    row = (
        Suggestion.objects.filter(stage=Stage.ANSWERS, question_id=question_id, status=SuggestionStatus.OK)
        .values_list("result", "model_version")
        .first()
    )
    if row is None or not row[0].get("elements"):
        return None
    result, version = row
    return {"model_version": version, "elements": result["elements"][:SHOWN]}


# --- computing ahead ---------------------------------------------------------------------------


def _missing(project: Project) -> tuple[QuerySet[Question], QuerySet[Question]]:
    """The queue's next questions and the active control items' questions without a suggestion
    (a failed one is tried again by the next job)."""
    done = Suggestion.objects.filter(stage=Stage.ANSWERS, question=OuterRef("pk"), status=SuggestionStatus.OK)
    queue = (
        Question.objects.filter(screen__project=project, state=QuestionState.ANSWERING)
        .alias(done=Exists(done))
        .filter(done=False)
        .order_by("pk")
    )
    gold = (
        Question.objects.filter(
            Exists(GoldItem.objects.filter(stage=Stage.ANSWERS, question=OuterRef("pk"), active=True)),
            screen__project=project,
        )
        .alias(done=Exists(done))
        .filter(done=False)
        .order_by("pk")
    )
    return queue, gold


def _targets(project: Project) -> list[Question]:
    queue, gold = _missing(project)
    ahead = project.assist_ahead
    picked = list(queue.select_related("screen", "screen__app", "screen__project")[:ahead])
    picked += list(gold.select_related("screen", "screen__app", "screen__project")[:ahead])
    return list({q.pk: q for q in picked}.values())


def assist_refill(*, project: Project, user: Any = None) -> AssistJob | None:
    """Queue a ``suggestions`` job if there is something to suggest and none is running (else ``None``),
    started by ``user`` (``None``: nobody's, the refill after a submit). Two queries when the project has a
    backend; none when it has not."""
    if not project.assist_url:
        return None
    if jobs_alive(AssistJob.objects.filter(project=project)).exists():
        return None
    queue, gold = _missing(project)
    if not (queue[: project.assist_ahead].exists() or gold.exists()):
        return None
    return job_create(model=AssistJob, project=project, user=user, stage=Stage.ANSWERS)


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
        assist_refill(project=project)
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


def suggestion_compute(*, project: Project, question: Question, backend: Backend) -> Suggestion:
    """Call the backend for ``question`` and store the outcome (ok or failed), counting the call."""
    screen = screen_payload(screen=question.screen)
    body = suggest_request(
        stage=Stage.ANSWERS,
        project=project.slug,
        screen=screen,
        question={"id": question.pk, "text": question.text},
    )
    row, _ = Suggestion.objects.get_or_create(
        stage=Stage.ANSWERS,
        question=question,
        defaults={"project": project, "screen_id": question.screen_id, "status": SuggestionStatus.FAILED},
    )
    row.calls += 1
    try:
        reply = backend_call(backend=backend, body=body, screen=screen)
    except AssistError as exc:
        row.failures += 1
        row.status, row.error, row.result = SuggestionStatus.FAILED, str(exc), {}
    else:
        row.status, row.error, row.latency_ms = SuggestionStatus.OK, "", reply.latency_ms
        row.model_version = reply.result["model_version"]
        row.result = {"elements": reply.result["elements"]}
    row.save()
    return row


def suggestions_job_work(*, job: AssistJob, progress: Progress) -> Outcome:
    """The ``suggestions`` job: suggestions for the queue's next questions and the control items'."""
    project = job.project
    backend = Backend.of(project)
    if backend is None:
        return Outcome(result={"suggested": 0, "failed": 0, "note": "the project has no backend"})
    targets = _targets(project)
    progress(0, len(targets))
    counts = {"suggested": 0, "failed": 0}
    for n, question in enumerate(targets, 1):
        row = suggestion_compute(project=project, question=question, backend=backend)
        counts["suggested" if row.status == SuggestionStatus.OK else "failed"] += 1
        progress(n, len(targets))
    return Outcome(result=counts)
