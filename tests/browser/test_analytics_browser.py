"""The lead's analysis page in Chromium, on a project a scripted crowd has worked through and
post-processing has judged: every chart is drawn, with its numbers."""

from __future__ import annotations

import pytest

from devtools.crowd import crowd_simulate
from pipeline.jobs.runner import job_run_now
from tests.browser.conftest import shoot
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_reads_the_analysis_of_a_worked_project(new_page):
    # given a project worked through by a scripted crowd, then post-processed
    project = ProjectFactory(slug="demo", name="Demo")
    MembershipFactory(project=project, user=UserFactory(username="leo"), role="lead")
    crowd_simulate(project=project, annotators=6, seed=3, new_screens=30)
    job_run_now(kind="postprocess", project_slug="demo")
    page = new_page("leo", width=1366, height=2250)  # tall: the whole page in one screenshot

    # when the lead follows the link from the project page
    page.goto("/projects/demo/")
    page.click("#release a[href='/projects/demo/analysis/']")
    page.wait_for_load_state()

    # then the funnel, both histograms, the stacked shares and the annotators' sparklines are drawn
    assert page.url.endswith("/projects/demo/analysis/")
    assert page.locator("svg.a-funnel rect.bar").count() == 6
    assert page.locator("text[data-step='imported']").text_content() == "30"
    assert page.locator("svg.columns-questions rect.bar").count() == 9
    assert page.locator("svg.columns-boxes rect.bar").count() == 10
    assert page.locator("#answer-sources .stack .seg").count() == 6
    assert page.locator("#categories tr[data-category]").count() >= 2
    assert page.locator("#annotators svg.spark").count() == 7  # the crowd, and its lead (who reviews)
    assert "52.0%" in page.inner_text("#answer-sources")
    shoot(page, "lead-analysis")


def test_with_a_suggestion_backend_the_lead_compares_the_model_with_the_crowd(new_page):
    from annotation.models import Answer, AnswerElement, Assignment, AssistUse, PrefilterJudgment, Suggestion
    from pipeline.analytics.stored import snapshot_refresh

    # given a worked, post-processed project whose backend suggested for some of its questions and screens
    project = ProjectFactory(slug="demo", name="Demo")
    MembershipFactory(project=project, user=UserFactory(username="leo"), role="lead")
    crowd_simulate(project=project, annotators=6, seed=3, new_screens=12)
    job_run_now(kind="postprocess", project_slug="demo")
    project.assist_url = "http://127.0.0.1:9"  # the figures read what was stored: nothing calls it
    project.save(update_fields=["assist_url"])
    elements = AnswerElement.objects.filter(
        answer__question__screen__project=project, answer__kept=True, vh_index__isnull=False
    ).select_related("answer__question")
    kept = list({e.answer.question_id: e for e in elements.order_by("-pk")}.values())[:6]  # one per question
    assert len(kept) == 6
    for n, element in enumerate(kept):  # the model's first guess: the crowd's element on four of six
        guess = element.vh_index if n < 4 else element.vh_index + 1000
        question = element.answer.question
        Suggestion.objects.create(
            project=project,
            stage="answers",
            question=question,
            screen_id=question.screen_id,
            status="ok",
            calls=1,
            result={"elements": [{"vh_index": guess, "bounds": [0, 0, 1, 1], "text": "x", "score": 0.9}]},
        )
    for judgment in PrefilterJudgment.objects.filter(screen__project=project)[:5]:
        Suggestion.objects.get_or_create(
            project=project,
            stage="prefilter",
            screen_id=judgment.screen_id,
            question=None,
            defaults={
                "status": "ok",
                "calls": 1,
                "result": {"judgments": {"non_english_app": 0.1, "vh_out_of_sync": 0.2}},
            },
        )
    for n, answer in enumerate(Answer.objects.filter(question__screen__project=project).exclude(assignment=None)[:8]):
        AssistUse.objects.create(
            assignment=answer.assignment,
            project=project,
            user_id=answer.annotator_id,
            stage="answers",
            purpose="work",
            use="accepted" if n < 3 else "edited",
        )
    assert Assignment.objects.filter(project=project).exists()
    snapshot_refresh(project=project, kind="analysis")
    page = new_page("leo", width=1366, height=900)

    # when the lead opens the analysis page, then the card puts the model beside the crowd
    page.goto("/projects/demo/analysis/")
    card = page.locator("[data-testid=model-and-crowd]")
    answers = card.locator("tr[data-model=answers]").inner_text()
    assert "4 of 6 (66.7%)" in answers and "3 of 8 (37.5%)" in answers
    assert "of 5 (" in card.locator("tr[data-model=prefilter]").inner_text()
    card.scroll_into_view_if_needed()
    shoot(page, "analysis-model-and-crowd")
