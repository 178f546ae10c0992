"""The hot path, before and after, in one run: ``next`` then ``submit`` over real HTTP.

The loop of issue 21 (the Label Studio benchmark's annotator loop): each annotator asks for work on
``questions-1``, writes one question and submits, with no pause, on one keep-alive connection, with
1, 8 and 32 annotators at once, against gunicorn as the production web role runs it. Writers are
already qualified (standing ``active``); control items and review sampling are at the project's
defaults; the fast-response rule is off (these are request loops, not people).

**Before and after in one run.** The code of ``BENCH_HOTPATH_BASELINE`` (a git ref; default: the
merge base of ``HEAD`` and ``main``) is unpacked (``git archive``) into a temporary folder and served
next to this tree's, each from a database of its own (PostgreSQL ``<bench db>_hot_before`` /
``_hot_after``, dropped and migrated by that code; SQLite files in temporary folders). Both
servers are up at once and each level runs on one then the other, alternating which goes first,
so that the machine's load drifts over both alike. Each server serves a warm-up round first. Set-up
and checks run in a child process of the same tree as its server (this module is copied into the
baseline's tree, so both are set up by the same code).

Figures per database, side and level: loops per second (``submit`` count over the wall time),
``next`` and ``submit`` p50/p95/p99, errors, the 1-minute load average at the start, and the
double-lease check (must be 0); ``after_over_before`` per level for loops/s and ``next`` p50.
``BENCH_HOTPATH_DATABASES`` chooses the databases (default ``postgresql,sqlite``). Before the
measurement each database gets ``BENCH_HOTPATH_OTHER_SCREENS`` screens (default 10,000; 50,000
with ``--full``) in each of two other projects, waiting in the stage or finished: the claim must
not pay for them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LEVELS = (1, 8, 32)
STAGE = "questions-1"
# Rounds per level (BENCH_HOTPATH_ROUNDS): each round alternates which side goes first; the round of
# median throughput is reported, with every round's throughput and next p50.
ROUNDS = int(os.environ.get("BENCH_HOTPATH_ROUNDS", "2"))
DATABASES = tuple(os.environ.get("BENCH_HOTPATH_DATABASES", "postgresql,sqlite").split(","))


# --- child process: populate and check (run with the tree of the server under test) ------------


def populate(slug: str, screens: int, annotators: int) -> dict[str, Any]:
    """``screens`` screens waiting for pass 1 and ``annotators`` qualified writers, QC at the defaults."""
    from django.db import transaction

    from annotation.models import Membership, Project, Standing, StandingStatus
    from devtools.bench.bench_queue import populate as queue_populate

    made = queue_populate(slug, screens, annotators, STAGE)
    with transaction.atomic():
        project = Project.objects.get(slug=slug)
        project.fast_response_seconds = 0
        project.save(update_fields=["fast_response_seconds"])
        for membership in Membership.objects.filter(project=project):
            Standing.objects.create(
                project=project,
                user_id=membership.user_id,
                stage=STAGE,
                status=StandingStatus.ACTIVE,
                attempt=1,
                reason="qualified (benchmark)",
            )
    return made


def others(screens: int) -> dict[str, Any]:
    """Another project's ``screens`` screens, half waiting in the measured stage and half finished,
    and as many finished ones in a third: what a claim must not walk (issue 21: a database of many
    projects must serve ``next`` as fast as an empty one)."""
    from annotation.models import App, Project, Screen, ScreenState

    made = 0
    for n, states in enumerate(((STAGE, ScreenState.NO_QUESTIONS), (ScreenState.EXCLUDED, ScreenState.NO_QUESTIONS))):
        project = Project.objects.create(slug=f"hp-others-{n}", name=f"others {n}")
        app = App.objects.create(project=project, package=f"com.bench.others{n}")
        Screen.objects.bulk_create(
            [
                Screen(
                    project=project,
                    app=app,
                    rico_id=str(i),
                    image=f"screens/others-{i}.png",
                    width=1080,
                    height=1920,
                    vh={"activity": {"root": {}}},
                    content_sha256=f"{i:064d}",
                    state=states[i % 2],
                    exclusion_reason="bench" if states[i % 2] == ScreenState.EXCLUDED else "",
                )
                for i in range(screens)
            ],
            batch_size=5000,
        )
        made += screens
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f'ANALYZE "{Screen._meta.db_table}"')
    return {"screens": made}


def _child_main(argv: list[str]) -> None:
    import django

    django.setup()
    if argv[0] == "others":
        result = others(int(argv[1]))
    elif argv[0] == "populate":
        result = populate(argv[1], int(argv[2]), int(argv[3]))
    elif argv[0] == "check":
        from devtools.bench.bench_queue import check

        result = check(argv[1], STAGE)
    else:
        raise SystemExit(f"unknown command {argv[0]}")
    print(json.dumps(result))


def _child(tree: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    from devtools.bench.bench_queue import run_child

    return run_child("devtools.bench.bench_hotpath", env, *args, cwd=tree)


# --- the two trees -----------------------------------------------------------------------------


def baseline_ref() -> str:
    ref = os.environ.get("BENCH_HOTPATH_BASELINE", "")
    if ref:
        return ref
    out = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True, check=False)
    return out.stdout.strip() or "HEAD"


def _commit(ref: str) -> str:
    out = subprocess.run(["git", "rev-parse", ref], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def unpack(ref: str, into: Path) -> Path:
    """The tree of ``ref`` (``git archive``: the repository's worktrees are left alone), with this
    module copied in so that both sides are set up alike."""
    archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    shutil.copy2(Path(__file__), into / "devtools" / "bench" / "bench_hotpath.py")
    return into


def _pg_recreate(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _env_for(tree: Path, database: str, side: str, scratch: Path) -> dict[str, str]:
    from django.conf import settings

    env = {**os.environ, "DB_CONN_MAX_AGE": os.environ.get("DB_CONN_MAX_AGE", "600"), "PYTHONPATH": str(tree)}
    if database == "postgresql":
        db = settings.DATABASES["default"]
        auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
        name = f"{db['NAME'].removesuffix('_bench')}_hot_{side}_bench"  # the bench settings keep a _bench name
        url = f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{name}"
        _pg_recreate(url)
        env.update({"DJANGO_SETTINGS_MODULE": "annotation.settings.bench", "DATABASE_URL": url})
    else:
        env = {k: v for k, v in env.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
        data = scratch / f"sqlite-{side}"
        data.mkdir()
        env.update({"DJANGO_SETTINGS_MODULE": "annotation.settings.local", "SCREENQA_DATA_DIR": str(data)})
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=tree, env=env, check=True, timeout=900
    )
    return env


# --- the measurement ---------------------------------------------------------------------------


def _measure(
    database: str, trees: dict[str, Path], scratch: Path, per_client: dict[int, int], other_screens: int
) -> dict[str, Any]:
    from devtools.bench.bench_queue import SATURATED, Server, _drive

    envs = {side: _env_for(tree, database, side, scratch) for side, tree in trees.items()}
    results: dict[str, Any] = {side: {} for side in trees}
    for side in trees:
        crowd = _child(trees[side], envs[side], "others", str(other_screens))
        results[side]["other_projects_screens"] = crowd["screens"]
    stamp = int(time.time())
    servers = {side: Server(envs[side], cwd=trees[side]) for side in trees}
    for server in servers.values():
        server.__enter__()
    try:
        for side, server in servers.items():  # a warm-up round each: connections opened, statements prepared
            slug = f"hp-{side}-warmup-{stamp}"
            made = _child(trees[side], envs[side], "populate", slug, str(8 * 5), "8")
            results[side]["warmup_8"] = _drive(server.port, slug, made["tokens"], SATURATED, STAGE)
        for n, level in enumerate(LEVELS):
            runs: dict[str, list[dict[str, Any]]] = {side: [] for side in servers}
            for r in range(ROUNDS):
                order = list(servers) if (n + r) % 2 == 0 else list(reversed(servers))
                for side in order:
                    slug = f"hp-{side}-{level}-{r}-{stamp}"
                    screens = str(per_client[level] * level)
                    made = _child(trees[side], envs[side], "populate", slug, screens, str(level))
                    load = round(os.getloadavg()[0], 2)
                    figures = _drive(servers[side].port, slug, made["tokens"], SATURATED, STAGE)
                    check = _child(trees[side], envs[side], "check", slug)
                    runs[side].append(
                        {
                            "loops_per_s": figures["submits_per_s"],
                            "next_ms": figures["next_ms"],
                            "submit_ms": figures["submit_ms"],
                            "errors": figures["errors"],
                            "seconds": figures["seconds"],
                            "load_average_1min_at_start": load,
                            "ran_first": side == order[0],
                            "double_leases": check["double_leases"] + check["screens_submitted_twice_or_more"],
                        }
                    )
            for side, figures_list in runs.items():  # the round of median throughput, and every round's
                ranked = sorted(figures_list, key=lambda f: f["loops_per_s"])
                results[side][str(level)] = {
                    **ranked[len(ranked) // 2],
                    "rounds_loops_per_s": [f["loops_per_s"] for f in figures_list],
                    "rounds_next_p50_ms": [f["next_ms"].get("p50") for f in figures_list],
                }
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)
    if "before" in results:
        results["after_over_before"] = {
            str(level): {
                "loops_per_s": _ratio(results["after"][str(level)]["loops_per_s"], results["before"][str(level)]),
                "next_p50": _ratio(
                    results["after"][str(level)]["next_ms"].get("p50"), results["before"][str(level)], "p50"
                ),
            }
            for level in LEVELS
        }
    return results


def _ratio(after: float | None, before: dict[str, Any], key: str = "") -> float | None:
    value = before["next_ms"].get(key) if key else before["loops_per_s"]
    return round(after / value, 2) if after and value else None


def run(full: bool) -> dict[str, Any]:
    per_client = {1: 300, 8: 60, 32: 25} if full else {1: 60, 8: 15, 32: 6}
    # Screens of other projects, waiting or finished, in each database before the measurement.
    other_screens = int(os.environ.get("BENCH_HOTPATH_OTHER_SCREENS", 50_000 if full else 10_000))
    ref = baseline_ref()
    before, after = _commit(ref), _commit("HEAD")
    results: dict[str, Any] = {
        "loop": f"{STAGE}: next then submit, no pause, qualified writers, QC and review at the defaults",
        "baseline": {"ref": ref, "commit": before},
        "head": after,
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
        "per_client": per_client,
        "other_projects_screens": 2 * other_screens,
    }
    with tempfile.TemporaryDirectory(prefix="bench-hotpath-") as tmp:
        scratch = Path(tmp)
        trees = {"after": ROOT}
        if before != after:
            (scratch / "before").mkdir()
            trees = {"before": unpack(before, scratch / "before"), "after": ROOT}
        else:
            results["note"] = "the baseline is HEAD: only 'after' is measured (set BENCH_HOTPATH_BASELINE)"
        for database in DATABASES:
            results[database] = _measure(database, trees, scratch, per_client, other_screens)
            print(f"[bench] hotpath {database}: {json.dumps(results[database])}", file=sys.stderr)
    results["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    return results


if __name__ == "__main__":
    _child_main(sys.argv[1:])
