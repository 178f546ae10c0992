"""The split stage: train / validation / test per screen, when its questions are final.

Deterministic: a seeded SHA-256 of the project's ``split_seed``, its slug and the RICO id
picks a bucket in 0..9999 that the project's percentages cut into three ranges. The same
screen always lands in the same split (re-imports, re-runs, other machines), and all
questions of a screen share it because the split is stored on the screen.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from annotation.models import Project, Question, QuestionState, Screen, ScreenState, Split


def split_bucket(*, seed: str, slug: str, rico_id: str, salt: str = "split") -> int:
    digest = hashlib.sha256(f"{salt}\x1f{seed}\x1f{slug}\x1f{rico_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 10_000


def split_for(*, project: Project, rico_id: str) -> str:
    bucket = split_bucket(seed=project.split_seed, slug=project.slug, rico_id=rico_id)
    if bucket < project.split_train * 100:
        return Split.TRAIN
    if bucket < (project.split_train + project.split_validation) * 100:
        return Split.VALIDATION
    return Split.TEST


def screen_questions_finalize(*, screen: Screen, now: datetime) -> None:
    """Close the question passes of a screen (caller holds the screen lock).

    No question: the screen is closed as ``no-questions``. Otherwise it gets its split,
    goes to ``answering``, and every question of it waits for the split's number of answers.
    """
    project = screen.project
    questions = Question.objects.filter(screen=screen)
    if not questions.exists():
        screen.state = ScreenState.NO_QUESTIONS
        screen.save(update_fields=["state"])
        return
    screen.split = screen.split or split_for(project=project, rico_id=screen.rico_id)
    screen.state = ScreenState.ANSWERING
    screen.save(update_fields=["split", "state"])
    questions.filter(state=QuestionState.DRAFTING).update(
        state=QuestionState.ANSWERING, answers_needed=project.answers_needed(screen.split)
    )
