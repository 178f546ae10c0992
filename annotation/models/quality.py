"""Quality control: gold items, each annotator's standing per stage, the results of gold items,
reviews, and the record of every quality decision (docs/quality.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .projects import Project
from .screens import Screen
from .work import Assignment, Purpose, Question, Stage


class StandingStatus(models.TextChoices):
    QUALIFYING = "qualifying", "Qualifying"
    ACTIVE = "active", "Active"
    PAUSED = "paused", "Paused"
    NOT_QUALIFIED = "not_qualified", "Not qualified"


class Standing(models.Model):
    """An annotator's standing in one stage of a project. No row: never worked on it (a stage
    with gold starts with a qualification, one without starts active)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="standings")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="standings")
    stage = models.CharField(max_length=16, choices=Stage.choices)
    status = models.CharField(max_length=16, choices=StandingStatus.choices, default=StandingStatus.QUALIFYING)
    reason = models.TextField(blank=True, help_text="why the status is what it is, in the annotator's words")
    attempt = models.PositiveSmallIntegerField(default=0, help_text="qualification attempts started")
    attempt_started_at = models.DateTimeField(null=True, blank=True)
    items_done = models.PositiveIntegerField(default=0, help_text="real submissions in the stage")
    controls_done = models.PositiveIntegerField(default=0, help_text="control items submitted or skipped")
    evidence = models.FloatField(
        default=0.0, help_text="the sequential test's evidence that the accuracy is below the bar (0: none)"
    )
    evidence_clear_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when the evidence was last 0 (after a control item, or set so): while it is above 0, the "
        "sequential test's estimate of when the run of wrong control items began",
    )
    qualification_owed = models.BooleanField(
        default=False,
        help_text="let in without a qualification set (no gold item was free): one is served once enough gold "
        "is open to them, and failing it withdraws their work",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user", "stage"], name="standing_unique"),
            models.CheckConstraint(condition=Q(status__in=StandingStatus.values), name="standing_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project}/{self.stage}: {self.status}"


class GoldSource(models.TextChoices):
    PROMOTED = "promoted", "Promoted from an accepted submission"
    IMPORTED = "imported", "Imported from a public-format release"
    MANUAL = "manual", "Written by a lead"


class GoldItem(models.Model):
    """A unit of a stage with its known right answer (a control item).

    ``answer`` has the shape of the stage's normalised submission (pre-filtering: the two
    judgments; answers: the verdict, the ordered elements with boxes, the question as fixed).
    Gold items are served for qualification and monitoring and never enter the release.

    A gold review (stage ``review``) is a reviewed submission with its known verdict: ``origin`` is
    that submission (the unit a review lease names), ``answer`` the review's body; one per submission."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_items")
    stage = models.CharField(max_length=16, choices=Stage.choices)
    screen = models.ForeignKey(Screen, on_delete=models.CASCADE, related_name="gold_items")
    question = models.ForeignKey(Question, null=True, blank=True, on_delete=models.CASCADE, related_name="gold_items")
    answer = models.JSONField()
    source = models.CharField(max_length=16, choices=GoldSource.choices, default=GoldSource.MANUAL)
    origin = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    active = models.BooleanField(default=True)
    # How many times it was served (every lease of it, whoever and whatever became of it): each one
    # shows it to somebody who may tell others. Past ``Project.gold_exposures_max`` it is retired.
    exposures = models.PositiveIntegerField(default=0)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["stage", "pk"]
        # The gold page and its API list a project's items by stage then id, a page at a time: walked in
        # this order, not sorted (at full size the sort of every item spilled to disk: 50 of the page's ms)
        indexes = [models.Index(fields=["project", "stage", "id"], name="gold_list")]
        constraints = [
            models.UniqueConstraint(
                fields=["stage", "screen"],
                condition=Q(question__isnull=True) & ~Q(stage="review"),
                name="gold_unique_screen",
            ),
            models.UniqueConstraint(fields=["origin"], condition=Q(stage="review"), name="gold_unique_review"),
            models.UniqueConstraint(
                fields=["stage", "question"], condition=Q(question__isnull=False), name="gold_unique_question"
            ),
        ]

    def __str__(self) -> str:
        return f"gold {self.stage} #{self.pk}"


class ControlOutcome(models.TextChoices):
    """How a gold item's lease ended: scored on its submission, or left (which counts as wrong)."""

    SUBMITTED = "submitted", "submitted"
    SKIPPED = "skipped", "skipped"
    RELEASED = "released", "given back"
    EXPIRED = "expired", "left to expire"


class ControlResult(models.Model):
    """How one submission on a gold item scored (a skipped, released or expired one: wrong), with
    what the annotator sees as feedback."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="control_result")
    gold = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="results")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="control_results")
    stage = models.CharField(max_length=16, choices=Stage.choices)
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    attempt = models.PositiveSmallIntegerField(default=0)
    correct = models.BooleanField()
    outcome = models.CharField(max_length=12, choices=ControlOutcome.choices, default=ControlOutcome.SUBMITTED)
    feedback = models.JSONField(default=dict, help_text="{'given', 'gold', 'why'}")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["project", "user", "stage", "purpose", "id"], name="control_result_recent")]


class ReviewVerdict(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"


class Review(models.Model):
    """A reviewer's verdict on one submission (the ``reviewed`` assignment).

    A review withdrawn by quality control (its reviewer was paused) lets go of the submission
    (``reviewed`` empty, ``withdrawn_from`` names it), so the submission can be reviewed again;
    the row stays for the record.

    A second review (a submission sampled for double review, ``Assignment.review_double``) decides
    nothing: ``reviewed`` is empty and ``second_of`` names the submission; it counts in the reviewers'
    agreement only. Withdrawn, it keeps ``second_of``."""

    reviewed = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="review_of"
    )
    withdrawn_from = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="withdrawn_reviews"
    )
    second_of = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="second_reviews"
    )
    withdrawn_reason = models.CharField(max_length=32, blank=True)
    withdrawn_by = models.ForeignKey("QualityEvent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="review_given"
    )
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    verdict = models.CharField(max_length=12, choices=ReviewVerdict.choices)
    reason = models.CharField(max_length=64, blank=True, help_text="a rule of the reviewed stage (rejections)")
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(verdict="accepted") | ~Q(reason=""), name="review_rejection_has_reason"),
            models.CheckConstraint(
                condition=(
                    Q(reviewed__isnull=False)
                    & Q(second_of__isnull=True)
                    & Q(withdrawn_from__isnull=True)
                    & Q(withdrawn_reason="")
                )
                | (
                    Q(reviewed__isnull=True)
                    & Q(second_of__isnull=False)
                    & Q(withdrawn_from__isnull=True)
                    & Q(withdrawn_reason="")
                )
                | (Q(reviewed__isnull=True) & Q(withdrawn_from__isnull=False) & ~Q(withdrawn_reason="")),
                name="review_standing_or_withdrawn",
            ),
            # One standing second review per submission.
            models.UniqueConstraint(
                fields=["second_of"], condition=Q(withdrawn_reason=""), name="review_one_second_review"
            ),
        ]


class QualityEvent(models.Model):
    """One quality decision about an annotator in a stage: who (``actor``, none: a rule), when,
    which rule, the standing before and after, and the figures the rule saw."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="quality_events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quality_events")
    stage = models.CharField(max_length=16, choices=Stage.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    rule = models.CharField(max_length=32)
    status_before = models.CharField(max_length=16, blank=True)
    status_after = models.CharField(max_length=16, blank=True)
    figures = models.JSONField(default=dict)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["project", "user", "stage"], name="quality_event_who")]


class AnnotatorFigures(models.Model):
    """The lead's quality figures of one member in one stage (``stage`` blank: over every stage), as
    ``pipeline.quality.report.quality_report`` computed them at ``computed_at``: the quality page and
    its API read, sort, search and paginate these rows instead of recomputing every member's figures
    (medians over every assignment, agreement over every validation/test question) on each view.
    Refreshed by the ``quality-figures`` job (``pipeline.quality.figures``); standings are read live."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    stage = models.CharField(max_length=16, blank=True, help_text="blank: over every stage")
    username = models.CharField(max_length=150)
    role = models.CharField(max_length=16)
    status = models.CharField(max_length=16, blank=True, help_text="the worst stage standing when computed")
    status_rank = models.PositiveSmallIntegerField(default=4, help_text="paused 0 … active 3, none 4 (sorting)")
    qualification_score = models.FloatField(null=True)
    control_correct = models.PositiveIntegerField(default=0)
    control_items = models.PositiveIntegerField(default=0)
    control_accuracy = models.FloatField(null=True)
    agreement_agreed = models.PositiveIntegerField(default=0)
    agreement_answers = models.PositiveIntegerField(default=0)
    agreement = models.FloatField(null=True)
    review_agreement_agreed = models.PositiveIntegerField(default=0)
    review_agreement_compared = models.PositiveIntegerField(default=0)
    review_agreement = models.FloatField(null=True)
    reviews_accepted = models.PositiveIntegerField(default=0)
    reviews_rejected = models.PositiveIntegerField(default=0)
    questions_written = models.PositiveIntegerField(default=0)
    questions_flagged = models.PositiveIntegerField(default=0)
    questions_flagged_pass2 = models.PositiveIntegerField(default=0)
    questions_faulted = models.PositiveIntegerField(default=0)
    invalid_rate = models.FloatField(null=True)
    submitted = models.PositiveIntegerField(default=0)
    skips = models.PositiveIntegerField(default=0)
    median_seconds = models.FloatField(null=True)
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "stage", "user"], name="annotator_figures_unique"),
        ]
        # when they were computed, read on every view of the quality page: an index scan, not every row
        indexes = [models.Index(fields=["project", "computed_at"], name="annotator_figures_computed")]

    def __str__(self) -> str:
        return f"{self.username} in {self.project_id}/{self.stage or 'all'} at {self.computed_at}"


class FiguresSnapshot(models.Model):
    """A page's whole-project figures as a job last computed them (``pipeline.analytics.stored``): at
    ScreenQA size the papers' figures and the project page's counts aggregate every answer or assignment
    (seconds), so those pages read this snapshot, with the time it was computed, instead of aggregating on
    each view. ``data`` is
    the figures' objects as ``pickle`` wrote them: written only by the product's own job, from its own
    classes, and read back by the same code (a snapshot a newer release cannot read is computed again)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32, help_text="which figures: analysis, progress")
    computed_at = models.DateTimeField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "kind"], name="figures_snapshot_unique")]

    def __str__(self) -> str:
        return f"{self.kind} of {self.project_id} at {self.computed_at}"
