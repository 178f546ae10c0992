"""`pipeline.jobs.queue.enqueue`: the run is queued after commit; in-process threads on the embedded default."""

from __future__ import annotations

import threading

import pytest
from django.db import transaction

from annotation.celery import app
from annotation.models import ImportJob
from pipeline.jobs import queue, tasks
from tests.factories import ProjectFactory

RAN: list[tuple[str, int, str, str]] = []
DONE = threading.Event()


@pytest.fixture(autouse=True)
def _recording_runner(monkeypatch):
    """The task's runner records what it was asked to run (and reads the row, which must be committed)."""
    RAN.clear()
    DONE.clear()

    def job_run(*, kind: str, job_id: int) -> None:
        RAN.append((kind, job_id, ImportJob.objects.get(pk=job_id).source, threading.current_thread().name))
        DONE.set()

    monkeypatch.setattr(tasks, "job_run", job_run)


def test_the_job_task_is_registered_under_its_name():
    assert app.tasks[queue.JOB_RUN_TASK].name == tasks.job_run_task.name == "pipeline.job_run"


@pytest.mark.django_db(transaction=True)
def test_nothing_runs_before_the_transaction_commits_and_nothing_if_it_rolls_back(settings):
    settings.SCREENQA_INPROCESS_THREADS = False  # eager: runs synchronously at commit
    project = ProjectFactory()
    with transaction.atomic():
        job = ImportJob.objects.create(project=project, source="a.zip", source_kind="zip")
        queue.enqueue(kind="import", job_id=job.pk)
        assert RAN == []  # not yet: the row is not committed
    assert [(kind, pk, source) for kind, pk, source, _ in RAN] == [("import", job.pk, "a.zip")]

    class Boom(Exception):
        pass

    with pytest.raises(Boom), transaction.atomic():
        other = ImportJob.objects.create(project=project, source="b.zip", source_kind="zip")
        queue.enqueue(kind="import", job_id=other.pk)
        raise Boom
    assert len(RAN) == 1  # the rolled-back job never ran


@pytest.mark.django_db(transaction=True)
def test_embedded_default_runs_the_job_on_a_background_thread(settings):
    settings.SCREENQA_INPROCESS_THREADS = True
    project = ProjectFactory()
    with transaction.atomic():
        job = ImportJob.objects.create(project=project, source="c.zip", source_kind="zip")
        queue.enqueue(kind="import", job_id=job.pk)
    # the request returns at once; the job runs on its own thread
    assert DONE.wait(timeout=10)
    assert [("import", job.pk, "c.zip", f"job-import-{job.pk}")] == RAN
