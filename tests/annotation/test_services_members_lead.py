"""annotation.services.members: adding people, invitations, roles, removal and API tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.exceptions import ApplicationError, NotFoundError, PermissionDeniedError
from annotation.models import Assignment, AssignmentStatus, Invitation, Membership, ProjectAccount, ScreenState
from annotation.services.members import (
    BULK_MAX_ROWS,
    invitation_accept,
    invitation_create,
    invitation_decline,
    invitation_join,
    invitation_revoke,
    invitations_waiting,
    member_add,
    member_job_request,
    members_create,
    membership_remove,
    membership_update,
    project_account_password_reset,
    project_account_token,
    token_rotate,
)
from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_member_add_creates_a_project_account_in_the_projects_namespace(project):
    # a new account gets a password that logs in, and a token; its name is <slug>/<name>
    new = member_add(project=project, username="nina", email="nina@example.org", in_answer_pool=True)
    user = get_user_model().objects.get(username="demo/nina")
    assert new["created"] and new["username"] == "demo/nina" and user.check_password(new["password"])
    assert user.email == "nina@example.org" and Token.objects.get(user=user).key == new["token"]
    assert ProjectAccount.objects.get(user=user).project == project
    assert Membership.objects.get(project=project, user=user).in_answer_pool
    # the name once more (any case, or with the prefix) is this project's own: refused, naming the field
    for again in ("nina", "NINA", "demo/nina"):
        with pytest.raises(ApplicationError, match="already exists in this project") as info:
            member_add(project=project, username=again)
        assert info.value.field == "username"
    with pytest.raises(ApplicationError) as info:
        member_add(project=project, username="x", role="boss")
    assert info.value.field == "role"


def test_adding_an_existing_accounts_name_never_touches_or_reveals_it(project):
    # given personal accounts outside the project: the site admin, and a member of another project
    admin = UserFactory(username="admin", is_superuser=True, is_staff=True)
    olga = UserFactory(username="olga")
    MembershipFactory(project=ProjectFactory(slug="other"), user=olga)
    before = {u.pk: (u.password, Token.objects.get_or_create(user=u)[0].key) for u in (admin, olga)}
    # when the lead "adds" them by name, look-alikes included
    made = [member_add(project=project, username=name)["username"] for name in ("admin", "olga", "ｏｌｇａ２")]
    # then new project accounts are made, with names nobody else can have, and the real ones are untouched
    assert made == ["demo/admin", "demo/olga", "demo/olga2"]
    for user in (admin, olga):
        user.refresh_from_db()
        assert (user.password, Token.objects.get(user=user).key) == before[user.pk]
        assert not Membership.objects.filter(project=project, user=user).exists()


def test_a_look_alike_name_is_normalised_before_it_is_checked(project):
    member_add(project=project, username="admin")
    # fullwidth letters are "admin" once stored: the same name, a 400 and not the unique index's 500
    with pytest.raises(ApplicationError, match="already exists") as info:
        member_add(project=project, username="ａｄｍｉｎ")
    assert info.value.field == "username"
    # a fullwidth solidus becomes "/" under NFKC: not a way into another project's namespace
    with pytest.raises(ApplicationError) as info:
        member_add(project=project, username="other／ann")
    assert info.value.field == "username"
    assert get_user_model().objects.filter(username__startswith="other").count() == 0


def test_csv_requests_are_all_or_nothing_and_name_every_bad_row(project):
    member_add(project=project, username="taken")
    text = "email\na@example.org\n\nb c\nd,not-an-email\ne\nE\nTAKEN\nｅ\n"
    with pytest.raises(ApplicationError) as info:
        member_job_request(project=project, csv_text=text)
    rows = [(e["line"], e["message"][:22]) for e in info.value.extra["rows"]]
    assert rows == [
        (4, "A username is 1 to 150"),
        (5, "'not-an-email' is not "),
        (7, "The same name as line "),
        (8, "demo/TAKEN already exi"),
        (9, "The same name as line "),
    ]
    assert info.value.field == "csv" and "5 row(s) cannot be added, so none was" in info.value.message
    assert get_user_model().objects.filter(username__startswith="demo/").count() == 1  # only "taken"
    # a clean request is the job's input, nothing created yet
    request = member_job_request(project=project, csv_text="name,email\nann,ann@example.org\nbob\n", role="reviewer")
    assert request == {
        "names": [[2, "demo/ann", "ann@example.org"], [3, "demo/bob", ""]],
        "role": "reviewer",
        "in_answer_pool": False,
    }
    assert get_user_model().objects.filter(username__startswith="demo/").count() == 1


def test_csv_malformed_rows_and_limits(project):
    for text, fragment in [
        ("a,b,c\n", "At most two columns"),
        ("username\n\n", "no names"),
        ("\n".join(f"n{i}" for i in range(BULK_MAX_ROWS + 1)), "At most 10,000 rows"),
    ]:
        with pytest.raises(ApplicationError, match=fragment) as info:
            member_job_request(project=project, csv_text=text)
        assert info.value.field == "csv"
    with pytest.raises(ApplicationError) as info:
        member_job_request(project=project, count=0)
    assert info.value.field == "count"


def test_count_requests_continue_after_the_projects_own_names(project):
    created = members_create(project=project, count=2, role="reviewer")
    assert [m["username"] for m in created] == ["demo/reviewer-1", "demo/reviewer-2"]
    request = member_job_request(project=project, count=2, role="reviewer")
    assert [name for _, name, _ in request["names"]] == ["demo/reviewer-3", "demo/reviewer-4"]


def test_update_and_remove_keep_a_lead(project, lead, annotator):
    assert membership_update(project=project, user_id=annotator.pk, role="lead").role == "lead"
    # with two leads, one may step down
    assert membership_update(project=project, user_id=lead.pk, role="annotator", in_answer_pool=False).role == (
        "annotator"
    )
    with pytest.raises(ApplicationError, match="needs a lead"):
        membership_remove(project=project, user_id=annotator.pk)
    with pytest.raises(NotFoundError):
        membership_update(project=project, user_id=UserFactory().pk, role="lead")


def test_remove_releases_the_members_leases_in_this_project_only(project, lead, annotator):
    other_project = ProjectFactory(slug="other")
    MembershipFactory(project=other_project, user=annotator)
    live = timezone.now() + timedelta(minutes=10)
    mine = Assignment.objects.create(
        project=project,
        stage="prefilter",
        screen=ScreenFactory(project=project),
        annotator=annotator,
        lease_expires_at=live,
    )
    elsewhere = Assignment.objects.create(
        project=other_project,
        stage="prefilter",
        screen=ScreenFactory(project=other_project, state=ScreenState.PREFILTER),
        annotator=annotator,
        lease_expires_at=live,
    )
    result = membership_remove(project=project, user_id=annotator.pk)
    assert result == {"username": "annie", "released": 1}
    assert Assignment.objects.get(pk=mine.pk).status == AssignmentStatus.RELEASED
    assert Assignment.objects.get(pk=elsewhere.pk).status == AssignmentStatus.LEASED


def test_token_rotate_replaces_the_key(annotator):
    old = Token.objects.create(user=annotator).key
    new = token_rotate(user=annotator).key
    assert new != old and list(Token.objects.filter(user=annotator).values_list("key", flat=True)) == [new]


class TestInvitations:
    def test_accepting_joins_once(self, project, lead):
        invitation = invitation_create(project=project, created_by=lead, role="reviewer", in_answer_pool=True)
        user = invitation_accept(token=invitation.token, username="ivy", password="a long pass 123")
        assert user.check_password("a long pass 123")
        member = Membership.objects.get(project=project, user=user)
        assert (member.role, member.in_answer_pool) == ("reviewer", True)
        invitation.refresh_from_db()
        assert invitation.accepted_by == user and invitation.accepted_at is not None
        with pytest.raises(ApplicationError, match="already used"):
            invitation_accept(token=invitation.token, username="ivy2", password="a long pass 123")

    def test_expired_and_revoked_links_refuse(self, project, lead):
        invitation = invitation_create(project=project, created_by=lead, days=1)
        Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
        with pytest.raises(ApplicationError, match="expired"):
            invitation_accept(token=invitation.token, username="late", password="a long pass 123")
        revoked = invitation_revoke(
            project=project, invitation_id=invitation_create(project=project, created_by=lead).pk
        )
        with pytest.raises(ApplicationError, match="withdrawn"):
            invitation_accept(token=revoked.token, username="late", password="a long pass 123")
        assert not get_user_model().objects.filter(username="late").exists()
        with pytest.raises(NotFoundError):
            invitation_accept(token="nope", username="late", password="a long pass 123")
        with pytest.raises(NotFoundError):
            invitation_revoke(project=ProjectFactory(slug="other"), invitation_id=invitation.pk)

    def test_a_link_lasts_one_to_sixty_days(self, project, lead):
        for days in (0, 61, "7"):
            with pytest.raises(ApplicationError) as info:
                invitation_create(project=project, created_by=lead, days=days)
            assert info.value.field == "days"
        invitation = invitation_create(project=project, created_by=lead, days=60)
        assert timedelta(days=59) < invitation.expires_at - timezone.now() <= timedelta(days=60)

    def test_weak_password_and_taken_username_refuse(self, project, lead, annotator):
        invitation = invitation_create(project=project, created_by=lead)
        with pytest.raises(ApplicationError) as info:
            invitation_accept(token=invitation.token, username="ANNIE", password="a long pass 123")
        assert info.value.field == "username"
        with pytest.raises(ApplicationError) as info:
            invitation_accept(token=invitation.token, username="ivy", password="ivy")
        assert info.value.field == "password"
        assert Invitation.objects.get(pk=invitation.pk).accepted_at is None

    def test_a_look_alike_of_a_taken_username_is_a_clear_refusal(self, project, lead):
        UserFactory(username="admin", is_superuser=True)
        invitation = invitation_create(project=project, created_by=lead)
        for look_alike in ("ａｄｍｉｎ", "ADMIN", "Ａdmin"):
            with pytest.raises(ApplicationError, match="taken") as info:
                invitation_accept(token=invitation.token, username=look_alike, password="a long pass 123")
            assert info.value.field == "username"
        with pytest.raises(ApplicationError) as info:  # "/" is a project account's, even as a look-alike
            invitation_accept(token=invitation.token, username="demo／ivy", password="a long pass 123")
        assert info.value.field == "username"
        assert Invitation.objects.get(pk=invitation.pk).accepted_at is None

    def test_an_existing_account_joins_with_no_new_credential(self, project, lead):
        olga = UserFactory(username="olga")
        key = Token.objects.create(user=olga).key
        invitation = invitation_create(project=project, created_by=lead, username="OLGA", role="reviewer")
        assert invitation.username == "OLGA"
        assert [i.pk for i in invitations_waiting(user=olga)] == [invitation.pk]
        member = invitation_join(token=invitation.token, user=olga)
        assert (member.role, member.project) == ("reviewer", project)
        assert Token.objects.get(user=olga).key == key and olga.check_password(PASSWORD)
        assert invitations_waiting(user=olga) == []
        with pytest.raises(ApplicationError, match="already used"):
            invitation_join(token=invitation.token, user=olga)

    def test_an_addressed_invitation_is_for_that_account_only(self, project, lead):
        olga, eve = UserFactory(username="olga"), UserFactory(username="eve")
        invitation = invitation_create(project=project, created_by=lead, username="olga")
        assert invitations_waiting(user=eve) == []
        with pytest.raises(ApplicationError, match="another account"):
            invitation_join(token=invitation.token, user=eve)
        with pytest.raises(ApplicationError, match="existing account"):  # not by making a new account either
            invitation_accept(token=invitation.token, username="olga2", password="a long pass 123")
        with pytest.raises(NotFoundError):
            invitation_decline(token=invitation.token, user=eve)
        invitation_decline(token=invitation.token, user=olga)
        with pytest.raises(ApplicationError, match="declined"):
            invitation_join(token=invitation.token, user=olga)
        assert not Membership.objects.filter(project=project).exclude(user=lead).exists()

    def test_a_project_account_never_joins_another_project(self, project, lead):
        crowd = get_user_model().objects.get(username=member_add(project=project, username="c1")["username"])
        other = ProjectFactory(slug="other")
        with pytest.raises(ApplicationError, match="project account") as info:
            invitation_create(project=other, created_by=lead, username=crowd.username)
        assert info.value.field == "username"
        with pytest.raises(ApplicationError, match="project account"):
            invitation_join(token=invitation_create(project=other, created_by=lead).token, user=crowd)
        assert list(Membership.objects.filter(user=crowd).values_list("project__slug", flat=True)) == ["demo"]

    def test_inviting_reveals_nothing_about_the_account(self, project, lead):
        UserFactory(username="olga")
        real = invitation_create(project=project, created_by=lead, username="olga")
        ghost = invitation_create(project=project, created_by=lead, username="nobody-by-that-name")
        assert {f.name for f in Invitation._meta.fields if getattr(real, f.name) is None} == {
            f.name for f in Invitation._meta.fields if getattr(ghost, f.name) is None
        }


class TestProjectAccountCredentials:
    def test_the_lead_shows_and_replaces_a_project_accounts_token_and_password(self, project, lead):
        made = member_add(project=project, username="c1")
        crowd = get_user_model().objects.get(username=made["username"])
        assert project_account_token(project=project, user_id=crowd.pk).key == made["token"]
        new = project_account_token(project=project, user_id=crowd.pk, rotate=True).key
        assert new != made["token"] and Token.objects.get(user=crowd).key == new
        reset = project_account_password_reset(project=project, user_id=crowd.pk)
        crowd.refresh_from_db()
        assert crowd.check_password(reset["password"]) and not crowd.check_password(made["password"])

    def test_a_personal_accounts_credentials_are_its_owners_alone(self, project, lead):
        admin = UserFactory(username="root", is_superuser=True, is_staff=True)
        olga = UserFactory(username="olga")
        for person in (admin, olga, lead):
            invitation_join(token=invitation_create(project=project, created_by=lead).token, user=person) if (
                person is not lead
            ) else None
            key = Token.objects.get_or_create(user=person)[0].key
            for call in (
                lambda p=person: project_account_token(project=project, user_id=p.pk),
                lambda p=person: project_account_token(project=project, user_id=p.pk, rotate=True),
                lambda p=person: project_account_password_reset(project=project, user_id=p.pk),
            ):
                with pytest.raises(PermissionDeniedError, match="personal account"):
                    call()
            person.refresh_from_db()
            assert Token.objects.get(user=person).key == key and person.check_password(PASSWORD)
        with pytest.raises(NotFoundError):
            project_account_token(project=project, user_id=UserFactory(username="stranger").pk)

    def test_a_project_account_made_staff_or_placed_elsewhere_is_no_longer_the_leads(self, project, lead):
        crowd = get_user_model().objects.get(username=member_add(project=project, username="c1")["username"])
        get_user_model().objects.filter(pk=crowd.pk).update(is_staff=True)  # behind the product's back
        with pytest.raises(PermissionDeniedError):
            project_account_token(project=project, user_id=crowd.pk)
        get_user_model().objects.filter(pk=crowd.pk).update(is_staff=False)
        Membership.objects.create(project=ProjectFactory(slug="other"), user=crowd)  # behind its back too
        with pytest.raises(PermissionDeniedError):
            project_account_password_reset(project=project, user_id=crowd.pk)
