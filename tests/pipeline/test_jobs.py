"""`pipeline.jobs.enqueue`: queue after commit; in-process threads on the embedded default."""

from __future__ import annotations

import threading

import pytest
from django.db import transaction

from annotation.celery import app
from annotation.models import ImportJob
from pipeline import jobs
from tests.factories import ProjectFactory

RAN: list[tuple[int, str]] = []
DONE = threading.Event()


@app.task(name="tests.record_job")
def record_job(job_id: int, note: str) -> None:
    # The task reads the row the request created: it must have been committed first.
    RAN.append((job_id, ImportJob.objects.get(pk=job_id).source))
    DONE.set()


@pytest.fixture(autouse=True)
def _clear():
    RAN.clear()
    DONE.clear()


@pytest.mark.django_db(transaction=True)
def test_nothing_runs_before_the_transaction_commits_and_nothing_if_it_rolls_back(settings):
    settings.SCREENQA_INPROCESS_THREADS = False  # eager: runs synchronously at commit
    project = ProjectFactory()
    with transaction.atomic():
        job = ImportJob.objects.create(project=project, source="a.zip", source_kind="zip")
        jobs.enqueue(record_job, job.pk, "x")
        assert RAN == []  # not yet: the row is not committed
    assert [(job.pk, "a.zip")] == RAN

    class Boom(Exception):
        pass

    with pytest.raises(Boom), transaction.atomic():
        other = ImportJob.objects.create(project=project, source="b.zip", source_kind="zip")
        jobs.enqueue(record_job, other.pk, "y")
        raise Boom
    assert [(job.pk, "a.zip")] == RAN  # the rolled-back job never ran


@pytest.mark.django_db(transaction=True)
def test_embedded_default_runs_the_task_on_a_background_thread(settings):
    settings.SCREENQA_INPROCESS_THREADS = True
    project = ProjectFactory()
    caller = threading.get_ident()
    with transaction.atomic():
        job = ImportJob.objects.create(project=project, source="c.zip", source_kind="zip")
        jobs.enqueue(record_job, job.pk, "z")
    # the request returns at once; the job finishes on its own thread
    assert DONE.wait(timeout=10)
    assert [(job.pk, "c.zip")] == RAN
    assert not any(t.ident == caller and t.name.startswith("task-") for t in threading.enumerate())
