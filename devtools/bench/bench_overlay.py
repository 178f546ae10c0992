"""Pre-filter overlay rendering (``annotation.services.overlays.overlay_render``), per screen,
with and without the dashed containers.

Data: the real RICO screens in ``../shared/data/rico/screens`` (VH read in RICO's 1440x2560
device space, turned for landscape). Each screen is rendered three times per variant and the
best kept; the figures are the median and the maximum of those bests, in milliseconds. No database.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from PIL import Image

from annotation.models import Candidate
from annotation.services.overlays import overlay_render
from annotation.vh import VHError, vh_nodes

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "rico" / "screens"
DEVICE = (1440, 2560)


def _best_ms(**kwargs: Any) -> float:
    """The best of three ``overlay_render(**kwargs)``, in milliseconds."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        overlay_render(**kwargs)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def run(full: bool) -> dict:
    images = sorted(SHARED.glob("*.jpg")) if SHARED.is_dir() else []
    if not full:
        images = images[:20]
    if not images:
        return {"skipped": f"no screens in {SHARED}"}
    plain, dashed, containers_per_screen = [], [], []
    for image_path in images:
        image_bytes = image_path.read_bytes()
        with Image.open(io.BytesIO(image_bytes)) as source:
            width, height = source.size
        device_width = DEVICE[0] if width < height else DEVICE[1]
        try:
            nodes = vh_nodes(
                json.loads(image_path.with_suffix(".json").read_text()),
                image_width=width,
                image_height=height,
                device_width=device_width,
            )
        except VHError:
            continue
        leaves = [
            Candidate(vh_index=n.vh_index, left=n.left, top=n.top, right=n.right, bottom=n.bottom, text=n.text)
            for n in nodes
            if n.leaf
        ]
        boxes = [(n.left, n.top, n.right, n.bottom) for n in nodes if not n.leaf]
        containers_per_screen.append(len(boxes))
        plain.append(_best_ms(image_bytes=image_bytes, candidates=leaves))
        dashed.append(_best_ms(image_bytes=image_bytes, candidates=leaves, containers=boxes))
    return {
        "screens": len(plain),
        "containers_median": statistics.median(containers_per_screen),
        "containers_max": max(containers_per_screen),
        "leaves_only_ms_median": round(statistics.median(plain), 1),
        "leaves_only_ms_max": round(max(plain), 1),
        "with_containers_ms_median": round(statistics.median(dashed), 1),
        "with_containers_ms_max": round(max(dashed), 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
