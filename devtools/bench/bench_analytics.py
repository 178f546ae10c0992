"""The analysis page's figures (``pipeline.analytics``) on a ScreenQA-sized project: time and queries.

Uses the release benchmark's generated project (``bench_release.generate``: ``full`` about 36,000
screens, 86,000 questions, 120,000 answers; CI size 2,000 questions), built if it is missing or of
another size. Each selector is timed on its own (best of three) and the whole of
``analytics_project`` once with its queries counted: the count must not depend on the size.
Target: the whole analysis under 5 s at full size, in at most 8 queries.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Answer, Project, Question
from devtools.bench.bench_release import FULL, SLUG, SMALL, generate
from pipeline.analytics import figures as analytics

SELECTORS: dict[str, Callable[..., Any]] = {
    "funnel": analytics.analytics_funnel,
    "questions_per_screen": analytics.analytics_questions_per_screen,
    "answer_elements": analytics.analytics_answer_elements,
    "question_categories": analytics.analytics_question_categories,
    "agreement": analytics.analytics_agreement,
    "annotators": analytics.analytics_annotators,
}
TARGET_SECONDS = 5.0
MAX_QUERIES = 8


def _best_of(fn: Callable[[], Any], *, times: int = 3) -> float:
    best = float("inf")
    for _ in range(times):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return round(best, 3)


def run(full: bool) -> dict[str, Any]:
    size = FULL if full else SMALL
    project = Project.objects.filter(slug=SLUG).first()
    if project is None or project.description != f"{size['screens']}/{size['questions']}":
        project = generate(**size)
        with connection.cursor() as cursor:  # statistics, as autovacuum would gather them on a live database
            cursor.execute("ANALYZE")
    figures: dict[str, Any] = {
        "size": size,
        "questions": Question.objects.filter(screen__project=project).count(),
        "answers": Answer.objects.filter(question__screen__project=project).count(),
        "selector_seconds": {
            name: _best_of(lambda fn=fn: fn(project=project))  # type: ignore[misc]
            for name, fn in SELECTORS.items()
        },
    }
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        result = analytics.analytics_project(project=project)
        figures["total_seconds"] = round(time.perf_counter() - started, 3)
    figures["queries"] = len(queries)
    figures["categories_total"] = result.categories.total
    figures["target"] = {"seconds": TARGET_SECONDS, "queries": MAX_QUERIES}
    figures["ok"] = figures["total_seconds"] < TARGET_SECONDS and figures["queries"] <= MAX_QUERIES
    return figures
