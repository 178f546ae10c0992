"""The quality models in the Django admin: lists with their filters and search, and change pages."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import ControlResult, GoldItem, QualityEvent, Review, Standing
from tests.conftest import login
from tests.factories import UserFactory

from .report_builders import control, standing, work

pytestmark = pytest.mark.django_db

FILTERS = {
    Standing: {"status__exact": "paused", "q": "annie"},
    GoldItem: {"active__exact": "1", "stage__exact": "prefilter"},
    ControlResult: {"correct__exact": "0", "q": "annie"},
    Review: {"verdict__exact": "rejected", "reviewed__stage": "prefilter", "q": "annie"},
    QualityEvent: {"rule": "lead-pause", "q": "leo"},
}


@pytest.mark.parametrize("model", list(FILTERS), ids=lambda m: m.__name__)
def test_admin_lists_filters_and_change_pages_work(project, annotator, lead, client, model):
    pause = standing(project, annotator, status="paused")
    control(project, annotator, correct=False)
    reviewed = work(project, annotator, review_state="rejected")
    Review.objects.create(reviewed=reviewed, reviewer=lead, verdict="rejected", reason="wrong-box", comment="no")
    QualityEvent.objects.create(project=project, user=annotator, stage="prefilter", rule="lead-pause", actor=lead)
    assert pause.pk
    login(client, UserFactory(username="root", is_superuser=True, is_staff=True))
    meta = model._meta
    changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    assert client.get(changelist).status_code == 200
    response = client.get(changelist, FILTERS[model])
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    obj = model.objects.get()
    assert client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])).status_code == 200
