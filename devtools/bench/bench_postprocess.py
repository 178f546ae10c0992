"""Post-processing and short answers of a ScreenQA-sized project: time, peak memory, re-run cost.

``full``: 36,000 screens and 86,000 answered questions (80/10/10 split by screen; one answer per
train question, three per validation/test question), generated straight into the benchmark
database with ``bulk_create``. The answers reproduce the paper's mix: about 10% not answerable,
1% invalid, and among validation/test questions ~97.9% where all three agree, ~1.9% where one
answerer disagrees and ~0.2% where none agree. Small (CI) size: 2,000 questions.

Each job runs in a fresh Python process, so that its peak RSS is its own. Figures: seconds of the
first post-processing run (every question decided), of a re-run (nothing changes), of the
short-answer run, and the agreement shares the run measured (they should match the generated mix).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from django.conf import settings

from annotation.models import (
    Answer,
    AnswerElement,
    Project,
    Question,
    QuestionSource,
    QuestionState,
    Verdict,
)
from devtools.bench.common import BATCH, answering_project_create

SLUG = "bench-postprocess"
FULL = {"screens": 36_000, "questions": 86_000}
SMALL = {"screens": 840, "questions": 2_000}

CHILD = """
import json, sys, time
import django
django.setup()
from annotation.models import Project, ReleaseJob
from pipeline.jobs.runner import job_run

def hwm_mb():
    # VmHWM (peak RSS of this process image): ru_maxrss would carry the parent's peak across exec.
    with open("/proc/self/status") as fh:
        return round(int(next(l for l in fh if l.startswith("VmHWM:")).split()[1]) / 1024, 1)

baseline = hwm_mb()
project = Project.objects.get(slug=sys.argv[1])
job = ReleaseJob.objects.create(project=project, kind=sys.argv[2])
started = time.perf_counter()
result = job_run(kind=sys.argv[2], job_id=job.pk).result
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": round(elapsed, 2), "baseline_rss_mb": baseline, "peak_rss_mb": hwm_mb(),
                  "result": result}))
"""


def _answer_plan(index: int, raters: int) -> Sequence[tuple[str, list[str]]]:
    """(verdict, element texts) per rater, reproducing the paper's mix deterministically."""
    # Hashed (Knuth's multiplicative hash mod 2**32) so the mix does not alias with the screen
    # layout: any function of index mod 1000 lands on the same splits every time.
    bucket = ((index * 2654435761) % 2**32) % 1000
    value = [f"Plan {index % 97}", f"{index % 13} reviews"][: 1 + index % 2]
    if bucket < 100:
        return [(Verdict.NOT_ANSWERABLE, [])] * raters
    if bucket < 110:
        return [(Verdict.INVALID, [])] * raters
    if raters == 1:
        return [(Verdict.ANSWERED, value)]
    if bucket < 112:  # ~0.2%: none agree
        return [(Verdict.ANSWERED, [f"option {r} of {index}"]) for r in range(raters)]
    if bucket < 131:  # ~1.9%: one answerer disagrees
        return [(Verdict.ANSWERED, value)] * (raters - 1) + [(Verdict.ANSWERED, ["something else"])]
    # segmentation and case differ between raters: they still agree
    return [(Verdict.ANSWERED, value if r % 2 == 0 else [" ".join(value).upper()]) for r in range(raters)]


def generate(*, screens: int, questions: int) -> Project:
    """A project of ``screens`` screens and ``questions`` answered questions with their answers."""
    project, pending = answering_project_create(
        slug=SLUG, name="Post-processing benchmark", screens=screens, questions=questions
    )
    for start in range(0, len(pending), BATCH):
        chunk = pending[start : start + BATCH]
        raters = [1 if screen.split == "train" else 3 for screen, _ in chunk]
        created = Question.objects.bulk_create(
            [
                Question(
                    screen=screen,
                    source=QuestionSource.PASS_1,
                    position=k,
                    text=f"how many reviews has plan {k} of screen {screen.rico_id}",
                    state=QuestionState.ANSWERED,
                    answers_needed=n,
                    answers_done=n,
                )
                for (screen, k), n in zip(chunk, raters, strict=True)
            ]
        )
        answers: list[Answer] = []
        texts: list[list[str]] = []
        for offset, (question, n) in enumerate(zip(created, raters, strict=True)):
            for rater, (verdict, elements) in enumerate(_answer_plan(start + offset, n)):
                fixed = question.text.capitalize() + "?" if rater < 2 else question.text
                answers.append(
                    Answer(
                        question=question,
                        verdict=verdict,
                        question_text=fixed,
                        full_answer=f"It has {' '.join(elements)}." if elements else "",
                    )
                )
                texts.append(elements)
        Answer.objects.bulk_create(answers)
        AnswerElement.objects.bulk_create(
            [
                AnswerElement(
                    answer=answer, position=p, left=10, top=100 + 40 * p, right=500, bottom=130 + 40 * p, text=text
                )
                for answer, elements in zip(answers, texts, strict=True)
                for p, text in enumerate(elements)
            ],
            batch_size=BATCH,
        )
    return project


def _in_child(kind: str, slug: str = SLUG) -> dict[str, Any]:
    """Job ``kind`` (``postprocess``, ``short-answers``) on project ``slug``, in a fresh process (its own peak RSS)."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "annotation.settings.bench"),
    }
    result = subprocess.run(
        [sys.executable, "-c", CHILD, slug, kind],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def run(full: bool) -> dict[str, Any]:
    size = FULL if full else SMALL
    started = time.perf_counter()
    generate(**size)  # always fresh: the first run must decide every question
    figures: dict[str, Any] = {"size": size, "generate_seconds": round(time.perf_counter() - started, 1)}
    first = _in_child("postprocess")
    rerun = _in_child("postprocess")
    short = _in_child("short-answers")
    summary = first["result"]["summary"]
    figures["postprocess"] = {
        "seconds": first["seconds"],
        "questions_per_second": round(first["result"]["decided"] / max(first["seconds"], 1e-9)),
        "peak_rss_mb": first["peak_rss_mb"],
        "baseline_rss_mb": first["baseline_rss_mb"],
        "decided": first["result"]["decided"],
        "changed": first["result"]["changed"],
    }
    figures["rerun"] = {"seconds": rerun["seconds"], "changed": rerun["result"]["changed"]}
    figures["short_answers"] = {
        "seconds": short["seconds"],
        "peak_rss_mb": short["peak_rss_mb"],
        "generated": short["result"]["generated"],
    }
    figures["agreement_shares"] = {k: round(v, 4) for k, v in summary["agreement_shares"].items()}
    figures["kept"], figures["dropped"] = summary["kept"], summary["dropped"]
    figures["ok"] = rerun["result"]["changed"] == 0 and first["result"]["decided"] == size["questions"]
    return figures
