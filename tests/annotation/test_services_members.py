"""Removing a member (issue 12 §2): their open leases go back to the queue, everywhere a
membership is deleted (the service, the admin's delete page and its bulk action), and their
token is refused on the assignment from then on."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, AssignmentStatus, Membership, ScreenState
from annotation.services.members import member_remove
from pipeline.engine import assignment_next
from tests.conftest import login
from tests.factories import UserFactory
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


def _token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def test_member_remove_releases_open_leases_and_keeps_the_rest(project):
    # given a member holding a lease, with a draft, and an already submitted assignment elsewhere
    gone = member(project, "gone")
    stay = member(project, "stay")
    screens(project, 3, state=ScreenState.PREFILTER)
    held = assignment_next(project=project, user=gone, stage="prefilter")
    Assignment.objects.filter(pk=held.pk).update(draft={"note": "kept"})
    theirs = assignment_next(project=project, user=stay, stage="prefilter")
    # when the member is removed
    assert member_remove(project_id=project.pk, user_id=gone.pk) == 1
    # then the lease is released (draft kept), the membership gone, others untouched
    held.refresh_from_db()
    theirs.refresh_from_db()
    assert held.status == AssignmentStatus.RELEASED and held.draft == {"note": "kept"}
    assert theirs.status == AssignmentStatus.LEASED
    assert not Membership.objects.filter(project=project, user=gone).exists()
    # and the unit is open to somebody else again
    other = member(project, "other")
    assert assignment_next(project=project, user=other, stage="prefilter").screen_id == held.screen_id
    # idempotent
    assert member_remove(project_id=project.pk, user_id=gone.pk) == 0


def test_removed_member_token_is_refused_on_every_assignment_endpoint(project):
    gone = member(project, "gone")
    screens(project, 1, state=ScreenState.PREFILTER)
    held = assignment_next(project=project, user=gone, stage="prefilter")
    client = _token_client(gone)
    member_remove(project_id=project.pk, user_id=gone.pk)
    base = f"/api/assignments/{held.pk}/"
    assert client.get(base).status_code == 404
    assert client.get(base + "draft/").status_code == 404
    assert client.put(base + "draft/", {"draft": {"note": "x"}}, format="json").status_code == 404
    for action, body in [
        ("extend/", {}),
        ("submit/", {"non_english_app": False, "vh_out_of_sync": False}),
        ("skip/", {"reason": "x"}),
        ("release/", {}),
    ]:
        assert client.post(base + action, body, format="json").status_code == 404, action
    held.refresh_from_db()
    assert held.status == AssignmentStatus.RELEASED and held.draft in (None, {})


def test_admin_delete_page_and_bulk_action_release_leases(client, project):
    admin_user = UserFactory(username="root", is_staff=True, is_superuser=True)
    one, two = member(project, "one"), member(project, "two")
    screens(project, 2, state=ScreenState.PREFILTER)
    a1 = assignment_next(project=project, user=one, stage="prefilter")
    a2 = assignment_next(project=project, user=two, stage="prefilter")
    login(client, admin_user)
    # the delete page of one membership
    m1 = Membership.objects.get(project=project, user=one)
    response = client.post(f"/admin/annotation/membership/{m1.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    a1.refresh_from_db()
    assert a1.status == AssignmentStatus.RELEASED
    # the changelist's bulk "delete selected"
    m2 = Membership.objects.get(project=project, user=two)
    response = client.post(
        "/admin/annotation/membership/", {"action": "delete_selected", "_selected_action": [m2.pk], "post": "yes"}
    )
    assert response.status_code == 302
    a2.refresh_from_db()
    assert a2.status == AssignmentStatus.RELEASED
    assert not Membership.objects.filter(project=project, user__in=[one, two]).exists()
    # a membership is never moved to another user (that would skip the release)
    stay = member(project, "stay")
    m3 = Membership.objects.get(project=project, user=stay)
    page = client.get(f"/admin/annotation/membership/{m3.pk}/change/").content.decode()
    assert 'name="user"' not in page and 'name="project"' not in page
