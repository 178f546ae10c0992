"""Members API (annotation/apis/members.py) and who may call it and the settings API
(annotation/apis/settings.py, whose checks are in test_apis_settings.py): the lead's pages, for scripts."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token

from annotation.models import Invitation, Membership, Project
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def _as(api_client, user):
    api_client.force_authenticate(user)
    return api_client


def _urls(annotator):
    return [
        ("get", "/api/projects/demo/settings/", None),
        ("patch", "/api/projects/demo/settings/", {"lease_minutes": 40}),
        ("get", "/api/projects/demo/members/", None),
        ("post", "/api/projects/demo/members/", {"username": "nina"}),
        ("patch", f"/api/projects/demo/members/{annotator.pk}/", {"role": "reviewer"}),
        ("delete", f"/api/projects/demo/members/{annotator.pk}/", None),
        ("post", f"/api/projects/demo/members/{annotator.pk}/token/", None),
        ("post", f"/api/projects/demo/members/{annotator.pk}/password/", None),
        ("post", "/api/projects/demo/invitations/", {}),
        ("post", "/api/projects/demo/members/bulk/", {"count": 1}),
    ]


def test_only_leads_and_admins(api_client, project, annotator, outsider):
    other_lead = UserFactory(username="olga")
    MembershipFactory(project=ProjectFactory(slug="other"), user=other_lead, role="lead")
    for method, url, body in _urls(annotator):
        api_client.force_authenticate(None)
        assert getattr(api_client, method)(url, body, format="json").status_code == 403, url
        for user, code in [(outsider, 404), (other_lead, 404), (annotator, 403)]:
            response = getattr(_as(api_client, user), method)(url, body, format="json")
            assert response.status_code == code, (url, user.username, response.content)
    assert Membership.objects.filter(user=annotator).exists()
    assert Project.objects.get(pk=project.pk).lease_minutes == 30


def test_members_add_change_rotate_remove_and_invite(api_client, lead, project, annotator):
    client = _as(api_client, lead)
    created = client.post("/api/projects/demo/members/", {"username": "nina", "in_answer_pool": True}, format="json")
    body = created.json()
    assert created.status_code == 201 and body["password"] and body["created"] and body["username"] == "demo/nina"
    again = client.post("/api/projects/demo/members/", {"username": "NINA"}, format="json")
    assert again.status_code == 400 and again.json()["field"] == "username"
    listed = {m["username"]: m["account"] for m in client.get("/api/projects/demo/members/").json()}
    assert listed == {"annie": "personal", "leo": "personal", "demo/nina": "project"}
    changed = client.patch(f"/api/projects/demo/members/{annotator.pk}/", {"role": "reviewer"}, format="json")
    assert changed.status_code == 200 and changed.json()["role"] == "reviewer"
    bad = client.patch(f"/api/projects/demo/members/{annotator.pk}/", {"role": "boss"}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "role"
    nina = Membership.objects.get(project=project, user__username="demo/nina").user
    token = client.post(f"/api/projects/demo/members/{nina.pk}/token/").json()["token"]
    assert Token.objects.get(user=nina).key == token != body["token"]
    password = client.post(f"/api/projects/demo/members/{nina.pk}/password/").json()["password"]
    nina.refresh_from_db()
    assert nina.check_password(password)
    # a personal account's credentials are its owner's alone
    for path in ("token", "password"):
        refused = client.post(f"/api/projects/demo/members/{annotator.pk}/{path}/")
        assert refused.status_code == 403 and "personal account" in refused.json()["detail"]
    invited = client.post("/api/projects/demo/invitations/", {"days": 2, "role": "reviewer"}, format="json")
    invitation = Invitation.objects.get(project=project)
    assert invited.status_code == 201 and invited.json()["url"].endswith(f"/invitations/{invitation.token}/")
    assert client.post("/api/projects/demo/invitations/", {"days": 61}, format="json").status_code == 400
    removed = client.delete(f"/api/projects/demo/members/{annotator.pk}/")
    assert removed.json() == {"username": "annie", "released": 0}
    assert client.delete(f"/api/projects/demo/members/{annotator.pk}/").status_code == 404
    assert client.delete(f"/api/projects/demo/members/{lead.pk}/").status_code == 400  # the last lead


def test_bulk_creation_is_a_job_with_one_credentials_download(
    api_client, lead, project, django_capture_on_commit_callbacks
):
    client = _as(api_client, lead)
    bad = client.post("/api/projects/demo/members/bulk/", {"csv": "ok\nbad name\nｏｋ\n"}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "csv"
    assert [row["line"] for row in bad.json()["rows"]] == [2, 3]
    assert not Membership.objects.filter(user__username__startswith="demo/").exists()
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(
            "/api/projects/demo/members/bulk/", {"csv": "ann\nbob\n", "in_answer_pool": True}, format="json"
        )
    assert started.status_code == 202
    job = started.json()
    assert job["kind"] == "members" and job["credentials_url"] == f"/api/member-jobs/{job['id']}/credentials/"
    status = client.get(job["url"]).json()
    assert (status["status"], status["processed"], status["total"], status["downloaded_at"]) == ("done", 2, 2, None)
    download = client.post(job["credentials_url"])
    assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")
    lines = download.content.decode().splitlines()
    assert lines[0] == "username,password,token,role,in_answer_pool" and len(lines) == 3
    assert client.post(job["credentials_url"]).status_code == 410
    assert client.get(job["url"]).json()["downloaded_at"] is not None
    counted = client.post("/api/projects/demo/members/bulk/", {"count": 0}, format="json")
    assert counted.status_code == 400 and counted.json()["field"] == "count"


def test_schema_documents_the_member_endpoints(api_client):
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    assert {"get", "patch"} <= set(paths["/api/projects/{slug}/settings/"])
    assert {"patch", "delete"} <= set(paths["/api/projects/{slug}/members/{user_id}/"])
    assert "post" in paths["/api/projects/{slug}/invitations/"]
