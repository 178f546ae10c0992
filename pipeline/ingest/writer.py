"""Batch writing for the importer, optionally on a background thread.

Validation is Python work (JSON, candidates, image decode) and writing mostly waits on
PostgreSQL, so the importer hands full batches to one writer thread and keeps validating
meanwhile (a queue of one batch bounds the memory). The thread has its own database
connection, so it is only used when the caller is not inside a transaction: rows written
on another connection would not be part of the caller's transaction (and a test's
uncommitted project would be invisible to it). Inside a transaction batches are written
inline, with the same results.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from django.db import connection

from annotation.models import Project
from annotation.services.screens import ScreenBatchResult, ScreenData, screen_create_batch

_DONE = None


class BatchWriter:
    """``submit(batch)`` then ``close()``; results accumulate in ``created / already_present / failed``.

    ``failed`` holds ``(pair name, reason)``. ``on_written(n)`` is called after each batch write
    (on the writer thread when threaded). An unexpected error on the thread is re-raised by
    the next ``submit`` or by ``close``.
    """

    def __init__(self, *, project: Project, on_written: Callable[[int], None] | None = None) -> None:
        self.project = project
        self.on_written = on_written
        self.created: list[str] = []
        self.already_present: list[str] = []
        self.failed: list[tuple[str, str]] = []
        self.threaded = not connection.in_atomic_block
        self._error: BaseException | None = None
        self._queue: queue.Queue[list[ScreenData] | None] = queue.Queue(maxsize=1)
        self._thread: threading.Thread | None = None
        if self.threaded:
            self._thread = threading.Thread(target=self._loop, name="import-writer", daemon=True)
            self._thread.start()

    def submit(self, batch: list[ScreenData]) -> None:
        self._raise_if_failed()
        if not batch:
            return
        if self._thread is None:
            self._write(batch)
        else:
            self._queue.put(batch)

    def close(self) -> None:
        if self._thread is not None:
            self._queue.put(_DONE)
            self._thread.join()
            self._thread = None
        self._raise_if_failed()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _write(self, batch: list[ScreenData]) -> None:
        result: ScreenBatchResult = screen_create_batch(project=self.project, screens=batch)
        names = {s.rico_id: s.name for s in batch}
        self.created.extend(result.created)
        self.already_present.extend(result.already_present)
        self.failed.extend((names[rico_id], reason) for rico_id, reason in result.failed)
        if self.on_written:
            self.on_written(len(batch))

    def _loop(self) -> None:
        try:
            while (batch := self._queue.get()) is not _DONE:
                if self._error is None:  # after an error, drain without writing
                    try:
                        self._write(batch)
                    except BaseException as exc:  # handed to the importing thread
                        self._error = exc
        finally:
            connection.close()
