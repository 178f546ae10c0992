"""Members: add people to a project with fresh passwords and API tokens; remove them."""

from __future__ import annotations

import re
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.exceptions import ApplicationError
from annotation.lock_objects import user_lock
from annotation.models import Assignment, AssignmentStatus, Membership, Project, Role


@transaction.atomic
def members_create(
    *,
    project: Project,
    count: int,
    role: str = Role.ANNOTATOR,
    in_answer_pool: bool = False,
    prefix: str | None = None,
) -> list[dict[str, Any]]:
    """Create ``count`` members with fresh passwords and API tokens.

    Usernames are ``<prefix>-<n>`` with ``n`` continuing after the existing ones, so a
    second run adds people instead of failing. Returns
    ``[{"username", "password", "token", "role", "in_answer_pool"}]`` (passwords are only
    shown here).
    """
    if not 1 <= count <= 10_000:
        raise ApplicationError("The count is from 1 to 10,000.", field="count")
    if role not in Role.values:
        raise ApplicationError(f"The role is one of {', '.join(Role.values)}.", field="role")
    prefix = prefix or f"{project.slug}-{role}"
    if not re.fullmatch(r"[\w.@+-]{1,100}", prefix):
        raise ApplicationError("The prefix may hold letters, digits and . @ + - _ only.", field="prefix")
    user_model = get_user_model()
    taken = set(user_model.objects.filter(username__startswith=f"{prefix}-").values_list("username", flat=True))
    created: list[dict[str, Any]] = []
    n = 0
    while len(created) < count:
        n += 1
        username = f"{prefix}-{n}"
        if username in taken:
            continue
        password = secrets.token_urlsafe(12)
        user = user_model.objects.create_user(username=username, password=password)
        Membership.objects.create(project=project, user=user, role=role, in_answer_pool=in_answer_pool)
        token = Token.objects.create(user=user)
        created.append(
            {
                "username": username,
                "password": password,
                "token": token.key,
                "role": role,
                "in_answer_pool": in_answer_pool,
            }
        )
    return created


@transaction.atomic
def member_remove(*, project_id: int, user_id: int) -> int:
    """Remove a user from a project and give their open leases back to the queue.

    Every way a membership is deleted goes through here (the admin included), so a removed
    member holds no work: their assignments that were still leased become ``released`` (their
    drafts are kept, as on any release) and the assignment endpoints refuse them from then on
    (``annotation.permissions`` checks current membership). Returns how many leases it released.
    Idempotent. Locks the user first (as ``next`` does, so a lease being taken at the same
    moment is either released here or refused after), then the assignments.
    """
    user_lock(user_id=user_id)
    released = (
        Assignment.objects.filter(project_id=project_id, annotator_id=user_id, status=AssignmentStatus.LEASED)
        .select_for_update()
        .order_by("pk")
    )
    ids = list(released.values_list("pk", flat=True))
    if ids:
        Assignment.objects.filter(pk__in=ids).update(status=AssignmentStatus.RELEASED, updated_at=timezone.now())
    Membership.objects.filter(project_id=project_id, user_id=user_id).delete()
    return len(ids)
