"""compose.yaml, the documented deployment: its shape (no engine needed). The image test runs the same
roles from the image; the database, broker and store images of the compose file come from a registry."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
APP = ("proxy", "web", "worker", "migrate", "storage-bucket")


def test_the_full_deployment_is_described():
    assert set(SERVICES) == {*APP, "postgres", "redis", "storage"}
    for name in APP:
        assert SERVICES[name]["image"] == "${SCREENQA_IMAGE:-screenqa:latest}"
        assert SERVICES[name]["build"] == "."
    assert SERVICES["proxy"]["command"] == ["proxy"]
    assert SERVICES["web"]["command"] == ["web"]
    assert SERVICES["worker"]["command"] == ["worker"]
    assert "entrypoint.sh check && exec sh docker/entrypoint.sh migrate" in SERVICES["migrate"]["entrypoint"][-1]


def test_only_the_proxy_is_published():
    published = {name for name, service in SERVICES.items() if service.get("ports")}
    assert published == {"proxy"}
    assert SERVICES["proxy"]["environment"]["WEB_UPSTREAM"] == "web:8000"


def test_releases_run_in_order():
    # checks and migrations before the app, the app before the proxy
    for name in ("web", "worker"):
        assert SERVICES[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert SERVICES[name]["depends_on"]["storage-bucket"] == {"condition": "service_completed_successfully"}
    assert SERVICES["migrate"]["depends_on"]["postgres"] == {"condition": "service_healthy"}
    assert SERVICES["proxy"]["depends_on"]["web"] == {"condition": "service_healthy"}
    assert SERVICES["migrate"]["restart"] == "no"


def test_every_setting_production_requires_is_given_and_secrets_have_no_default():
    env = SERVICES["web"]["environment"]
    production = (ROOT / "annotation" / "settings" / "production.py").read_text()
    required = set(re.findall(r'required\("([A-Z_]+)"\)', production))
    assert required == {"DJANGO_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "AWS_STORAGE_BUCKET_NAME"}
    assert required <= set(env)
    for secret in ("DJANGO_SECRET_KEY", "AWS_SECRET_ACCESS_KEY"):
        assert env[secret].startswith(f"${{{secret}:?"), env[secret]
    assert ":?" in env["DATABASE_URL"]
    # every app service has the same environment
    for name in APP:
        assert set(SERVICES[name]["environment"]) >= set(env) - {"WEB_UPSTREAM"}


def test_every_long_running_role_is_started_again_when_it_exits_however_the_docs_start_it():
    # compose.yaml: the proxy, web and worker restart unless stopped by hand; the one-shots never do
    for name in ("proxy", "web", "worker", "postgres", "redis", "storage"):
        assert SERVICES[name]["restart"] == "unless-stopped", name
    assert SERVICES["migrate"]["restart"] == SERVICES["storage-bucket"]["restart"] == "no"
    # and every background `docker run` of docs/operations.md carries the same policy
    operations = (ROOT / "docs" / "operations.md").read_text()
    detached = [line for line in operations.splitlines() if line.startswith("docker run -d")]
    assert {line.split()[-1] for line in detached} == {"web", "worker", "proxy"}
    for line in detached:
        assert "--restart unless-stopped" in line, line
