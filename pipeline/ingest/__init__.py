"""RICO import: read pairs from a source, validate each in memory, write in batches.

The one entry point is ``import_screens``; the ``import_rico`` command and the web upload
job (a Celery task) both call it. Conventions and caps: ``docs/import.md``.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from annotation.exceptions import ApplicationError
from annotation.models import Project, Screen
from annotation.services.screens import ScreenData

from .sources import ImportCaps, Pair, ReadError, Source, StoragePrefix, open_source
from .validate import Rejected, content_sha256, image_check, prepare_screen
from .writer import BatchWriter

logger = logging.getLogger(__name__)

__all__ = ["BATCH_SIZE", "ImportSummary", "StoragePrefix", "import_screens"]

# Screens per write transaction: large enough for bulk_create to pay off, small enough
# that one batch of images (~200 x 300 KB) stays modest in memory.
BATCH_SIZE = 200
# ... or fewer when their image + VH bytes reach this: real RICO VHs are ~220 KB of
# pretty-printed JSON, and a batch lives in up to three places (being built, queued, written).
BATCH_MAX_BYTES = 16 * 1024 * 1024
# progress() is called at least every this many pairs (and after every batch write).
PROGRESS_EVERY = 25
# Images decoded ahead of the VH parsing, on this many threads.
IMAGE_THREADS = 2
IMAGE_WINDOW = 8


@dataclass
class ImportSummary:
    """What one import did.

    ``imported``: ids written now; ``already_present``: ids the project already had with
    the same content (nothing written); ``rejected``: ``(pair name, one-line reason)``.
    """

    imported: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """``{"imported": n, "already_present": n, "rejected": [{"name", "reason"}], "imported_ids": [...]}``."""
        return {
            "imported": len(self.imported),
            "already_present": len(self.already_present),
            "rejected": [{"name": name, "reason": reason} for name, reason in self.rejected],
            "imported_ids": list(self.imported),
        }


def import_screens(
    *,
    project: Project,
    source: Path | str | IO[bytes] | StoragePrefix,
    device_size: tuple[int, int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ImportSummary:
    """Import the RICO pairs of ``source`` into ``project``; return what happened.

    ``source``: a local folder, a local ``.zip`` path, a seekable binary zip stream (e.g. an
    uploaded file opened from storage) or ``StoragePrefix("some/prefix/")`` (pairs under a
    prefix of the default storage). Flat layout ``<id>.jpg|png`` + ``<id>.json``, or RICO's
    trace layout ``<app>/trace_<n>/screenshots/<k>.jpg`` + ``view_hierarchies/<k>.json``.

    ``device_size``: the VH device space ``(width, height)``; default the project's
    (RICO: 1440x2560). Each screen records the one it was read in (``Screen.device_width``,
    turned for a landscape screen). ``progress(done, total)`` is called as pairs are processed (every
    ``PROGRESS_EVERY`` pairs and when a batch is handed to the writer; the last call,
    ``done == total``, comes after everything is written).

    Contract:
    * Idempotent: a re-run imports nothing twice (ids already present are reported, unchanged).
    * A rejected pair never aborts the run and never leaves a half-imported screen: each
      screen commits with its candidates (see ``screen_create_batch``), in batches of
      ``BATCH_SIZE`` (or ``BATCH_MAX_BYTES``) per transaction; a crash mid-run keeps the
      batches already committed, and a re-run only hashes the screens already present.
    * Images are decoded ahead on ``IMAGE_THREADS`` threads while VHs are parsed here.
      Outside a transaction, batches are written by one background thread while the next
      batch is validated (``writer.BatchWriter``); inside one, inline. Same results.
    * ``rejected`` is in pair-name order.
    * ``ApplicationError`` (nothing imported) only for a source that cannot be used at all:
      missing path, not a folder or zip, a zip with more entries than the cap, a bad
      ``device_size``.
    Takes no row locks.
    """
    device = device_size or (project.device_width, project.device_height)
    if len(device) != 2 or min(device) <= 0:
        raise ApplicationError(f"Invalid device size {device!r}.", field="device_size")
    caps = ImportCaps.from_settings()
    summary = ImportSummary()
    with open_source(source, caps) as src:
        _run(
            project=project,
            src=src,
            device=(int(device[0]), int(device[1])),
            caps=caps,
            summary=summary,
            progress=progress,
        )
    return summary


def _run(
    *,
    project: Project,
    src: Source,
    device: tuple[int, int],
    caps: ImportCaps,
    summary: ImportSummary,
    progress: Callable[[int, int], None] | None,
) -> None:
    pairs = src.pairs()
    total = len(pairs)
    seen: dict[str, str] = {}  # rico_id -> pair name, to refuse duplicates within one source
    # Ids already imported (one query): a re-run or a resumed run only hashes their files
    # instead of validating them again. screen_create_batch re-checks under the race.
    present = dict(Screen.objects.filter(project=project).values_list("rico_id", "content_sha256"))
    state = _Progress(total=total, callback=progress)
    batch: list[ScreenData] = []
    batch_bytes = 0
    # Pairs read, whose image is being decoded on the image threads (Pillow releases the GIL)
    # while this thread parses the VHs of the pairs before them.
    window: deque[tuple[Pair, bytes, bytes, Future[tuple[str, int, int]]]] = deque()
    writer = BatchWriter(project=project)
    images = ThreadPoolExecutor(max_workers=IMAGE_THREADS, thread_name_prefix="import-image")

    def finish_oldest() -> None:
        nonlocal batch, batch_bytes
        pair, vh_bytes, image_bytes, future = window.popleft()
        try:
            batch.append(
                prepare_screen(
                    pair=pair,
                    vh_bytes=vh_bytes,
                    image_bytes=image_bytes,
                    device=device,
                    caps=caps,
                    image_future=future,
                )
            )
            batch_bytes += len(vh_bytes) + len(image_bytes)
        except Rejected as exc:
            summary.rejected.append((pair.name, str(exc)))
        except Exception as exc:  # a bug must not abort the run: reject this pair, keep the trace
            logger.exception("unexpected error validating %s", pair.name)
            summary.rejected.append((pair.name, f"unexpected error: {type(exc).__name__}: {exc}"[:300]))
        if len(batch) >= BATCH_SIZE or batch_bytes >= BATCH_MAX_BYTES:
            writer.submit(batch)
            batch, batch_bytes = [], 0
            state.finished(force=True)
        else:
            state.finished()

    try:
        state.start()
        for pair in pairs:
            reason = _reject_reason_before_read(pair, seen)
            if reason:
                summary.rejected.append((pair.name, reason))
                state.finished()
                continue
            seen[pair.rico_id] = pair.name
            try:
                vh_bytes = src.read(pair.vh_path, max_bytes=caps.max_json_bytes)
                image_bytes = src.read(pair.image_path, max_bytes=caps.max_image_bytes)
            except ReadError as exc:
                summary.rejected.append((pair.name, str(exc)))
                state.finished()
                continue
            if pair.rico_id in present:
                _check_present(pair, present[pair.rico_id], image_bytes, vh_bytes, summary)
                state.finished()
                continue
            future = images.submit(image_check, image_bytes, max_pixels=caps.max_image_pixels)
            window.append((pair, vh_bytes, image_bytes, future))
            if len(window) > IMAGE_WINDOW:
                finish_oldest()
        while window:
            finish_oldest()
        writer.submit(batch)
    finally:
        images.shutdown(wait=True, cancel_futures=True)
        writer.close()
        summary.imported.extend(writer.created)
        summary.already_present.extend(writer.already_present)
        summary.rejected.extend(writer.failed)
        summary.rejected.sort(key=lambda item: item[0])  # in name order, like the pairs
    state.done()


class _Progress:
    """Calls ``progress(done, total)`` every ``PROGRESS_EVERY`` finished pairs and when forced."""

    def __init__(self, *, total: int, callback: Callable[[int, int], None] | None) -> None:
        self.total, self.callback, self.count = total, callback, 0

    def start(self) -> None:
        if self.callback:
            self.callback(0, self.total)

    def finished(self, *, force: bool = False) -> None:
        self.count += 1
        if self.callback and (force or self.count % PROGRESS_EVERY == 0):
            self.callback(self.count, self.total)

    def done(self) -> None:
        if self.callback:
            self.callback(self.total, self.total)


def _check_present(pair: Pair, sha: str, image_bytes: bytes, vh_bytes: bytes, summary: ImportSummary) -> None:
    if content_sha256(image_bytes=image_bytes, vh_bytes=vh_bytes) == sha:
        summary.already_present.append(pair.rico_id)
    else:
        summary.rejected.append(
            (pair.name, f"id {pair.rico_id} is already in the project with different content; not replaced")
        )


def _reject_reason_before_read(pair: Pair, seen: dict[str, str]) -> str:
    if pair.problem:
        return pair.problem
    if pair.rico_id in seen:
        return f"duplicate id {pair.rico_id} in this source (also {seen[pair.rico_id]})"
    return ""
