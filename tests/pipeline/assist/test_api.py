"""The lead's model-assistance API and the write-only token (docs/assist.md). Leads and site admins
only: annotators 403, non-members 404 (also in tests/annotation/test_authz_matrix.py)."""

from __future__ import annotations

import pytest

from annotation.models import AssistJob
from tests.conftest import login
from tests.pipeline.stages.helpers import answering_question, screens


def _url(project, tail=""):
    return f"/api/projects/{project.slug}/assist/{tail}"


@pytest.mark.parametrize(("who", "status"), [("annotator", 403), ("outsider", 404), ("lead", 200)])
def test_the_report_is_for_leads(client, project, annotator, lead, outsider, who, status):
    login(client, {"annotator": annotator, "lead": lead, "outsider": outsider}[who])
    assert client.get(_url(project)).status_code == status
    refill = client.post(_url(project, "refill/"))
    assert refill.status_code == (400 if who == "lead" else status)  # no backend configured yet


def test_the_token_is_taken_but_never_shown_and_the_report_has_the_error_rate(client, project, lead):
    login(client, lead)
    response = client.patch(
        f"/api/projects/{project.slug}/settings/",
        {"assist_url": "http://127.0.0.1:9", "assist_token": "t0ps3cret"},
        content_type="application/json",
    )
    assert response.status_code == 200 and "assist_token" not in response.json()
    assert "t0ps3cret" not in client.get(f"/api/projects/{project.slug}/settings/").content.decode()
    assert "t0ps3cret" not in client.get(f"/projects/{project.slug}/settings/").content.decode()
    body = client.get(_url(project)).json()
    assert body["backend"]["configured"] and body["backend"]["error_rate"] is None
    assert "t0ps3cret" not in str(body)
    project.refresh_from_db()
    assert project.assist_token == "t0ps3cret"


def test_the_settings_page_keeps_the_token_when_left_empty(client, project, lead):
    from tests.annotation.settings_cases import page_data

    project.assist_token = "kept"
    project.save()
    login(client, lead)
    data = page_data(project, assist_token="")
    response = client.post(f"/projects/{project.slug}/settings/", data)
    assert response.status_code in (200, 302)
    project.refresh_from_db()
    assert project.assist_token == "kept"


def test_refill_queues_a_job_for_the_missing_suggestions(client, project, lead):
    (screen,) = screens(project, 1)
    answering_question(screen)
    project.assist_url = "http://127.0.0.1:9"
    project.save()
    login(client, lead)
    response = client.post(_url(project, "refill/"))
    assert response.status_code == 202 and response.json()["queued"]
    assert AssistJob.objects.filter(project=project).count() == 1
    # a second request while it is queued adds none
    assert client.post(_url(project, "refill/")).json() == {"queued": False, "job_id": None}


def test_the_quality_pages_show_the_error_rate_and_the_annotators_acceptance(client, project, lead, annotator):
    from django.utils import timezone

    from annotation.models import Assignment, AssistUse, Suggestion

    (screen,) = screens(project, 1)
    question = answering_question(screen)
    project.assist_url = "http://127.0.0.1:9"
    project.save()
    Suggestion.objects.create(
        project=project, stage="answers", screen=screen, question=question, status="failed", calls=4, failures=1
    )
    assignment = Assignment.objects.create(
        project=project,
        screen=screen,
        question=question,
        annotator=annotator,
        stage="answers",
        status="submitted",
        lease_expires_at=timezone.now(),
        submitted_at=timezone.now(),
    )
    AssistUse.objects.create(
        assignment=assignment, project=project, user=annotator, stage="answers", purpose="work", use="accepted"
    )
    login(client, lead)
    page = client.get(f"/projects/{project.slug}/quality/").content.decode()
    assert "Suggestion backend" in page and "error rate 25" in page
    page = client.get(f"/projects/{project.slug}/quality/{annotator.pk}/").content.decode()
    assert "Model suggestions" in page and "Accepted unchanged" in page
