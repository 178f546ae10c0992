"""The lead's quality report on the embedded default (SQLite): the median seconds per item (once
PostgreSQL's ``percentile_cont``) and the other work figures come out as on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import json, django
django.setup()
from datetime import datetime, timedelta, timezone
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from annotation.models import App, Assignment, Membership, Project, Screen
from pipeline.quality.report import quality_report
project = Project.objects.create(slug="lite", name="lite")
app = App.objects.create(project=project, package="com.lite")
start = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
def work(user, seconds, status="submitted", review_state=""):
    n = Screen.objects.count()
    screen = Screen.objects.create(project=project, app=app, rico_id=str(n), image=f"s{n}.png", width=1080,
                                   height=1920, vh={"activity": {"root": {}}}, content_sha256=f"{n:064d}")
    row = Assignment.objects.create(project=project, stage="prefilter", screen=screen, annotator=user, status=status,
                                    lease_expires_at=start + timedelta(hours=1), review_state=review_state,
                                    submitted_at=start + timedelta(seconds=seconds) if status == "submitted" else None)
    Assignment.objects.filter(pk=row.pk).update(created_at=start)
users = {}
for name, durations in (("odd", (10, 60, 20)), ("even", (10, 20, 4.5, 30))):
    users[name] = get_user_model().objects.create_user(name)
    Membership.objects.create(project=project, user=users[name])
    for seconds in durations:
        work(users[name], seconds, review_state="accepted" if seconds == 10 else "")
work(users["odd"], 0, status="skipped")
rows = {r.username: r for r in quality_report(project=project)}
print(json.dumps({name: [r.median_seconds, r.submitted, r.skips, r.reviews_accepted] for name, r in rows.items()}))
"""


def test_median_seconds_on_the_embedded_default(tmp_path):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "DB_"))}
    env = {**clean, "DJANGO_SETTINGS_MODULE": "annotation.settings.local", "SCREENQA_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    # odd count: the middle one; even count: the mean of the two middle ones (as percentile_cont)
    assert out == {"odd": [20.0, 3, 1, 1], "even": [15.0, 4, 0, 1]}
