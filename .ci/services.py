#!/usr/bin/env python3
"""Find PostgreSQL and Redis for the test suite, or start throwaway ones, then run a command.

Order, for each service:
1. ``DATABASE_URL`` / ``CELERY_BROKER_URL`` when set;
2. the server on its default local port (PostgreSQL 127.0.0.1:5432 as ``postgres``, Redis 127.0.0.1:6379);
3. a throwaway instance started from the installed server binaries (``initdb``/``pg_ctl``, ``redis-server``)
   in a temporary folder, stopped when the command ends;
4. otherwise stop with a message naming what to install.

Usage: python .ci/services.py -- pytest ...
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    pattern = os.environ.get("SERVICES_PG_BIN_GLOB", "/usr/lib/postgresql/*/bin")
    candidates = sorted(glob.glob(f"{pattern}/{name}"), reverse=True) if pattern else []
    return candidates[0] if candidates else None


def postgres_usable(url_host: str, port: int) -> bool:
    if not port_open(url_host, port):
        return False
    psql = shutil.which("psql")
    if not psql:
        return True
    result = subprocess.run(
        [psql, "-h", url_host, "-p", str(port), "-U", "postgres", "-d", "postgres", "-c", "select 1"],
        capture_output=True,
        timeout=10,
        check=False,
    )
    return result.returncode == 0


def start_postgres(tmp: str) -> tuple[str, list[list[str]]]:
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    if not (initdb and pg_ctl):
        sys.exit(
            "No PostgreSQL found: set DATABASE_URL, run a server on 127.0.0.1:5432 (user postgres, trust auth), "
            "or install the server binaries (Debian: apt-get install postgresql)."
        )
    data = os.path.join(tmp, "pg")
    port = free_port()
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        run_as = ["runuser", "-u", "postgres", "--"]
        os.chmod(tmp, 0o777)  # noqa: S103 - the throwaway server runs as user postgres
    subprocess.run(
        [*run_as, initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"], check=True, capture_output=True
    )
    subprocess.run(
        [
            *run_as,
            pg_ctl,
            "-D",
            data,
            "-w",
            "-l",
            os.path.join(data, "log"),
            "-o",
            f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    print(f"[services] started a throwaway PostgreSQL on 127.0.0.1:{port}", file=sys.stderr)
    return f"postgres://postgres@127.0.0.1:{port}/screenqa", [[*run_as, pg_ctl, "-D", data, "-m", "fast", "stop"]]


def start_redis(tmp: str) -> tuple[str, list[subprocess.Popen[bytes]]]:
    redis = shutil.which("redis-server")
    if not redis:
        sys.exit(
            "No Redis found: set CELERY_BROKER_URL, run a server on 127.0.0.1:6379, "
            "or install it (Debian: apt-get install redis-server)."
        )
    port = free_port()
    proc = subprocess.Popen(
        [redis, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tmp],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):
        if port_open("127.0.0.1", port):
            break
        time.sleep(0.05)
    print(f"[services] started a throwaway Redis on 127.0.0.1:{port}", file=sys.stderr)
    return f"redis://127.0.0.1:{port}/0", [proc]


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(__doc__)
        return 2
    command = argv[argv.index("--") + 1 :]
    env = dict(os.environ)
    tmp = tempfile.mkdtemp(prefix="screenqa-services-")
    stops: list[list[str]] = []
    procs: list[subprocess.Popen[bytes]] = []
    pg_port = int(env.get("SERVICES_PG_PORT", "5432"))  # overridable so that the fallbacks can be tested
    redis_port = int(env.get("SERVICES_REDIS_PORT", "6379"))
    try:
        if not env.get("DATABASE_URL"):
            if postgres_usable("127.0.0.1", pg_port):
                env["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:{pg_port}/screenqa"
            else:
                env["DATABASE_URL"], stops = start_postgres(tmp)
        if not env.get("CELERY_BROKER_URL"):
            if port_open("127.0.0.1", redis_port):
                env["CELERY_BROKER_URL"] = f"redis://127.0.0.1:{redis_port}/0"
            else:
                env["CELERY_BROKER_URL"], procs = start_redis(tmp)
        print(
            f"[services] DATABASE_URL={env['DATABASE_URL']} CELERY_BROKER_URL={env['CELERY_BROKER_URL']}",
            file=sys.stderr,
        )
        return subprocess.call(command, env=env)
    finally:
        for stop in stops:
            subprocess.run(stop, capture_output=True, check=False)
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
