"""Members of a project and their credentials: project accounts a lead creates (one by one, from a CSV,
by count), invitations a person accepts with a new or an existing personal account, roles and the answer
pool, removal, and API tokens. The lead's members page, the API, the ``create_annotators`` command and the
bulk job (``pipeline.members``) share these.

The rule they keep (docs/leads.md, "Accounts and credentials"): **a lead never sees, receives or replaces a
credential that works anywhere outside their own project.** A lead creates *project accounts*
(``annotation.models.ProjectAccount``), named ``<slug>/<name>`` and bound to the project for good, and may
show or replace their token and password. A *personal account* joins only by accepting an invitation; its
password and token stay its owner's. Nothing a lead does reveals whether some account outside the project
exists.
"""

from __future__ import annotations

import csv
import io
import os
import re
import secrets
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models.functions import Lower
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.exceptions import ApplicationError, ConflictError, GoneError, NotFoundError, PermissionDeniedError
from annotation.lock_objects import user_lock
from annotation.models import (
    PROJECT_ACCOUNT_SEPARATOR,
    Assignment,
    AssignmentStatus,
    Invitation,
    MemberJob,
    Membership,
    PendingCredential,
    Project,
    ProjectAccount,
    Role,
)
from annotation.services.assignments import assignment_leases_end

# --- names ---------------------------------------------------------------------------------------

# A username as Django stores it (``AbstractBaseUser.normalize_username``: NFKC), then checked: a
# look-alike such as "ａｄｍｉｎ" is "admin" by the time it reaches the unique index, so every check runs on
# the normalised name. ``/`` is not allowed: it separates a project account's project from its name.
USERNAME_RE = re.compile(r"[\w.@+-]{1,150}")
USERNAME_HELP = "A username is 1 to 150 letters, digits and . @ + - _ (no spaces)."
BULK_MAX_ROWS = 10_000
EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def username_normalize(raw: str | None, *, field: str = "username") -> str:
    """``raw`` as the account would be stored (stripped, NFKC), or ``ApplicationError`` naming ``field``."""
    name = unicodedata.normalize("NFKC", (raw or "").strip())
    if not USERNAME_RE.fullmatch(name):
        raise ApplicationError(USERNAME_HELP, field=field)
    return name


def _email_clean(raw: str | None, *, field: str = "email") -> str:
    email = (raw or "").strip()
    if email and not EMAIL_RE.fullmatch(email):
        raise ApplicationError(f"{email!r} is not an e-mail address.", field=field)
    return email


def _role_clean(role: str) -> str:
    if role not in Role.values:
        raise ApplicationError(f"The role is one of {', '.join(Role.values)}.", field="role")
    return role


def project_account_username(*, project: Project, name: str, field: str = "username") -> str:
    """The username of ``project``'s account called ``name``: ``<slug>/<name>`` (``name`` may already
    carry this project's prefix). ``ApplicationError`` for a bad or too long name."""
    prefix = f"{project.slug}{PROJECT_ACCOUNT_SEPARATOR}"
    raw = unicodedata.normalize("NFKC", (name or "").strip())
    if raw.lower().startswith(prefix.lower()):
        raw = raw[len(prefix) :]
    local = username_normalize(raw, field=field)
    if len(prefix) + len(local) > 150:
        raise ApplicationError(f"A name in this project is at most {150 - len(prefix)} characters.", field=field)
    return prefix + local


def _password() -> str:
    return secrets.token_urlsafe(12)


# --- memberships ---------------------------------------------------------------------------------


def membership_create(*, project: Project, user: Any, role: str, in_answer_pool: bool) -> Membership:
    """The one way a membership is made (invitations, project accounts, the admin, the demo).

    A project account joins its own project only; ``ApplicationError`` for any other, and for a person
    already in the project.
    """
    home = ProjectAccount.objects.filter(user_id=user.pk).values_list("project_id", flat=True).first()
    if home is not None and home != project.pk:
        raise ApplicationError("A project account can only be a member of the project that created it.")
    if Membership.objects.filter(project=project, user_id=user.pk).exists():
        raise ApplicationError("This account is already a member of the project.")
    return Membership.objects.create(project=project, user=user, role=_role_clean(role), in_answer_pool=in_answer_pool)


# --- project accounts: one, or many at once --------------------------------------------------------


@dataclass(frozen=True)
class NewAccount:
    """A project account to create: its row in the lead's request, its full username, its e-mail."""

    line: int
    username: str
    email: str = ""


def _taken(usernames: Iterable[str]) -> set[str]:
    """Which of ``usernames`` exist already, compared case-insensitively (lower-cased)."""
    wanted = sorted({name.lower() for name in usernames})
    found: set[str] = set()
    user_model = get_user_model()
    for start in range(0, len(wanted), 1000):
        chunk = wanted[start : start + 1000]
        found.update(
            user_model.objects.annotate(low=Lower("username")).filter(low__in=chunk).values_list("low", flat=True)
        )
    return found


def project_accounts_plan(
    *, project: Project, rows: Sequence[tuple[int, str, str]]
) -> tuple[list[NewAccount], list[dict[str, Any]]]:
    """Check every ``(line, name, email)`` of a lead's request before anything is created.

    Returns the accounts to create and the problems, one per bad row (``{"line", "value", "message"}``):
    a bad name or e-mail, a name listed twice (after normalisation, ignoring case), or a name this
    project already has. Names live in the project's own namespace, so no answer says anything about
    accounts outside it. Reads only; the caller creates nothing unless the problems are empty.
    """
    planned: list[NewAccount] = []
    errors: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for line, name, email in rows:
        value = ",".join(part for part in (name, email) if part)
        try:
            username = project_account_username(project=project, name=name)
            email = _email_clean(email)
        except ApplicationError as exc:
            errors.append({"line": line, "value": value, "message": exc.message, "field": exc.field})
            continue
        if username.lower() in seen:
            message = f"The same name as line {seen[username.lower()]}."
            errors.append({"line": line, "value": value, "message": message, "field": "username"})
            continue
        seen[username.lower()] = line
        planned.append(NewAccount(line=line, username=username, email=email))
    taken = _taken(account.username for account in planned)
    for account in planned:
        if account.username.lower() in taken:
            message = f"{account.username} already exists in this project: choose another name."
            errors.append({"line": account.line, "value": account.username, "message": message, "field": "username"})
    errors.sort(key=lambda error: error["line"])
    return [a for a in planned if a.username.lower() not in taken], errors


def project_accounts_csv_rows(text: str) -> list[tuple[int, str, str]]:
    """The rows of a lead's CSV: ``name``, ``email`` or ``name,email`` per line (a header naming those
    columns is skipped; a lone e-mail is also the name). ``ApplicationError`` (field ``csv``) naming every
    malformed line, or for more than ``BULK_MAX_ROWS`` rows."""
    try:
        rows = list(csv.reader(io.StringIO(text or "")))
    except csv.Error as exc:
        raise ApplicationError(f"Not a CSV: {exc}.", field="csv") from exc
    found: list[tuple[int, str, str]] = []
    bad: list[dict[str, Any]] = []
    for line, row in enumerate(rows, start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if line == 1 and cells[0].lower() in ("username", "name", "email", "e-mail", "user"):
            continue
        if len(cells) > 2:
            bad.append({"line": line, "value": ",".join(cells), "message": "At most two columns: name,email."})
            continue
        name = cells[0]
        email = cells[1] if len(cells) == 2 else (cells[0] if "@" in cells[0] else "")
        found.append((line, name, email))
    if len(found) > BULK_MAX_ROWS:
        raise ApplicationError(f"At most {BULK_MAX_ROWS:,} rows at a time.", field="csv")
    if bad:
        raise ApplicationError(_rows_message(bad), field="csv", extra={"rows": bad})
    if not found:
        raise ApplicationError("The CSV has no names.", field="csv")
    return found


def project_accounts_count_rows(
    *, project: Project, count: int, role: str, prefix: str | None = None
) -> list[tuple[int, str, str]]:
    """``count`` new names ``<prefix>-<n>`` (default prefix: the role), ``n`` continuing after this
    project's existing ones, so a second run adds people instead of failing."""
    if type(count) is not int or not 1 <= count <= BULK_MAX_ROWS:
        raise ApplicationError(f"The count is from 1 to {BULK_MAX_ROWS:,}.", field="count")
    prefix = prefix or _role_clean(role)
    if not re.fullmatch(r"[\w.@+-]{1,100}", prefix):
        raise ApplicationError("The prefix may hold letters, digits and . @ + - _ only.", field="prefix")
    start = project_account_username(project=project, name=f"{prefix}-", field="prefix")
    existing = get_user_model().objects.filter(username__istartswith=start).values_list("username", flat=True)
    numbers = [int(name[len(start) :]) for name in existing if name[len(start) :].isdigit()]
    first = max(numbers, default=0) + 1
    return [(n - first + 1, f"{prefix}-{n}", "") for n in range(first, first + count)]


def _rows_message(errors: list[dict[str, Any]]) -> str:
    shown = "; ".join(f"line {e['line']}: {e['message']}" for e in errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{len(errors)} row(s) cannot be added, so none was: {shown}{more}."


def project_accounts_check(*, project: Project, rows: Sequence[tuple[int, str, str]]) -> list[NewAccount]:
    """``project_accounts_plan``, all or nothing: the accounts, or one ``ApplicationError`` listing every
    bad row (``extra["rows"]``)."""
    planned, errors = project_accounts_plan(project=project, rows=rows)
    if errors:
        raise ApplicationError(_rows_message(errors), field="csv", extra={"rows": errors})
    return planned


# Password hashing (PBKDF2, about half a second each) releases the GIL: hash on every core.
_HASH_WORKERS = max(1, min(8, os.cpu_count() or 1))


def _hashes(passwords: list[str]) -> list[str]:
    if len(passwords) < 2:
        return [make_password(p) for p in passwords]
    with ThreadPoolExecutor(max_workers=_HASH_WORKERS) as pool:
        return list(pool.map(make_password, passwords))


def project_accounts_create(
    *,
    project: Project,
    accounts: Sequence[NewAccount],
    role: str,
    in_answer_pool: bool,
    created_by: Any = None,
    job: MemberJob | None = None,
) -> list[dict[str, Any]]:
    """Create ``accounts`` (already checked) as project accounts of ``project``, with fresh passwords
    and API tokens, in one transaction: users, their ``ProjectAccount`` rows, memberships and tokens (and,
    for a bulk ``job``, the ``PendingCredential`` rows that wait for the lead's download).

    Returns ``[{"username", "password", "token", "role", "in_answer_pool", "created"}]`` in order: the
    only time the passwords are in the clear outside a pending download. An account created meanwhile
    under one of the names is an ``ApplicationError`` and nothing is created.
    """
    _role_clean(role)
    if not accounts:
        return []
    passwords = [_password() for _ in accounts]
    hashes = _hashes(passwords)
    user_model = get_user_model()
    by = created_by if getattr(created_by, "pk", None) else None
    try:
        with transaction.atomic():
            users = user_model.objects.bulk_create(
                [
                    user_model(username=a.username, email=a.email, password=h)
                    for a, h in zip(accounts, hashes, strict=True)
                ]
            )
            if any(u.pk is None for u in users):  # a backend without RETURNING: read the keys back
                ids = dict(
                    user_model.objects.filter(username__in=[a.username for a in accounts]).values_list("username", "pk")
                )
                for u in users:
                    u.pk = ids[u.username]
            ProjectAccount.objects.bulk_create(
                [ProjectAccount(user_id=u.pk, project=project, created_by=by) for u in users]
            )
            Membership.objects.bulk_create(
                [Membership(project=project, user_id=u.pk, role=role, in_answer_pool=in_answer_pool) for u in users]
            )
            tokens = Token.objects.bulk_create([Token(key=Token.generate_key(), user_id=u.pk) for u in users])
            if job is not None:
                PendingCredential.objects.bulk_create(
                    [
                        PendingCredential(
                            job=job, user_id=u.pk, username=u.username, password=p, token=t.key, line=a.line
                        )
                        for a, u, p, t in zip(accounts, users, passwords, tokens, strict=True)
                    ]
                )
    except IntegrityError as exc:
        raise ApplicationError("An account with one of these names was created meanwhile: try again.") from exc
    return [
        {
            "username": u.username,
            "password": p,
            "token": t.key,
            "role": role,
            "in_answer_pool": in_answer_pool,
            "created": True,
        }
        for u, p, t in zip(users, passwords, tokens, strict=True)
    ]


def member_add(
    *,
    project: Project,
    username: str,
    email: str = "",
    role: str = Role.ANNOTATOR,
    in_answer_pool: bool = False,
    created_by: Any = None,
) -> dict[str, Any]:
    """Create one project account ``<slug>/<username>`` in ``project`` with a fresh password and API token.

    Returns ``{"username", "password", "token", "role", "in_answer_pool", "created"}``; the password is
    shown only here. ``ApplicationError`` for a bad name, e-mail or role, or a name the project already
    has. An existing personal account is never touched: a person with one joins by an invitation.
    """
    _role_clean(role)
    accounts, errors = project_accounts_plan(project=project, rows=[(1, username, email)])
    if errors:
        raise ApplicationError(errors[0]["message"], field=errors[0]["field"])
    try:
        return project_accounts_create(
            project=project, accounts=accounts, role=role, in_answer_pool=in_answer_pool, created_by=created_by
        )[0]
    except ApplicationError as exc:
        raise ApplicationError(exc.message, field="username") from exc


def members_create(
    *,
    project: Project,
    count: int,
    role: str = Role.ANNOTATOR,
    in_answer_pool: bool = False,
    prefix: str | None = None,
    created_by: Any = None,
) -> list[dict[str, Any]]:
    """Create ``count`` project accounts ``<slug>/<prefix>-<n>`` at once, in this process (the
    ``create_annotators`` command; the lead's pages and the API queue a ``MemberJob`` instead)."""
    rows = project_accounts_count_rows(project=project, count=count, role=role, prefix=prefix)
    accounts = project_accounts_check(project=project, rows=rows)
    return project_accounts_create(
        project=project, accounts=accounts, role=role, in_answer_pool=in_answer_pool, created_by=created_by
    )


# --- bulk creation as a background job -------------------------------------------------------------


def member_job_request(
    *,
    project: Project,
    role: str = Role.ANNOTATOR,
    in_answer_pool: bool = False,
    csv_text: str = "",
    count: int | None = None,
    prefix: str | None = None,
) -> dict[str, Any]:
    """Check a lead's bulk request (a CSV of names, or a count) and return the job's ``request``: every
    row is checked now, so a bad row refuses the whole request (``ApplicationError`` with ``extra["rows"]``
    naming each) and a queued job creates every account or fails without creating one twice."""
    _role_clean(role)
    if (csv_text or "").strip():
        rows = project_accounts_csv_rows(csv_text)
    elif count is not None:
        rows = project_accounts_count_rows(project=project, count=count, role=role, prefix=prefix)
    else:
        raise ApplicationError("Paste a CSV or give a count.", field="csv")
    accounts = project_accounts_check(project=project, rows=rows)
    return {
        "names": [[a.line, a.username, a.email] for a in accounts],
        "role": role,
        "in_answer_pool": bool(in_answer_pool),
    }


MEMBER_JOB_BATCH = 16


def member_job_work(*, job: MemberJob, progress: Callable[[int, int | None], None]) -> dict[str, Any]:
    """Create a bulk request's accounts, ``MEMBER_JOB_BATCH`` per transaction (each with its credentials
    pending for the lead's download).

    Idempotent: an account this job created in an earlier run is skipped; a name somebody else took since
    the request was checked is reported in ``skipped`` and not created. Returns ``{"created", "skipped",
    "pending"}`` (counts, and the skipped names with why).
    """
    request = job.request or {}
    accounts = [NewAccount(line=line, username=name, email=email) for line, name, email in request.get("names", [])]
    role, pool = request.get("role", Role.ANNOTATOR), bool(request.get("in_answer_pool"))
    done = set(PendingCredential.objects.filter(job=job).values_list("username", flat=True))
    skipped: list[dict[str, Any]] = []
    total = len(accounts)
    processed = 0
    progress(processed, total)
    for start in range(0, total, MEMBER_JOB_BATCH):
        batch = [a for a in accounts[start : start + MEMBER_JOB_BATCH] if a.username not in done]
        taken = _taken(a.username for a in batch)
        for account in batch:
            if account.username.lower() in taken:
                skipped.append({"line": account.line, "username": account.username, "message": "created meanwhile"})
        batch = [a for a in batch if a.username.lower() not in taken]
        project_accounts_create(
            project=job.project, accounts=batch, role=role, in_answer_pool=pool, created_by=job.created_by, job=job
        )
        processed = min(total, start + MEMBER_JOB_BATCH)
        progress(processed, total)
    pending = PendingCredential.objects.filter(job=job).count()
    return {"created": pending, "skipped": skipped, "pending": pending}


CREDENTIALS_HEADER = ("username", "password", "token", "role", "in_answer_pool")


@transaction.atomic
def member_job_credentials_take(*, job: MemberJob) -> str:
    """The new accounts' credentials as CSV, once: the rows are deleted in the same transaction (so two
    downloads at once give them to one caller). ``ConflictError`` until the job is done; ``GoneError``
    (410) once downloaded."""
    locked = MemberJob.objects.select_for_update().get(pk=job.pk)
    if locked.status != MemberJob.Status.DONE:
        raise ConflictError("The accounts are still being created: download the credentials once it is done.")
    if locked.downloaded_at is not None:
        raise GoneError(
            "The credentials were downloaded already; they are shown once. Give an account a new password or "
            "token from the members page."
        )
    rows = list(PendingCredential.objects.filter(job=locked).order_by("line"))
    request = locked.request or {}
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CREDENTIALS_HEADER)
    for row in rows:
        writer.writerow([row.username, row.password, row.token, request.get("role", ""), request.get("in_answer_pool")])
    PendingCredential.objects.filter(job=locked).delete()
    locked.downloaded_at = timezone.now()
    locked.save(update_fields=["downloaded_at", "updated_at"])
    return out.getvalue()


# --- the credentials a lead may see: their own project accounts' only -------------------------------


def project_account_membership(*, project: Project, user_id: Any) -> Membership:
    """The membership of ``user_id`` in ``project`` if its account is one of ``project``'s project
    accounts, which a lead may show and replace the credentials of.

    ``NotFoundError`` for somebody who is not a member; ``PermissionDeniedError`` for a personal account
    (its credentials are its owner's alone), and for a project account that is a site admin or staff, or
    a member elsewhere (neither can happen through the product; refused in case the database says so).
    """
    membership = Membership.objects.select_related("user").filter(project=project, user_id=user_id).first()
    if membership is None:
        raise NotFoundError("No such member.")
    user = membership.user
    own = ProjectAccount.objects.filter(user_id=user.pk, project=project).exists()
    elsewhere = Membership.objects.filter(user_id=user.pk).exclude(project=project).exists()
    if not own or user.is_superuser or user.is_staff or elsewhere:
        raise PermissionDeniedError(
            f"{user.username} is a personal account: its password and API token are its owner's alone."
        )
    return membership


def project_account_token(*, project: Project, user_id: Any, rotate: bool = False) -> Token:
    """A project account's API token (``rotate``: a new one; the old one stops working at once)."""
    membership = project_account_membership(project=project, user_id=user_id)
    return token_rotate(user=membership.user) if rotate else token_get(user=membership.user)


@transaction.atomic
def project_account_password_reset(*, project: Project, user_id: Any) -> dict[str, str]:
    """Give a project account a new password (shown once); its sessions end with the old one."""
    membership = project_account_membership(project=project, user_id=user_id)
    password = _password()
    membership.user.set_password(password)
    membership.user.save(update_fields=["password"])
    return {"username": membership.user.username, "password": password}


def member_kinds(*, project: Project) -> dict[int, str]:
    """``user_id -> "project"`` for the members whose credentials this project's leads manage; others
    are personal accounts (one query)."""
    ids = ProjectAccount.objects.filter(project=project, user__is_superuser=False, user__is_staff=False)
    return dict.fromkeys(ids.values_list("user_id", flat=True), "project")


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
    """The user's API token (created on first use). For the user themself (their account page) and, for a
    project account, its project's leads (``project_account_token``): nobody else."""
    token, _ = Token.objects.get_or_create(user=user)
    return token


@transaction.atomic
def token_rotate(*, user: Any) -> Token:
    """Replace the user's API token: the old one stops working at once. Same callers as ``token_get``."""
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
    username: str = "",
    days: int = INVITATION_DAYS_DEFAULT,
) -> Invitation:
    """A link that lets one person join ``project`` until it expires (``days`` from now).

    With ``username``, it is for that existing account only: it waits on that person's home page and
    nobody else can use it. Whether such an account exists is not checked, and nothing in the answer
    depends on it: the lead learns only when the person accepts.
    """
    _role_clean(role)
    if type(days) is not int or not 1 <= days <= INVITATION_DAYS_MAX:
        raise ApplicationError(f"An invitation lasts 1 to {INVITATION_DAYS_MAX} days.", field="days")
    email = _email_clean(email)
    username = (username or "").strip()
    if PROJECT_ACCOUNT_SEPARATOR in unicodedata.normalize("NFKC", username):
        raise ApplicationError(
            "A name with / is a project account: it works in its own project only and cannot be invited.",
            field="username",
        )
    username = username_normalize(username) if username else ""
    return Invitation.objects.create(
        project=project,
        token=secrets.token_urlsafe(32),
        email=email,
        username=username,
        role=role,
        in_answer_pool=in_answer_pool,
        created_by=created_by if getattr(created_by, "pk", None) else None,
        expires_at=timezone.now() + timedelta(days=days),
    )


def invitation_open_get(*, token: str) -> Invitation:
    """The invitation of ``token`` if it can still be accepted; ``NotFoundError`` for an unknown
    token, ``ApplicationError`` for one that expired, was revoked, declined or used."""
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
    if invitation.declined_at is not None:
        raise ApplicationError("This invitation was declined. Ask the lead for a new one.")
    if invitation.expires_at <= timezone.now():
        raise ApplicationError("This invitation has expired. Ask your lead for a new one.")


def _invitation_lock(token: str) -> Invitation:
    invitation = invitation_open_get(token=token)
    invitation = Invitation.objects.select_for_update().select_related("project").get(pk=invitation.pk)
    _invitation_check_open(invitation)
    return invitation


def _invitation_used(invitation: Invitation, user: Any) -> None:
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])


@transaction.atomic
def invitation_accept(*, token: str, username: str, password: str) -> Any:
    """Accept an open invitation with a new personal account: create it with the chosen username and
    password and join the project.

    Locks the invitation row, so a link is used once even when opened twice at the same moment. The
    username is normalised as it will be stored (a look-alike of a taken name is taken) and must be free
    (ignoring case); the password must pass the site's password validators. An invitation addressed to
    an existing account is accepted by that account only (``invitation_join``). Returns the new user.
    """
    invitation = _invitation_lock(token)
    if invitation.username:
        raise ApplicationError("This invitation is for an existing account: log in with it to accept.")
    username = username_normalize(username)
    user_model = get_user_model()
    if user_model.objects.filter(username__iexact=username).exists():
        raise ApplicationError(f"The username {username} is taken: choose another.", field="username")
    candidate = user_model(username=username, email=invitation.email)
    try:
        validate_password(password or "", user=candidate)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), field="password") from exc
    try:
        with transaction.atomic():
            user = user_model.objects.create_user(username=username, email=invitation.email, password=password)
    except IntegrityError as exc:  # the same name taken a moment ago
        raise ApplicationError(f"The username {username} is taken: choose another.", field="username") from exc
    membership_create(
        project=invitation.project, user=user, role=invitation.role, in_answer_pool=invitation.in_answer_pool
    )
    Token.objects.create(user=user)
    _invitation_used(invitation, user)
    return user


def _invitation_for(invitation: Invitation, user: Any) -> None:
    """``ApplicationError`` unless ``user`` may use ``invitation`` with their own account."""
    if invitation.username and invitation.username.lower() != user.get_username().lower():
        raise ApplicationError("This invitation is for another account.")
    if ProjectAccount.objects.filter(user_id=user.pk).exists():
        raise ApplicationError(
            "This is a project account: it works in its own project only. Log out and accept the invitation "
            "with a personal account, or create one here."
        )


@transaction.atomic
def invitation_join(*, token: str, user: Any) -> Membership:
    """Accept an invitation with the personal account ``user`` is logged in with: join the project.

    Refused for an invitation addressed to another account, for a project account (it stays in its own
    project), and for somebody already in the project. No credential is made or shown. Locks the
    invitation row (used once).
    """
    invitation = _invitation_lock(token)
    _invitation_for(invitation, user)
    membership = membership_create(
        project=invitation.project, user=user, role=invitation.role, in_answer_pool=invitation.in_answer_pool
    )
    _invitation_used(invitation, user)
    return membership


@transaction.atomic
def invitation_decline(*, token: str, user: Any) -> Invitation:
    """Say no to an invitation addressed to ``user``'s account (it can no longer be used)."""
    invitation = _invitation_lock(token)
    if not invitation.username or invitation.username.lower() != user.get_username().lower():
        raise NotFoundError("No such invitation.")
    invitation.declined_at = timezone.now()
    invitation.save(update_fields=["declined_at"])
    return invitation


def invitations_waiting(*, user: Any) -> list[Invitation]:
    """The open invitations addressed to ``user``'s account, for their home page (newest first)."""
    if not getattr(user, "is_authenticated", False):
        return []
    return list(
        Invitation.objects.select_related("project")
        .filter(
            username__iexact=user.get_username(),
            accepted_at__isnull=True,
            revoked_at__isnull=True,
            declined_at__isnull=True,
            expires_at__gt=timezone.now(),
        )
        .exclude(project__memberships__user=user)
        .order_by("-created_at")
    )


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
