"""Member onboarding: add people to a project with fresh passwords and API tokens."""

from __future__ import annotations

import re
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token

from annotation.exceptions import ApplicationError
from annotation.models import Membership, Project, Role


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
