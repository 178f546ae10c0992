"""The WSGI entry point loads the whole URL tree when a server process starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_server_processes_import_their_views_at_start(tmp_path):
    # given the embedded profile, when a process imports the WSGI application
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_"))}
    code = (
        "import sys, annotation.wsgi; "
        "print('pipeline.apis.engine' in sys.modules, 'frontend.views.workspace' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "SCREENQA_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # then the API and page views are loaded before any request (not in the first one)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
