"""The worker role outlives broker outages (issue 19 §3), run here without Docker: ``docker/entrypoint.sh
worker`` against a Redis of the test's own (a throwaway ``redis-server``, stopped and started again), on
the test database. The restart policy that starts a worker again if it exits anyway is checked where it
is written: compose.yaml and the ``docker run`` lines of docs/operations.md (tests/ci/test_compose.py),
and run by the image test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connection
from kombu import Connection, Exchange, Producer

from tests.ci.throwaway import REDIS, RedisServer

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"

pytestmark = [
    pytest.mark.skipif(REDIS is None, reason="redis-server is not installed (the worker test starts its own)"),
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored"),  # send_task goes to the broker
]


def wait_until(condition: Callable[[], object], *, seconds: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    tail = log.read_text()[-4000:] if log and log.exists() else ""
    raise AssertionError(f"{what}: not within {seconds} s\n{tail}")


class Worker:
    """``docker/entrypoint.sh worker`` (one pool process) with its log."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                ["sh", str(ENTRYPOINT), "worker"],
                env=self.env,
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        if self.alive():
            assert self.process is not None
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


@pytest.fixture
def broker(tmp_path) -> Iterator[RedisServer]:
    broker = RedisServer(tmp_path)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def worker(broker, tmp_path) -> Iterator[Worker]:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AWS_", "WORKER_"))},
        "PYTHON": sys.executable,
        "DJANGO_SETTINGS_MODULE": "annotation.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}{password}@{host}:{port}/{db['NAME']}",
        "CELERY_BROKER_URL": broker.url,
        "SCREENQA_DATA_DIR": str(tmp_path / "data"),
        "WORKER_CONCURRENCY": "1",
    }
    worker = Worker(env, tmp_path / "worker.log")
    try:
        yield worker
    finally:
        worker.stop()


def connected(worker: Worker) -> int:
    return worker.text().count("Connected to redis://")


def ran(worker: Worker) -> int:
    return worker.text().count("succeeded in")


def send_job(broker: RedisServer) -> None:
    """The one job task, for a job that does not exist: the run finds nothing to do and succeeds."""
    from annotation.celery import app
    from pipeline.jobs.queue import JOB_RUN_TASK

    with app.connection_for_write(broker.url) as conn:
        app.send_task(JOB_RUN_TASK, args=("import", 2**31 - 1), connection=conn)


def test_the_worker_outlives_broker_outages_and_runs_what_is_queued_after(broker, worker):
    # Given a worker started while its broker is down (a host rebooting: the worker's container first)
    worker.start()
    wait_until(lambda: "Cannot connect to redis://" in worker.text(), seconds=60, what="a first try", log=worker.log)
    # it keeps trying, and is ready once the broker answers
    broker.start()
    wait_until(lambda: " ready." in worker.text(), seconds=60, what="the worker to be ready", log=worker.log)
    # When the broker stops and starts again, three times
    for outage in range(3):
        before = connected(worker)
        broker.stop()
        time.sleep(2)
        assert worker.alive(), worker.text()[-3000:]
        broker.start()
        wait_until(lambda: connected(worker) > before, seconds=60, what=f"reconnection {outage + 1}", log=worker.log)
    # then the worker is still there and runs a job queued after the last outage
    send_job(broker)
    wait_until(lambda: ran(worker) == 1, seconds=30, what="the job to run", log=worker.log)
    assert worker.alive()
    assert "Unrecoverable error" not in worker.text()


def test_a_stray_message_on_the_events_exchange_leaves_the_worker_connected(broker, worker):
    # Given a running worker
    broker.start()
    worker.start()
    wait_until(lambda: " ready." in worker.text(), seconds=60, what="the worker to be ready", log=worker.log)
    # When the events exchange carries a message without a hostname (anyone with the broker's address can
    # publish one; issue 19 saw the worker die on one after a broker restart)
    with Connection(broker.url) as conn:
        events = Exchange("celeryev", type="fanout")  # Celery's events exchange is a fanout on Redis
        Producer(conn).publish(
            {"type": "worker-stray"}, exchange=events, routing_key="worker.stray", serializer="json", declare=[events]
        )
    time.sleep(3)
    # then the worker neither fails on it nor drops its broker connection, and still runs jobs
    assert "KeyError" not in worker.text(), worker.text()[-3000:]
    assert "Connection to broker lost" not in worker.text(), worker.text()[-3000:]
    send_job(broker)
    wait_until(lambda: ran(worker) == 1, seconds=30, what="the job to run", log=worker.log)
    assert worker.alive() and connected(worker) == 1


def test_the_worker_retries_the_broker_for_as_long_as_it_takes():
    # Celery's default gives up after 100 tries (about 45 minutes) and the worker exits
    from annotation.celery import app

    assert app.conf.broker_connection_retry is True
    assert app.conf.broker_connection_retry_on_startup is True
    assert app.conf.broker_connection_max_retries is None


def test_the_worker_serves_the_metrics_of_the_jobs_it_runs(broker, worker):
    """docs/operations.md "Metrics": jobs run in the worker's pool processes (multiprocess metrics), served on
    WORKER_METRICS_PORT; here an import whose zip is not stored fails, and its failure and duration are counted."""
    import socket
    import urllib.request

    from annotation.celery import app
    from pipeline.jobs.queue import JOB_RUN_TASK
    from tests.factories import ProjectFactory, job_of_kind

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    worker.env.update({"WORKER_METRICS_PORT": str(port), "WORKER_METRICS_BIND": "127.0.0.1"})
    job = job_of_kind(kind="import", project=ProjectFactory(slug="metered"))
    broker.start()
    worker.start()
    wait_until(lambda: " ready." in worker.text(), seconds=60, what="the worker to be ready", log=worker.log)
    with app.connection_for_write(broker.url) as conn:
        app.send_task(JOB_RUN_TASK, args=("import", job.pk), connection=conn)
    wait_until(lambda: "raised unexpected" in worker.text(), seconds=60, what="the job to fail", log=worker.log)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    assert 'screenqa_job_failures_total{kind="import"} 1.0' in text, text
    assert 'screenqa_job_duration_seconds_count{kind="import",outcome="failed"} 1.0' in text, text
