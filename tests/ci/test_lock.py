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
