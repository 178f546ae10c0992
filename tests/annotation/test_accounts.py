"""The account-takeover hole of issue 19 and the rule that closes it: a lead never sees, receives or replaces
a credential that works anywhere outside their own project (annotation/models/accounts.py,
annotation/services/members.py). Each test is an attempt a lead of project A could make."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.exceptions import ApplicationError
from annotation.models import Membership, ProjectAccount
from annotation.services.members import invitation_accept, invitation_create, invitation_join
from tests.conftest import login, login_request
from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db):
    """Project A with its lead; project B with its lead and an annotator; a site admin."""
    a, b = ProjectFactory(slug="a"), ProjectFactory(slug="b")
    users = {
        "alead": UserFactory(username="alead"),
        "blead": UserFactory(username="blead"),
        "bob": UserFactory(username="bob"),
        "admin": UserFactory(username="admin", is_superuser=True, is_staff=True),
    }
    MembershipFactory(project=a, user=users["alead"], role="lead")
    MembershipFactory(project=b, user=users["blead"], role="lead")
    MembershipFactory(project=b, user=users["bob"])
    tokens = {name: Token.objects.create(user=user).key for name, user in users.items()}
    return {"a": a, "b": b, "users": users, "tokens": tokens}


def as_token(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def credentials_unchanged(world) -> None:
    for name, user in world["users"].items():
        user.refresh_from_db()
        assert user.check_password(PASSWORD), name
        assert Token.objects.get(user=user).key == world["tokens"][name], name


def test_adding_the_site_admin_by_name_gives_the_lead_nothing_of_theirs(world):
    lead = as_token(world["tokens"]["alead"])
    # the red team's request: join the admin to my project and read its token
    response = lead.post("/api/projects/a/members/", {"username": "admin"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["username"] == "a/admin" and body["token"] != world["tokens"]["admin"]
    admin = world["users"]["admin"]
    assert not Membership.objects.filter(user=admin).exists()
    # the admin's token or password cannot be read or replaced through my project
    for path in ("token", "password"):
        assert lead.post(f"/api/projects/a/members/{admin.pk}/{path}/").status_code == 404
    # and what I received works in my project only: not as the admin, not in project B
    mine = as_token(body["token"])
    assert mine.get("/api/projects/b/stages/").status_code == 404
    assert mine.get("/api/projects/b/settings/").status_code == 404
    assert mine.get("/api/projects/a/stages/").status_code == 200
    credentials_unchanged(world)


def test_adding_a_name_answers_alike_whether_or_not_an_account_has_it(world):
    lead = as_token(world["tokens"]["alead"])
    shapes = []
    for name in ("bob", "nobody-has-this-name"):
        response = lead.post("/api/projects/a/members/", {"username": name}, format="json")
        body = response.json()
        shapes.append((response.status_code, sorted(body), body["username"].split("/")[0], body["created"]))
    assert shapes[0] == shapes[1]
    invitations = [
        lead.post("/api/projects/a/invitations/", {"username": name}, format="json")
        for name in ("bob", "nobody-has-this-name")
    ]
    assert [(r.status_code, sorted(r.json())) for r in invitations] == [(201, ["expires_at", "id", "url"])] * 2
    credentials_unchanged(world)


def test_a_csv_of_existing_names_takes_over_nobody_and_tells_nothing(world, django_capture_on_commit_callbacks):
    lead = as_token(world["tokens"]["alead"])
    with django_capture_on_commit_callbacks(execute=True):
        started = lead.post("/api/projects/a/members/bulk/", {"csv": "admin\nbob\nblead\nｂｏｂ２\n"}, format="json")
    assert started.status_code == 202
    rows = lead.post(started.json()["credentials_url"]).content.decode().splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["a/admin", "a/bob", "a/blead", "a/bob2"]
    for name in ("admin", "bob", "blead"):
        assert list(Membership.objects.filter(user=world["users"][name]).values_list("project__slug", flat=True)) in (
            [],
            ["b"],
        )
    credentials_unchanged(world)


def test_a_person_who_joined_by_invitation_keeps_their_credentials(world, client):
    """The matrix's actors "existing account added by another project's lead" (bob, added to B by B's lead,
    then invited to A) and "site admin added as annotator"."""
    bob, admin = world["users"]["bob"], world["users"]["admin"]
    for user in (bob, admin):
        invitation = invitation_create(project=world["a"], created_by=world["users"]["alead"], username=user.username)
        invitation_join(token=invitation.token, user=user)
    lead = as_token(world["tokens"]["alead"])
    listed = {m["username"]: m["account"] for m in lead.get("/api/projects/a/members/").json()}
    assert listed == {"alead": "personal", "bob": "personal", "admin": "personal"}
    for user in (bob, admin):
        for path in ("token", "password"):
            response = lead.post(f"/api/projects/a/members/{user.pk}/{path}/")
            assert response.status_code == 403 and world["tokens"][user.username] not in response.content.decode()
    # nor through the page, nor by B's lead in A
    login(client, world["users"]["alead"])
    for action in ("show", "rotate", "password"):
        assert client.post(f"/projects/a/members/{admin.pk}/token/", {"action": action}).status_code == 403
    blead = as_token(world["tokens"]["blead"])
    assert blead.post(f"/api/projects/a/members/{bob.pk}/token/").status_code == 404
    credentials_unchanged(world)
    # the admin is still a site admin (a role in A changes nothing of that)
    assert as_token(world["tokens"]["admin"]).get("/api/projects/b/settings/").status_code == 200


def test_a_project_account_stays_in_its_project(world, client, admin_client):
    lead = as_token(world["tokens"]["alead"])
    made = lead.post("/api/projects/a/members/", {"username": "crowd", "role": "lead"}, format="json").json()
    crowd = get_user_model().objects.get(username=made["username"])
    # another project's lead cannot invite it, and it cannot accept another project's open link
    blead = as_token(world["tokens"]["blead"])
    invited = blead.post("/api/projects/b/invitations/", {"username": made["username"]}, format="json")
    assert invited.status_code == 400 and invited.json()["field"] == "username"
    assert client.login(request=login_request(), username=made["username"], password=made["password"])
    open_link = invitation_create(project=world["b"], created_by=world["users"]["blead"])
    response = client.post(f"/invitations/{open_link.token}/", {"action": "join"})
    assert response.status_code == 400 and "project account" in response.content.decode()
    assert list(Membership.objects.filter(user=crowd).values_list("project__slug", flat=True)) == ["a"]
    # nor can the site admin add it to B, or make it staff, from the admin
    response = admin_client.post(
        "/admin/annotation/membership/add/", {"project": world["b"].pk, "user": crowd.pk, "role": "annotator"}
    )
    assert (
        response.status_code == 200 and "only be a member of the project that created it" in response.content.decode()
    )
    response = admin_client.post(
        f"/admin/auth/user/{crowd.pk}/change/",
        {
            "username": "x",
            "first_name": "Crowd",
            "is_staff": "on",
            "is_superuser": "on",
            "is_active": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 302  # saved: what may change did
    crowd.refresh_from_db()
    assert (crowd.username, crowd.is_staff, crowd.is_superuser) == (made["username"], False, False)
    assert crowd.first_name == "Crowd"
    assert ProjectAccount.objects.get(user=crowd).project == world["a"]


def test_a_personal_username_cannot_take_a_project_accounts_form(world):
    invitation = invitation_create(project=world["b"], created_by=world["users"]["blead"])

    for name in ("a/crowd", "a／crowd", "a∕crowd"):
        with pytest.raises(ApplicationError) as info:
            invitation_accept(token=invitation.token, username=name, password="a long pass 123")
        assert info.value.field == "username", name
