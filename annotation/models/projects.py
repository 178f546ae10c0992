"""Projects, their members and the apps their screens come from."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import BaseConstraint, F, Q

from .declarations import Choice, Flag, Line, Number, Prose, Secret, Settings, Url, WholeNumber


class AgreementRule(models.TextChoices):
    """When two answers of one question agree (docs/postprocessing.md, pipeline/decisions/agreement.py)."""

    # A shared element is enough; a not-answerable vote agrees with an answer.
    RELEASE = "release", "As the ScreenQA release (calibrated)"
    # The same elements (any segmentation); a verdict agrees only with the same verdict.
    STRICT = "strict", "Strict: the same elements"


class ProvisionalWork(models.TextChoices):
    """Which work not yet confirmed by a passed control item after it (nor corroborated by another
    annotator) reaches the release (docs/quality.md, "Provisional work")."""

    EVIDENCE = "evidence", "Hold it when its author's control evidence is thin or against them"
    STRICT = "strict", "Hold all of it"
    OFF = "off", "Release it"


class AssistProtocol(models.TextChoices):
    """What a project's suggestion backend speaks (docs/assist.md)."""

    SCREENQA = "screenqa", "The product's contract (POST /suggest)"
    LABEL_STUDIO = "label-studio", "A Label Studio ML backend (POST /predict)"


class PausedWork(models.TextChoices):
    REQUEUE = "requeue", "Withdraw their answers and ask other annotators"
    EXCLUDE = "exclude", "Withdraw their answers"
    KEEP = "keep", "Keep their answers"


# Every setting of a project, once (annotation/models/declarations.py says what reads it): the
# ScreenQA papers' defaults (docs/pipeline.md), and the ranges the page, the API, the admin and the
# database hold them to (docs/leads.md lists them).
PROJECT = "Project"
SPLITS = "Splits and answers"
STAGES = "Stages"
AGREEMENT = "Agreement"
QUALIFICATION = "Qualification"
MONITORING = "Monitoring"
ASSIST = "Model assistance"
SETTINGS = Settings(
    "project",
    (
        Line(name="name", group=PROJECT, max_length=200, help="shown on every page of the project"),
        Prose(name="description", group=PROJECT, help="a note for the project's members"),
        # VH device space of the imported screens (RICO: 1440x2560); an import may state its own.
        WholeNumber(
            name="device_width",
            group=PROJECT,
            default=1440,
            low=1,
            high=20_000,
            column=models.PositiveIntegerField,
            help="width of the device space the screens' view hierarchies are in (RICO: 1440)",
        ),
        WholeNumber(
            name="device_height",
            group=PROJECT,
            default=2560,
            low=1,
            high=20_000,
            column=models.PositiveIntegerField,
            help="height of that device space (RICO: 2560)",
        ),
        WholeNumber(
            name="split_train",
            group=SPLITS,
            default=80,
            low=0,
            high=100,
            help="percent of the screens in the train split; the three splits add up to 100",
        ),
        WholeNumber(
            name="split_validation",
            group=SPLITS,
            default=10,
            low=0,
            high=100,
            help="percent of the screens in the validation split",
        ),
        WholeNumber(
            name="split_test",
            group=SPLITS,
            default=10,
            low=0,
            high=100,
            help="percent of the screens in the test split",
        ),
        WholeNumber(name="answers_train", group=SPLITS, default=1, low=1, high=20, help="answers per train question"),
        WholeNumber(
            name="answers_validation", group=SPLITS, default=3, low=1, high=20, help="answers per validation question"
        ),
        WholeNumber(name="answers_test", group=SPLITS, default=3, low=1, high=20, help="answers per test question"),
        WholeNumber(
            name="prefilter_judgments",
            group=STAGES,
            default=1,
            low=1,
            high=20,
            help="pre-filtering judgments per screen (their majority decides)",
        ),
        # Language is a property of the app: an app is non-English once at least this many of its
        # screens were judged non-English and they are at least this share of its judged screens.
        WholeNumber(
            name="app_non_english_screens",
            group=STAGES,
            default=2,
            low=1,
            high=1000,
            help="screens judged non-English that make the whole app non-English...",
        ),
        Number(
            name="app_non_english_share",
            group=STAGES,
            default=0.5,
            low=0,
            high=1,
            help="...when they are at least this share of the app's judged screens",
        ),
        WholeNumber(
            name="questions_pass1_cap",
            group=STAGES,
            default=5,
            low=0,
            high=20,
            help="questions the first writer of a screen may write",
        ),
        WholeNumber(
            name="questions_pass2_cap",
            group=STAGES,
            default=3,
            low=0,
            high=20,
            help="questions the second writer may add",
        ),
        Number(
            name="not_answerable_target",
            group=STAGES,
            default=0.10,
            low=0,
            high=1,
            help="share of not-answerable questions the not-answerable stage aims at",
        ),
        WholeNumber(
            name="lease_minutes",
            group=STAGES,
            default=30,
            low=1,
            high=24 * 60,
            help="minutes an annotator holds an item before it goes back to the queue (at most a day)",
        ),
        # Agreement between the answers of one question (docs/postprocessing.md).
        Choice(
            name="agreement_rule",
            group=AGREEMENT,
            choices=AgreementRule,
            default=AgreementRule.RELEASE,
            help="when two answers of a question agree; the default is calibrated on the public release",
        ),
        Flag(
            name="agreement_use_boxes",
            group=AGREEMENT,
            default=False,
            help="the agreeing elements' boxes must also overlap",
        ),
        Number(
            name="agreement_iou_threshold",
            group=AGREEMENT,
            default=0.5,
            low=0,
            high=1,
            help="boxes overlap at this intersection over union or more",
        ),
        # Quality control (docs/quality.md). Qualification: a set of gold items before real work in
        # a stage that has gold; writing stages qualify by review of a writer's first question sets.
        Number(
            name="qualification_threshold",
            group=QUALIFICATION,
            default=0.90,
            low=0,
            high=1,
            help="share right in a qualification set (writers: of their first submissions accepted) that qualifies",
        ),
        WholeNumber(
            name="qualification_items",
            group=QUALIFICATION,
            default=10,
            low=1,
            high=1000,
            help="gold items per qualification set",
        ),
        WholeNumber(
            name="qualification_extra_items",
            group=QUALIFICATION,
            default=5,
            low=0,
            high=1000,
            help="a set one right item short of the threshold goes on with this many gold items, which decide it "
            "at the same threshold (a second sample); 0: no second sample",
        ),
        WholeNumber(
            name="qualification_attempts", group=QUALIFICATION, default=3, low=1, high=100, help="attempts per stage"
        ),
        WholeNumber(
            name="qualification_cooldown_hours",
            group=QUALIFICATION,
            default=24,
            low=0,
            high=24 * 365,
            help="hours before a retry",
        ),
        WholeNumber(
            name="qualification_review_sets",
            group=QUALIFICATION,
            default=5,
            low=1,
            high=1000,
            help="writing stages: a writer's first submissions, all reviewed, that decide qualification",
        ),
        # Monitoring: control items mixed into the queue, and the rules that pause an annotator.
        Number(
            name="monitoring_threshold",
            group=MONITORING,
            default=0.95,
            low=0,
            high=1,
            help="the accuracy on control items an annotator must keep (the bar of the sequential test)",
        ),
        Number(
            name="control_rate",
            group=MONITORING,
            default=0.10,
            low=0,
            high=1,
            help="share of leases that are control items",
        ),
        Number(
            name="control_rate_new",
            group=MONITORING,
            default=0.30,
            low=0,
            high=1,
            help="the share for an annotator's first items",
        ),
        WholeNumber(
            name="control_new_items",
            group=MONITORING,
            default=50,
            low=0,
            high=10_000,
            help="how many items count as first",
        ),
        Number(
            name="monitoring_evidence",
            group=MONITORING,
            default=5.0,
            low=1,
            high=50,
            help="evidence against an annotator (the sequential test's log-likelihood ratio) that pauses them; "
            "higher: fewer false pauses, slower to stop a spammer",
        ),
        Number(
            name="control_rate_alert",
            group=MONITORING,
            default=0.5,
            low=0,
            high=1,
            help="the share while recent control items speak against an annotator, until the evidence clears",
        ),
        WholeNumber(
            name="gold_exposures_max",
            group=MONITORING,
            default=50,
            low=0,
            high=10_000,
            help="a gold item served this many times is retired (not served again): gold is shared, and each "
            "serving shows it to somebody who may pass it on; 0: never retired",
        ),
        Number(
            name="fast_response_seconds",
            group=MONITORING,
            default=2.0,
            low=0,
            high=3600,
            help="a submit faster than this many seconds is fast; 0: off",
        ),
        WholeNumber(
            name="fast_response_count", group=MONITORING, default=3, low=1, high=1000, help="fast submits that pause..."
        ),
        WholeNumber(
            name="fast_response_window",
            group=MONITORING,
            default=10,
            low=1,
            high=1000,
            help="...among the last this many",
        ),
        WholeNumber(
            name="skips_in_a_row",
            group=MONITORING,
            default=5,
            low=0,
            high=1000,
            help="skips in a row that pause; 0: off",
        ),
        Number(
            name="review_rate",
            group=MONITORING,
            default=0.10,
            low=0,
            high=1,
            help="share of each annotator's submissions sampled for review",
        ),
        Number(
            name="review_double_rate",
            group=MONITORING,
            default=0.10,
            low=0,
            high=1,
            help="share of reviewed submissions a second reviewer reviews too (reviewers' agreement)",
        ),
        Choice(
            name="paused_work",
            group=MONITORING,
            choices=PausedWork,
            default=PausedWork.REQUEUE,
            help="what happens to answers of an annotator a quality rule paused",
        ),
        Choice(
            name="provisional_work",
            group=MONITORING,
            choices=ProvisionalWork,
            default=ProvisionalWork.EVIDENCE,
            help="work after its author's last passed control item, not corroborated by another annotator: "
            "held back (and asked of others) when post-processing starts; writers' sets no review accepted: "
            "sent to review first",
        ),
        WholeNumber(
            name="provisional_min_controls",
            group=MONITORING,
            default=3,
            low=0,
            high=1000,
            help="...fewer control items passed than this in the stage (a writer: sets accepted in review) is "
            "thin evidence: none of that annotator's work is confirmed, whichever policy",
        ),
        WholeNumber(
            name="provisional_confirmations",
            group=MONITORING,
            default=1,
            low=1,
            high=10,
            help="...work counts as confirmed once this many control items were passed after it (a worker who "
            "turns bad can pass one by luck)",
        ),
        # Model assistance (docs/assist.md): a backend's suggestions in the answers workspace.
        Url(
            name="assist_url",
            group=ASSIST,
            help="the suggestion backend's address (docs/assist.md, e.g. http://127.0.0.1:8765); empty: no suggestions",
        ),
        Choice(
            name="assist_protocol",
            group=ASSIST,
            choices=AssistProtocol,
            default=AssistProtocol.SCREENQA,
            help="what the backend speaks: the product's own contract, or a Label Studio ML backend's /predict",
        ),
        Secret(
            name="assist_token",
            group=ASSIST,
            help="sent to the backend as a bearer token; write-only (leave empty on the page to keep the stored one)",
        ),
        Number(
            name="assist_timeout_seconds",
            group=ASSIST,
            default=5.0,
            low=0.1,
            high=120,
            help="how long one call to the backend may take before it counts as failed",
        ),
        WholeNumber(
            name="assist_ahead",
            group=ASSIST,
            default=50,
            low=1,
            high=1000,
            help="how many of each assisted queue's next units (questions, screens to pre-filter) have their "
            "suggestions computed ahead",
        ),
        Number(
            name="assist_hidden_share",
            group=ASSIST,
            default=0.0,
            low=0,
            high=1,
            help="share of questions and of screens to pre-filter shown without suggestions (the same ones for "
            "everybody): the crowd measured without the model",
        ),
        Number(
            name="assist_wrong_accept_threshold",
            group=ASSIST,
            default=0.5,
            low=0,
            high=1,
            help="pause an annotator who accepts more than this share of wrong suggestions on control items; 1: off",
        ),
        WholeNumber(
            name="assist_wrong_accept_min",
            group=ASSIST,
            default=4,
            low=1,
            high=1000,
            help="...once they met at least this many control items with a wrong suggestion",
        ),
        Flag(
            name="assist_short_answers",
            group=ASSIST,
            default=False,
            help="the short-answer job asks the suggestion backend for each answer's short answers (its "
            "short-answers stage); the rules where it fails",
        ),
    ),
)

_DECLARED_CONSTRAINTS = frozenset(constraint.name for constraint in SETTINGS.constraints())


def split_seed_new() -> str:
    """A new project's split seed: random, so that nobody can compute a screen's split from its RICO id
    and the project's address (the release's manifest records it, so the split stays reproducible)."""
    return secrets.token_hex(16)


class Project(models.Model):
    """A dataset under construction, with its pipeline settings (``SETTINGS``: the papers'
    defaults, e.g. question caps 5 and 3, 1 answer per train question and 3 per validation/test
    question, an 80/10/10 split, 90% qualification, 95% monitoring, a 10% not-answerable target).

    Each setting's field is built from its declaration (kind, range, default, help); its range
    is also a check constraint. ``clean`` holds the one check across settings (the splits).
    """

    slug = models.SlugField(max_length=64, unique=True)
    name = SETTINGS.line("name")
    description = SETTINGS.prose("description")
    created_at = models.DateTimeField(auto_now_add=True)

    device_width = SETTINGS.whole("device_width")
    device_height = SETTINGS.whole("device_height")

    split_train = SETTINGS.whole("split_train")
    split_validation = SETTINGS.whole("split_validation")
    split_test = SETTINGS.whole("split_test")
    # Which screens go to which split: set at creation, never changed (not a setting). Random unless
    # given: a seed anyone knows (the code's) would let an annotator compute each screen's split, so
    # spam only the train questions that nobody else answers (``split_seed_new``).
    split_seed = models.CharField(max_length=64, default=split_seed_new)
    answers_train = SETTINGS.whole("answers_train")
    answers_validation = SETTINGS.whole("answers_validation")
    answers_test = SETTINGS.whole("answers_test")

    prefilter_judgments = SETTINGS.whole("prefilter_judgments")
    app_non_english_screens = SETTINGS.whole("app_non_english_screens")
    app_non_english_share = SETTINGS.number("app_non_english_share")
    questions_pass1_cap = SETTINGS.whole("questions_pass1_cap")
    questions_pass2_cap = SETTINGS.whole("questions_pass2_cap")
    not_answerable_target = SETTINGS.number("not_answerable_target")
    lease_minutes = SETTINGS.whole("lease_minutes")

    agreement_rule = SETTINGS.choice("agreement_rule")
    agreement_use_boxes = SETTINGS.flag("agreement_use_boxes")
    agreement_iou_threshold = SETTINGS.number("agreement_iou_threshold")

    qualification_threshold = SETTINGS.number("qualification_threshold")
    qualification_items = SETTINGS.whole("qualification_items")
    qualification_extra_items = SETTINGS.whole("qualification_extra_items")
    qualification_attempts = SETTINGS.whole("qualification_attempts")
    qualification_cooldown_hours = SETTINGS.whole("qualification_cooldown_hours")
    qualification_review_sets = SETTINGS.whole("qualification_review_sets")

    monitoring_threshold = SETTINGS.number("monitoring_threshold")
    control_rate = SETTINGS.number("control_rate")
    control_rate_new = SETTINGS.number("control_rate_new")
    control_new_items = SETTINGS.whole("control_new_items")
    monitoring_evidence = SETTINGS.number("monitoring_evidence")
    control_rate_alert = SETTINGS.number("control_rate_alert")
    gold_exposures_max = SETTINGS.whole("gold_exposures_max")
    fast_response_seconds = SETTINGS.number("fast_response_seconds")
    fast_response_count = SETTINGS.whole("fast_response_count")
    fast_response_window = SETTINGS.whole("fast_response_window")
    skips_in_a_row = SETTINGS.whole("skips_in_a_row")
    review_rate = SETTINGS.number("review_rate")
    review_double_rate = SETTINGS.number("review_double_rate")
    paused_work = SETTINGS.choice("paused_work")
    provisional_work = SETTINGS.choice("provisional_work")
    provisional_min_controls = SETTINGS.whole("provisional_min_controls")
    provisional_confirmations = SETTINGS.whole("provisional_confirmations")

    assist_url = SETTINGS.url("assist_url")
    assist_token = SETTINGS.secret("assist_token")
    assist_protocol = SETTINGS.choice("assist_protocol")
    assist_timeout_seconds = SETTINGS.number("assist_timeout_seconds")
    assist_ahead = SETTINGS.whole("assist_ahead")
    assist_hidden_share = SETTINGS.number("assist_hidden_share")
    assist_wrong_accept_threshold = SETTINGS.number("assist_wrong_accept_threshold")
    assist_wrong_accept_min = SETTINGS.whole("assist_wrong_accept_min")
    assist_short_answers = SETTINGS.flag("assist_short_answers")

    # The annotators' guidelines (Markdown, docs/leads.md); blank: the papers' rules
    # (annotation/services/guidelines_default.md). Edited on their own page, not a setting.
    guidelines = models.TextField(blank=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            *SETTINGS.constraints(),
            models.CheckConstraint(
                condition=Q(split_train=100 - F("split_validation") - F("split_test")),
                name="project_split_sums_to_100",
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    def get_constraints(self) -> list[tuple[type[models.Model], Sequence[BaseConstraint]]]:
        """The constraints ``full_clean`` checks: not the declared ranges and choices, which the
        fields' validators (the same declarations) have checked already; PostgreSQL checks them on
        every write. Validating each again would ask the database once per setting, in a savepoint
        (measured: a PATCH of one setting took 111 statements, 9 without)."""
        return [
            (model, [constraint for constraint in constraints if constraint.name not in _DECLARED_CONSTRAINTS])
            for model, constraints in super().get_constraints()
        ]

    def clean(self) -> None:
        """The checks across settings (each setting's own range is its field's): the three splits
        add up to 100. A negative zero is stored as zero."""
        for setting in SETTINGS:
            value = getattr(self, setting.name)
            if isinstance(value, float) and value == 0:
                setattr(self, setting.name, 0.0)
        splits = (self.split_train, self.split_validation, self.split_test)
        if all(isinstance(value, int) for value in splits) and sum(splits) != 100:
            shown = " + ".join(f"{value}%" for value in splits)
            message = f"The three splits add up to {sum(splits)}% ({shown}), not 100%."
            raise ValidationError({"split_train": message})

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
