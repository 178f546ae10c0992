"""The one API exception handler: domain errors become 400 (with the field), 403, 404, 409."""

from __future__ import annotations

import pytest
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError

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
