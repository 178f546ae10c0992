"""Speed of the RICO-format screen generator (``devtools.demo.generator``).

CI size: 200 screens; ``--full``: 2,000 screens on one process and on every core, plus the
zip form. Figures: screens per second and bytes per screen.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from devtools.demo.generator import generate_screens, generate_zip


def _timed(fn: Any, **kwargs: Any) -> tuple[float, list[str]]:
    started = time.perf_counter()
    ids = fn(**kwargs)
    return time.perf_counter() - started, ids


def run(full: bool) -> dict:
    count = 2000 if full else 200
    workers = os.cpu_count() or 1
    out: dict[str, Any] = {"count": count, "cpus": workers}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "screens"
        secs, ids = _timed(generate_screens, out_dir=folder, count=count, seed=1)
        size = sum(p.stat().st_size for p in folder.iterdir())
        out["folder_screens_per_s"] = round(len(ids) / secs, 1)
        out["bytes_per_screen"] = size // len(ids)
        secs, ids = _timed(generate_zip, path=Path(tmp) / "s.zip", count=count, seed=1, workers=workers)
        out[f"zip_{workers}_workers_screens_per_s"] = round(len(ids) / secs, 1)
    return out
