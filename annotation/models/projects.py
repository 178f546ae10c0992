"""Projects, their members and the apps their screens come from."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class AgreementRule(models.TextChoices):
    """When two answers of one question agree (docs/postprocessing.md, pipeline/release/agreement.py)."""

    # A shared element is enough; a not-answerable vote agrees with an answer.
    RELEASE = "release", "As the ScreenQA release (calibrated)"
    # The same elements (any segmentation); a verdict agrees only with the same verdict.
    STRICT = "strict", "Strict: the same elements"


class PausedWork(models.TextChoices):
    REQUEUE = "requeue", "Withdraw their answers and ask other annotators"
    EXCLUDE = "exclude", "Withdraw their answers"
    KEEP = "keep", "Keep their answers"


class Project(models.Model):
    """A dataset under construction, with its pipeline settings.

    Defaults are the ScreenQA paper's (docs/pipeline.md): question caps 5 and 3,
    1 answer per train question and 3 per validation/test question, an 80/10/10
    split, 90% qualification, 95% monitoring and a 10% not-answerable target.
    """

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    # VH device space of the imported screens (RICO: 1440x2560).
    device_width = models.PositiveIntegerField(default=1440)
    device_height = models.PositiveIntegerField(default=2560)

    prefilter_judgments = models.PositiveSmallIntegerField(default=1, help_text="judgments per screen (majority)")
    # Language is a property of the app: an app is non-English once at least this many of its
    # screens were judged non-English and they are at least this share of its judged screens.
    app_non_english_screens = models.PositiveSmallIntegerField(
        default=2, help_text="screens judged non-English that make the whole app non-English"
    )
    app_non_english_share = models.FloatField(
        default=0.5, help_text="...when they are at least this share of the app's judged screens"
    )
    questions_pass1_cap = models.PositiveSmallIntegerField(default=5)
    questions_pass2_cap = models.PositiveSmallIntegerField(default=3)
    answers_train = models.PositiveSmallIntegerField(default=1)
    answers_validation = models.PositiveSmallIntegerField(default=3)
    answers_test = models.PositiveSmallIntegerField(default=3)
    split_train = models.PositiveSmallIntegerField(default=80, help_text="percent")
    split_validation = models.PositiveSmallIntegerField(default=10, help_text="percent")
    split_test = models.PositiveSmallIntegerField(default=10, help_text="percent")
    split_seed = models.CharField(max_length=64, default="screenqa")
    qualification_threshold = models.FloatField(default=0.90)
    monitoring_threshold = models.FloatField(default=0.95)
    not_answerable_target = models.FloatField(default=0.10)
    lease_minutes = models.PositiveSmallIntegerField(default=30)
    # Agreement between the answers of one question (docs/postprocessing.md).
    agreement_rule = models.CharField(
        max_length=16,
        choices=AgreementRule.choices,
        default=AgreementRule.RELEASE,
        help_text="when two answers of a question agree; the default is calibrated on the public release",
    )
    agreement_use_boxes = models.BooleanField(default=False)
    agreement_iou_threshold = models.FloatField(default=0.5)

    # Quality control (docs/quality.md). Qualification: a set of gold items before real work in a
    # stage that has gold; writing stages qualify by review of a writer's first question sets.
    qualification_items = models.PositiveSmallIntegerField(default=10, help_text="gold items per qualification set")
    qualification_attempts = models.PositiveSmallIntegerField(default=3, help_text="attempts per stage")
    qualification_cooldown_hours = models.PositiveSmallIntegerField(default=24, help_text="before a retry")
    qualification_review_sets = models.PositiveSmallIntegerField(
        default=5, help_text="writing stages: a writer's first submissions, all reviewed, that decide qualification"
    )
    # Monitoring: control items mixed into the queue, and the rules that pause an annotator.
    control_rate = models.FloatField(default=0.05, help_text="share of leases that are control items")
    control_rate_new = models.FloatField(default=0.20, help_text="the share for an annotator's first items")
    control_new_items = models.PositiveSmallIntegerField(default=50, help_text="how many items count as first")
    monitoring_window = models.PositiveSmallIntegerField(default=20, help_text="control items in the rolling accuracy")
    monitoring_min_items = models.PositiveSmallIntegerField(
        default=5, help_text="control items before the rolling accuracy can pause"
    )
    fast_response_seconds = models.FloatField(default=2.0, help_text="a submit faster than this is fast; 0: off")
    fast_response_count = models.PositiveSmallIntegerField(default=3, help_text="fast submits that pause...")
    fast_response_window = models.PositiveSmallIntegerField(default=10, help_text="...among the last this many")
    skips_in_a_row = models.PositiveSmallIntegerField(default=5, help_text="skips in a row that pause; 0: off")
    review_rate = models.FloatField(default=0.10, help_text="share of each annotator's submissions sampled for review")
    paused_work = models.CharField(
        max_length=16,
        choices=PausedWork.choices,
        default=PausedWork.REQUEUE,
        help_text="what happens to answers of an annotator a quality rule paused",
    )
    # The annotators' guidelines (Markdown, docs/leads.md); blank: the papers' rules
    # (annotation/services/guidelines_default.md).
    guidelines = models.TextField(blank=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(split_train__gte=0)
                & Q(split_validation__gte=0)
                & Q(split_test__gte=0)
                & Q(split_train__lte=100)
                & Q(split_validation__lte=100)
                & Q(split_test__lte=100),
                name="project_split_percent_range",
            ),
            models.CheckConstraint(
                condition=Q(split_train=100 - F("split_validation") - F("split_test")),
                name="project_split_sums_to_100",
            ),
            models.CheckConstraint(condition=Q(questions_pass1_cap__lte=20), name="project_pass1_cap_max"),
            models.CheckConstraint(condition=Q(questions_pass2_cap__lte=20), name="project_pass2_cap_max"),
            models.CheckConstraint(condition=Q(prefilter_judgments__gte=1), name="project_prefilter_judgments_min"),
            models.CheckConstraint(condition=Q(lease_minutes__gte=1), name="project_lease_minutes_min"),
            models.CheckConstraint(
                condition=Q(answers_train__gte=1) & Q(answers_validation__gte=1) & Q(answers_test__gte=1),
                name="project_answers_min",
            ),
            models.CheckConstraint(
                condition=Q(agreement_rule__in=AgreementRule.values), name="project_agreement_rule_valid"
            ),
            models.CheckConstraint(
                condition=Q(qualification_threshold__gte=0)
                & Q(qualification_threshold__lte=1)
                & Q(monitoring_threshold__gte=0)
                & Q(monitoring_threshold__lte=1)
                & Q(control_rate__gte=0)
                & Q(control_rate__lte=1)
                & Q(control_rate_new__gte=0)
                & Q(control_rate_new__lte=1)
                & Q(review_rate__gte=0)
                & Q(review_rate__lte=1)
                & Q(fast_response_seconds__gte=0),
                name="project_quality_shares",
            ),
            models.CheckConstraint(
                condition=Q(qualification_items__gte=1) & Q(monitoring_window__gte=1),
                name="project_quality_sizes",
            ),
            models.CheckConstraint(condition=Q(paused_work__in=PausedWork.values), name="project_paused_work_valid"),
        ]

    def __str__(self) -> str:
        return self.slug

    def answers_needed(self, split: str) -> int:
        return {"train": self.answers_train, "validation": self.answers_validation, "test": self.answers_test}[split]


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    REVIEWER = "reviewer", "Reviewer"
    LEAD = "lead", "Lead"


class Membership(models.Model):
    """A user's role in one project. Site admins (``is_superuser``) need none."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    in_answer_pool = models.BooleanField(default=True, help_text="may work on the answers stage")
    created_at = models.DateTimeField(auto_now_add=True)
    # When the member first read the guidelines (they are shown once, unasked).
    guidelines_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"


class Invitation(models.Model):
    """A link a lead sends to a person: opened before ``expires_at``, it joins them to the project (once),
    either with a new personal account they create there (username and password of their choice) or with
    the personal account they are logged in with. Self-registration stays off: nobody gets an account
    without one.

    An invitation with a ``username`` is for that account only: it waits on that person's home page, and
    nobody else may use it. Creating one says nothing about whether the account exists.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=64, unique=True)
    email = models.EmailField(blank=True, help_text="who it is for (a note for the lead; not checked)")
    username = models.CharField(
        max_length=150, blank=True, help_text="for this existing account only; blank: anybody with the link"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    in_answer_pool = models.BooleanField(default=False)
    declined_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(role__in=Role.values), name="invitation_role_valid"),
        ]

    def __str__(self) -> str:
        return f"invitation to {self.project} ({self.role})"


class App(models.Model):
    """An Android app (package name) whose screens are in the project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="apps")
    package = models.CharField(max_length=255)
    # "Non-English app" is a property of the app: decided by the project's rule over the judgments
    # of its screens, or by a lead (``language_set_by``), whose word the rule never overrides.
    non_english = models.BooleanField(default=False)
    language_set_by = models.CharField(
        max_length=8, blank=True, choices=[("", "not decided"), ("rule", "the project's rule"), ("lead", "a lead")]
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "package"], name="app_unique_package")]

    def __str__(self) -> str:
        return self.package
