"""Project settings API (annotation/apis/settings.py): what the lead's settings page accepts and
refuses, for scripts, and nothing more lenient (who may call it: test_apis_members.py and the
authorization matrix)."""

from __future__ import annotations

import json
import math

import pytest

from annotation.models import Project
from annotation.models.projects import SETTINGS
from tests.annotation.settings_cases import EVERY_SETTING, IDS, accepted, refused

pytestmark = pytest.mark.django_db

URL = "/api/projects/demo/settings/"


@pytest.fixture
def client(api_client, lead):
    api_client.force_authenticate(lead)
    return api_client


def row(project) -> dict:
    """Every column of the project as stored: "nothing changed" means all of them."""
    return Project.objects.filter(pk=project.pk).values().get()


def test_settings_read_and_change_with_the_models_checks(client, project):
    assert client.get(URL).json()["answers_validation"] == 3
    response = client.patch(URL, {"split_train": 50}, format="json")
    assert response.status_code == 400 and response.json()["detail"]
    response = client.patch(URL, {"lease_minutes": 0}, format="json")
    assert response.status_code == 400
    response = client.patch(URL, {"split_train": 60, "split_validation": 20, "split_test": 20}, format="json")
    assert response.status_code == 200 and response.json()["split_test"] == 20
    assert Project.objects.get(pk=project.pk).split_train == 60


@pytest.mark.parametrize("setting", EVERY_SETTING, ids=IDS)
def test_every_setting_is_stored_at_its_bounds_and_refused_just_outside(client, project, setting):
    for changes in accepted(setting):
        # when a lead sends a value at a bound (or each choice), then it is stored and echoed
        response = client.patch(URL, changes, format="json")
        assert response.status_code == 200, (changes, response.json())
        stored = Project.objects.filter(pk=project.pk).values(*changes).get()
        assert stored == changes
        # echoed, except a credential: write-only, never given back (docs/assist.md)
        assert {name: response.json().get(name) for name in changes if name not in SETTINGS.secrets} == {
            name: value for name, value in changes.items() if name not in SETTINGS.secrets
        }
        assert not set(SETTINGS.secrets) & set(response.json())
    for value in refused(setting):
        # when a lead sends the value just outside, then a 400 names the setting and nothing changes
        before = row(project)
        response = client.patch(URL, {setting.name: value}, format="json")
        assert response.status_code == 400, (value, response.json())
        assert response.json()["field"] == setting.name, (value, response.json())
        assert row(project) == before


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        # the issue: values the page refused and the API stored
        ({"lease_minutes": 30000}, "lease_minutes", "less than or equal to 1440"),
        ({"fast_response_seconds": 1e6}, "fast_response_seconds", "less than or equal to 3600"),
        # values no declared range allowed before, which broke the quality rules
        ({"qualification_review_sets": 0}, "qualification_review_sets", "greater than or equal to 1"),
        ({"fast_response_count": 0}, "fast_response_count", "greater than or equal to 1"),
        ({"app_non_english_share": 5}, "app_non_english_share", "less than or equal to 1"),
        # a whole number is a JSON integer
        ({"lease_minutes": 1e6}, "lease_minutes", "whole number"),
        ({"lease_minutes": 30.0}, "lease_minutes", "whole number"),
        ({"lease_minutes": 30.5}, "lease_minutes", "whole number"),
        ({"lease_minutes": "30"}, "lease_minutes", "whole number"),
        ({"lease_minutes": True}, "lease_minutes", "whole number"),
        ({"lease_minutes": [30]}, "lease_minutes", "whole number"),
        ({"lease_minutes": None}, "lease_minutes", "may not be null"),
        ({"lease_minutes": 10**30}, "lease_minutes", "less than or equal to 1440"),
        ({"skips_in_a_row": -1}, "skips_in_a_row", "greater than or equal to 0"),
        # a number is a JSON number
        ({"control_rate": "0.5"}, "control_rate", "must be a number"),
        ({"control_rate": True}, "control_rate", "must be a number"),
        ({"control_rate": {"value": 0.5}}, "control_rate", "must be a number"),
        ({"control_rate": 10**400}, "control_rate", "too large"),
        ({"fast_response_seconds": -1e-9}, "fast_response_seconds", "greater than or equal to 0"),
        # flags, choices and text
        ({"agreement_use_boxes": "true"}, "agreement_use_boxes", "true or false"),
        ({"agreement_use_boxes": 1}, "agreement_use_boxes", "true or false"),
        ({"agreement_rule": "lenient"}, "agreement_rule", "'lenient' is not one of release, strict"),
        ({"agreement_rule": 1}, "agreement_rule", "is not one of"),
        ({"paused_work": ["keep"]}, "paused_work", "is not one of"),
        ({"name": 5}, "name", "must be text"),
        ({"name": "   "}, "name", "may not be blank"),
        # splits that do not add up to 100, one split or several at a time
        ({"split_test": 20}, "split_train", "add up to 110% (80% + 10% + 20%)"),
        ({"split_train": 70, "split_validation": 20, "split_test": 20}, "split_train", "add up to 110%"),
        ({"split_validation": 0}, "split_train", "add up to 90%"),
        # not settings: refused by name, with the rest of the body
        ({"slug": "moved"}, "slug", "fixed when the project is created"),
        ({"split_seed": "other"}, "split_seed", "fixed when the project is created"),
        ({"id": 99}, "id", "'id' is not a setting"),
        ({"created_at": "2020-01-01T00:00:00Z"}, "created_at", "not a setting"),
        ({"guidelines": "# Mine"}, "guidelines", "own page"),
        ({"lease_minutes": 40, "slug": "moved"}, "slug", "fixed"),
        ({"owner": "me"}, "owner", "'owner' is not a setting"),
    ],
)
def test_what_the_api_refuses_names_the_field_and_changes_nothing(client, project, body, field, message):
    before = row(project)
    response = client.patch(URL, body, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["field"] == field and message in response.json()["detail"], response.json()
    assert row(project) == before


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused(client, project, literal):
    # given JSON that Python's decoder would read as a float, but JSON does not allow
    before = row(project)
    response = client.generic("PATCH", URL, f'{{"control_rate": {literal}}}', content_type="application/json")
    assert response.status_code == 400 and "JSON" in response.json()["detail"]
    assert row(project) == before


@pytest.mark.parametrize("body", ["[]", '"lease_minutes"', "30", "{"])
def test_a_body_that_is_not_an_object_is_refused(client, project, body):
    before = row(project)
    response = client.generic("PATCH", URL, body, content_type="application/json")
    assert response.status_code == 400 and response.json()["detail"]
    assert row(project) == before


def test_negative_zero_is_stored_as_zero(client, project):
    response = client.generic(
        "PATCH", URL, '{"control_rate": -0.0, "review_rate": -0, "skips_in_a_row": -0}', content_type="application/json"
    )
    assert response.status_code == 200
    stored = Project.objects.get(pk=project.pk)
    assert (stored.control_rate, stored.review_rate, stored.skips_in_a_row) == (0, 0, 0)
    assert math.copysign(1, stored.control_rate) == 1.0  # not -0.0
    assert json.loads(response.content)["control_rate"] == 0 and "-0" not in response.content.decode()


def test_an_empty_patch_changes_nothing(client, project):
    before = row(project)
    response = client.patch(URL, {}, format="json")
    assert response.status_code == 200 and response.json()["lease_minutes"] == 30
    assert row(project) == before


def test_a_change_asks_the_database_a_few_times_not_once_per_setting(client, project, django_assert_max_num_queries):
    # (the declared ranges are the fields' validators; their check constraints are left to PostgreSQL)
    with django_assert_max_num_queries(9):
        assert client.patch(URL, {"lease_minutes": 40}, format="json").status_code == 200
