"""Safe readers of RICO pairs: a local folder, a zip (path or seekable stream), a storage prefix.

Every reader lists relative POSIX paths, ``pair_up`` turns them into ``Pair``s (one
convention for all readers), and ``read`` returns the bytes of one file with caps enforced
on the bytes ACTUALLY read (never on a header's claim):

* per file: ``MAX_JSON_BYTES`` / ``MAX_IMAGE_BYTES``;
* zip only: ``ZIP_MAX_ENTRIES`` (the archive is refused before anything is imported, and
  before its central directory is parsed: ``zip_entries_check``),
  ``ZIP_MAX_RATIO`` per entry (decompressed bytes <= ratio x max(compressed size, 1 KiB)) and
  ``ZIP_MAX_TOTAL_BYTES`` over the archive (once reached, every further pair is rejected).

A problem with one file is a ``ReadError`` (a one-line reason: that pair is rejected); a
problem with the whole source is an ``ApplicationError`` (nothing is imported).
"""

from __future__ import annotations

import os
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from django.core.files.storage import default_storage

from annotation.exceptions import ApplicationError

IMAGE_EXTENSIONS = frozenset({"jpg", "jpeg", "png", "gif", "bmp", "webp", "tif", "tiff"})
VH_EXTENSION = "json"
TRACE_IMAGE_DIR = "screenshots"
TRACE_VH_DIR = "view_hierarchies"
_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,255}$")
_CHUNK = 256 * 1024


@dataclass(frozen=True)
class StoragePrefix:
    """Pairs stored under ``prefix`` in the default storage (walked with ``listdir``; works on S3)."""

    prefix: str


@dataclass(frozen=True)
class ImportCaps:
    max_image_pixels: int
    max_image_bytes: int
    max_json_bytes: int
    max_json_depth: int
    zip_max_entries: int
    zip_max_total_bytes: int
    zip_max_ratio: int

    @classmethod
    def from_settings(cls) -> ImportCaps:
        from django.conf import settings

        conf = settings.SCREENQA_IMPORT
        return cls(
            max_image_pixels=int(conf["MAX_IMAGE_PIXELS"]),
            max_image_bytes=int(conf["MAX_IMAGE_BYTES"]),
            max_json_bytes=int(conf["MAX_JSON_BYTES"]),
            max_json_depth=int(conf["MAX_JSON_DEPTH"]),
            zip_max_entries=int(conf["ZIP_MAX_ENTRIES"]),
            zip_max_total_bytes=int(conf["ZIP_MAX_TOTAL_BYTES"]),
            zip_max_ratio=int(conf["ZIP_MAX_RATIO"]),
        )


class ReadError(Exception):
    """One file could not be read safely; ``str(error)`` is the one-line reason."""


@dataclass(frozen=True)
class Pair:
    """One screen in a source. ``problem`` set = rejected before reading (no image, unsafe path...).

    ``name`` is the pair's relative path without extension (what the summary reports);
    ``rico_id`` is the RICO id (flat layout) or ``<app>:trace_<n>:<k>`` (trace layout);
    ``app_package`` is set for the trace layout (taken from the path).
    """

    name: str
    rico_id: str = ""
    app_package: str = ""
    vh_path: str = ""
    image_path: str = ""
    problem: str = ""


def _ignored(path: str) -> bool:
    parts = path.split("/")
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


def pair_up(paths: Iterable[str]) -> list[Pair]:
    """Group relative POSIX file paths into pairs, sorted by name.

    Flat layout: ``[<dir>/]<id>.(jpg|png)`` + ``[<dir>/]<id>.json`` (same folder) -> id ``<id>``.
    Trace layout: ``<app>/trace_<n>/screenshots/<k>.<img>`` + ``<app>/trace_<n>/view_hierarchies/<k>.json``
    -> id ``<app>:trace_<n>:<k>``, app package ``<app>``. Other extensions, hidden files and
    ``__MACOSX`` are ignored. An image in a format other than JPEG/PNG still pairs (and is
    rejected by the image check with a clear reason).
    """
    groups: dict[tuple[str, str, str], dict[str, list[str]]] = {}
    for path in paths:
        if _ignored(path):
            continue
        pure = PurePosixPath(path)
        ext = pure.suffix.lower().lstrip(".")
        if ext != VH_EXTENSION and ext not in IMAGE_EXTENSIONS:
            continue
        kind = "vh" if ext == VH_EXTENSION else "image"
        parts = pure.parts
        if (
            len(parts) >= 4
            and parts[-3].startswith("trace_")
            and parts[-2] == (TRACE_VH_DIR if kind == "vh" else TRACE_IMAGE_DIR)
        ):
            key = ("trace", "/".join(parts[:-2]), pure.stem)
        else:
            key = ("flat", str(pure.parent) if str(pure.parent) != "." else "", pure.stem)
        groups.setdefault(key, {"vh": [], "image": []})[kind].append(path)

    pairs = []
    for (layout, folder, stem), files in groups.items():
        if layout == "trace":
            app, trace = folder.split("/")[-2:]
            name = f"{folder}/{stem}"
            rico_id, package = f"{app}:{trace}:{stem}", app
        else:
            name = f"{folder}/{stem}" if folder else stem
            rico_id, package = stem, ""
        vh, images = files["vh"], files["image"]
        problem = ""
        if not vh:
            problem = f"image {images[0]} has no JSON (expected {stem}.json)"
        elif not images:
            problem = f"JSON {vh[0]} has no image (expected {stem}.jpg or {stem}.png)"
        elif len(images) > 1 or len(vh) > 1:
            problem = f"several files for one screen: {', '.join(sorted(images + vh))}"
        elif not _ID_RE.match(rico_id):
            problem = f"id {rico_id!r} must be 1-255 letters, digits or . _ - :"
        pairs.append(
            Pair(
                name=name,
                rico_id=rico_id,
                app_package=package,
                vh_path=vh[0] if vh else "",
                image_path=images[0] if images else "",
                problem=problem,
            )
        )
    pairs.sort(key=lambda p: p.name)
    return pairs


def _read_capped(stream: IO[bytes], *, max_bytes: int, what: str) -> bytes:
    chunks = []
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, max_bytes + 1 - size))
        if not chunk:
            break
        size += len(chunk)
        if size > max_bytes:
            raise ReadError(f"{what} is larger than the cap of {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class Source:
    """A readable set of pairs. Use as a context manager; ``close`` releases files."""

    def pairs(self) -> list[Pair]:
        raise NotImplementedError

    def read(self, path: str, *, max_bytes: int) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        return None

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class FolderSource(Source):
    """A local folder, walked recursively (symlinked folders are not followed)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def pairs(self) -> list[Pair]:
        paths: list[str] = []
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel = Path(folder).relative_to(self.root)
            paths.extend((rel / f).as_posix() for f in files)
        return pair_up(paths)

    def read(self, path: str, *, max_bytes: int) -> bytes:
        try:
            with open(self.root / path, "rb") as fh:
                return _read_capped(fh, max_bytes=max_bytes, what=path)
        except OSError as exc:
            raise ReadError(f"cannot read {path}: {exc.strerror or exc}") from None


def unsafe_zip_name(name: str) -> bool:
    """True for entry names that escape the archive root: ``..`` parts, absolute or drive paths."""
    normal = name.replace("\\", "/")
    if normal.startswith("/") or re.match(r"^[A-Za-z]:", normal):
        return True
    return any(part == ".." for part in normal.split("/"))


_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_CENTRAL_ENTRY = b"PK\x01\x02"
_CENTRAL_ENTRY_SIZE = 46


def zip_entries_check(stream: IO[bytes], *, cap: int) -> int:
    """Refuse a zip with more than ``cap`` entries before ``zipfile`` parses its central
    directory (``zipfile`` builds an object per entry, about 0.7 KiB each: 600,000 empty entries
    in a 57 MB zip grew a worker by 400 MiB). Returns the number of entries.

    Reads the end-of-central-directory record (ZIP64's when the classic one overflows), refuses
    on its count, then walks the central directory header by header (in constant memory,
    stopping at ``cap + 1``) so that a record that lies about the count is refused too.
    ``ApplicationError`` on ``file``; the stream is left at its start.
    """
    try:
        stream.seek(0, os.SEEK_END)
        size = stream.tell()
        tail_size = min(size, _EOCD_SIZE + 0xFFFF)  # the record, then a comment of up to 64 KiB
        stream.seek(size - tail_size)
        tail = stream.read(tail_size)
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < _EOCD_SIZE:
            raise ApplicationError("Not a readable zip file (no end of central directory).", field="file")
        eocd_offset = size - tail_size + at
        (count, cd_size, cd_offset) = struct.unpack("<HII", tail[at + 10 : at + 20])
        if count == 0xFFFF or cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:
            stream.seek(max(eocd_offset - 20, 0))
            locator = stream.read(20)
            if locator[:4] != _ZIP64_LOCATOR:
                raise ApplicationError("Not a readable zip file (broken ZIP64 record).", field="file")
            (record_offset,) = struct.unpack("<Q", locator[8:16])
            stream.seek(record_offset)
            record = stream.read(56)
            if record[:4] != _ZIP64_EOCD or len(record) < 56:
                raise ApplicationError("Not a readable zip file (broken ZIP64 record).", field="file")
            (count, cd_size, cd_offset) = struct.unpack("<QQQ", record[32:56])
            eocd_offset = record_offset
        if count > cap:
            raise ApplicationError(f"The zip has {count:,} entries; the cap is {cap:,}.", field="file")
        # Data may precede the archive (a self-extractor): the directory ends where the record starts.
        start = eocd_offset - cd_size
        if start < 0:
            raise ApplicationError("Not a readable zip file (bad central directory).", field="file")
        stream.seek(start)
        seen = 0
        remaining = cd_size
        while remaining >= _CENTRAL_ENTRY_SIZE:
            header = stream.read(_CENTRAL_ENTRY_SIZE)
            if len(header) < _CENTRAL_ENTRY_SIZE or header[:4] != _CENTRAL_ENTRY:
                break  # zipfile reports a broken directory in its own words
            seen += 1
            if seen > cap:
                raise ApplicationError(f"The zip has more than {cap:,} entries (the cap).", field="file")
            name_len, extra_len, comment_len = struct.unpack("<HHH", header[28:34])
            variable = name_len + extra_len + comment_len
            stream.seek(variable, os.SEEK_CUR)
            remaining -= _CENTRAL_ENTRY_SIZE + variable
        return max(count, seen)
    finally:
        stream.seek(0)


class ZipSource(Source):
    """A zip archive (a path or a seekable binary stream); nothing is ever extracted to disk."""

    def __init__(self, stream: IO[bytes], caps: ImportCaps, *, owns_stream: bool = False) -> None:
        self.caps = caps
        self._stream = stream
        self._owns_stream = owns_stream
        try:
            zip_entries_check(stream, cap=caps.zip_max_entries)
        except ApplicationError as exc:
            self.close()
            raise ApplicationError(exc.message) from None
        except OSError as exc:
            self.close()
            raise ApplicationError(f"Not a readable zip file ({exc}).") from None
        try:
            self.zip = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            self.close()
            raise ApplicationError(f"Not a readable zip file ({exc}).") from None
        self.infos = [info for info in self.zip.infolist() if not info.is_dir()]
        self._by_name: dict[str, zipfile.ZipInfo] = {}
        self._total_read = 0

    def pairs(self) -> list[Pair]:
        safe, unsafe, duplicate = [], [], []
        for info in self.infos:
            if unsafe_zip_name(info.filename):
                unsafe.append(info.filename)
            elif info.filename in self._by_name:
                duplicate.append(info.filename)
            else:
                self._by_name[info.filename] = info
                safe.append(info.filename)
        pairs = pair_up(safe)
        pairs += [Pair(name=n, problem="unsafe path in zip (absolute or with ../); entry skipped") for n in unsafe]
        pairs += [Pair(name=n, problem="the zip holds this entry name twice; entry skipped") for n in duplicate]
        return pairs

    def read(self, path: str, *, max_bytes: int) -> bytes:
        info = self._by_name[path]
        if self._total_read >= self.caps.zip_max_total_bytes:
            raise ReadError(f"zip total uncompressed bytes cap ({self.caps.zip_max_total_bytes}) reached")
        ratio_cap = self.caps.zip_max_ratio * max(info.compress_size, 1024)
        limit = min(max_bytes, ratio_cap, self.caps.zip_max_total_bytes - self._total_read)
        chunks = []
        size = 0
        try:
            with self.zip.open(info) as fh:
                while True:
                    chunk = fh.read(min(_CHUNK, limit + 1 - size))
                    if not chunk:
                        break
                    size += len(chunk)
                    self._total_read += len(chunk)
                    if size > limit:
                        raise ReadError(self._over_cap_reason(path, size, max_bytes, ratio_cap, info))
                    chunks.append(chunk)
        except ReadError:
            raise
        except RuntimeError as exc:  # encrypted entry
            raise ReadError(f"cannot read {path} from the zip: {exc}") from None
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
            raise ReadError(f"corrupt zip entry {path}: {exc}") from None
        return b"".join(chunks)

    def _over_cap_reason(self, path: str, size: int, max_bytes: int, ratio_cap: int, info: zipfile.ZipInfo) -> str:
        if size > ratio_cap and ratio_cap <= max_bytes:
            return (
                f"zip bomb: {path} expands beyond {self.caps.zip_max_ratio}x its compressed size "
                f"({info.compress_size} bytes)"
            )
        if size > max_bytes:
            return f"{path} is larger than the cap of {max_bytes} bytes"
        return f"zip total uncompressed bytes cap ({self.caps.zip_max_total_bytes}) reached at {path}"

    def close(self) -> None:
        if getattr(self, "zip", None) is not None:
            self.zip.close()
        if self._owns_stream:
            self._stream.close()


class StorageSource(Source):
    """Pairs under a prefix of the default storage (``listdir`` walk: works on S3 too)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix.strip("/")

    def pairs(self) -> list[Pair]:
        paths: list[str] = []
        stack = [""]
        while stack:
            rel = stack.pop()
            here = f"{self.prefix}/{rel}".strip("/") if rel else self.prefix
            try:
                dirs, files = default_storage.listdir(here)
            except FileNotFoundError:
                if not rel:
                    raise ApplicationError(f"Nothing found under storage prefix {self.prefix!r}.") from None
                continue
            stack.extend(f"{rel}/{d}".strip("/") for d in dirs if not d.startswith("."))
            paths.extend(f"{rel}/{f}".strip("/") for f in files)
        return pair_up(paths)

    def read(self, path: str, *, max_bytes: int) -> bytes:
        name = f"{self.prefix}/{path}" if self.prefix else path
        try:
            with default_storage.open(name, "rb") as fh:
                return _read_capped(fh, max_bytes=max_bytes, what=path)
        except ReadError:
            raise
        except Exception as exc:  # storage backends raise their own error types
            raise ReadError(f"cannot read {path} from storage: {exc}") from None


def open_source(source: Path | str | IO[bytes] | StoragePrefix, caps: ImportCaps) -> Source:
    """The reader for ``source``; ``ApplicationError`` when it is none of the supported kinds."""
    if isinstance(source, StoragePrefix):
        return StorageSource(source.prefix)
    if isinstance(source, str | Path):
        path = Path(source)
        if path.is_dir():
            return FolderSource(path)
        if not path.exists():
            raise ApplicationError(f"{path} does not exist.")
        if not zipfile.is_zipfile(path):
            raise ApplicationError(f"{path} is neither a folder nor a zip file.")
        return ZipSource(open(path, "rb"), caps, owns_stream=True)
    if hasattr(source, "read") and hasattr(source, "seek"):
        return ZipSource(source, caps)
    raise ApplicationError(f"Unsupported import source {type(source).__name__}.")
