"""The embedded default (SQLite) runs the same engine without the PostgreSQL-only hot path
(``annotation.db.compiled`` falls back to the ORM): lease, reload, submit and the payload."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from annotation.models import App, Assignment, Candidate, Membership, Project, Screen
project = Project.objects.create(slug="lite", name="lite")
app = App.objects.create(project=project, package="com.lite")
for i in range(2):
    s = Screen.objects.create(project=project, app=app, rico_id=str(i), image=f"s{i}.png", width=1080,
                              height=1920, vh={"activity": {"root": {}}}, content_sha256=f"{i:064d}",
                              state="questions-1")
    for k in (2, 1):
        Candidate.objects.create(screen=s, vh_index=k, left=0, top=0, right=10, bottom=10,
                                 text="" if k == 2 else "one", content_desc="two")
user = get_user_model().objects.create_user("a")
Membership.objects.create(project=project, user=user)
client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)
url = "/api/projects/lite/stages/questions-1/next/"
first = client.post(url).json()
again = client.post(url).json()
detail = client.get(f"/api/assignments/{first['id']}/").json()
sub = client.post(f"/api/assignments/{first['id']}/submit/", {"questions": ["Why?"]}, content_type="application/json")
second = client.post(url).json()
print(json.dumps({
    "same": first["id"] == again["id"] and first["screen"] == again["screen"] == detail["screen"],
    "candidates": [(c["vh_index"], c["text"]) for c in first["screen"]["candidates"]],
    "submit": sub.status_code, "second": second["screen"]["rico_id"] != first["screen"]["rico_id"],
    "leased": Assignment.objects.filter(status="leased").count(),
}))
"""


def test_engine_on_the_embedded_default(tmp_path):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "DB_"))}
    env = {**clean, "DJANGO_SETTINGS_MODULE": "annotation.settings.local", "SCREENQA_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out == {"same": True, "candidates": [[1, "one"], [2, "two"]], "submit": 200, "second": True, "leased": 1}
