"""Run every benchmark and print the figures as JSON.

    python -m devtools.bench [--full] [--only NAME ...]

Without ``--full`` each benchmark runs at its CI size; ``--full`` runs the scale targets.
Benchmarks use the test database settings (PostgreSQL) unless DJANGO_SETTINGS_MODULE says otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys
import time


def database_prepare() -> None:
    """Create the benchmark database if it is missing, then migrate it."""
    from django.conf import settings
    from django.core.management import call_command

    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.postgresql":
        import psycopg

        params = {
            k: v
            for k, v in {
                "host": db.get("HOST"),
                "port": db.get("PORT"),
                "user": db.get("USER"),
                "password": db.get("PASSWORD"),
            }.items()
            if v
        }
        with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]]).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{db["NAME"]}"')
    call_command("migrate", verbosity=0, interactive=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.bench")
    parser.add_argument("--full", action="store_true", help="run at full (RICO / ScreenQA) scale")
    parser.add_argument("--only", nargs="*", default=[], help="benchmark module names (without bench_)")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.bench")
    import django

    django.setup()
    database_prepare()
    import devtools.bench as package

    results: dict[str, object] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("bench_"):
            continue
        name = info.name.removeprefix("bench_")
        if args.only and name not in args.only:
            continue
        module = importlib.import_module(f"devtools.bench.{info.name}")
        print(f"[bench] {name} ...", file=sys.stderr)
        started = time.perf_counter()
        results[name] = module.run(full=args.full)
        print(f"[bench] {name} done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print(json.dumps(results, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
