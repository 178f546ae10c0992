"""Migration 0012: screens imported by a web job with its own device size get that size back."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from annotation.models import ImportJob, Screen
from tests.factories import ScreenFactory

pytestmark = pytest.mark.django_db

migration = importlib.import_module("annotation.migrations.0012_screen_device_size")


def test_backfill_from_import_jobs_turns_landscape_and_leaves_the_rest(project):
    # given screens imported before sizes were recorded: two by a job run with 720x1280 (one of
    # them landscape), one by a job without a size; and one whose size is already recorded
    ScreenFactory(project=project, rico_id="1")
    landscape = ScreenFactory(project=project, rico_id="2", width=1920, height=1080)
    ScreenFactory(project=project, rico_id="3")
    ScreenFactory(project=project, rico_id="4", device_width=1000, device_height=2000)
    job = {"source": "imports/a.zip", "source_kind": "zip", "device_width": 720, "device_height": 1280}
    ImportJob.objects.create(project=project, result={"imported_ids": ["1", "2", "4", "gone"]}, **job)
    ImportJob.objects.create(project=project, source="x/", source_kind="prefix", result={"imported_ids": ["3"]})
    ImportJob.objects.create(project=project, **job)  # not finished: no result
    # when the migration's backfill runs
    migration.device_size_from_import_jobs(apps, None)
    # then the job's screens have its size (turned for landscape), the others are untouched
    sizes = dict(Screen.objects.values_list("rico_id", "device_width"))
    assert sizes == {"1": 720, "2": 1280, "3": None, "4": 1000}
    landscape.refresh_from_db()
    assert (landscape.device_width, landscape.device_height) == (1280, 720)
