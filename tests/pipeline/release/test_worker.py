"""Post-processing on a real Celery worker over the Redis broker."""

from __future__ import annotations

import time

import pytest

from annotation.models import Question, ReleaseJob
from tests.conftest import login
from tests.factories import answered_question


def _wait(job: ReleaseJob, seconds: float = 60) -> ReleaseJob:
    deadline = time.monotonic() + seconds
    while job.status in (ReleaseJob.Status.QUEUED, ReleaseJob.Status.RUNNING) and time.monotonic() < deadline:
        time.sleep(0.2)
        job.refresh_from_db()
    return job


@pytest.mark.django_db(transaction=True)
def test_postprocess_and_short_answers_run_on_a_real_worker(celery_worker, project, lead, api_client):
    # given answered questions in train and validation
    train = answered_question(project=project, split="train", answers=[{"elements": ["Male"], "question_text": "Q?"}])
    validation = answered_question(project=project, split="validation", answers=[["Male"], ["Female"], ["male"]])
    # when a lead starts post-processing, then short answers, through the API
    login(api_client, lead)
    response = api_client.post(f"/api/projects/{project.slug}/postprocess/")
    assert response.status_code == 202
    post = _wait(ReleaseJob.objects.get(pk=response.json()["id"]))
    response = api_client.post(f"/api/projects/{project.slug}/short-answers/")
    assert response.status_code == 202
    short = _wait(ReleaseJob.objects.get(pk=response.json()["id"]))
    # then the worker ran both jobs to the end
    assert (post.status, post.processed, post.total) == ("done", 2, 2), post.error
    assert post.result["summary"]["agreement"] == {"all": 0, "two": 1, "none": 0}
    assert short.status == "done", short.error
    train, validation = Question.objects.get(pk=train.pk), Question.objects.get(pk=validation.pk)
    assert (train.state, train.final_text, validation.agreement) == ("kept", "Q?", "two")
    assert train.short_answers and train.short_answers_source == "rules"
