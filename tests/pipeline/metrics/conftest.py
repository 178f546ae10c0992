from __future__ import annotations

from types import ModuleType

import pytest

from tests.pipeline.metrics.reference import load_reference


@pytest.fixture(scope="session")
def reference() -> ModuleType:
    """The release's scoring module (skips, with a message, when ../shared/reference is absent)."""
    return load_reference()
