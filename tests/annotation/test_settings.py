"""The settings profiles: one code base, chosen by environment variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, importlib
m = importlib.import_module('{module}')
db = m.DATABASES['default']
print(json.dumps({{
  'engine': db['ENGINE'], 'options': db.get('OPTIONS', {{}}),
  'storage': m.STORAGES['default']['BACKEND'],
  'eager': m.CELERY_TASK_ALWAYS_EAGER, 'broker': m.CELERY_BROKER_URL, 'debug': m.DEBUG,
  'threads': m.SCREENQA_INPROCESS_THREADS,
  'static': m.STORAGES['staticfiles']['BACKEND'], 'conn_max_age': db['CONN_MAX_AGE'],
  'hsts': getattr(m, 'SECURE_HSTS_SECONDS', None), 'ssl_redirect': getattr(m, 'SECURE_SSL_REDIRECT', False),
}}))
"""


def load(module: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "AWS_"))}
    return subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        env={**clean, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_embedded_default_needs_no_services(tmp_path):
    # Given no environment at all, when the local profile loads
    result = load("annotation.settings.local", {"SCREENQA_DATA_DIR": str(tmp_path)})
    # then it runs on SQLite with IMMEDIATE transactions, local files and in-process tasks
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert config["engine"] == "django.db.backends.sqlite3"
    assert config["options"]["transaction_mode"] == "IMMEDIATE"
    assert config["storage"] == "django.core.files.storage.FileSystemStorage"
    assert config["eager"] is True
    assert config["threads"] is True
    assert (tmp_path).is_dir()


PRAGMAS = """
import json, os
os.environ['DJANGO_SETTINGS_MODULE'] = 'annotation.settings.local'
import django
django.setup()
from django.db import connection
with connection.cursor() as c:
    print(json.dumps({p: c.execute('PRAGMA ' + p).fetchone()[0]
                      for p in ('journal_mode', 'synchronous', 'busy_timeout', 'temp_store')}))
"""


def test_embedded_default_serves_like_production_with_sqlite_fast_path(tmp_path):
    # Given no environment at all, when the local profile loads (as `make demo` runs it)
    config = json.loads(load("annotation.settings.local", {"SCREENQA_DATA_DIR": str(tmp_path)}).stdout)
    # then DEBUG is off and SQLite connections are kept
    assert config["debug"] is False
    assert config["conn_max_age"] == 600
    # and every new SQLite connection runs in WAL mode, synchronous=NORMAL, with a busy timeout
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "AWS_"))}
    result = subprocess.run(
        [sys.executable, "-c", PRAGMAS],
        env={**clean, "SCREENQA_DATA_DIR": str(tmp_path)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "journal_mode": "wal",
        "synchronous": 1,
        "busy_timeout": 20000,
        "temp_store": 2,
    }
    # and collected static files are read through the manifest (hashed, compressed), DEBUG only when asked
    manifest = load("annotation.settings.local", {"SCREENQA_DATA_DIR": str(tmp_path), "DJANGO_STATIC_MANIFEST": "true"})
    assert json.loads(manifest.stdout)["static"] == "whitenoise.storage.CompressedManifestStaticFilesStorage"
    debug = json.loads(
        load("annotation.settings.local", {"SCREENQA_DATA_DIR": str(tmp_path), "DJANGO_DEBUG": "true"}).stdout
    )
    assert debug["debug"] is True and debug["static"] == "django.contrib.staticfiles.storage.StaticFilesStorage"


def test_production_refuses_to_start_without_secrets():
    result = load("annotation.settings.production", {})
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_production_names_each_missing_variable():
    result = load("annotation.settings.production", {"DJANGO_SECRET_KEY": "x" * 50})
    assert "DATABASE_URL" in result.stderr


def test_production_uses_postgres_redis_and_s3():
    env = {
        "DJANGO_SECRET_KEY": "x" * 50,
        "DATABASE_URL": "postgres://app:pw@db.internal:5432/screenqa",
        "CELERY_BROKER_URL": "redis://redis.internal:6379/0",
        "AWS_STORAGE_BUCKET_NAME": "screenqa-media",
    }
    result = load("annotation.settings.production", env)
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert config["engine"] == "django.db.backends.postgresql"
    assert config["storage"] == "storages.backends.s3.S3Storage"
    assert config["eager"] is False
    assert config["broker"] == "redis://redis.internal:6379/0"
    assert config["debug"] is False
    assert config["threads"] is False
    # static files by the hashed names of the manifest the image's collectstatic writes
    assert config["static"] == "whitenoise.storage.CompressedManifestStaticFilesStorage"
    # HTTPS only: HSTS for a year, plain HTTP redirected
    assert config["hsts"] == 365 * 24 * 3600
    assert config["ssl_redirect"] is True


def test_a_bucket_does_not_change_how_other_profiles_name_static_files(tmp_path):
    # The image collected its static files with the local profile while production read them through a
    # manifest: every page was a 500. The static storage now follows the profile, never the bucket.
    result = load("annotation.settings.local", {"SCREENQA_DATA_DIR": str(tmp_path), "AWS_STORAGE_BUCKET_NAME": "b"})
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert config["storage"] == "storages.backends.s3.S3Storage"
    assert config["static"] == "django.contrib.staticfiles.storage.StaticFilesStorage"


def test_the_stored_figures_age_has_one_name_and_the_old_one_still_works(tmp_path):
    probe = (
        "import importlib; print(importlib.import_module('annotation.settings.local').SCREENQA_STORED_FIGURES_MAX_AGE)"
    )

    def age(env: dict[str, str]) -> str:
        clean = {k: v for k, v in os.environ.items() if "FIGURES_MAX_AGE" not in k}
        done = subprocess.run(
            [sys.executable, "-c", probe],
            env={**clean, "SCREENQA_DATA_DIR": str(tmp_path), **env},
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    assert age({}) == "300"
    assert age({"SCREENQA_QUALITY_FIGURES_MAX_AGE": "60"}) == "60"  # the old name, before it covered every page
    assert age({"SCREENQA_QUALITY_FIGURES_MAX_AGE": "60", "SCREENQA_STORED_FIGURES_MAX_AGE": "30"}) == "30"


def test_postgresql_connections_open_without_jit_unless_asked(monkeypatch):
    # given the settings' database entry for a PostgreSQL URL, with DB_JIT unset and set on
    from annotation.settings.base import database_config

    monkeypatch.delenv("DB_JIT", raising=False)
    default = database_config("postgres://postgres@127.0.0.1:5432/x")
    monkeypatch.setenv("DB_JIT", "on")
    asked = database_config("postgres://postgres@127.0.0.1:5432/x")
    # then JIT is off by a start-up option unless asked for (SQLite takes no such option)
    assert default["OPTIONS"]["options"] == "-c jit=off"
    assert "options" not in asked["OPTIONS"]
    assert "options" not in database_config("sqlite:///db.sqlite3")["OPTIONS"]


@pytest.mark.django_db
def test_the_test_database_connection_has_jit_off():
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's setting")
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == "off"
