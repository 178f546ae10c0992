"""Kill tests: a real prefork Celery worker (main process and pool child) is SIGKILLed mid-job.

For an import and an export: the job is left ``running``, is detected stale once its heartbeat stops
(a 3-second stale window here), is re-run through the API on a fresh worker, and finishes with no
duplicate rows and no partial file.

The workers are subprocesses on the test database and the Redis broker (``CELERY_BROKER_URL``), with the
test's media folder; each is its own process group, so one ``killpg`` kills the worker and its children.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.models import Count

from annotation.models import Candidate, ImportJob, Job, ReleaseJob, Screen
from devtools.demo.generator import iter_screens
from pipeline.jobs.queue import JOB_RUN_TASK
from pipeline.release.export.jobs import zip_folder
from pipeline.release.export.service import release_export
from tests.conftest import login
from tests.factories import MembershipFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
STALE_SECONDS = 3
SCREENS = 1200  # ~4 s of import on a quiet machine (docs/performance.md: ~300 screens/s)
QUESTIONS = 20_000  # ~2-3 s of export


def wait_until(condition: Callable[[], Any], *, timeout: float, what: str, logs: list[Path] = ()) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    tails = "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for log in logs if log.exists())
    raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{tails}")


class Worker:
    """``celery -A annotation worker --pool prefork -c 1`` in a process group of its own."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Worker:
        command = [sys.executable, "-m", "celery", "-A", "annotation", "worker", "--pool", "prefork", "-c", "1"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO"]
        command += ["-n", f"{self.log.stem}-{os.getpid()}@%h"]
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        return self

    def kill(self) -> None:
        """SIGKILL the whole worker: the main process and its pool children (one process group)."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

        def group_gone() -> bool:
            try:
                os.killpg(self.process.pid, 0)  # type: ignore[union-attr]
            except ProcessLookupError:
                return True
            return False

        wait_until(group_gone, timeout=10, what="the worker's pool process to die")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # warm shutdown
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


@pytest.fixture
def kill_env(celery_broker, settings, tmp_path) -> Iterator[dict[str, str]]:
    """The environment of the worker subprocesses, and this process's settings to match it."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    data = tmp_path / "data"
    media = data / "test-media"  # MEDIA_ROOT of annotation.settings.test under SCREENQA_DATA_DIR
    settings.MEDIA_ROOT = media
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(media)}},
    }
    settings.SCREENQA_JOB_STALE_SECONDS = STALE_SECONDS
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "annotation.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}{password}@{host}:{port}/{db['NAME']}",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "SCREENQA_DATA_DIR": str(data),
        "SCREENQA_JOB_HEARTBEAT_SECONDS": "1",
        "SCREENQA_JOB_STALE_SECONDS": str(STALE_SECONDS),
        "PYTHONPATH": str(ROOT),
    }
    yield env


def forget_unacknowledged(app: Any, kind: str, job_id: int) -> None:
    """Drop the killed worker's unacknowledged message from Redis: it would be delivered again after the
    visibility timeout (30 minutes), to whatever worker consumes this broker then."""
    with app.connection_for_write() as conn:
        client = conn.default_channel.client
        for tag, raw in client.hgetall("unacked").items():
            headers = json.loads(raw)[0]["headers"]
            if headers.get("task") == JOB_RUN_TASK and headers.get("argsrepr") == repr((kind, job_id)):
                client.hdel("unacked", tag)
                client.zrem("unacked_index", tag)


def rico_zip(count: int) -> bytes:
    """``count`` RICO-format pairs: 30 generated screens, each stored under several ids."""
    screens = list(iter_screens(count=30, sizes=((540, 960),)))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n in range(count):
            screen = screens[n % len(screens)]
            zf.writestr(f"{800000 + n}.jpg", screen.image, compress_type=zipfile.ZIP_STORED)
            zf.writestr(f"{800000 + n}.json", screen.vh_bytes(), compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def detect_and_re_run(*, api_client: Any, env: dict[str, str], url: str, model: type[Job], logs: list[Path]) -> Job:
    """After the kill: wait until the API reports the job stale, re-run it, and let a fresh worker finish it."""
    body = wait_until(
        lambda: (b := api_client.get(url).json())["stale"] and b, timeout=STALE_SECONDS + 10, what="stale"
    )
    assert body["status"] == "running"
    assert api_client.post(f"{url}retry/").status_code == 202
    with Worker(env, logs[1]):
        ended = ("done", "failed")
        wait_until(lambda: model.objects.get(pk=body["id"]).status in ended, timeout=90, what="the re-run", logs=logs)
    return model.objects.get(pk=body["id"])


def test_import_killed_mid_job_is_detected_stale_and_re_run_without_duplicates(
    kill_env, celery_broker, project, lead, api_client, tmp_path
):
    # Given a lead's import of 1,200 screens running on a worker
    upload = SimpleUploadedFile("batch.zip", rico_zip(SCREENS), content_type="application/zip")
    login(api_client, lead)
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    screens = Screen.objects.filter(project=project)
    with Worker(kill_env, logs[0]) as first:
        response = api_client.post(f"/api/projects/{project.slug}/imports/", {"file": upload}, format="multipart")
        assert response.status_code == 202, response.content
        job_id, url = response.json()["id"], response.json()["url"]
        wait_until(lambda: screens.count() >= 200, timeout=60, what="the first batches", logs=logs)
        # When the whole worker is killed mid-import
        first.kill()
    forget_unacknowledged(celery_broker, "import", job_id)
    before = screens.count()
    assert ImportJob.objects.get(pk=job_id).status == "running" and 0 < before < SCREENS, before
    # Then the job is detected dead once its heartbeat is older than the stale window, and a re-run on a
    # fresh worker finishes it
    job = detect_and_re_run(api_client=api_client, env=kill_env, url=url, model=ImportJob, logs=logs)
    assert (job.status, job.error, job.attempts) == ("done", "", 2)
    # with every screen once, each with its candidates once
    assert screens.count() == SCREENS
    assert screens.values("rico_id").distinct().count() == SCREENS
    candidates = Candidate.objects.filter(screen__project=project)
    assert not candidates.values("screen_id", "vh_index").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert not screens.filter(candidates__isnull=True).exists()
    # and the second run found what the first had committed
    assert job.summary["already_present"] >= before
    assert job.summary["imported"] + job.summary["already_present"] == SCREENS
    assert (job.processed, job.total) == (SCREENS, SCREENS)


def test_export_killed_mid_job_is_detected_stale_and_re_run_without_a_partial_file(
    kill_env, celery_broker, api_client, tmp_path
):
    from devtools.bench.bench_release import generate

    # Given an export of 20,000 kept questions running on a worker
    project = generate(screens=2000, questions=QUESTIONS)
    lead = MembershipFactory(project=project, role="lead").user
    login(api_client, lead)
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    with Worker(kill_env, logs[0]) as first:
        response = api_client.post(f"/api/projects/{project.slug}/exports/", {"format": "screenqa"}, format="json")
        assert response.status_code == 202, response.content
        job_id, url = response.json()["id"], response.json()["status_url"]
        progress = ReleaseJob.objects.filter(pk=job_id, processed__gt=0)
        wait_until(progress.exists, timeout=60, what="export progress", logs=logs)
        # When the whole worker is killed mid-export
        first.kill()
    forget_unacknowledged(celery_broker, "export", job_id)
    killed = ReleaseJob.objects.get(pk=job_id)
    assert killed.status == "running" and killed.processed < QUESTIONS, killed.processed
    # Then nothing was stored: the zip is written in a temporary folder, and stored only once complete
    assert not killed.artifact
    assert not default_storage.exists("releases") or default_storage.listdir("releases") == ([], [])
    # And the job is detected dead, and a re-run on a fresh worker finishes it
    job = detect_and_re_run(api_client=api_client, env=kill_env, url=url, model=ReleaseJob, logs=logs)
    assert (job.status, job.error, job.attempts) == ("done", "", 2)
    assert (job.processed, job.total) == (QUESTIONS, QUESTIONS)
    # with one complete zip in storage: the same bytes as an export made here
    assert default_storage.listdir("releases") == ([], [Path(job.artifact.name).name])
    reference = tmp_path / "reference"
    release_export(project=project, out_dir=reference / "release", fmt="screenqa")
    zip_folder(folder=reference / "release", target=reference / "release.zip")
    with job.artifact.open("rb") as fh:
        assert fh.read() == (reference / "release.zip").read_bytes()
