"""Deployment checks of our own (annotation/checks.py; the image's ``check`` role runs them): a published,
placeholder or repeated secret and ``ALLOWED_HOSTS = ['*']`` fail the release (issue 19 §10). The role
itself: tests/ci/test_entrypoint.py."""

from __future__ import annotations

import secrets

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from annotation.checks import secret_placeholder_reason

PLACEHOLDERS = [
    "changeme",
    "changeme" * 8,  # long and varied enough for Django's security.W009
    "x" * 64,
    "x" * 50 + "12345",  # mostly one character, with five distinct ones
    "xyzxyzxyz" * 7,
    "a long random value " * 3,  # compose.yaml's hint, typed in as the value
    "please-change-me-before-going-live-this-is-not-a-real-key-at-all",
    "This is an example secret key for the documentation, do not use it",
    "replace_me_with_a_real_secret_key_0123456789_abcdefghijklmnopq",
]


def deploy_ids() -> set[str]:
    return {message.id for message in run_checks(include_deployment_checks=True)}


@pytest.mark.parametrize("key", PLACEHOLDERS)
def test_a_placeholder_secret_fails_the_deployment_checks(key):
    assert secret_placeholder_reason(key)
    with override_settings(SECRET_KEY=key):
        assert "screenqa.E003" in deploy_ids()


def test_random_secrets_pass():
    for key in [secrets.token_urlsafe(50) for _ in range(2000)] + [secrets.token_hex(32) for _ in range(200)]:
        assert secret_placeholder_reason(key) is None, key
    with override_settings(SECRET_KEY=secrets.token_urlsafe(50)):
        assert "screenqa.E003" not in deploy_ids()


def test_the_message_says_why_without_the_secret():
    key = "changeme-" * 7
    with override_settings(SECRET_KEY=key):
        (message,) = [m for m in run_checks(include_deployment_checks=True) if m.id == "screenqa.E003"]
    assert "placeholder" in message.msg and "repeated" in message.msg
    assert key not in message.msg and "token_urlsafe" in message.hint


@pytest.mark.parametrize(
    ("hosts", "fails"), [(["*"], True), (["qa.example.org", "*"], True), (["qa.example.org"], False)]
)
def test_allowed_hosts_star_fails_the_deployment_checks(hosts, fails):
    with override_settings(ALLOWED_HOSTS=hosts):
        assert ("screenqa.E002" in deploy_ids()) is fails
