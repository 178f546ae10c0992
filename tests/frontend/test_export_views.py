"""The lead's export pages: start (format choice), htmx progress, past exports with downloads."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import ReleaseJob
from tests.conftest import login
from tests.factories import ScreenFactory, kept_question

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(project):
    screen = ScreenFactory(project=project, rico_id="46", split="test")
    kept_question(
        screen=screen,
        text="What is the rating?",
        position=0,
        answers=[("4.3.", [{"text": "4.3"}])],
        short_answers=["4.3"],
    )
    return project


def test_lead_starts_an_export_and_sees_it_finish(data, lead, client, django_capture_on_commit_callbacks):
    login(client, lead)
    page = client.get(reverse("frontend:exports", kwargs={"slug": data.slug}))
    assert page.status_code == 200
    assert b'value="docvqa"' in page.content and b"No exports yet." in page.content
    # When the lead picks DocVQA and starts the export
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("frontend:exports", kwargs={"slug": data.slug}), {"format": "docvqa"})
    job = ReleaseJob.objects.get()
    # Then they land on the job's page, which shows the finished export with its download link
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:export-detail", kwargs={"slug": data.slug, "job_id": job.pk})
    detail = client.get(response["Location"])
    download = reverse("api-release-job-download", kwargs={"job_id": job.pk})
    assert detail.status_code == 200
    assert download.encode() in detail.content
    assert b'data-split="test"' in detail.content
    assert b"hx-trigger" not in detail.content  # finished: no more polling
    # And the list of past exports links the download
    listing = client.get(reverse("frontend:exports", kwargs={"slug": data.slug}))
    assert download.encode() in listing.content
    assert client.get(download).status_code == 200


def test_progress_partial_polls_while_the_job_runs(data, lead, client):
    login(client, lead)
    job = ReleaseJob.objects.create(
        project=data, kind="export", format="screenqa", status="running", total=10, processed=4
    )
    page = client.get(reverse("frontend:export-detail", kwargs={"slug": data.slug, "job_id": job.pk}))
    url = reverse("frontend:release-job-progress", kwargs={"job_id": job.pk})
    assert f'hx-get="{url}"'.encode() in page.content
    # When htmx asks for the partial
    partial = client.get(url, headers={"HX-Request": "true"})
    # Then only the progress block comes back, asking to be polled again
    assert partial.status_code == 200
    assert partial.content.lstrip().startswith(f'<div class="job" id="job-export-{job.pk}"'.encode())
    assert b'hx-trigger="every 1s"' in partial.content
    assert b"4 of 10 questions" in partial.content
    assert b"<html" not in partial.content


def test_failed_export_shows_its_error(data, lead, client):
    login(client, lead)
    job = ReleaseJob.objects.create(project=data, kind="export", format="screenqa", status="failed", error="disk full")
    page = client.get(reverse("frontend:export-detail", kwargs={"slug": data.slug, "job_id": job.pk}))
    assert b"The export failed." in page.content and b"disk full" in page.content


def test_the_page_offers_every_format_with_its_label(data, lead, client):
    # the formats are one table (writer and label): the page shows each, the image folder included
    from pipeline.release.export.writers import EXPORT_FORMATS

    login(client, lead)
    page = client.get(reverse("frontend:exports", kwargs={"slug": data.slug})).content.decode()
    for key, fmt in EXPORT_FORMATS.items():
        assert f'value="{key}"' in page and fmt.label in page, key
    assert 'value="imagefolder"' in page


def test_bad_format_shows_the_form_again(data, lead, client):
    login(client, lead)
    response = client.post(reverse("frontend:exports", kwargs={"slug": data.slug}), {"format": "csv"})
    assert response.status_code == 400
    assert b"Select a valid choice" in response.content
    assert not ReleaseJob.objects.exists()


def test_pages_are_for_leads_only(data, annotator, outsider, client):
    job = ReleaseJob.objects.create(project=data, kind="export", format="screenqa")
    urls = [
        reverse("frontend:exports", kwargs={"slug": data.slug}),
        reverse("frontend:export-detail", kwargs={"slug": data.slug, "job_id": job.pk}),
    ]
    for url in urls:
        assert client.get(url).status_code == 302  # anonymous: to the login page
    login(client, annotator)
    for url in urls:
        assert client.get(url).status_code == 403
    assert client.post(urls[0], {"format": "screenqa"}).status_code == 403
    client.logout()
    login(client, outsider)
    for url in urls:
        assert client.get(url).status_code == 404
    assert ReleaseJob.objects.count() == 1


def test_a_job_is_only_shown_under_its_own_project(data, lead, client):
    from tests.factories import MembershipFactory, ProjectFactory

    other = ProjectFactory(slug="other")
    MembershipFactory(project=other, user=lead, role="lead")
    job = ReleaseJob.objects.create(project=data, kind="export", format="screenqa")
    login(client, lead)
    assert client.get(reverse("frontend:export-detail", kwargs={"slug": "other", "job_id": job.pk})).status_code == 404


def test_finished_export_lists_splits_in_pipeline_order_total_last(data, lead, client):
    counts = {"test": {"questions": 1}, "total": {"questions": 3}, "train": {"questions": 2}}
    job = ReleaseJob.objects.create(
        project=data, kind="export", format="screenqa", status="done", result={"counts": counts, "code_version": "x"}
    )
    login(client, lead)
    page = client.get(reverse("frontend:export-detail", kwargs={"slug": data.slug, "job_id": job.pk})).content.decode()
    order = [split for split in ("train", "test", "total") if f'data-split="{split}"' in page]
    assert order == ["train", "test", "total"]
    assert page.index('data-split="train"') < page.index('data-split="test"') < page.index('data-split="total"')


def test_the_public_format_is_preselected(data, lead, client):
    login(client, lead)
    page = client.get(reverse("frontend:exports", kwargs={"slug": data.slug})).content.decode()
    radio = page[page.index('value="screenqa"') - 80 : page.index('value="screenqa"') + 80]
    assert 'type="radio"' in radio and "checked" in radio
