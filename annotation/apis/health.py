"""Liveness/readiness probe for load balancers and the container HEALTHCHECK. Anyone may call it."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from annotation.db import session


@require_safe  # GET and HEAD: a probe changes nothing
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        session.ping()
    except Exception as exc:  # report, don't crash: the probe's job is to say "not ready"
        return JsonResponse({"status": "error", "database": str(exc)[:200]}, status=503)
    return JsonResponse({"status": "ok"})
