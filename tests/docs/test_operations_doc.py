"""docs/operations.md documents every environment variable the product reads."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = [
    re.compile(r"""\benv(?:_bool|_int|_list)?\(\s*["']([A-Z][A-Z0-9_]+)["']"""),
    re.compile(r"""os\.environ(?:\.get)?[\[(]\s*["']([A-Z][A-Z0-9_]+)["']"""),
    re.compile(r"""os\.getenv\(\s*["']([A-Z][A-Z0-9_]+)["']"""),
    re.compile(r"""\$\{([A-Z][A-Z0-9_]+):-"""),
]
# Set by tools, not by operators.
NOT_CONFIGURATION = {"DJANGO_ALLOW_ASYNC_UNSAFE", "UPDATE_SCREENSHOTS", "CI", "HF_HUB_OFFLINE", "PATH"}


def variables_read() -> dict[str, str]:
    found: dict[str, str] = {}
    files = [*ROOT.glob("annotation/**/*.py"), *ROOT.glob("pipeline/**/*.py"), ROOT / "docker" / "entrypoint.sh"]
    for path in files:
        text = path.read_text()
        for pattern in PATTERNS:
            for name in pattern.findall(text):
                found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def test_every_environment_variable_is_documented():
    docs = "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    operations = (ROOT / "docs" / "operations.md").read_text()
    variables = variables_read()
    assert "DATABASE_URL" in variables and "CELERY_BROKER_URL" in variables  # the scan works
    missing = {
        name: where
        for name, where in variables.items()
        if name not in NOT_CONFIGURATION and f"`{name}`" not in operations and f"`{name}`" not in docs
    }
    assert missing == {}, f"document these in docs/operations.md: {missing}"
