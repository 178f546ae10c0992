"""The pre-filtering overlay: the screenshot with the whole view hierarchy drawn over it.

docs/pipeline.md, stage 1: the pre-filter annotator judges whether the view hierarchy is
in sync with the pixels, so every VH leaf is outlined and labelled with its short
class name and the first characters of its text (or content-desc), and every shown
container is outlined dashed in grey, unlabelled, under the leaves (as the page draws it).

The overlay is rendered once per screen and cached in storage (``Screen.overlay``).
Candidates and screenshots never change after import, so the cache never goes stale.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterable

from django.core.files.base import ContentFile
from django.db import transaction
from PIL import Image, ImageChops, ImageDraw, ImageFont, ImageOps

from annotation.lock_objects import screen_lock
from annotation.models import Candidate, Screen
from annotation.selectors.screens import screen_device_width
from annotation.vh import VHError, vh_nodes

LABEL_TEXT_CHARS = 12
OVERLAY_JPEG_QUALITY = 90
# Distinct, colour-blind-friendly outline colours (Okabe-Ito), cycled per box so that
# neighbouring boxes can be told apart.
PALETTE = [
    (230, 159, 0),
    (86, 180, 233),
    (0, 158, 115),
    (240, 228, 66),
    (0, 114, 178),
    (213, 94, 0),
    (204, 121, 167),
]
CONTAINER_COLOR = (87, 96, 106)  # the page's .vh-box stroke (#57606a)

Box = tuple[int, int, int, int]


def overlay_label(*, class_name: str, text: str) -> str:
    """``"TextView: Deep Squat 3…"``: short class name plus at most 12 characters of text.

    The class is the last dotted segment (inner classes keep their ``$`` part) because
    obfuscated runtime classes are long and only the tail is informative.
    """
    short_class = class_name.rsplit(".", 1)[-1] if class_name else "?"
    text = " ".join(text.split())  # newlines and runs of spaces would break the one-line label
    if not text:
        return short_class
    snippet = text[:LABEL_TEXT_CHARS] + ("…" if len(text) > LABEL_TEXT_CHARS else "")
    return f"{short_class}: {snippet}"


def _dash_stripes(size: tuple[int, int], *, period: int, dash: int, along_x: bool) -> Image.Image:
    """An ``L`` mask of stripes ``dash`` px on, ``period - dash`` off, across x (or y)."""
    length = size[0] if along_x else size[1]
    line = Image.new("L", (length, 1))
    line.putdata([255 if i % period < dash else 0 for i in range(length)])
    if not along_x:
        line = line.transpose(Image.Transpose.ROTATE_270)
    return line.resize(size, Image.Resampling.NEAREST)


def _containers_draw(layer: Image.Image, containers: Iterable[Box], *, line: int) -> None:
    """Outline ``containers`` dashed on ``layer``: horizontal edges into one mask, vertical
    ones into another, each cut by stripes across it, so that a few whole-image operations
    replace one drawing call per dash (a real screen has up to ~100 containers)."""
    width, height = layer.size
    horizontal, vertical = Image.new("L", layer.size), Image.new("L", layer.size)
    draw_h, draw_v = ImageDraw.Draw(horizontal), ImageDraw.Draw(vertical)
    drawn = False
    for left, top, right, bottom in containers:
        left, top, right, bottom = max(0, left), max(0, top), min(width, right) - 1, min(height, bottom) - 1
        if right <= left or bottom <= top:
            continue
        drawn = True
        draw_h.rectangle((left, top, right, top + line - 1), fill=255)
        draw_h.rectangle((left, bottom - line + 1, right, bottom), fill=255)
        draw_v.rectangle((left, top, left + line - 1, bottom), fill=255)
        draw_v.rectangle((right - line + 1, top, right, bottom), fill=255)
    if not drawn:
        return
    period, dash = 7 * line, 4 * line  # the page's dash pattern, 4 on 3 off
    mask = ImageChops.lighter(
        ImageChops.multiply(horizontal, _dash_stripes(layer.size, period=period, dash=dash, along_x=True)),
        ImageChops.multiply(vertical, _dash_stripes(layer.size, period=period, dash=dash, along_x=False)),
    )
    layer.paste((*CONTAINER_COLOR, 255), (0, 0), mask)


def overlay_render(*, image_bytes: bytes, candidates: Iterable[Candidate], containers: Iterable[Box] = ()) -> bytes:
    """Draw the candidates over the screenshot and return JPEG bytes (pure, no I/O).

    ``containers``: the boxes ``(left, top, right, bottom)`` of the shown non-leaf VH nodes,
    in screenshot pixels, outlined dashed in grey under the candidates.

    JPEG, not PNG: on a 1080x1920 screenshot PNG encoding takes ~0.5 s and ~550 KB, JPEG at
    quality 90 without chroma subsampling ~15 ms and ~120 KB, with outlines and labels still crisp
    (the screenshots themselves are JPEGs).
    """
    with Image.open(io.BytesIO(image_bytes)) as source:
        base = ImageOps.exif_transpose(source).convert("RGB")
    width, height = base.size
    # Dim the screenshot slightly so that outlines and labels stay readable on any colour.
    canvas = Image.blend(base, Image.new("RGB", base.size, (255, 255, 255)), 0.25).convert("RGBA")
    layer = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    font_size = max(10, round(width / 54))  # ~20 px on a 1080-wide screenshot, 10 px on 540
    font = ImageFont.load_default(size=font_size)
    line = max(1, round(width / 540))
    _containers_draw(layer, containers, line=line)
    for number, candidate in enumerate(candidates):
        color = PALETTE[number % len(PALETTE)]
        box = (
            max(0, candidate.left),
            max(0, candidate.top),
            min(width, candidate.right) - 1,
            min(height, candidate.bottom) - 1,
        )
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        draw.rectangle(box, outline=(*color, 255), width=line)
        label = overlay_label(class_name=candidate.class_name, text=candidate.text or candidate.content_desc)
        left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
        text_w, text_h = right - left, bottom - top
        pad = max(1, font_size // 6)
        x = min(box[0], max(0, width - text_w - 2 * pad))
        # Label inside the top of the box, so that labels of stacked boxes do not cover each other's outline.
        y = min(box[1], max(0, height - text_h - 2 * pad))
        draw.rectangle((x, y, x + text_w + 2 * pad, y + text_h + 2 * pad), fill=(*color, 210))
        draw.text((x + pad - left, y + pad - top), label, fill=(0, 0, 0, 255), font=font)
    out = io.BytesIO()
    Image.alpha_composite(canvas, layer).convert("RGB").save(out, "JPEG", quality=OVERLAY_JPEG_QUALITY, subsampling=0)
    return out.getvalue()


def _container_boxes(screen: Screen) -> list[Box]:
    """The pixel boxes of the screen's shown containers (``vh_nodes``, in the screen's own
    device space); none for a VH the importer would refuse."""
    try:
        nodes = vh_nodes(
            screen.vh,
            image_width=screen.width,
            image_height=screen.height,
            device_width=screen_device_width(screen=screen),
        )
    except VHError:
        return []
    return [(n.left, n.top, n.right, n.bottom) for n in nodes if not n.leaf]


# The overlay's drawing style: bump it when the drawing changes, and cached overlays are drawn again
# on their next request. 2: containers dashed under the leaves (issue 11).
OVERLAY_STYLE = 2


def _current(name: str) -> bool:
    return bool(name) and f"-v{OVERLAY_STYLE}-" in name


def screen_overlay_ensure(*, screen: Screen) -> str:
    """The storage name of the screen's overlay, rendering and caching it on first use.

    Concurrency: the (slow) rendering happens without locks, into a file with a fresh
    unique name, so two first requests never write the same file. The name is then
    recorded under the screen's row lock (``screen_lock``); a request that finds a name
    already recorded deletes its own file and returns the recorded one. A reader thus
    only ever sees a complete file. Idempotent: once cached, no rendering and no lock.
    A cached file drawn in an older style (its name lacks ``-v{OVERLAY_STYLE}-``) is
    drawn again and replaces it, so a change of the drawing reaches screens already cached.
    """
    cached = screen.overlay.name or ""
    if _current(cached):
        return cached
    with screen.image.open("rb") as fh:
        image_bytes = fh.read()
    candidates = list(Candidate.objects.filter(screen=screen).order_by("vh_index"))
    rendered = overlay_render(image_bytes=image_bytes, candidates=candidates, containers=_container_boxes(screen))
    storage = screen.overlay.storage
    name = storage.save(f"overlays/{screen.pk}-v{OVERLAY_STYLE}-{uuid.uuid4().hex}.jpg", ContentFile(rendered))
    stale = ""
    try:
        with transaction.atomic():
            locked = screen_lock(screen_id=screen.pk)
            recorded = locked.overlay.name or ""
            if _current(recorded):
                winner = recorded
            else:
                stale = recorded
                Screen.objects.filter(pk=screen.pk).update(overlay=name)
                winner = name
    except BaseException:
        storage.delete(name)
        raise
    if winner != name:
        storage.delete(name)
    if stale:
        storage.delete(stale)
    screen.overlay.name = winner
    return winner
