"""Django admin: every model of the domain is registered, and its pages open for a site admin only."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin

from tests.conftest import login
from tests.factories import CandidateFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_every_domain_model_is_registered():
    missing = [m.__name__ for m in apps.get_app_config("annotation").get_models() if m not in admin.site._registry]
    assert missing == []


def test_changelists_and_change_pages_open_for_a_site_admin(client):
    candidate = CandidateFactory()
    admin_user = UserFactory(username="root", is_staff=True, is_superuser=True)
    login(client, admin_user)
    for model in apps.get_app_config("annotation").get_models():
        meta = model._meta
        assert client.get(f"/admin/{meta.app_label}/{meta.model_name}/").status_code == 200, meta.model_name
    screen = candidate.screen
    assert client.get(f"/admin/annotation/screen/{screen.pk}/change/").status_code == 200


def test_annotators_are_kept_out_of_the_admin(client, annotator):
    login(client, annotator)
    response = client.get("/admin/annotation/screen/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
