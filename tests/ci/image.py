"""Build the container image on a machine with a Docker engine but no image registry.

Used by the image test (tests/ci/test_image.py); also runnable by hand to time a build:

    python -m tests.ci.image          # prints the build time and the image size

* ``docker_ready()`` starts ``dockerd`` when none answers (and says how to stop it again).
* ``local_base()`` makes a Debian bookworm base with Python 3.11 with ``debootstrap`` and
  ``docker import``, once: later runs find it by its tag.
* ``build()`` builds the Dockerfile on that base with the legacy builder when BuildKit's client
  (buildx) is absent, passing the CA certificates pip needs and its own bundle lacks.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The recipe is in the tag: change one, change the other, and the base is made again.
BASE_TAG = "screenqa-local-base:bookworm-py311-1"
BASE_PACKAGES = "python3,python3-venv,python3-pip"
DEBIAN_MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian")
HOST_CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
CERT = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)


class Unavailable(Exception):
    """Docker cannot run here (the message says what is missing)."""


def run(*args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, check=False, **kwargs)


def docker(*args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess[str]:
    return run("docker", *args, timeout=timeout, **kwargs)


def docker_ready() -> subprocess.Popen[bytes] | None:
    """Make sure a Docker engine answers. Returns the ``dockerd`` started here (stop it when done), or
    ``None`` when one was already running."""
    if not shutil.which("docker"):
        raise Unavailable("the docker client is not installed (Debian: apt-get install docker.io; .ci/run does)")
    if docker("info", timeout=30).returncode == 0:
        return None
    dockerd = shutil.which("dockerd") or ("/usr/sbin/dockerd" if os.path.exists("/usr/sbin/dockerd") else None)
    if not dockerd:
        raise Unavailable("no Docker engine answers and dockerd is not installed (Debian: apt-get install docker.io)")
    if os.geteuid() != 0:
        raise Unavailable("no Docker engine answers, and only root may start dockerd")
    log = open(Path(tempfile.gettempdir()) / "screenqa-dockerd.log", "ab")  # noqa: SIM115 - the daemon's
    proc = subprocess.Popen([dockerd], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise Unavailable(f"dockerd exited with {proc.returncode}; see {log.name}")
        if docker("info", timeout=10).returncode == 0:
            return proc
        time.sleep(0.5)
    proc.terminate()
    raise Unavailable(f"dockerd did not answer within 60 s; see {log.name}")


def image_exists(tag: str) -> bool:
    return docker("image", "inspect", tag, timeout=30).returncode == 0


def local_base() -> str:
    """A Debian bookworm image with Python 3.11, made here once (about a minute) and found by its tag
    afterwards. The apt caches are emptied; ``PATH`` and ``LANG`` are set as in Debian's own images."""
    if image_exists(BASE_TAG):
        return BASE_TAG
    debootstrap = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if os.path.exists("/usr/sbin/debootstrap") else None
    )
    if not debootstrap:
        raise Unavailable("debootstrap is not installed (Debian: apt-get install debootstrap; .ci/run does)")
    with tempfile.TemporaryDirectory(prefix="screenqa-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        made = run(
            debootstrap,
            "--variant=minbase",
            f"--include={BASE_PACKAGES}",
            "bookworm",
            str(rootfs),
            DEBIAN_MIRROR,
            timeout=900,
        )
        if made.returncode != 0:
            raise Unavailable(f"debootstrap failed: {made.stdout[-2000:]}{made.stderr[-2000:]}")
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (rootfs / cache).glob("*"):
                if entry.is_file():
                    entry.unlink()
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            [
                "docker",
                "import",
                "--change",
                "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "--change",
                "ENV LANG=C.UTF-8",
                "--change",
                'CMD ["bash"]',
                "-",
                BASE_TAG,
            ],
            stdin=tar.stdout,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        tar.wait()
        if imported.returncode != 0:
            raise Unavailable(f"docker import failed: {imported.stderr}")
    return BASE_TAG


def extra_ca_certs() -> str:
    """The certificates of this machine's CA bundle that pip's own bundle lacks (a TLS-inspecting
    proxy's CA, here): what the build stage must add for pip to reach the package registry. Passed
    as a build argument, so only those, not the whole bundle (an argument is capped at 128 KiB)."""
    from pip._vendor import certifi

    known = set(CERT.findall(Path(certifi.where()).read_text()))
    bundle = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    candidates = [bundle] if bundle else list(HOST_CA_BUNDLES)
    for path in candidates:
        if path and os.path.exists(path):
            return "\n".join(c for c in CERT.findall(Path(path).read_text()) if c not in known)
    return ""


@dataclass
class Built:
    tag: str
    seconds: float
    size_bytes: int
    log: str


def build(tag: str, *, base: str, context: Path = ROOT) -> Built:
    """``docker build`` of the repository's Dockerfile on ``base``, nothing pulled, from ``context`` (the
    repository, or a copy of it with files planted in it)."""
    env = dict(os.environ)
    if docker("buildx", "version", timeout=30).returncode != 0:
        env["DOCKER_BUILDKIT"] = "0"  # the legacy builder: all this Dockerfile needs, and no buildx to fetch
    args = ["build", "--build-arg", f"BASE_IMAGE={base}", "-t", tag]
    extra = extra_ca_certs()
    if extra:
        args += ["--build-arg", f"EXTRA_CA_CERTS={extra}"]
    start = time.monotonic()
    built = docker(*args, str(context), timeout=1800, env=env)
    seconds = time.monotonic() - start
    if built.returncode != 0:
        raise AssertionError(f"docker build failed:\n{built.stdout[-6000:]}\n{built.stderr[-6000:]}")
    size = int(docker("image", "inspect", "-f", "{{.Size}}", tag, timeout=30).stdout.strip())
    return Built(tag=tag, seconds=seconds, size_bytes=size, log=built.stdout)


# Secrets and local state a deployment folder holds next to the code (compose.yaml reads `.env` from it): the
# build context must keep every one of them out of the image. The contents are markers the image test looks for.
PLANTED = {
    ".env": "DJANGO_SECRET_KEY=planted-secret-never-in-the-image",
    ".env.production": "AWS_SECRET_ACCESS_KEY=planted",
    "prod.env": "POSTGRES_PASSWORD=planted",
    "annotation/.env": "X=planted",
    "docker/tls.key": "-----BEGIN PRIVATE KEY-----",
    "frontend/static/server.pem": "-----BEGIN CERTIFICATE-----",
    "pipeline/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "annotation/id_ed25519.pub": "ssh-ed25519 AAAA",
    "secrets/credentials.json": "{}",
    "data/demo-passwords.txt": "admin planted",
    "data/db.sqlite3": "",
    "annotation/local.sqlite3": "",
    ".aws/credentials": "[default]",
    ".git/config": "[core]",
    ".venv/bin/python": "",
    "notes.txt": "",
}


def plant(root: Path) -> None:
    """Write ``PLANTED`` into ``root`` (a copy of the repository)."""
    for name, content in PLANTED.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)


def repository_copy(target: Path) -> Path:
    """The working tree (what ``docker build .`` would see) copied to ``target``, without the local state
    that is never part of it."""
    ignore = shutil.ignore_patterns(".git", ".venv", "data", "staticfiles", "__pycache__", "*.pyc", ".*_cache")
    shutil.copytree(ROOT, target, ignore=ignore)
    return target


def _dockerignore_pattern(pattern: str) -> re.Pattern[str]:
    """One ``.dockerignore`` pattern as Docker reads it (moby's patternmatcher): cleaned, ``**`` any number
    of folders, ``*`` and ``?`` within one name."""
    pattern = os.path.normpath(pattern.strip()).lstrip("/")
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def context_files(root: Path) -> set[str]:
    """The files of ``root`` that ``docker build`` sends, by its ``.dockerignore``: the last pattern that
    matches a file or one of its folders decides, ``!`` taking it back in."""
    rules = []
    for line in (root / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keep = line.startswith("!")
            rules.append((keep, _dockerignore_pattern(line[1:] if keep else line)))
    sent = set()
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        name = path.relative_to(root).as_posix()
        parts = name.split("/")
        candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        included = True
        for keep, regex in rules:
            if any(regex.match(candidate) for candidate in candidates):
                included = keep
        if included:
            sent.add(name)
    return sent


def main() -> int:
    started = docker_ready()
    try:
        start = time.monotonic()
        base = local_base()
        print(f"base {base} ready in {time.monotonic() - start:.0f} s")
        built = build(sys.argv[1] if len(sys.argv) > 1 else "screenqa:local", base=base)
        print(f"built {built.tag} in {built.seconds:.0f} s, {built.size_bytes / 1e6:.0f} MB")
    finally:
        if started:
            started.terminate()
            started.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
