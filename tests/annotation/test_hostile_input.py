"""The hostile-input corpus (issue 12 §6, §7): NUL characters in URL paths, query strings and
submitted text, deeply nested JSON and lone surrogates get a 400 that names the field, on
every kind of endpoint, and nothing is written (``annotation.hostile``)."""

from __future__ import annotations

import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.hostile import JSON_MAX_DEPTH
from annotation.models import Assignment, AssignmentStatus, ScreenState
from pipeline.engine import assignment_next
from tests.conftest import login
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db

NESTED = ("[" * 1000 + "]" * 1000).encode()  # about 2 KB: a RecursionError before the fix
JUST_TOO_DEEP = ("[" * (JSON_MAX_DEPTH + 1) + "]" * (JSON_MAX_DEPTH + 1)).encode()
SURROGATE = b'"\\ud800"'


def _api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def _refused(response, field: str) -> dict:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    body = response.json()
    assert body["field"] == field, body
    assert field in body["detail"] or "URL path" in body["detail"], body
    return body


@pytest.fixture
def world(project):
    lead = member(project, "lead", role="lead")
    annie = member(project, "annie")
    (screen,) = screens(project, 1, state=ScreenState.PREFILTER)
    held = assignment_next(project=project, user=annie, stage="prefilter")
    return {"project": project, "lead": lead, "annie": annie, "screen": screen, "held": held}


# --- URL paths and query strings ---------------------------------------------------------

PATHS = [
    "/api/projects/demo/screens/{rico}%00/",
    "/api/projects/demo/screens/{rico}%00/image/",
    "/api/projects/demo/screens/{rico}%00/overlay/",
    "/projects/demo/screens/{rico}%00/",
    "/api/projects/demo/stages/prefilter%00/next/",
    "/projects/demo/work/prefilter%00/next/",
]


@pytest.mark.parametrize("template", PATHS)
def test_nul_in_the_url_path_is_a_400(world, client, template):
    login(client, world["lead"])
    response = client.get(template.format(rico=world["screen"].rico_id))
    assert response.status_code == 400
    assert b"NUL" in response.content


def test_nul_in_app_action_path_and_query_strings(world, client):
    login(client, world["lead"])
    rico = world["screen"].rico_id
    # app actions (a POST on a path with the package in it)
    response = client.post("/api/projects/demo/apps/com.example%00/non-english/", {}, content_type="application/json")
    _refused(response, "path")
    # query strings: screens, short-answer review, the workspace
    _refused(client.get(f"/api/projects/demo/screens/{rico}/?q=%00"), "q")
    response = client.get("/projects/demo/release/short-answers/?seed=%00&size=3")
    assert response.status_code == 400 and b"seed" in response.content
    response = client.get("/projects/demo/release/short-answers/?size=3&x%00=1")
    assert response.status_code == 400


# --- submitted text over the API ---------------------------------------------------------


def test_nul_in_api_text_fields_names_the_field(world, project):
    held = world["held"]
    client = _api(world["annie"])
    url = f"/api/assignments/{held.pk}/"
    _refused(
        client.post(
            url + "submit/", {"non_english_app": False, "vh_out_of_sync": False, "note": "a\x00b"}, format="json"
        ),
        "note",
    )
    _refused(client.post(url + "skip/", {"reason": "\x00"}, format="json"), "reason")
    _refused(client.put(url + "draft/", {"note": "x\x00"}, format="json"), "note")
    _refused(client.put(url + "draft/", {"a\x00": "x"}, format="json"), "a\x00")
    # questions, answers (elements and full answer) on their stages
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    writer = member(project, "writer")
    asked = assignment_next(project=project, user=writer, stage="questions-1")
    assert asked is not None
    _refused(
        _api(writer).post(f"/api/assignments/{asked.pk}/submit/", {"questions": ["Why\x00?"]}, format="json"),
        "questions[0]",
    )
    (a_screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    answering_question(a_screen)
    answerer = member(project, "answerer")
    answering = assignment_next(project=project, user=answerer, stage="answers")
    assert answering is not None
    body = {
        "question": "What?",
        "verdict": "answered",
        "elements": [{"vh_index": 0, "bounds": [0, 0, 10, 10], "text": "x\x00"}],
        "full_answer": "ok",
    }
    _refused(_api(answerer).post(f"/api/assignments/{answering.pk}/submit/", body, format="json"), "elements[0].text")
    body["elements"][0]["text"] = "x"
    body["full_answer"] = "\x00"
    _refused(_api(answerer).post(f"/api/assignments/{answering.pk}/submit/", body, format="json"), "full_answer")
    # nothing was written
    for assignment in (held, asked, answering):
        assignment.refresh_from_db()
        assert assignment.status == AssignmentStatus.LEASED and not assignment.draft


def test_deep_json_and_lone_surrogates_over_the_api(world):
    held = world["held"]
    client = _api(world["annie"])
    url = f"/api/assignments/{held.pk}/draft/"
    body = _refused(client.put(url, NESTED, content_type="application/json"), "body")
    assert "nested" in body["detail"]
    _refused(client.put(url, b'{"d": ' + JUST_TOO_DEEP + b"}", content_type="application/json"), "d" + "[0]" * 31)
    _refused(client.put(url, b'{"note": ' + SURROGATE + b"}", content_type="application/json"), "note")
    _refused(
        client.post(
            f"/api/assignments/{held.pk}/skip/", b'{"reason": ' + SURROGATE + b"}", content_type="application/json"
        ),
        "reason",
    )
    # a draft as deep as the product needs still saves
    ok = client.put(url, {"elements": [{"bounds": [1, 2, 3, 4], "text": "fine"}]}, format="json")
    assert ok.status_code == 200, ok.content
    held.refresh_from_db()
    assert held.draft == {"elements": [{"bounds": [1, 2, 3, 4], "text": "fine"}]}


def test_multipart_import_fields_are_checked(world, client):
    login(client, world["lead"])
    response = client.post("/api/projects/demo/imports/", {"prefix": "screens\x00/"})
    _refused(response, "prefix")


# --- the workspace (form posts and autosave) ---------------------------------------------


def test_workspace_forms_and_autosave(world, client, project):
    held = world["held"]
    login(client, world["annie"])
    page = f"/projects/demo/work/a/{held.pk}/"
    response = client.post(page, {"note": "x\x00", "action": "submit"})
    assert response.status_code == 400 and b"note" in response.content
    assert client.post(page + "skip/", {"reason": "\x00"}).status_code == 400
    draft = page + "draft/"
    _refused(client.post(draft, NESTED, content_type="application/json"), "body")
    _refused(
        client.post(draft, b'{"draft": {"note": ' + SURROGATE + b"}}", content_type="application/json"), "draft.note"
    )
    _refused(client.post(draft, json.dumps({"draft": {"note": "\x00"}}), content_type="application/json"), "draft.note")
    held.refresh_from_db()
    assert held.status == AssignmentStatus.LEASED and not held.draft
    # the answers form carries its elements as JSON text: the same rules inside it
    (a_screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    answering_question(a_screen)
    answering = assignment_next(project=project, user=world["annie"], stage="answers")
    assert answering is not None
    form = {"action": "answer", "question": "What?", "full_answer": "ok"}
    for elements in ('[{"vh_index": 0, "text": "\\u0000"}]', '[{"text": "\\ud800"}]', "[" * 500 + "]" * 500):
        response = client.post(f"/projects/demo/work/a/{answering.pk}/", {**form, "elements": elements})
        assert response.status_code == 400, elements[:40]
        assert Assignment.objects.get(pk=answering.pk).status == AssignmentStatus.LEASED
