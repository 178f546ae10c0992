"""The demo a newcomer runs (issue 13 §2): from ``demo_setup`` to a downloaded release in the
browser alone, logged in as the demo users in turn with the passwords from the file it wrote.

Small on purpose (two screens): every stage a release needs, each by the users the demo made
for it; the answers of validation and test questions need three pool members other than the
author, which the demo's four-member pool provides. The demo has a gold set (issue 22 §11): each
annotator first qualifies on three gold items of pre-filtering and of answers, served like real
work, and may meet control items among their real work; all are answered right here, so everybody
qualifies and nothing is held back before post-processing.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from annotation.models import ControlResult, Purpose, Question, QuestionState, Standing, StandingStatus
from devtools.demo.services import DEMO_QUALITY
from tests.browser.conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOTHING = "nothing for you right now"


def _passwords(path: Path) -> dict[str, str]:
    return dict(re.findall(r"^(\w+)\s+(\S+)\s", path.read_text(), flags=re.M))


class Newcomer:
    """One browser context per demo user, logged in through the login page."""

    def __init__(self, browser: Any, base_url: str, passwords: dict[str, str]) -> None:
        self.browser, self.base_url, self.passwords = browser, base_url, passwords
        self.contexts: list[Any] = []
        self.errors: list[str] = []

    def login(self, username: str) -> Any:
        context = self.browser.new_context(
            base_url=self.base_url, viewport={"width": 1366, "height": 900}, accept_downloads=True
        )
        context.set_default_timeout(15_000)
        self.contexts.append(context)
        page = context.new_page()
        watch(page, self.errors)
        page.goto("/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", self.passwords[username])
        page.click("form button[type=submit]")
        page.wait_for_load_state()
        assert "/login/" not in page.url, f"{username} could not log in"
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()


def _work_through(page: Any, stage: str, act: Any) -> int:
    """Open ``stage`` from the workspace home and do ``act`` on every item until nothing is left."""
    page.goto("/projects/demo/work/")
    page.locator(f'tr[data-stage="{stage}"] .button').click()
    for done in range(20):
        page.locator("#ws[data-ready]").or_(page.get_by_text(NOTHING)).first.wait_for()
        if page.get_by_text(NOTHING).count():
            return done
        act(page)
    raise AssertionError(f"{stage}: still items after 20")


def _judge(page: Any) -> None:
    page.keyboard.press("Control+Enter")  # nothing ticked: an English screen in sync
    page.wait_for_load_state()


def _write(page: Any) -> None:
    page.fill("#q0", "What is the title of this screen?")
    page.click("#submit-btn")
    page.wait_for_load_state()


def _nothing(page: Any) -> None:
    page.click("#nothing-btn")
    page.wait_for_load_state()


def _answer(page: Any) -> None:
    # click the screen's topmost text element (the app bar title the generator drew, which is also the
    # demo gold's answer; icons above it carry their label as text too), then write the full answer
    point = page.evaluate(
        """() => { const v = window.workspace.viewer; const r = v.svg.getBoundingClientRect();
           const c = v.candidates.filter(c => c.type === 'text' && (c.text || '').trim())
             .sort((a, b) => a.bounds[1] - b.bounds[1])[0];
           const [l, t, rt, b] = c.bounds;
           return [r.left + (l + rt) / 2 * r.width / v.W, r.top + (t + b) / 2 * r.height / v.H]; }"""
    )
    page.mouse.click(*point)
    page.wait_for_selector("#element-list .el-row")
    title = page.input_value("#element-list .el-text")
    page.fill("#full-answer", f"The title is {title}.")
    page.click("#submit-btn")
    page.wait_for_load_state()


def _run_job(page: Any, card: str, button: str) -> None:
    page.locator(f"{card} button", has_text=button).click()
    page.wait_for_load_state()
    page.locator(f'{card} .job[data-job-status="done"]').wait_for(timeout=60_000)


def test_a_newcomer_goes_from_demo_setup_to_a_downloaded_release(browser, live_server, settings, tmp_path):
    # given the demo, set up as `make demo` does (two screens), and the passwords file it wrote
    settings.DATA_DIR = tmp_path
    out = io.StringIO()
    call_command("demo_setup", screens=2, stdout=out)
    passwords = _passwords(tmp_path / "demo-passwords.txt")
    assert set(passwords) == {"annotator", "annotator2", "annotator3", "annotator4", "lead", "admin"}
    who = Newcomer(browser, live_server.url, passwords)
    try:
        # when the first annotator pre-filters both screens (after the qualification set) and writes
        # a question on each
        qualification = DEMO_QUALITY["qualification_items"]
        first = who.login("annotator")
        judged = _work_through(first, "prefilter", _judge)
        controls = ControlResult.objects.filter(user__username="annotator", stage="prefilter")
        assert judged == 2 + controls.count()
        assert controls.filter(purpose=Purpose.QUALIFICATION).count() == qualification
        assert _work_through(first, "questions-1", _write) == 2
        # and the second has nothing to add in pass 2
        second = who.login("annotator2")
        assert _work_through(second, "questions-2", _nothing) == 2
        # and every other member of the answer pool answers what waits for them
        answerers = ("annotator2", "annotator3", "annotator4")
        answered = sum(_work_through(who.login(name), "answers", _answer) for name in answerers)
        controls = ControlResult.objects.filter(stage="answers")
        assert answered >= 2 + controls.count()
        assert controls.filter(purpose=Purpose.QUALIFICATION).count() == qualification * len(answerers)
        assert not Question.objects.filter(state=QuestionState.ANSWERING).exists()
        # and every annotator passed every gold item: all of them are active in the gold stages
        assert ControlResult.objects.count() == ControlResult.objects.filter(correct=True).count() > 0
        standings = Standing.objects.filter(stage__in=["prefilter", "answers"])
        assert set(standings.values_list("status", flat=True)) == {StandingStatus.ACTIVE}

        # and the lead decides the questions, generates the short answers and exports a release
        lead = who.login("lead")
        lead.goto("/projects/demo/release/postprocess/")
        _run_job(lead, "#postprocess-job", "Start post-processing")
        _run_job(lead, "#short-answers-job", "Generate missing short answers")
        lead.goto("/projects/demo/exports/")
        lead.locator("#export-start button[type=submit]").click()
        link = lead.locator("a[href*='/download/']").first
        link.wait_for(timeout=60_000)
        with lead.expect_download() as download:
            link.click()
        path = download.value.path()

        # then the downloaded release holds both questions in the public format
        with zipfile.ZipFile(path) as release:
            names = release.namelist()
            records = [
                record
                for name in names
                if re.search(r"answers_and_bboxes/\w+\.json$", name)
                for record in json.loads(release.read(name))
            ]
        assert any(name.endswith("manifest.json") for name in names)
        assert len(records) == 2
        assert {r["question"] for r in records} == {"What is the title of this screen?"}
        assert all(truth["full_answer"].startswith("The title is ") for r in records for truth in r["ground_truth"])
    finally:
        who.close()
    assert not who.errors, f"JavaScript errors or CSP violations: {who.errors}"
