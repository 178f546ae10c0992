"""Post-processing before release: apply the decision rules (``pipeline.decisions.decide``) to every
answered question of a project, in batches.

* ``release_job_start``     a lead starts a post-processing or short-answer job (queued);
* ``postprocess_job_work``  the job's work: decides every answered question of the project.

Both kinds of job run through the one job lifecycle (``pipeline.jobs``): claim, heartbeat,
failure, the stale rule and re-runs are its.

Results are read with ``pipeline.decisions.selectors``; short answers live in
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
from typing import Any

from django.db import transaction

from annotation.db.bulk import batched, bulk_set
from annotation.exceptions import ApplicationError, ConflictError
from annotation.models import Answer, Project, Question, ReleaseJob
from pipeline.decisions.agreement import AgreementSettings
from pipeline.decisions.decide import (
    DECIDABLE_STATES,
    PREDECIDED_QUESTION_REASONS,
    PROTECTED_SHORT_ANSWER_SOURCES,
    agreement_settings_for,
    question_decide,
)
from pipeline.decisions.selectors import answer_records, postprocess_summary
from pipeline.jobs.lifecycle import Outcome, Progress, job_create, jobs_alive
from pipeline.quality.provisional import held_back_sweep, provisional_review_sweep

logger = logging.getLogger(__name__)

JOB_KINDS = (ReleaseJob.Kind.POSTPROCESS, ReleaseJob.Kind.SHORT_ANSWERS)


def release_job_start(*, project: Project, kind: str, user: Any) -> ReleaseJob:
    """Queue a post-processing or short-answer job for ``project``.

    ``ConflictError`` when a job of that kind is already queued or running for the project and is not
    stale (``pipeline.jobs.lifecycle.jobs_alive``). Two jobs racing past this check are harmless: both
    write the same decisions.
    """
    if kind not in JOB_KINDS:
        raise ApplicationError(f"Unknown job kind {kind!r}.", field="kind")
    active = jobs_alive(ReleaseJob.objects.filter(project=project, kind=kind)).order_by("-created_at").first()
    if active is not None:
        raise ConflictError(f"A {kind} job is already {active.status}.", extra={"job_id": active.pk})
    if kind == ReleaseJob.Kind.POSTPROCESS:
        # Work no control item confirmed, by annotators whose evidence is thin or against them, is
        # held back and asked of others first (pipeline.quality.provisional, docs/quality.md).
        swept = held_back_sweep(project=project)
        if swept["held"]:
            items = sum(swept["held"].values())
            raise ConflictError(
                f"{items} item(s) of {swept['annotators']} annotator(s) were held back (no passed control item "
                "confirms them and nobody corroborates them) and are back in the queues: post-processing can "
                "start once they are redone.",
                extra={"held_back": swept["held"]},
            )
        # Writers' sets no review confirmed, by writers whose reviews are thin or against them, go to
        # review first (pipeline.quality.provisional.provisional_review_sweep).
        review_first = provisional_review_sweep(project=project)
        if review_first["waiting"]:
            sets = sum(review_first["waiting"].values())
            raise ConflictError(
                f"{sets} question set(s) of {review_first['writers']} writer(s) that no review has confirmed "
                "are waiting for review (too few of their sets were reviewed, or reviews speak against them): "
                "post-processing can start once they are reviewed.",
                extra={"review_first": review_first["waiting"]},
            )
    return job_create(model=ReleaseJob, project=project, user=user, kind=kind)


def postprocess_batch_apply(*, question_ids: Sequence[int], settings: AgreementSettings) -> int:
    """Decide a batch of questions and write what changed: three reads and at most three writes,
    whatever the batch size (one transaction).

    Only questions still in a decidable state are read and written. Generated short answers of a
    question whose decision changed are cleared (they were made from the old decision); short
    answers a person wrote stay. Returns how many questions changed.
    """
    questions = list(
        Question.objects.filter(pk__in=question_ids, state__in=DECIDABLE_STATES)
        .exclude(drop_reason__in=PREDECIDED_QUESTION_REASONS)
        .values_list("pk", "text", "state", "final_text", "drop_reason", "agreement")
    )
    ids = [row[0] for row in questions]
    records = answer_records(ids)
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


def postprocess_job_work(*, job: ReleaseJob, progress: Progress, batch_size: int = 500) -> Outcome:
    """The post-processing job's work (``pipeline.kinds``): decide every answered (or already
    decided) question of the job's project, batch by batch.

    Idempotent (same data, same decisions, nothing written); each batch commits on its own, so a run
    that fails or is killed keeps the batches it finished and a re-run decides the rest.
    """
    project = job.project
    settings = agreement_settings_for(project)
    questions = Question.objects.filter(screen__project=project, state__in=DECIDABLE_STATES)
    total = questions.count()
    progress(0, total)
    processed = changed = 0
    stream = questions.order_by("pk").values_list("pk", flat=True).iterator(chunk_size=batch_size)
    for batch in batched(stream, batch_size):
        changed += postprocess_batch_apply(question_ids=batch, settings=settings)
        processed += len(batch)
        progress(processed, max(total, processed))
    return Outcome(result={"decided": processed, "changed": changed, "summary": postprocess_summary(project=project)})


def release_job_latest(*, project: Project, kind: str) -> ReleaseJob | None:
    jobs = ReleaseJob.objects.filter(project=project, kind=kind).select_related("project", "created_by")
    return jobs.order_by("-created_at", "-pk").first()
