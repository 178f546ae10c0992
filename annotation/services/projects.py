"""Projects: created by site admins, their settings changed by their leads (the lead's settings
page, the API and the Django admin edit the same fields through the same checks)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation.exceptions import ApplicationError, NotFoundError, PermissionDeniedError
from annotation.models import AgreementRule, Project

# The settings a lead edits, grouped as the settings page shows them. The slug (a project's
# address) and the split seed (it decides which screens went to which split) are set at creation.
PROJECT_SETTINGS_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Project", ("name", "description", "device_width", "device_height")),
    (
        "Splits and answers",
        ("split_train", "split_validation", "split_test", "answers_train", "answers_validation", "answers_test"),
    ),
    (
        "Stages",
        ("prefilter_judgments", "questions_pass1_cap", "questions_pass2_cap", "not_answerable_target", "lease_minutes"),
    ),
    ("Agreement", ("agreement_rule", "agreement_use_boxes", "agreement_iou_threshold")),
    (
        "Qualification",
        (
            "qualification_threshold",
            "qualification_items",
            "qualification_attempts",
            "qualification_cooldown_hours",
            "qualification_review_sets",
        ),
    ),
    (
        "Monitoring",
        (
            "monitoring_threshold",
            "control_rate",
            "control_rate_new",
            "control_new_items",
            "monitoring_window",
            "monitoring_min_items",
            "fast_response_seconds",
            "fast_response_count",
            "fast_response_window",
            "skips_in_a_row",
            "review_rate",
            "paused_work",
        ),
    ),
)
PROJECT_SETTINGS: tuple[str, ...] = tuple(name for _, names in PROJECT_SETTINGS_GROUPS for name in names)
PROJECT_CREATE_FIELDS: tuple[str, ...] = ("slug", "name", "description", "split_seed")


def _validated(project: Project, *, exclude: list[str] | None = None) -> None:
    """The model's field checks and check constraints, as one ``ApplicationError`` (first problem)."""
    try:
        project.full_clean(exclude=exclude)
    except ValidationError as exc:
        field, messages = next(iter(exc.message_dict.items()))
        raise ApplicationError(" ".join(messages), field=None if field == "__all__" else field) from exc


def project_create(*, user: Any, **fields: Any) -> Project:
    """A new project with the papers' defaults for every setting not given. Site admins only
    (``PermissionDeniedError`` for others); ``ApplicationError`` for a taken slug or a bad value."""
    if not getattr(user, "is_superuser", False):
        raise PermissionDeniedError("Only site admins create projects.")
    unknown = set(fields) - set(PROJECT_CREATE_FIELDS) - set(PROJECT_SETTINGS)
    if unknown:
        raise ApplicationError(f"Unknown settings: {', '.join(sorted(unknown))}.")
    project = Project(**fields)
    _validated(project)
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError as exc:  # two creations of one slug at the same moment
        raise ApplicationError(f"The address {project.slug!r} is taken.", field="slug") from exc
    return project


def project_settings_update(*, project: Project, **fields: Any) -> Project:
    """Change some of the project's settings (``PROJECT_SETTINGS``), after the model's checks.

    Only the given columns are written, so a concurrent change of other settings is kept.
    """
    unknown = set(fields) - set(PROJECT_SETTINGS)
    if unknown:
        raise ApplicationError(f"Unknown settings: {', '.join(sorted(unknown))}.")
    for name, value in fields.items():
        setattr(project, name, value)
    _validated(project, exclude=["slug"])
    if fields:
        project.save(update_fields=list(fields))
    return project


def project_agreement_rule_set(*, slug: str, rule: str) -> Project:
    """Set the project's agreement rule (docs/postprocessing.md); the next post-processing run decides under it.

    ``ApplicationError`` for a rule that is not one of ``AgreementRule``, ``NotFoundError`` for an
    unknown project. One ``UPDATE`` of one column: concurrent edits of other settings are kept.
    """
    if rule not in AgreementRule.values:
        raise ApplicationError(
            f"Unknown agreement rule {rule!r}: use one of {', '.join(AgreementRule.values)}.", field="agreement_rule"
        )
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise NotFoundError(f"No project {slug!r}.")
    Project.objects.filter(pk=project.pk).update(agreement_rule=rule)
    project.agreement_rule = rule
    return project
