"""Migration 0022: existing screens and questions each get their own random queue key."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import connection

from annotation.models import Question, Screen
from tests.factories import ScreenFactory
from tests.pipeline.stages.helpers import answering_question

pytestmark = pytest.mark.django_db

migration = importlib.import_module("annotation.migrations.0022_queue_key")


class _Editor:
    """The two things the step uses of a schema editor (SQLite's cannot open inside a test's transaction)."""

    connection = connection

    def execute(self, sql: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql)


def test_the_fill_gives_every_row_its_own_key_in_range(project):
    # given screens and questions that all got the same key (as ``AddField`` leaves them)
    for k in range(30):
        answering_question(ScreenFactory(project=project, rico_id=str(k)))
    Screen.objects.update(queue_key=7)
    Question.objects.update(queue_key=7)
    # when the migration's data step runs
    migration.queue_keys_fill(apps, _Editor())
    # then the keys are spread over the key range (30 rows: a repeat is a 1-in-5-million event)
    for model in (Screen, Question):
        keys = list(model.objects.values_list("queue_key", flat=True))
        assert len(set(keys)) == 30
        assert all(0 <= key < 2**31 for key in keys)
