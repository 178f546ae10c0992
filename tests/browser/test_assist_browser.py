"""Model assistance in the workspace (docs/assist.md), in headless Chromium: in answers the suggestion is
drawn dashed as a pre-annotation, one key puts it in the answer, and the answer records that it was
accepted unchanged; a question without a suggestion shows none. In pre-filtering one key sets the
suggested judgments, and the judgment records whether they were kept or changed."""

from __future__ import annotations

import re

import pytest

from annotation.models import Answer, Suggestion, SuggestionStatus, SuggestionUse
from tests.browser.conftest import add_question, generated_screens, list_rows, shoot
from tests.browser.test_workspace_browser import Tally

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOTHING = "text=nothing for you right now"


def _rows(page) -> list[str]:
    return page.eval_on_selector_all("#element-list .el-text", "els => els.map(e => e.value)")


def test_one_key_accepts_the_suggested_element_and_the_answer_says_so(demo, new_page):
    project = demo["project"]
    project.assist_url = "http://127.0.0.1:9"  # the suggestion is cached: nothing calls the backend
    project.save()
    (screen,) = generated_screens(project, start_id=931000, state="answering", split="train")
    name, _time, preview = list_rows(screen)[0]
    question = add_question(screen, author=demo["author"], text=f"What did {name.text} write?")
    Suggestion.objects.create(
        project=project,
        stage="answers",
        screen=screen,
        question=question,
        status=SuggestionStatus.OK,
        calls=1,
        model_version="test",
        result={
            "elements": [{"vh_index": preview.vh_index, "bounds": preview.bounds, "text": preview.text, "score": 0.8}]
        },
    )
    page = new_page("annotator")
    page.goto("/projects/demo/work/")
    page.click('tr[data-stage="answers"] .button')
    page.wait_for_selector("#ws[data-ready]")
    # the suggestion is shown, dashed on the screenshot, and is not yet part of the answer
    assert preview.text in page.inner_text("[data-testid=suggestion]")
    assert page.locator("[data-testid=suggested-box]").count() == 1
    assert _rows(page) == []
    # one key puts it in the answer; the dashed box goes (it is an element now)
    page.locator("#question-text").blur()
    tally = Tally(page)
    tally.press("g")
    assert _rows(page) == [preview.text]
    assert page.locator("[data-testid=suggested-box]").count() == 0
    tally.press("Alt+w")
    tally.type(f"{name.text} wrote {preview.text}.")
    tally.press("Control+Enter")
    page.wait_for_selector(NOTHING)
    # what it took (docs/assist.md): no click, three keys, the full answer typed; without a suggestion the
    # same one-element answer takes a click and two keys (test_workspace_browser's tally, docs/ux.md)
    assert tally.counts() == {"clicks": 0, "drags": 0, "keys": 3, "typed": len(f"{name.text} wrote {preview.text}.")}
    answer = Answer.objects.get(question=question)
    assert answer.suggestion_use == SuggestionUse.ACCEPTED
    assert [(e.vh_index, e.text) for e in answer.elements.all()] == [(preview.vh_index, preview.text)]


def test_the_lead_asks_for_missing_suggestions_and_sees_the_job_on_the_quality_page(demo, new_page):
    from tests.factories import MembershipFactory, UserFactory
    from tests.pipeline.assist.servers import baseline

    project = demo["project"]
    lead = UserFactory(username="lena")
    MembershipFactory(project=project, user=lead, role="lead")
    (screen,) = generated_screens(project, start_id=932000, state="answering", split="train")
    name, _time, _preview = list_rows(screen)[0]
    add_question(screen, author=demo["author"], text=f"What did {name.text} write?")
    with baseline() as backend:
        project.assist_url = backend
        project.save()
        page = new_page("lena")
        page.goto("/projects/demo/quality/")
        card = page.locator("#assist-backend")
        assert card.locator("[data-job-status]").count() == 0
        card.locator('button[data-action="suggestions"]').click()
        page.wait_for_url("**/projects/demo/quality/#assist-backend")
        # the job ran (tasks run in-process here) and the card says what it did
        page.wait_for_selector('#assist-backend [data-job-status="done"]')
    # the demo's screens waiting for pre-filtering get theirs too
    said = re.search(r"(\d+) items? got a suggestion \(1 question, (\d+) screens? to pre-filter\)\.", card.inner_text())
    assert said, card.inner_text()
    made = Suggestion.objects.filter(project=project, status=SuggestionStatus.OK)
    assert int(said.group(1)) == made.count() == 1 + made.filter(stage="prefilter").count()
    assert int(said.group(2)) == made.filter(stage="prefilter").count()
    assert "Suggestions job #" in page.inner_text(".messages, [role=status], body")
    card.scroll_into_view_if_needed()
    shoot(page, "quality-suggestions-job")


def test_one_key_sets_the_suggested_pre_filtering_judgments_and_the_judgment_says_so(demo, new_page):
    from annotation.models import AssistUse, PrefilterJudgment

    project = demo["project"]
    project.assist_url = "http://127.0.0.1:9"  # the suggestion is cached: nothing calls the backend
    project.save()
    first, second = generated_screens(project, start_id=933000, sizes=((1080, 1920), (1440, 2560)))
    for screen in (first, second):
        Suggestion.objects.create(
            project=project,
            stage="prefilter",
            screen=screen,
            status=SuggestionStatus.OK,
            calls=1,
            model_version="test",
            result={"judgments": {"non_english_app": 0.1, "vh_out_of_sync": 0.85}},
        )
    page = new_page("annotator")
    page.goto("/projects/demo/work/")
    page.click('tr[data-stage="prefilter"] .button')
    page.wait_for_selector("#ws[data-ready]")
    # the suggestion is named with the model's probabilities; nothing is checked yet
    panel = page.inner_text("[data-testid=suggestion]")
    assert "English app, VH out of sync" in panel and "out of sync 85%" in panel
    assert not page.is_checked("#non_english_app") and not page.is_checked("#vh_out_of_sync")
    shoot(page, "prefilter-suggestion")
    # one key sets both boxes as suggested; the judge submits (a suggestion never submits by itself)
    tally = Tally(page)
    tally.press("g")
    assert page.is_checked("#vh_out_of_sync") and not page.is_checked("#non_english_app")
    tally.press("Control+Enter")
    page.wait_for_function(f"document.querySelector('[data-testid=rico-id]').textContent === '{second.rico_id}'")
    assert tally.counts() == {"clicks": 0, "drags": 0, "keys": 2, "typed": 0}
    judged = PrefilterJudgment.objects.get(screen=first)
    assert (judged.non_english_app, judged.vh_out_of_sync) == (False, True)
    assert AssistUse.objects.get(assignment=judged.assignment).use == SuggestionUse.ACCEPTED
    # the second screen: the judge changes the suggestion (V unchecks the box "g" checked): an edit
    page.keyboard.press("g")
    page.keyboard.press("v")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(NOTHING)
    judged = PrefilterJudgment.objects.get(screen=second)
    assert (judged.non_english_app, judged.vh_out_of_sync) == (False, False)
    assert AssistUse.objects.get(assignment=judged.assignment).use == SuggestionUse.EDITED
