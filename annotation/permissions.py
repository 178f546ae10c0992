"""Who may see and do what: every access check of the product, here and only here.

* members of a project (any role) may read it and work on its stages;
* the answers stage needs the answer pool;
* an assignment belongs to its annotator alone, while they are still a member;
* leads of a project (and site admins) may manage it;
* everybody else gets 404 for a project's objects, so that its existence does not leak;
  a member who may not do something gets 403.
"""

from __future__ import annotations

from typing import Any, cast

from django.db.models import Exists, OuterRef, QuerySet
from rest_framework.permissions import BasePermission

from annotation.db import compiled
from annotation.exceptions import NotFoundError, PermissionDeniedError
from annotation.models import App, Assignment, Membership, Project, Question, Role, Screen


def member_get(*, project: Project, user: Any) -> Membership | None:
    """The caller's membership of ``project``; non-members get ``NotFoundError`` (site admins
    need none: ``None``)."""
    if not getattr(user, "is_authenticated", False):
        raise NotFoundError("Project not found.")
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None and not user.is_superuser:
        raise NotFoundError("Project not found.")
    return membership


def require_answer_pool(*, user: Any, membership: Membership | None) -> None:
    """Only members of the answer pool (and site admins) answer questions: 403 for the others."""
    if getattr(user, "is_superuser", False):
        return
    if membership is None or not membership.in_answer_pool:
        raise PermissionDeniedError("Only members of the answer pool may answer questions.")


def require_reviewer(*, user: Any, membership: Membership | None) -> None:
    """Reviewers and leads (and site admins) review: 403 for the others."""
    if getattr(user, "is_superuser", False):
        return
    if membership is None or membership.role not in (Role.REVIEWER, Role.LEAD):
        raise PermissionDeniedError("Only the project's reviewers and leads review work.")


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


# What the caller's assignment is loaded with (one statement): the assignment, its project,
# screen (without the view hierarchy, which loads on access), app and question.
_ASSIGNMENT_LOADS = (
    compiled.Load(Assignment),
    compiled.Load(Project, "project__"),
    compiled.Load(Screen, "screen__", exclude=("vh",)),
    compiled.Load(App, "screen__app__"),
    compiled.Load(Question, "question__"),
)


def _assignment_build(values: dict[str, Any]) -> QuerySet[Any]:
    member = Membership.objects.filter(project_id=OuterRef("project_id"), user_id=OuterRef("annotator_id"))
    rows = Assignment.objects.filter(pk=values["assignment_id"], annotator_id=values["user_id"])
    paths = [path for load in _ASSIGNMENT_LOADS for path in load.paths]
    return rows.annotate(member=Exists(member)).values_list("member", "project__slug", *paths)


def assignment_get_for_annotator(*, assignment_id: Any, user: Any, slug: str | None = None) -> Assignment:
    """The caller's own assignment (in project ``slug`` when given), while they are a member of
    its project (site admins: always); anybody else's, a removed member's, or none is
    ``NotFoundError``: annotators never learn whether another annotator's work exists.

    Loaded with its project, screen (view hierarchy on access), app and question in one
    statement, compiled once: every submit, draft save and reload starts here.
    """
    user_id = getattr(user, "pk", None)
    row = None
    if user_id is not None and type(assignment_id) is int:
        row = compiled.fetch_one(
            key="assignment-for-annotator",
            build=_assignment_build,
            values={"assignment_id": assignment_id, "user_id": user_id},
        )
    if row is None or (not row[0] and not user.is_superuser) or (slug is not None and row[1] != slug):
        raise NotFoundError("Assignment not found.")
    assignment, project, screen, app, question = compiled.load_row(_ASSIGNMENT_LOADS, row[2:])
    screen.app = app
    assignment.project, assignment.screen, assignment.question = project, screen, question
    return cast(Assignment, assignment)


class IsAuthenticated(BasePermission):
    """Logged in (session or token). Object checks happen in the functions above."""

    def has_permission(self, request: Any, view: Any) -> bool:
        return bool(request.user and request.user.is_authenticated)
