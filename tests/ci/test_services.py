"""`.ci/services.py`: how the test command finds PostgreSQL and Redis."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "services.py"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--", *command],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_environment_variables_win():
    result = run(
        {"DATABASE_URL": "postgres://x@h/db", "CELERY_BROKER_URL": "redis://h:1/0"},
        sys.executable,
        "-c",
        "import os; print(os.environ['DATABASE_URL'], os.environ['CELERY_BROKER_URL'])",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["postgres://x@h/db", "redis://h:1/0"]


@pytest.mark.skipif(not shutil.which("redis-server"), reason="redis-server is not installed")
@pytest.mark.skipif(
    not (shutil.which("initdb") or list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))),
    reason="PostgreSQL server binaries are not installed",
)
def test_starts_throwaway_servers_when_none_listen():
    # Given nothing listens on the "default" ports, when the script runs a command
    env = {"SERVICES_PG_PORT": str(closed_port()), "SERVICES_REDIS_PORT": str(closed_port())}
    probe = (
        "import os, psycopg, redis;"
        "url = os.environ['DATABASE_URL'].rsplit('/', 1)[0] + '/postgres';"
        "print(psycopg.connect(url).execute('select 41 + 1').fetchone()[0]);"
        "print(redis.Redis.from_url(os.environ['CELERY_BROKER_URL']).ping())"
    )
    result = run(env, sys.executable, "-c", probe)
    # then throwaway servers answer the command, and are gone afterwards
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["42", "True"]
    assert "started a throwaway PostgreSQL" in result.stderr
    assert "started a throwaway Redis" in result.stderr


def test_stops_with_a_message_naming_what_to_install(tmp_path):
    env = {
        "SERVICES_PG_PORT": str(closed_port()),
        "SERVICES_REDIS_PORT": str(closed_port()),
        "SERVICES_PG_BIN_GLOB": "",
        "PATH": str(tmp_path),
    }
    result = run(env, "true")
    assert result.returncode != 0
    assert "apt-get install postgresql" in result.stderr
