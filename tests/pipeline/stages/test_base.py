"""The stage base class's own rules (pipeline/stages/base.py): which gold items the gold pick
balances between the kinds of answers (``StageDefinition.gold_pick_rules``, ``gold_classes``), per
stage and purpose."""

from __future__ import annotations

import pytest

from annotation.models import Purpose
from pipeline.stages.answers import Answers
from pipeline.stages.base import StageDefinition
from pipeline.stages.prefilter import Prefilter
from pipeline.stages.registry import stage_get
from tests.pipeline.stages.helpers import member

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("stage", "purpose", "balanced"),
    [
        ("prefilter", Purpose.QUALIFICATION, True),
        ("prefilter", Purpose.CONTROL, False),
        ("answers", Purpose.QUALIFICATION, True),
        ("answers", Purpose.CONTROL, False),
        ("review", Purpose.QUALIFICATION, True),
        ("review", Purpose.CONTROL, True),
    ],
)
def test_which_gold_items_are_balanced(project, stage, purpose, balanced):
    # a qualification set everywhere; control items only where they can be balanced without telling
    # real work from control by its content (a review's verdict is the reviewer's to find)
    rules = stage_get(stage).gold_pick_rules(project=project, user=member(project, "ann"), purpose=purpose)
    assert ("balance" in rules) is balanced
    if balanced:
        assert rules["balance"] == stage_get(stage).gold_classes


def test_the_classes_of_gold_answers_are_every_verdict_a_constant_answer_could_give():
    assert [c["verdict"] for c in Answers.gold_classes] == ["answered", "invalid", "not_answerable"]
    assert {(c["non_english_app"], c["vh_out_of_sync"]) for c in Prefilter.gold_classes} == {
        (False, False),
        (False, True),
        (True, False),
        (True, True),
    }


def test_a_stage_without_kinds_of_answers_balances_nothing(project):
    # the base class's default: no kinds, no balance, whatever the purpose
    assert StageDefinition.gold_classes == ()
    for name in ("questions-1", "not-answerable"):
        assert stage_get(name).gold_pick_rules(project=project, user=None, purpose=Purpose.QUALIFICATION) == {}
