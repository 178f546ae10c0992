"""The container image builds, and every role runs from it (issue 14), with the slow-client proof of the
production topology (issue 12 §1) through the proxy container.

Runs where a Docker engine can run (``.ci/run`` installs docker.io, debootstrap and nginx); skipped with
the reason otherwise. Nothing is pulled: the base is a Debian bookworm with Python 3.11 made here with
debootstrap and kept by its tag (tests/ci/image.py), and Docker's layer cache keeps the dependency layer,
so a re-run rebuilds only the code layer. The containers share the host network, to use this machine's
PostgreSQL (a database of their own, made and dropped here) and Redis, and an S3-compatible server
(moto's) started here.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.ci import image, slowclients

pytestmark = [pytest.mark.image, pytest.mark.slow]

TAG = "screenqa:image-test"
HALF_OPEN = 100
LIMIT_S = 1.0
HTTPS = {"X-Forwarded-Proto": "https"}  # as the TLS terminator in front of the proxy says


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(predicate, *, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"{what}: not within {seconds} s")


@dataclass
class Deployment:
    """The image, and what its containers need: environment, ports, names to clean up."""

    tag: str
    build_seconds: float
    size_bytes: int
    env: dict[str, str]
    proxy_port: int = 0
    web_port: int = 0
    containers: list[str] = field(default_factory=list)

    def docker_env_args(self, extra: dict[str, str] | None = None) -> list[str]:
        args = []
        for key, value in {**self.env, **(extra or {})}.items():
            args += ["-e", f"{key}={value}"]
        return args

    def run(self, role: str, *args: str, env: dict[str, str] | None = None, timeout: float = 300):
        """A role in the foreground; returns the finished process."""
        return image.docker(
            "run", "--rm", "--network", "host", *self.docker_env_args(env), self.tag, role, *args, timeout=timeout
        )

    def start(self, role: str, *, env: dict[str, str] | None = None) -> str:
        """A role in the background; returns its container's name."""
        name = f"screenqa-test-{role}-{uuid.uuid4().hex[:8]}"
        # The restart policy of compose.yaml and of the `docker run` lines of docs/operations.md.
        started = image.docker(
            "run",
            "-d",
            "--restart",
            "unless-stopped",
            "--name",
            name,
            "--network",
            "host",
            *self.docker_env_args(env),
            self.tag,
            role,
            timeout=60,
        )
        assert started.returncode == 0, started.stderr
        self.containers.append(name)
        return name

    def logs(self, name: str) -> str:
        out = image.docker("logs", "--tail", "80", name, timeout=30)
        return out.stdout + out.stderr

    def shell(self, container: str, code: str) -> str:
        """Python run by ``manage.py shell`` inside a running container (production settings)."""
        done = image.docker("exec", container, "python", "manage.py", "shell", "-c", code, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Iterator[tuple[str, float, int]]:
    try:
        started = image.docker_ready()
    except image.Unavailable as exc:
        pytest.skip(f"the image test needs a Docker engine: {exc}")
    try:
        try:
            base = image.local_base()
        except image.Unavailable as exc:
            pytest.skip(f"the image test could not make its local base image: {exc}")
        # Built from a copy of the working tree with a `.env`, keys and local data left in it, as the folder
        # `docker compose up --build` runs in has: none of them may reach the image (issue 19 §8).
        context = image.repository_copy(tmp_path_factory.mktemp("context") / "repo")
        image.plant(context)
        result = image.build(TAG, base=base, context=context)
        print(f"\nimage {TAG}: built in {result.seconds:.1f} s, {result.size_bytes / 1e6:.0f} MB")
        yield TAG, result.seconds, result.size_bytes
    finally:
        if started:
            started.terminate()
            started.wait(timeout=120)


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """A fresh database of the image test's own on this machine's PostgreSQL, dropped afterwards."""
    import psycopg

    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/screenqa")
    base, name = url.rsplit("/", 1)
    name = f"{name.split('?')[0]}_image"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{base}/{name}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """moto's S3-compatible server on this machine, with the bucket production needs."""
    import boto3

    moto = shutil.which("moto_server") or str(Path(sys.executable).with_name("moto_server"))
    port = free_port()
    proc = subprocess.Popen(
        [moto, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_until(
            lambda: slowclients.timed("127.0.0.1", port, "GET", "/", count=1, timeout=1).statuses,
            seconds=30,
            what="moto",
        )
        env = {
            "AWS_STORAGE_BUCKET_NAME": "screenqa-image-test",
            "AWS_S3_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "AWS_S3_REGION_NAME": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }
        boto3.client(
            "s3",
            endpoint_url=env["AWS_S3_ENDPOINT_URL"],
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        ).create_bucket(Bucket=env["AWS_STORAGE_BUCKET_NAME"])
        yield env
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.fixture(scope="module")
def deployment(built, database, s3) -> Iterator[Deployment]:
    tag, seconds, size = built
    env = {
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database,
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
        **s3,
    }
    deployed = Deployment(tag=tag, build_seconds=seconds, size_bytes=size, env=env)
    try:
        yield deployed
    finally:
        for name in deployed.containers:
            image.docker("rm", "-f", name, timeout=60)


@pytest.fixture(scope="module")
def running(deployment) -> Deployment:
    """migrate, then web, proxy and worker in the background, as compose.yaml runs them."""
    migrated = deployment.run("migrate", timeout=600)
    assert migrated.returncode == 0, migrated.stdout[-3000:] + migrated.stderr[-3000:]
    deployment.web_port, deployment.proxy_port = free_port(), free_port()
    web = deployment.start("web", env={"BIND": "127.0.0.1", "PORT": str(deployment.web_port)})
    proxy = deployment.start(
        "proxy", env={"PORT": str(deployment.proxy_port), "WEB_UPSTREAM": f"127.0.0.1:{deployment.web_port}"}
    )
    deployment.start("worker")

    def healthy() -> bool:
        timings = slowclients.timed("127.0.0.1", deployment.proxy_port, "GET", "/healthz", count=1, timeout=2)
        return timings.statuses == [200]

    try:
        wait_until(healthy, seconds=60, what="the proxy's /healthz")
    except AssertionError:
        raise AssertionError(deployment.logs(web) + deployment.logs(proxy)) from None
    return deployment


def request(port: int, method: str, path: str, *, body: bytes | None = None, headers: dict[str, str] | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={**HTTPS, **(headers or {})})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def multipart(field_name: str, filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field_name}"; filename="{filename}"\r\n'
            "Content-Type: application/zip\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


# -- the image ---------------------------------------------------------------------------------------------


def test_the_image_holds_the_product_only(deployment):
    probe = (
        "import importlib.util as u, os, sys;"
        "tools = [m for m in ('pytest', 'playwright', 'factory', 'mypy', 'ruff', 'moto', 'djlint', 'importlinter')"
        " if u.find_spec(m)];"
        "paths = [p for p in ('tests', '.git', 'devtools', 'fixtures', 'docs', '.venv', 'data/db.sqlite3')"
        " if os.path.exists(p)];"
        "print(tools, paths)"
    )
    done = image.docker("run", "--rm", "--entrypoint", "python", deployment.tag, "-c", probe, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] []"
    # no secret, key, credential or local database (the build context held some: tests/ci/image.py PLANTED)
    secrets_probe = (
        "import fnmatch, os;"
        "names = ('.env*', '*.env', '*.pem', '*.key', '*.p12', 'id_rsa*', 'id_ecdsa*', 'id_ed25519*', 'credentials*',"
        " '.netrc', '.pgpass', '*.sqlite3*', 'demo-passwords.txt', 'secrets');"
        "found = sorted(os.path.join(d, n) for d, ds, fs in os.walk('/app') for n in fs + ds"
        " if any(fnmatch.fnmatch(n, p) for p in names));"
        "marked = sorted(os.path.join(d, n) for d, _, fs in os.walk('/app') for n in fs"
        " if not d.startswith('/app/staticfiles') and b'planted' in open(os.path.join(d, n), 'rb').read());"
        "print(found, marked, sorted(os.listdir('/app')))"
    )
    done = image.docker("run", "--rm", "--entrypoint", "python", deployment.tag, "-c", secrets_probe, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "[] [] ['annotation', 'data', 'docker', 'frontend', 'manage.py', 'pipeline', 'requirements.lock',"
        " 'requirements.txt', 'staticfiles']"
    ), done.stdout
    # the build-time certificates stayed in the build stage
    history = image.docker("history", "--no-trunc", deployment.tag, timeout=60).stdout
    inspect = image.docker("image", "inspect", deployment.tag, timeout=60).stdout
    assert "BEGIN CERTIFICATE" not in history + inspect
    assert "EXTRA_CA_CERTS" not in inspect
    # a size to notice bloat by (measured: docs/performance.md)
    assert deployment.size_bytes < 900e6, deployment.size_bytes


def test_check_passes_with_a_strong_secret_and_fails_with_a_weak_one(deployment):
    strong = deployment.run("check", timeout=180)
    assert strong.returncode == 0, strong.stderr[-3000:]
    weak = deployment.run("check", env={"DJANGO_SECRET_KEY": "x"}, timeout=180)
    assert weak.returncode != 0
    assert "security.W009" in weak.stderr


# -- the running roles -------------------------------------------------------------------------------------


def test_every_role_runs_as_the_unprivileged_user(running):
    assert len(running.containers) == 3
    for name in running.containers:
        status = image.docker("exec", name, "cat", "/proc/1/status", timeout=30).stdout
        uids = re.search(r"^Uid:\s+(\d+)\s+(\d+)", status, re.M)
        assert uids and uids.groups() == ("10001", "10001"), (name, status)


def test_the_health_check_of_the_image_passes(running):
    for name in running.containers[:2]:  # web and proxy; the worker has compose.yaml's own
        done = image.docker("exec", name, "python", "docker/healthcheck.py", timeout=30)
        assert done.returncode == 0, (name, done.stderr)


def test_web_serves_pages_and_static_files_through_the_proxy(running):
    port = running.proxy_port
    status, headers, body = request(port, "GET", "/login/")
    assert status == 200, body[:2000]
    page = body.decode()
    assert headers["Strict-Transport-Security"].startswith("max-age=31536000")
    assert "script-src 'self' 'nonce-" in headers["Content-Security-Policy"]
    # hashed names from the manifest written at build time, served compressed by the app
    css = re.search(r'href="(/static/frontend/app\.[0-9a-f]{12}\.css)"', page)
    assert css, page[:2000]
    status, headers, _ = request(port, "GET", css.group(1), headers={"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Type"].startswith("text/css")
    assert headers.get("Content-Encoding") == "gzip"
    # the other pages that need no login, and the admin's own static files
    for path in ("/admin/login/", "/api/docs/", "/api/schema/"):
        status, _, body = request(port, "GET", path)
        assert status == 200, (path, body[:1000])
    admin_css = re.search(
        r'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', request(port, "GET", "/admin/login/")[2].decode()
    )
    assert admin_css and request(port, "GET", admin_css.group(1))[0] == 200
    assert request(port, "OPTIONS", "/api/docs/")[0] == 200
    # plain HTTP is sent to HTTPS; the health check answers either way
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/login/")
    response = conn.getresponse()
    assert response.status == 301 and response.getheader("Location").startswith("https://")
    conn.close()


@pytest.fixture(scope="module")
def project(running) -> dict[str, str]:
    """A lead and an annotator with API tokens, made inside the web container."""
    code = (
        "from django.contrib.auth import get_user_model;"
        "from rest_framework.authtoken.models import Token;"
        "from annotation.models import Membership, Project;"
        "p = Project.objects.create(slug='image-test', name='Image test');"
        "U = get_user_model();"
        "lead = U.objects.create_user('lead', password='pass-word-123');"
        "annie = U.objects.create_user('annie', password='pass-word-123');"
        "Membership.objects.create(project=p, user=lead, role='lead');"
        "Membership.objects.create(project=p, user=annie, role='annotator');"
        "print(Token.objects.create(user=lead).key, Token.objects.create(user=annie).key)"
    )
    lead, annotator = running.shell(running.containers[0], code).strip().splitlines()[-1].split()
    return {"slug": "image-test", "lead": lead, "annotator": annotator}


def test_worker_completes_an_import_submitted_through_the_api(running, project, tmp_path):
    from devtools.demo.generator import generate_zip

    zip_path = tmp_path / "screens.zip"
    ids = generate_zip(zip_path, count=6, seed=1, sizes=((1080, 1920),))
    body, content_type = multipart("file", "screens.zip", zip_path.read_bytes())
    status, _, answer = request(
        running.proxy_port,
        "POST",
        f"/api/projects/{project['slug']}/imports/",
        body=body,
        headers={"Authorization": f"Token {project['lead']}", "Content-Type": content_type},
    )
    assert status == 202, answer[:2000]
    job = json.loads(answer)

    def finished() -> bool:
        nonlocal job
        _, _, raw = request(
            running.proxy_port, "GET", job["url"], headers={"Authorization": f"Token {project['lead']}"}
        )
        job = json.loads(raw)
        return job["status"] in ("done", "failed")

    try:
        wait_until(finished, seconds=120, what="the import job")
    except AssertionError:
        raise AssertionError(f"{job}\n{running.logs(running.containers[2])}") from None
    assert job["status"] == "done", job
    assert job["summary"]["imported"] == len(ids) and not job["summary"]["rejected"], job["summary"]
    # the screenshots went to the bucket
    import boto3

    s3 = boto3.client(
        "s3",
        endpoint_url=running.env["AWS_S3_ENDPOINT_URL"],
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=running.env["AWS_STORAGE_BUCKET_NAME"]).get("Contents", [])]
    assert sum(1 for k in keys if k.startswith("screens/")) >= len(ids), keys


def test_health_and_next_answer_within_a_second_with_100_half_open_connections(running, project):
    # needs the imported screens (prefilter) of the test above
    next_path = f"/api/projects/{project['slug']}/stages/prefilter/next/"
    auth = {"Authorization": f"Token {project['annotator']}", **HTTPS}
    assert request(running.proxy_port, "POST", next_path, body=b"", headers=auth)[0] == 200
    held = slowclients.hold_half_open("127.0.0.1", running.proxy_port, HALF_OPEN)
    try:
        health = slowclients.timed("127.0.0.1", running.proxy_port, "GET", "/healthz", count=20, timeout=3 * LIMIT_S)
        next_ = slowclients.timed(
            "127.0.0.1", running.proxy_port, "POST", next_path, count=20, timeout=3 * LIMIT_S, headers=auth
        )
        print(f"\ncontainers, {HALF_OPEN} half-open: healthz {health.summary()}; next {next_.summary()}")
        assert health.statuses == [200] * 20 and health.worst < LIMIT_S, health.summary()
        assert next_.statuses == [200] * 20 and next_.worst < LIMIT_S, next_.summary()
        assert slowclients.still_open(held) == HALF_OPEN
    finally:
        slowclients.close_all(held)


def test_a_worker_that_exits_is_started_again(running):
    # Given the worker, started with the documented restart policy; when its process ends (a cold shutdown
    # here; an unrecoverable error or a crash alike)
    worker = running.containers[2]
    assert image.docker("exec", worker, "sh", "-c", "kill -QUIT 1", timeout=30).returncode == 0

    def restarted() -> bool:
        state = image.docker("inspect", "-f", "{{.RestartCount}} {{.State.Running}}", worker, timeout=30).stdout.split()
        return bool(state) and int(state[0]) >= 1 and state[1] == "true"

    # then Docker starts it again, and it is ready for work
    wait_until(restarted, seconds=60, what="the worker's restart")

    def ready_twice() -> bool:
        logs = image.docker("logs", worker, timeout=30)
        return (logs.stdout + logs.stderr).count(" ready.") >= 2

    wait_until(ready_twice, seconds=90, what="the restarted worker")
