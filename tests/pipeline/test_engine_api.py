"""The engine's REST API: wire format, status codes, permissions, query counts."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Answer, Assignment, AssignmentStatus, Question, ScreenState
from tests.conftest import login
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def next_url(stage: str, slug: str = "demo") -> str:
    return f"/api/projects/{slug}/stages/{stage}/next/"


def test_next_gives_the_wire_format_and_204_when_empty(project):
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    client = client_for(a)
    response = client.post(next_url("questions-1"))
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= {"id", "stage", "lease_expires_at", "screen", "draft"}
    assert body["stage"] == "questions-1" and body["draft"] == {}
    assert body["lease_expires_at"].endswith("Z")
    assert set(body["screen"]) >= {"rico_id", "app", "image_url", "width", "height", "candidates"}
    assert body["screen"]["rico_id"] == screen.rico_id
    assert set(body["screen"]["candidates"][0]) >= {"vh_index", "bounds", "text", "type"}
    # the same caller asking again gets the same assignment
    assert client.post(next_url("questions-1")).json()["id"] == body["id"]
    # somebody else gets nothing
    assert client_for(member(project, "b")).post(next_url("questions-1")).status_code == 204


def test_whole_screen_through_the_api(project):
    project.answers_validation = project.answers_test = 1  # one answer whatever the split
    project.save()
    a, b, c = member(project, "a"), member(project, "b"), member(project, "c")
    screens(project, 1)
    ca, cb, cc = client_for(a), client_for(b), client_for(c)
    lease = ca.post(next_url("prefilter")).json()
    r = ca.post(
        f"/api/assignments/{lease['id']}/submit/",
        {"non_english_app": False, "vh_out_of_sync": False, "note": ""},
        format="json",
    )
    assert r.status_code == 200 and r.json()["status"] == "submitted"
    lease = ca.post(next_url("questions-1")).json()
    assert (
        ca.post(f"/api/assignments/{lease['id']}/submit/", {"questions": ["What?"]}, format="json").status_code == 200
    )
    assert ca.post(next_url("questions-2")).status_code == 204  # never the pass-1 writer
    lease = cb.post(next_url("questions-2")).json()
    assert lease["previous_questions"][0]["text"] == "What?"
    assert cb.post(f"/api/assignments/{lease['id']}/submit/", {"questions": []}, format="json").status_code == 200
    assert ca.post(next_url("answers")).status_code == 204  # never the question's author
    lease = cc.post(next_url("answers")).json()
    assert lease["question"]["text"] == "What?"
    answer = {
        "question": "What?",
        "verdict": "answered",
        "elements": [{"vh_index": 1, "text": "Label"}, {"bounds": [5, 5, 50, 50], "text": "Box"}],
        "full_answer": "It is Label.",
    }
    first = cc.post(f"/api/assignments/{lease['id']}/submit/", answer, format="json")
    again = cc.post(f"/api/assignments/{lease['id']}/submit/", answer, format="json")
    assert first.status_code == again.status_code == 200 and first.json() == again.json()
    assert Answer.objects.count() == 1
    progress = ca.get("/api/projects/demo/progress/").json()
    assert progress["questions"] == {"answered": 1}, progress
    assert progress["ready_for_postprocessing"] is True, progress


def test_bad_body_is_400_naming_the_field(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    client = client_for(a)
    lease = client.post(next_url("answers")).json()
    body = {
        "question": "Q?",
        "verdict": "answered",
        "elements": [{"vh_index": 1, "text": "ok"}, {"bounds": [0, 0, 5000, 10], "text": "x"}],
        "full_answer": "A.",
    }
    response = client.post(f"/api/assignments/{lease['id']}/submit/", body, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == "elements[1].bounds"
    assert "inside" in response.json()["detail"]
    assert client.post(f"/api/assignments/{lease['id']}/submit/", [1, 2], format="json").status_code == 400


def test_lost_lease_is_409_and_the_content_is_kept(project):
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = client_for(a).post(next_url("questions-1")).json()
    Assignment.objects.filter(pk=lease["id"]).update(lease_expires_at="2000-01-01T00:00:00Z")
    assert client_for(b).post(next_url("questions-1")).status_code == 200
    response = client_for(a).post(f"/api/assignments/{lease['id']}/submit/", {"questions": ["Mine?"]}, format="json")
    assert response.status_code == 409
    assert response.json()["draft_saved"] is True
    assert client_for(a).get(f"/api/assignments/{lease['id']}/draft/").json()["draft"] == {"questions": ["Mine?"]}


def test_draft_skip_release_extend(project):
    a = member(project, "a")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    client = client_for(a)
    lease = client.post(next_url("questions-1")).json()
    url = f"/api/assignments/{lease['id']}"
    assert client.put(f"{url}/draft/", {"questions": ["Half"]}, format="json").status_code == 200
    assert client.post(next_url("questions-1")).json()["draft"] == {"questions": ["Half"]}
    assert client.post(f"{url}/extend/").status_code == 200
    r = client.post(f"{url}/skip/", {}, format="json")
    assert r.status_code == 400 and r.json()["field"] == "reason"
    assert client.post(f"{url}/skip/", {"reason": "unreadable"}, format="json").json()["status"] == "skipped"
    assert client.post(f"{url}/extend/").status_code == 409
    second = client.post(next_url("questions-1")).json()
    assert second["id"] != lease["id"]
    assert client.post(f"/api/assignments/{second['id']}/release/").json()["status"] == "released"


def test_annotators_never_see_others_assignments(project):
    author, a, b = member(project, "author"), member(project, "a"), member(project, "b")
    project.answers_train = 2
    project.save()
    (screen,) = screens(project, 1)
    answering_question(screen, author=author, needed=2)
    la = client_for(a).post(next_url("answers")).json()
    client_for(a).post(
        f"/api/assignments/{la['id']}/submit/",
        {"question": "Q?", "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "Secret."},
        format="json",
    )
    lb = client_for(b).post(next_url("answers")).json()
    # B's payload never carries A's answer
    assert "Secret." not in str(lb)
    for method, suffix in [
        ("get", ""),
        ("get", "draft/"),
        ("post", "submit/"),
        ("post", "release/"),
        ("post", "skip/"),
        ("post", "extend/"),
        ("put", "draft/"),
    ]:
        response = getattr(client_for(b), method)(f"/api/assignments/{la['id']}/{suffix}", {}, format="json")
        assert response.status_code == 404, (method, suffix)


def test_project_access(project, outsider):
    a = member(project, "a")
    writer = member(project, "w", pool=False)
    (screen,) = screens(project, 1)
    answering_question(screen)
    outsider_client = client_for(outsider)
    assert outsider_client.post(next_url("prefilter")).status_code == 404
    assert outsider_client.get("/api/projects/demo/stages/").status_code == 404
    assert outsider_client.get("/api/projects/demo/progress/").status_code == 404
    assert client_for(a).post(next_url("no-such-stage")).status_code == 404
    assert client_for(writer).post(next_url("answers")).status_code == 403
    anonymous = APIClient()
    assert anonymous.post(next_url("prefilter")).status_code in (401, 403)
    rows = client_for(writer).get("/api/projects/demo/stages/").json()
    assert "answers" not in [row["stage"] for row in rows]


def test_lead_actions_need_a_lead_of_the_project(project, lead, outsider):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    package = screen.app.package
    urls = [f"/api/projects/demo/apps/{package}/non-english/", "/api/projects/demo/stages/not-answerable/start/"]
    for url in urls:
        assert client_for(a).post(url, {}, format="json").status_code == 403
        assert client_for(outsider).post(url, {}, format="json").status_code == 404
    response = client_for(lead).post(urls[0])
    assert response.status_code == 200 and response.json()["excluded"] == 1
    english = client_for(lead).post(urls[0], {"english": True}, format="json").json()
    assert (english["non_english"], english["restored"], english["restored_by_state"]) == (False, 1, {"prefilter": 1})
    bad = client_for(lead).post(urls[0], {"english": "yes"}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "english"
    assert client_for(lead).post("/api/projects/demo/apps/com.nowhere/non-english/").status_code == 404
    bad = client_for(lead).post(urls[1], {"sample_size": 0}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "sample_size"
    assert client_for(lead).post(urls[1], {}, format="json").json()["sampled"] == 0  # nothing in answering yet


def test_session_auth_works_for_the_browser(project):
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    client = APIClient()
    login(client, a)
    assert client.post(next_url("questions-1")).status_code == 200


def test_hot_paths_query_counts(project, django_assert_num_queries, django_assert_max_num_queries):
    a = member(project, "a")
    screens(project, 10, state=ScreenState.QUESTIONS_1, candidates=40)
    client = client_for(a)
    first = client.post(next_url("questions-1")).json()  # first contact: the standing is recorded once
    client.post(f"/api/assignments/{first['id']}/submit/", {"questions": ["x?"]}, format="json")
    # token; project + membership + open assignment + standing in one; (SAVEPOINT) user lock with the
    # no-flush commit setting in one; the claim (which also checks, after the lock, that the
    # caller holds nothing open, and brings the candidates); the fresh re-check; the INSERT;
    # (RELEASE); and, while the writer qualifies by review, how many of their sets wait for it (one more)
    with django_assert_num_queries(9):
        lease = client.post(next_url("questions-1")).json()
    with django_assert_num_queries(4):  # token, project + membership + open assignment, the assignment, candidates
        client.post(next_url("questions-1"))
    with django_assert_max_num_queries(11):  # one more than before quality control: the count of items done
        response = client.post(f"/api/assignments/{lease['id']}/submit/", {"questions": ["a?", "b?"]}, format="json")
    assert response.status_code == 200
    assert Question.objects.count() == 3


@pytest.mark.shuffled_queue
def test_a_lease_from_a_random_pivot_costs_one_more_query_only_when_it_wraps(project, monkeypatch):
    # given a writer past their first contact, in the real shuffled queue
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from pipeline.engine import services as engine

    a = member(project, "a")
    screens(project, 6, state=ScreenState.QUESTIONS_1, candidates=40)
    client = client_for(a)
    first = client.post(next_url("questions-1")).json()
    client.post(f"/api/assignments/{first['id']}/submit/", {"questions": ["x?"]}, format="json")
    # when the pivot falls before a free screen: as many statements as the steady queue's lease
    # (9 on PostgreSQL, as test_hot_paths_query_counts counts them)
    monkeypatch.setattr(engine, "_pivot", lambda: 1)
    with CaptureQueriesContext(connection) as steady:
        lease = client.post(next_url("questions-1")).json()
    client.post(f"/api/assignments/{lease['id']}/submit/", {"questions": ["y?"]}, format="json")
    # and when it falls after every free screen: one more, the claim from the queue's start
    monkeypatch.setattr(engine, "_pivot", lambda: 2**31 - 1)
    with CaptureQueriesContext(connection) as wrapped:
        again = client.post(next_url("questions-1")).json()
    assert again["id"] not in (first["id"], lease["id"])
    assert len(wrapped) == len(steady) + 1
    if connection.vendor == "postgresql":
        assert len(steady) == 9


def test_schema_documents_the_wire_format(project, lead):
    client = APIClient()
    login(client, lead)
    schema = client.get("/api/schema/", {"format": "json"}).json()
    assert "/api/projects/{slug}/stages/{stage}/next/" in schema["paths"]
    submit = schema["paths"]["/api/assignments/{assignment_id}/submit/"]["post"]
    ref = submit["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    variants = {v["$ref"].rsplit("/", 1)[1] for v in schema["components"]["schemas"][ref]["anyOf"]}
    assert variants == {
        "PrefilterSubmitRequest",
        "QuestionsSubmitRequest",
        "QuestionsPass2SubmitRequest",
        "NotAnswerableSubmitRequest",
        "ReviewSubmitRequest",
        "AnswersSubmitRequest",
    }
    assert {"200", "400", "404", "409"} <= set(submit["responses"])
    assert AssignmentStatus.LEASED == "leased"


def test_a_lease_carries_the_same_screen_payload_as_a_reload(project):
    # given a screen whose candidates were stored out of order, one with only a description
    from tests.factories import CandidateFactory

    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1, candidates=0)
    for k in (3, 1, 2):
        CandidateFactory(screen=screen, vh_index=k, text="" if k == 2 else f"t{k}", content_desc=f"d{k}")
    client = client_for(a)
    # when the lease is given (candidates read with the claim) and then reloaded
    leased = client.post(next_url("questions-1")).json()
    again = client.post(next_url("questions-1")).json()
    detail = client.get(f"/api/assignments/{leased['id']}/").json()
    # then all three show the same candidates, in VH order, the description standing in
    assert leased["screen"] == again["screen"] == detail["screen"]
    assert [(c["vh_index"], c["text"]) for c in leased["screen"]["candidates"]] == [(1, "t1"), (2, "d2"), (3, "t3")]


def test_prefilter_next_names_the_whole_vh_without_a_query(project, django_assert_num_queries):
    # given screens waiting for pre-filtering, and a judge past their first contact (no control
    # items: the draw's one extra query depends on the annotator's id, and it is counted elsewhere)
    project.control_rate = project.control_rate_new = 0
    project.save(update_fields=["control_rate", "control_rate_new"])
    a = member(project, "a")
    screens(project, 3, candidates=40)
    client = client_for(a)
    first = client.post(next_url("prefilter")).json()
    body = {"non_english_app": False, "vh_out_of_sync": False, "note": ""}
    client.post(f"/api/assignments/{first['id']}/submit/", body, format="json")
    # when the next screen is leased: the same 8 statements as any stage's lease
    with django_assert_num_queries(8):
        lease = client.post(next_url("prefilter")).json()
    # then the payload names the VH's node list (fetched by the page, not carried by next)
    rico_id = lease["screen"]["rico_id"]
    assert lease["screen"]["vh_url"] == f"/api/projects/{project.slug}/screens/{rico_id}/vh/"
    assert client.get(lease["screen"]["vh_url"]).status_code == 200


def test_a_control_item_costs_at_most_two_more_queries(project, django_assert_max_num_queries):
    # given a qualified judge (a one-item qualification set, passed) and every lease a control draw
    from annotation.models import Purpose
    from tests.pipeline.quality.builders import RIGHT, gold_prefilter

    gold_prefilter(project, 6)
    screens(project, 3, candidates=40)
    project.qualification_items = 1
    project.control_rate = project.control_rate_new = 1.0
    project.save(update_fields=["qualification_items", "control_rate", "control_rate_new"])
    a = member(project, "a")
    client = client_for(a)
    first = client.post(next_url("prefilter")).json()
    client.post(f"/api/assignments/{first['id']}/submit/", {**RIGHT, "note": ""}, format="json")
    assert Assignment.objects.get(pk=first["id"]).purpose == Purpose.QUALIFICATION
    # when the next item is leased: the 8 statements of any lease (the gold draw in the claim's place),
    # plus whether real work waits (a control item comes only then) and the gold item's exposure count
    with django_assert_max_num_queries(10):
        lease = client.post(next_url("prefilter")).json()
    # then it is a control item, served like real work
    assert Assignment.objects.get(pk=lease["id"]).purpose == Purpose.CONTROL
    assert "purpose" not in lease and "gold" not in str(lease).lower()
