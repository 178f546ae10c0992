"""Django admin: every model of the domain is registered, and its pages open for a site admin only."""

from __future__ import annotations

import re

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


def test_the_project_admin_shows_the_settings_groups_and_refuses_what_the_page_refuses(client, project):
    # given a site admin on a project's change page
    from annotation.models import Project
    from annotation.models.projects import SETTINGS
    from tests.annotation.settings_cases import page_data

    login(client, UserFactory(username="root", is_staff=True, is_superuser=True))
    url = f"/admin/annotation/project/{project.pk}/change/"
    page = client.get(url).content.decode()
    # then every group of the settings page is a fieldset, and each input states its bounds
    for title, _ in SETTINGS.groups():
        assert f">{title}</h2>" in page, title
    lease = re.search(r'<input[^>]*name="lease_minutes"[^>]*>', page).group(0)
    assert 'min="1"' in lease and 'max="1440"' in lease, lease
    # when a value the settings page refuses is saved here, then it is refused too and nothing changes
    form = {**page_data(project, lease_minutes=30000), "slug": "demo", "split_seed": "screenqa", "guidelines": ""}
    response = client.post(url, form)
    assert response.status_code == 200 and "less than or equal to 1440" in response.content.decode()
    assert Project.objects.get(pk=project.pk).lease_minutes == 30
    # and a value at the bound is saved
    response = client.post(url, {**form, "lease_minutes": 1440})
    assert response.status_code == 302 and Project.objects.get(pk=project.pk).lease_minutes == 1440
