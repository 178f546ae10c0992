"""Each stage end to end in headless Chromium, as an annotator would do it."""

from __future__ import annotations

import re

import pytest

from annotation.models import Assignment, AssignmentStatus, PrefilterJudgment, ScreenState
from tests.browser.conftest import make_screen, shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_prefilter_judge_a_screen(demo, new_page):
    # given two generated screens waiting for pre-filtering
    first = make_screen(demo["project"], rico_id="1001")
    second = make_screen(demo["project"], rico_id="1002", width=540)
    page = new_page("annotator")
    # when the annotator opens the workspace home and the pre-filtering stage
    page.goto("/projects/demo/work/")
    assert page.locator('tr[data-stage="prefilter"] [data-testid=available]').inner_text() == "2"
    shoot(page, "workspace-home")
    page.click('tr[data-stage="prefilter"] a.button')
    page.wait_for_selector("#overlay .cand-label")
    # then the VH is drawn over the screenshot with short class names and text
    labels = page.locator("#overlay .cand-label").all_text_contents()
    assert "TextView “Deep Squat”" in labels and "Button “Start workout”" in labels
    shoot(page, "prefilter")
    # the overlay toggles with O, the rules open with R
    page.keyboard.press("o")
    assert "overlay-off" in (page.get_attribute("#overlay", "class") or "")
    page.keyboard.press("o")
    page.keyboard.press("r")
    assert page.locator("#rules").get_attribute("open") is not None
    # when they mark it out of sync (V) and submit (Ctrl+Enter)
    page.keyboard.press("v")
    assert page.is_checked("#vh_out_of_sync")
    page.keyboard.press("Control+Enter")
    # then the next screen opens at once
    page.wait_for_url(re.compile(r"/work/a/\d+/$"))
    page.wait_for_function(f"document.querySelector('[data-testid=rico-id]').textContent === '{second.rico_id}'")
    judgment = PrefilterJudgment.objects.get(screen=first)
    assert (judgment.non_english_app, judgment.vh_out_of_sync) == (False, True)
    assert Assignment.objects.get(screen=second).status == AssignmentStatus.LEASED
    first.refresh_from_db()
    assert first.state == ScreenState.EXCLUDED


def _client_point(page, x: float, y: float) -> tuple[float, float]:
    """Screenshot pixels -> page coordinates, through the SVG overlay's box."""
    return page.evaluate(
        """([x, y]) => { const v = window.workspace.viewer; const r = v.svg.getBoundingClientRect();
           return [r.left + x * r.width / v.W, r.top + y * r.height / v.H]; }""",
        [x, y],
    )


def _click_box(page, bounds) -> None:
    left, top, right, bottom = bounds
    page.mouse.click(*_client_point(page, (left + right) / 2, (top + bottom) / 2))


def _drag(page, start, end) -> None:
    page.mouse.move(*_client_point(page, *start))
    page.mouse.down()
    page.mouse.move(*_client_point(page, (start[0] + end[0]) / 2, (start[1] + end[1]) / 2), steps=4)
    page.mouse.move(*_client_point(page, *end), steps=4)
    page.mouse.up()


def _rows(page) -> list[str]:
    return page.eval_on_selector_all("#element-list .el-text", "els => els.map(e => e.value)")


def _wait_saved(page) -> None:
    page.wait_for_function("document.querySelector('[data-testid=save-status]').dataset.state === 'saved'")


def test_questions_two_passes_by_two_writers(demo, new_page):
    from annotation.models import Question, QuestionSource

    screen = make_screen(demo["project"], rico_id="2001", state=ScreenState.QUESTIONS_1)
    # pass 1: the first writer
    page = new_page("annotator")
    page.goto("/projects/demo/work/questions-1/next/")
    page.wait_for_selector("#q0")
    page.fill("#q0", "What is the first exercise?")
    page.click("#q1")
    page.keyboard.type("How many sets of lunges?")
    # a live, non-blocking hint: counting
    page.wait_for_selector("[data-testid=hints-1] [data-kind=counting]")
    shoot(page, "questions-pass1")
    page.fill("#q1", "What is the exercise after the squat?")
    page.wait_for_selector("[data-testid=hints-1] li", state="detached")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=nothing for you right now")
    # pass 2: another writer sees pass 1 read-only
    page2 = new_page("annotator2")
    page2.goto("/projects/demo/work/")
    page2.click('tr[data-stage="questions-2"] a.button')
    page2.wait_for_selector("[data-testid=previous-questions]")
    assert page2.locator("[data-testid=previous-questions] li").all_inner_texts() == [
        "What is the first exercise?",
        "What is the exercise after the squat?",
    ]
    assert page2.locator("input[name=question]").count() == 3
    page2.click("#q0")
    page2.keyboard.type("what's the first exercise")
    page2.wait_for_selector("[data-testid=hints-0] [data-kind=duplicate]")
    shoot(page2, "questions-pass2")
    page2.fill("#q0", "How long is the rest between sets?")
    page2.keyboard.press("Control+Enter")
    page2.wait_for_selector("text=nothing for you right now")
    got = list(
        Question.objects.filter(screen=screen).order_by("position").values_list("text", "source", "author__username")
    )
    assert got == [
        ("What is the first exercise?", QuestionSource.PASS_1, "annotator"),
        ("What is the exercise after the squat?", QuestionSource.PASS_1, "annotator"),
        ("How long is the rest between sets?", QuestionSource.PASS_2, "annotator2"),
    ]


def test_nothing_to_ask_and_refusal_of_an_empty_pass(demo, new_page):
    make_screen(demo["project"], rico_id="2101", state=ScreenState.QUESTIONS_1)
    page = new_page("annotator")
    page.goto("/projects/demo/work/questions-1/next/")
    page.wait_for_selector("#q0")
    url = page.url
    # submitting nothing is refused here, with the reason next to the questions
    page.click("#submit-btn")
    assert "Nothing to ask" in page.inner_text("[data-testid=error-questions]")
    assert page.url == url
    # "nothing to ask" is an explicit action
    page.keyboard.press("Alt+n")
    page.wait_for_selector("text=nothing for you right now")
    assert Assignment.objects.get(stage="questions-1").submission == {"questions": []}
