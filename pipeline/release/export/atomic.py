"""Atomic, hashed file writing.

A file written through :func:`atomic_writer` appears at its final path complete
or not at all: the bytes go to a temporary file in the same folder (same file
system, so ``os.replace`` is atomic), which is flushed and fsynced before it
replaces the target; the folder is fsynced afterwards so that the rename itself
survives a crash. If the writer raises (or the process is killed), the target
keeps its previous content (or stays absent) and the temporary file is removed
(or, after a kill, left as a hidden ``.<name>.*.tmp`` that no reader expects).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


class HashingWriter:
    """Sink that writes text (encoded to UTF-8) or bytes in large blocks and hashes the bytes written."""

    def __init__(self, raw: IO[bytes], *, buffer_size: int = 1 << 20) -> None:
        self._raw = raw
        self._parts: list[bytes] = []
        self._pending = 0
        self._buffer_size = buffer_size
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8"))

    def write_bytes(self, data: bytes) -> None:
        self._parts.append(data)
        self._pending += len(data)
        if self._pending >= self._buffer_size:
            self.flush()

    def flush(self) -> None:
        if not self._parts:
            return
        block = b"".join(self._parts)
        self._raw.write(block)
        self.sha256.update(block)
        self.size += len(block)
        self._parts.clear()
        self._pending = 0


def _fsync_dir(folder: Path) -> None:
    # Directories cannot be opened on every platform (Windows); durability of
    # the rename is best effort there.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[HashingWriter]:
    """Yield a :class:`HashingWriter`; on success the bytes replace ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as raw:
            writer = HashingWriter(raw)
            yield writer
            writer.flush()
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
