"""The browser suite: the real UI in headless Chromium (Playwright) against pytest-django's
live server on the test database. Skipped, with a message, when Chromium is absent.

Screens are generated here (Pillow draws a small workout app whose rows are the VH
candidates), at both RICO screenshot sizes, so each test knows exactly where every box is.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.base import ContentFile
from PIL import Image, ImageDraw, ImageFont

from annotation.models import Candidate, ElementType, Question, QuestionSource, QuestionState, Screen, ScreenState
from tests.factories import PASSWORD, AppFactory, MembershipFactory, ProjectFactory, UserFactory

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between browser steps are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# The app drawn on every generated screen, in 1080x1920 pixels: (class, type, text, bounds).
ROWS: list[tuple[str, str, str, tuple[int, int, int, int]]] = [
    ("android.widget.TextView", "text", "Leg day workout", (40, 90, 700, 170)),
    ("android.widget.ImageView", "image", "", (900, 80, 1040, 180)),
    ("android.widget.TextView", "text", "Deep Squat", (60, 320, 560, 400)),
    ("android.widget.TextView", "text", "3 sets", (600, 320, 820, 400)),
    ("android.widget.TextView", "text", "15x", (860, 320, 1020, 400)),
    ("android.widget.TextView", "text", "Lunge", (60, 480, 560, 560)),
    ("android.widget.TextView", "text", "3 sets", (600, 480, 820, 560)),
    ("android.widget.TextView", "text", "10x", (860, 480, 1020, 560)),
    ("android.widget.Button", "button", "Start workout", (240, 1660, 840, 1780)),
]
# Drawn into the pixels but absent from the VH (as a WebView or canvas would be): a box to draw.
UNLISTED_TEXT = ("Rest 90 s between sets", (60, 700, 760, 780))


def _font(size: int) -> Any:
    for path in (
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    ):
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default()


def scaled(bounds: tuple[int, int, int, int], width: int) -> list[int]:
    return [round(v * width / 1080) for v in bounds]


def screen_png(width: int, height: int) -> bytes:
    img = Image.new("RGB", (width, height), "#fafafa")
    draw = ImageDraw.Draw(img)
    s = width / 1080
    draw.rectangle([0, 0, width, round(220 * s)], fill="#3b5bdb")
    font = _font(round(48 * s))
    for cls, _type, text, b in ROWS:
        box = scaled(b, width)
        if cls.endswith("ImageView"):
            draw.ellipse(box, fill="#ffd43b")
        elif cls.endswith("Button"):
            draw.rounded_rectangle(box, radius=round(30 * s), fill="#2f9e44")
            draw.text((box[0] + round(120 * s), box[1] + round(30 * s)), text, fill="white", font=font)
        else:
            colour = "white" if b[1] < 220 else "#212529"
            draw.text((box[0] + 4, box[1] + round(12 * s)), text, fill=colour, font=font)
    text, b = UNLISTED_TEXT
    box = scaled(b, width)
    draw.rectangle(box, fill="#fff3bf")
    draw.text((box[0] + 8, box[1] + round(14 * s)), text, fill="#5c3c00", font=font)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def make_screen(
    project: Any, *, rico_id: str, width: int = 1080, state: str = ScreenState.PREFILTER, **extra: Any
) -> Screen:
    height = width * 16 // 9
    app = (
        AppFactory(project=project, package="com.example.legday") if not project.apps.exists() else project.apps.first()
    )
    screen = Screen.objects.create(
        project=project,
        app=app,
        rico_id=rico_id,
        width=width,
        height=height,
        image=ContentFile(screen_png(width, height), name=f"{rico_id}.png"),
        vh={"activity_name": "com.example.legday/.Workout", "activity": {"root": {}}},
        content_sha256=f"{rico_id:0>64}"[:64],
        state=state,
        **extra,
    )
    Candidate.objects.bulk_create(
        Candidate(
            screen=screen,
            vh_index=10 + i,
            left=scaled(b, width)[0],
            top=scaled(b, width)[1],
            right=scaled(b, width)[2],
            bottom=scaled(b, width)[3],
            class_name=cls,
            type=ElementType(kind),
            text=text,
            content_desc="" if text else "trainer photo",
        )
        for i, (cls, kind, text, b) in enumerate(ROWS)
    )
    return screen


def add_question(screen: Screen, *, author: Any, text: str, position: int = 0) -> Question:
    return Question.objects.create(
        screen=screen,
        author=author,
        source=QuestionSource.PASS_1,
        position=position,
        text=text,
        state=QuestionState.ANSWERING,
        answers_needed=1,
    )


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: the browser suite needs Debian's chromium (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def demo(transactional_db: Any) -> dict[str, Any]:
    project = ProjectFactory(slug="demo", name="Demo")
    users = {}
    for name in ("annotator", "annotator2"):
        users[name] = UserFactory(username=name)
        MembershipFactory(project=project, user=users[name])
    users["author"] = UserFactory(username="author")
    MembershipFactory(project=project, user=users["author"])
    return {"project": project, **users}


@pytest.fixture
def new_page(browser: Any, live_server: Any) -> Iterator[Any]:
    """``new_page(username)``: a logged-in page at 1366x768 (one browser context per user)."""
    contexts = []

    def make(username: str, *, width: int = 1366, height: int = 768) -> Any:
        context = browser.new_context(viewport={"width": width, "height": height}, base_url=live_server.url)
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto("/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.click("form button[type=submit]")
        page.wait_for_load_state()
        return page

    errors: list[str] = []
    yield make
    for context in contexts:
        # Let the page's own requests (a pending autosave) finish before the database is
        # flushed: a save arriving during the flush would deadlock with its TRUNCATE.
        for page in context.pages:
            try:
                page.evaluate("window.workspace && window.workspace.drafts.save()")
                page.wait_for_load_state("networkidle", timeout=5_000)
                page.evaluate("window.workspace && window.workspace.drafts.forget()")
            except Exception:  # the page is gone or mid-navigation: nothing of ours is pending
                pass
        context.close()
    assert not errors, f"JavaScript errors: {errors}"


def shoot(page: Any, name: str) -> None:
    """Screenshot the page. With ``UPDATE_SCREENSHOTS=1`` into ``docs/screenshots/<name>.png`` (the
    README tour); otherwise under the temp folder, so a plain test run leaves the checkout clean."""
    folder = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else Path(tempfile.gettempdir()) / "screenqa-ui"
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"))
