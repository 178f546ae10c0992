"""Import throughput: generated RICO-format screens -> ``import_screens`` on PostgreSQL.

``run(full=False)`` imports 1,000 screens, ``run(full=True)`` 66,000 (RICO scale), from a
local folder written by ``devtools.demo.generator.generate_screens`` (generation is not
timed). Figures: screens/s for the first import (wall clock, and per CPU second of this
process, which is comparable when others load the machine; the 1-minute load average is
reported next to it) and for a re-import (everything already present), peak RSS of the
process, and peak Python heap during the import (tracemalloc on a separate, smaller sample
because tracing slows Python down). Target: >= 300 screens/s on
the 2-core reference machine. Images go to a temporary media folder; the bench's project is
deleted afterwards. The database is created and migrated if needed. Disk: the generated
files plus their stored copies (about 2 x 200 KB per screen: ~26 GB for the full run).
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

SMALL = 1_000
FULL = 66_000
TRACEMALLOC_SAMPLE = 200


def _ensure_database() -> None:
    """Create the bench database if it is missing, then apply migrations."""
    import psycopg
    from django.core.management import call_command
    from django.db import OperationalError, connection

    try:
        connection.ensure_connection()
    except OperationalError:
        params = connection.settings_dict
        with psycopg.connect(
            host=params["HOST"] or None,
            port=params["PORT"] or None,
            user=params["USER"] or None,
            password=params["PASSWORD"] or None,
            dbname="postgres",
            autocommit=True,
        ) as admin:
            admin.execute(f'CREATE DATABASE "{params["NAME"]}"')
    call_command("migrate", verbosity=0, interactive=False)


def _delete_project(slug: str) -> None:
    from annotation.models import Project, Screen

    # Screens first: App is PROTECTed by Screen, so the project cascade needs them gone.
    Screen.objects.filter(project__slug=slug).delete()
    Project.objects.filter(slug=slug).delete()


def run(full: bool) -> dict[str, Any]:
    try:
        from devtools.demo.generator import generate_screens
    except ImportError as exc:
        return {"skipped": f"devtools.demo.generator is not available ({exc})"}
    from django.test import override_settings

    from annotation.services.screens import project_get_or_create
    from pipeline.ingest import import_screens

    _ensure_database()
    count = FULL if full else SMALL
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        source = Path(tmp) / "screens"
        source.mkdir()
        started = time.perf_counter()
        generate_screens(source, count=count, seed=0, workers=2)
        generated_s = time.perf_counter() - started
        media = {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": f"{tmp}/media"}}
        from django.conf import settings

        with override_settings(MEDIA_ROOT=f"{tmp}/media", STORAGES={**settings.STORAGES, "default": media}):
            slug = f"bench-import-{uuid.uuid4().hex[:8]}"
            try:
                project = project_get_or_create(slug=slug)
                rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                load_before = os.getloadavg()[0]
                started, cpu_started = time.perf_counter(), time.process_time()
                first = import_screens(project=project, source=source)
                first_s, first_cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
                load_after = os.getloadavg()[0]
                rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                started = time.perf_counter()
                again = import_screens(project=project, source=source)
                again_s = time.perf_counter() - started
                heap_peak = _heap_peak(source, slug=f"{slug}-heap", count=min(count, TRACEMALLOC_SAMPLE))
            finally:
                _delete_project(slug)
                _delete_project(f"{slug}-heap")
    return {
        "screens": count,
        "generated_in_s": round(generated_s, 1),
        "imported": len(first.imported),
        "rejected": len(first.rejected),
        "import_s": round(first_s, 2),
        "screens_per_s": round(count / first_s, 1),
        # CPU of this process (both threads), without PostgreSQL's: comparable across loads.
        "screens_per_cpu_s": round(count / first_cpu_s, 1),
        "load_avg_1min_before_after": [round(load_before, 1), round(load_after, 1)],
        "reimport_screens_per_s": round(count / again_s, 1),
        "reimport_already_present": len(again.already_present),
        "peak_rss_mb": round(rss_after / 1024, 1),
        "rss_growth_during_import_mb": round((rss_after - rss_before) / 1024, 1),
        "python_heap_peak_mb_per_200_screens": heap_peak,
        "target_screens_per_s": 300,
    }


def _heap_peak(source: Path, *, slug: str, count: int) -> float:
    """Peak traced Python memory while importing the first ``count`` screens (own project)."""
    from annotation.services.screens import project_get_or_create
    from pipeline.ingest import import_screens

    with tempfile.TemporaryDirectory(prefix="bench-import-heap-") as tmp:
        sample = Path(tmp)
        by_stem: dict[str, list[Path]] = {}
        for path in source.iterdir():
            by_stem.setdefault(path.stem, []).append(path)
        for stem in sorted(by_stem)[:count]:
            for path in by_stem[stem]:
                (sample / path.name).symlink_to(path)
        project = project_get_or_create(slug=slug)
        tracemalloc.start()
        try:
            import_screens(project=project, source=sample)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    return round(peak / 2**20, 1)
