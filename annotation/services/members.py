"""Members of a project: onboarding (in bulk, one by one, from a CSV, by an invitation link that
expires), roles and the answer pool, removal, and API tokens. The lead's members page, the
``create_annotators`` command and the API share these."""

from __future__ import annotations

import csv
import io
import re
import secrets
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.lock_objects import user_lock
from annotation.models import Assignment, AssignmentStatus, Invitation, Membership, Project, Role
from annotation.services.assignments import assignment_leases_end


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


# --- one member at a time, in bulk from a CSV, and what a lead changes ---------------------------

USERNAME_RE = re.compile(r"[\w.@+-]{1,150}")
BULK_MAX_ROWS = 10_000


def _password() -> str:
    return secrets.token_urlsafe(12)


def member_add(
    *, project: Project, username: str, email: str = "", role: str = Role.ANNOTATOR, in_answer_pool: bool = False
) -> dict[str, Any]:
    """Add one person to ``project``: a new account with a fresh password and API token, or an
    existing account (matched by username) that is not a member yet (it keeps its password).

    Returns ``{"username", "password" (new accounts only, else ""), "token", "role",
    "in_answer_pool", "created"}``. ``ApplicationError`` for a bad username, e-mail or role, or
    a person already in the project. Atomic (its own savepoint, so a bulk run continues).
    """
    username = (username or "").strip()
    email = (email or "").strip()
    if not USERNAME_RE.fullmatch(username):
        raise ApplicationError("A username is 1 to 150 letters, digits and . @ + - _ (no spaces).", field="username")
    if email and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
        raise ApplicationError(f"{email!r} is not an e-mail address.", field="email")
    if role not in Role.values:
        raise ApplicationError(f"The role is one of {', '.join(Role.values)}.", field="role")
    user_model = get_user_model()
    with transaction.atomic():
        user = user_model.objects.select_for_update().filter(username=username).first()
        password = ""
        if user is None:
            password = _password()
            user = user_model.objects.create_user(username=username, email=email, password=password)
        elif Membership.objects.filter(project=project, user=user).exists():
            raise ApplicationError(f"{username} is already a member of this project.", field="username")
        Membership.objects.create(project=project, user=user, role=role, in_answer_pool=in_answer_pool)
        token, _ = Token.objects.get_or_create(user=user)
    return {
        "username": username,
        "password": password,
        "token": token.key,
        "role": role,
        "in_answer_pool": in_answer_pool,
        "created": bool(password),
    }


def members_import_csv(
    *, project: Project, text: str, role: str = Role.ANNOTATOR, in_answer_pool: bool = False
) -> dict[str, Any]:
    """Add the people of a CSV, one per row: ``username``, ``email`` or ``username,email``
    (a header row naming those columns is skipped; a lone e-mail is also the username).

    Good rows are added even when others are bad. Returns ``{"added": [member_add results],
    "errors": [{"line", "value", "message"}]}``.
    """
    if role not in Role.values:
        raise ApplicationError(f"The role is one of {', '.join(Role.values)}.", field="role")
    rows = list(csv.reader(io.StringIO(text or "")))
    if len(rows) > BULK_MAX_ROWS:
        raise ApplicationError(f"At most {BULK_MAX_ROWS:,} rows at a time.", field="csv")
    added: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line, row in enumerate(rows, start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if line == 1 and cells[0].lower() in ("username", "email", "e-mail", "user"):
            continue
        value = ",".join(cells)
        if len(cells) > 2:
            errors.append({"line": line, "value": value, "message": "At most two columns: username,email."})
            continue
        username = cells[0]
        email = cells[1] if len(cells) == 2 else (cells[0] if "@" in cells[0] else "")
        if username.lower() in seen:
            errors.append({"line": line, "value": value, "message": f"{username} is listed twice."})
            continue
        seen.add(username.lower())
        try:
            added.append(
                member_add(project=project, username=username, email=email, role=role, in_answer_pool=in_answer_pool)
            )
        except ApplicationError as exc:
            errors.append({"line": line, "value": value, "message": exc.message})
    return {"added": added, "errors": errors}


def _membership_get(*, project: Project, user_id: Any) -> Membership:
    membership = (
        Membership.objects.select_for_update().select_related("user").filter(project=project, user_id=user_id).first()
    )
    if membership is None:
        raise NotFoundError("No such member.")
    return membership


def _other_leads(*, project: Project, user_id: int) -> bool:
    return Membership.objects.filter(project=project, role=Role.LEAD).exclude(user_id=user_id).exists()


@transaction.atomic
def membership_update(
    *, project: Project, user_id: Any, role: str | None = None, in_answer_pool: bool | None = None
) -> Membership:
    """Change a member's role and/or answer pool. Locks the membership row.

    A project keeps at least one lead: demoting the last one is refused.
    """
    membership = _membership_get(project=project, user_id=user_id)
    fields = []
    if role is not None:
        if role not in Role.values:
            raise ApplicationError(f"The role is one of {', '.join(Role.values)}.", field="role")
        if membership.role == Role.LEAD and role != Role.LEAD and not _other_leads(project=project, user_id=user_id):
            raise ApplicationError("The project needs a lead: make somebody else lead first.", field="role")
        membership.role = role
        fields.append("role")
    if in_answer_pool is not None:
        membership.in_answer_pool = in_answer_pool
        fields.append("in_answer_pool")
    if fields:
        membership.save(update_fields=fields)
    return membership


@transaction.atomic
def membership_remove(*, project: Project, user_id: Any) -> dict[str, Any]:
    """Take a member out of the project (their account stays; their submitted work stays).

    Their live leases in the project go back to the queue (status ``released``) in the same
    transaction, so nothing waits for a lease to run out. Locks the membership row; the last
    lead cannot be removed. Returns ``{"username", "released"}``.
    """
    membership = _membership_get(project=project, user_id=user_id)
    if membership.role == Role.LEAD and not _other_leads(project=project, user_id=user_id):
        raise ApplicationError("The project needs a lead: make somebody else lead first.")
    released = member_remove(project_id=project.pk, user_id=membership.user_id)
    return {"username": membership.user.username, "released": released}


def token_get(*, user: Any) -> Token:
    """The user's API token (created on first use)."""
    token, _ = Token.objects.get_or_create(user=user)
    return token


@transaction.atomic
def token_rotate(*, user: Any) -> Token:
    """Replace the user's API token: the old one stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


# --- invitation links ----------------------------------------------------------------------------

INVITATION_DAYS_DEFAULT = 7
INVITATION_DAYS_MAX = 60


def invitation_create(
    *,
    project: Project,
    created_by: Any,
    role: str = Role.ANNOTATOR,
    in_answer_pool: bool = False,
    email: str = "",
    days: int = INVITATION_DAYS_DEFAULT,
) -> Invitation:
    """A link that lets one new person join ``project`` until it expires (``days`` from now)."""
    if role not in Role.values:
        raise ApplicationError(f"The role is one of {', '.join(Role.values)}.", field="role")
    if type(days) is not int or not 1 <= days <= INVITATION_DAYS_MAX:
        raise ApplicationError(f"An invitation lasts 1 to {INVITATION_DAYS_MAX} days.", field="days")
    email = (email or "").strip()
    if email and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
        raise ApplicationError(f"{email!r} is not an e-mail address.", field="email")
    return Invitation.objects.create(
        project=project,
        token=secrets.token_urlsafe(32),
        email=email,
        role=role,
        in_answer_pool=in_answer_pool,
        created_by=created_by if getattr(created_by, "pk", None) else None,
        expires_at=timezone.now() + timedelta(days=days),
    )


def invitation_open_get(*, token: str) -> Invitation:
    """The invitation of ``token`` if it can still be accepted; ``NotFoundError`` for an unknown
    token, ``ApplicationError`` for one that expired, was revoked or was used."""
    invitation = Invitation.objects.select_related("project").filter(token=token or "").first()
    if invitation is None:
        raise NotFoundError("This invitation link is not valid.")
    _invitation_check_open(invitation)
    return invitation


def _invitation_check_open(invitation: Invitation) -> None:
    if invitation.accepted_at is not None:
        raise ApplicationError("This invitation was already used. Log in instead.")
    if invitation.revoked_at is not None:
        raise ApplicationError("This invitation was withdrawn. Ask your lead for a new one.")
    if invitation.expires_at <= timezone.now():
        raise ApplicationError("This invitation has expired. Ask your lead for a new one.")


@transaction.atomic
def invitation_accept(*, token: str, username: str, password: str) -> Any:
    """Accept an invitation: create the account with the chosen password and join the project.

    Locks the invitation row, so a link is used once even when opened twice at the same moment.
    The password must pass the site's password validators. Returns the new user.
    """
    invitation = invitation_open_get(token=token)
    invitation = Invitation.objects.select_for_update().select_related("project").get(pk=invitation.pk)
    _invitation_check_open(invitation)
    username = (username or "").strip()
    if not USERNAME_RE.fullmatch(username):
        raise ApplicationError("A username is 1 to 150 letters, digits and . @ + - _ (no spaces).", field="username")
    user_model = get_user_model()
    if user_model.objects.filter(username__iexact=username).exists():
        raise ApplicationError(f"The username {username} is taken: choose another.", field="username")
    candidate = user_model(username=username, email=invitation.email)
    try:
        validate_password(password or "", user=candidate)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), field="password") from exc
    user = user_model.objects.create_user(username=username, email=invitation.email, password=password)
    Membership.objects.create(
        project=invitation.project, user=user, role=invitation.role, in_answer_pool=invitation.in_answer_pool
    )
    Token.objects.create(user=user)
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    return user


def invitation_revoke(*, project: Project, invitation_id: Any) -> Invitation:
    """Withdraw an unused invitation of ``project`` (idempotent)."""
    invitation = Invitation.objects.filter(project=project, pk=invitation_id).first()
    if invitation is None:
        raise NotFoundError("No such invitation.")
    if invitation.accepted_at is None and invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation


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
        assignment_leases_end(leases=Assignment.objects.filter(pk__in=ids), now=timezone.now())
    Membership.objects.filter(project_id=project_id, user_id=user_id).delete()
    return len(ids)
