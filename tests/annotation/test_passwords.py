"""Passwords people choose (an invitation, the admin, createsuperuser) pass Django's four validators
(issue 19 §10: "12345678" was accepted for an invitation account, and invitations may carry the lead role).
Passwords the site makes (onboarding, the demo, the factories) are random and set directly."""

from __future__ import annotations

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from annotation.exceptions import ApplicationError
from annotation.models import Invitation
from annotation.services.members import invitation_accept, invitation_create
from tests.conftest import login

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("username", "password", "reason"),
    [
        ("ivy", "12345678", "too common"),  # the report's
        ("ivy", "8172635490", "entirely numeric"),
        ("ivy", "password123", "too common"),
        ("ivy", "qwertyuiop", "too common"),
        ("ivy.lead", "ivy.lead.1", "too similar to the username"),
        ("ivy", "short7!", "too short"),
    ],
)
def test_an_invitation_refuses_a_weak_password_for_a_lead(project, lead, username, password, reason):
    # Given an invitation that makes its taker a lead
    invitation = invitation_create(project=project, created_by=lead, role="lead")
    # when someone takes it with a weak password, then it is refused, naming why
    with pytest.raises(ApplicationError) as refused:
        invitation_accept(token=invitation.token, username=username, password=password)
    assert refused.value.field == "password" and reason in refused.value.message
    assert Invitation.objects.get(pk=invitation.pk).accepted_at is None


def test_a_strong_password_is_taken(project, lead):
    invitation = invitation_create(project=project, created_by=lead, role="lead")
    user = invitation_accept(token=invitation.token, username="ivy", password="tram-lantern-91-quietly")
    assert user.check_password("tram-lantern-91-quietly")


def test_the_invitation_page_says_why(client, project, lead):
    invitation = invitation_create(project=project, created_by=lead, role="lead")
    response = client.post(
        f"/invitations/{invitation.token}/", {"username": "ivy", "password": "12345678", "password_again": "12345678"}
    )
    assert response.status_code == 400
    assert "too common" in response.content.decode() and "entirely numeric" in response.content.decode()


def test_the_four_validators_are_configured(settings):
    names = {v["NAME"].rsplit(".", 1)[-1] for v in settings.AUTH_PASSWORD_VALIDATORS}
    assert names == {
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    }
    with pytest.raises(ValidationError):
        validate_password("12345678")


def test_the_factories_and_logins_of_the_suite_still_work(client, annotator):
    login(client, annotator)  # the factories' password is set directly
    assert client.get("/").status_code == 200
