"""Domain errors. Services raise these; the API handler maps them to HTTP codes."""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A request that the domain refuses (HTTP 400 unless a subclass says otherwise)."""

    def __init__(self, message: str, *, field: str | None = None, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra or {}


class ConflictError(ApplicationError):
    """Lease and state conflicts (HTTP 409)."""


class NotFoundError(ApplicationError):
    """Something the caller may not see or that does not exist (HTTP 404)."""


class PermissionDeniedError(ApplicationError):
    """Seen, but not the caller's to change (HTTP 403)."""


class GoneError(ApplicationError):
    """Something that existed and is gone for good, e.g. credentials already downloaded once (HTTP 410)."""
