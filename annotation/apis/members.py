"""Members API: what the lead's members page does, for scripts (the settings: ``annotation.apis.settings``).

Who may use it: leads of the project and site admins. Annotators and reviewers of the project get
403, users who are not members 404, anonymous callers 403 (the one exception handler shapes every
error). The page (``frontend.views.manage``) calls the same services.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import Membership, Role
from annotation.permissions import IsAuthenticated, project_get_for_lead
from annotation.services.members import (
    INVITATION_DAYS_DEFAULT,
    INVITATION_DAYS_MAX,
    invitation_create,
    member_add,
    membership_remove,
    membership_update,
    token_rotate,
)

TAGS = ["members"]
ERRORS: dict[int, Any] = {
    400: OpenApiResponse(ErrorSerializer, description="bad input (the body says which field)"),
    403: OpenApiResponse(ErrorSerializer, description="not logged in, or not a lead of the project"),
    404: OpenApiResponse(ErrorSerializer, description="no such project or member, or not a member"),
}


def _validated(serializer: serializers.Serializer) -> dict[str, Any]:
    """The serializer's data, or the first problem as an ``ApplicationError`` (400 with its field)."""
    if not serializer.is_valid():
        field, messages = next(iter(serializer.errors.items()))
        message = messages[0] if isinstance(messages, list) else str(messages)
        raise ApplicationError(str(message), field=None if field == "non_field_errors" else field)
    return dict(serializer.validated_data)


class MemberOutputSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=Role.choices)
    in_answer_pool = serializers.BooleanField()
    guidelines_seen_at = serializers.DateTimeField(allow_null=True)


class MemberCreatedSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField(help_text="new accounts only (shown once); empty for an existing account")
    token = serializers.CharField()
    role = serializers.CharField()
    in_answer_pool = serializers.BooleanField()
    created = serializers.BooleanField()


class MemberListApi(APIView):
    """List the members, or add one person (a new account with a password and token, or an existing
    account that is not a member yet)."""

    permission_classes = [IsAuthenticated]

    class MemberAddInSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        email = serializers.EmailField(required=False, default="")
        role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)
        in_answer_pool = serializers.BooleanField(default=False)

    @extend_schema(tags=TAGS, responses={200: MemberOutputSerializer(many=True), **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        members = Membership.objects.filter(project=project).select_related("user").order_by("user__username")
        return Response(MemberOutputSerializer(members, many=True).data)

    @extend_schema(tags=TAGS, request=MemberAddInSerializer, responses={201: MemberCreatedSerializer, **ERRORS})
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = _validated(self.MemberAddInSerializer(data=request.data))
        return Response(member_add(project=project, **data), status=status.HTTP_201_CREATED)


class MemberDetailApi(APIView):
    """Change a member's role or answer pool, or remove them (their live leases go back to the
    queue). A project keeps at least one lead."""

    permission_classes = [IsAuthenticated]

    class MemberUpdateInSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=Role.choices, required=False)
        in_answer_pool = serializers.BooleanField(required=False)

    class MemberRemovedSerializer(serializers.Serializer):
        username = serializers.CharField()
        released = serializers.IntegerField(help_text="leases given back to the queue")

    @extend_schema(tags=TAGS, request=MemberUpdateInSerializer, responses={200: MemberOutputSerializer, **ERRORS})
    def patch(self, request: Request, slug: str, user_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = _validated(self.MemberUpdateInSerializer(data=request.data))
        membership = membership_update(project=project, user_id=user_id, **data)
        return Response(MemberOutputSerializer(membership).data)

    @extend_schema(tags=TAGS, responses={200: MemberRemovedSerializer, **ERRORS})
    def delete(self, request: Request, slug: str, user_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response(membership_remove(project=project, user_id=user_id))


class MemberTokenRotateApi(APIView):
    """Replace a member's API token (the old one stops working at once)."""

    permission_classes = [IsAuthenticated]

    class TokenSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(tags=TAGS, request=None, responses={200: TokenSerializer, **ERRORS})
    def post(self, request: Request, slug: str, user_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        membership = Membership.objects.select_related("user").filter(project=project, user_id=user_id).first()
        if membership is None:
            raise NotFoundError("No such member.")
        return Response({"token": token_rotate(user=membership.user).key})


class InvitationCreateApi(APIView):
    """Create an invitation link: one person chooses a username and password and joins the project
    before it expires."""

    permission_classes = [IsAuthenticated]

    class InvitationInSerializer(serializers.Serializer):
        email = serializers.EmailField(required=False, default="")
        role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)
        in_answer_pool = serializers.BooleanField(default=False)
        days = serializers.IntegerField(min_value=1, max_value=INVITATION_DAYS_MAX, default=INVITATION_DAYS_DEFAULT)

    class InvitationOutSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        url = serializers.CharField()
        expires_at = serializers.DateTimeField()

    @extend_schema(tags=TAGS, request=InvitationInSerializer, responses={201: InvitationOutSerializer, **ERRORS})
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = _validated(self.InvitationInSerializer(data=request.data))
        invitation = invitation_create(project=project, created_by=request.user, **data)
        # the page that accepts it (frontend's route, reversed by name: annotation never imports it)
        url = request.build_absolute_uri(reverse("frontend:invitation", kwargs={"token": invitation.token}))
        body = {"id": invitation.pk, "url": url, "expires_at": invitation.expires_at}
        return Response(self.InvitationOutSerializer(body).data, status=status.HTTP_201_CREATED)
