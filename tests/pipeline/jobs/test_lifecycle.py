"""The one job lifecycle, for every kind: claim, run, heartbeat, finish, fail with the reason, the stale
rule, re-run, and the guard that keeps a live job from running twice."""

from __future__ import annotations

import dataclasses
import time
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import AssistJob, ImportJob, Job, MemberJob, ReleaseJob
from pipeline.jobs import kinds
from pipeline.jobs.lifecycle import (
    JobLost,
    Outcome,
    job_claim,
    job_fail,
    job_finish,
    job_is_stale,
    job_rerun,
    job_start_once,
    jobs_alive,
    stored_figures_freshness,
)
from pipeline.jobs.runner import Heartbeat, job_run, job_run_now
from pipeline.jobs.tasks import job_run_task
from tests.factories import JOB_KINDS, ProjectFactory, ScreenFactory, answered_question, job_of_kind, kept_question
from tests.pipeline.ingest.test_jobs import synthetic_zip

pytestmark = pytest.mark.django_db


def runnable(kind: str, project, **fields) -> Job:
    """A queued job of ``kind`` with the data its work needs."""
    if kind == "import":
        source = default_storage.save("imports/batch.zip", ContentFile(synthetic_zip(["1", "2"])))
        return job_of_kind(kind=kind, project=project, source=source, **fields)
    if kind == "postprocess":
        answered_question(project=project, split="train", answers=[["A"]])
    else:
        screen = ScreenFactory(project=project, rico_id="31", split="validation")
        kept_question(screen=screen, text="Q?", position=0, answers=[("A.", [{"text": "a"}])])
    return job_of_kind(kind=kind, project=project, **fields)


def ago(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


def model_of(job: Job) -> type[Job]:
    return type(job)


@pytest.mark.parametrize("kind", JOB_KINDS)
class TestEveryKind:
    def test_a_queued_job_runs_once_and_a_second_delivery_does_nothing(self, kind, project):
        job = runnable(kind, project)
        done = job_run(kind=kind, job_id=job.pk)
        assert (done.status, done.error, done.attempts) == ("done", "", 1)
        assert done.finished_at is not None and done.result
        assert done.processed == done.total
        stored = model_of(job).objects.get(pk=job.pk)
        assert (stored.status, stored.result, stored.attempts) == ("done", done.result, 1)
        # a duplicate delivery finds it done
        again = job_run(kind=kind, job_id=job.pk)
        assert (again.status, again.attempts, again.finished_at) == ("done", 1, stored.finished_at)

    def test_a_failure_is_recorded_with_its_reason_and_raised(self, kind, project, monkeypatch):
        def broken(**kwargs):
            raise OSError("disk full")

        monkeypatch.setitem(kinds.KINDS, kind, dataclasses.replace(kinds.KINDS[kind], work=broken))
        job = runnable(kind, project)
        with pytest.raises(OSError, match="disk full"):
            job_run(kind=kind, job_id=job.pk)
        job.refresh_from_db()
        assert (job.status, job.error, job.attempts) == ("failed", "OSError: disk full", 1)
        assert job.finished_at is not None
        # a failed job is left alone by a delivery: only a re-run runs it again
        assert job_run(kind=kind, job_id=job.pk).status == "failed"

    def test_a_live_running_job_is_not_taken_a_stale_one_is(self, kind, project, settings):
        settings.SCREENQA_JOB_STALE_SECONDS = 60
        job = runnable(kind, project, status="running", attempts=1, processed=1, total=3, heartbeat_at=ago(59))
        assert job_claim(model=model_of(job), job_id=job.pk, kind=kind) is None
        model_of(job).objects.filter(pk=job.pk).update(heartbeat_at=ago(61))
        claimed = job_claim(model=model_of(job), job_id=job.pk, kind=kind)
        assert claimed is not None
        assert (claimed.status, claimed.attempts, claimed.processed) == ("running", 2, 0)
        assert claimed.heartbeat_at > ago(5)
        # and a run after the takeover finishes the job
        model_of(job).objects.filter(pk=job.pk).update(heartbeat_at=ago(61))
        assert job_run(kind=kind, job_id=job.pk).status == "done"

    def test_re_run_of_a_failed_or_stale_job_finishes_it(self, kind, project, lead, settings, capture_on_commit):
        settings.SCREENQA_JOB_STALE_SECONDS = 60
        job = runnable(kind, project, status="failed", error="OSError: disk full", attempts=1)
        with capture_on_commit(execute=True):
            queued = job_rerun(model=model_of(job), user=lead, job_id=job.pk)
        assert (queued.status, queued.error) == ("queued", "")
        job.refresh_from_db()
        assert (job.status, job.error, job.attempts) == ("done", "", 2)
        # a stale running one too
        model_of(job).objects.filter(pk=job.pk).update(status="running", heartbeat_at=ago(61))
        with capture_on_commit(execute=True):
            job_rerun(model=model_of(job), user=lead, job_id=job.pk)
        job.refresh_from_db()
        assert (job.status, job.attempts) == ("done", 3)

    @pytest.mark.parametrize("status", ["done", "running", "queued"])
    def test_re_run_of_a_done_or_live_job_is_a_conflict(self, kind, status, project, lead, capture_on_commit):
        job = job_of_kind(kind=kind, project=project, status=status)
        with capture_on_commit(execute=False) as callbacks, pytest.raises(ConflictError) as err:
            job_rerun(model=model_of(job), user=lead, job_id=job.pk)
        assert callbacks == []
        assert err.value.extra == {"status": status}
        job.refresh_from_db()
        assert job.status == status

    def test_re_run_is_for_leads(self, kind, project, annotator, outsider):
        from annotation.exceptions import PermissionDeniedError

        job = job_of_kind(kind=kind, project=project, status="failed")
        with pytest.raises(PermissionDeniedError):
            job_rerun(model=model_of(job), user=annotator, job_id=job.pk)
        with pytest.raises(NotFoundError):
            job_rerun(model=model_of(job), user=outsider, job_id=job.pk)
        job.refresh_from_db()
        assert job.status == "failed"


@pytest.fixture
def capture_on_commit(django_capture_on_commit_callbacks):
    return django_capture_on_commit_callbacks


@pytest.mark.parametrize(
    ("status", "age", "stale"),
    [
        ("queued", 10, False),
        ("queued", 100, True),  # its message was lost, or every worker is busy: a re-run is harmless
        ("running", 89, False),
        ("running", 91, True),
        ("done", 1000, False),
        ("failed", 1000, False),
    ],
)
def test_the_stale_rule_in_python_and_in_sql_agree(project, settings, status, age, stale):
    settings.SCREENQA_JOB_STALE_SECONDS = 90
    job = job_of_kind(kind="postprocess", project=project, status=status, heartbeat_at=ago(age))
    assert job_is_stale(job=job) is stale
    alive = jobs_alive(ReleaseJob.objects.all()).filter(pk=job.pk).exists()
    assert alive is (status in ("queued", "running") and not stale)


def test_a_new_job_has_a_heartbeat_so_it_is_not_stale_while_it_waits(project, settings):
    settings.SCREENQA_JOB_STALE_SECONDS = 90
    job = job_of_kind(kind="import", project=project)
    assert job.heartbeat_at > ago(5) and not job_is_stale(job=job)


def test_finish_and_fail_of_a_run_that_was_taken_over_write_nothing(project):
    # given a run that claimed the job, then was taken for dead and replaced by a second run
    job = runnable("postprocess", project)
    first = job_claim(model=ReleaseJob, job_id=job.pk, kind="postprocess")
    ReleaseJob.objects.filter(pk=job.pk).update(heartbeat_at=ago(10_000))
    second = job_claim(model=ReleaseJob, job_id=job.pk, kind="postprocess")
    assert (first.attempts, second.attempts) == (1, 2)
    # when the first run finishes or fails, nothing is written
    assert job_finish(job=first, outcome=Outcome(result={"stale": True}), processed=1, total=1) is False
    job_fail(job=first, exc=RuntimeError("late"))
    job.refresh_from_db()
    assert (job.status, job.result, job.error, job.attempts) == ("running", {}, "", 2)
    # and the second run's finish is what counts
    assert job_finish(job=second, outcome=Outcome(result={"decided": 1}), processed=1, total=1) is True
    job.refresh_from_db()
    assert (job.status, job.result) == ("done", {"decided": 1})


def test_fail_after_a_re_run_queued_the_job_again_writes_nothing(project):
    job = runnable("postprocess", project)
    claimed = job_claim(model=ReleaseJob, job_id=job.pk, kind="postprocess")
    ReleaseJob.objects.filter(pk=job.pk).update(status="queued")  # a lead's re-run, after its heartbeat stopped
    job_fail(job=claimed, exc=RuntimeError("late"))
    job.refresh_from_db()
    assert (job.status, job.error) == ("queued", "")


def test_a_message_naming_the_wrong_kind_is_refused(project):
    job = job_of_kind(kind="export", project=project)
    with pytest.raises(NotFoundError, match="is a export job, not postprocess"):
        job_run(kind="postprocess", job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("queued", 0)


def test_a_job_that_is_gone_is_nothing_to_run(db):
    assert job_run(kind="import", job_id=999_999) is None


def test_an_unknown_kind_is_refused(db):
    with pytest.raises(ApplicationError, match="Unknown job kind 'scrape'"):
        job_run(kind="scrape", job_id=1)


def test_run_now_creates_and_runs_a_job_in_this_process(project):
    answered_question(project=project, split="train", answers=[["A"]])
    job = job_run_now(kind="postprocess", project_slug=project.slug, batch_size=1)
    assert (job.kind, job.status, job.created_by, job.result["decided"]) == ("postprocess", "done", None, 1)
    with pytest.raises(NotFoundError):
        job_run_now(kind="postprocess", project_slug="nope")


def test_every_kind_has_a_work_function_and_its_table(db):
    assert {name: (spec.model, spec.fields) for name, spec in kinds.KINDS.items()} == {
        "import": (ImportJob, {}),
        "postprocess": (ReleaseJob, {"kind": "postprocess"}),
        "short-answers": (ReleaseJob, {"kind": "short-answers"}),
        "export": (ReleaseJob, {"kind": "export"}),
        "quality-figures": (ReleaseJob, {"kind": "quality-figures"}),
        "analysis-figures": (ReleaseJob, {"kind": "analysis-figures"}),
        "progress-figures": (ReleaseJob, {"kind": "progress-figures"}),
        "members": (MemberJob, {}),
        "suggestions": (AssistJob, {}),
    }


def test_time_limits_and_delivery_options_of_the_one_task_come_from_the_settings(settings):
    from annotation.celery import app

    assert job_run_task.soft_time_limit == settings.SCREENQA_JOB_SOFT_TIME_LIMIT == app.conf.task_soft_time_limit
    assert job_run_task.time_limit == settings.SCREENQA_JOB_TIME_LIMIT == app.conf.task_time_limit
    assert 0 < job_run_task.soft_time_limit < job_run_task.time_limit
    assert job_run_task.acks_late and job_run_task.reject_on_worker_lost
    assert settings.SCREENQA_JOB_HEARTBEAT_SECONDS * 3 < settings.SCREENQA_JOB_STALE_SECONDS <= 120


@pytest.mark.django_db(transaction=True)
class TestHeartbeat:
    def test_progress_and_beats_are_written_on_their_own_connection_during_a_read_only_snapshot(
        self, project, settings
    ):
        settings.SCREENQA_JOB_HEARTBEAT_SECONDS = 1
        job = job_claim(model=ReleaseJob, job_id=runnable("export", project).pk, kind="export")
        beat = Heartbeat(job=job)
        beat.start()
        try:
            # the export reads in one read-only snapshot: a write on its connection would fail
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                assert ReleaseJob.objects.get(pk=job.pk).processed == 0  # the snapshot is taken here
                beat.progress(5, 9)
                time.sleep(1.2)
                assert ReleaseJob.objects.get(pk=job.pk).processed == 0  # the snapshot does not move
            row = ReleaseJob.objects.get(pk=job.pk)
            assert (row.processed, row.total) == (5, 9)  # committed by the heartbeat's connection
            first = row.heartbeat_at
            time.sleep(1.6)  # no progress: still a beat every SCREENQA_JOB_HEARTBEAT_SECONDS
            assert ReleaseJob.objects.get(pk=job.pk).heartbeat_at > first
        finally:
            assert beat.stop() == (5, 9)

    def test_a_run_taken_over_stops_at_its_next_progress_report_and_records_nothing(self, project, monkeypatch):
        job = runnable("postprocess", project)

        def work(*, job, progress, **options):
            # another run claims the job (this one was taken for dead) ...
            ReleaseJob.objects.filter(pk=job.pk).update(attempts=job.attempts + 1)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # ... and the next report after the heartbeat noticed stops it
                progress(1, 2)
                time.sleep(0.05)
            raise AssertionError("never told")

        monkeypatch.setitem(kinds.KINDS, "postprocess", dataclasses.replace(kinds.KINDS["postprocess"], work=work))
        ran = job_run(kind="postprocess", job_id=job.pk)
        assert (ran.status, ran.attempts, ran.error) == ("running", 2, "")

    def test_job_lost_is_raised_by_progress_once_lost(self, project):
        beat = Heartbeat(job=runnable("import", project))
        beat.lost = True
        with pytest.raises(JobLost):
            beat.progress(1)


@pytest.mark.django_db(transaction=True)
def test_a_delivery_that_finds_the_job_live_looks_again_and_takes_it_over_once_stale(celery_worker, project, settings):
    """A pool process killed alone: Celery delivers its message again at once, while the heartbeat is fresh."""
    settings.SCREENQA_JOB_STALE_SECONDS = 1
    job = runnable("postprocess", project, status="running", attempts=1, heartbeat_at=timezone.now())
    job_run_task.apply_async(args=("postprocess", job.pk))
    deadline = time.monotonic() + 30
    while ReleaseJob.objects.get(pk=job.pk).status != "done" and time.monotonic() < deadline:
        time.sleep(0.1)
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("done", 2)


# --- starting a job once, and the rule of stored figures ------------------------------------------


def test_a_job_is_started_once_while_one_is_alive(project, lead, settings):
    first = job_start_once(model=ReleaseJob, project=project, user=lead, kind="quality-figures")
    assert (first.status, first.created_by) == ("queued", lead)
    # a second click, or a view's automatic refresh, gets the job alive
    assert job_start_once(model=ReleaseJob, project=project, user=None, kind="quality-figures") == first
    # another kind, or another project, is another job
    other_kind = job_start_once(model=ReleaseJob, project=project, user=None, kind="analysis-figures")
    assert other_kind != first and other_kind.created_by is None
    elsewhere = ProjectFactory(slug="elsewhere")
    assert job_start_once(model=ReleaseJob, project=elsewhere, user=None, kind="quality-figures").project == elsewhere
    # a dead job (stale), or a finished one, does not count: a new one starts
    ReleaseJob.objects.filter(pk=first.pk).update(heartbeat_at=ago(settings.SCREENQA_JOB_STALE_SECONDS + 1))
    second = job_start_once(model=ReleaseJob, project=project, user=None, kind="quality-figures")
    assert second != first
    ReleaseJob.objects.filter(pk=second.pk).update(status="done")
    assert job_start_once(model=ReleaseJob, project=project, user=None, kind="quality-figures") not in (first, second)


def test_stored_figures_are_computed_first_then_refreshed_when_old(settings):
    settings.SCREENQA_STORED_FIGURES_MAX_AGE = 60
    calls: list[str] = []
    now = timezone.now()

    def freshness(computed_at):
        return stored_figures_freshness(
            computed_at=computed_at,
            compute=lambda: calls.append("compute") or now,
            refresh=lambda: calls.append("refresh"),
        )

    # none yet: computed in the request, shown as computed now
    assert dataclasses.astuple(freshness(None)) == (now, False) and calls == ["compute"]
    # fresh, and exactly at the age: as they are
    calls.clear()
    young = ago(30)
    assert dataclasses.astuple(freshness(young)) == (young, False) and calls == []
    at_age = ago(59.5)
    assert dataclasses.astuple(freshness(at_age)) == (at_age, False) and calls == []
    # older than the age: the old ones, with their time, and a refresh under way
    old = ago(61)
    assert dataclasses.astuple(freshness(old)) == (old, True) and calls == ["refresh"]
