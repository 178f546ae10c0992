"""Export a project's release to a folder (the command and the background job both call this)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotation.db import session
from annotation.exceptions import ApplicationError
from annotation.models import Project, Question, QuestionState

from .manifest import manifest_build, manifest_write
from .records import SPLITS
from .writers import EXPORT_FORMATS, Progress

FORMATS = tuple(EXPORT_FORMATS)


def release_question_count(*, project: Project) -> int:
    return Question.objects.filter(screen__project=project, screen__split__in=SPLITS, state=QuestionState.KEPT).count()


def release_export(
    *, project: Project, out_dir: Path, fmt: str = "screenqa", progress: Progress | None = None
) -> dict[str, Any]:
    """Write the kept questions of ``project`` to ``out_dir`` in ``fmt``; return the manifest.

    Read-only on the database, from one snapshot (``annotation.db.session.read_only_snapshot``); streams (memory
    does not grow with the project). Every file is replaced atomically, data files first
    and ``manifest.json`` last, so a manifest whose hashes match the files marks a complete
    export. Idempotent: unchanged data gives
    byte-identical files.
    """
    if fmt not in EXPORT_FORMATS:
        raise ApplicationError(f"Unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}.", field="format")
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ApplicationError(f"{out_dir} exists and is not a folder.", field="out")
    with session.read_only_snapshot():
        written = EXPORT_FORMATS[fmt].write(project=project, out_dir=out_dir, progress=progress)
        manifest = manifest_build(project=project, fmt=fmt, written=written)
    manifest_write(out_dir=out_dir, manifest=manifest)
    return manifest
