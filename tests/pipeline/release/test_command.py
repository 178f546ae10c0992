"""python manage.py postprocess."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Question, ReleaseJob
from tests.factories import answered_question

pytestmark = pytest.mark.django_db


def test_command_postprocesses_and_reports(project):
    answered_question(project=project, split="validation", answers=[["A"], ["B"], ["A"]])
    answered_question(project=project, split="train", answers=["invalid"])
    out = StringIO()
    call_command("postprocess", project.slug, stdout=out)
    text = out.getvalue()
    assert "decided 2 questions, 2 changed" in text
    assert "agreement (several answers, rule release): all 0.0% (0), two 100.0% (1), none 0.0% (0)" in text
    assert "train: kept 0, dropped invalid 1, pending 0" in text
    assert "answers dropped: disagrees 1" in text
    assert ReleaseJob.objects.get().status == "done"


def test_command_with_short_answers_as_json(project):
    q = answered_question(project=project, split="train", answers=[["Male"]])
    out = StringIO()
    call_command("postprocess", project.slug, "--short-answers", "--json", "--batch-size", "1", stdout=out)
    results = json.loads(out.getvalue())
    assert results["postprocess"]["decided"] == 1
    assert results["short-answers"]["generated"] == 1
    assert Question.objects.get(pk=q.pk).short_answers_source == "rules"


def test_command_unknown_project_fails_cleanly(db):
    with pytest.raises(CommandError, match="No project 'nope'"):
        call_command("postprocess", "nope")
    assert not ReleaseJob.objects.exists()


def test_command_sets_the_agreement_rule_then_decides_under_it(project):
    # given the real record 37374's two raters (["C Max", "2014"] and ["C Max"]) and a third, different one
    q = answered_question(project=project, split="validation", answers=[["C Max", "2014"], ["C Max"], ["Focus"]])
    out = StringIO()
    # when post-processed under the strict rule, then under the default one
    call_command("postprocess", project.slug, "--agreement-rule", "strict", stdout=out)
    assert "rule strict): all 0.0% (0), two 0.0% (0), none 100.0% (1)" in out.getvalue()
    project.refresh_from_db()
    assert project.agreement_rule == "strict"
    assert Question.objects.get(pk=q.pk).state == "dropped"
    out = StringIO()
    call_command("postprocess", project.slug, "--agreement-rule", "release", stdout=out)
    # then the second run re-decides the question: two agree, kept
    assert "rule release): all 0.0% (0), two 100.0% (1), none 0.0% (0)" in out.getvalue()
    assert Question.objects.get(pk=q.pk).state == "kept"


def test_command_refuses_an_unknown_rule(project):
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("postprocess", project.slug, "--agreement-rule", "lenient")
    with pytest.raises(CommandError, match="No project 'nope'"):
        call_command("postprocess", "nope", "--agreement-rule", "strict")
