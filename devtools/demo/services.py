"""The demo project behind ``make demo``: generated screens, imported, the demo users (four in the
answer pool, a lead, a site admin) with passwords kept in ``DATA_DIR/demo-passwords.txt``, and
quality-control settings a newcomer can finish the demo with (docs/demo.md)."""

from __future__ import annotations

import os
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
PASSWORDS_FILE = "demo-passwords.txt"
# username -> (project role or None for the site admin, in the answer pool). Validation and test
# questions need three answers from people other than their author: four in the pool let every
# question finish whoever wrote it.
DEMO_USERS: dict[str, tuple[str | None, bool]] = {
    "annotator": (Role.ANNOTATOR, True),
    "annotator2": (Role.ANNOTATOR, True),  # pass 2 needs a different writer
    "annotator3": (Role.ANNOTATOR, True),
    "annotator4": (Role.ANNOTATOR, True),
    "lead": (Role.LEAD, False),
    "admin": (None, False),
}
# Quality control in the demo project (docs/demo.md, docs/quality.md): a fresh project has no
# gold items, so the gold-qualified stages start active; writers still qualify by review of their
# first submissions, which the demo lead reviews (a lead is a reviewer) but which never holds the
# release back. The fast-response rule is off: a newcomer clicking through generated screens is
# fast by design and would pause themselves; two reviewed sets are enough to show qualification.
DEMO_QUALITY = {"fast_response_seconds": 0.0, "qualification_review_sets": 2}


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


def demo_passwords_read(path: Path) -> dict[str, str]:
    """The passwords written by an earlier run (``username password role`` lines; ``#`` comments)."""
    if not path.is_file():
        return {}
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.startswith("#"):
            found[parts[0]] = parts[1]
    return found


def demo_passwords_write(path: Path, logins: list[dict[str, str]], *, url: str) -> None:
    """Write the logins to ``path``, readable by its owner only (mode 0600, also when replaced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    width = max(len(login["username"]) for login in logins)
    lines = [f"# The demo users of {url} (written by manage.py demo_setup; kept across re-runs).", ""]
    lines += [f"{login['username'].ljust(width)}  {login['password']}  {login['role']}" for login in logins]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    os.chmod(path, 0o600)  # an older file keeps its mode through O_CREAT


@transaction.atomic
def demo_users_ensure(*, project: Project, known: dict[str, str]) -> list[dict[str, str]]:
    """Create or update the demo users; a user keeps the password in ``known`` (from the passwords
    file), the others get a new random one. Idempotent: the same users, roles and passwords.

    ``annotator`` .. ``annotator4`` are annotators in the answer pool, ``lead`` leads ``project``,
    ``admin`` is a superuser without a membership.
    Returns ``[{"username", "password", "role"}]``.
    """
    User = get_user_model()
    logins = []
    for username, (role, in_pool) in DEMO_USERS.items():
        user, _ = User.objects.get_or_create(username=username)
        password = known.get(username) or secrets.token_urlsafe(9)
        if not user.check_password(password):
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


def demo_project_setup(
    *, screens_dir: Path, passwords_file: Path, count: int = 40, url: str = "http://127.0.0.1:8000/"
) -> DemoSetupResult:
    """Build the demo: ensure ``count`` generated screens in ``screens_dir``, import them into
    project ``demo`` (the importer skips screens already present), set its quality-control
    settings (``DEMO_QUALITY``), ensure the demo users and write their logins to ``passwords_file``.

    Safe to re-run: one project, no duplicate screens, the same six users with the same passwords.
    """
    generated = demo_screens_ensure(out_dir=screens_dir, count=count)
    project = project_get_or_create(slug=DEMO_SLUG)
    Project.objects.filter(pk=project.pk).update(**DEMO_QUALITY)
    summary = import_screens(project=project, source=screens_dir)
    logins = demo_users_ensure(project=project, known=demo_passwords_read(passwords_file))
    demo_passwords_write(passwords_file, logins, url=url)
    return DemoSetupResult(project=project, generated=generated, import_summary=summary.as_dict(), logins=logins)
