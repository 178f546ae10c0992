"""The release's own scoring code, read at test time from ../shared/reference/screen_qa/metrics.py.

It is third-party code (Apache-2.0) and the contract our scorer is checked against; it is never
copied into the repository. Tests that need it take the ``reference`` fixture (conftest.py), which
skips with a message when the file is absent. Its boxes are ``(ymin, xmin, ymax, xmax)``; ours (and the
release files') ``[left, top, right, bottom]``: ``ref_elements`` converts.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pipeline.metrics.uic import Element

REFERENCE = Path(__file__).resolve().parents[4] / "shared" / "reference" / "screen_qa" / "metrics.py"
TOLERANCE = 1e-12


def load_reference() -> ModuleType:
    if not REFERENCE.is_file():
        pytest.skip(f"the release's scoring code {REFERENCE} is absent: the differential tests need it")
    spec = importlib.util.spec_from_file_location("screen_qa_reference_metrics", REFERENCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ref_elements(elements: Sequence[Element]) -> list[tuple[tuple[Any, ...], str]]:
    """Our elements as the reference's ``(bbox, text)`` pairs, ``bbox = (top, left, bottom, right)``."""
    out = []
    for e in elements:
        assert e.bounds is not None
        left, top, right, bottom = e.bounds
        out.append(((top, left, bottom, right), e.text))
    return out


def close(ours: Sequence[float], theirs: Sequence[float]) -> bool:
    return len(ours) == len(theirs) and all(abs(a - b) <= TOLERANCE for a, b in zip(ours, theirs, strict=True))
