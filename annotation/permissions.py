"""Who may see and do what. Every view names one of these.

* members of a project (any role) may read its screens;
* leads of a project (and site admins) may manage it;
* everybody else gets 404 for a project's objects, so that its existence does not leak.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from annotation.exceptions import NotFoundError, PermissionDeniedError
from annotation.models import Membership, Project, Role


def project_get_for_member(*, user: Any, slug: str) -> Project:
    """The project if ``user`` is a member or a site admin, else ``NotFoundError``."""
    if not getattr(user, "is_authenticated", False):
        raise NotFoundError("Project not found.")
    qs = Project.objects.filter(slug=slug)
    if not user.is_superuser:
        qs = qs.filter(memberships__user=user)
    project = qs.first()
    if project is None:
        raise NotFoundError("Project not found.")
    return project


def project_get_for_lead(*, user: Any, slug: str) -> Project:
    """The project if ``user`` leads it (or is a site admin).

    Non-members get ``NotFoundError``; annotators of the project get ``PermissionDeniedError``.
    """
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise NotFoundError("Project not found.")
    project_require_lead(user=user, project=project)
    return project


def project_require_lead(*, user: Any, project: Project) -> None:
    """Check, in one query, that ``user`` leads an already loaded ``project`` (or is a site admin).

    Non-members get ``NotFoundError``; annotators of the project get ``PermissionDeniedError``.
    """
    if not getattr(user, "is_authenticated", False):
        raise NotFoundError("Project not found.")
    if user.is_superuser:
        return
    role = Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    if role is None:
        raise NotFoundError("Project not found.")
    if role != Role.LEAD:
        raise PermissionDeniedError("Only the project's leads may do this.")


def user_is_lead(*, user: Any, project: Project) -> bool:
    if getattr(user, "is_superuser", False):
        return True
    return Membership.objects.filter(project=project, user=user, role=Role.LEAD).exists()


class IsAuthenticated(BasePermission):
    """Logged in (session or token). Object checks happen in the selectors above."""

    def has_permission(self, request: Any, view: Any) -> bool:
        return bool(request.user and request.user.is_authenticated)
