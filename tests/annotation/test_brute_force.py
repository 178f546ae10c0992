"""Brute force (issue 12 §4): logins lock out after ``AXES_FAILURE_LIMIT`` wrong passwords
(then the right password is refused too, until the cool-off), and the API throttles anonymous
callers, users and wrong tokens at the rates in settings."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

LIMIT = 5


@pytest.fixture
def strict(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def _rates(settings, **rates):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates},
    }


@pytest.mark.parametrize(
    ("url", "username_field", "staff"),
    [("/login/", "username", False), ("/admin/login/", "username", True)],
)
def test_login_locks_out_and_refuses_the_right_password_until_cool_off(strict, annotator, url, username_field, staff):
    # given a user (a site admin for the admin's login page)
    if staff:
        annotator.is_staff = annotator.is_superuser = True
        annotator.save()
    client = Client()
    # when somebody tries LIMIT wrong passwords
    for n in range(LIMIT):
        response = client.post(url, {username_field: annotator.username, "password": f"wrong-{n}"})
        assert response.status_code in (200, 429), response.status_code
    # then the account is locked for this client: the right password is refused (429), no session
    response = client.post(url, {username_field: annotator.username, "password": PASSWORD})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    assert AccessAttempt.objects.filter(username=annotator.username).exists()
    # after the cool-off the right password works again
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16))
    response = client.post(url, {username_field: annotator.username, "password": PASSWORD})
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(annotator.pk)


def test_a_few_mistakes_then_the_right_password_is_fine(strict, annotator):
    client = Client()
    for _ in range(LIMIT - 1):
        assert client.post("/login/", {"username": annotator.username, "password": "oops"}).status_code == 200
    assert client.post("/login/", {"username": annotator.username, "password": PASSWORD}).status_code == 302
    # a success resets the count
    client.logout()
    for _ in range(LIMIT - 1):
        client.post("/login/", {"username": annotator.username, "password": "oops"})
    assert client.post("/login/", {"username": annotator.username, "password": PASSWORD}).status_code == 302


def test_wrong_tokens_are_throttled_then_even_a_right_one(settings, annotator):
    _rates(settings, token_failure="5/min")
    good = Token.objects.create(user=annotator).key
    client = APIClient()
    url = "/api/projects/demo/stages/"
    for n in range(5):
        client.credentials(HTTP_AUTHORIZATION=f"Token {n:040x}")
        assert client.get(url).status_code == 403
    client.credentials(HTTP_AUTHORIZATION=f"Token {99:040x}")
    refused = client.get(url)
    assert refused.status_code == 429 and "Retry-After" in refused
    client.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert client.get(url).status_code == 429
    # another client address is not affected
    other = APIClient(REMOTE_ADDR="10.1.2.3")
    other.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert other.get(url).status_code == 200


def test_anonymous_and_user_rates(settings, annotator):
    _rates(settings, anon="3/min", user="4/min")
    # DRF checks permissions before throttles: anonymous calls to member-only endpoints are 403 at
    # once; the throttle guards what anonymous callers may use (the schema and its docs pages)
    anonymous = APIClient()
    assert [anonymous.get("/api/docs/").status_code for _ in range(4)] == [200, 200, 200, 429]
    user = APIClient(REMOTE_ADDR="10.9.9.9")
    user.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    assert [user.get("/api/projects/demo/stages/").status_code for _ in range(5)] == [200, 200, 200, 200, 429]


def test_the_client_address_comes_from_the_trusted_proxy(settings):
    # behind the image's nginx (one trusted proxy), the address nginx saw is the client
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    _rates(settings, anon="2/min")
    client = APIClient(REMOTE_ADDR="172.17.0.2")

    def status(forwarded: str) -> int:
        return client.get("/api/docs/", HTTP_X_FORWARDED_FOR=forwarded).status_code

    assert [status("1.1.1.1") for _ in range(3)] == [200, 200, 429]
    # a client's own forged X-Forwarded-For entries come before the proxy's and are ignored
    assert status("9.9.9.9, 1.1.1.1") == 429
    assert status("2.2.2.2") == 200
