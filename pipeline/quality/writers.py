"""What the pipeline itself says of the questions a writer wrote (docs/quality.md): answerers'
``invalid`` / ``not_answerable`` verdicts and pass-2 writers' flags. Read by the lead's report
(``report.py``) and the writer's "My work" (``mine.py``), so both count the same way.

No import of the stages package: ``mine`` is imported by the engine while the package loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from annotation.models import Project, Question, QuestionSource, Stage, Verdict
from pipeline.decisions.decide import QUALITY_ANSWER_REASONS

# The writing stages whose questions answerers judge (the question's source names the stage).
WRITING_SOURCES: dict[str, str] = {
    Stage.QUESTIONS_1: QuestionSource.PASS_1,
    Stage.QUESTIONS_2: QuestionSource.PASS_2,
    Stage.NOT_ANSWERABLE: QuestionSource.NOT_ANSWERABLE,
}


@dataclass(frozen=True)
class WrittenQuestions:
    """What the pipeline says of the questions one writer wrote."""

    written: int = 0
    flagged: int = 0  # an answerer judged it invalid or not answerable
    flagged_pass2: int = 0  # the screen's pass-2 writer flagged it (``Question.flag_reason``)
    faulted: int = 0  # either (each question once)


FAULTED_SHOWN = 100  # questions listed behind the figure on the lead's annotator page


def _judged() -> Q:
    """An answer (through ``answers__``) that counts against the question's writer."""
    live = ~Q(answers__drop_reason__in=QUALITY_ANSWER_REASONS)
    return live & (
        Q(answers__verdict=Verdict.INVALID)
        | (Q(answers__verdict=Verdict.NOT_ANSWERABLE) & ~Q(source=QuestionSource.NOT_ANSWERABLE))
    )


def _written(*, project: Project, stage: str | None, **authors: object) -> QuerySet[Question] | None:
    """The questions of ``project`` by the writers ``authors`` names, of ``stage`` (a writing
    stage) or all; ``None`` for a stage that writes no questions."""
    questions = Question.objects.filter(screen__project=project, **authors)
    if not stage:
        return questions
    return questions.filter(source=WRITING_SOURCES[stage]) if stage in WRITING_SOURCES else None


def written_questions(
    *, project: Project, author_ids: list[int], stage: str | None = None
) -> dict[int, WrittenQuestions]:
    """Per writer, their questions (of ``stage``, a writing stage, or all) and the pipeline's
    feedback on them: answerers' ``invalid`` / ``not_answerable`` (a question of the
    not-answerable stage is meant to be: only ``invalid`` counts against it; answers withdrawn by
    quality control do not count) and pass-2 writers' flags. One grouped query."""
    questions = _written(project=project, stage=stage, author_id__in=author_ids)
    if questions is None:
        return {}
    judged = _judged()
    by_pass2 = ~Q(flag_reason="")
    return {
        author_id: WrittenQuestions(*counts)
        for author_id, *counts in questions.values("author_id")
        .annotate(
            written=Count("pk", distinct=True),
            flagged=Count("pk", filter=judged, distinct=True),
            flagged_pass2=Count("pk", filter=by_pass2, distinct=True),
            faulted=Count("pk", filter=judged | by_pass2, distinct=True),
        )
        .values_list("author_id", "written", "flagged", "flagged_pass2", "faulted")
    }


def faulted_questions(
    *, project: Project, author_id: int, stage: str | None = None, limit: int = FAULTED_SHOWN
) -> list[Question]:
    """The items behind a writer's "invalid questions" figure: their questions (of ``stage``) an
    answerer judged invalid / not answerable or a pass-2 writer flagged, newest first, each with
    ``judged`` (how many answers count against it) and its ``flag_reason``. One query."""
    questions = _written(project=project, stage=stage, author_id=author_id)
    if questions is None:
        return []
    return list(
        questions.annotate(judged=Count("answers", filter=_judged(), distinct=True))
        .filter(Q(judged__gt=0) | ~Q(flag_reason=""))
        .select_related("screen")
        .order_by("-pk")[:limit]
    )
