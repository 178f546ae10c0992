from __future__ import annotations

from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, UserFactory

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Every test writes its files under its own temporary folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "media")},
        },
    }


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture
def project(db):
    return ProjectFactory(slug="demo")


@pytest.fixture
def annotator(project):
    user = UserFactory(username="annie")
    MembershipFactory(project=project, user=user)
    return user


@pytest.fixture
def lead(project):
    user = UserFactory(username="leo")
    MembershipFactory(project=project, user=user, role="lead")
    return user


@pytest.fixture
def outsider(db):
    return UserFactory(username="otto")


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


def login(client, user) -> None:
    assert client.login(username=user.username, password=PASSWORD)
