"""Where a project stands in the pipeline (read only)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from annotation.models import Assignment, AssignmentStatus, Project, Question, Screen, ScreenState, Stage


def project_progress(*, project: Project) -> dict[str, Any]:
    """Counts by screen and question state, and whether post-processing may start.

    Ready for post-processing: no screen waits in pre-filtering or question writing, no
    sampled screen waits for its not-answerable question, and every question is
    ``answered`` (or already handled by post-processing).
    """
    screens = dict(Screen.objects.filter(project=project).values_list("state").annotate(n=Count("pk")))
    questions = dict(Question.objects.filter(screen__project=project).values_list("state").annotate(n=Count("pk")))
    na_pending = (
        Screen.objects.filter(project=project, not_answerable_sampled=True, state=ScreenState.ANSWERING)
        .exclude(
            pk__in=Assignment.objects.filter(
                project=project, stage=Stage.NOT_ANSWERABLE, status=AssignmentStatus.SUBMITTED
            ).values("screen_id")
        )
        .count()
    )
    waiting_screens = sum(
        screens.get(s, 0) for s in (ScreenState.PREFILTER, ScreenState.QUESTIONS_1, ScreenState.QUESTIONS_2)
    )
    open_questions = questions.get("drafting", 0) + questions.get("answering", 0)
    excluded = dict(
        Screen.objects.filter(project=project, state=ScreenState.EXCLUDED)
        .values_list("exclusion_reason")
        .annotate(n=Count("pk"))
    )
    answers_done = Question.objects.filter(screen__project=project).aggregate(
        done=Count("answers", filter=Q(answers__isnull=False))
    )["done"]
    return {
        "screens": {state: screens.get(state, 0) for state in ScreenState.values},
        "excluded": excluded,
        "questions": questions,
        "answers": answers_done,
        "not_answerable_pending": na_pending,
        "ready_for_postprocessing": waiting_screens == 0
        and open_questions == 0
        and na_pending == 0
        and sum(screens.values()) > 0,
    }
