"""Review in Chromium: a writer's first question set (qualifying by review, so it is sampled) and
an answer are reviewed by a lead, who sees what was written and the answer's elements drawn on
the screenshot, rejects the questions with a rule and a comment and accepts the answer; the
writer then finds the rejection, its rule and the comment on their "My work" page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Question, Review, ReviewState, ScreenState, Standing
from pipeline.engine import assignment_next, assignment_submit
from tests.browser.conftest import add_question, generated_screens, list_rows, shoot
from tests.factories import MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def write_one_question(page, row, text: str) -> Assignment:
    """From the workspace home: open pass 1 from ``row``, write ``text``, submit with the keyboard."""
    row.locator(".button").first.click()
    page.wait_for_selector("#ws[data-ready]")
    page.fill("#q0", text)
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=nothing for you right now")
    return Assignment.objects.get(stage="questions-1")


def test_reviewer_rejects_and_the_writer_sees_why(demo, new_page):
    project = demo["project"]
    project.review_rate = 1.0  # every answer is sampled too
    project.save(update_fields=["review_rate"])
    MembershipFactory(project=project, user=UserFactory(username="leo"), role="lead")
    (to_write,) = generated_screens(project, start_id=930000, state=ScreenState.QUESTIONS_1)
    (to_answer,) = generated_screens(project, start_id=930100, state=ScreenState.ANSWERING, split="train")
    name, _, _ = list_rows(to_answer)[0]
    question = add_question(to_answer, author=demo["author"], text=f"What did {name.text} write?")

    # given a writer new to question writing: their first set goes to review
    page = new_page("annotator")
    page.goto("/projects/demo/work/")
    row = page.locator('tr[data-stage="questions-1"]')
    assert "your first submissions are reviewed" in row.inner_text()
    assert page.locator('tr[data-stage="review"]').count() == 0  # not a reviewer
    written = write_one_question(page, row, "What is the title of this screen?")
    assert written.screen_id == to_write.pk and written.review_state == ReviewState.SAMPLED
    # and another annotator's answer, sampled at the project's review rate
    lease = assignment_next(project=project, user=demo["annotator2"], stage="answers")
    body = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": name.vh_index}]}
    full = f"{name.text} wrote it."
    answered = assignment_submit(assignment_id=lease.pk, user=demo["annotator2"], data={**body, "full_answer": full})
    assert Assignment.objects.get(pk=answered.pk).review_state == ReviewState.SAMPLED

    # when the lead opens the review stage: the question set, with the questions written
    lead = new_page("leo", width=1366, height=900)
    lead.goto("/projects/demo/work/")
    lead.click('tr[data-stage="review"] .button')
    lead.wait_for_selector("#ws[data-ready]")
    reviewed = lead.locator("[data-testid=reviewed]")
    assert "What is the title of this screen?" in reviewed.inner_text()
    # a rejection needs a rule: refused in the page before anything is sent
    lead.click("#reject-btn")
    assert lead.inner_text("[data-for=reason]").strip() == "Say which rule the submission breaks."
    lead.select_option("#reason", "not-on-screen")
    lead.fill("#comment", "The title is not a question a user would ask.")
    shoot(lead, "review-reject")
    lead.click("#reject-btn")
    # then the answer comes next, its element drawn on the screenshot
    lead.wait_for_selector("[data-testid=reviewed-elements]")
    assert f"What did {name.text} write?" in lead.inner_text("[data-testid=reviewed]")
    box = lead.locator("svg .element-layer .el-box .el-rect")
    assert box.count() == 1
    # outlined, not painted over: the element stays readable under its box
    assert box.evaluate("r => getComputedStyle(r).fill") != "rgb(0, 0, 0)"
    assert lead.inner_text("[data-testid=reviewed]").count("Full answer") == 1
    shoot(lead, "review-answer")
    lead.click("#submit-btn")
    lead.wait_for_selector("text=nothing for you right now")

    rejected = Assignment.objects.get(pk=written.pk)
    assert rejected.review_state == ReviewState.REJECTED
    assert rejected.review_of.reason == "not-on-screen"
    assert Question.objects.get(origin=written).state == "dropped"
    assert Assignment.objects.get(pk=answered.pk).review_state == ReviewState.ACCEPTED

    # and the writer finds the rejection with its rule and the comment on My work
    page.goto("/projects/demo/work/")
    page.click("[data-testid=my-work-link]")
    item = page.locator(f'tr[data-assignment="{written.pk}"]')
    assert item.locator("[data-testid=verdict]").inner_text() == "Rejected"
    assert item.locator("[data-testid=review-reason]").inner_text() == "The answer cannot be read off the screen"
    assert item.locator("[data-testid=review-comment]").inner_text() == "The title is not a question a user would ask."
    assert page.inner_text("[data-testid=review-acceptance]") == "0%"
    shoot(page, "my-work")


def test_a_qualified_writer_reads_reviews_of_their_work_the_next_day(demo, new_page):
    """Issue 20: a rejection shown at once tells a sly writer when review caught them; an active writer's
    verdicts show from the day after (docs/quality.md, "Verdicts held back to the next day")."""
    project = demo["project"]
    project.review_rate = 1.0
    project.save(update_fields=["review_rate"])
    lead = UserFactory(username="leo")
    MembershipFactory(project=project, user=lead, role="lead")
    Standing.objects.create(project=project, user=demo["annotator"], stage="questions-1", status="active")
    generated_screens(project, start_id=931000, state=ScreenState.QUESTIONS_1)
    # given a qualified writer's set, rejected by the lead today
    page = new_page("annotator")
    page.goto("/projects/demo/work/")
    written = write_one_question(page, page.locator('tr[data-stage="questions-1"]'), "How many buttons are there?")
    review = assignment_next(project=project, user=lead, stage="review")
    verdict = {"verdict": "rejected", "reason": "counting", "comment": "Counting is not allowed."}
    assignment_submit(assignment_id=review.pk, user=lead, data=verdict)
    # when the writer opens My work the same day: no verdict, no "waiting", and the page says when
    page.goto("/projects/demo/my-work/")
    item = page.locator(f'tr[data-assignment="{written.pk}"]')
    assert item.locator("[data-testid=review]").inner_text().strip() == ""
    assert "show from the day after" in page.inner_text("[data-testid=reviews-held-back]")
    shoot(page, "my-work-held-back")
    # then the next day the rejection is there, with its rule and comment
    Review.objects.filter(reviewed=written).update(created_at=timezone.now() - timedelta(days=1))
    page.reload()
    item = page.locator(f'tr[data-assignment="{written.pk}"]')
    assert item.locator("[data-testid=verdict]").inner_text() == "Rejected"
    assert item.locator("[data-testid=review-comment]").inner_text() == "Counting is not allowed."
