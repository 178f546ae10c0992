"""Export of a ScreenQA-sized project: time and peak memory.

``full``: about 36,000 screens, 86,000 questions, 120,000 answers (80/10/10 split; one answer
per train question, three per validation/test question, ~10% not answerable), generated
straight into the benchmark database with ``bulk_create`` (no images: every screen names one
placeholder file). Small (CI) size: 2,000 questions.

The export runs in a fresh Python process so that its peak RSS (``ru_maxrss``) is the
export's own, not the generator's; the figures include the process's baseline after
``django.setup()``. Target: under 60 s and under 500 MB. The generated project
(``bench-release``) is kept between runs of the same size and rebuilt otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from annotation.models import (
    Answer,
    AnswerElement,
    App,
    Project,
    Question,
    QuestionSource,
    QuestionState,
    Screen,
    Verdict,
)
from devtools.bench.common import BATCH, answering_project_create, project_delete_fast

SLUG = "bench-release"
FULL = {"screens": 36_000, "questions": 86_000}
SMALL = {"screens": 840, "questions": 2_000}
IMPORT_SLUG = "bench-release-import"

CHILD = """
import json, os, resource, sys, time
import django
django.setup()
from annotation.models import Project
from pipeline.release.export.service import release_export
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
project = Project.objects.get(slug=sys.argv[1])
started = time.perf_counter()
manifest = release_export(project=project, out_dir=sys.argv[2], fmt=sys.argv[3])
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": round(elapsed, 2), "baseline_rss_mb": round(baseline / 1024, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "questions": manifest["counts"]["total"]["questions"],
                  "answers": manifest["counts"]["total"]["answers"],
                  "bytes": sum(f["bytes"] for f in manifest["files"].values())}))
"""

IMPORT_CHILD = """
import json, resource, sys, time
import django
django.setup()
from annotation.models import Project
from pipeline.release.imports import release_import
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
project = Project.objects.get(slug=sys.argv[1])
started = time.perf_counter()
summary = release_import(project=project, directory=sys.argv[2])
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": round(elapsed, 2), "baseline_rss_mb": round(baseline / 1024, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "questions_created": summary["total"]["questions_created"],
                  "answers_created": summary["total"]["answers_created"]}))
"""


def generate(*, screens: int, questions: int) -> Project:
    """A project of ``screens`` screens and ``questions`` kept questions with their kept answers."""
    project, pending = answering_project_create(
        slug=SLUG, name="Release benchmark", screens=screens, questions=questions, mixed_sizes=True
    )
    for start in range(0, len(pending), BATCH):
        chunk = pending[start : start + BATCH]
        created = Question.objects.bulk_create(
            [
                Question(
                    screen=screen,
                    source=QuestionSource.PASS_1,
                    position=k,
                    text=f"What is shown in area {k} of screen {screen.rico_id}?",
                    state=QuestionState.KEPT,
                    short_answers=[f"value {k}", f"{k}"],
                    short_answers_source="rules",
                    agreement="" if screen.split == "train" else "all",
                )
                for screen, k in chunk
            ]
        )
        answers: list[Answer] = []
        for question, (screen, _k) in zip(created, chunk, strict=True):
            for rater in range(1 if screen.split == "train" else 3):
                not_answerable = question.pk % 10 == 0
                answers.append(
                    Answer(
                        question=question,
                        verdict=Verdict.NOT_ANSWERABLE if not_answerable else Verdict.ANSWERED,
                        question_text=question.text,
                        full_answer="" if not_answerable else f"The value shown is value {rater}.",
                        kept=True,
                    )
                )
        Answer.objects.bulk_create(answers)
        elements = [
            AnswerElement(
                answer=answer,
                position=p,
                vh_index=None if p else 12,
                left=10 + p,
                top=100 + 40 * p,
                right=500,
                bottom=130 + 40 * p,
                text=f"value {p}",
            )
            for answer in answers
            if answer.verdict == Verdict.ANSWERED
            for p in range(1 + answer.pk % 2)
        ]
        AnswerElement.objects.bulk_create(elements, batch_size=BATCH)
    return project


def _screens_for_import() -> None:
    """A second project with the same screens (no split, no questions), to import the export into."""
    project_delete_fast(IMPORT_SLUG)
    project = Project.objects.create(slug=IMPORT_SLUG, name="Release import benchmark")
    app = App.objects.create(project=project, package="com.example.bench")
    rows = Screen.objects.filter(project__slug=SLUG).values_list("rico_id", "width", "height").iterator()
    batch: list[Screen] = []
    for rico_id, width, height in rows:
        batch.append(
            Screen(
                project=project,
                app=app,
                rico_id=rico_id,
                image="screens/placeholder.png",
                width=width,
                height=height,
                vh={},
                content_sha256="0" * 64,
            )
        )
        if len(batch) == BATCH:
            Screen.objects.bulk_create(batch)
            batch = []
    Screen.objects.bulk_create(batch)


def _run_child(code: str, *args: str) -> dict[str, Any]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "annotation.settings.bench"),
    }
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def run(full: bool) -> dict[str, Any]:
    size = FULL if full else SMALL
    project = Project.objects.filter(slug=SLUG).first()
    generated_seconds = None
    if project is None or project.description != f"{size['screens']}/{size['questions']}":
        started = time.perf_counter()
        generate(**size)
        generated_seconds = round(time.perf_counter() - started, 1)
    figures: dict[str, Any] = {
        "size": size,
        "generate_seconds": generated_seconds,
        "answers": Answer.objects.filter(question__screen__project__slug=SLUG).count(),
    }
    with tempfile.TemporaryDirectory(prefix="bench-release-") as tmp:
        for fmt in ("screenqa", "jsonl", "docvqa"):
            figures[fmt] = _run_child(CHILD, SLUG, str(Path(tmp) / fmt), fmt)
        # import_release of the ScreenQA export into a project holding the same screens
        _screens_for_import()
        figures["import_screenqa"] = _run_child(IMPORT_CHILD, IMPORT_SLUG, str(Path(tmp) / "screenqa"))
        project_delete_fast(IMPORT_SLUG)
    figures["target"] = {"seconds": 60, "peak_rss_mb": 500}
    figures["ok"] = all(
        figures[f]["seconds"] < 60 and figures[f]["peak_rss_mb"] < 500 for f in ("screenqa", "jsonl", "docvqa")
    )
    return figures
