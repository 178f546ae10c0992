"""Validate one pair fully in memory: VH JSON, candidates, image. No database, no storage.

``prepare_screen`` either returns a ``ScreenData`` ready to write or raises ``Rejected``
with a one-line reason (the list of reasons is in ``docs/import.md``).
"""

from __future__ import annotations

import hashlib
import io
import threading
import warnings
from concurrent.futures import Future

from PIL import Image, UnidentifiedImageError

from annotation.services.screens import ScreenData
from annotation.vh import VHError, app_package, parse_vh, vh_candidates, vh_root, vh_text

from .sources import ImportCaps, Pair

# MPO (multi-picture JPEG, written by some cameras) is a JPEG file that Pillow names apart.
_FORMAT_EXT = {"JPEG": "jpg", "MPO": "jpg", "PNG": "png"}
_MAGIC = [
    (b"GIF8", "GIF"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
    (b"\x00\x00\x01\x00", "ICO"),
    (b"%PDF", "PDF"),
]


class Rejected(Exception):
    """The pair cannot be imported; ``str(error)`` is the one-line reason."""


def _sniff(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    return None


# warnings.catch_warnings() saves and restores the PROCESS-wide filter list: two threads
# interleaving it could restore each other's state. Pillow warns about bombs only while
# opening (reading the header), so only that short step is serialised; decoding is not.
_OPEN_LOCK = threading.Lock()


def _open_image(data: bytes) -> Image.Image:
    with _OPEN_LOCK, warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            return Image.open(io.BytesIO(data), formats=["JPEG", "PNG"])
        except UnidentifiedImageError:
            other = _sniff(data)
            if other:
                raise Rejected(f"image format {other} is not supported (JPEG or PNG only)") from None
            raise Rejected("not a JPEG or PNG image (unreadable or not an image)") from None
        except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
            raise Rejected(f"decompression bomb: {exc}") from None
        except Exception as exc:  # untrusted bytes: any parser failure means a broken header
            raise Rejected(f"truncated or corrupt image header: {type(exc).__name__}: {exc}"[:300]) from None


def image_check(data: bytes, *, max_pixels: int) -> tuple[str, int, int]:
    """``(ext, width, height)`` of a complete JPEG or PNG; ``Rejected`` otherwise. Thread-safe.

    Only the JPEG and PNG decoders are tried. Pillow's ``DecompressionBombWarning`` is an
    error here (a local warnings filter; the global ``Image.MAX_IMAGE_PIXELS`` is not
    touched) and our own pixel cap is checked on the header size BEFORE decoding. The whole
    file is decoded so that a truncated file is caught; JPEG decodes at 1/8 scale (``draft``),
    which still reads every byte of the entropy stream at a fraction of the cost.
    """
    if not data:
        raise Rejected("image file is empty")
    with _open_image(data) as image:
        width, height = image.size
        if width <= 0 or height <= 0:
            raise Rejected("image has no pixels")
        if width * height > max_pixels:
            raise Rejected(
                f"decompression bomb: image of {width}x{height} pixels exceeds the cap of {max_pixels} pixels"
            )
        fmt = image.format or ""
        if fmt not in _FORMAT_EXT:
            raise Rejected(f"image format {fmt or 'unknown'} is not supported (JPEG or PNG only)")
        try:
            if fmt in ("JPEG", "MPO"):
                image.draft(image.mode, (max(1, width // 8), max(1, height // 8)))
            image.load()
        except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
            raise Rejected(f"decompression bomb: {exc}") from None
        except Exception as exc:  # untrusted bytes: any decoder failure means a broken file
            raise Rejected(f"truncated or corrupt {fmt} image: {exc}"[:300]) from None
    return _FORMAT_EXT[fmt], width, height


def content_sha256(*, image_bytes: bytes, vh_bytes: bytes) -> str:
    """``Screen.content_sha256``: SHA-256 of the image bytes, a NUL byte, the VH bytes."""
    digest = hashlib.sha256(image_bytes)
    digest.update(b"\0")
    digest.update(vh_bytes)
    return digest.hexdigest()


def aspect_matches(*, width: int, height: int, device: tuple[int, int]) -> bool:
    """True when ``width x height`` is a uniform scale of the device space, within one pixel."""
    dev_w, dev_h = device
    return abs(width * dev_h - height * dev_w) <= max(dev_w, dev_h)


def prepare_screen(
    *,
    pair: Pair,
    vh_bytes: bytes,
    image_bytes: bytes,
    device: tuple[int, int],
    caps: ImportCaps,
    image_future: Future[tuple[str, int, int]] | None = None,
) -> ScreenData:
    """Everything the write service needs for one pair, or ``Rejected`` (VH first, then image).

    The image must be a uniform scale of ``device`` (within a pixel) or of the device turned
    by 90 degrees (a landscape screen: the VH is then in ``height x width`` coordinates).
    ``image_future``: the result of ``image_check(image_bytes, ...)`` already started on a
    worker thread (the importer decodes images ahead while this thread parses VHs).
    """
    try:
        text = vh_text(vh_bytes)
        vh = parse_vh(text, max_depth=caps.max_json_depth)
        vh_root(vh)
    except VHError as exc:
        raise Rejected(str(exc)) from None
    package = pair.app_package or app_package(vh)
    if not package:
        raise Rejected("VH has no activity_name, so the app package is unknown")
    if image_future is not None:
        ext, width, height = image_future.result()  # re-raises its Rejected
    else:
        ext, width, height = image_check(image_bytes, max_pixels=caps.max_image_pixels)
    if not aspect_matches(width=width, height=height, device=device):
        # A landscape screenshot of a portrait device: RICO records those in the turned space.
        turned = (device[1], device[0])
        if not aspect_matches(width=width, height=height, device=turned):
            raise Rejected(
                f"image {width}x{height} does not match the VH device space {device[0]}x{device[1]} (aspect ratio)"
            )
        device = turned
    try:
        candidates = vh_candidates(vh, image_width=width, image_height=height, device_width=device[0])
    except VHError as exc:
        raise Rejected(str(exc)) from None
    activity_name = vh.get("activity_name")
    return ScreenData(
        rico_id=pair.rico_id,
        app_package=package[:255],
        activity_name=activity_name if isinstance(activity_name, str) else "",
        image_bytes=image_bytes,
        image_ext=ext,
        width=width,
        height=height,
        vh_text=text,
        content_sha256=content_sha256(image_bytes=image_bytes, vh_bytes=vh_bytes),
        candidates=candidates,
        name=pair.name,
        device_width=device[0],
        device_height=device[1],
    )
