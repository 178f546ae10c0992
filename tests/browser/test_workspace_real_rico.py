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
from tests.browser.test_workspace_browser import WORST_MISALIGNMENT, _click_box, _open

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
