"""Each stage end to end in headless Chromium, as an annotator would do it, on screens from the
demo generator (imported by the real importer)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    Candidate,
    PrefilterJudgment,
    Question,
    QuestionSource,
    ScreenState,
    Verdict,
)
from tests.browser.conftest import add_question, generated_screens, list_rows, shoot
from tests.factories import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BOTH_SIZES = ((1080, 1920), (540, 960))


def _client_point(page, x: float, y: float) -> tuple[float, float]:
    """Screenshot pixels -> page coordinates, through the SVG overlay's box."""
    return page.evaluate(
        """([x, y]) => { const v = window.workspace.viewer; const r = v.svg.getBoundingClientRect();
           return [r.left + x * r.width / v.W, r.top + y * r.height / v.H]; }""",
        [x, y],
    )


def _centre(bounds) -> tuple[float, float]:
    left, top, right, bottom = bounds
    return (left + right) / 2, (top + bottom) / 2


def _click_box(page, bounds) -> None:
    page.mouse.click(*_client_point(page, *_centre(bounds)))


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


def _open(page, stage: str) -> None:
    """Open the next item of ``stage`` as an annotator does: the GET page leases nothing, its
    button POSTs (the server redirects straight to a lease already held)."""
    page.goto(f"/projects/demo/work/{stage}/next/")
    if page.locator("[data-testid=open-next-page]").count():
        with page.expect_navigation():
            page.click("[data-testid=open-next]")
    page.wait_for_selector("#ws[data-ready]")


NOTHING = "text=nothing for you right now"


def test_prefilter_judge_a_screen(demo, new_page):
    # given two generated screens waiting for pre-filtering, one at each size
    first, second = generated_screens(demo["project"], start_id=910000, sizes=BOTH_SIZES)
    title = Candidate.objects.filter(screen=first, type="text").order_by("top").first()
    page = new_page("annotator")
    # when the annotator opens the workspace home and the pre-filtering stage
    page.goto("/projects/demo/work/")
    assert page.locator('tr[data-stage="prefilter"] [data-testid=available]').inner_text() == "2"
    shoot(page, "workspace-home")
    page.click('tr[data-stage="prefilter"] .button')
    page.wait_for_selector("#ws[data-ready]")
    # then the whole VH is drawn over the screenshot, boxes labelled "<ShortClass> “text”" where a
    # label fits, and every node (each candidate among them) listed under the panel
    page.wait_for_function("window.workspace.vhLayer.nodes.length > 0")
    labels = page.locator("#overlay .vh-label").all_text_contents()
    listed = page.locator("#vh-list li").all_text_contents()
    assert page.locator("#overlay .cand").count() == first.candidates.count() < len(listed)
    assert labels and all(
        label in listed or any(text.startswith(label.removesuffix("…”")) for text in listed) for label in labels
    )
    assert f"TextView “{title.text}”" in listed and "ImageButton “Search”" in listed
    assert any(label.startswith("TextView “") for label in labels)
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


def test_questions_two_passes_by_two_writers(demo, new_page):
    (screen,) = generated_screens(demo["project"], start_id=920000, state=ScreenState.QUESTIONS_1)
    name = list_rows(screen)[0][0].text
    # pass 1: the first writer
    page = new_page("annotator")
    _open(page, "questions-1")
    page.fill("#q0", f"What did {name} write?")
    page.keyboard.press("Enter")  # to the next field, never a half-done submit
    page.keyboard.type("How many unread messages are shown on the screen?")
    assert page.input_value("#q1") == "How many unread messages are shown on the screen?"
    # a live, non-blocking hint: counting
    page.wait_for_selector("[data-testid=hints-1] [data-kind=counting]")
    shoot(page, "questions-pass1")
    page.fill("#q1", f"At what time is the last message of {name}?")
    page.wait_for_selector("[data-testid=hints-1] li", state="detached")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(NOTHING)
    # pass 2: another writer sees pass 1 read-only
    page2 = new_page("annotator2")
    page2.goto("/projects/demo/work/")
    page2.click('tr[data-stage="questions-2"] .button')
    page2.wait_for_selector("#ws[data-ready]")
    assert page2.locator("[data-testid=previous-questions] li .q-text").all_inner_texts() == [
        f"What did {name} write?",
        f"At what time is the last message of {name}?",
    ]
    assert page2.locator("input[name=question]").count() == 3
    page2.click("#q0")
    page2.keyboard.type(f"what did {name} write")
    page2.wait_for_selector("[data-testid=hints-0] [data-kind=duplicate]")
    shoot(page2, "questions-pass2")
    # the second writer flags a pass-1 question with the writing rule it breaks
    page2.locator("[data-testid=previous-questions] li select").first.select_option("not-natural")
    page2.fill("#q0", "What is the title of this screen?")
    page2.keyboard.press("Control+Enter")
    page2.wait_for_selector(NOTHING)
    # the first writer reads the flag in My work
    page.goto("/projects/demo/my-work/")
    assert page.locator("[data-testid=pass2-flag]").inner_text() == (
        f"Pass 2 flagged What did {name} write?: Not a natural question a user of the app would ask"
    )
    assert Question.objects.get(screen=screen, position=0).flag_reason == "not-natural"
    got = list(
        Question.objects.filter(screen=screen).order_by("position").values_list("text", "source", "author__username")
    )
    assert got == [
        (f"What did {name} write?", QuestionSource.PASS_1, "annotator"),
        (f"At what time is the last message of {name}?", QuestionSource.PASS_1, "annotator"),
        ("What is the title of this screen?", QuestionSource.PASS_2, "annotator2"),
    ]


def test_nothing_to_ask_and_refusal_of_an_empty_pass(demo, new_page):
    generated_screens(demo["project"], start_id=921000, kinds=("login",), state=ScreenState.QUESTIONS_1)
    page = new_page("annotator")
    _open(page, "questions-1")
    url = page.url
    # submitting nothing is refused here, with the reason next to the questions
    page.click("#submit-btn")
    assert "Nothing to ask" in page.inner_text("[data-testid=error-questions]")
    assert page.url == url
    # "nothing to ask" is an explicit action
    page.keyboard.press("Alt+n")
    page.wait_for_selector(NOTHING)
    assert Assignment.objects.get(stage="questions-1").submission == {"questions": []}


def test_answer_select_draw_reorder_reload_submit(demo, new_page):
    (screen,) = generated_screens(demo["project"], start_id=930000, state=ScreenState.ANSWERING, split="train")
    name, time, preview = list_rows(screen)[0]
    question = add_question(screen, author=demo["author"], text=f"Waht did {name.text} write?")
    page = new_page("annotator")
    page.goto("/projects/demo/work/")
    page.click('tr[data-stage="answers"] .button')
    page.wait_for_selector("#ws[data-ready]")
    assert f"Waht did {name.text} write?" in page.inner_text("[data-testid=original-question]")
    # fix the typo in the question (the original stays shown)
    page.fill("#question-text", f"What did {name.text} write?")
    # select two candidates: click adds each, its text pre-filled
    _click_box(page, name.bounds)
    _click_box(page, preview.bounds)
    assert _rows(page) == [name.text, preview.text]
    # draw a box (off by a few pixels), then move it and resize it by its corner
    left, top, right, bottom = target = time.bounds
    _drag(page, (left - 12, top - 8), (right - 20, bottom - 12))
    page.keyboard.type(time.text)  # the new box's text field has the focus
    centre = ((left - 12 + right - 20) / 2, (top - 8 + bottom - 12) / 2)
    page.mouse.move(*_client_point(page, *centre))
    page.mouse.down()
    page.mouse.move(*_client_point(page, centre[0] + 12, centre[1] + 8), steps=5)
    page.mouse.up()
    handle = page.locator(".handle.h-se").bounding_box()
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(*_client_point(page, right, bottom), steps=5)
    page.mouse.up()
    assert _rows(page) == [name.text, preview.text, time.text]
    # reorder with the keyboard: the drawn box (selected) goes up one place
    page.locator("#element-list .el-text").nth(2).focus()
    page.keyboard.press("Alt+ArrowUp")
    assert _rows(page) == [name.text, time.text, preview.text]
    # edit a text
    page.locator("#element-list .el-text").nth(2).fill(f"{preview.text} (message)")
    # hovering a row highlights its box
    page.hover("#element-list .el-row >> nth=0")
    assert "hl" in page.get_attribute('.el-box[data-i="0"]', "class")
    shoot(page, "answers")
    _wait_saved(page)
    # reload mid-answer: the draft comes back exactly
    page.reload()
    page.wait_for_selector("#ws[data-ready] #element-list .el-row")
    assert _rows(page) == [name.text, time.text, f"{preview.text} (message)"]
    assert page.input_value("#question-text") == f"What did {name.text} write?"
    assert page.locator(".el-box").count() == 3
    # submitting without the full answer is refused here, next to the field
    url = page.url
    page.keyboard.press("Control+Enter")
    assert "full sentence" in page.inner_text("[data-testid=error-full_answer]")
    assert page.url == url
    page.keyboard.press("Alt+w")
    page.keyboard.type(f"{name.text} wrote “{preview.text}” at {time.text}.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(NOTHING)
    # what the database holds
    answer = Answer.objects.get(question=question)
    assert answer.question_text == f"What did {name.text} write?" and answer.annotator == demo["annotator"]
    assert answer.full_answer == f"{name.text} wrote “{preview.text}” at {time.text}."
    elements = list(answer.elements.order_by("position"))
    assert [(e.vh_index, e.text) for e in elements] == [
        (name.vh_index, name.text),
        (None, time.text),
        (preview.vh_index, f"{preview.text} (message)"),
    ]
    assert elements[0].bounds == name.bounds and elements[2].bounds == preview.bounds
    assert all(abs(a - b) <= 6 for a, b in zip(elements[1].bounds, target, strict=True)), elements[1].bounds


def test_mark_not_answerable_and_write_a_not_answerable_question(demo, new_page):
    (screen,) = generated_screens(
        demo["project"], start_id=940000, state=ScreenState.ANSWERING, split="train", not_answerable_sampled=True
    )
    question = add_question(screen, author=demo["author"], text="What is the phone number of the first contact?")
    page = new_page("annotator")
    # an answerer marks a question not answerable (one shortcut)
    _open(page, "answers")
    page.keyboard.press("Alt+u")
    page.wait_for_selector(NOTHING)
    assert Answer.objects.get(question=question).verdict == Verdict.NOT_ANSWERABLE
    # the not-answerable stage: one plausible question this screen cannot answer
    page2 = new_page("annotator2")
    _open(page2, "not-answerable")
    assert "cannot answer" in page2.inner_text(".rule-box")
    assert "What is the phone number of the first contact?" in page2.inner_text("[data-testid=previous-questions]")
    page2.click("#q0")
    page2.keyboard.type("How many contacts are shown on the screen?")
    page2.wait_for_selector("[data-testid=hints-0] [data-kind=counting]")
    page2.fill("#q0", "Where does the last contact live?")
    shoot(page2, "not-answerable")
    page2.keyboard.press("Control+Enter")
    page2.wait_for_selector(NOTHING)
    written = Question.objects.get(screen=screen, source=QuestionSource.NOT_ANSWERABLE)
    assert (written.text, written.author) == ("Where does the last contact live?", demo["annotator2"])


def assert_zoom_readout(page, width: int) -> None:
    """The zoom readout tells the real scale: CSS pixels per screenshot pixel, as drawn."""
    scale = float(page.get_attribute("#zoom-level", "data-scale"))
    drawn = page.evaluate("document.getElementById('canvas').getBoundingClientRect().width") / width
    assert abs(scale - drawn) < 1 / width
    assert page.inner_text("#zoom-level") == f"Zoom {round(scale * 100)}% · 1 screenshot px = {scale:.2f} CSS px"


WORST_MISALIGNMENT = """() => { const img = document.getElementById('shot').getBoundingClientRect();
  const v = window.workspace.viewer; let worst = 0;
  for (const c of v.candidates) {
    const r = document.querySelector(`.cand[data-vh="${c.vh_index}"]`).getBoundingClientRect();
    const want = [img.left + c.bounds[0] * img.width / v.W, img.top + c.bounds[1] * img.height / v.H,
                  img.left + c.bounds[2] * img.width / v.W, img.top + c.bounds[3] * img.height / v.H];
    worst = Math.max(worst, ...[r.left, r.top, r.right, r.bottom].map((g, i) => Math.abs(g - want[i])));
  }
  return worst; }"""


@pytest.mark.parametrize("size", BOTH_SIZES, ids=["1080x1920", "540x960"])
def test_boxes_stay_aligned_at_any_zoom_and_window_size(demo, new_page, size):
    generated_screens(demo["project"], start_id=950000, sizes=(size,))
    page = new_page("annotator")
    _open(page, "prefilter")
    page.wait_for_function("document.getElementById('shot').complete")
    natural = page.evaluate(
        "[document.getElementById('shot').naturalWidth, document.getElementById('shot').naturalHeight]"
    )
    assert natural == list(size)
    assert page.evaluate(WORST_MISALIGNMENT) <= 1.0
    for key in ("+", "+", "+"):
        page.keyboard.press(key)
    # the readout tells the real scale: CSS pixels per screenshot pixel
    assert_zoom_readout(page, size[0])
    assert page.evaluate(WORST_MISALIGNMENT) <= 1.0
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
    assert page.evaluate(WORST_MISALIGNMENT) <= 1.0
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.wait_for_timeout(100)
    assert page.evaluate(WORST_MISALIGNMENT) <= 1.0
    page.keyboard.press("0")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.wait_for_timeout(100)
    assert page.evaluate(WORST_MISALIGNMENT) <= 1.0
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
    (screen,) = generated_screens(demo["project"], start_id=960000, state=ScreenState.ANSWERING, split="train")
    title = Candidate.objects.filter(screen=screen, type="text").order_by("top").first()
    name, time, preview = list_rows(screen)[0]
    q1 = add_question(screen, author=demo["author"], text="What is the title of the screen?", position=0)
    q2 = add_question(screen, author=demo["author"], text="What is the latest message?", position=1)
    page = new_page("annotator")
    _open(page, "answers")
    # one element: click it (text pre-filled), W to the full answer, type, Ctrl+Enter
    one = Tally(page)
    one.click_box(title.bounds)
    one.press("w")
    one.type(f"The title is {title.text}.")
    one.press("Control+Enter")
    # the next question opens at once, no extra click
    page.wait_for_function(f"window.workspace && window.workspace.config.question.id === {q2.pk}")
    page.wait_for_selector("#ws[data-ready]")
    three = Tally(page)
    for element in (name, preview, time):  # one semantic group, in reading order
        three.click_box(element.bounds)
    three.press("w")
    three.type(f"{name.text} wrote {preview.text} at {time.text}.")
    three.press("Control+Enter")
    page.wait_for_selector(NOTHING)
    assert one.counts() == {"clicks": 1, "drags": 0, "keys": 2, "typed": len(f"The title is {title.text}.")}
    assert three.counts()["clicks"] == 3 and three.counts()["keys"] == 2 and three.counts()["drags"] == 0
    assert [e.text for e in Answer.objects.get(question=q1).elements.all()] == [title.text]
    assert [e.vh_index for e in Answer.objects.get(question=q2).elements.all()] == [
        name.vh_index,
        preview.vh_index,
        time.vh_index,
    ]


def test_keyboard_only_editing_of_the_element_list(demo, new_page):
    (screen,) = generated_screens(demo["project"], start_id=961000, state=ScreenState.ANSWERING, split="train")
    (n1, _t1, p1), (n2, _t2, _p2) = list_rows(screen)[:2]
    add_question(screen, author=demo["author"], text="Who wrote messages?")
    page = new_page("annotator")
    _open(page, "answers")
    # A adds the candidate under the cursor
    for element in (n2, n1, p1):
        page.mouse.move(*_client_point(page, *_centre(element.bounds)))
        page.keyboard.press("a")
    assert _rows(page) == [n2.text, n1.text, p1.text]
    # K / J walk the list, Alt+Up/Down move, E edits, Alt+D removes
    page.keyboard.press("k")  # from the last to the second
    page.keyboard.press("Alt+ArrowUp")
    assert _rows(page) == [n1.text, n2.text, p1.text]
    page.keyboard.press("j")  # single keys never type into a text field
    page.keyboard.press("k")
    assert _rows(page) == [n1.text, n2.text, p1.text]
    page.keyboard.press("e")  # edit the selected element's text
    page.keyboard.type("Someone")
    assert _rows(page) == ["Someone", n2.text, p1.text]
    page.keyboard.press("Alt+j")
    page.keyboard.press("Alt+ArrowDown")
    assert _rows(page) == ["Someone", p1.text, n2.text]
    page.keyboard.press("Alt+d")
    assert _rows(page) == ["Someone", p1.text]
    assert page.locator(".el-box").count() == 2


def test_skip_asks_for_a_reason_and_expired_lease_keeps_the_draft(demo, new_page):
    _first, second_screen = generated_screens(
        demo["project"], start_id=970000, kinds=("settings", "login"), state=ScreenState.QUESTIONS_1
    )
    page = new_page("annotator")
    _open(page, "questions-1")
    first = Assignment.objects.get(annotator=demo["annotator"], status=AssignmentStatus.LEASED)
    # skip: Alt+S opens the dialog, 1 picks the first quick reason, the next screen opens
    page.keyboard.press("Alt+s")
    page.wait_for_selector("#skip-dialog[open]")
    shoot(page, "skip-dialog")
    page.keyboard.press("Escape")
    page.keyboard.press("Alt+s")
    page.keyboard.press("1")
    page.wait_for_function(
        f"document.querySelector('[data-testid=rico-id]').textContent === '{second_screen.rico_id}'"
        " && document.getElementById('ws').dataset.ready"
    )
    first.refresh_from_db()
    assert first.status == AssignmentStatus.SKIPPED and first.skip_reason.startswith("Screenshot is blank")
    # a lease about to run out: the countdown warns, Alt+L extends it
    second = Assignment.objects.get(annotator=demo["annotator"], status=AssignmentStatus.LEASED)
    page.fill("#q0", "What is the email address?")
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
    assert page.input_value("#q0") == "What is the email address?"
    shoot(page, "lease-expired")
    second.refresh_from_db()
    assert second.draft == {"questions": ["What is the email address?", "", "", "", ""]}


def test_unsaved_work_survives_a_lost_connection_and_a_reload(demo, new_page):
    (screen,) = generated_screens(demo["project"], start_id=980000, state=ScreenState.ANSWERING, split="train")
    (name, time, _preview), *_ = list_rows(screen)
    add_question(screen, author=demo["author"], text="When did the first contact write?")
    page = new_page("annotator")
    _open(page, "answers")
    assignment = Assignment.objects.get(annotator=demo["annotator"], status=AssignmentStatus.LEASED)
    # the server is unreachable while the annotator works
    page.route("**/draft/", lambda route: route.abort())
    _click_box(page, name.bounds)
    _click_box(page, time.bounds)
    page.wait_for_function("document.querySelector('[data-testid=save-status]').dataset.state === 'error'")
    assert "kept in this browser" in page.inner_text("[data-testid=save-status]")
    assignment.refresh_from_db()
    assert assignment.draft == {}
    # a reload with the server back: this browser's copy wins and reaches the server
    page.unroute("**/draft/")
    page.reload()
    page.wait_for_selector("#ws[data-ready] #element-list .el-row")
    assert _rows(page) == [name.text, time.text]
    _wait_saved(page)
    assignment.refresh_from_db()
    assert [e["vh_index"] for e in assignment.draft["elements"]] == [name.vh_index, time.vh_index]
    # hovering a box highlights its row; dragging a row by its grip reorders
    page.mouse.move(*_client_point(page, *_centre(time.bounds)))
    assert "hl" in page.get_attribute('#element-list .el-row[data-i="1"]', "class")
    grip = page.locator("#element-list .el-row >> nth=1").locator(".el-grip")
    grip.drag_to(page.locator("#element-list .el-row >> nth=0"))
    assert _rows(page) == [time.text, name.text]


def test_a_logged_out_autosave_is_not_reported_as_saved(demo, new_page):
    generated_screens(demo["project"], start_id=990000, kinds=("settings",), state=ScreenState.QUESTIONS_1)
    page = new_page("annotator")
    _open(page, "questions-1")
    page.context.clear_cookies(name="sessionid")  # the session ends (logged out elsewhere, or expired)
    page.fill("#q0", "Which options are on?")
    page.wait_for_function("document.querySelector('[data-testid=save-status]').dataset.state === 'error'")
    assert "logged out" in page.inner_text("[data-testid=save-status]")
    # the work is still in this browser: after logging in again, the page brings it back
    page.goto("/login/")
    page.fill("input[name=username]", "annotator")
    page.fill("input[name=password]", PASSWORD)
    page.click("form button[type=submit]")
    _open(page, "questions-1")
    assert page.input_value("#q0") == "Which options are on?"
    _wait_saved(page)
    assert Assignment.objects.get(stage="questions-1").draft["questions"][0] == "Which options are on?"


def _focus(page) -> str:
    """What has the keyboard: "text of element N", "full answer", or the tag of anything else."""
    return page.evaluate(
        """() => { const a = document.activeElement; if (!a) return "";
           if (a.classList.contains("el-text")) return a.getAttribute("aria-label");
           return a.id || a.tagName; }"""
    )


def test_focus_follows_what_the_annotator_clicked_and_rows_say_where_their_text_came_from(demo, new_page):
    # given a settings screen: checkboxes without VH text, titles with it
    (screen,) = generated_screens(
        demo["project"], start_id=962000, kinds=("settings",), state=ScreenState.ANSWERING, split="train"
    )
    box = Candidate.objects.filter(screen=screen, class_name__endswith="CheckBox", text="").order_by("top").first()
    title = Candidate.objects.filter(screen=screen, type="text").exclude(text="").order_by("top").first()
    assert box is not None and title is not None
    add_question(screen, author=demo["author"], text="Is the first setting on?")
    page = new_page("annotator")
    _open(page, "answers")
    boxes_on = page.is_checked("#overlay-toggle")
    # when they click the text candidate: it is added with its VH text, and the row says so
    _click_box(page, title.bounds)
    assert page.get_attribute("[data-testid=element-origin] >> nth=0", "data-origin") == "vh"
    assert _focus(page) == "BODY" or not _focus(page).startswith("Text of")
    # when they click the checkbox (no VH text): the cursor goes to its text field, so "off" is text
    _click_box(page, box.bounds)
    assert _focus(page) == "Text of element 2"
    page.keyboard.type("off")
    assert _rows(page) == [title.text, "off"]
    assert page.is_checked("#overlay-toggle") == boxes_on  # "o" did not toggle the boxes
    assert page.get_attribute("[data-testid=element-origin] >> nth=1", "data-origin") == "typed"
    # Esc leaves the text field: single keys are shortcuts again (k selects the previous element)
    page.keyboard.press("Escape")
    assert not _focus(page).startswith("Text of")
    page.keyboard.press("k")
    assert page.locator(".el-row.sel").get_attribute("data-i") == "0"
    # editing the VH text makes it typed
    page.keyboard.press("e")
    page.keyboard.type(" (edited)")
    assert page.get_attribute("[data-testid=element-origin] >> nth=0", "data-origin") == "typed"
    # a drawn box takes the cursor in its text; clicking the box gives the keys to the box
    left, top = 20, screen.height - 300
    _drag(page, (left, top), (left + 120, top + 60))
    assert _focus(page) == "Text of element 3"
    page.keyboard.type("drawn")
    before = page.evaluate("window.workspace.editor.elements[2].bounds")
    _click_box(page, before)
    assert not _focus(page).startswith("Text of")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowDown")
    after = page.evaluate("window.workspace.editor.elements[2].bounds")
    assert after == [before[0] + 1, before[1], before[2] + 1, before[3] + 10]
    assert _rows(page)[2] == "drawn"
    # the help lists each group once, and the nudge once
    page.keyboard.press("?")
    page.wait_for_selector("#help-dialog[open]")
    groups = page.eval_on_selector_all("#shortcut-table th", "ths => ths.map(t => t.textContent)")
    assert len(groups) == len(set(groups)) and "General" in groups
    labels = page.eval_on_selector_all("#shortcut-table td:nth-child(2)", "tds => tds.map(t => t.textContent)")
    assert len([label for label in labels if "Nudge" in label]) == 1
    page.keyboard.press("Escape")


def _status(assignment_id: int) -> str:
    return Assignment.objects.get(pk=assignment_id).status


def test_an_untouched_item_is_given_back_when_the_page_is_left(demo, new_page):
    # given two screens waiting for questions
    generated_screens(demo["project"], start_id=963000, kinds=("settings", "login"), state=ScreenState.QUESTIONS_1)
    page = new_page("annotator")
    # when the annotator opens the stage and leaves the item untouched for the workspace home
    _open(page, "questions-1")
    first = page.evaluate("window.workspace.config.assignment_id")
    page.goto("/projects/demo/work/")
    # then its lease is released at once (a beacon on pagehide, through the CSRF check)
    deadline = timezone.now() + timedelta(seconds=10)
    while _status(first) != AssignmentStatus.RELEASED and timezone.now() < deadline:
        page.wait_for_timeout(100)
    assert _status(first) == AssignmentStatus.RELEASED
    # and an item they worked on keeps its lease and its draft when they leave
    _open(page, "questions-1")
    second = page.evaluate("window.workspace.config.assignment_id")
    page.fill("#q0", "What is the title of this screen?")
    _wait_saved(page)
    page.goto("/projects/demo/work/")
    page.wait_for_timeout(500)
    assert _status(second) == AssignmentStatus.LEASED
    # and submitting is no leaving: the submitted item stays submitted, the next one opens leased
    page.goto(f"/projects/demo/work/a/{second}/")
    page.wait_for_selector("#ws[data-ready]")
    page.click("#submit-btn")
    page.wait_for_load_state()
    page.wait_for_timeout(500)
    assert _status(second) == AssignmentStatus.SUBMITTED
    assert Assignment.objects.filter(annotator=demo["annotator"], status=AssignmentStatus.LEASED).count() <= 1


def test_question_hints_come_back_after_a_reload(demo, new_page):
    generated_screens(demo["project"], start_id=964000, state=ScreenState.QUESTIONS_1)
    page = new_page("annotator")
    _open(page, "questions-1")
    # given a question that gets a hint as it is typed
    page.click("#q0")
    page.keyboard.type("How many contacts are shown on the screen?")
    page.wait_for_selector("[data-testid=hints-0] [data-kind=counting]")
    _wait_saved(page)
    # when the page is reloaded, then the restored question shows its hint again
    page.reload()
    page.wait_for_selector("#ws[data-ready]")
    assert page.input_value("#q0") == "How many contacts are shown on the screen?"
    page.wait_for_selector("[data-testid=hints-0] [data-kind=counting]")
