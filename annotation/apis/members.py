"""Members API: what the lead's members page does, for scripts (the settings: ``annotation.apis.settings``).

Who may use it: leads of the project and site admins. Annotators and reviewers of the project get
403, users who are not members 404, anonymous callers 403 (the one exception handler shapes every
error). The pages (``frontend.views.manage``) call the same services.

Credentials (docs/leads.md, "Accounts and credentials"): ``POST members/`` creates a *project account*
``<slug>/<name>`` and answers its password and token once; the token and password endpoints work on the
project's own project accounts only (a personal account's are its owner's: 403). A person with an account
of their own joins by an invitation (``POST invitations/`` with their ``username``), which answers the
same whether that account exists or not. Bulk creation is a job (``pipeline.apis.members``).
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
from annotation.exceptions import ApplicationError
from annotation.models import Membership, Project, Role
from annotation.permissions import IsAuthenticated, project_get_for_lead
from annotation.services.members import (
    INVITATION_DAYS_DEFAULT,
    INVITATION_DAYS_MAX,
    invitation_create,
    member_add,
    member_kinds,
    membership_remove,
    membership_update,
    project_account_password_reset,
    project_account_token,
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


ACCOUNT_KINDS = [("project", "project account: its leads manage its password and token"), ("personal", "personal")]


class MemberOutputSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=Role.choices)
    in_answer_pool = serializers.BooleanField()
    account = serializers.ChoiceField(
        choices=ACCOUNT_KINDS, help_text="project: created by this project's leads; personal: its owner's own"
    )
    guidelines_seen_at = serializers.DateTimeField(allow_null=True)


def _members_out(project: Project, members: Any, *, many: bool) -> Any:
    kinds = member_kinds(project=project)
    rows = list(members) if many else [members]
    for member in rows:
        member.account = kinds.get(member.user_id, "personal")
    return MemberOutputSerializer(rows if many else rows[0], many=many).data


class MemberCreatedSerializer(serializers.Serializer):
    username = serializers.CharField(help_text="the new project account's username: <project slug>/<name>")
    password = serializers.CharField(help_text="shown once")
    token = serializers.CharField(help_text="its API token; works in this project only")
    role = serializers.CharField()
    in_answer_pool = serializers.BooleanField()
    created = serializers.BooleanField()


class MemberListApi(APIView):
    """List the members, or create one project account (``<slug>/<username>``, for this project only)
    with a password and API token, answered once. A person with an account of their own joins by an
    invitation instead."""

    permission_classes = [IsAuthenticated]

    class MemberAddInSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150, help_text="the name in this project: <slug>/<username>")
        # No default: "" is not an e-mail address, so a schema stating it as the default is invalid
        # OpenAPI (openapi-spec-validator); a body without it gets the service's "".
        email = serializers.EmailField(required=False, allow_blank=True)
        role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)
        in_answer_pool = serializers.BooleanField(default=False)

    @extend_schema(tags=TAGS, responses={200: MemberOutputSerializer(many=True), **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        members = Membership.objects.filter(project=project).select_related("user").order_by("user__username")
        return Response(_members_out(project, members, many=True))

    @extend_schema(tags=TAGS, request=MemberAddInSerializer, responses={201: MemberCreatedSerializer, **ERRORS})
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = _validated(self.MemberAddInSerializer(data=request.data))
        created = member_add(project=project, created_by=request.user, **data)
        return Response(created, status=status.HTTP_201_CREATED)


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
        return Response(_members_out(project, membership, many=False))

    @extend_schema(tags=TAGS, responses={200: MemberRemovedSerializer, **ERRORS})
    def delete(self, request: Request, slug: str, user_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response(membership_remove(project=project, user_id=user_id))


class MemberTokenRotateApi(APIView):
    """Replace a project account's API token (the old one stops working at once). A personal account's
    token is its owner's alone: 403."""

    permission_classes = [IsAuthenticated]

    class TokenSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(
        tags=TAGS,
        request=None,
        responses={
            200: TokenSerializer,
            **ERRORS,
            403: OpenApiResponse(ErrorSerializer, description="not a lead, or a personal account (not yours)"),
        },
    )
    def post(self, request: Request, slug: str, user_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response({"token": project_account_token(project=project, user_id=user_id, rotate=True).key})


class MemberPasswordResetApi(APIView):
    """Give a project account a new password, answered once (its sessions end). A personal account's
    password is its owner's alone: 403."""

    permission_classes = [IsAuthenticated]

    class PasswordSerializer(serializers.Serializer):
        username = serializers.CharField()
        password = serializers.CharField(help_text="shown once")

    @extend_schema(
        tags=TAGS,
        request=None,
        responses={
            200: PasswordSerializer,
            **ERRORS,
            403: OpenApiResponse(ErrorSerializer, description="not a lead, or a personal account (not yours)"),
        },
    )
    def post(self, request: Request, slug: str, user_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response(project_account_password_reset(project=project, user_id=user_id))


class InvitationCreateApi(APIView):
    """Create an invitation link: one person joins the project before it expires, with a new account they
    create on the link's page or with their own account. With ``username`` it is for that account only and
    waits on its home page; the answer is the same whether that account exists or not."""

    permission_classes = [IsAuthenticated]

    class InvitationInSerializer(serializers.Serializer):
        email = serializers.EmailField(required=False, allow_blank=True)  # no default: as MemberAddInSerializer
        username = serializers.CharField(
            required=False, allow_blank=True, default="", max_length=150, help_text="for this existing account only"
        )
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
