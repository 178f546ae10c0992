"""Post-processing API: start (202), job status (any kind), decisions; leads only."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile

from annotation.models import Question, ReleaseJob
from tests.conftest import login
from tests.factories import ProjectFactory, answered_question

pytestmark = pytest.mark.django_db


def start_url(project) -> str:
    return f"/api/projects/{project.slug}/postprocess/"


def decisions_url(project) -> str:
    return f"/api/projects/{project.slug}/postprocess/decisions/"


def test_lead_starts_postprocessing_and_the_job_runs(project, lead, api_client, django_capture_on_commit_callbacks):
    # given an answered train question and a lead
    q = answered_question(project=project, split="train", answers=[{"elements": ["A"], "question_text": "Fixed?"}])
    login(api_client, lead)
    # when the lead starts post-processing (the task runs eagerly once the request commits)
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(start_url(project))
    # then 202 with the job, and the job has run
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["kind"], body["status"], body["project"], body["created_by"]) == (
        "postprocess",
        "queued",
        project.slug,
        lead.username,
    )
    status = api_client.get(body["url"]).json()
    assert (status["status"], status["processed"], status["total"]) == ("done", 1, 1)
    assert status["result"]["summary"]["kept"] == 1
    q.refresh_from_db()
    assert (q.state, q.final_text) == ("kept", "Fixed?")


def test_short_answers_start_runs_the_generator(project, lead, api_client, django_capture_on_commit_callbacks):
    q = answered_question(project=project, split="train", answers=[["Male"]])
    login(api_client, lead)
    with django_capture_on_commit_callbacks(execute=True):
        api_client.post(start_url(project))
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(f"/api/projects/{project.slug}/short-answers/")
    assert response.status_code == 202
    assert api_client.get(response.json()["url"]).json()["status"] == "done"
    q.refresh_from_db()
    assert q.short_answers and q.short_answers_source == "rules"


def test_a_second_start_while_queued_is_a_conflict(project, lead, api_client):
    login(api_client, lead)
    first = api_client.post(start_url(project))
    second = api_client.post(start_url(project))
    assert (first.status_code, second.status_code) == (202, 409)
    assert second.json()["job_id"] == first.json()["id"]
    assert ReleaseJob.objects.count() == 1


@pytest.mark.parametrize(
    ("who", "code"),
    [("annotator", 403), ("outsider", 404), (None, 403)],
)
def test_only_leads_may_start(project, request, api_client, who, code):
    if who:
        login(api_client, request.getfixturevalue(who))
    assert api_client.post(start_url(project)).status_code == code
    assert api_client.post(f"/api/projects/{project.slug}/short-answers/").status_code == code
    assert not ReleaseJob.objects.exists()


def test_job_status_serves_any_kind_to_leads_only(project, lead, annotator, outsider, api_client):
    job = ReleaseJob.objects.create(project=project, kind="export", format="jsonl")
    url = f"/api/release-jobs/{job.pk}/"
    login(api_client, lead)
    body = api_client.get(url).json()
    assert (body["kind"], body["format"], body["status"], body["download_url"]) == ("export", "jsonl", "queued", None)
    job.artifact.save("release.zip", ContentFile(b"zip"))
    assert api_client.get(url).json()["download_url"] == f"/api/release-jobs/{job.pk}/download/"
    login(api_client, annotator)
    assert api_client.get(url).status_code == 403
    login(api_client, outsider)
    assert api_client.get(url).status_code == 404
    login(api_client, lead)
    assert api_client.get("/api/release-jobs/999999/").status_code == 404


def test_lead_of_another_project_cannot_see_a_job(project, api_client):
    from tests.factories import MembershipFactory, UserFactory

    other = ProjectFactory()
    job = ReleaseJob.objects.create(project=other, kind="postprocess")
    stranger = UserFactory()
    MembershipFactory(project=project, user=stranger, role="lead")
    login(api_client, stranger)
    assert api_client.get(f"/api/release-jobs/{job.pk}/").status_code == 404


@pytest.fixture
def decided_project(project, lead):
    from pipeline.jobs.runner import job_run

    answered_question(project=project, split="validation", answers=[["A"], ["B"], ["C"]])
    answered_question(project=project, split="test", answers=[["A"], ["B"], ["A"]])
    answered_question(project=project, split="train", answers=["invalid"])
    answered_question(project=project, split="train", answers=[["A"]])
    job_run(kind="postprocess", job_id=ReleaseJob.objects.create(project=project, kind="postprocess").pk)
    return project


def test_decisions_list_dropped_questions_and_answers(decided_project, lead, api_client):
    login(api_client, lead)
    questions = api_client.get(decisions_url(decided_project)).json()
    assert questions["count"] == 2
    assert {(r["reason"], r["split"]) for r in questions["results"]} == {
        ("no-agreement", "validation"),
        ("invalid", "train"),
    }
    answers = api_client.get(decisions_url(decided_project), {"kind": "answer"}).json()
    assert [(r["reason"], r["verdict"], r["split"]) for r in answers["results"]] == [("disagrees", "answered", "test")]


def test_decisions_filters_and_pages(decided_project, lead, api_client):
    login(api_client, lead)
    only_invalid = api_client.get(decisions_url(decided_project), {"reason": "invalid"}).json()
    assert [r["reason"] for r in only_invalid["results"]] == ["invalid"]
    only_validation = api_client.get(decisions_url(decided_project), {"split": "validation"}).json()
    assert [r["reason"] for r in only_validation["results"]] == ["no-agreement"]
    first_page = api_client.get(decisions_url(decided_project), {"page_size": 1}).json()
    assert len(first_page["results"]) == 1 and first_page["next"]


@pytest.mark.parametrize("params", [{"kind": "screen"}, {"reason": "bored"}, {"split": "dev"}])
def test_decisions_bad_filters_are_400(decided_project, lead, api_client, params):
    login(api_client, lead)
    response = api_client.get(decisions_url(decided_project), params)
    assert response.status_code == 400
    assert next(iter(params)) in response.json()


@pytest.mark.parametrize(("who", "code"), [("annotator", 403), ("outsider", 404)])
def test_decisions_are_for_leads_only(decided_project, request, api_client, who, code):
    login(api_client, request.getfixturevalue(who))
    assert api_client.get(decisions_url(decided_project)).status_code == code


def test_decisions_query_count_does_not_grow_with_rows(project, lead, api_client, django_assert_max_num_queries):
    from pipeline.jobs.runner import job_run

    for _ in range(30):
        answered_question(project=project, split="validation", answers=[["A"], ["B"], ["A"]])
    job_run(kind="postprocess", job_id=ReleaseJob.objects.create(project=project, kind="postprocess").pk)
    login(api_client, lead)
    with django_assert_max_num_queries(8):
        body = api_client.get(decisions_url(project), {"kind": "answer"}).json()
    assert body["count"] == 30
    assert Question.objects.filter(state="kept").count() == 30
