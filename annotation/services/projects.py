"""Projects: created by site admins, their settings changed by their leads (the lead's settings
page, the API and the Django admin edit the same fields through the same checks)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation.exceptions import ApplicationError, NotFoundError, PermissionDeniedError
from annotation.lock_objects import project_lock
from annotation.models import AgreementRule, Project
from annotation.models.projects import SETTINGS

# The settings a lead edits, grouped as the settings page shows them: each declared once, with its
# kind, range, default and help (``annotation.models.projects.SETTINGS``).
PROJECT_SETTINGS_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = SETTINGS.groups()
PROJECT_SETTINGS: tuple[str, ...] = SETTINGS.names
PROJECT_CREATE_FIELDS: tuple[str, ...] = ("slug", "name", "description", "split_seed")
# Fields of a project that are not settings a lead changes, and why.
NOT_SETTINGS: dict[str, str] = {
    "slug": "The project's address (slug) is fixed when the project is created.",
    "split_seed": "The split seed is fixed when the project is created: it decided which screens went to which split.",
    "guidelines": "The guidelines are edited on their own page (/projects/<slug>/guidelines/edit/).",
}


def setting_refusal(name: str) -> str:
    """Why ``name`` cannot be changed as a setting (it is not one of ``PROJECT_SETTINGS``)."""
    return NOT_SETTINGS.get(name, f"{name!r} is not a setting of a project.")


def _validated(project: Project, *, exclude: list[str] | None = None) -> None:
    """The model's checks (each setting's declared range or choices, ``Project.clean`` across
    settings, the remaining constraints) as one ``ApplicationError`` naming the first field at fault."""
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
    """Change some of the project's settings (``PROJECT_SETTINGS``): each within its declared range,
    and the splits still adding up to 100. Returns the project as stored.

    ``ApplicationError`` naming the field for anything else (then nothing is written), including a
    name that is not a setting. Validate, lock, write: the checks run on the row as it is now,
    under ``project_lock`` (a PATCH of one split is checked against the other two a concurrent
    change just wrote, not against the caller's copy), and only the given columns are written, so
    a concurrent change of other settings is kept.
    """
    unknown = sorted(set(fields) - set(PROJECT_SETTINGS))
    if unknown:
        raise ApplicationError(setting_refusal(unknown[0]), field=unknown[0])
    with transaction.atomic():
        current = project_lock(project_id=project.pk)
        for name, value in fields.items():
            setattr(current, name, value)
        _validated(current, exclude=["slug"])
        if fields:
            current.save(update_fields=list(fields))
    return current


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
