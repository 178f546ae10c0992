"""The registry of job kinds: what a kind is (``JobKind``) and where the runner finds it (``job_kind_get``).

The kinds themselves, each with its work function, are one table one layer up (``pipeline.kinds``): a work
function lives with its own stage of the product (ingest, release, quality, assist, members), which all
use this package's lifecycle, so the lifecycle cannot import them. ``pipeline.kinds`` installs its table
here when Django starts (``pipeline.apps``), in every process: web, worker and management commands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from annotation.exceptions import ApplicationError
from annotation.models import Job

from .lifecycle import Outcome


@dataclass(frozen=True)
class JobKind:
    name: str
    model: type[Job]
    work: Callable[..., Outcome]
    fields: dict[str, Any] = field(default_factory=dict)  # the columns that make a row of ``model`` this kind


KINDS: dict[str, JobKind] = {}  # the installed kinds, by name


def job_kinds_install(kinds: Iterable[JobKind]) -> None:
    """Register ``kinds`` (idempotent). Two different kinds under one name are refused."""
    for kind in kinds:
        if KINDS.setdefault(kind.name, kind) != kind:
            raise ValueError(f"Two job kinds are named {kind.name!r}.")


def job_kind_get(name: str) -> JobKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ApplicationError(f"Unknown job kind {name!r}.", field="kind") from None
