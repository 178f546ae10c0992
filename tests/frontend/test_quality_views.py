"""The lead's quality pages: the figures they show, sorting, the actions on a standing (recorded
as quality events with the lead as actor), gold items, and who may use them."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Answer, GoldItem, GoldSource, QualityEvent, Question, ReleaseJob, Standing
from pipeline.engine import assignment_next, assignment_submit
from pipeline.quality.figures import quality_figures_refresh
from tests.conftest import login
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.pipeline.quality.builders import rule_pause
from tests.pipeline.quality.report_builders import PREFILTER_WRONG, answer, control, gold, question, standing, work
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(project, annotator):
    bob = UserFactory(username="bob")
    MembershipFactory(project=project, user=bob)
    standing(project, annotator, reason="qualified with 10 of 10")
    standing(project, bob, status="paused", reason="2 of your last 10 control items were right")
    for right in (True, True, True, False):
        control(project, annotator, correct=right)
    for right in (True, False, False):
        control(project, bob, correct=right)
    return {"annie": annotator, "bob": bob}


def url(project, name="quality", **kw):
    return reverse(f"frontend:{name}", kwargs={"slug": project.slug, **kw})


def pages(project, user_id):
    gold_id = GoldItem.objects.filter(project=project).values_list("pk", flat=True).first()
    return {
        "get": [
            url(project),
            url(project, "quality-annotator", user_id=user_id),
            url(project, "quality-gold"),
        ],
        "post": [
            (url(project, "quality-standing", user_id=user_id), {"stage": "prefilter", "action": "pause"}),
            (url(project, "quality-gold-active", gold_id=gold_id), {"active": "0"}),
            (url(project, "quality-gold-promote"), {"assignment_id": "1"}),
        ],
    }


def test_lead_sees_every_annotator_with_their_figures(project, data, lead, client):
    login(client, lead)
    response = client.get(url(project))
    assert response.status_code == 200
    html = response.content.decode()
    annie = re.search(r'<tr data-annotator="annie">.*?</tr>', html, re.S).group(0)
    assert 'data-col="control">75.0%' in annie and "(3/4)" in annie
    assert "Pre-filtering: active" in annie and 'data-action="pause"' in annie
    bob = re.search(r'<tr data-annotator="bob">.*?</tr>', html, re.S).group(0)
    assert "Pre-filtering: paused" in bob and 'data-action="reinstate"' in bob and 'data-action="pause"' not in bob
    assert "csrfmiddlewaretoken" in bob


def test_sorted_by_a_column_on_the_server(project, data, lead, client):
    login(client, lead)
    html = client.get(url(project) + "?sort=control").content.decode()
    assert html.index('data-annotator="bob"') < html.index('data-annotator="annie"')
    html = client.get(url(project) + "?sort=-control").content.decode()
    assert html.index('data-annotator="annie"') < html.index('data-annotator="bob"')
    assert 'href="?sort=control"' in html  # the sorted column's link flips the order
    response = client.get(url(project) + "?sort=shoe-size")
    assert response.status_code == 400 and b"Unknown sort" in response.content
    assert client.get(url(project) + "?stage=nope").status_code == 400


def test_reinstate_changes_the_standing_and_records_the_lead(project, data, lead, client):
    login(client, lead)
    back = url(project) + "?sort=status"
    response = client.post(
        url(project, "quality-standing", user_id=data["bob"].pk),
        {"stage": "prefilter", "action": "reinstate", "note": "talked to him", "next": back},
    )
    assert response.status_code == 302 and response["Location"] == back
    assert Standing.objects.get(user=data["bob"]).status == "active"
    event = QualityEvent.objects.get(user=data["bob"], rule="lead-reinstate")
    assert (event.actor, event.status_before, event.status_after) == (lead, "paused", "active")
    assert event.note == "talked to him"


def test_pause_and_requalify(project, data, lead, client):
    gold(project)  # the stage has gold: requalifying starts a qualification set
    login(client, lead)
    action = url(project, "quality-standing", user_id=data["annie"].pk)
    client.post(action, {"stage": "prefilter", "action": "pause"})
    assert Standing.objects.get(user=data["annie"]).status == "paused"
    # pausing again is a conflict: a warning, nothing recorded
    client.post(action, {"stage": "prefilter", "action": "pause"})
    assert QualityEvent.objects.filter(user=data["annie"], rule="lead-pause").count() == 1
    client.post(action, {"stage": "prefilter", "action": "requalify"})
    annie = Standing.objects.get(user=data["annie"])
    assert (annie.status, annie.attempt) == ("qualifying", 1)
    assert list(QualityEvent.objects.filter(user=data["annie"]).values_list("rule", "actor")) == [
        ("lead-requalify", lead.pk),
        ("lead-pause", lead.pk),
    ]


def test_bad_actions_are_400_and_strangers_404(project, data, lead, outsider, client):
    login(client, lead)
    action = url(project, "quality-standing", user_id=data["annie"].pk)
    response = client.post(action, {"stage": "prefilter", "action": "promote"})
    assert response.status_code == 400 and b"The action is one of" in response.content
    assert client.post(action, {"stage": "moon", "action": "pause"}).status_code == 400
    stranger = url(project, "quality-standing", user_id=outsider.pk)
    assert client.post(stranger, {"stage": "prefilter", "action": "pause"}).status_code == 404
    assert client.get(url(project, "quality-annotator", user_id=outsider.pk)).status_code == 404


def test_annotator_page_charts_control_accuracy_with_the_items(project, data, lead, client):
    QualityEvent.objects.create(
        project=project,
        user=data["bob"],
        stage="prefilter",
        rule="control-accuracy",
        figures={"items": 3, "accuracy": 0.33},
    )
    login(client, lead)
    response = client.get(url(project, "quality-annotator", user_id=data["bob"].pk))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<svg class="qc-chart"' in html and html.count('class="dot"') == 1
    assert "1 of 3 right (33.3%)" in html
    assert html.count("<tr data-result=") == 3 and "Judged differently" in html
    # their answer and the gold one read as labelled lines, not as a Python dict
    assert "<dt>Non-English app</dt><dd>yes</dd>" in html and "<dt>VH out of sync</dt><dd>no</dd>" in html
    assert "{&#x27;" not in html and "{'" not in html
    assert 'data-rule="control-accuracy"' in html and "items=3, accuracy=0.33" in html
    html = client.get(url(project, "quality-annotator", user_id=data["bob"].pk) + "?per=1").content.decode()
    assert html.count('class="dot"') == 3
    assert client.get(url(project, "quality-annotator", user_id=data["bob"].pk) + "?per=x").status_code == 400


def test_gold_page_marks_an_item_most_fail_and_toggles_it(project, data, lead, client):
    bad = gold(project)
    for name, right in (("annie", False), ("bob", False)):
        control(project, data[name], correct=right, item=bad)
    control(project, UserFactory(username="carl"), correct=False, item=bad)
    login(client, lead)
    html = client.get(url(project, "quality-gold")).content.decode()
    row = re.search(rf'<tr data-gold="{bad.pk}".*?</tr>', html, re.S).group(0)
    assert "qc-suspect" in row and 'data-col="served">3<' in row and 'data-col="correct">0<' in row
    client.post(url(project, "quality-gold-active", gold_id=bad.pk), {"active": "0"})
    assert not GoldItem.objects.get(pk=bad.pk).active
    assert client.post(url(project, "quality-gold-active", gold_id=bad.pk), {"active": "maybe"}).status_code == 400


def test_the_gold_page_warns_when_a_constant_answer_would_pass_every_qualification_set(project, lead, client):
    # given pre-filtering gold of screens with no flag and two non-English ones (a set of 10 at 90% with
    # a second sample of 5: both could land in the first ten, the five more then all "no flag")
    for _ in range(12):
        gold(project)
    gold(project, answer=PREFILTER_WRONG)
    gold(project, answer=PREFILTER_WRONG)
    login(client, lead)
    html = client.get(url(project, "quality-gold")).content.decode()
    warning = re.search(r'data-balance-warning="prefilter">(.*?)</p>', html, re.S).group(1)
    assert "always answers <strong>no flag</strong>" in warning and "fewer than 3 servable items" in warning
    text = " ".join(html.split())
    assert "no flag 12," in text and "non english app 2," in text
    # when a third flagged screen is gold, no constant answer passes for sure: no warning
    gold(project, answer=PREFILTER_WRONG)
    html = client.get(url(project, "quality-gold")).content.decode()
    assert "data-balance-warning" not in html and "non english app 3," in " ".join(html.split())
    # and a page of another stage does not show pre-filtering's
    gold(project, answer=PREFILTER_WRONG)
    GoldItem.objects.filter(answer__non_english_app=True).update(active=False)
    assert "data-balance-warning" not in client.get(url(project, "quality-gold") + "?stage=answers").content.decode()
    assert 'data-balance-warning="prefilter"' in client.get(url(project, "quality-gold")).content.decode()


def test_the_gold_page_warns_when_qualification_sets_wait_for_gold_whose_units_are_still_queued(project, lead, client):
    # given twelve pre-filtering gold items, eight of them on screens still waiting to be judged (a set of 10)
    from annotation.models import Screen, ScreenState

    items = [gold(project) for _ in range(9)] + [gold(project, answer=PREFILTER_WRONG) for _ in range(3)]
    Screen.objects.filter(pk__in=[g.screen_id for g in items[:8]]).update(state=ScreenState.PREFILTER)
    login(client, lead)
    html = " ".join(client.get(url(project, "quality-gold")).content.decode().split())
    # then the page says that only four can be served and that qualifying annotators wait for the rest
    warning = re.search(r'data-gold-waiting="prefilter">(.*?)</p>', html, re.S).group(1)
    assert (
        "only 4 gold items can be served now and a qualification set takes 10; 8 more wait for their screens" in warning
    )
    assert "(8 more waiting for their units)" in html
    # and once enough can be served, no warning
    Screen.objects.filter(pk__in=[g.screen_id for g in items[:6]]).update(state=ScreenState.QUESTIONS_1)
    html = client.get(url(project, "quality-gold")).content.decode()
    assert "data-gold-waiting" not in html and "2 more waiting for their units" in html
    # and when what can be served is of one kind only while another kind waits: warned again
    items += [gold(project) for _ in range(3)]
    Screen.objects.filter(pk__in=[g.screen_id for g in items[9:12]]).update(state=ScreenState.PREFILTER)
    html = " ".join(client.get(url(project, "quality-gold")).content.decode().split())
    warning = re.search(r'data-gold-waiting="prefilter">(.*?)</p>', html, re.S).group(1)
    assert "the gold that can be served now is all of one kind" in warning and "5 more wait" in warning


def test_promote_a_submission_to_gold_with_an_edited_answer(project, data, lead, client):
    submitted = work(project, data["annie"])
    login(client, lead)
    response = client.post(
        url(project, "quality-gold-promote"),
        {"assignment_id": str(submitted.pk), "answer": json.dumps(PREFILTER_WRONG)},
    )
    assert response.status_code == 302
    item = GoldItem.objects.get(origin=submitted)
    assert (item.source, item.answer["non_english_app"]) == (GoldSource.PROMOTED, True)
    for body, says in (
        ({"assignment_id": "x"}, b"whole number"),
        ({"assignment_id": str(submitted.pk), "answer": "{oops"}, b"not valid JSON"),
        ({"assignment_id": str(submitted.pk), "answer": "[1]"}, b"JSON object"),
        ({"assignment_id": "999999"}, b"No accepted submission"),
        ({"assignment_id": str(submitted.pk)}, b"already gold"),
    ):
        response = client.post(url(project, "quality-gold-promote"), body)
        assert response.status_code == 400 and says in response.content, body


def test_the_gold_page_offers_recent_accepted_submissions_to_promote(project, data, lead, client):
    # given two accepted submissions and one rejected in review
    older, newer = work(project, data["annie"]), work(project, data["bob"])
    rejected = work(project, data["annie"])
    rejected.review_state = "rejected"
    rejected.save(update_fields=["review_state"])
    login(client, lead)
    # then the gold page lists the accepted ones, newest first, each with a button to promote it
    html = client.get(url(project, "quality-gold")).content.decode()
    listed = [int(pk) for pk in re.findall(r'<tr data-assignment="(\d+)"', html)]
    assert listed == [newer.pk, older.pk]
    # and one click makes it gold, after which it is no longer offered
    response = client.post(url(project, "quality-gold-promote"), {"assignment_id": str(newer.pk)})
    assert response.status_code == 302 and GoldItem.objects.get(origin=newer).source == GoldSource.PROMOTED
    html = client.get(url(project, "quality-gold")).content.decode()
    assert [int(pk) for pk in re.findall(r'<tr data-assignment="(\d+)"', html)] == [older.pk]


def test_lead_and_site_admin_may_use_every_page(project, data, lead, client):
    gold(project)
    admin = UserFactory(username="root", is_superuser=True, is_staff=True)
    for user in (lead, admin):
        login(client, user)
        for page in pages(project, data["annie"].pk)["get"]:
            assert client.get(page).status_code == 200, page


@pytest.mark.parametrize("who", ["annotator", "reviewer", "lead of another project", "outsider", "anonymous"])
def test_everybody_else_is_refused(project, data, client, who):
    gold(project)
    expected = 403
    if who in ("annotator", "reviewer"):
        user = UserFactory(username="rita")
        MembershipFactory(project=project, user=user, role=who)
    elif who == "lead of another project":
        user = UserFactory(username="olga")
        MembershipFactory(project=ProjectFactory(slug="other"), user=user, role="lead")
        expected = 404
    elif who == "outsider":
        user, expected = UserFactory(username="otto"), 404
    else:
        user = None
    if user is not None:
        login(client, user)
    found = pages(project, data["annie"].pk)
    for page in found["get"]:
        response = client.get(page)
        if user is None:
            assert response.status_code == 302 and reverse("frontend:login") in response["Location"]
        else:
            assert response.status_code == expected, page
    for page, body in found["post"]:
        response = client.post(page, body)
        assert response.status_code == (302 if user is None else expected), page
    assert Standing.objects.get(user=data["annie"]).status == "active"
    assert GoldItem.objects.filter(active=False).count() == 0


def test_project_page_links_the_quality_page_for_leads_only(project, data, lead, client):
    project_url = reverse("frontend:project", kwargs={"slug": project.slug})
    login(client, lead)
    assert url(project).encode() in client.get(project_url).content
    login(client, data["annie"])
    assert url(project).encode() not in client.get(project_url).content


def test_pages_run_a_fixed_number_of_queries(project, data, lead, client):
    login(client, lead)

    def counted(page):
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(page).status_code == 200
        return len(ctx.captured_queries)

    pages_ = [url(project), url(project, "quality-annotator", user_id=data["bob"].pk), url(project, "quality-gold")]
    quality_figures_refresh(project=project)  # the stored figures: the quality page reads them
    before = [counted(p) for p in pages_]
    for i in range(4):
        user = UserFactory(username=f"more{i}")
        MembershipFactory(project=project, user=user)
        standing(project, user)
        for right in (True, False):
            control(project, user, correct=right)
        control(project, data["bob"], correct=False)
    quality_figures_refresh(project=project)
    assert [counted(p) for p in pages_] == before


def test_annotator_page_lists_the_questions_behind_invalid_questions(project, data, lead, client):
    # bob wrote three questions: one an answerer judged invalid, one a pass-2 writer flagged, one fine
    judged = question(project, author=data["bob"])
    answer(judged, data["annie"], "invalid")
    flagged = question(project, author=data["bob"])
    Question.objects.filter(pk=flagged.pk).update(flag_reason="counting")
    fine = question(project, author=data["bob"])
    answer(fine, data["annie"], "answered", ("Foo",))
    login(client, lead)
    html = client.get(url(project, "quality-annotator", user_id=data["bob"].pk)).content.decode()
    assert "(2 of 3: 1 judged by answerers, 1 flagged in pass 2)" in html
    table = re.search(r'data-testid="faulted-questions".*?</table>', html, re.S).group(0)
    assert re.findall(r'<tr data-question="(\d+)"', table) == [str(flagged.pk), str(judged.pk)]
    assert "Needs counting" in table
    # the lead's list counts them too
    listed = client.get(url(project)).content.decode()
    assert "(2/3)" in listed


def test_a_reinstate_says_what_came_back(project, lead, client):
    # given an answerer a rule paused, whose answer was withdrawn
    ann = member(project, "ann")
    question = answering_question(screens(project, 1)[0])
    Standing.objects.create(project=project, user=ann, stage="answers", status="active")
    lease = assignment_next(project=project, user=ann, stage="answers")
    body = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    assignment_submit(assignment_id=lease.pk, user=ann, data=body)
    rule_pause(project, ann, "answers")
    # when the lead reinstates them on the page
    login(client, lead)
    response = client.post(
        url(project, "quality-standing", user_id=ann.pk), {"stage": "answers", "action": "reinstate"}, follow=True
    )
    # then the page says the withdrawn answer came back, and it did
    assert "ann reinstated in Answers. 1 withdrawn item(s) came back." in response.content.decode()
    assert Answer.objects.get(annotator=ann).kept


def test_the_page_reads_stored_figures_and_says_when_they_were_computed(
    project, data, lead, client, settings, django_capture_on_commit_callbacks
):
    login(client, lead)
    html = client.get(url(project)).content.decode()  # the first view computes them
    assert 'id="computed"' in html and "Figures computed at" in html
    control(project, data["annie"], correct=False)  # new work: not in the stored figures yet
    annie = re.search(r'<tr data-annotator="annie">.*?</tr>', client.get(url(project)).content.decode(), re.S)
    assert "(3/4)" in annie.group(0)
    # old figures: the view queues the job that computes them again, and shows the old ones meanwhile
    settings.SCREENQA_STORED_FIGURES_MAX_AGE = 0
    with django_capture_on_commit_callbacks(execute=True):
        html = client.get(url(project)).content.decode()
    assert "being computed again now" in html
    job = ReleaseJob.objects.get(project=project, kind="quality-figures")
    # the view's refresh is nobody's job (the one rule of stored figures, as on the analysis page)
    assert job.status == "done" and job.result["members"] == 3 and job.created_by is None
    annie = re.search(r'<tr data-annotator="annie">.*?</tr>', client.get(url(project)).content.decode(), re.S)
    assert "(3/5)" in annie.group(0)


def test_a_lead_asks_for_fresh_figures(project, data, lead, client, django_capture_on_commit_callbacks):
    login(client, lead)
    client.get(url(project))
    control(project, data["bob"], correct=True)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url(project, "quality-refresh"), {"next": url(project) + "?sort=-control"})
    assert response.status_code == 302 and response["Location"] == url(project) + "?sort=-control"
    bob = re.search(r'<tr data-annotator="bob">.*?</tr>', client.get(url(project)).content.decode(), re.S)
    assert "(2/4)" in bob.group(0)
    login(client, data["annie"])
    assert client.post(url(project, "quality-refresh")).status_code == 403


def test_search_and_pages(project, data, lead, client, monkeypatch):
    from frontend.views import quality as views

    monkeypatch.setattr(views, "QUALITY_ROWS_PER_PAGE", 2)
    login(client, lead)
    first = client.get(url(project) + "?sort=-control").content.decode()
    assert first.count("<tr data-annotator=") == 2 and "Page 1 of 2 (3)" in first
    assert 'href="?q=&amp;' not in first and "sort=-control&amp;page=2" in first
    second = client.get(url(project) + "?sort=-control&page=2").content.decode()
    # blank figures last, whatever the direction: the lead has no control items
    assert second.count("<tr data-annotator=") == 1 and f'data-annotator="{lead.username}"' in second
    found = client.get(url(project) + "?q=BO").content.decode()
    assert found.count("<tr data-annotator=") == 1 and 'data-annotator="bob"' in found
    assert "contains “zz”" in client.get(url(project) + "?q=zz").content.decode()


def test_gold_page_is_paginated(project, data, lead, client, monkeypatch):
    from frontend.views import quality as views

    monkeypatch.setattr(views, "GOLD_ROWS_PER_PAGE", 4)
    gold(project)
    n = GoldItem.objects.filter(project=project).count()  # 7 under control results, and this one
    login(client, lead)
    html = client.get(url(project, "quality-gold")).content.decode()
    assert html.count("<tr data-gold=") == 4 and f"Page 1 of 2 ({n})" in html
    assert client.get(url(project, "quality-gold") + "?page=2").content.decode().count("<tr data-gold=") == n - 4


# --- the suggestions job (model assistance, docs/assist.md) ----------------------------------------


def test_a_lead_computes_missing_suggestions_and_watches_the_job(
    project, lead, annotator, client, django_capture_on_commit_callbacks
):
    from annotation.models import AssistJob, Suggestion
    from tests.pipeline.assist.servers import baseline

    first, second, waiting = screens(project, 3)  # the third waits for pre-filtering
    answering_question(first, text=f"What does Label 2 of {first.rico_id} say?")
    answering_question(second)
    login(client, lead)
    with baseline() as backend:
        project.assist_url = backend
        project.save(update_fields=["assist_url"])
        # the card of the backend offers the button; no job has run yet
        html = client.get(url(project)).content.decode()
        assert 'data-action="suggestions"' in html and "data-job-status" not in html
        # when the lead asks for the missing suggestions, the job runs and the card shows what it did
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(url(project, "quality-suggestions"))
    assert response.status_code == 302 and response["Location"] == url(project) + "#assist-backend"
    job = AssistJob.objects.get(project=project)
    by_stage = {"answers": {"suggested": 2, "failed": 0}, "prefilter": {"suggested": 1, "failed": 0}}
    assert (job.status, job.result, job.created_by) == (
        "done",
        {"suggested": 3, "failed": 0, "by_stage": by_stage},
        lead,
    )
    html = client.get(response["Location"]).content.decode()
    assert f"Suggestions job #{job.pk} queued" in html
    card = re.search(r'<section class="card" id="assist-backend".*?</section>', html, re.S).group(0)
    assert f'id="job-suggestions-{job.pk}" data-job-status="done"' in card
    assert "3 items got a suggestion (2 questions, 1 screen to pre-filter)." in card
    assert Suggestion.objects.filter(project=project, status="ok").count() == 3
    assert Suggestion.objects.get(screen=waiting, status="ok").question is None
    # asking again finds nothing missing, and says so; no second job
    response = client.post(url(project, "quality-suggestions"), follow=True)
    assert "Nothing to compute" in response.content.decode()
    assert AssistJob.objects.filter(project=project).count() == 1


def test_a_running_suggestions_job_polls_its_progress_and_a_failed_one_runs_again(
    project, lead, annotator, client, django_capture_on_commit_callbacks
):
    from annotation.models import AssistJob

    project.assist_url = "http://127.0.0.1:9/"  # nothing listens: every call fails
    project.save(update_fields=["assist_url"])
    answering_question(screens(project, 1)[0])
    job = AssistJob.objects.create(project=project, status="running", total=4, processed=1)
    login(client, lead)
    card = re.search(r'id="assist-backend".*?</section>', client.get(url(project)).content.decode(), re.S).group(0)
    progress = reverse("frontend:assist-job-progress", kwargs={"job_id": job.pk})
    assert f'hx-get="{progress}"' in card and "1 of 4 items" in card
    # the poll: leads only (annotators 403, others 404)
    assert client.get(progress).status_code == 200
    AssistJob.objects.filter(pk=job.pk).update(status="failed", error="ConnectionError: refused")
    html = client.get(url(project)).content.decode()
    assert "The suggestions job failed." in html and "ConnectionError: refused" in html
    retry = reverse("frontend:assist-job-retry", kwargs={"job_id": job.pk})
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(retry)
    assert response.status_code == 302 and response["Location"] == url(project) + "#assist-backend"
    job.refresh_from_db()
    # the backend still fails: the job is done, the question counted as failed, served without a suggestion
    by_stage = {"answers": {"suggested": 0, "failed": 1}, "prefilter": {"suggested": 0, "failed": 0}}
    assert (job.status, job.result) == ("done", {"suggested": 0, "failed": 1, "by_stage": by_stage})
    login(client, annotator)
    assert client.get(progress).status_code == 403
    assert client.post(url(project, "quality-suggestions")).status_code == 403
    login(client, UserFactory(username="stranger"))
    assert client.get(progress).status_code == 404


def test_without_a_backend_the_button_says_what_to_set(project, lead, client):
    login(client, lead)
    response = client.post(url(project, "quality-suggestions"), follow=True)
    assert "Set the backend&#x27;s address (assist_url) first." in response.content.decode()
