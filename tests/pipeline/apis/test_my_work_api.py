"""``GET /api/projects/<slug>/my-work/``: the caller's own work, standings, figures and feedback."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Assignment, Review, ReviewState
from tests.pipeline.quality.builders import RIGHT, fail_qualification, gold_prefilter, work_prefilter
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db

URL = "/api/projects/demo/my-work/"


def test_the_url_is_wired():
    assert reverse("api-my-work", kwargs={"slug": "demo"}) == URL


def test_anonymous_callers_are_refused(api_client, project):
    assert api_client.get(URL).status_code in (401, 403)


def test_non_members_get_404(api_client, project, outsider):
    api_client.force_authenticate(outsider)
    assert api_client.get(URL).status_code == 404


def test_an_unknown_stage_is_a_400_naming_the_field(api_client, project, annotator):
    api_client.force_authenticate(annotator)
    response = api_client.get(URL, {"stage": "nope"})
    assert response.status_code == 400
    assert response.json()["field"] == "stage"


def test_a_member_gets_their_own_work_with_reviews(api_client, project):
    # given two annotators; annie's judgment was rejected with a comment
    screens(project, 2)
    annie, bob = member(project, "annie"), member(project, "bob")
    mine = work_prefilter(project, annie, RIGHT)
    theirs = work_prefilter(project, bob, RIGHT)
    Assignment.objects.filter(pk=mine.pk).update(review_state=ReviewState.REJECTED)
    Review.objects.create(reviewed=mine, reviewer=bob, verdict="rejected", reason="sync", comment="Scroll first.")

    # when annie asks
    api_client.force_authenticate(annie)
    body = api_client.get(URL).json()

    # then only her item, with the review
    assert [row["id"] for row in body["history"]] == [mine.pk]
    assert theirs.pk not in {row["id"] for row in body["history"]}
    row = body["history"][0]
    assert row["review"] == {
        "verdict": "rejected",
        "reason": "sync",
        "reason_label": "The VH sync of the main content was judged wrong",
        "comment": "Scroll first.",
    }
    assert (row["kind"], row["control"], row["status"]) == ("work", None, "submitted")
    assert body["figures"]["items_done"] == 1 and body["figures"]["review_acceptance"] == 0.0
    assert body["figures"]["per_stage"] == [{"stage": "prefilter", "submitted": 1, "skipped": 0, "open": 0}]


def test_a_failed_qualification_reports_standing_and_feedback(api_client, project, annotator):
    gold_prefilter(project, 2)
    fail_qualification(project, annotator)
    api_client.force_authenticate(annotator)

    body = api_client.get(URL, {"stage": "prefilter"}).json()

    [standing] = [s for s in body["standings"] if s["stage"] == "prefilter"]
    assert standing["status"] == "not_qualified" and standing["can_start"] is False
    assert standing["retry_at"] is not None and standing["attempts_left"] == 2
    [feedback] = body["feedback"]
    assert feedback["kind"] == "qualification"
    assert [i["correct"] for i in feedback["items"]] == [False, True]
    assert {row["control"]["correct"] for row in body["history"]} == {False, True}
    assert body["history"][0]["control"]["gold"] == RIGHT


def test_the_stage_list_reports_the_standing(api_client, project, annotator):
    gold_prefilter(project, 2)
    fail_qualification(project, annotator)
    api_client.force_authenticate(annotator)
    rows = {row["stage"]: row for row in api_client.get("/api/projects/demo/stages/").json()}
    assert rows["prefilter"]["standing"]["status"] == "not_qualified"
    assert rows["prefilter"]["standing"]["summary"].startswith("Not qualified: 1 of 2 right")


def test_the_endpoint_is_in_the_openapi_schema(api_client):
    schema = api_client.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/projects/{slug}/my-work/"]["get"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/MyWork")
