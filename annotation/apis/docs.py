"""The API's documentation page: Swagger UI, from drf-spectacular-sidecar's files (ReDoc was dropped: its
bundle fetched its logo from Redocly's CDN; ``/api/redoc/`` redirects here).

drf-spectacular's views with two changes. ``OPTIONS`` answers as on any Django view (an empty 200 naming
the allowed methods): DRF's metadata answer went through the pages' HTML renderer, which has no template
for it, and gave everyone a 500. And the pages run under the Content-Security-Policy: Swagger UI's start
script is a request of its own (drf-spectacular's split view), the pages' inline styles carry the nonce,
and the only relaxation is the one the bundles need (``DOCS_CSP``).
"""

from __future__ import annotations

from typing import Any

from csp.decorators import csp_update
from django.http import HttpRequest, HttpResponseBase
from django.utils.decorators import method_decorator
from django.views import View
from drf_spectacular.views import SpectacularSwaggerSplitView

# Swagger UI draws its icons from data: URLs in its stylesheet.
DOCS_CSP = {"img-src": ["data:"]}


def options_like_django(view: View, request: HttpRequest) -> HttpResponseBase:
    """An empty 200 with ``Allow``: Django's own ``OPTIONS`` answer."""
    return View.options(view, request)


@method_decorator(csp_update(DOCS_CSP), name="dispatch")
class ApiDocsView(SpectacularSwaggerSplitView):
    template_name = "annotation/api_docs/swagger_ui.html"

    def options(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:  # type: ignore[override]
        return options_like_django(self, request)
