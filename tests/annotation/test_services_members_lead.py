"""annotation.services.members: adding people, invitations, roles, removal and API tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import Assignment, AssignmentStatus, Invitation, Membership, ScreenState
from annotation.services.members import (
    invitation_accept,
    invitation_create,
    invitation_revoke,
    member_add,
    members_import_csv,
    membership_remove,
    membership_update,
    token_rotate,
)
from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_member_add_creates_an_account_or_adds_an_existing_one(project):
    # a new account gets a password that logs in, and a token
    new = member_add(project=project, username="nina", email="nina@example.org", in_answer_pool=True)
    user = get_user_model().objects.get(username="nina")
    assert new["created"] and user.check_password(new["password"]) and user.email == "nina@example.org"
    assert Token.objects.get(user=user).key == new["token"]
    # an account of another project joins with its own password
    other = UserFactory(username="olga")
    MembershipFactory(project=ProjectFactory(slug="other"), user=other)
    added = member_add(project=project, username="olga", role="reviewer")
    assert added["password"] == "" and not added["created"]
    assert get_user_model().objects.get(username="olga").check_password(PASSWORD)
    assert Membership.objects.get(project=project, user=other).role == "reviewer"
    with pytest.raises(ApplicationError, match="already a member"):
        member_add(project=project, username="olga")
    with pytest.raises(ApplicationError) as info:
        member_add(project=project, username="x", role="boss")
    assert info.value.field == "role"


def test_csv_reports_bad_rows_and_keeps_good_ones(project):
    result = members_import_csv(project=project, text="email\na@example.org\n\nb c\nd,not-an-email\ne\n")
    assert [m["username"] for m in result["added"]] == ["a@example.org", "e"]
    assert [(e["line"], e["message"][:20]) for e in result["errors"]] == [
        (4, "A username is 1 to 1"),
        (5, "'not-an-email' is no"),
    ]


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
