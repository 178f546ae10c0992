"""Screens (screenshot + view hierarchy) and their candidate elements."""

from __future__ import annotations

import secrets

from django.db import models
from django.db.models import F, Q

from .projects import App, Project


class ScreenState(models.TextChoices):
    PREFILTER = "prefilter", "Waiting for pre-filtering"
    EXCLUDED = "excluded", "Excluded by pre-filtering"
    QUESTIONS_1 = "questions-1", "Question writing, pass 1"
    QUESTIONS_2 = "questions-2", "Question writing, pass 2"
    ANSWERING = "answering", "Questions final"
    NO_QUESTIONS = "no-questions", "Closed: no questions"


class Split(models.TextChoices):
    TRAIN = "train", "train"
    VALIDATION = "validation", "validation"
    TEST = "test", "test"


# Every queued unit (a screen, a question) gets a random ``queue_key`` when it is created. A
# queue is served from a random pivot (``pipeline.engine.services``: the first free unit at or
# after a random key, wrapping around), so the order an annotator receives work in tells them
# nothing: a control item cannot be picked out by breaking a steady order (issue 20, 2b).
QUEUE_KEY_SPAN = 2**31


def queue_key_new() -> int:
    """A unit's random place in its queue, in ``[0, QUEUE_KEY_SPAN)`` (fits a 32-bit column)."""
    return secrets.randbelow(QUEUE_KEY_SPAN)


class Screen(models.Model):
    """One RICO screen. ``rico_id`` is RICO's id (``image_id`` in the release);
    trace screens get ``<app>:trace_<n>:<k>``."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="screens")
    app = models.ForeignKey(App, on_delete=models.PROTECT, related_name="screens")
    rico_id = models.CharField(max_length=255)
    activity_name = models.CharField(max_length=512, blank=True)
    image = models.FileField(upload_to="screens/", max_length=512)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    vh = models.JSONField()
    # The VH's device space this screen was imported with (the project's, or a one-off
    # ``--device-size``), turned for a landscape screen: VH bounds scale to pixels by
    # ``width / device_width``. NULL for screens imported before it was recorded (then the
    # project's, turned: ``annotation.selectors.screens.screen_device_width``).
    device_width = models.PositiveIntegerField(null=True, blank=True)
    device_height = models.PositiveIntegerField(null=True, blank=True)
    content_sha256 = models.CharField(max_length=64, help_text="hash of image and VH bytes")
    overlay = models.FileField(upload_to="overlays/", max_length=512, blank=True)
    state = models.CharField(max_length=16, choices=ScreenState.choices, default=ScreenState.PREFILTER)
    exclusion_reason = models.CharField(max_length=64, blank=True)
    # The state a screen left when its app's non-English decision excluded it: where it returns
    # if a lead declares the app English (pipeline.stages.prefilter.app_mark_non_english).
    excluded_from = models.CharField(max_length=16, choices=ScreenState.choices, blank=True)
    split = models.CharField(max_length=12, choices=Split.choices, blank=True)
    # Chosen by a lead for the not-answerable stage (pipeline.stages.not_answerable).
    not_answerable_sampled = models.BooleanField(default=False)
    imported_at = models.DateTimeField(auto_now_add=True)
    queue_key = models.IntegerField(default=queue_key_new, help_text="random place in its queue")

    class Meta:
        ordering = ["project", "rico_id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "rico_id"], name="screen_unique_rico_id"),
            models.CheckConstraint(condition=Q(width__gt=0) & Q(height__gt=0), name="screen_positive_size"),
            models.CheckConstraint(
                condition=Q(device_width__isnull=True, device_height__isnull=True)
                | Q(device_width__gt=0, device_height__gt=0),
                name="screen_device_size_pair",
            ),
            models.CheckConstraint(
                condition=~Q(state="excluded") | ~Q(exclusion_reason=""), name="screen_excluded_has_reason"
            ),
            models.CheckConstraint(condition=~Q(state="answering") | ~Q(split=""), name="screen_answering_has_split"),
        ]
        # The claims walk a project's screens of one state from a random key and stop at the
        # first free one: an index range scan over that project's waiting screens only (other
        # projects and other states are elsewhere in the index), not a sort. Not partial
        # indexes: the claims are prepared statements whose state is a parameter, and a generic
        # plan cannot prove a partial index's predicate (tests/pipeline/engine/test_claim_plan.py).
        # The same index serves the counts by state.
        indexes = [
            models.Index(fields=["project", "state", "queue_key", "id"], name="screen_queue"),
            models.Index(
                fields=["project", "not_answerable_sampled", "state", "queue_key", "id"],
                name="screen_queue_not_answerable",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.rico_id}"


class ElementType(models.TextChoices):
    TEXT = "text"
    IMAGE = "image"
    BUTTON = "button"
    CHECKBOX = "checkbox"
    WEBVIEW = "webview"
    OTHER = "other"


class Candidate(models.Model):
    """A visible VH leaf: a UI element an answerer can pick.

    Bounds are screenshot pixels ``[left, top, right, bottom)``, clipped to the image.
    ``vh_index`` is the pre-order index over every node of ``activity.root``
    (see ``annotation.vh.iter_nodes``).
    """

    screen = models.ForeignKey(Screen, on_delete=models.CASCADE, related_name="candidates")
    vh_index = models.PositiveIntegerField()
    left = models.IntegerField()
    top = models.IntegerField()
    right = models.IntegerField()
    bottom = models.IntegerField()
    class_name = models.CharField(max_length=255, blank=True)
    type = models.CharField(max_length=12, choices=ElementType.choices, default=ElementType.OTHER)
    text = models.TextField(blank=True)
    content_desc = models.TextField(blank=True)
    resource_id = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["screen", "vh_index"]
        constraints = [
            models.UniqueConstraint(fields=["screen", "vh_index"], name="candidate_unique_vh_index"),
            models.CheckConstraint(
                condition=Q(left__gte=0) & Q(top__gte=0) & Q(right__gt=F("left")) & Q(bottom__gt=F("top")),
                name="candidate_positive_area",
            ),
        ]

    @property
    def bounds(self) -> list[int]:
        return [self.left, self.top, self.right, self.bottom]

    @property
    def label(self) -> str:
        return self.text or self.content_desc
