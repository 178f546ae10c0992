"""Model assistance in the answers workspace (docs/assist.md), in headless Chromium: the suggestion is
drawn dashed as a pre-annotation, one key puts it in the answer, and the answer records that it was
accepted unchanged; a question without a suggestion shows none."""

from __future__ import annotations

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
    assert "1 question got a suggestion." in card.inner_text()
    assert "Suggestions job #" in page.inner_text(".messages, [role=status], body")
    assert Suggestion.objects.filter(project=project, status=SuggestionStatus.OK).count() == 1
    card.scroll_into_view_if_needed()
    shoot(page, "quality-suggestions-job")
