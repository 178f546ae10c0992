"""Template context shared by every page."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest


def csp_nonce(request: HttpRequest) -> dict[str, Any]:
    """``csp_nonce``: this response's Content-Security-Policy nonce, for the few inline ``<script>`` and
    ``<style>`` blocks. The name is the one Django 6's own CSP support and django-htmx's ``htmx_script``
    use. Lazy: a nonce is made, and named in the header, only when a template prints it."""
    return {"csp_nonce": getattr(request, "csp_nonce", "")}
