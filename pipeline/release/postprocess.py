"""Post-processing before release: apply the decision rules (``pipeline.release.decide``) to every
answered question of a project, in batches.

* ``release_job_start``    a lead starts a post-processing or short-answer job (queued);
* ``postprocess_job_run``  the job's work: decides every answered question of the project;
* ``release_job_run_now``  the management command's way to run either job in this process.

Results are read with ``pipeline.release.selectors``; short answers live in
``pipeline.release.short_answers``.

Idempotency: a decision depends only on the question, its answers and the project's agreement
settings, so a re-run on the same data writes nothing; questions whose answers came in since
(state ``answered``) are decided by the next run. Jobs work in batches: question ids streamed with
``.iterator(chunk_size=...)``, each batch's questions, answers and elements read in three queries
(post-processing; the short-answer job prefetches); each batch commits on its own, so progress is
visible and a crash loses at most one batch (the re-run redoes it).

Locks: decisions touch only questions in states answered/kept/dropped, which the answer engine no
longer writes, so no row lock is taken; writes are conditional ``UPDATE``s (``bulk_set``: the
condition is checked by the database per row) so a short answer a lead saved in between is never
overwritten. The lead's own edit locks the question through ``annotation.lock_objects.question_lock``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.db.bulk import batched, bulk_set
from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import Answer, AnswerElement, Project, Question, ReleaseJob
from annotation.permissions import project_require_lead
from pipeline.jobs import enqueue, release_job_begin, release_job_fail, release_job_finish, release_job_progress

from .agreement import AgreementSettings, ElementView
from .decide import (
    DECIDABLE_STATES,
    PROTECTED_SHORT_ANSWER_SOURCES,
    AnswerRecord,
    agreement_settings_for,
    question_decide,
)
from .selectors import postprocess_summary
from .short_answers.service import short_answers_job_run

logger = logging.getLogger(__name__)

JOB_KINDS = (ReleaseJob.Kind.POSTPROCESS, ReleaseJob.Kind.SHORT_ANSWERS)
# A running job silent for this long is taken as dead (its worker was lost) and may be restarted.
STALE_JOB_AFTER = timedelta(minutes=15)


def release_job_start(*, project: Project, kind: str, user: Any) -> ReleaseJob:
    """Queue a post-processing or short-answer job for ``project``.

    ``ConflictError`` when a job of that kind is already queued or running (and alive) for the
    project. Two jobs racing past this check are harmless: both write the same decisions.
    """
    if kind not in JOB_KINDS:
        raise ApplicationError(f"Unknown job kind {kind!r}.", field="kind")
    alive_since = timezone.now() - STALE_JOB_AFTER
    active = (
        ReleaseJob.objects.filter(
            project=project,
            kind=kind,
            status__in=[ReleaseJob.Status.QUEUED, ReleaseJob.Status.RUNNING],
            updated_at__gte=alive_since,
        )
        .order_by("-created_at")
        .first()
    )
    if active is not None:
        raise ConflictError(f"A {kind} job is already {active.status}.", extra={"job_id": active.pk})
    # Imported here: the task module imports this one.
    from pipeline.tasks.postprocess import postprocess_run, short_answers_run

    with transaction.atomic():
        job = ReleaseJob.objects.create(project=project, kind=kind, created_by=user)
        enqueue(postprocess_run if kind == ReleaseJob.Kind.POSTPROCESS else short_answers_run, job.pk)
    return job


def _answer_records(question_ids: Sequence[int]) -> dict[int, list[AnswerRecord]]:
    """Each question's answers in submission order, with their elements: two queries."""
    rows = list(
        Answer.objects.filter(question_id__in=question_ids)
        .order_by("question_id", "created_at", "pk")
        .values_list("pk", "question_id", "verdict", "question_text", "kept", "drop_reason")
    )
    elements: dict[int, list[ElementView]] = {}
    for answer_id, text, left, top, right, bottom in (
        AnswerElement.objects.filter(answer__question_id__in=question_ids)
        .order_by("answer_id", "position")
        .values_list("answer_id", "text", "left", "top", "right", "bottom")
    ):
        elements.setdefault(answer_id, []).append(ElementView(text=text, bounds=(left, top, right, bottom)))
    records: dict[int, list[AnswerRecord]] = {}
    for pk, question_id, verdict, question_text, kept, drop_reason in rows:
        records.setdefault(question_id, []).append(
            AnswerRecord(pk, verdict, question_text, tuple(elements.get(pk, ())), kept, drop_reason)
        )
    return records


def postprocess_batch_apply(*, question_ids: Sequence[int], settings: AgreementSettings) -> int:
    """Decide a batch of questions and write what changed: three reads and at most three writes,
    whatever the batch size (one transaction).

    Only questions still in a decidable state are read and written. Generated short answers of a
    question whose decision changed are cleared (they were made from the old decision); short
    answers a person wrote stay. Returns how many questions changed.
    """
    questions = list(
        Question.objects.filter(pk__in=question_ids, state__in=DECIDABLE_STATES).values_list(
            "pk", "text", "state", "final_text", "drop_reason", "agreement"
        )
    )
    ids = [row[0] for row in questions]
    records = _answer_records(ids)
    changed_questions: list[Question] = []
    changed_answers: list[Answer] = []
    for pk, text, *old in questions:
        answers = records.get(pk, [])
        decision = question_decide(text=text, answers=answers, settings=settings)
        answers_changed = False
        for answer in answers:
            now = (answer.kept, answer.drop_reason)
            kept, reason = decision.answers.get(answer.pk, now)
            if now != (kept, reason):
                changed_answers.append(Answer(pk=answer.pk, kept=kept, drop_reason=reason))
                answers_changed = True
        new = [decision.state, decision.final_text, decision.drop_reason, decision.agreement]
        if new != old or answers_changed:
            changed_questions.append(
                Question(
                    pk=pk,
                    state=decision.state,
                    final_text=decision.final_text,
                    drop_reason=decision.drop_reason,
                    agreement=decision.agreement,
                )
            )
    if not changed_questions:
        return 0  # a changed answer always marks its question changed
    with transaction.atomic():
        if changed_questions:
            bulk_set(
                Question,
                changed_questions,
                ["state", "final_text", "drop_reason", "agreement"],
                only_if={"state": DECIDABLE_STATES},
            )
            Question.objects.filter(pk__in=[q.pk for q in changed_questions]).exclude(
                short_answers_source__in=PROTECTED_SHORT_ANSWER_SOURCES
            ).update(short_answers=[], short_answers_source="")
        if changed_answers:
            bulk_set(Answer, changed_answers, ["kept", "drop_reason"])
    return len(changed_questions)


def postprocess_job_run(*, job_id: int, batch_size: int = 500) -> dict[str, Any]:
    """Decide every answered (or already decided) question of the job's project.

    Idempotent (same data, same decisions, nothing written); a redelivered finished job returns
    at once. A failure is recorded on the job (``failed`` + error) and re-raised.
    """
    job = release_job_begin(job_id, ReleaseJob.Kind.POSTPROCESS)
    if job is None:
        return ReleaseJob.objects.get(pk=job_id).result
    try:
        project = job.project
        settings = agreement_settings_for(project)
        questions = Question.objects.filter(screen__project=project, state__in=DECIDABLE_STATES)
        total = questions.count()
        ReleaseJob.objects.filter(pk=job.pk).update(total=total)
        processed = changed = 0
        stream = questions.order_by("pk").values_list("pk", flat=True).iterator(chunk_size=batch_size)
        for batch in batched(stream, batch_size):
            changed += postprocess_batch_apply(question_ids=batch, settings=settings)
            processed += len(batch)
            release_job_progress(job, processed=processed)
        result = {"decided": processed, "changed": changed, "summary": postprocess_summary(project=project)}
        release_job_finish(job, result=result)
        return result
    except Exception as exc:
        release_job_fail(job_id, exc)
        raise


def release_job_run_now(*, project_slug: str, kind: str, batch_size: int = 500) -> ReleaseJob:
    """Create a job and run it in this process (the management command: an operator, no queue).

    ``NotFoundError`` for an unknown project; a failure is recorded on the job and re-raised.
    """
    project = Project.objects.filter(slug=project_slug).first()
    if project is None:
        raise NotFoundError(f"No project {project_slug!r}.")
    if kind not in JOB_KINDS:
        raise ApplicationError(f"Unknown job kind {kind!r}.", field="kind")
    job = ReleaseJob.objects.create(project=project, kind=kind)
    if kind == ReleaseJob.Kind.POSTPROCESS:
        postprocess_job_run(job_id=job.pk, batch_size=batch_size)
    else:
        short_answers_job_run(job_id=job.pk, batch_size=batch_size)
    job.refresh_from_db()
    return job


def release_job_get_for_lead(*, user: Any, job_id: int) -> ReleaseJob:
    """Any kind of release job, for a lead of its project (non-members 404, annotators 403)."""
    job = ReleaseJob.objects.select_related("project").filter(pk=job_id).first()
    if job is None:
        raise NotFoundError("Job not found.")
    project_require_lead(user=user, project=job.project)
    return job


def release_job_latest(*, project: Project, kind: str) -> ReleaseJob | None:
    return ReleaseJob.objects.filter(project=project, kind=kind).order_by("-created_at", "-pk").first()
