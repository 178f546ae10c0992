"""The invariants that live in the database."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Assignment, Project
from tests.factories import CandidateFactory, ProjectFactory, ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_project_defaults_are_the_papers():
    project = ProjectFactory()
    assert (project.questions_pass1_cap, project.questions_pass2_cap) == (5, 3)
    assert (project.answers_train, project.answers_validation, project.answers_test) == (1, 3, 3)
    assert (project.split_train, project.split_validation, project.split_test) == (80, 10, 10)
    assert project.qualification_threshold == 0.90
    assert project.monitoring_threshold == 0.95
    assert project.not_answerable_target == 0.10
    assert project.answers_needed("validation") == 3


def test_agreement_rule_defaults_to_the_release_calibration_and_is_one_of_the_choices():
    assert ProjectFactory().agreement_rule == "release"
    Project.objects.create(slug="strict", name="strict", agreement_rule="strict")
    with pytest.raises(IntegrityError), transaction.atomic():
        Project.objects.create(slug="bad", name="bad", agreement_rule="lenient")


def test_split_must_sum_to_100():
    with pytest.raises(IntegrityError), transaction.atomic():
        Project.objects.create(slug="bad", name="bad", split_train=90)


def test_screen_rico_id_unique_per_project():
    screen = ScreenFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        ScreenFactory(project=screen.project, app=screen.app, rico_id=screen.rico_id)
    ScreenFactory(rico_id=screen.rico_id)  # another project: fine


def test_candidate_needs_positive_area():
    with pytest.raises(IntegrityError), transaction.atomic():
        CandidateFactory(left=10, right=10)


def test_two_passes_need_two_writers():
    screen = ScreenFactory()
    writer = UserFactory()
    expires = timezone.now()
    Assignment.objects.create(
        project=screen.project,
        stage="questions-1",
        screen=screen,
        annotator=writer,
        lease_expires_at=expires,
        status="submitted",
        submitted_at=expires,
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            project=screen.project, stage="questions-2", screen=screen, annotator=writer, lease_expires_at=expires
        )
