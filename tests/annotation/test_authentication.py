"""API token authentication (``annotation/authentication.py``): DRF's answers, one statement."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import ScreenState
from tests.pipeline.stages.helpers import member, screens
from tests.pipeline.test_engine_api import client_for, next_url

pytestmark = pytest.mark.django_db


def test_token_authentication_refuses_unknown_keys_and_inactive_users(project):
    # given a member with a token, and a client with a made-up key
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    client = client_for(a)
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    # then the made-up key is refused with DRF's message (403: session authentication comes
    # first and asks for no WWW-Authenticate challenge), the real one works
    refused = stranger.post(next_url("questions-1"))
    assert refused.status_code == 403
    assert "Invalid token" in refused.json()["detail"]
    assert client.post(next_url("questions-1")).status_code == 200
    # and once the user is deactivated, the same token is refused
    a.is_active = False
    a.save()
    refused = client.post(next_url("questions-1"))
    assert refused.status_code == 403
    assert "inactive" in refused.json()["detail"]
