"""Model assistance (docs/assist.md): a backend's suggestions, computed ahead and cached; what
annotators did with them.

``Suggestion``: one call's outcome per unit (a question in ``answers``; a screen in stages per
screen), refreshed by the suggestions job (``AssistJob``, ``pipeline.assist.jobs``). ``calls`` and
``failures`` count every call made for the unit, so the lead's error rate is their sums.
``AssistUse``: per submission of the answers stage (real work and control items alike) whether a
suggestion was shown and accepted unchanged, and, on a control item, whether the suggestion was
wrong and the annotator right: the quality rule about rubber-stamping reads these rows.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .jobs import Job
from .projects import Project
from .screens import Screen
from .work import Assignment, Purpose, Question, Stage, SuggestionUse


class SuggestionStatus(models.TextChoices):
    OK = "ok", "Suggested"
    FAILED = "failed", "The backend failed"


class Suggestion(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="suggestions")
    stage = models.CharField(max_length=16, choices=Stage.choices)
    screen = models.ForeignKey(Screen, on_delete=models.CASCADE, related_name="+")
    question = models.ForeignKey(Question, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=8, choices=SuggestionStatus.choices)
    # The backend's answer as validated (``pipeline.assist.contract``): ``elements`` ranked with
    # scores, ``judgments``, ``short_answers``; empty when it failed.
    result = models.JSONField(default=dict, blank=True)
    model_version = models.CharField(max_length=100, blank=True)
    error = models.TextField(blank=True, help_text="why the last call failed")
    calls = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0, help_text="of the last call")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["stage", "question"], condition=Q(question__isnull=False), name="suggestion_unique_question"
            ),
            models.UniqueConstraint(
                fields=["stage", "screen"], condition=Q(question__isnull=True), name="suggestion_unique_screen"
            ),
            models.CheckConstraint(condition=Q(failures__lte=models.F("calls")), name="suggestion_failures_le_calls"),
        ]
        indexes = [models.Index(fields=["project", "stage"], name="suggestion_project_stage")]


class AssistJob(Job):
    """Suggestions computed ahead for the next items of a stage's queue (``pipeline.assist.jobs``)."""

    kind = "suggestions"

    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.ANSWERS)

    class Meta(Job.Meta):
        pass


class AssistUse(models.Model):
    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="assist_use")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    stage = models.CharField(max_length=16, choices=Stage.choices)
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    use = models.CharField(max_length=8, choices=SuggestionUse.choices)
    # Control items only: whether the suggestion disagreed with the gold answer, and whether the
    # annotator's submission agreed with it (``None``: real work, unknown).
    suggestion_wrong = models.BooleanField(null=True, blank=True)
    correct = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["project", "stage", "user"], name="assist_use_who")]
