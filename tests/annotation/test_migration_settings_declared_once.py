"""Migration 0014: settings the API stored outside their (then undeclared) ranges are brought to
the nearest end of the range before the ranges become check constraints."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import connection

from annotation.models import Project
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

migration = importlib.import_module("annotation.migrations.0014_settings_declared_once")


def test_out_of_range_settings_are_brought_to_the_nearest_bound(project, capsys):
    # given the database as it was before 0014 (no range constraints: dropped inside this test's
    # transaction) and values the old API accepted
    with connection.cursor() as cursor:
        for constraint in Project._meta.constraints:
            if constraint.name.endswith("_range"):
                cursor.execute(f'ALTER TABLE annotation_project DROP CONSTRAINT "{constraint.name}"')
    odd = {
        "lease_minutes": 30000,
        "fast_response_seconds": 1e6,
        "qualification_review_sets": 0,
        "fast_response_count": 0,
        "app_non_english_share": 5.0,
        "device_width": 30000,
    }
    Project.objects.filter(pk=project.pk).update(**odd)
    other = ProjectFactory(slug="fine")
    # when the migration's data step runs
    migration.settings_into_range(apps, None)
    # then each is at its nearest bound, the rest is untouched, and each change was printed
    stored = Project.objects.filter(pk=project.pk).values(*odd).get()
    assert stored == {
        "lease_minutes": 1440,
        "fast_response_seconds": 3600,
        "qualification_review_sets": 1,
        "fast_response_count": 1,
        "app_non_english_share": 1,
        "device_width": 20000,
    }
    assert Project.objects.get(pk=project.pk).answers_test == 3
    assert Project.objects.get(pk=other.pk).lease_minutes == 30
    printed = capsys.readouterr().out
    assert "project demo: lease_minutes 30000 is outside 1-1440, now 1440" in printed
    assert printed.count("project demo:") == len(odd) and "fine" not in printed
