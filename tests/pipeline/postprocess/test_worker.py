"""Post-processing on a real Celery worker over the Redis broker (db 4, this area's own)."""

from __future__ import annotations

import time

import pytest

from annotation.models import Question, ReleaseJob
from tests.conftest import login

from .factories import answered_question

BROKER = "redis://127.0.0.1:6379/4"


def _drop_connection_pools(app) -> None:
    """Forget pooled broker connections so the next message goes to the broker configured now.

    kombu keeps producer pools in a process-wide registry keyed by the connection: when the broker
    URL is the one already configured (CELERY_BROKER_URL set in the environment), the registry would
    hand back the pool closed below, so it is reset too.
    """
    from kombu import pools

    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None
    pools.reset()


def _wait(job: ReleaseJob, seconds: float = 60) -> ReleaseJob:
    deadline = time.monotonic() + seconds
    while job.status in (ReleaseJob.Status.QUEUED, ReleaseJob.Status.RUNNING) and time.monotonic() < deadline:
        time.sleep(0.2)
        job.refresh_from_db()
    return job


@pytest.mark.django_db(transaction=True)
def test_postprocess_and_short_answers_run_on_a_real_worker(settings, project, lead, api_client):
    from celery.contrib.testing.worker import start_worker

    from annotation.celery import app

    # given answered questions in train and validation
    train = answered_question(project=project, split="train", answers=[{"elements": ["Male"], "question_text": "Q?"}])
    validation = answered_question(project=project, split="validation", answers=[["Male"], ["Female"], ["male"]])
    settings.CELERY_BROKER_URL = BROKER
    settings.CELERY_TASK_ALWAYS_EAGER = False
    old = {k: app.conf[k] for k in ("broker_url", "task_always_eager", "result_backend")}
    app.conf.update(broker_url=BROKER, task_always_eager=False, result_backend=None)
    _drop_connection_pools(app)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=30):
            # when a lead starts post-processing, then short answers, through the API
            login(api_client, lead)
            response = api_client.post(f"/api/projects/{project.slug}/postprocess/")
            assert response.status_code == 202
            post = _wait(ReleaseJob.objects.get(pk=response.json()["id"]))
            response = api_client.post(f"/api/projects/{project.slug}/short-answers/")
            assert response.status_code == 202
            short = _wait(ReleaseJob.objects.get(pk=response.json()["id"]))
    finally:
        app.conf.update(**old)
        _drop_connection_pools(app)
    # then the worker ran both jobs to the end
    assert (post.status, post.processed, post.total) == ("done", 2, 2), post.error
    assert post.result["summary"]["agreement"] == {"all": 0, "two": 1, "none": 0}
    assert short.status == "done", short.error
    train, validation = Question.objects.get(pk=train.pk), Question.objects.get(pk=validation.pk)
    assert (train.state, train.final_text, validation.agreement) == ("kept", "Q?", "two")
    assert train.short_answers and train.short_answers_source == "rules"
