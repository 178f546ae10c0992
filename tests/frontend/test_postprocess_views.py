"""The lead's post-processing pages (frontend/views/postprocess.py)."""

from __future__ import annotations

import re

import pytest

from annotation.models import Question, ReleaseJob
from pipeline.jobs.runner import job_run
from tests.conftest import login
from tests.factories import answered_question

pytestmark = pytest.mark.django_db


def page_url(project) -> str:
    return f"/projects/{project.slug}/release/postprocess/"


def run_postprocess(project) -> None:
    job_run(kind="postprocess", job_id=ReleaseJob.objects.create(project=project, kind="postprocess").pk)


@pytest.fixture
def decided(project):
    for _ in range(3):
        answered_question(project=project, split="validation", answers=[["A"], ["a"], ["A"]])
    answered_question(project=project, split="validation", answers=[["A"], ["B"], ["A"]])
    answered_question(project=project, split="test", answers=[["A"], ["B"], ["C"]])
    answered_question(project=project, split="train", answers=["invalid"])
    answered_question(
        project=project,
        split="train",
        text="How many reviews?",
        answers=[{"elements": ["3 reviews"], "full_answer": "There are 3 reviews."}],
    )
    run_postprocess(project)
    job_run(kind="short-answers", job_id=ReleaseJob.objects.create(project=project, kind="short-answers").pk)
    return project


def all_urls(project, question_id: int, job_id: int) -> list[tuple[str, str]]:
    base = f"/projects/{project.slug}/release"
    return [
        ("get", f"{base}/postprocess/"),
        ("post", f"{base}/postprocess/start/"),
        ("get", f"{base}/postprocess/decisions/"),
        ("get", f"{base}/short-answers/?size=5&seed=x"),
        ("post", f"{base}/short-answers/{question_id}/"),
        ("get", f"/release-jobs/{job_id}/progress/"),
    ]


@pytest.mark.parametrize(("who", "code"), [("annotator", 403), ("outsider", 404)])
def test_pages_are_for_leads_only(decided, client, request, who, code):
    login(client, request.getfixturevalue(who))
    question = Question.objects.filter(state="kept").first()
    job = ReleaseJob.objects.first()
    for method, url in all_urls(decided, question.pk, job.pk):
        response = getattr(client, method)(url, {"short_answers": "hacked", "kind": "postprocess"})
        assert response.status_code == code, (method, url)
    assert not Question.objects.filter(short_answers=["hacked"]).exists()
    assert ReleaseJob.objects.count() == 2


def test_anonymous_visitors_go_to_login(decided, client):
    question = Question.objects.filter(state="kept").first()
    for method, url in all_urls(decided, question.pk, ReleaseJob.objects.first().pk):
        response = getattr(client, method)(url)
        assert response.status_code == 302 and "/login/" in response["Location"], url


def test_results_show_agreement_shares_and_counts(decided, lead, client):
    login(client, lead)
    html = client.get(page_url(decided)).content.decode()
    # overall (validation + test): 3 all, 1 two, 1 none of 5
    assert 'data-share="all">60.0% (3)' in html
    assert 'data-share="two">20.0% (1)' in html
    assert 'data-share="none">20.0% (1)' in html
    assert 'data-total="kept">5<' in html
    assert 'data-total="dropped">2<' in html
    assert 'data-dropped="invalid">1<' in html
    assert 'data-dropped="no-agreement">1<' in html
    assert 'data-answers-dropped="disagrees">1<' in html
    assert re.search(r'data-split="validation"', html) and re.search(r'data-split="train"', html)


def test_start_queues_a_job_that_runs(project, lead, client, django_capture_on_commit_callbacks):
    q = answered_question(project=project, split="train", answers=[["A"]])
    login(client, lead)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.slug}/release/postprocess/start/", {"kind": "postprocess"})
    assert response.status_code == 302 and response["Location"] == page_url(project)
    job = ReleaseJob.objects.get()
    assert (job.kind, job.status, job.created_by) == ("postprocess", "done", lead)
    q.refresh_from_db()
    assert q.state == "kept"
    html = client.get(page_url(project)).content.decode()
    assert f"Job #{job.pk}" in html and "Decided 1 questions" in html


def test_start_while_queued_warns_and_adds_no_job(project, lead, client):
    login(client, lead)
    client.post(f"/projects/{project.slug}/release/postprocess/start/", {"kind": "postprocess"})
    response = client.post(f"/projects/{project.slug}/release/postprocess/start/", {"kind": "postprocess"}, follow=True)
    assert "already queued" in response.content.decode()
    assert ReleaseJob.objects.count() == 1


def test_start_with_an_unknown_kind_is_refused(project, lead, client):
    login(client, lead)
    response = client.post(f"/projects/{project.slug}/release/postprocess/start/", {"kind": "export"}, follow=True)
    assert "Unknown job kind" in response.content.decode()
    assert not ReleaseJob.objects.exists()


def test_progress_polls_while_running_and_refreshes_when_done(project, lead, client):
    login(client, lead)
    job = ReleaseJob.objects.create(project=project, kind="postprocess", status="running", total=10, processed=4)
    url = f"/release-jobs/{job.pk}/progress/"
    running = client.get(url, headers={"HX-Request": "true"})
    assert 'hx-trigger="every 1s"' in running.content.decode()
    assert "4 of 10 questions" in running.content.decode()
    assert "HX-Refresh" not in running
    ReleaseJob.objects.filter(pk=job.pk).update(status="done", processed=10)
    done = client.get(url, headers={"HX-Request": "true"})
    assert done["HX-Refresh"] == "true"
    assert "hx-trigger" not in done.content.decode()


def test_progress_shows_a_failure(project, lead, client):
    login(client, lead)
    job = ReleaseJob.objects.create(project=project, kind="postprocess", status="failed", error="RuntimeError: boom")
    html = client.get(f"/release-jobs/{job.pk}/progress/").content.decode()
    assert "The job failed" in html and "RuntimeError: boom" in html


def test_a_short_answer_job_says_where_its_answers_came_from_and_why_the_backend_failed(project, lead, client):
    login(client, lead)
    result = {
        "generated": 5,
        "sources": {"assist": 3, "rules": 2},
        "assist_failures": 2,
        "assist_last_error": "no answer within 5 s",
    }
    job = ReleaseJob.objects.create(project=project, kind="short-answers", status="done", result=result)
    html = " ".join(client.get(f"/release-jobs/{job.pk}/progress/").content.decode().split())
    assert "Short answers written for 5 questions (" in html and "3 from assist" in html and "2 from rules" in html
    assert "The suggestion backend failed for 2 answers (the rules answered them instead)" in html
    assert "no answer within 5 s" in html
    ReleaseJob.objects.filter(pk=job.pk).update(result={"generated": 1, "sources": {"rules": 1}})
    html = client.get(f"/release-jobs/{job.pk}/progress/").content.decode()
    assert "suggestion backend failed" not in html


def test_decisions_page_filters(decided, lead, client):
    login(client, lead)
    url = f"/projects/{decided.slug}/release/postprocess/decisions/"
    questions = client.get(url).content.decode()
    assert questions.count('data-kind="question"') == 2
    invalid_only = client.get(url, {"reason": "invalid"}).content.decode()
    assert invalid_only.count('data-kind="question"') == 1 and "judged invalid" in invalid_only
    answers = client.get(url, {"kind": "answer", "split": "validation"}).content.decode()
    assert answers.count('data-kind="answer"') == 1 and "disagrees" in answers
    assert client.get(url, {"kind": "answer", "split": "test"}).content.decode().count('data-kind="answer"') == 0
    bad = client.get(url, {"reason": "bored"})
    assert bad.status_code == 400 and "Unknown reason" in bad.content.decode()


def test_review_without_seed_redirects_to_a_seeded_sample(decided, lead, client):
    login(client, lead)
    response = client.get(f"/projects/{decided.slug}/release/short-answers/?size=3")
    assert response.status_code == 302
    assert re.search(r"size=3&seed=[0-9a-f]{8}$", response["Location"])


def test_review_shows_a_seeded_sample(decided, lead, client, django_assert_max_num_queries):
    login(client, lead)
    url = f"/projects/{decided.slug}/release/short-answers/"
    with django_assert_max_num_queries(8):
        first = client.get(url, {"size": 3, "seed": "s1"}).content.decode()
    again = client.get(url, {"size": 3, "seed": "s1"}).content.decode()
    order = re.findall(r'data-question="(\d+)"', first)
    assert len(order) == 3 and order == re.findall(r'data-question="(\d+)"', again)
    everything = client.get(url, {"size": 50, "seed": "s1"}).content.decode()
    assert len(re.findall(r'data-question="(\d+)"', everything)) == 5
    assert f"/api/projects/{decided.slug}/screens/" in everything  # the screenshot
    assert "There are 3 reviews." in everything and "How many reviews?" in everything
    assert '<rect class="box box-0"' in everything


def test_review_query_count_does_not_grow_with_the_sample(decided, lead, client, django_assert_max_num_queries):
    login(client, lead)
    for _ in range(20):
        answered_question(project=decided, split="validation", answers=[["A"], ["A"], ["A"]])
    run_postprocess(decided)
    with django_assert_max_num_queries(8):
        html = client.get(f"/projects/{decided.slug}/release/short-answers/", {"size": 25, "seed": "q"}).content
    assert len(re.findall(rb'data-question="', html)) == 25


@pytest.mark.parametrize("size", ["0", "abc", "500"])
def test_review_bad_size_is_400(decided, lead, client, size):
    login(client, lead)
    response = client.get(f"/projects/{decided.slug}/release/short-answers/", {"size": size, "seed": "x"})
    assert response.status_code == 400
    assert 'role="alert"' in response.content.decode()


def test_htmx_save_records_the_lead(decided, lead, client):
    login(client, lead)
    q = Question.objects.get(text="How many reviews?")
    response = client.post(
        f"/projects/{decided.slug}/release/short-answers/{q.pk}/",
        {"short_answers": "3\nthree\n\n3 reviews", "next": "/x"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert "Saved" in response.content.decode()
    q.refresh_from_db()
    assert q.short_answers == ["3", "three", "3 reviews"]
    assert (q.short_answers_source, q.short_answers_reviewed_by) == ("lead", lead)
    # and a later generation run leaves the lead's answers alone
    Question.objects.exclude(pk=q.pk).update(short_answers=[], short_answers_source="")
    job_run(kind="short-answers", job_id=ReleaseJob.objects.create(project=decided, kind="short-answers").pk)
    q.refresh_from_db()
    assert q.short_answers == ["3", "three", "3 reviews"]


def test_htmx_save_of_nothing_is_400_and_loses_nothing(decided, lead, client):
    login(client, lead)
    q = Question.objects.get(text="How many reviews?")
    before = list(q.short_answers)
    response = client.post(
        f"/projects/{decided.slug}/release/short-answers/{q.pk}/",
        {"short_answers": "  \n "},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 400
    assert "at least one short answer" in response.content.decode()
    q.refresh_from_db()
    assert q.short_answers == before and q.short_answers_source == "rules"


def test_plain_form_save_redirects_back(decided, lead, client):
    login(client, lead)
    q = Question.objects.get(text="How many reviews?")
    back = f"/projects/{decided.slug}/release/short-answers/?size=3&seed=s1"
    response = client.post(
        f"/projects/{decided.slug}/release/short-answers/{q.pk}/", {"short_answers": "3", "next": back}
    )
    assert response.status_code == 302 and response["Location"] == back
    evil = client.post(
        f"/projects/{decided.slug}/release/short-answers/{q.pk}/",
        {"short_answers": "3", "next": "https://evil.example/"},
    )
    assert evil["Location"].startswith(f"/projects/{decided.slug}/release/short-answers/")


def test_saving_a_dropped_question_is_refused(decided, lead, client):
    login(client, lead)
    dropped = Question.objects.filter(state="dropped").first()
    response = client.post(
        f"/projects/{decided.slug}/release/short-answers/{dropped.pk}/",
        {"short_answers": "x"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 400
    dropped.refresh_from_db()
    assert dropped.short_answers == []
