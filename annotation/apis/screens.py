"""Screen API: one screen with its candidates, its screenshot, its pre-filter overlay and its
whole view hierarchy (every shown node).

Who may use it: members of the project (any role) and site admins. Anonymous callers
get 403; users who are not members get 404 (the project's existence does not leak).
"""

from __future__ import annotations

import hashlib
import mimetypes
from typing import Any

from django.http import FileResponse, HttpResponse, HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.permissions import IsAuthenticated, project_get_for_member
from annotation.selectors.screens import screen_device_width, screen_get, screen_payload, screen_vh_nodes
from annotation.services.overlays import screen_overlay_ensure

# Private: the bytes are permission-checked, so no shared cache may keep them. Screenshots and
# overlays never change after import, so the browser may keep them for a day.
IMAGE_CACHE_CONTROL = "private, max-age=86400"


class CandidateOutputSerializer(serializers.Serializer):
    vh_index = serializers.IntegerField(help_text="pre-order index of the node in the VH (the release's vh_index)")
    bounds = serializers.ListField(
        child=serializers.IntegerField(), min_length=4, max_length=4, help_text="[left, top, right, bottom] pixels"
    )
    text = serializers.CharField(help_text="the node's text, else its content-desc, else empty")
    type = serializers.CharField(help_text="text, image, button, checkbox, webview or other")
    class_name = serializers.CharField()


class ScreenOutputSerializer(serializers.Serializer):
    """Documents ``annotation.selectors.screens.screen_payload`` (the one wire shape of a screen)."""

    rico_id = serializers.CharField()
    app = serializers.CharField(help_text="Android package name")
    image_url = serializers.CharField(help_text="the screenshot (api-screen-image)")
    overlay_url = serializers.CharField(help_text="the screenshot with every candidate outlined (api-screen-overlay)")
    vh_url = serializers.CharField(help_text="every shown VH node, containers too (api-screen-vh)")
    width = serializers.IntegerField(help_text="screenshot width in pixels")
    height = serializers.IntegerField(help_text="screenshot height in pixels")
    candidates = CandidateOutputSerializer(many=True, help_text="visible VH leaves, by vh_index")


class VHNodeOutputSerializer(serializers.Serializer):
    vh_index = serializers.IntegerField(help_text="pre-order index of the node in the VH")
    parent_index = serializers.IntegerField(help_text="vh_index of its parent (-1: the root); it may be hidden")
    bounds = serializers.ListField(
        child=serializers.IntegerField(), min_length=4, max_length=4, help_text="[left, top, right, bottom] pixels"
    )
    class_name = serializers.CharField()
    text = serializers.CharField(
        help_text="its text, else its content-desc, else (a leaf) the text of its hidden descendants"
    )
    leaf = serializers.BooleanField(help_text="no shown descendant: the node is a candidate")


class ScreenVHOutputSerializer(serializers.Serializer):
    """Documents ``annotation.selectors.screens.screen_vh_nodes``."""

    rico_id = serializers.CharField()
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    nodes = VHNodeOutputSerializer(many=True, help_text="every shown node (visible, with area on the screenshot)")


ERRORS: dict[int, Any] = {
    403: OpenApiResponse(ErrorSerializer, description="not logged in"),
    404: OpenApiResponse(ErrorSerializer, description="no such screen, or not a member of the project"),
}


def _stream(*, request: Request, storage_name: str, storage: Any, etag_source: str) -> HttpResponseBase:
    """Stream a stored file (works with S3: no local path needed) with validators for revalidation."""
    etag = '"' + hashlib.sha256(etag_source.encode()).hexdigest()[:32] + '"'
    if etag in request.headers.get("If-None-Match", ""):
        response: HttpResponseBase = HttpResponse(status=304)
    else:
        content_type = mimetypes.guess_type(storage_name)[0] or "application/octet-stream"
        response = FileResponse(storage.open(storage_name, "rb"), content_type=content_type)
    response["ETag"] = etag
    response["Cache-Control"] = IMAGE_CACHE_CONTROL
    response["X-Content-Type-Options"] = "nosniff"
    return response


class ScreenDetailApi(APIView):
    """``GET /api/projects/<slug>/screens/<rico_id>/``: the screen and its candidates.

    Members of the project only. Three queries whatever the number of candidates
    (project, screen, candidates).
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="screen_retrieve",
        summary="A screen with its candidate elements",
        responses={200: ScreenOutputSerializer, **ERRORS},
        tags=["screens"],
    )
    def get(self, request: Request, slug: str, rico_id: str) -> Response:
        project = project_get_for_member(user=request.user, slug=slug)
        screen = screen_get(project=project, rico_id=rico_id)
        # The selector's dict is the wire shape; the serializer above documents it.
        return Response(screen_payload(screen=screen))


class ScreenImageApi(APIView):
    """``GET /api/projects/<slug>/screens/<rico_id>/image/``: the screenshot bytes.

    Members of the project only. Streamed from storage; ``ETag`` + private caching.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="screen_image",
        summary="The screenshot",
        # the importer takes .jpg and .png screenshots: these are the two types the bytes come as
        responses={
            (200, "image/png"): OpenApiTypes.BINARY,
            (200, "image/jpeg"): OpenApiTypes.BINARY,
            304: None,
            **ERRORS,
        },
        tags=["screens"],
    )
    def get(self, request: Request, slug: str, rico_id: str) -> HttpResponseBase:
        project = project_get_for_member(user=request.user, slug=slug)
        screen = screen_get(project=project, rico_id=rico_id)
        return _stream(
            request=request,
            storage_name=screen.image.name or "",
            storage=screen.image.storage,
            etag_source=f"image:{screen.content_sha256}:{screen.image.name}",
        )


class ScreenOverlayApi(APIView):
    """``GET /api/projects/<slug>/screens/<rico_id>/overlay/``: the pre-filter overlay (JPEG).

    Members of the project only. Rendered on the first request and cached in storage
    (see ``screen_overlay_ensure``); later requests stream the cached file.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="screen_overlay",
        summary="The screenshot with every candidate box outlined and labelled",
        responses={(200, "image/jpeg"): OpenApiTypes.BINARY, 304: None, **ERRORS},
        tags=["screens"],
    )
    def get(self, request: Request, slug: str, rico_id: str) -> HttpResponseBase:
        project = project_get_for_member(user=request.user, slug=slug)
        screen = screen_get(project=project, rico_id=rico_id)
        name = screen_overlay_ensure(screen=screen)
        return _stream(request=request, storage_name=name, storage=screen.overlay.storage, etag_source=name)


class ScreenVHApi(APIView):
    """``GET /api/projects/<slug>/screens/<rico_id>/vh/``: every shown node of the screen's VH
    (containers and leaves) in screenshot pixels, for drawing the whole hierarchy.

    Members of the project only. Three queries (project, screen with its VH; plus the session's
    own). The VH never changes after import: ``ETag`` + private caching, and a matching
    ``If-None-Match`` answers 304 without walking the VH again.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="screen_vh",
        summary="Every shown node of the screen's view hierarchy",
        responses={200: ScreenVHOutputSerializer, 304: None, **ERRORS},
        tags=["screens"],
    )
    def get(self, request: Request, slug: str, rico_id: str) -> HttpResponseBase:
        project = project_get_for_member(user=request.user, slug=slug)
        screen = screen_get(project=project, rico_id=rico_id)
        # The device width is part of the key: a screen imported before its own device size was
        # recorded falls back to the project's, which a lead may change.
        source = f"vh:{screen.content_sha256}:{screen_device_width(screen=screen)}:{screen.width}x{screen.height}"
        etag = '"' + hashlib.sha256(source.encode()).hexdigest()[:32] + '"'
        response: HttpResponseBase
        if etag in request.headers.get("If-None-Match", ""):
            response = HttpResponse(status=304)
        else:
            response = Response(screen_vh_nodes(screen=screen))
        response["ETag"] = etag
        response["Cache-Control"] = IMAGE_CACHE_CONTROL
        return response
