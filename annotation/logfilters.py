"""Logging filters (``LOGGING`` in ``annotation.settings.base``)."""

from __future__ import annotations

import logging


class RefusalsWithoutTraceback(logging.Filter):
    """A 403 or 404 is the product answering as designed (a member opening a lead's page, a
    project they are not in): ``django.request`` still logs one line for it, without the traceback
    of the ``PermissionDenied`` / ``Http404`` that produced it. Server errors keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "django.request" and getattr(record, "status_code", None) in (403, 404):
            record.exc_info = None
            record.exc_text = None
        return True
