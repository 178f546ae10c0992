"""Where a project stands: the one read behind the project page's funnel, the analysis page's
funnel, the progress API and "ready for post-processing".

Each group of counts is read once, when first asked for: the funnel costs two queries, the
whole progress (with every stage's ``pending``) four.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.db.models import Case, Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import (
    Assignment,
    AssignmentStatus,
    Membership,
    Project,
    Question,
    QuestionState,
    Screen,
    ScreenState,
    Split,
    Stage,
    Verdict,
)

from .prefilter import REASON_NON_ENGLISH, REASON_OUT_OF_SYNC
from .registry import stages


@dataclass(frozen=True)
class FunnelStep:
    key: str
    label: str
    count: int


@dataclass(frozen=True)
class SplitAnswers:
    """The answers stage of one split: questions still collecting answers, answers in and needed."""

    split: str
    waiting: int
    done: int
    needed: int


@dataclass(frozen=True)
class Stuck:
    """Questions that cannot collect their answers: the answer pool has too few people other
    than their author and those who answered them already."""

    splits: tuple[str, ...]
    answers_needed: int
    count: int

    @property
    def message(self) -> str:
        ordinal = {1: "an", 2: "a second", 3: "a third"}.get(self.answers_needed, f"a {self.answers_needed}th")
        splits = "/".join(self.splits) or "unsplit"
        noun = "question needs" if self.count == 1 else "questions need"
        return (
            f"{self.count} {splits} {noun} {ordinal} answerer other than their author: add members to the answer pool."
        )


def _ordinal_split(split: str) -> int:
    order: dict[str, int] = {Split.TRAIN.value: 0, Split.VALIDATION.value: 1, Split.TEST.value: 2}
    return order.get(split, 3)


class ProjectProgress:
    """Counts of one project (see the module docstring for what each costs)."""

    def __init__(self, project: Project) -> None:
        self.project = project

    @cached_property
    def _screens(self) -> tuple[dict[str, int], dict[str, int]]:
        screens = dict.fromkeys(ScreenState.values, 0)
        excluded: dict[str, int] = {}
        rows = (
            Screen.objects.filter(project=self.project)
            .order_by()
            .values_list("state", "exclusion_reason")
            .annotate(n=Count("pk"))
        )
        for state, reason, n in rows:
            screens[state] += n
            if state == ScreenState.EXCLUDED:
                excluded[reason] = excluded.get(reason, 0) + n
        return screens, dict(sorted(excluded.items(), key=lambda item: (-item[1], item[0])))

    @property
    def screens(self) -> dict[str, int]:
        """Screens by state (every state listed)."""
        return self._screens[0]

    @property
    def excluded(self) -> dict[str, int]:
        """Excluded screens by reason, most first."""
        return self._screens[1]

    @cached_property
    def questions(self) -> dict[str, int]:
        """Questions by state (the states that have some)."""
        rows = Question.objects.filter(screen__project=self.project).order_by().values_list("state")
        return dict(rows.annotate(n=Count("pk")))

    @cached_property
    def _behind(self) -> dict[str, int]:
        # Distinct counts over a join: plans well even on fresh tables without statistics.
        return Question.objects.filter(screen__project=self.project).aggregate(
            with_questions=Count("screen", distinct=True),
            with_answered=Count(
                "screen", distinct=True, filter=Q(answers__verdict=Verdict.ANSWERED, answers__kept=True)
            ),
            answers=Count("answers"),
        )

    @property
    def answers(self) -> int:
        """Answers submitted."""
        return self._behind["answers"]

    @property
    def with_questions(self) -> int:
        """Screens with at least one question."""
        return self._behind["with_questions"]

    @property
    def with_answered(self) -> int:
        """Screens with at least one kept answer whose verdict is ``answered``."""
        return self._behind["with_answered"]

    @property
    def imported(self) -> int:
        return sum(self.screens.values())

    @property
    def non_english(self) -> int:
        return self.excluded.get(REASON_NON_ENGLISH, 0)

    @property
    def out_of_sync(self) -> int:
        return self.excluded.get(REASON_OUT_OF_SYNC, 0)

    @property
    def eligible(self) -> int:
        """Screens that passed pre-filtering."""
        return self.imported - self.screens[ScreenState.PREFILTER] - self.screens[ScreenState.EXCLUDED]

    @cached_property
    def pending(self) -> dict[str, int]:
        """Per stage, the units still waiting in it (each stage's ``pending``)."""
        return {
            name: stage.pending(project=self.project, screens=self.screens, questions=self.questions)
            for name, stage in stages().items()
        }

    @property
    def ready_for_postprocessing(self) -> bool:
        """No stage whose work the release needs has any waiting (and there is something to
        post-process); reviews still waiting do not hold the release back."""
        blocking = {name for name, stage in stages().items() if stage.blocks_release}
        return self.imported > 0 and not any(n for name, n in self.pending.items() if name in blocking)

    def steps(self) -> list[FunnelStep]:
        """The papers' stage funnel: screens imported -> non-English -> out of sync -> eligible ->
        with questions -> with answered questions."""
        return [
            FunnelStep("imported", "Screens imported", self.imported),
            FunnelStep("non-english", "Non-English", self.non_english),
            FunnelStep("out-of-sync", "VH out of sync", self.out_of_sync),
            FunnelStep("eligible", "Eligible", self.eligible),
            FunnelStep("with-questions", "With questions", self.with_questions),
            FunnelStep("with-answered", "With answered questions", self.with_answered),
        ]

    @cached_property
    def answers_by_split(self) -> list[SplitAnswers]:
        """Per split (train, validation, test): questions waiting for answers and answers done of
        needed, over the questions that collect or collected answers."""
        rows = (
            Question.objects.filter(
                screen__project=self.project,
                state__in=[QuestionState.ANSWERING, QuestionState.ANSWERED, QuestionState.KEPT],
            )
            .values_list("screen__split")
            .annotate(
                waiting=Count("pk", filter=Q(state=QuestionState.ANSWERING)),
                done=Coalesce(Sum("answers_done"), 0),
                needed=Coalesce(Sum("answers_needed"), 0),
            )
            .order_by()
        )
        found = [SplitAnswers(split or "", waiting, done, needed) for split, waiting, done, needed in rows]
        return sorted(found, key=lambda row: _ordinal_split(row.split))

    @cached_property
    def stuck(self) -> list[Stuck]:
        """Questions collecting answers that the answer pool cannot finish: more answers missing
        than pool members other than the author and those who answered it already (those holding
        a lease on it count: they can still submit). Grouped by how many answers they need, counted
        in the database (one row per group); no query at all when no question waits for answers."""
        if not any(row.waiting for row in self.answers_by_split):
            return []
        pool = Membership.objects.filter(project=self.project, in_answer_pool=True)
        pool_size = pool.count()
        answered_in_pool = (
            Assignment.objects.filter(
                question=OuterRef("pk"),
                stage=Stage.ANSWERS,
                status=AssignmentStatus.SUBMITTED,
                annotator_id__in=pool.values("user_id"),
            )
            .order_by()
            .values("question")
            .annotate(n=Count("annotator", distinct=True))
            .values("n")
        )
        rows = (
            Question.objects.filter(screen__project=self.project, state=QuestionState.ANSWERING)
            .annotate(
                answered=Coalesce(Subquery(answered_in_pool, output_field=IntegerField()), 0),
                author_in_pool=Case(
                    When(Exists(pool.filter(user_id=OuterRef("author_id"))), then=Value(1)), default=Value(0)
                ),
            )
            .annotate(free=Value(pool_size) - F("answered") - F("author_in_pool"))
            .filter(free__lt=F("answers_needed") - F("answers_done"))
            .order_by()
            .values_list("answers_needed", "screen__split")
            .annotate(n=Count("pk"))
        )
        groups: dict[int, tuple[set[str], int]] = {}
        for needed, split, n in rows:
            splits, total = groups.get(needed, (set(), 0))
            groups[needed] = (splits | {split or ""}, total + n)
        return [
            Stuck(tuple(sorted(splits, key=_ordinal_split)), needed, n)
            for needed, (splits, n) in sorted(groups.items(), reverse=True)
        ]

    @cached_property
    def held(self) -> dict[str, int]:
        """Per stage, units held by a live lease now (the stages that have some)."""
        rows = (
            Assignment.objects.filter(
                project=self.project, status=AssignmentStatus.LEASED, lease_expires_at__gt=timezone.now()
            )
            .values_list("stage")
            .annotate(n=Count("pk"))
            .order_by()
        )
        return dict(rows)

    def as_api(self) -> dict[str, Any]:
        """The progress API's shape (``pipeline.apis.engine.ProjectProgressApi``)."""
        return {
            "screens": self.screens,
            "excluded": self.excluded,
            "questions": self.questions,
            "answers": self.answers,
            "pending": self.pending,
            "not_answerable_pending": self.pending.get("not-answerable", 0),
            "ready_for_postprocessing": self.ready_for_postprocessing,
        }


def project_progress(*, project: Project) -> ProjectProgress:
    """Where ``project`` stands (counts read lazily, each group once)."""
    return ProjectProgress(project)
