"""The lock files (``make lock``, docs/operations.md "Dependencies"): the image installs ``requirements.lock``
and CI ``requirements-dev.lock``, with every file's hash. They must hold every requirement, at a version the
requirements allow, each pin with its hashes, so a requirement added without ``make lock`` fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def requirements(path: Path) -> list[Requirement]:
    found: list[Requirement] = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            found += requirements(path.parent / line[3:].strip())
            continue
        found.append(Requirement(line))
    return found


def pins(path: Path) -> dict[str, tuple[str, int]]:
    """``{name: (version, hashes)}`` of a lock file."""
    text = path.read_text()
    found: dict[str, tuple[str, int]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        head = re.match(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([^\s;\\]+)", block)
        if head:
            found[canonicalize_name(head.group(1))] = (head.group(2), block.count("--hash=sha256:"))
    return found


@pytest.mark.parametrize(
    ("wanted", "lock"), [("requirements.txt", "requirements.lock"), ("requirements-dev.txt", "requirements-dev.lock")]
)
def test_the_lock_holds_every_requirement_at_an_allowed_version_with_hashes(wanted, lock):
    locked = pins(ROOT / lock)
    missing, outside = [], []
    for requirement in requirements(ROOT / wanted):
        name = canonicalize_name(requirement.name)
        if name not in locked:
            missing.append(str(requirement))
        elif not requirement.specifier.contains(locked[name][0], prereleases=True):
            outside.append(f"{requirement} (locked {locked[name][0]})")
    assert not missing and not outside, f"run `make lock`: not in {lock}: {missing}; outside the range: {outside}"
    assert all(hashes for _, hashes in locked.values()), [name for name, (_, n) in locked.items() if not n]


def test_the_dev_lock_keeps_the_runtime_locks_versions():
    runtime, dev = pins(ROOT / "requirements.lock"), pins(ROOT / "requirements-dev.lock")
    differ = {
        name: (version, dev[name][0])
        for name, (version, _) in runtime.items()
        if dev.get(name, (version,))[0] != version
    }
    assert not differ, f"run `make lock`: {differ}"


def test_the_image_and_make_install_from_the_locks_with_hashes():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert (
        "COPY requirements.lock ." in dockerfile and "pip install --require-hashes -r requirements.lock" in dockerfile
    )
    makefile = (ROOT / "Makefile").read_text()
    assert (
        "--require-hashes -r requirements.lock" in makefile and "--require-hashes -r requirements-dev.lock" in makefile
    )


def test_gunicorn_is_a_current_major():
    (gunicorn,) = [r for r in requirements(ROOT / "requirements.txt") if r.name == "gunicorn"]
    assert gunicorn.specifier.contains("27.0.1")
    assert pins(ROOT / "requirements.lock")["gunicorn"][0].split(".")[0] == "27"


PRODUCT = ("annotation", "pipeline", "frontend", "manage.py")


def imported_top_levels() -> dict[str, str]:
    """``{top-level module: first file importing it}`` over the product's code (not tests, not devtools)."""
    import ast
    import sys

    found: dict[str, str] = {}
    files = [ROOT / "manage.py"] + [p for part in PRODUCT[:-1] for p in sorted((ROOT / part).rglob("*.py"))]
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".", 1)[0]
                if top not in sys.stdlib_module_names and top not in {"annotation", "pipeline", "frontend", "devtools"}:
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_module_the_product_imports_comes_from_the_runtime_lock():
    """The image installs ``requirements.lock`` only: a module the product imports that only the dev lock brings
    (as ``requests`` once came through a type-stub's dependency) passes every test here and breaks the image
    at its first ``manage.py`` (CI's image test caught it after 13 minutes; this catches it in one second)."""
    from importlib.metadata import packages_distributions

    runtime = pins(ROOT / "requirements.lock")
    providers = packages_distributions()
    missing = {}
    for module, where in imported_top_levels().items():
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        if not dists & set(runtime):
            missing[module] = (where, sorted(dists) or "no installed distribution")
    assert not missing, f"add to requirements.txt and run `make lock`: {missing}"
