"""The browser suite: the real UI in headless Chromium (Playwright) against pytest-django's
live server on the test database. Skipped, with a message, when Chromium is absent.

Screens come from the project's demo generator (``devtools.demo.generator``: RICO-format
screenshots and view hierarchies) through the real importer, at both RICO screenshot sizes;
the tests read the candidates' boxes back from the database.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from django.core.signals import request_finished, request_started

from annotation.models import Candidate, ElementType, Question, QuestionSource, QuestionState, Screen, ScreenState
from devtools.demo.generator import generate_screens
from pipeline.ingest import import_screens
from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, UserFactory

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


def generated_screens(
    project: Any,
    *,
    start_id: int,
    kinds: tuple[str, ...] = ("list",),
    sizes: tuple[tuple[int, int], ...] = ((1080, 1920),),
    state: str = ScreenState.PREFILTER,
    **fields: Any,
) -> list[Screen]:
    """Demo screens from ``devtools.demo.generator`` (one per kind and size), imported by the
    real importer, then put in ``state``. Ordered by RICO id: kinds cycle fastest, then sizes."""
    folder = Path(tempfile.mkdtemp(prefix="screenqa-ui-"))
    try:
        generate_screens(folder, count=len(kinds) * len(sizes), seed=0, start_id=start_id, sizes=sizes, kinds=kinds)
        summary = import_screens(project=project, source=folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert not summary.rejected, summary.rejected
    screens = Screen.objects.filter(project=project, rico_id__in=summary.imported)
    screens.update(state=state, **fields)
    return list(screens.order_by("rico_id"))


def list_rows(screen: Screen) -> list[tuple[Candidate, Candidate, Candidate]]:
    """The rows of a generated ``list`` screen as (name, time, preview) text candidates."""
    texts = [
        c for c in Candidate.objects.filter(screen=screen, type=ElementType.TEXT).order_by("top", "left") if c.text
    ]
    body = [c for c in texts if c.top > texts[0].bottom]  # below the app bar title
    rows = [tuple(body[i : i + 3]) for i in range(0, len(body) - 2, 3)]
    assert rows and all(r[0].left == r[2].left for r in rows), "unexpected list layout"
    return rows  # type: ignore[return-value]


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


def watch(page: Any, errors: list[str]) -> None:
    """Collect the page's JavaScript errors and Content-Security-Policy violations into ``errors``: every
    page of the suite runs under the production policy, and a blocked script or style fails its test."""
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda msg: errors.append(msg.text) if "Content Security Policy" in msg.text else None,
    )


def wait_for_function(page: Any, expression: str, *, timeout: float | None = None, **_: Any) -> Any:
    """``page.wait_for_function`` for pages under a Content-Security-Policy without 'unsafe-eval'.

    Playwright's own polls by evaluating the expression inside the page, which the policy refuses (an
    EvalError), whereas ``page.evaluate`` goes through the DevTools protocol, which the policy does not
    govern. So: evaluate every 50 ms until the value is truthy (the context's default timeout, 10 s)."""
    deadline = time.monotonic() + (timeout if timeout is not None else 10_000) / 1000
    while True:
        try:
            value = page.evaluate(expression)
        except Exception as exc:  # a navigation replaced the page: poll the new one, as Playwright does
            if "context was destroyed" not in str(exc) and "navigat" not in str(exc):
                raise
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after the timeout: {expression}")
        page.wait_for_timeout(50)


@pytest.fixture
def new_page(browser: Any, live_server: Any) -> Iterator[Any]:
    """``new_page(username)``: a logged-in page at 1366x768 (one browser context per user)."""
    contexts = []

    def make(username: str, *, width: int = 1366, height: int = 768) -> Any:
        context = browser.new_context(viewport={"width": width, "height": height}, base_url=live_server.url)
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        watch(page, errors)
        page.wait_for_function = partial(wait_for_function, page)
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
                page.wait_for_load_state("networkidle", timeout=15_000)
                page.evaluate("window.workspace && window.workspace.drafts.forget()")
            except Exception:  # the page is gone or mid-navigation: nothing of ours is pending
                pass
        context.close()
    assert not errors, f"JavaScript errors or CSP violations: {errors}"


class _InFlight:
    """The live server's requests between Django's ``request_started`` and ``request_finished`` (the
    response closed, a streamed screenshot sent to the end), by serving thread. A thread serves one
    request at a time, so a thread that starts another has finished the one before; and a request whose
    ``request_finished`` never came (a client gone mid-response) is forgotten once its thread has ended,
    so one lost signal cannot make every later test wait out the timeout."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.threads: dict[int, float] = {}
        self.last_change = time.monotonic()

    def started(self, **_: Any) -> None:
        with self.lock:
            self.threads[threading.get_ident()] = self.last_change = time.monotonic()

    def finished(self, **_: Any) -> None:
        with self.lock:
            self.threads.pop(threading.get_ident(), None)
            self.last_change = time.monotonic()

    def quiet_for(self) -> float:
        """Seconds since the last request started or finished, or 0 while one is in flight."""
        alive = {thread.ident for thread in threading.enumerate()}
        with self.lock:
            for ident in [i for i in self.threads if i not in alive]:
                del self.threads[ident]
            return 0.0 if self.threads else time.monotonic() - self.last_change


IN_FLIGHT = _InFlight()
request_started.connect(IN_FLIGHT.started, dispatch_uid="browser-suite-in-flight-started")
request_finished.connect(IN_FLIGHT.finished, dispatch_uid="browser-suite-in-flight-finished")


@pytest.fixture(autouse=True)
def _no_request_in_flight_at_the_flush(request: Any) -> Iterator[None]:
    """For every test that runs the live server: after its own teardown (the pages closed) and before
    the database is flushed, wait until the server is quiet. A request the test left in flight (the
    next screen's VH list or screenshot, fetched as the test ends) holds table locks that the flush's
    TRUNCATE waits on, and deadlocks with it. Taking ``transactional_db`` here puts the flush after
    this fixture's teardown whatever order the test named its fixtures in."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    _wait_for_the_live_server_to_finish()


def _wait_for_the_live_server_to_finish(seconds: float = 30, quiet: float = 0.3) -> None:
    """Wait until no request has been in flight for ``quiet`` seconds (a request the closed browser
    had already sent is accepted and started within that), then until no other connection to the
    test database is inside a statement or a transaction."""
    from django.db import connection

    deadline = time.monotonic() + seconds
    while IN_FLIGHT.quiet_for() < quiet and time.monotonic() < deadline:
        time.sleep(0.02)
    if connection.vendor != "postgresql":
        return
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')"
            )
            if cursor.fetchone()[0] == 0:
                return
        time.sleep(0.05)


def shoot(page: Any, name: str) -> None:
    """Screenshot the page. With ``UPDATE_SCREENSHOTS=1`` into ``docs/screenshots/<name>.png`` (the
    README tour); otherwise under the temp folder, so a plain test run leaves the checkout clean."""
    folder = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else Path(tempfile.gettempdir()) / "screenqa-ui"
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"))
