"""What the container runs (docker/entrypoint.sh), run here without a Docker engine."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"


def production_env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AWS_"))}
    db = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/screenqa")
    return {
        **base,
        "PYTHON": sys.executable,
        "DJANGO_SETTINGS_MODULE": "annotation.settings.production",
        "DJANGO_SECRET_KEY": "k" * 64,
        "DATABASE_URL": db.rsplit("/", 1)[0] + "/postgres",
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
        "AWS_STORAGE_BUCKET_NAME": "screenqa-test-bucket",
        "DJANGO_STATIC_ROOT": str(tmp_path / "static"),
        "SCREENQA_DATA_DIR": str(tmp_path / "data"),
    }


def test_dockerfile_runs_the_entrypoint_roles():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["sh", "docker/entrypoint.sh"]' in dockerfile
    assert re.search(r'^CMD \["web"\]$', dockerfile, re.M)
    assert "DJANGO_SETTINGS_MODULE=annotation.settings.production" in dockerfile
    assert "collectstatic" in dockerfile
    for role in ("web", "worker", "migrate", "check"):
        assert f"  {role})" in ENTRYPOINT.read_text()


def test_unknown_role_is_refused(tmp_path):
    result = subprocess.run(
        ["sh", str(ENTRYPOINT), "serve"],
        capture_output=True,
        text=True,
        check=False,
        env=production_env(tmp_path),
        cwd=ROOT,
    )
    assert result.returncode == 64
    assert "unknown role 'serve'" in result.stderr


def test_check_role_passes_deployment_checks(tmp_path):
    result = subprocess.run(
        ["sh", str(ENTRYPOINT), "check"],
        capture_output=True,
        text=True,
        check=False,
        env=production_env(tmp_path),
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_web_role_serves_the_app_with_collected_static_files(tmp_path):
    env = production_env(tmp_path)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], env=env, cwd=ROOT, check=True, timeout=180
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # the default worker layout (2 x CPUs + 1 processes, one thread each) is what starts
    env.update({"BIND": "127.0.0.1", "PORT": str(port)})
    env.pop("WEB_WORKERS", None)
    env.pop("WEB_THREADS", None)
    proc = subprocess.Popen(
        ["sh", str(ENTRYPOINT), "web"], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 30
        body = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
                    body = json.loads(resp.read())
                    break
            except OSError:
                time.sleep(0.2)
        assert body == {"status": "ok"}
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=5) as resp:
            page = resp.read().decode()
        # hashed static names come from the manifest written by collectstatic
        assert re.search(r"/static/frontend/app\.[0-9a-f]{12}\.css", page)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_build_context_leaves_out_local_state():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip()}
    assert {".git", ".venv", "data", "staticfiles"} <= ignored
