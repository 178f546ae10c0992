"""The quality API for leads: figures, one annotator's report, standing actions (recorded with
the lead as actor), the event log, gold items; who may use it; the OpenAPI schema."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import GoldItem, QualityEvent, Question, Standing
from tests.conftest import login
from tests.factories import MembershipFactory, ProjectFactory, ScreenFactory, UserFactory

from .report_builders import PREFILTER_RIGHT, PREFILTER_WRONG, answer, control, gold, question, standing, work

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(project, annotator):
    standing(project, annotator, status="paused", reason="too many wrong")
    for right in (True, False, False):
        control(project, annotator, correct=right)
    return project


def base(project):
    return f"/api/projects/{project.slug}/quality/"


def test_report_lists_members_with_figures(data, lead, api_client, annotator):
    login(api_client, lead)
    response = api_client.get(base(data), {"sort": "-control"})
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == len(body["results"]) and body["computed_at"] and body["refreshing"] is False
    rows = {r["username"]: r for r in body["results"]}
    annie = rows["annie"]
    assert (annie["control_correct"], annie["control_items"], annie["control_accuracy"]) == (1, 3, 0.3333)
    assert annie["status"] == "paused" and annie["standings"][0]["reason"] == "too many wrong"
    assert rows["leo"]["control_accuracy"] is None
    bad = api_client.get(base(data), {"sort": "nope"})
    assert bad.status_code == 400 and bad.json()["field"] == "sort" and "Unknown sort" in bad.json()["detail"]


def test_annotator_report_with_timeline_and_events(data, lead, api_client, annotator):
    QualityEvent.objects.create(project=data, user=annotator, stage="prefilter", rule="control-accuracy")
    login(api_client, lead)
    body = api_client.get(f"{base(data)}annotators/{annotator.pk}/", {"per": 2}).json()
    assert body["figures"]["username"] == "annie"
    assert [(p["label"], p["correct"], p["items"]) for p in body["timeline"]] == [("1–2", 1, 2), ("3–4", 0, 1)]
    assert body["timeline"][0]["results"][1]["feedback"]["why"].startswith("Judged differently")
    assert [(e["rule"], e["actor"]) for e in body["events"]] == [("control-accuracy", None)]
    assert api_client.get(f"{base(data)}annotators/{annotator.pk}/", {"per": 0}).status_code == 400
    outsider = UserFactory(username="otto")
    assert api_client.get(f"{base(data)}annotators/{outsider.pk}/").status_code == 404


def test_annotator_report_lists_the_questions_behind_invalid_questions(data, lead, api_client, annotator):
    # annie wrote three questions: one an answerer judged invalid, one a pass-2 writer flagged, one fine
    other = UserFactory(username="ann2")
    MembershipFactory(project=data, user=other)
    judged = question(data, author=annotator)
    answer(judged, other, "invalid")
    flagged = question(data, author=annotator)
    Question.objects.filter(pk=flagged.pk).update(flag_reason="counting")
    fine = question(data, author=annotator)
    answer(fine, other, "answered", ("Foo",))
    login(api_client, lead)
    url = f"{base(data)}annotators/{annotator.pk}/"

    def get(params=None):
        with CaptureQueriesContext(connection) as ctx:
            response = api_client.get(url, params or {})
        assert response.status_code == 200
        return response.json(), len(ctx.captured_queries)

    body, queries = get()
    assert (body["figures"]["questions_faulted"], body["figures"]["questions_flagged_pass2"]) == (2, 1)
    rows = body["faulted_questions"]
    assert [r["id"] for r in rows] == [flagged.pk, judged.pk]  # newest first
    assert rows[0] == {
        "id": flagged.pk,
        "stage": "questions-1",
        "screen_id": flagged.screen_id,
        "rico_id": flagged.screen.rico_id,
        "text": "What is shown?",
        "judged": 0,
        "flag_reason": "counting",
        "flag_label": "Needs counting",
        "flagged_by": None,
    }
    assert (rows[1]["judged"], rows[1]["flag_reason"], rows[1]["flag_label"]) == (1, "", "")
    # one stage's questions only; a stage that writes none lists none
    assert [r["id"] for r in get({"stage": "questions-2"})[0]["faulted_questions"]] == []
    assert get({"stage": "prefilter"})[0]["faulted_questions"] == []
    # the list costs the same queries however long it is
    for _ in range(3):
        Question.objects.filter(pk=question(data, author=annotator).pk).update(flag_reason="ads")
    body, more = get()
    assert len(body["faulted_questions"]) == 5 and more == queries


def test_standing_action_records_the_lead(data, lead, api_client, annotator):
    login(api_client, lead)
    url = f"{base(data)}annotators/{annotator.pk}/standing/"
    response = api_client.post(url, {"stage": "prefilter", "action": "reinstate", "note": "ok"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "active"
    event = QualityEvent.objects.get(rule="lead-reinstate")
    assert (event.actor, event.user, event.status_before) == (lead, annotator, "paused")
    assert api_client.post(url, {"stage": "prefilter", "action": "pause"}, format="json").status_code == 200
    again = api_client.post(url, {"stage": "prefilter", "action": "pause"}, format="json")
    assert again.status_code == 409 and again.json()["detail"] == "Already paused."
    bad = api_client.post(url, {"stage": "prefilter", "action": "ban"}, format="json")
    assert bad.status_code == 400 and "action" in bad.json()
    # the events list, filtered by user and stage
    events = api_client.get(f"{base(data)}events/", {"user": annotator.pk, "stage": "prefilter"}).json()
    assert [(e["rule"], e["actor"]) for e in events["results"]] == [("lead-pause", "leo"), ("lead-reinstate", "leo")]
    assert api_client.get(f"{base(data)}events/", {"stage": "answers"}).json()["count"] == 0
    assert api_client.get(f"{base(data)}events/", {"user": "x"}).status_code == 400


def test_gold_items_list_create_promote_and_deactivate(data, lead, api_client, annotator):
    login(api_client, lead)
    listed = api_client.get(f"{base(data)}gold/", {"stage": "prefilter"}).json()["results"]
    assert len(listed) == 3 and {(g["served"], g["suspect"]) for g in listed} == {(1, False)}
    screen = ScreenFactory(project=data)
    gold_url = f"{base(data)}gold/"
    made = api_client.post(
        gold_url, {"stage": "prefilter", "rico_id": screen.rico_id, "answer": PREFILTER_WRONG}, format="json"
    )
    assert made.status_code == 201 and made.json()["source"] == "manual" and made.json()["answer"]["non_english_app"]
    twice = api_client.post(
        gold_url, {"stage": "prefilter", "rico_id": screen.rico_id, "answer": PREFILTER_RIGHT}, format="json"
    )
    assert twice.status_code == 409
    missing = api_client.post(gold_url, {"stage": "prefilter", "rico_id": "nope", "answer": {}}, format="json")
    assert missing.status_code == 404
    no_gold = api_client.post(
        f"{base(data)}gold/", {"stage": "questions-1", "rico_id": screen.rico_id, "answer": {}}, format="json"
    )
    assert no_gold.status_code == 400 and no_gold.json()["field"] == "stage"
    submitted = work(data, annotator)
    promoted = api_client.post(f"{base(data)}gold/promote/", {"assignment_id": submitted.pk}, format="json")
    assert promoted.status_code == 201 and promoted.json()["origin_id"] == submitted.pk
    assert api_client.post(f"{base(data)}gold/promote/", {"assignment_id": 0}, format="json").status_code == 404
    gold_id = made.json()["id"]
    off = api_client.post(f"{base(data)}gold/{gold_id}/active/", {"active": False}, format="json")
    assert off.status_code == 200 and off.json()["active"] is False
    assert not GoldItem.objects.get(pk=gold_id).active
    assert api_client.post(f"{base(data)}gold/{gold_id}/active/", {}, format="json").status_code == 400


def endpoints(project, user_id, gold_id):
    b = base(project)
    return [
        ("get", b, None),
        ("get", f"{b}annotators/{user_id}/", None),
        ("post", f"{b}annotators/{user_id}/standing/", {"stage": "prefilter", "action": "reinstate"}),
        ("get", f"{b}events/", None),
        ("get", f"{b}gold/", None),
        ("post", f"{b}gold/", {"stage": "prefilter", "rico_id": "x", "answer": {}}),
        ("post", f"{b}gold/promote/", {"assignment_id": 1}),
        ("post", f"{b}gold/review/", {"submission_id": 1}),
        ("post", f"{b}gold/{gold_id}/active/", {"active": False}),
    ]


@pytest.mark.parametrize("who", ["anonymous", "outsider", "annotator", "reviewer", "lead of another project"])
def test_everybody_but_leads_is_refused(data, api_client, annotator, who):
    item = gold(data)
    expected = {"anonymous": 403, "outsider": 404, "annotator": 403, "reviewer": 403}.get(who, 404)
    if who != "anonymous":
        user = UserFactory(username="rita")
        if who in ("annotator", "reviewer"):
            MembershipFactory(project=data, user=user, role=who)
        elif who == "lead of another project":
            MembershipFactory(project=ProjectFactory(slug="other"), user=user, role="lead")
        login(api_client, user)
    for method, url, body in endpoints(data, annotator.pk, item.pk):
        response = getattr(api_client, method)(url, body, format="json")
        assert response.status_code == expected, (method, url)
        assert "detail" in response.json()
    assert Standing.objects.get(user=annotator).status == "paused"
    assert GoldItem.objects.get(pk=item.pk).active


def test_site_admin_may_use_it(data, api_client, annotator):
    login(api_client, UserFactory(username="root", is_superuser=True, is_staff=True))
    assert api_client.get(base(data)).status_code == 200
    assert api_client.get(f"{base(data)}annotators/{annotator.pk}/").status_code == 200


def test_the_schema_documents_the_quality_endpoints(api_client):
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    b = "/api/projects/{slug}/quality/"
    assert set(paths[b]) >= {"get"}
    assert "post" in paths[b + "annotators/{user_id}/standing/"]
    assert {"get", "post"} <= set(paths[b + "gold/"])
    assert "post" in paths[b + "gold/promote/"] and "post" in paths[b + "gold/{gold_id}/active/"]
    assert "post" in paths[b + "gold/review/"]
    assert "get" in paths[b + "events/"] and "get" in paths[b + "annotators/{user_id}/"]
    ok = paths[b]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok["$ref"] == "#/components/schemas/QualityReportPage"
    page = schema["components"]["schemas"]["QualityReportPage"]["properties"]
    assert page["results"]["items"]["$ref"] == "#/components/schemas/AnnotatorFigures"
    assert {"count", "computed_at", "refreshing"} <= set(page)
    assert {"page", "page_size", "q", "sort"} <= {p["name"] for p in paths[b]["get"]["parameters"]}
    assert "post" in paths[b + "refresh/"]
    report = schema["components"]["schemas"]["AnnotatorReport"]["properties"]["faulted_questions"]
    assert report["items"]["$ref"] == "#/components/schemas/FaultedQuestion"
    faulted = schema["components"]["schemas"]["FaultedQuestion"]["properties"]
    assert {"id", "text", "judged", "flag_reason", "flag_label", "flagged_by"} <= set(faulted)
    assert "409" in paths[b + "annotators/{user_id}/standing/"]["post"]["responses"]
