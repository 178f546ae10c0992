"""The import_rico command: summary, --json, exit codes, progress bar, --device-size."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from annotation.models import Project, Screen
from tests.pipeline.ingest.rico_files import jpeg_bytes, write_pair

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[3]


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_rico", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_command_creates_the_project_and_prints_a_summary(tmp_path, capsys):
    write_pair(tmp_path / "in", "1")
    write_pair(tmp_path / "in", "2")
    out, _ = run(str(tmp_path / "in"), "--project", "fresh")
    assert out.splitlines() == ["imported: 2", "already present: 0", "rejected: 0"]
    assert Project.objects.get(slug="fresh").screens.count() == 2
    # the progress bar is drawn by tqdm on stderr
    assert "2/2" in capsys.readouterr().err


def test_command_json_and_exit_code_2_when_something_was_rejected(tmp_path, project):
    write_pair(tmp_path / "in", "1")
    write_pair(tmp_path / "in", "bad", image=b"GIF89a not really")
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("import_rico", str(tmp_path / "in"), "--project", "demo", "--json", stdout=out)
    assert raised.value.returncode == 2
    summary = json.loads(out.getvalue())
    assert summary == {
        "imported": 1,
        "already_present": 0,
        "rejected": [{"name": "bad", "reason": "image format GIF is not supported (JPEG or PNG only)"}],
        "imported_ids": ["1"],
    }


def test_command_text_lists_one_line_per_rejected_pair(tmp_path, project):
    write_pair(tmp_path / "in", "x", vh=b"{broken")
    (tmp_path / "in" / "y.json").write_bytes(b"{}")
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_rico", str(tmp_path / "in"), "--project", "demo", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["imported: 0", "already present: 0", "rejected: 2"]
    assert lines[3].startswith("  x: VH is not valid JSON")
    assert lines[4] == "  y: JSON y.json has no image (expected y.jpg or y.png)"


def test_command_device_size(tmp_path, project):
    write_pair(tmp_path / "in", "1", image=jpeg_bytes(100, 200))
    out, _ = run(str(tmp_path / "in"), "--project", "demo", "--device-size", "1000x2000")
    assert out.startswith("imported: 1")
    with pytest.raises(CommandError, match="--device-size must look like 1440x2560"):
        run(str(tmp_path / "in"), "--project", "demo", "--device-size", "big")


def test_command_bad_source_or_slug_is_a_command_error(tmp_path, db):
    with pytest.raises(CommandError, match="does not exist"):
        run(str(tmp_path / "missing"), "--project", "demo")
    with pytest.raises(CommandError, match="Invalid project slug"):
        run(str(tmp_path), "--project", "Not A Slug")


@pytest.mark.django_db(transaction=True)
def test_real_process_exit_codes(tmp_path):
    # given the real manage.py on the test database
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "annotation.settings.test",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{connection.settings_dict['NAME']}",
        "SCREENQA_DATA_DIR": str(tmp_path / "data"),
    }
    write_pair(tmp_path / "in", "1")
    cmd = [sys.executable, "manage.py", "import_rico", str(tmp_path / "in"), "--project", "cli", "--json"]
    ok = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["imported"] == 1
    # when a bad pair is added, the exit code is 2 and the good one is reported already present
    (tmp_path / "in" / "2.json").write_bytes(b"{}")
    bad = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["already_present"] == 1
    assert Screen.objects.filter(project__slug="cli").count() == 1
