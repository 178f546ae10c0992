"""The demo project behind ``make demo``: generated screens, imported, and one user per role."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Membership, Project, Role
from annotation.services.screens import project_get_or_create
from pipeline.ingest import import_screens

from .generator import plan, render_screen

DEMO_SLUG = "demo"
DEMO_SEED = 0
DEMO_START_ID = 900000
# username -> (project role or None for the site admin, in the answer pool)
DEMO_USERS: dict[str, tuple[str | None, bool]] = {
    "annotator": (Role.ANNOTATOR, True),
    "annotator2": (Role.ANNOTATOR, True),  # pass 2 needs a different writer
    "lead": (Role.LEAD, False),
    "admin": (None, False),
}


@dataclass
class DemoSetupResult:
    project: Project
    generated: int
    import_summary: dict[str, Any]
    logins: list[dict[str, str]] = field(default_factory=list)


def demo_screens_ensure(*, out_dir: Path, count: int) -> int:
    """Write the demo screens that are missing from ``out_dir``; return how many were written.

    Idempotent: the generator is deterministic, so an existing pair is already right.
    """
    if count < 1:
        raise ValueError("count must be at least 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = 0
    for rico_id, kind, size in plan(count=count, start_id=DEMO_START_ID):
        jpg, js = out_dir / f"{rico_id}.jpg", out_dir / f"{rico_id}.json"
        if jpg.is_file() and js.is_file():
            continue
        screen = render_screen(rico_id=rico_id, kind=kind, size=size, seed=DEMO_SEED)
        jpg.write_bytes(screen.image)
        js.write_bytes(screen.vh_bytes())
        written += 1
    return written


@transaction.atomic
def demo_users_reset(*, project: Project) -> list[dict[str, str]]:
    """Create or update the demo users and give each a fresh random password.

    Idempotent apart from the passwords (reset on every call, by design: they are printed
    once). ``annotator`` and ``annotator2`` are annotators in the answer pool, ``lead`` leads
    ``project``, ``admin`` is a superuser without a membership.
    Returns ``[{"username", "password", "role"}]``.
    """
    User = get_user_model()
    logins = []
    for username, (role, in_pool) in DEMO_USERS.items():
        user, _ = User.objects.get_or_create(username=username)
        password = secrets.token_urlsafe(9)
        user.set_password(password)
        user.is_active = True
        user.is_superuser = user.is_staff = role is None
        user.save()
        if role is not None:
            Membership.objects.update_or_create(
                project=project, user=user, defaults={"role": role, "in_answer_pool": in_pool}
            )
        logins.append({"username": username, "password": password, "role": role or "admin (superuser)"})
    return logins


def demo_project_setup(*, screens_dir: Path, count: int = 40) -> DemoSetupResult:
    """Build the demo: ensure ``count`` generated screens in ``screens_dir``, import them into
    project ``demo`` (the importer skips screens already present), reset the demo users.

    Safe to re-run: one project, no duplicate screens, the same four users (new passwords).
    """
    generated = demo_screens_ensure(out_dir=screens_dir, count=count)
    project = project_get_or_create(slug=DEMO_SLUG)
    summary = import_screens(project=project, source=screens_dir)
    logins = demo_users_reset(project=project)
    return DemoSetupResult(project=project, generated=generated, import_summary=summary.as_dict(), logins=logins)
