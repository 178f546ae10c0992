"""The API's documentation pages: Swagger UI and ReDoc, from drf-spectacular-sidecar's files.

drf-spectacular's views with two changes. ``OPTIONS`` answers as on any Django view (an empty 200 naming
the allowed methods): DRF's metadata answer went through the pages' HTML renderer, which has no template
for it, and gave everyone a 500. And the pages run under the Content-Security-Policy: Swagger UI's start
script is a request of its own (drf-spectacular's split view), the pages' inline styles carry the nonce,
and the only relaxation is the one the bundles need (``DOCS_CSP``).
"""

from __future__ import annotations

from typing import Any

from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from django.http import HttpRequest, HttpResponseBase
from django.utils.decorators import method_decorator
from django.views import View
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

# Swagger UI draws its icons from data: URLs in its stylesheet.
DOCS_CSP = {"img-src": ["data:"]}
# ReDoc's bundle also adds a <style> while it loads, before any nonce can reach it, and runs its search in a
# worker made from a blob: URL. The page shows only our own schema. Its footer logo, from Redocly's CDN,
# stays blocked (ReDoc hides the image when it fails to load).
REDOC_CSP = {**DOCS_CSP, "style-src-elem": [SELF, UNSAFE_INLINE], "worker-src": ["blob:"]}


def options_like_django(view: View, request: HttpRequest) -> HttpResponseBase:
    """An empty 200 with ``Allow``: Django's own ``OPTIONS`` answer."""
    return View.options(view, request)


@method_decorator(csp_update(DOCS_CSP), name="dispatch")
class ApiDocsView(SpectacularSwaggerSplitView):
    template_name = "annotation/api_docs/swagger_ui.html"

    def options(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:  # type: ignore[override]
        return options_like_django(self, request)


@method_decorator(csp_update(REDOC_CSP), name="dispatch")
class ApiRedocView(SpectacularRedocView):
    template_name = "annotation/api_docs/redoc.html"

    def options(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:  # type: ignore[override]
        return options_like_django(self, request)
