"""The work of the pipeline: assignments, judgments, questions and answers.

Invariants that can live in the database do (see the constraints); the
services in ``annotation.services`` and ``pipeline`` enforce the rest under
row locks taken through ``annotation.lock_objects``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from .projects import Project
from .screens import Screen, queue_key_new

SCREEN_WRITING_STAGES = ("questions-1", "questions-2", "not-answerable")


class Stage(models.TextChoices):
    PREFILTER = "prefilter", "Pre-filtering"
    QUESTIONS_1 = "questions-1", "Questions, pass 1"
    QUESTIONS_2 = "questions-2", "Questions, pass 2"
    ANSWERS = "answers", "Answers"
    NOT_ANSWERABLE = "not-answerable", "Not-answerable questions"
    REVIEW = "review", "Review"


class Purpose(models.TextChoices):
    """Why an assignment was handed out: real work, or a gold item (qualification, control)."""

    WORK = "work"
    QUALIFICATION = "qualification"
    CONTROL = "control"


class ReviewState(models.TextChoices):
    """Where a submitted assignment stands with review (blank: not sampled)."""

    NONE = "", "not sampled"
    SAMPLED = "sampled", "waiting for review"
    ACCEPTED = "accepted", "accepted"
    REJECTED = "rejected", "rejected"


class AssignmentStatus(models.TextChoices):
    LEASED = "leased"
    SUBMITTED = "submitted"
    SKIPPED = "skipped"
    RELEASED = "released"
    EXPIRED = "expired"


class Assignment(models.Model):
    """One annotator's lease on one unit of work (a screen, or a question for ``answers``)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    stage = models.CharField(max_length=16, choices=Stage.choices)
    screen = models.ForeignKey(Screen, on_delete=models.CASCADE, related_name="assignments")
    question = models.ForeignKey(
        "Question", null=True, blank=True, on_delete=models.CASCADE, related_name="assignments"
    )
    # No index of its own: ``assignment_annotator`` (annotator, stage, status) serves every look-up by
    # annotator; a one-column index beside it was what the planner walked, hoping to meet an open lease
    # soon, when it checked that the caller had none (pipeline.engine.services._held).
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    status = models.CharField(max_length=12, choices=AssignmentStatus.choices, default=AssignmentStatus.LEASED)
    lease_expires_at = models.DateTimeField()
    draft = models.JSONField(default=dict, blank=True)
    submission = models.JSONField(null=True, blank=True, help_text="the accepted submit body (idempotency)")
    skip_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Quality control (docs/quality.md): a gold item handed out for a qualification or as a control
    # item (nothing in its payload tells it apart), the submission a review assignment reviews,
    # and where a submission stands with review.
    purpose = models.CharField(max_length=16, choices=Purpose.choices, default=Purpose.WORK)
    gold = models.ForeignKey("GoldItem", null=True, blank=True, on_delete=models.PROTECT, related_name="assignments")
    attempt = models.PositiveSmallIntegerField(default=0, help_text="the qualification attempt it belongs to")
    reviewed = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="reviews")
    review_state = models.CharField(max_length=12, choices=ReviewState.choices, blank=True, default="")
    review_double = models.BooleanField(
        default=False, help_text="reviewed by a second reviewer too (reviewers' agreement, review_double_rate)"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(stage="answers") & Q(question__isnull=False))
                | (~Q(stage="answers") & Q(question__isnull=True)),
                name="assignment_question_iff_answers",
            ),
            models.CheckConstraint(
                condition=(Q(purpose="work") & Q(gold__isnull=True)) | (~Q(purpose="work") & Q(gold__isnull=False)),
                name="assignment_gold_iff_not_work",
            ),
            models.CheckConstraint(
                condition=(Q(stage="review") & Q(reviewed__isnull=False))
                | (~Q(stage="review") & Q(reviewed__isnull=True)),
                name="assignment_reviewed_iff_review",
            ),
            # One reviewer at a time per submission. One standing review per submission is
            # ``Review.reviewed`` (one-to-one): a withdrawn review lets go of it, so the submission
            # can be reviewed again while the withdrawn reviewer's assignment stays submitted. A gold
            # review (a control item whose unit is a reviewed submission) is any number of
            # reviewers' at once.
            models.UniqueConstraint(
                fields=["reviewed"],
                condition=Q(status="leased", stage="review", purpose="work"),
                name="assignment_one_review",
            ),
            # A gold item at most once per annotator.
            models.UniqueConstraint(
                fields=["gold", "annotator"],
                condition=Q(gold__isnull=False, status__in=["leased", "submitted", "skipped"]),
                name="assignment_gold_once",
            ),
            # One writer at a time, and exactly one accepted writer, per screen and writing stage.
            models.UniqueConstraint(
                fields=["screen", "stage"],
                condition=Q(status="leased", stage__in=SCREEN_WRITING_STAGES, purpose="work"),
                name="assignment_one_lease_per_writing_stage",
            ),
            models.UniqueConstraint(
                fields=["screen", "stage"],
                condition=Q(status="submitted", stage__in=SCREEN_WRITING_STAGES, purpose="work"),
                name="assignment_one_submission_per_writing_stage",
            ),
            # The two question passes of a screen have two different writers.
            models.UniqueConstraint(
                fields=["screen", "annotator"],
                condition=Q(
                    status__in=["leased", "submitted"], stage__in=["questions-1", "questions-2"], purpose="work"
                ),
                name="assignment_distinct_question_writers",
            ),
            # One pre-filter judgment per annotator and screen.
            models.UniqueConstraint(
                fields=["screen", "annotator"],
                condition=Q(status__in=["leased", "submitted"], stage="prefilter", purpose="work"),
                name="assignment_one_prefilter_per_annotator",
            ),
            # Never twice by one annotator.
            models.UniqueConstraint(
                fields=["question", "annotator"],
                condition=Q(status__in=["leased", "submitted"], stage="answers", purpose="work"),
                name="assignment_one_answer_per_annotator",
            ),
            models.CheckConstraint(
                condition=~Q(status="submitted") | Q(submitted_at__isnull=False),
                name="assignment_submitted_has_time",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "stage", "status"], name="assignment_queue"),
            models.Index(fields=["annotator", "stage", "status"], name="assignment_annotator"),
            # The caller's open lease of a stage (pipeline.engine.services._held): as many rows as leases
            # are held, read by every claim whatever the statistics (its predicate is written inline).
            models.Index(
                fields=["annotator", "stage", "project"], condition=Q(status="leased"), name="assignment_open"
            ),
            models.Index(fields=["status", "lease_expires_at"], name="assignment_lease_expiry"),
            # The review queue: a project's submissions waiting for review.
            models.Index(fields=["project", "id"], condition=Q(review_state="sampled"), name="assignment_review_queue"),
            # the newest submitted real work first (the gold page's promotable submissions): a walk, not a sort
            models.Index(
                "project",
                models.F("submitted_at").desc(),
                models.F("id").desc(),
                condition=Q(status="submitted", purpose="work"),
                name="assignment_submitted_newest",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.stage} #{self.pk} ({self.status})"


class PrefilterJudgment(models.Model):
    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="judgment")
    screen = models.ForeignKey(Screen, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    non_english_app = models.BooleanField()
    vh_out_of_sync = models.BooleanField()
    note = models.TextField(blank=True)
    # Quality control took it back (a quality reason code of ``pipeline.decisions.decide``; blank: it
    # counts). A withdrawn judgment stays for the record and counts nowhere: not in its screen's
    # decision, not in its app's language votes (pipeline.stages.prefilter).
    withdrawn_reason = models.CharField(max_length=32, blank=True)
    # The quality decision that withdrew it (a lead who overturns that decision brings it back).
    withdrawn_by = models.ForeignKey("QualityEvent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["screen", "annotator"], name="judgment_once_per_annotator"),
        ]


class QuestionSource(models.TextChoices):
    PASS_1 = "questions-1", "Pass 1"
    PASS_2 = "questions-2", "Pass 2"
    NOT_ANSWERABLE = "not-answerable", "Not-answerable stage"
    IMPORTED = "imported", "Imported release"


class QuestionState(models.TextChoices):
    DRAFTING = "drafting", "Waiting for the screen's question passes"
    ANSWERING = "answering", "Collecting answers"
    ANSWERED = "answered", "All answers in"
    KEPT = "kept", "Kept by post-processing"
    DROPPED = "dropped", "Dropped by post-processing"


class Question(models.Model):
    screen = models.ForeignKey(Screen, on_delete=models.CASCADE, related_name="questions")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions"
    )
    origin = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions_written"
    )
    source = models.CharField(max_length=16, choices=QuestionSource.choices)
    position = models.PositiveSmallIntegerField(help_text="order of the question on its screen")
    text = models.TextField(help_text="as written")
    final_text = models.TextField(blank=True, help_text="after post-processing")
    state = models.CharField(max_length=12, choices=QuestionState.choices, default=QuestionState.DRAFTING)
    answers_needed = models.PositiveSmallIntegerField(default=0)
    answers_done = models.PositiveSmallIntegerField(default=0)
    drop_reason = models.CharField(max_length=255, blank=True)
    # The state a question left when its app's non-English decision or quality control dropped it
    # (where it returns when that is undone).
    dropped_from = models.CharField(max_length=12, choices=QuestionState.choices, blank=True)
    # The quality decision (a pause, a failed qualification by review) that dropped it, if one did.
    withdrawn_by = models.ForeignKey("QualityEvent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Pass 2's writer may flag a pass-1 question with a writing rule it breaks (a code of the
    # questions stage's ``review_reasons``): feedback that counts in the pass-1 writer's quality.
    flag_reason = models.CharField(max_length=32, blank=True, help_text="pass 2's flag: the writing rule broken")
    flagged_by = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions_flagged"
    )
    agreement = models.CharField(max_length=16, blank=True, help_text="all / two / none (validation, test)")
    short_answers = models.JSONField(default=list, blank=True, help_text="acceptable short answers")
    short_answers_source = models.CharField(
        max_length=16,
        blank=True,
        choices=[("rules", "rules"), ("llm", "llm"), ("assist", "assist"), ("lead", "lead"), ("imported", "imported")],
    )
    short_answers_reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    queue_key = models.IntegerField(default=queue_key_new, help_text="random place in its queue")

    class Meta:
        ordering = ["screen", "position"]
        constraints = [
            models.UniqueConstraint(fields=["screen", "position"], name="question_unique_position"),
            models.CheckConstraint(condition=Q(answers_done__lte=F("answers_needed")), name="question_answer_cap"),
            models.CheckConstraint(condition=~Q(text=""), name="question_text_not_empty"),
            models.CheckConstraint(
                condition=~Q(state="dropped") | ~Q(drop_reason=""), name="question_dropped_has_reason"
            ),
        ]
        # The answers queue walks the answering questions from a random key (an index range scan
        # of the answering questions only: finished ones are elsewhere in the index). A question
        # has no project column: other projects' answering questions share the range (the claim
        # joins the screen to keep its project's).
        indexes = [models.Index(fields=["state", "queue_key", "id"], name="question_queue")]

    def __str__(self) -> str:
        return self.text


class Verdict(models.TextChoices):
    ANSWERED = "answered"
    INVALID = "invalid"
    NOT_ANSWERABLE = "not_answerable"


class SuggestionUse(models.TextChoices):
    """What became of the model's suggestion in an answer (docs/assist.md)."""

    ACCEPTED = "accepted", "Accepted unchanged"
    EDITED = "edited", "Shown, and changed"
    NONE = "none", "None shown"


class Answer(models.Model):
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="answer"
    )
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="answers"
    )
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    question_text = models.TextField(help_text="the question as fixed by the answerer")
    full_answer = models.TextField(blank=True)
    kept = models.BooleanField(default=True)
    suggestion_use = models.CharField(
        max_length=8,
        choices=SuggestionUse.choices,
        default=SuggestionUse.NONE,
        help_text="the model's suggestion: accepted unchanged, edited, or none shown (docs/assist.md)",
    )
    drop_reason = models.CharField(max_length=255, blank=True)
    # The quality decision (a pause) that withdrew it, if one did.
    withdrawn_by = models.ForeignKey("QualityEvent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question", "created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["question", "annotator"],
                condition=Q(annotator__isnull=False),
                name="answer_once_per_annotator",
            ),
            models.CheckConstraint(condition=Q(kept=True) | ~Q(drop_reason=""), name="answer_dropped_has_reason"),
        ]


class AnswerElement(models.Model):
    """One ordered element of an answer: a VH candidate or a drawn box, in screenshot pixels."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="elements")
    position = models.PositiveSmallIntegerField()
    vh_index = models.IntegerField(null=True, blank=True, help_text="null for a drawn box (-1 in the release)")
    left = models.IntegerField()
    top = models.IntegerField()
    right = models.IntegerField()
    bottom = models.IntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["answer", "position"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "position"], name="element_unique_position"),
            models.CheckConstraint(
                condition=Q(left__gte=0) & Q(top__gte=0) & Q(right__gt=F("left")) & Q(bottom__gt=F("top")),
                name="element_positive_area",
            ),
            models.CheckConstraint(condition=~Q(text=""), name="element_text_not_empty"),
        ]

    @property
    def bounds(self) -> list[int]:
        return [self.left, self.top, self.right, self.bottom]
