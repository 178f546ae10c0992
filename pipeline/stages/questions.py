"""Question writing (per screen), two passes by two different writers of the same pool.

* ``questions-1``: one writer, 0 to ``questions_pass1_cap`` (5) questions;
* ``questions-2``: one *different* writer sees the pass-1 questions and adds 0 to
  ``questions_pass2_cap`` (3). Then the screen's questions are final: it gets its split
  and goes to ``answering``, or closes as ``no-questions``.

"One writer per pass", "one accepted submission per pass" and "two different writers"
are partial unique constraints of ``Assignment``; the queue and the re-check under the
screen lock keep them from ever firing in normal operation.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Max, Q, QuerySet

from annotation.exceptions import ConflictError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Project,
    Question,
    QuestionSource,
    QuestionState,
    Screen,
    ScreenState,
    Stage,
)

from .base import (
    StageRules,
    clean_question_list,
    live_q,
    others_live_lease_exists,
    question_brief,
    require_keys,
    screen_has,
    screen_questions,
    taken_by_user_q,
    user_submitted_exists,
)
from .split import screen_questions_finalize


def questions_create(*, assignment: Assignment, screen: Screen, texts: list[str], source: str, state: str) -> None:
    """Append questions to a screen (caller holds the screen lock, so positions are free)."""
    last = Question.objects.filter(screen=screen).aggregate(m=Max("position"))["m"]
    first = 0 if last is None else last + 1
    answers_needed = screen.project.answers_needed(screen.split) if state == QuestionState.ANSWERING else 0
    Question.objects.bulk_create(
        [
            Question(
                screen=screen,
                author_id=assignment.annotator_id,
                origin=assignment,
                source=source,
                position=first + i,
                text=text,
                state=state,
                answers_needed=answers_needed,
            )
            for i, text in enumerate(texts)
        ]
    )


class QuestionsPass1Rules(StageRules):
    stage = Stage.QUESTIONS_1
    label = "Questions, pass 1"
    screen_state = ScreenState.QUESTIONS_1

    def cap(self, project: Project) -> int:
        return project.questions_pass1_cap

    def queue_shape(self, *, project: Project) -> tuple[Any, ...] | None:
        return ()  # the queue depends on the project, user and time only

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        return (
            Screen.objects.filter(project=project, state=self.screen_state)
            .exclude(screen_has(self.stage, live_q(now)))
            .exclude(screen_has(self.stage, taken_by_user_q(user)))
            .order_by("pk")
        )

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        screen: Screen = unit
        if screen.state != self.screen_state:
            return False
        return not others_live_lease_exists(stage=self.stage, now=now, own=own, screen=screen)

    def taken_texts(self, assignment: Assignment) -> list[str]:
        return []

    def clean(self, *, assignment: Assignment, data: dict[str, Any]) -> dict[str, Any]:
        require_keys(data, {"questions"})
        texts = clean_question_list(
            data.get("questions"),
            field="questions",
            cap=self.cap(assignment.project),
            taken=self.taken_texts(assignment),
        )
        return {"questions": texts}

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        screen: Screen = unit
        if screen.state != self.screen_state:
            raise ConflictError("This screen's questions for this pass are already written.")
        questions_create(
            assignment=assignment,
            screen=screen,
            texts=cleaned["questions"],
            source=QuestionSource.PASS_1,
            state=QuestionState.DRAFTING,
        )
        screen.state = ScreenState.QUESTIONS_2
        screen.save(update_fields=["state"])

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        return {"max_questions": self.cap(assignment.project)}


class QuestionsPass2Rules(QuestionsPass1Rules):
    stage = Stage.QUESTIONS_2
    label = "Questions, pass 2"
    screen_state = ScreenState.QUESTIONS_2

    def cap(self, project: Project) -> int:
        return project.questions_pass2_cap

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        # The pass-1 writer of a screen never writes its pass 2.
        wrote_pass1 = Q(annotator=user, status=AssignmentStatus.SUBMITTED)
        return super().queue(project=project, user=user, now=now).exclude(screen_has(Stage.QUESTIONS_1, wrote_pass1))

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        if not super().open_to(unit=unit, user=user, now=now, own=own):
            return False
        return not user_submitted_exists(stage=Stage.QUESTIONS_1, screen=unit, user=user)

    def taken_texts(self, assignment: Assignment) -> list[str]:
        return [q.text for q in screen_questions(assignment.screen, not_from=assignment)]

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        screen: Screen = unit
        if screen.state != self.screen_state:
            raise ConflictError("This screen's questions for this pass are already written.")
        if Assignment.objects.filter(
            screen=screen,
            stage=Stage.QUESTIONS_1,
            annotator_id=assignment.annotator_id,
            status=AssignmentStatus.SUBMITTED,
        ).exists():
            raise ConflictError("You wrote pass 1 of this screen; pass 2 needs a different writer.")
        questions_create(
            assignment=assignment,
            screen=screen,
            texts=cleaned["questions"],
            source=QuestionSource.PASS_2,
            state=QuestionState.DRAFTING,
        )
        screen_questions_finalize(screen=screen, now=now)

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        return {
            "max_questions": self.cap(assignment.project),
            "previous_questions": [question_brief(q) for q in screen_questions(assignment.screen)],
        }
