"""The lead's settings page (frontend/views/manage.py ``project_settings``): every setting at its
declared bounds is saved, just outside them it is an error next to its field (a 400, nothing
saved), the same as the API (tests/annotation/test_apis_settings.py)."""

from __future__ import annotations

import math

import pytest

from annotation.models import Project
from annotation.models.declarations import Number, WholeNumber
from tests.annotation.settings_cases import EVERY_SETTING, IDS, accepted, page_data, refused
from tests.conftest import login

pytestmark = pytest.mark.django_db

URL = "/projects/demo/settings/"


@pytest.fixture
def page(client, lead):
    login(client, lead)
    return client


def row(project) -> dict:
    return Project.objects.filter(pk=project.pk).values().get()


@pytest.mark.parametrize("setting", EVERY_SETTING, ids=IDS)
def test_every_setting_is_saved_at_its_bounds_and_refused_just_outside(page, project, setting):
    for changes in accepted(setting):
        current = Project.objects.get(pk=project.pk)
        response = page.post(URL, page_data(current, **changes))
        assert response.status_code == 302, (changes, response.content.decode()[-3000:])
        assert Project.objects.filter(pk=project.pk).values(*changes).get() == changes
    for value in refused(setting):
        before = row(project)
        response = page.post(URL, page_data(Project.objects.get(pk=project.pk), **{setting.name: value}))
        assert response.status_code == 400, value
        assert f'data-field="{setting.name}"' in response.content.decode(), value
        assert row(project) == before


@pytest.mark.parametrize("setting", EVERY_SETTING, ids=IDS)
def test_the_page_states_each_bound_in_its_input(page, project, setting):
    html = page.get(URL).content.decode()
    assert f'name="{setting.name}"' in html
    if isinstance(setting, WholeNumber | Number):
        tag = next(line for line in html.splitlines() if f'name="{setting.name}"' in line)
        assert f'min="{setting.low:g}"' in tag and f'max="{setting.high:g}"' in tag, tag
        assert ('step="any"' in tag) == isinstance(setting, Number), tag


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"lease_minutes": "30000"}, "less than or equal to 1440"),
        ({"lease_minutes": "1e6"}, "Enter a whole number"),
        ({"lease_minutes": "30.5"}, "Enter a whole number"),
        ({"fast_response_seconds": "1e6"}, "less than or equal to 3600"),
        ({"control_rate": "NaN"}, "Enter a number"),
        ({"control_rate": "Infinity"}, "Enter a number"),
        ({"control_rate": "-inf"}, "Enter a number"),
        ({"qualification_review_sets": "0"}, "greater than or equal to 1"),
        ({"split_test": "20"}, "add up to 110%"),
        ({"agreement_rule": "lenient"}, "Select a valid choice"),
    ],
)
def test_what_the_page_refuses_is_shown_and_nothing_is_saved(page, project, changes, message):
    before = row(project)
    response = page.post(URL, page_data(project, **changes))
    assert response.status_code == 400 and message in response.content.decode()
    assert row(project) == before


def test_negative_zero_is_saved_as_zero_and_fields_that_are_not_settings_are_ignored(page, project):
    response = page.post(URL, {**page_data(project, control_rate="-0"), "slug": "moved", "split_seed": "x"})
    assert response.status_code == 302
    stored = Project.objects.get(pk=project.pk)
    assert (stored.slug, stored.split_seed) == ("demo", project.split_seed) and project.split_seed != "x"
    assert stored.control_rate == 0 and math.copysign(1, stored.control_rate) == 1.0
