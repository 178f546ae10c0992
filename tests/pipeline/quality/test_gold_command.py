"""``manage.py gold``: list gold items with their results, promote a submission, (de)activate."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import GoldItem, GoldSource
from tests.factories import UserFactory

from .report_builders import PREFILTER_WRONG, control, gold, work

pytestmark = pytest.mark.django_db


def run(*args):
    out = StringIO()
    call_command("gold", *args, stdout=out)
    return out.getvalue()


def test_list_promote_and_deactivate(project, annotator, lead):
    bad = gold(project)
    for name in ("a", "b", "c"):
        control(project, UserFactory(username=name), correct=False, item=bad)
    rows = json.loads(run("demo", "list", "--json"))
    assert rows == [
        {
            "id": bad.pk,
            "stage": "prefilter",
            "rico_id": bad.screen.rico_id,
            "question_id": None,
            "active": True,
            "served": 3,
            "correct": 0,
            "suspect": True,
        }
    ]
    assert "0 of 3 right most fail" in run("demo", "list")
    submitted = work(project, annotator)
    assert "from assignment" in run("demo", "promote", str(submitted.pk), "--answer", json.dumps(PREFILTER_WRONG))
    promoted = GoldItem.objects.get(origin=submitted)
    assert promoted.source == GoldSource.PROMOTED and promoted.answer["non_english_app"] is True
    assert "inactive" in run("demo", "deactivate", str(bad.pk))
    assert not GoldItem.objects.get(pk=bad.pk).active


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("nope", "list"), "No project"),
        (("demo", "promote"), "needs an id"),
        (("demo", "promote", "1", "--answer", "{x"), "not valid JSON"),
        (("demo", "promote", "999"), "No accepted submission"),
        (("demo", "activate", "999"), "not found"),
        (("demo", "list", "--stage", "moon"), "Unknown stage"),
    ],
)
def test_bad_input_is_an_error_saying_why(project, args, says):
    with pytest.raises(CommandError, match=says):
        run(*args)
