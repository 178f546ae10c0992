"""The one progress block of every kind of job (frontend/views/jobs.py): polling, the stale warning, "Run again",
and who may use them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.conftest import login
from tests.factories import PAGE_JOB_KINDS as JOB_KINDS
from tests.factories import UserFactory, job_of_kind

pytestmark = pytest.mark.django_db


def base(kind: str) -> str:
    return {"import": "/imports", "members": "/member-jobs"}.get(kind, "/release-jobs")


def page_of(kind: str, job) -> str:
    return {
        "import": f"/imports/{job.pk}/",
        "export": f"/projects/demo/exports/{job.pk}/",
        "members": f"/projects/demo/members/jobs/{job.pk}/",
    }.get(kind, "/projects/demo/release/postprocess/")


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_a_running_job_polls_its_block_until_it_ends_then_the_page_reloads(kind, project, lead, client):
    job = job_of_kind(kind=kind, project=project, status="running", processed=4, total=10)
    login(client, lead)
    url = f"{base(kind)}/{job.pk}/progress/"
    running = client.get(url, headers={"HX-Request": "true"})
    body = running.content.decode()
    assert body.lstrip().startswith(f'<div class="job" id="job-{kind}-{job.pk}"')
    assert f'hx-get="{url}"' in body and 'hx-trigger="every 1s"' in body
    assert '<progress max="10" value="4">' in body
    assert "HX-Refresh" not in running and "data-job-stale" not in body and "Run again" not in body
    # the page that shows the job polls the same block
    assert f'hx-get="{url}"' in client.get(page_of(kind, job)).content.decode()
    type(job).objects.filter(pk=job.pk).update(status="done", processed=10)
    done = client.get(url, headers={"HX-Request": "true"})
    assert done["HX-Refresh"] == "true"
    assert "hx-trigger" not in done.content.decode()


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_a_stale_job_says_its_worker_stopped_and_offers_run_again(
    kind, project, lead, client, settings, django_capture_on_commit_callbacks
):
    settings.SCREENQA_JOB_STALE_SECONDS = 90
    job = job_of_kind(
        kind=kind, project=project, status="running", attempts=1, heartbeat_at=timezone.now() - timedelta(seconds=95)
    )
    login(client, lead)
    body = client.get(page_of(kind, job)).content.decode()
    assert "data-job-stale" in body and "the worker has stopped" in body
    assert f'action="{base(kind)}/{job.pk}/retry/"' in body
    # when the lead runs it again, the run is queued and the lead is back on the job's page
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(f"{base(kind)}/{job.pk}/retry/")
    assert response.status_code == 302 and response["Location"] == page_of(kind, job)
    assert len(callbacks) == 1
    job.refresh_from_db()
    assert job.status == "queued"
    assert "queued again" in client.get(response["Location"]).content.decode()


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_a_failed_job_shows_its_reason_and_run_again(kind, project, lead, client):
    job = job_of_kind(kind=kind, project=project, status="failed", error="OSError: <disk full>")
    login(client, lead)
    body = client.get(f"{base(kind)}/{job.pk}/progress/").content.decode()
    assert "failed.</strong>" in body and "OSError: &lt;disk full&gt;" in body
    assert f'action="{base(kind)}/{job.pk}/retry/"' in body


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_run_again_on_a_live_or_done_job_explains_why_not(kind, project, lead, client):
    live = job_of_kind(kind=kind, project=project, status="running")
    done = job_of_kind(kind=kind, project=project, status="done")
    login(client, lead)
    body = client.post(f"{base(kind)}/{live.pk}/retry/", follow=True).content.decode()
    assert f"This {kind} job is still running" in body
    body = client.post(f"{base(kind)}/{done.pk}/retry/", follow=True).content.decode()
    assert f"This {kind} job is already done." in body
    live.refresh_from_db()
    done.refresh_from_db()
    assert (live.status, done.status) == ("running", "done")


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_progress_and_run_again_are_for_leads_and_site_admins(kind, project, annotator, outsider, client):
    job = job_of_kind(kind=kind, project=project, status="failed")
    progress, rerun = f"{base(kind)}/{job.pk}/progress/", f"{base(kind)}/{job.pk}/retry/"
    for url, method in [(progress, client.get), (rerun, client.post)]:
        response = method(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url
    for user, code in [(annotator, 403), (outsider, 404)]:
        login(client, user)
        assert client.get(progress).status_code == code
        assert client.post(rerun).status_code == code
    job.refresh_from_db()
    assert job.status == "failed"
    login(client, UserFactory(username="root", is_superuser=True))
    assert client.get(progress).status_code == 200
    assert client.get(f"{base(kind)}/999999/progress/").status_code == 404


def test_the_block_is_served_in_a_few_queries(project, lead, client, django_assert_max_num_queries):
    job = job_of_kind(kind="export", project=project, status="running")
    login(client, lead)
    # session, user, job (with project and creator), the lead's role
    with django_assert_max_num_queries(4):
        assert client.get(f"/release-jobs/{job.pk}/progress/").status_code == 200
