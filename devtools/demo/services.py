"""The demo project behind ``make demo``: generated screens, imported, the demo users (four in the
answer pool, a lead, a site admin) with passwords kept in ``DATA_DIR/demo-passwords.txt``, a small
gold set made from generated screens whose right answers the generator knows, and quality-control
settings a newcomer can finish the demo with (docs/demo.md)."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import (
    Candidate,
    ElementType,
    GoldItem,
    Membership,
    Project,
    Question,
    QuestionSource,
    QuestionState,
    Role,
    Screen,
    ScreenState,
)
from annotation.services.screens import project_get_or_create
from pipeline.decisions.decide import REASON_GOLD_ONLY
from pipeline.ingest import import_screens
from pipeline.quality.gold import gold_item_create

from .generator import plan, render_screen

DEMO_SLUG = "demo"
# The demo replays: the same screens go to the same splits on every fresh machine (a real project gets a
# random seed, so that annotators cannot compute the splits).
DEMO_SPLIT_SEED = "screenqa"
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
# The gold set (docs/demo.md): screens of their own (rico ids from DEMO_GOLD_START_ID), generated
# like the demo's and imported into the demo project, then closed ("no questions") so they are never
# real work. Every generated screen is an English app whose VH is in sync with its pixels: that is
# pre-filtering's right answer for each. On the screens with an app bar (``list``, ``settings``) the
# generator draws the title as the node ``toolbar_title``: the answers gold is the question
# DEMO_GOLD_QUESTION answered by that element.
DEMO_GOLD_START_ID = 909000
DEMO_GOLD_SCREENS = 6
DEMO_GOLD_KINDS = ("list", "settings")
DEMO_GOLD_QUESTION = "What is the title of this screen?"
DEMO_GOLD_PREFILTER = {"non_english_app": False, "vh_out_of_sync": False, "note": ""}
# Quality control in the demo project (docs/demo.md, docs/quality.md), so that a newcomer sees
# qualification and monitoring and the demo users alone still reach a release:
# * qualification on 3 gold items (of DEMO_GOLD_SCREENS) in pre-filtering and answers, then control
#   items among the rest of the gold at the project's rates;
# * writers qualify by review of their first two submissions (the demo lead reviews; review never
#   holds the release back);
# * the fast-response rule is off: a newcomer clicking through generated screens is fast by design;
# * provisional work: only the work of annotators whose evidence is against them (a wrong control
#   item after their last passed one) is held back before post-processing; with four demo users and a
#   few gold items nobody would ever pass ``provisional_min_controls`` control items, so thin
#   evidence alone holds nothing back (0 instead of 3).
DEMO_QUALITY = {
    "fast_response_seconds": 0.0,
    "qualification_review_sets": 2,
    "qualification_items": 3,
    "provisional_min_controls": 0,
}


@dataclass
class DemoSetupResult:
    project: Project
    generated: int
    import_summary: dict[str, Any]
    logins: list[dict[str, str]] = field(default_factory=list)
    gold: dict[str, int] = field(default_factory=dict)


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


def _title_text(vh: dict[str, Any]) -> str | None:
    """The app bar title the generator drew (its node ``...:id/toolbar_title``), or ``None``."""
    stack = [vh.get("activity", {}).get("root") or {}]
    while stack:
        node = stack.pop()
        if str(node.get("resource-id") or "").endswith(":id/toolbar_title") and node.get("text"):
            return str(node["text"])
        stack.extend(child for child in node.get("children") or [] if isinstance(child, dict))
    return None


@transaction.atomic
def demo_gold_ensure(*, project: Project, screens_dir: Path) -> dict[str, int]:
    """The demo's gold set: ``DEMO_GOLD_SCREENS`` generated screens (written to ``screens_dir`` and
    imported if missing), closed so they are never real work, each a pre-filtering gold item (English,
    in sync) and one answers gold item (``DEMO_GOLD_QUESTION``, answered by the app bar title the
    generator drew). Idempotent: a unit that is already gold is left alone.
    Returns ``{"prefilter": n, "answers": n}``, the demo's gold items per stage."""
    screens_dir.mkdir(parents=True, exist_ok=True)
    truth: dict[str, str | None] = {}
    for rico_id, kind, size in plan(count=DEMO_GOLD_SCREENS, start_id=DEMO_GOLD_START_ID, kinds=DEMO_GOLD_KINDS):
        drawn = render_screen(rico_id=rico_id, kind=kind, size=size, seed=DEMO_SEED)
        truth[str(rico_id)] = _title_text(drawn.vh)
        jpg, js = screens_dir / f"{rico_id}.jpg", screens_dir / f"{rico_id}.json"
        if not (jpg.is_file() and js.is_file()):
            jpg.write_bytes(drawn.image)
            js.write_bytes(drawn.vh_bytes())
    import_screens(project=project, source=screens_dir)
    screens = Screen.objects.filter(project=project, rico_id__in=truth)
    screens.update(state=ScreenState.NO_QUESTIONS)
    gold = set(GoldItem.objects.filter(project=project).values_list("stage", "screen_id"))
    for screen in screens.order_by("rico_id"):
        screen.project = project
        if ("prefilter", screen.pk) not in gold:
            gold_item_create(
                project=project,
                stage="prefilter",
                screen=screen,
                question=None,
                answer=DEMO_GOLD_PREFILTER,
                user=None,
                note="demo: a generated screen (English, VH in sync)",
            )
        title = truth[screen.rico_id]
        if title is None or ("answers", screen.pk) in gold:
            continue
        element = (
            Candidate.objects.filter(screen=screen, type=ElementType.TEXT, text=title).order_by("top", "left").first()
        )
        if element is None:
            continue
        # A question only gold serves: dropped for good before any post-processing (never real work).
        question = Question.objects.create(
            screen=screen,
            source=QuestionSource.PASS_1,
            position=0,
            text=DEMO_GOLD_QUESTION,
            state=QuestionState.DROPPED,
            drop_reason=REASON_GOLD_ONLY,
            answers_needed=0,
        )
        gold_item_create(
            project=project,
            stage="answers",
            screen=screen,
            question=question,
            answer={
                "question": DEMO_GOLD_QUESTION,
                "verdict": "answered",
                "elements": [{"vh_index": element.vh_index, "text": title}],
                "full_answer": f"The title is {title}.",
            },
            user=None,
            note="demo: the app bar title the generator drew",
        )
    counts = GoldItem.objects.filter(project=project, active=True).values_list("stage", flat=True)
    return {stage: list(counts).count(stage) for stage in ("prefilter", "answers")}


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
    settings (``DEMO_QUALITY``), ensure its gold set (``demo_gold_ensure``, screens in
    ``screens_dir``'s sibling ``gold``), ensure the demo users and write their logins to
    ``passwords_file``.

    Safe to re-run: one project, no duplicate screens, the same six users with the same passwords.
    """
    generated = demo_screens_ensure(out_dir=screens_dir, count=count)
    project = project_get_or_create(slug=DEMO_SLUG, split_seed=DEMO_SPLIT_SEED)
    Project.objects.filter(pk=project.pk).update(**DEMO_QUALITY)
    summary = import_screens(project=project, source=screens_dir)
    gold = demo_gold_ensure(project=project, screens_dir=screens_dir.parent / "gold")
    logins = demo_users_ensure(project=project, known=demo_passwords_read(passwords_file))
    demo_passwords_write(passwords_file, logins, url=url)
    return DemoSetupResult(
        project=project, generated=generated, import_summary=summary.as_dict(), logins=logins, gold=gold
    )
