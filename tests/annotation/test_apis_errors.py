"""The one API exception handler: domain errors become 400 (with the field), 403, 404, 409."""

from __future__ import annotations

import botocore.exceptions
import kombu.exceptions
import pytest
import redis.exceptions
from django.db import OperationalError
from django.test import Client
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from annotation.apis.errors import SERVER_ERROR, UNAVAILABLE
from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from tests.conftest import login

ERRORS = {
    "bad": ApplicationError("Boxes must lie inside the image.", field="elements[1].bounds"),
    "conflict": ConflictError("Your lease expired and the work went to someone else.", extra={"draft_saved": True}),
    "missing": NotFoundError("Assignment not found."),
    "forbidden": PermissionDeniedError("Only the project's leads may do this."),
}


class Raising(APIView):
    authentication_classes: list = []
    permission_classes: list = []

    def get(self, request, kind):
        raise ERRORS[kind]


@pytest.mark.parametrize(("kind", "status"), [("bad", 400), ("conflict", 409), ("missing", 404), ("forbidden", 403)])
def test_domain_errors_map_to_http(kind, status):
    response = Raising.as_view()(APIRequestFactory().get("/"), kind=kind)
    assert response.status_code == status
    assert response.data["detail"] == ERRORS[kind].message


def test_a_refused_field_is_named():
    response = Raising.as_view()(APIRequestFactory().get("/"), kind="bad")
    assert response.data["field"] == "elements[1].bounds"
    assert response.data["elements[1].bounds"] == ["Boxes must lie inside the image."]


def test_extra_context_reaches_the_client():
    response = Raising.as_view()(APIRequestFactory().get("/"), kind="conflict")
    assert response.data["draft_saved"] is True


# --- the contract the schema states (issue 12: schemathesis found these) --------------------


@pytest.mark.django_db
def test_an_unknown_api_url_is_a_json_404_and_a_page_keeps_the_site_404(client):
    # a non-integer id matches no route: under /api/ the answer is still the API's JSON
    response = client.get("/api/assignments/abc/")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}
    page = client.get("/projects/demo/work/a/abc/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


# --- server errors (issue 19 §4): the API answers its JSON Error body, pages keep the HTML 500 ---

SECRET = "password=hunter2 at /srv/app/annotation/selectors/screens.py line 42"


def _boom(**kwargs):
    raise RuntimeError(SECRET)


@pytest.mark.django_db
@pytest.mark.parametrize("auth", ["session", "token"])
def test_an_unhandled_exception_under_the_api_is_a_json_500_without_traceback(annotator, monkeypatch, auth):
    # Given a view of the API that fails in an unforeseen way
    monkeypatch.setattr("annotation.apis.screens.screen_get", _boom)
    client = Client(raise_request_exception=False)
    headers = {}
    if auth == "session":
        login(client, annotator)
    else:
        headers["Authorization"] = f"Token {Token.objects.create(user=annotator).key}"
    # when a member asks for a screen
    response = client.get("/api/projects/demo/screens/1/", headers=headers)
    # then the answer is the API's Error body, with no trace of the exception
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": SERVER_ERROR}
    assert "hunter2" not in response.content.decode() and "Traceback" not in response.content.decode()


@pytest.mark.django_db
def test_a_page_that_fails_keeps_the_html_500_page(annotator, monkeypatch):
    monkeypatch.setattr("frontend.views.core.screen_get", _boom)
    client = Client(raise_request_exception=False)
    login(client, annotator)
    response = client.get("/projects/demo/screens/1/")
    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")
    assert 'data-testid="error-500"' in response.content.decode()
    assert "hunter2" not in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "error",
    [
        redis.exceptions.ConnectionError("Error 111 connecting to redis:6379. Connection refused."),
        kombu.exceptions.OperationalError("Error 111 connecting to redis:6379. Connection refused."),
        OperationalError('connection to server at "postgres" (10.0.0.3), port 5432 failed'),
        botocore.exceptions.EndpointConnectionError(endpoint_url="http://storage:8333/screenqa"),
    ],
    ids=["cache", "broker", "database", "storage"],
)
def test_an_outage_of_a_service_under_the_api_is_a_json_503_with_retry_after(annotator, monkeypatch, error):
    def out(**kwargs):
        raise error

    monkeypatch.setattr("annotation.apis.screens.screen_get", out)
    client = Client(raise_request_exception=False)
    login(client, annotator)
    response = client.get("/api/projects/demo/screens/1/")
    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert response.json() == {"detail": UNAVAILABLE}
    assert "connect" not in response.content.decode()


# --- bodies over the size limit (issue 19 §5): a JSON 413 on every route, also without the proxy ---


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "content_type", "body"),
    [
        ("/api/projects/demo/stages/prefilter/next/", "application/json", b'{"note": "' + b"a" * 2048 + b'"}'),
        ("/api/projects/demo/imports/", "application/json", b'{"note": "' + b"a" * 2048 + b'"}'),
        ("/login/", "application/x-www-form-urlencoded", b"username=a&password=" + b"b" * 2048),
    ],
    ids=["api", "import-route", "page"],
)
def test_a_body_over_the_limit_is_a_json_413(settings, annotator, path, content_type, body):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    client = Client(raise_request_exception=False)
    response = client.post(path, body, content_type=content_type)
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "The request body is over the limit of 1024 bytes."}


@pytest.mark.django_db
def test_another_unreadable_request_is_a_json_400_under_the_api_and_the_400_page_elsewhere(settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 3
    form = "&".join(f"f{n}=x" for n in range(10))
    client = Client(raise_request_exception=False)
    api = client.post("/api/projects/demo/stages/", form, content_type="application/x-www-form-urlencoded")
    assert api.status_code == 400 and api.json() == {"detail": "Bad request: the request could not be read."}
    page = client.post("/login/", form, content_type="application/x-www-form-urlencoded")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")


class Validating(APIView):
    authentication_classes: list = []
    permission_classes: list = []

    class Input(serializers.Serializer):
        class Box(serializers.Serializer):
            bounds = serializers.ListField(child=serializers.IntegerField())

        name = serializers.CharField()
        elements = Box(many=True)

    def post(self, request):
        self.Input(data=request.data).is_valid(raise_exception=True)


def test_a_serializer_error_carries_detail_and_field_and_keeps_drf_shape():
    body = {"name": "x", "elements": [{"bounds": [1]}, {"bounds": ["a"]}]}
    response = Validating.as_view()(APIRequestFactory().post("/", body, format="json"))
    assert response.status_code == 400
    assert response.data["field"] == "elements[1].bounds[0]"
    assert response.data["detail"] == "A valid integer is required."
    assert "elements" in response.data  # DRF's own shape stays
    missing = Validating.as_view()(APIRequestFactory().post("/", {}, format="json"))
    assert missing.data["field"] == "name" and missing.data["detail"] == "This field is required."


@pytest.mark.django_db
def test_every_operation_documents_its_error_answers(client):
    schema = client.get("/api/schema/?format=json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            documented = set(operation["responses"])
            assert {"403", "404", "429"} <= documented, (method, path)
            if "requestBody" in operation:
                assert {"400", "413"} <= documented, (method, path)
            for code in documented & {"400", "403", "404", "409", "413", "429"}:
                content = operation["responses"][code].get("content", {})
                assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, (code, path)


@pytest.mark.django_db
def test_bodies_are_json_only_the_import_takes_an_upload(client):
    schema = client.get("/api/schema/?format=json").json()
    start = schema["paths"]["/api/projects/{slug}/stages/not-answerable/start/"]["post"]
    assert set(start["requestBody"]["content"]) == {"application/json"}
    upload = schema["paths"]["/api/projects/{slug}/imports/"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]


# --- query parameters are strict (annotation.apis.params): refused, never silently defaulted ---

EVENTS = "/api/projects/demo/quality/events/"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "query", "field"),
    [
        (EVENTS, "page_size=ten", "page_size"),  # junk integer (DRF's pagination used the default)
        (EVENTS, "page_size=0", "page_size"),  # below the range
        (EVENTS, "page_size=501", "page_size"),  # above MAX_PAGE_SIZE (DRF clamped it to 500)
        (EVENTS, "page=x", "page"),  # junk page (DRF: 404 "Invalid page.")
        (EVENTS, "page=0", "page"),
        (EVENTS, "page=2", "page"),  # past the last page: one empty page exists, not two
        (EVENTS, f"user={2**63}", "user"),  # an id no row can have (PostgreSQL would refuse it: 500)
        (EVENTS, "stage=nope", "stage"),  # an unknown enum value
        (EVENTS, "stage=", "stage"),  # blank (DRF's form reading took it as absent: every stage)
        ("/api/projects/demo/quality/", "sort=shoe-size", "sort"),  # an unknown sort
        ("/api/projects/demo/quality/", "sort=", "sort"),  # a blank sort (was the default, username)
        ("/api/projects/demo/quality/gold/", "stage=", "stage"),
        ("/api/projects/demo/postprocess/decisions/", "split=", "split"),
        ("/api/projects/demo/my-work/", "stage=", "stage"),
    ],
)
def test_a_bad_query_parameter_is_a_400_naming_it(api_client, lead, url, query, field):
    api_client.force_authenticate(lead)
    response = api_client.get(f"{url}?{query}")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["field"] == field and body["detail"], body


@pytest.mark.django_db
def test_good_query_parameters_and_undeclared_ones_pass(api_client, lead):
    api_client.force_authenticate(lead)
    response = api_client.get(f"{EVENTS}?page=1&page_size=500&stage=prefilter&user=1&format=json&utm=x")
    assert response.status_code == 200, response.content
    assert response.json()["count"] == 0


@pytest.mark.django_db
def test_the_schema_states_each_query_parameters_type_and_range(client):
    schema = client.get("/api/schema/?format=json").json()
    events = {
        p["name"]: p["schema"] for p in schema["paths"]["/api/projects/{slug}/quality/events/"]["get"]["parameters"]
    }
    assert events["page_size"] == {"type": "integer", "minimum": 1, "maximum": 500}
    assert events["page"]["type"] == "integer" and events["page"]["minimum"] == 1
    assert "prefilter" in events["stage"]["enum"] and "" not in events["stage"]["enum"]
    report = schema["paths"]["/api/projects/{slug}/quality/"]["get"]["parameters"]
    sort = next(p["schema"] for p in report if p["name"] == "sort")
    assert sort["default"] == "username" and {"control", "-control"} <= set(sort["enum"])
