"""The workspace on real RICO screens (../shared/data, imported by the real importer):
the VH overlay lines up with the real screenshot at both sizes, and a real ScreenQA question
is answered by clicking the real VH leaf."""

from __future__ import annotations

import json
import shutil

import pytest

from annotation.models import Answer, Candidate, Screen, ScreenState
from pipeline.ingest import import_screens
from tests.browser.conftest import add_question, shoot
from tests.browser.test_workspace_browser import WORST_MISALIGNMENT, _click_box, _open, assert_zoom_readout

pytestmark = [pytest.mark.browser, pytest.mark.realdata, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def real_screens(demo, shared_data, tmp_path):
    """Screens 33694 (540x960, with real ScreenQA questions) and 3361 (1080x1920), imported."""
    folder = tmp_path / "rico"
    folder.mkdir()
    for rico_id in ("33694", "3361"):
        for ext in ("jpg", "json"):
            shutil.copy(shared_data / "rico" / "screens" / f"{rico_id}.{ext}", folder / f"{rico_id}.{ext}")
    summary = import_screens(project=demo["project"], source=folder)
    assert sorted(summary.imported) == ["3361", "33694"], summary.rejected
    return {s.rico_id: s for s in Screen.objects.filter(project=demo["project"])}


def test_real_screens_overlay_is_aligned_at_both_sizes(demo, new_page, real_screens):
    assert {(s.width, s.height) for s in real_screens.values()} == {(1080, 1920), (540, 960)}
    page = new_page("annotator")
    seen = set()
    for _ in real_screens:
        _open(page, "prefilter")
        page.wait_for_function("document.getElementById('shot').complete")
        rico_id = page.inner_text("[data-testid=rico-id]")
        seen.add(rico_id)
        screen = real_screens[rico_id]
        assert page.locator("#overlay .cand").count() == Candidate.objects.filter(screen=screen).count() > 5
        assert page.evaluate(WORST_MISALIGNMENT) <= 1.0
        page.keyboard.press("+")
        page.keyboard.press("+")
        assert page.evaluate(WORST_MISALIGNMENT) <= 1.0
        page.keyboard.press("0")
        if rico_id == "33694":
            shoot(page, "prefilter-rico")
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")  # English, in sync
    assert seen == set(real_screens)


def test_real_question_answered_by_clicking_the_real_leaf(demo, new_page, real_screens, shared_data):
    screen = real_screens["33694"]
    Screen.objects.filter(pk=screen.pk).update(state=ScreenState.ANSWERING, split="validation")
    records = json.loads((shared_data / "screen_qa" / "short_answers" / "validation.json").read_text())
    real = next(r for r in records if r["image_id"] == 33694 and r["question"].endswith("police department?"))
    question = add_question(screen, author=demo["author"], text=real["question"])
    leaf = Candidate.objects.get(screen=screen, text="Chicago Police")
    page = new_page("annotator")
    _open(page, "answers")
    _click_box(page, leaf.bounds)
    assert page.eval_on_selector_all("#element-list .el-text", "els => els.map(e => e.value)") == ["Chicago Police"]
    page.keyboard.press("w")
    page.keyboard.type("The name of the police department is Chicago Police.")
    shoot(page, "answers-rico")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=nothing for you right now")
    answer = Answer.objects.get(question=question)
    assert [(e.vh_index, e.text, e.bounds) for e in answer.elements.all()] == [
        (leaf.vh_index, "Chicago Police", leaf.bounds)
    ]
    assert real["ground_truth"] == ["Chicago Police"]


# Every placed label of the VH layer, the text leaves, and the image size, in screenshot pixels.
VH_LABELS = """() => { const layer = window.workspace.vhLayer; const v = window.workspace.viewer;
  const labels = [...document.querySelectorAll('#overlay .vh-label-bg')].map((r) =>
    ['x', 'y', 'width', 'height'].map((a) => Number(r.getAttribute(a))));
  const texts = layer.nodes.filter((n) => n.leaf && n.text.trim()).map((n) => n.bounds);
  return { W: v.W, H: v.H, labels, texts, nodes: layer.nodes.length }; }"""


def _assert_labels_placed(found) -> None:
    """No two labels overlap, each lies inside the image, none covers a leaf's text."""
    labels, width, height = found["labels"], found["W"], found["H"]
    assert labels
    for x, y, w, h in labels:
        assert x >= 0 and y >= 0 and x + w <= width + 1e-6 and y + h <= height + 1e-6, (x, y, w, h)
    for i, (x, y, w, h) in enumerate(labels):
        for x2, y2, w2, h2 in labels[i + 1 :]:
            assert not (x < x2 + w2 and x2 < x + w and y < y2 + h2 and y2 < y + h), ((x, y, w, h), (x2, y2, w2, h2))
        for left, top, right, bottom in found["texts"]:
            assert not (x < right and left < x + w and y < bottom and top < y + h), ((x, y, w, h), (left, top))


def test_prefilter_draws_the_whole_vh_with_labels_that_never_collide(demo, new_page, real_screens):
    # given the two real screens waiting for pre-filtering
    page = new_page("annotator")
    for _ in real_screens:
        # when the judge opens one
        _open(page, "prefilter")
        page.wait_for_function("document.getElementById('shot').complete")
        page.wait_for_function("window.workspace.vhLayer.nodes.length > 0")
        rico_id = page.inner_text("[data-testid=rico-id]")
        screen = real_screens[rico_id]
        # then every shown VH node is there (containers too: more nodes than candidates), the
        # leaves are exactly the candidates, and every node is in the list
        found = page.evaluate(VH_LABELS)
        leaves = page.evaluate("window.workspace.vhLayer.nodes.filter((n) => n.leaf).map((n) => n.vh_index)")
        assert leaves == list(
            Candidate.objects.filter(screen=screen).order_by("vh_index").values_list("vh_index", flat=True)
        )
        assert found["nodes"] > len(leaves)
        assert page.locator("#vh-list li").count() == found["nodes"]
        # and the labels are placed: inside the image, apart, off the text being judged
        _assert_labels_placed(found)
        fit_labels = len(found["labels"])
        # the zoom readout tells the real scale, and zooming in places more labels
        assert_zoom_readout(page, screen.width)
        readout = page.inner_text("[data-testid=zoom-level]")
        if rico_id == "33694":
            shoot(page, "prefilter-vh-rico")
        page.keyboard.press("+")
        page.keyboard.press("+")
        page.wait_for_function(f"document.querySelector('[data-testid=zoom-level]').textContent !== {readout!r}")
        page.wait_for_timeout(100)  # placement runs one frame after the layout
        assert_zoom_readout(page, screen.width)
        zoomed = page.evaluate(VH_LABELS)
        _assert_labels_placed(zoomed)
        assert len(zoomed["labels"]) > fit_labels
        if rico_id == "33694":
            shoot(page, "prefilter-vh-rico-zoomed")
        # H hides the VH layer (containers and labels), and shows it again
        page.keyboard.press("0")
        page.keyboard.press("h")
        assert page.locator("#overlay .vh-labels").is_hidden()
        assert not page.is_checked("#vh-toggle")
        page.keyboard.press("h")
        assert page.locator("#overlay .vh-labels").is_visible()
        # a hidden label is one hover away: the tooltip names the innermost node under the pointer
        leaf = Candidate.objects.filter(screen=screen).exclude(text="").order_by("vh_index").first()
        box = page.locator("#shot").bounding_box()
        k = box["width"] / screen.width
        page.mouse.move(box["x"] + (leaf.left + leaf.right) / 2 * k, box["y"] + (leaf.top + leaf.bottom) / 2 * k)
        page.wait_for_selector(".vh-tip:not([hidden])")
        assert leaf.text.split()[0] in page.inner_text(".vh-tip")
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")


def test_the_densest_real_screen_keeps_its_labels_apart_at_any_window_size(demo, new_page, shared_data, tmp_path):
    """Screen 33648 (1080x1920, 192 shown VH nodes: the most of the real screens here)."""
    folder = tmp_path / "dense"
    folder.mkdir()
    for ext in ("jpg", "json"):
        shutil.copy(shared_data / "rico" / "screens" / f"33648.{ext}", folder / f"33648.{ext}")
    assert import_screens(project=demo["project"], source=folder).imported == ["33648"]
    page = new_page("annotator")
    _open(page, "prefilter")
    page.wait_for_function("window.workspace.vhLayer.nodes.length > 0")
    found = page.evaluate(VH_LABELS)
    assert found["nodes"] == 192
    _assert_labels_placed(found)
    shoot(page, "prefilter-vh-dense")
    # when the window shrinks, the readout and the labels follow
    before = page.inner_text("[data-testid=zoom-level]")
    page.set_viewport_size({"width": 1024, "height": 600})
    page.wait_for_function(f"document.querySelector('[data-testid=zoom-level]').textContent !== {before!r}")
    page.wait_for_timeout(100)
    assert_zoom_readout(page, 1080)
    _assert_labels_placed(page.evaluate(VH_LABELS))
    # the key is in the help, which is made from the same registry as the handlers
    page.keyboard.press("?")
    assert "Whole view hierarchy on / off" in page.inner_text("#shortcut-table")
    page.keyboard.press("Escape")
    # every node stays reachable from the keyboard: Tab into the list shows its box and label
    page.click("#vh-list summary")
    page.focus("#vh-list button[data-k='5']")
    assert page.locator(".vh-tip").is_visible()
    assert page.get_attribute("#overlay .vh-hi", "visibility") == "visible"
