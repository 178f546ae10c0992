"""Members, credentials and invitations on the site's pages (frontend/views/members.py): project accounts
one by one and in bulk (a job, with one credentials download), a project account's token and password,
personal accounts' credentials kept from the lead, invitations to new and existing accounts, and one's own
account page."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.models import Assignment, AssignmentStatus, Invitation, MemberJob, Membership, ScreenState
from annotation.services.members import invitation_create, invitation_join, member_add
from tests.conftest import login, login_request
from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


def html(response) -> str:
    return response.content.decode()


@pytest.fixture
def leased(project, annotator):
    screen = ScreenFactory(project=project, state=ScreenState.QUESTIONS_1)
    return Assignment.objects.create(
        project=project,
        stage="questions-1",
        screen=screen,
        annotator=annotator,
        lease_expires_at=timezone.now() + timedelta(minutes=30),
    )


def logs_in(username: str, password: str) -> bool:
    return Client().login(request=login_request(), username=username, password=password)


class TestProjectAccounts:
    def test_add_one_shows_password_and_token_once(self, client, lead, project):
        login(client, lead)
        response = client.post(
            "/projects/demo/members/add/", {"username": "nina", "role": "annotator", "in_answer_pool": "on"}
        )
        assert response.status_code == 200
        member = Membership.objects.get(project=project, user__username="demo/nina")
        assert member.in_answer_pool and member.role == "annotator"
        assert Token.objects.get(user=member.user).key in html(response)
        assert 'id="created"' not in html(client.get("/projects/demo/members/"))  # shown once

    def test_bad_and_look_alike_names_are_shown_not_500(self, client, lead, project):
        login(client, lead)
        member_add(project=project, username="admin")
        for name, why in [("has space", "no spaces"), ("ａｄｍｉｎ", "already exists"), ("x／y", "no spaces")]:
            response = client.post("/projects/demo/members/add/", {"username": name, "role": "annotator"})
            assert response.status_code == 400 and why in html(response), name

    def test_the_lead_shows_and_replaces_a_project_accounts_token_and_password(self, client, lead, project):
        made = member_add(project=project, username="c1")
        crowd = get_user_model().objects.get(username=made["username"])
        login(client, lead)
        shown = client.post(f"/projects/demo/members/{crowd.pk}/token/", {"action": "show"})
        assert made["token"] in html(shown)
        rotated = client.post(f"/projects/demo/members/{crowd.pk}/token/", {"action": "rotate"})
        new = Token.objects.get(user=crowd).key
        assert new != made["token"] and new in html(rotated)
        client.logout()
        progress = "/api/projects/demo/progress/"
        assert client.get(progress, HTTP_AUTHORIZATION=f"Token {made['token']}").status_code in (401, 403)
        assert client.get(progress, HTTP_AUTHORIZATION=f"Token {new}").status_code == 200
        login(client, lead)
        reset = client.post(f"/projects/demo/members/{crowd.pk}/token/", {"action": "password"})
        password = reset.context["shown_password"]["password"]
        assert password in html(reset)
        assert logs_in("demo/c1", password) and not logs_in("demo/c1", made["password"])

    def test_a_personal_accounts_credentials_are_not_the_leads(self, client, lead, project, annotator):
        # the annotator fixture, a site admin who joined by an invitation, and the lead themself
        admin = UserFactory(username="root", is_superuser=True, is_staff=True)
        invitation_join(token=invitation_create(project=project, created_by=lead).token, user=admin)
        keys = {u.pk: Token.objects.get_or_create(user=u)[0].key for u in (annotator, admin, lead)}
        login(client, lead)
        page = html(client.get("/projects/demo/members/"))
        assert page.count("personal account") >= 3 and "Show token" not in page
        for user in (annotator, admin, lead):
            for action in ("show", "rotate", "password"):
                response = client.post(f"/projects/demo/members/{user.pk}/token/", {"action": action})
                assert response.status_code == 403, (user.username, action)
                assert keys[user.pk] not in html(response)
            user.refresh_from_db()
            assert Token.objects.get(user=user).key == keys[user.pk] and user.check_password(PASSWORD)

    def test_unknown_member_is_404(self, client, lead, outsider):
        login(client, lead)
        assert client.post(f"/projects/demo/members/{outsider.pk}/", {"role": "lead"}).status_code == 404
        assert client.post(f"/projects/demo/members/{outsider.pk}/token/", {"action": "show"}).status_code == 404


class TestBulk:
    def test_a_bad_row_refuses_the_whole_csv_and_every_bad_row_is_named(self, client, lead, project, annotator):
        member_add(project=project, username="taken")
        login(client, lead)
        text = "username,email\nada\nbob@example.org\ncy,cy@example.org\nbad name\ntaken\nada\nx,y,z\n"
        response = client.post("/projects/demo/members/bulk/", {"csv": text, "role": "annotator"})
        assert response.status_code == 400
        page = html(response)
        assert "At most two columns" in page and "Line 8" in page  # the malformed line first
        response = client.post(
            "/projects/demo/members/bulk/", {"csv": text.replace("x,y,z\n", ""), "role": "annotator"}
        )
        page = html(response)
        assert response.status_code == 400 and "Nothing was created" in page
        for line, why in [(5, "no spaces"), (6, "already exists"), (7, "same name as line 2")]:
            assert f"Line {line}" in page and why in page, (line, why)
        assert set(Membership.objects.filter(project=project).values_list("user__username", flat=True)) == {
            "annie",
            "leo",
            "demo/taken",
        }
        assert not MemberJob.objects.exists()

    def test_bulk_is_a_job_whose_credentials_download_once(
        self, client, lead, project, django_capture_on_commit_callbacks
    ):
        login(client, lead)
        text = "ada\nbob@example.org\ncy,cy@example.org\n"
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post("/projects/demo/members/bulk/", {"csv": text, "role": "reviewer"})
        job = MemberJob.objects.get()
        assert response.status_code == 302 and response["Location"] == f"/projects/demo/members/jobs/{job.pk}/"
        page = client.get(response["Location"])
        assert job.total == 3 and "Download the credentials (once)" in html(page)
        assert Membership.objects.filter(project=project, role="reviewer").count() == 3
        # the one download: every account, in the CSV's order, with a password that logs in
        url = f"/projects/demo/members/jobs/{job.pk}/credentials/"
        download = client.post(url)
        assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")
        assert download["Cache-Control"] == "no-store"
        rows = list(csv.DictReader(io.StringIO(download.content.decode())))
        assert [r["username"] for r in rows] == ["demo/ada", "demo/bob@example.org", "demo/cy"]
        assert all(logs_in(r["username"], r["password"]) for r in rows)
        assert [Token.objects.get(user__username=r["username"]).key for r in rows] == [r["token"] for r in rows]
        # then never again: the passwords are gone from the server
        again = client.post(url)
        assert again.status_code == 410 and "downloaded" in html(again)
        assert "Download the credentials (once)" not in html(client.get(f"/projects/demo/members/jobs/{job.pk}/"))

    def test_by_count_and_the_empty_form(self, client, lead, project, django_capture_on_commit_callbacks):
        login(client, lead)
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post("/projects/demo/members/bulk/", {"count": "2", "role": "reviewer"})
        assert response.status_code == 302
        names = Membership.objects.filter(project=project, role="reviewer").values_list("user__username", flat=True)
        assert set(names) == {"demo/reviewer-1", "demo/reviewer-2"}
        response = client.post("/projects/demo/members/bulk/", {"role": "annotator"})
        assert response.status_code == 400 and "Paste a CSV or give a count" in html(response)

    def test_the_download_waits_for_the_job_and_is_the_jobs_projects_leads(self, client, lead, project, annotator):
        job = MemberJob.objects.create(project=project, request={"names": [], "role": "annotator"})
        login(client, lead)
        assert client.post(f"/projects/demo/members/jobs/{job.pk}/credentials/").status_code == 409
        other = ProjectFactory(slug="other")
        assert client.get(f"/projects/other/members/jobs/{job.pk}/").status_code == 404
        xlead = UserFactory(username="xena")
        MembershipFactory(project=other, user=xlead, role="lead")
        login(client, xlead)
        assert client.get(f"/projects/demo/members/jobs/{job.pk}/").status_code == 404
        assert client.post(f"/projects/demo/members/jobs/{job.pk}/credentials/").status_code == 404
        login(client, annotator)
        assert client.post(f"/projects/demo/members/jobs/{job.pk}/credentials/").status_code == 403


class TestRolesAndRemoval:
    def test_role_pool_and_remove_after_confirmation(self, client, lead, project, annotator, leased):
        login(client, lead)
        client.post(f"/projects/demo/members/{annotator.pk}/", {"role": "reviewer"})
        member = Membership.objects.get(project=project, user=annotator)
        assert (member.role, member.in_answer_pool) == ("reviewer", False)
        client.post(f"/projects/demo/members/{annotator.pk}/", {"role": "reviewer", "in_answer_pool": "on"})
        assert Membership.objects.get(pk=member.pk).in_answer_pool
        unconfirmed = client.post(f"/projects/demo/members/{annotator.pk}/remove/")
        assert unconfirmed.status_code == 400 and Membership.objects.filter(pk=member.pk).exists()
        response = client.post(f"/projects/demo/members/{annotator.pk}/remove/", {"confirm": "yes"})
        assert response.status_code == 302
        assert not Membership.objects.filter(project=project, user=annotator).exists()
        assert Assignment.objects.get(pk=leased.pk).status == AssignmentStatus.RELEASED

    def test_last_lead_stays(self, client, lead, project):
        login(client, lead)
        response = client.post(f"/projects/demo/members/{lead.pk}/", {"role": "annotator"})
        assert response.status_code == 400 and "needs a lead" in html(response)
        response = client.post(f"/projects/demo/members/{lead.pk}/remove/", {"confirm": "yes"})
        assert response.status_code == 400
        assert Membership.objects.get(project=project, user=lead).role == "lead"


class TestInvitations:
    def test_lead_invites_and_the_person_joins_with_a_new_account(self, client, lead, project):
        login(client, lead)
        response = client.post(
            "/projects/demo/invitations/", {"role": "annotator", "days": "3", "in_answer_pool": "on"}
        )
        invitation = Invitation.objects.get(project=project)
        assert f"/invitations/{invitation.token}/" in html(response)
        client.logout()
        url = f"/invitations/{invitation.token}/"
        assert client.get(url).status_code == 200
        response = client.post(
            url, {"username": "ivy", "password": "a long pass 123", "password_again": "a long pass 123"}
        )
        assert response.status_code == 302 and response["Location"] == "/projects/demo/guidelines/"
        member = Membership.objects.get(project=project, user__username="ivy")
        assert member.in_answer_pool and member.role == "annotator"
        # the new member is logged in and sees the guidelines, welcomed once
        first = client.get("/projects/demo/guidelines/")
        assert 'id="welcome"' in html(first)
        assert 'id="welcome"' not in html(client.get("/projects/demo/guidelines/"))
        # the link is used up
        assert client.get(url).status_code == 410

    def test_an_existing_account_accepts_from_its_home_page(self, client, lead, project):
        olga = UserFactory(username="olga")
        MembershipFactory(project=ProjectFactory(slug="other", name="Other"), user=olga)
        key = Token.objects.create(user=olga).key
        login(client, lead)
        response = client.post("/projects/demo/invitations/", {"username": "olga", "role": "reviewer", "days": "3"})
        assert response.status_code == 200
        ghost = client.post("/projects/demo/invitations/", {"username": "nobody", "role": "reviewer", "days": "3"})
        # the lead's answer is the same whether the account exists or not: a link
        assert ghost.status_code == response.status_code == 200
        assert 'data-testid="invitation-url"' in html(ghost) and 'data-testid="invitation-url"' in html(response)
        login(client, olga)
        home = html(client.get("/"))
        assert 'id="invitations"' in home and "Demo" in home
        invitation = Invitation.objects.get(username="olga")
        joined = client.post(f"/invitations/{invitation.token}/", {"action": "join"})
        assert joined.status_code == 302
        assert Membership.objects.get(project=project, user=olga).role == "reviewer"
        assert Token.objects.get(user=olga).key == key  # no credential made or changed
        assert 'id="invitations"' not in html(client.get("/"))

    def test_declining_and_another_account_cannot_use_it(self, client, lead, project):
        UserFactory(username="olga")
        eve = UserFactory(username="eve")
        invitation = invitation_create(project=project, created_by=lead, username="olga")
        login(client, eve)
        assert 'id="invitations"' not in html(client.get("/"))
        response = client.post(f"/invitations/{invitation.token}/", {"action": "join"})
        assert response.status_code == 400 and "another account" in html(response)
        assert client.post(f"/invitations/{invitation.token}/decline/").status_code == 404
        assert not Membership.objects.filter(project=project, user=eve).exists()
        login(client, get_user_model().objects.get(username="olga"))
        assert client.post(f"/invitations/{invitation.token}/decline/").status_code == 302
        assert client.get(f"/invitations/{invitation.token}/").status_code == 410

    def test_expired_revoked_and_unknown_links(self, client, lead, project):
        expired = invitation_create(project=project, created_by=lead, days=1)
        Invitation.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        response = client.get(f"/invitations/{expired.token}/")
        assert response.status_code == 410 and "expired" in html(response)
        response = client.post(
            f"/invitations/{expired.token}/", {"username": "late", "password": "x" * 12, "password_again": "x" * 12}
        )
        assert response.status_code == 410
        assert not Membership.objects.filter(user__username="late").exists()
        revoked = invitation_create(project=project, created_by=lead)
        login(client, lead)
        client.post(f"/projects/demo/invitations/{revoked.pk}/revoke/")
        client.logout()
        assert client.get(f"/invitations/{revoked.token}/").status_code == 410
        assert client.get("/invitations/nope/").status_code == 404

    def test_accept_errors_are_shown_never_a_500(self, client, lead, project, annotator):
        UserFactory(username="admin", is_superuser=True)
        invitation = invitation_create(project=project, created_by=lead)
        url = f"/invitations/{invitation.token}/"
        cases = [
            ({"username": "annie", "password": "a long pass 123", "password_again": "a long pass 123"}, "taken"),
            ({"username": "ａｄｍｉｎ", "password": "a long pass 123", "password_again": "a long pass 123"}, "taken"),
            ({"username": "new", "password": "a long pass 123", "password_again": "other"}, "differ"),
            ({"username": "new", "password": "123", "password_again": "123"}, "too short"),
        ]
        for data, message in cases:
            response = client.post(url, data)
            assert response.status_code == 400 and message in html(response), message
        assert Invitation.objects.get(pk=invitation.pk).accepted_at is None

    def test_bad_invitation_form(self, client, lead):
        login(client, lead)
        response = client.post("/projects/demo/invitations/", {"role": "boss", "days": "99"})
        assert response.status_code == 400 and "Select a valid choice" in html(response)


class TestOwnAccount:
    def test_a_person_shows_and_replaces_their_own_token(self, client, annotator):
        login(client, annotator)
        page = client.get("/account/")
        assert page.status_code == 200 and "personal account" in html(page)
        shown = client.post("/account/", {"action": "show"})
        key = Token.objects.get(user=annotator).key
        assert key in html(shown)
        replaced = client.post("/account/", {"action": "rotate"})
        new = Token.objects.get(user=annotator).key
        assert new != key and new in html(replaced)

    def test_changing_ones_password(self, client, annotator):
        login(client, annotator)
        response = client.post(
            "/account/password/",
            {"old_password": PASSWORD, "new_password1": "a fresh long pass 9", "new_password2": "a fresh long pass 9"},
        )
        assert response.status_code == 302
        assert logs_in("annie", "a fresh long pass 9")

    def test_anonymous_is_sent_to_log_in(self, client):
        for url in ("/account/", "/account/password/"):
            response = client.get(url)
            assert response.status_code == 302 and response["Location"].startswith("/login/")
