"""The operators' tools, for real (docs/operations.md, "Logs, metrics and errors"):

* Debian's Prometheus server scrapes the web role (``docker/entrypoint.sh web``: gunicorn, several processes,
  production settings) with the bearer token, and gets the requests of every process added up (multiprocess
  mode); a scrape without the token is refused (403). The web role's lines are JSON with the request id.
* Sentry: with ``SENTRY_DSN`` pointing at a tiny HTTP server of the test, an unhandled error of a request
  arrives there as an event, tagged with the request id.

Prometheus comes from Debian (``apt-get install prometheus``); without it that test is skipped.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.db import connection

from annotation.models import ScreenState
from tests.ci.test_entrypoint import ENTRYPOINT, ROOT, production_env
from tests.factories import ProjectFactory
from tests.pipeline.stages.helpers import screens

PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus" if os.path.exists("/usr/bin/prometheus") else None)
TOKEN = "scrape-token-0123456789abcdef0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, *, seconds: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            if proc is not None and proc.poll() is not None:
                break
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {seconds} s")


def database_url_of_the_tests() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def web(tmp_path) -> Iterator[tuple[int, Path]]:
    """The web role with two processes on the test database, its output in a file."""
    port = free_port()
    env = {
        **production_env(tmp_path),
        "DATABASE_URL": database_url_of_the_tests(),
        "BIND": "127.0.0.1",
        "PORT": str(port),
        "WEB_WORKERS": "2",
        "SCREENQA_METRICS_TOKEN": TOKEN,
        "TMPDIR": str(tmp_path),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log = tmp_path / "web.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["sh", str(ENTRYPOINT), "web"], env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", seconds=120, proc=proc)
        yield port, log
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def prometheus_query(port: int, query: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())["data"]["result"]


@pytest.mark.skipif(
    PROMETHEUS is None, reason="Debian's prometheus package is not installed (apt-get install prometheus)"
)
@pytest.mark.django_db(transaction=True)
def test_a_real_prometheus_scrapes_every_web_process_with_the_token_and_not_without(web, tmp_path):
    port, log = web
    project = ProjectFactory(slug="scraped")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    # requests spread over both processes; each process counts its own, the scrape adds them up
    for i in range(12):
        request = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers={"X-Request-ID": f"probe-{i}"})
        with urllib.request.urlopen(request, timeout=5) as resp:
            assert resp.status == 200 and resp.headers["X-Request-ID"] == f"probe-{i}"
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        textwrap.dedent(
            f"""
            global:
              scrape_interval: 1s
              scrape_timeout: 1s
            scrape_configs:
              - job_name: screenqa
                metrics_path: /metrics
                authorization:
                  type: Bearer
                  credentials_file: {token_file}
                static_configs:
                  - targets: ["127.0.0.1:{port}"]
              - job_name: stranger
                metrics_path: /metrics
                static_configs:
                  - targets: ["127.0.0.1:{port}"]
            """
        )
    )
    prom_port = free_port()
    with open(tmp_path / "prometheus.log", "wb") as out:
        prometheus = subprocess.Popen(
            [
                str(PROMETHEUS),
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(f"http://127.0.0.1:{prom_port}/-/ready", seconds=60, proc=prometheus)
        deadline = time.monotonic() + 60
        up: dict[str, str] = {}
        healthz: list[dict] = []
        depth: list[dict] = []
        while time.monotonic() < deadline:
            up = {r["metric"]["job"]: r["value"][1] for r in prometheus_query(prom_port, "up")}
            healthz = prometheus_query(
                prom_port, 'sum(screenqa_http_request_duration_seconds_count{job="screenqa",route="healthz"})'
            )
            depth = prometheus_query(prom_port, 'screenqa_queue_depth{project="scraped",stage="questions-1"}')
            scraped = up.get("screenqa") == "1" and up.get("stranger") == "0" and healthz and depth
            if scraped and float(healthz[0]["value"][1]) >= 13:  # the 12 probes and the fixture's first one
                break
            time.sleep(0.5)
        assert up == {"screenqa": "1", "stranger": "0"}, up
        assert healthz and float(healthz[0]["value"][1]) >= 13, healthz
        assert depth and depth[0]["value"][1] == "2", depth
        with urllib.request.urlopen(f"http://127.0.0.1:{prom_port}/api/v1/targets", timeout=5) as resp:
            targets = json.loads(resp.read())["data"]["activeTargets"]
        refused = next(t for t in targets if t["labels"]["job"] == "stranger")
        assert "403" in refused["lastError"], refused
        # every query of the Grafana dashboard (docs/) is one this Prometheus accepts
        dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
        for panel in dashboard["panels"]:
            for target in panel.get("targets", []):
                expr = target["expr"].replace("$job", ".*").replace("$project", ".*")
                prometheus_query(prom_port, expr)  # a bad expression answers 400, which raises
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=20)
    # the web role's lines are JSON objects, with the request id the probe sent
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    probe = {line["logger"]: line for line in lines if line.get("request_id") == "probe-3"}
    assert probe["screenqa.request"]["level"] == "INFO" and probe["screenqa.request"]["status"] == 200
    assert {"timestamp", "annotator", "project"} <= set(probe["screenqa.request"])
    # every line of the request has its id: here the health check's warning (this bucket is not reachable)
    assert probe["annotation.apis.health"]["level"] == "WARNING"
    booted = [line for line in lines if line.get("logger") == "gunicorn.error"]
    assert booted, "gunicorn's own lines are JSON too"


class Collector(BaseHTTPRequestHandler):
    """A stand-in for Sentry's ingestion: keeps every envelope it is sent."""

    received: list[bytes] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        encoding = self.headers.get("Content-Encoding", "")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "br":
            import brotli  # type: ignore[import-not-found]

            body = brotli.decompress(body)
        Collector.received.append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


SCRIPT = """
import sys, types
import django
from django.urls import path

def boom(request, slug):
    raise ZeroDivisionError("division by zero in a view")

urls = types.ModuleType("boom_urls")
urls.urlpatterns = [path("projects/<slug:slug>/boom/", boom)]
sys.modules["boom_urls"] = urls
django.setup()
from django.test import Client
from django.test.utils import override_settings
import sentry_sdk

with override_settings(ROOT_URLCONF="boom_urls"):
    response = Client(raise_request_exception=False).get("/projects/demo/boom/", HTTP_X_REQUEST_ID="err-42")
print(response.status_code)
sentry_sdk.flush(10)
"""


def test_sentry_receives_an_unhandled_error_when_a_dsn_is_set(tmp_path):
    Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SENTRY_")},
            "DJANGO_SETTINGS_MODULE": "annotation.settings.test",
            "DJANGO_ALLOWED_HOSTS": "testserver",
            "SENTRY_DSN": f"http://publickey@127.0.0.1:{server.server_port}/7",
            "SENTRY_ENVIRONMENT": "ci",
        }
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.strip().splitlines()[-1] == "500"
    finally:
        server.shutdown()
    events = []
    for envelope in Collector.received:
        for line in envelope.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and "exception" in item:
                events.append(item)
    assert events, Collector.received
    event = events[0]
    assert event["exception"]["values"][-1]["type"] == "ZeroDivisionError"
    assert event["environment"] == "ci"
    assert event["tags"]["request_id"] == "err-42" and event["tags"]["project"] == "demo"
    assert "user" not in event or not event["user"].get("username")  # no personal data is sent
