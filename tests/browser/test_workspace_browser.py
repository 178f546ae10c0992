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
    page.wait_for_selector("#ws[data-ready]")
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
    page.wait_for_selector("#ws[data-ready]")
    page.fill("#q0", "What is the first exercise?")
    page.keyboard.press("Enter")  # to the next field, never a half-done submit
    page.keyboard.type("How many sets of lunges?")
    assert page.input_value("#q1") == "How many sets of lunges?"
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
    page2.wait_for_selector("#ws[data-ready]")
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
    page.wait_for_selector("#ws[data-ready]")
    url = page.url
    # submitting nothing is refused here, with the reason next to the questions
    page.click("#submit-btn")
    assert "Nothing to ask" in page.inner_text("[data-testid=error-questions]")
    assert page.url == url
    # "nothing to ask" is an explicit action
    page.keyboard.press("Alt+n")
    page.wait_for_selector("text=nothing for you right now")
    assert Assignment.objects.get(stage="questions-1").submission == {"questions": []}


def test_answer_select_draw_reorder_reload_submit(demo, new_page):
    from annotation.models import Answer
    from tests.browser.conftest import ROWS, UNLISTED_TEXT, add_question

    screen = make_screen(demo["project"], rico_id="3001", state=ScreenState.ANSWERING, split="train")
    question = add_question(screen, author=demo["author"], text="What is the frist exercise?")
    squat, sets = ROWS[2][3], ROWS[3][3]
    page = new_page("annotator")
    page.goto("/projects/demo/work/")
    page.click('tr[data-stage="answers"] a.button')
    page.wait_for_selector("#ws[data-ready]")
    assert "What is the frist exercise?" in page.inner_text("[data-testid=original-question]")
    # fix the typo in the question (the original stays shown)
    page.fill("#question-text", "What is the first exercise?")
    # select two candidates: click adds each, its text pre-filled
    _click_box(page, squat)
    _click_box(page, sets)
    assert _rows(page) == ["Deep Squat", "3 sets"]
    # draw a box where the VH has nothing, then move it and resize it by its corner
    left, top, right, bottom = UNLISTED_TEXT[1]
    _drag(page, (left - 30, top - 20), (right - 50, bottom - 30))
    page.keyboard.type("Rest 90 s between sets")  # the new box's text field has the focus
    centre = ((left - 30 + right - 50) / 2, (top - 20 + bottom - 30) / 2)
    page.mouse.move(*_client_point(page, *centre))
    page.mouse.down()
    page.mouse.move(*_client_point(page, centre[0] + 30, centre[1] + 20), steps=5)
    page.mouse.up()
    handle = page.locator(".handle.h-se").bounding_box()
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(*_client_point(page, right, bottom), steps=5)
    page.mouse.up()
    assert _rows(page) == ["Deep Squat", "3 sets", "Rest 90 s between sets"]
    # reorder with the keyboard: the drawn box (selected) goes up one place
    page.locator("#element-list .el-text").nth(2).focus()
    page.keyboard.press("Alt+ArrowUp")
    assert _rows(page) == ["Deep Squat", "Rest 90 s between sets", "3 sets"]
    # edit a text
    page.locator("#element-list .el-text").nth(2).fill("3 sets of squats")
    # hovering a row highlights its box
    page.hover("#element-list .el-row >> nth=0")
    assert "hl" in page.get_attribute('.el-box[data-i="0"]', "class")
    shoot(page, "answers")
    _wait_saved(page)
    # reload mid-answer: the draft comes back exactly
    page.reload()
    page.wait_for_selector("#ws[data-ready] #element-list .el-row")
    assert _rows(page) == ["Deep Squat", "Rest 90 s between sets", "3 sets of squats"]
    assert page.input_value("#question-text") == "What is the first exercise?"
    assert page.locator(".el-box").count() == 3
    # submitting without the full answer is refused here, next to the field
    url = page.url
    page.keyboard.press("Control+Enter")
    assert "full sentence" in page.inner_text("[data-testid=error-full_answer]")
    assert page.url == url
    page.keyboard.press("Alt+w")
    page.keyboard.type("The first exercise is the deep squat.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=nothing for you right now")
    # what the database holds
    answer = Answer.objects.get(question=question)
    assert answer.question_text == "What is the first exercise?" and answer.annotator == demo["annotator"]
    assert answer.full_answer == "The first exercise is the deep squat."
    elements = list(answer.elements.order_by("position"))
    assert [(e.vh_index, e.text) for e in elements] == [
        (12, "Deep Squat"),
        (None, "Rest 90 s between sets"),
        (13, "3 sets of squats"),
    ]
    assert elements[0].bounds == list(squat) and elements[2].bounds == list(sets)
    drawn = elements[1].bounds
    assert all(abs(a - b) <= 6 for a, b in zip(drawn, UNLISTED_TEXT[1], strict=True)), drawn


def test_mark_not_answerable_and_write_a_not_answerable_question(demo, new_page):
    from annotation.models import Answer, Question, QuestionSource, Verdict
    from tests.browser.conftest import add_question

    screen = make_screen(
        demo["project"], rico_id="4001", state=ScreenState.ANSWERING, split="train", not_answerable_sampled=True
    )
    question = add_question(screen, author=demo["author"], text="Who is the trainer?")
    page = new_page("annotator")
    # an answerer marks a question not answerable (one shortcut)
    page.goto("/projects/demo/work/answers/next/")
    page.wait_for_selector("#ws[data-ready]")
    page.keyboard.press("Alt+u")
    page.wait_for_selector("text=nothing for you right now")
    assert Answer.objects.get(question=question).verdict == Verdict.NOT_ANSWERABLE
    # the not-answerable stage: one plausible question this screen cannot answer
    page2 = new_page("annotator2")
    page2.goto("/projects/demo/work/not-answerable/next/")
    page2.wait_for_selector("#ws[data-ready]")
    assert "cannot answer" in page2.inner_text(".rule-box")
    page2.click("#q0")
    page2.keyboard.type("How many calories does the workout burn?")
    page2.wait_for_selector("[data-testid=hints-0] [data-kind=counting]")
    page2.fill("#q0", "What is the trainer's phone number?")
    shoot(page2, "not-answerable")
    page2.keyboard.press("Control+Enter")
    page2.wait_for_selector("text=nothing for you right now")
    written = Question.objects.get(screen=screen, source=QuestionSource.NOT_ANSWERABLE)
    assert (written.text, written.author) == ("What is the trainer's phone number?", demo["annotator2"])


@pytest.mark.parametrize("width", [1080, 540])
def test_boxes_stay_aligned_at_any_zoom_and_window_size(demo, new_page, width):
    make_screen(demo["project"], rico_id=f"5{width}", width=width, state=ScreenState.PREFILTER)
    page = new_page("annotator")
    page.goto("/projects/demo/work/prefilter/next/")
    page.wait_for_selector("#ws[data-ready]")
    page.wait_for_function("document.getElementById('shot').complete")
    worst = """() => { const img = document.getElementById('shot').getBoundingClientRect();
      const v = window.workspace.viewer; let worst = 0;
      for (const c of v.candidates) {
        const r = document.querySelector(`.cand[data-vh="${c.vh_index}"]`).getBoundingClientRect();
        const want = [img.left + c.bounds[0] * img.width / v.W, img.top + c.bounds[1] * img.height / v.H,
                      img.left + c.bounds[2] * img.width / v.W, img.top + c.bounds[3] * img.height / v.H];
        const got = [r.left, r.top, r.right, r.bottom];
        worst = Math.max(worst, ...got.map((g, i) => Math.abs(g - want[i])));
      }
      return worst; }"""
    natural = page.evaluate(
        "[document.getElementById('shot').naturalWidth, document.getElementById('shot').naturalHeight]"
    )
    assert natural == [width, width * 16 // 9]
    assert page.evaluate(worst) <= 1.0
    for key in ("+", "+", "+"):
        page.keyboard.press(key)
    assert page.inner_text("#zoom-level") != "100%"
    assert page.evaluate(worst) <= 1.0
    # pan: drag the zoomed screenshot
    scroll = "[document.getElementById('viewport').scrollLeft, document.getElementById('viewport').scrollTop]"
    before = page.evaluate(scroll)
    view = page.locator("#viewport").bounding_box()
    cx, cy = view["x"] + view["width"] / 2, view["y"] + view["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx - 60, cy - 120, steps=5)
    page.mouse.up()
    after = page.evaluate(scroll)
    assert after[1] >= before[1] + 100, (before, after)
    assert page.evaluate(worst) <= 1.0
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.wait_for_timeout(100)
    assert page.evaluate(worst) <= 1.0
    page.keyboard.press("0")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.wait_for_timeout(100)
    assert page.evaluate(worst) <= 1.0
    # the help lists every shortcut
    page.keyboard.press("?")
    assert page.locator("#help-dialog[open]").count() == 1
    assert "Toggle: VH out of sync" in page.inner_text("#shortcut-table")


class Tally:
    """Counts what an annotator does: clicks, drags, shortcut keys and typed characters."""

    def __init__(self, page) -> None:
        self.page = page
        self.clicks = self.drags = self.keys = self.typed = 0

    def click_box(self, bounds) -> None:
        self.clicks += 1
        _click_box(self.page, bounds)

    def press(self, key: str) -> None:
        self.keys += 1
        self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.typed += len(text)
        self.page.keyboard.type(text)

    def counts(self) -> dict[str, int]:
        return {"clicks": self.clicks, "drags": self.drags, "keys": self.keys, "typed": self.typed}


def test_clicks_and_keys_of_a_one_and_a_three_element_answer(demo, new_page):
    """The figures of docs/ux.md: a typical one-element and three-element answer."""
    from annotation.models import Answer
    from tests.browser.conftest import ROWS, add_question

    screen = make_screen(demo["project"], rico_id="6001", state=ScreenState.ANSWERING, split="train")
    q1 = add_question(screen, author=demo["author"], text="What is the name of the workout?", position=0)
    q2 = add_question(screen, author=demo["author"], text="What is the first exercise?", position=1)
    page = new_page("annotator")
    page.goto("/projects/demo/work/answers/next/")
    page.wait_for_selector("#ws[data-ready]")
    # one element: click it (text pre-filled), W to the full answer, type, Ctrl+Enter
    one = Tally(page)
    one.click_box(ROWS[0][3])
    one.press("w")
    one.type("The workout is called Leg day workout.")
    one.press("Control+Enter")
    # the next question opens at once, no extra click
    page.wait_for_function(f"window.workspace && window.workspace.config.question.id === {q2.pk}")
    three = Tally(page)
    for row in ROWS[2:5]:
        three.click_box(row[3])
    three.press("w")
    three.type("The first exercise is Deep Squat, 3 sets of 15.")
    three.press("Control+Enter")
    page.wait_for_selector("text=nothing for you right now")
    assert one.counts() == {"clicks": 1, "drags": 0, "keys": 2, "typed": 38}
    assert three.counts() == {"clicks": 3, "drags": 0, "keys": 2, "typed": 47}
    assert [e.text for e in Answer.objects.get(question=q1).elements.all()] == ["Leg day workout"]
    assert [e.vh_index for e in Answer.objects.get(question=q2).elements.all()] == [12, 13, 14]


def test_keyboard_only_editing_of_the_element_list(demo, new_page):
    from tests.browser.conftest import ROWS, add_question

    screen = make_screen(demo["project"], rico_id="6101", state=ScreenState.ANSWERING, split="train")
    add_question(screen, author=demo["author"], text="What are the exercises?")
    page = new_page("annotator")
    page.goto("/projects/demo/work/answers/next/")
    page.wait_for_selector("#ws[data-ready]")
    # A adds the candidate under the cursor
    for row in (ROWS[5], ROWS[2], ROWS[3]):
        left, top, right, bottom = row[3]
        page.mouse.move(*_client_point(page, (left + right) / 2, (top + bottom) / 2))
        page.keyboard.press("a")
    assert _rows(page) == ["Lunge", "Deep Squat", "3 sets"]
    # K / J walk the list, Alt+Down moves, Delete removes
    page.keyboard.press("k")  # from the last (3 sets) to Deep Squat
    page.keyboard.press("Alt+ArrowUp")
    assert _rows(page) == ["Deep Squat", "Lunge", "3 sets"]
    page.keyboard.press("j")  # single keys never type into a text field
    page.keyboard.press("k")
    assert _rows(page) == ["Deep Squat", "Lunge", "3 sets"]
    page.keyboard.press("e")  # edit the selected element's text
    page.keyboard.type("Deep squat x3")
    assert _rows(page) == ["Deep squat x3", "Lunge", "3 sets"]
    page.keyboard.press("Alt+j")
    page.keyboard.press("Alt+ArrowDown")
    assert _rows(page) == ["Deep squat x3", "3 sets", "Lunge"]
    page.keyboard.press("Alt+d")
    assert _rows(page) == ["Deep squat x3", "3 sets"]
    assert page.locator(".el-box").count() == 2


def test_skip_asks_for_a_reason_and_expired_lease_keeps_the_draft(demo, new_page):
    from datetime import timedelta

    from django.utils import timezone

    make_screen(demo["project"], rico_id="7001", state=ScreenState.QUESTIONS_1)
    make_screen(demo["project"], rico_id="7002", state=ScreenState.QUESTIONS_1)
    page = new_page("annotator")
    page.goto("/projects/demo/work/questions-1/next/")
    page.wait_for_selector("#ws[data-ready]")
    first = Assignment.objects.get(annotator=demo["annotator"], status=AssignmentStatus.LEASED)
    # skip: Alt+S opens the dialog, 1 picks the first quick reason, the next screen opens
    page.keyboard.press("Alt+s")
    page.wait_for_selector("#skip-dialog[open]")
    shoot(page, "skip-dialog")
    page.keyboard.press("Escape")
    page.keyboard.press("Alt+s")
    page.keyboard.press("1")
    page.wait_for_function(
        "document.querySelector('[data-testid=rico-id]').textContent === '7002'"
        " && document.getElementById('ws').dataset.ready"
    )
    first.refresh_from_db()
    assert first.status == AssignmentStatus.SKIPPED and first.skip_reason.startswith("Screenshot is blank")
    # a lease about to run out: the countdown warns, Alt+L extends it
    second = Assignment.objects.get(annotator=demo["annotator"], status=AssignmentStatus.LEASED)
    page.fill("#q0", "What is the first exercise?")
    _wait_saved(page)
    Assignment.objects.filter(pk=second.pk).update(lease_expires_at=timezone.now() + timedelta(seconds=90))
    page.reload()
    page.wait_for_selector("#lease.warn")
    assert "less than 5 minutes" in page.inner_text("[data-testid=banner]")
    page.keyboard.press("Alt+l")
    page.wait_for_function("!document.querySelector('#lease').classList.contains('warn')")
    second.refresh_from_db()
    assert second.lease_expires_at > timezone.now() + timedelta(minutes=25)
    # an expired lease: a clear message, the draft is kept
    Assignment.objects.filter(pk=second.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=5))
    page.reload()
    page.wait_for_selector("#lease.expired")
    assert "expired" in page.inner_text("[data-testid=banner]") and "kept" in page.inner_text("[data-testid=banner]")
    assert page.input_value("#q0") == "What is the first exercise?"
    shoot(page, "lease-expired")
    second.refresh_from_db()
    assert second.draft == {"questions": ["What is the first exercise?", "", "", "", ""]}


def test_unsaved_work_survives_a_lost_connection_and_a_reload(demo, new_page):
    from tests.browser.conftest import ROWS, add_question

    screen = make_screen(demo["project"], rico_id="8001", state=ScreenState.ANSWERING, split="train")
    add_question(screen, author=demo["author"], text="What is the second exercise?")
    page = new_page("annotator")
    page.goto("/projects/demo/work/answers/next/")
    page.wait_for_selector("#ws[data-ready]")
    assignment = Assignment.objects.get(annotator=demo["annotator"], status=AssignmentStatus.LEASED)
    # the server is unreachable while the annotator works
    page.route("**/draft/", lambda route: route.abort())
    _click_box(page, ROWS[5][3])
    _click_box(page, ROWS[6][3])
    page.wait_for_function("document.querySelector('[data-testid=save-status]').dataset.state === 'error'")
    assert "kept in this browser" in page.inner_text("[data-testid=save-status]")
    assignment.refresh_from_db()
    assert assignment.draft == {}
    # a reload with the server back: this browser's copy wins and reaches the server
    page.unroute("**/draft/")
    page.reload()
    page.wait_for_selector("#ws[data-ready] #element-list .el-row")
    assert _rows(page) == ["Lunge", "3 sets"]
    _wait_saved(page)
    assignment.refresh_from_db()
    assert [e["vh_index"] for e in assignment.draft["elements"]] == [15, 16]
    # hovering a box highlights its row; dragging a row by its grip reorders
    left, top, right, bottom = ROWS[6][3]
    page.mouse.move(*_client_point(page, (left + right) / 2, (top + bottom) / 2))
    assert "hl" in page.get_attribute('#element-list .el-row[data-i="1"]', "class")
    page.locator("#element-list .el-row >> nth=1").locator(".el-grip").drag_to(
        page.locator("#element-list .el-row >> nth=0")
    )
    assert _rows(page) == ["3 sets", "Lunge"]


def test_a_logged_out_autosave_is_not_reported_as_saved(demo, new_page):
    make_screen(demo["project"], rico_id="8101", state=ScreenState.QUESTIONS_1)
    page = new_page("annotator")
    page.goto("/projects/demo/work/questions-1/next/")
    page.wait_for_selector("#ws[data-ready]")
    page.context.clear_cookies(name="sessionid")  # the session ends (logged out elsewhere, or expired)
    page.fill("#q0", "What is the first exercise?")
    page.wait_for_function("document.querySelector('[data-testid=save-status]').dataset.state === 'error'")
    assert "logged out" in page.inner_text("[data-testid=save-status]")
    # the work is still in this browser: after logging in again, the reload brings it back
    page.goto("/login/")
    page.fill("input[name=username]", "annotator")
    page.fill("input[name=password]", "pass-word-123")
    page.click("form button[type=submit]")
    page.goto("/projects/demo/work/questions-1/next/")
    page.wait_for_selector("#ws[data-ready]")
    assert page.input_value("#q0") == "What is the first exercise?"
    _wait_saved(page)
    assert Assignment.objects.get(stage="questions-1").draft["questions"][0] == "What is the first exercise?"
