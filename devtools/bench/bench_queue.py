"""Queue benchmark: ``next`` and ``submit`` over real HTTP (gunicorn) with 1, 8 and 32
concurrent annotators, on PostgreSQL and on the embedded SQLite default.

For each database and each concurrency level a fresh project gets ``questions-1`` screens
(with 20 candidates each, so payloads are realistic). Every client thread is one annotator
with its own token and keep-alive connection: it asks for work, submits it, and repeats
until the queue is empty. Two pacings are measured:

* ``saturated``: no pause between requests (the server's worst case: throughput and the
  latency under a full queue of requests);
* ``paced``: each annotator pauses 0.25-0.75 s between requests (still far faster than a
  person reading a screen), so latency is measured with 32 people working rather than 32
  request loops.

Each server first serves a warm-up round (32 annotators, 4 items each; reported as
``warmup_32``, not a measurement): a fresh server opens its database connections and
prepares its statements then. Paced runs come before saturated ones, whose writes would
otherwise be checkpointed in the middle of the latency measurement. Connections are kept
600 s (``DB_CONN_MAX_AGE``, as docs/operations.md recommends for production).

Afterwards the database is checked: ``double_leases`` counts screens that were ever held by
two live leases at once (must be 0), and every screen must have exactly one submission.

Data set-up and checks run in a child process with the server's settings, so the same
code path serves both databases. Loopback only, bounded loops.

**QC mode** (``BENCH_QUEUE_MODE=qc``): the same benchmark on PostgreSQL, on the ``prefilter``
stage (a stage with gold items, so control items can be drawn), each pacing and level run twice on
the same server, without quality control and with it, one right after the other:

* ``qc_off``: no gold items, the rules off (fast responses, skips in a row), no review sampling
  (as ``bench_quality`` runs without QC); the standing check still reads the standing row;
* ``qc_on``: ``QC_GOLD`` gold items, every annotator already qualified (standing ``active``,
  qualification done), control items at the project's default rates (``control_rate_new`` 30%
  for an annotator's first 50 items, then ``control_rate`` 10%), monitoring on (control accuracy,
  skips in a row) and review sampling at its default. The fast-response rule is off in both runs:
  the clients are request loops, not people, and it would pause every one of them.

Clients answer control items right, so nobody is paused. Reported per run: ``next`` and
``submit`` p50/p95/p99, the load average at its start, how many control items were served, and
the double-lease check; ``p99_next_on_minus_off_ms`` per pacing and level.

``crowd_services`` runs the scripted crowd (``devtools.crowd``) through the services over a
fresh synthetic project, from pre-filtering to ready-for-post-processing.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LEVELS = (1, 8, 32)
# The server under test; BENCH_GUNICORN overrides the worker options (to compare settings).
# Default: the production web role's (docker/entrypoint.sh): 2 x CPUs + 1 processes, 1 thread.
# BENCH_QUEUE_DATABASES: which databases to measure (default both: "postgresql,sqlite").
DATABASES = tuple(os.environ.get("BENCH_QUEUE_DATABASES", "postgresql,sqlite").split(","))
# BENCH_QUEUE_MODE: "databases" (default: the databases above) or "qc" (see the docstring).
MODE = os.environ.get("BENCH_QUEUE_MODE", "databases")
GUNICORN_ARGS = os.environ.get("BENCH_GUNICORN", f"-w {2 * (os.cpu_count() or 1) + 1} -k gthread --threads 1").split()


# --- child process: populate and check ---------------------------------------------------


# Per stage measured: the screens' state, and the submit body of every client.
STAGES: dict[str, dict[str, Any]] = {
    "questions-1": {"state": "questions-1", "body": None},  # a question quoting a candidate
    "prefilter": {"state": "prefilter", "body": {"non_english_app": False, "vh_out_of_sync": False}},
}
QC_GOLD = 60  # gold items of a QC-on project: more than any client of the CI or full size draws


def populate(slug: str, screens: int, annotators: int, stage: str = "questions-1", qc: str = "") -> dict[str, Any]:
    """Create a project with ``screens`` screens waiting in ``stage`` and ``annotators`` members.
    ``qc``: ``off`` (no gold, rules off, no review) or ``on`` (``QC_GOLD`` gold items of the stage
    on screens already past it, every annotator qualified, the project's default rates)."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from rest_framework.authtoken.models import Token

    from annotation.models import (
        App,
        Assignment,
        Candidate,
        GoldItem,
        Membership,
        Project,
        Screen,
        ScreenState,
        Standing,
        StandingStatus,
    )

    with transaction.atomic():
        project = Project.objects.create(slug=slug, name=slug)
        if qc:  # request loops, not people: the fast-response rule would pause every client
            project.fast_response_seconds = 0
        if qc == "off":
            project.skips_in_a_row, project.review_rate = 0, 0
        project.save()
        app = App.objects.create(project=project, package=f"com.bench.{slug}")
        made = Screen.objects.bulk_create(
            [
                Screen(
                    project=project,
                    app=app,
                    rico_id=str(100_000 + i),
                    image=f"screens/bench-{i}.png",
                    width=1080,
                    height=1920,
                    vh={"activity": {"root": {}}},
                    content_sha256=f"{i:064d}",
                    # gold screens (after the real ones) are past the stage: only served as gold
                    state=STAGES[stage]["state"] if i < screens else ScreenState.QUESTIONS_1,
                )
                for i in range(screens + (QC_GOLD if qc == "on" else 0))
            ]
        )
        if qc == "on":
            GoldItem.objects.bulk_create(
                [GoldItem(project=project, stage=stage, screen=s, answer=STAGES[stage]["body"]) for s in made[screens:]]
            )
        Candidate.objects.bulk_create(
            [
                Candidate(
                    screen=s, vh_index=k + 1, left=10, top=90 * k, right=1000, bottom=90 * k + 80, text=f"Item {k}"
                )
                for s in made
                for k in range(20)
            ],
            batch_size=5000,
        )
        tokens = []
        user_model = get_user_model()
        for n in range(annotators):
            user = user_model.objects.create_user(username=f"{slug}-a{n}", password=None)
            Membership.objects.create(project=project, user=user)
            tokens.append(Token.objects.create(user=user).key)
            if qc == "on":  # qualification done
                Standing.objects.create(
                    project=project,
                    user=user,
                    stage=stage,
                    status=StandingStatus.ACTIVE,
                    attempt=1,
                    reason="qualified (benchmark)",
                )
    # Fresh planner statistics, as a real project has long before its annotators arrive
    # (autovacuum analyses after an import); otherwise autoanalyze of the new rows can
    # start in the middle of the measurement.
    from django.db import connection

    with connection.cursor() as cursor:
        for model in (Screen, Candidate, Assignment):
            cursor.execute(f'ANALYZE "{model._meta.db_table}"')
    return {"slug": slug, "tokens": tokens}


def check(slug: str, stage: str = "questions-1") -> dict[str, Any]:
    from django.db.models import Count

    from annotation.models import Assignment, ControlResult, Project, Screen, Standing
    from pipeline.engine import assignment_double_leases

    project = Project.objects.get(slug=slug)
    per_screen = (
        Assignment.objects.filter(project=project, stage=stage, status="submitted", purpose="work")
        .values("screen_id")
        .annotate(n=Count("pk"))
    )
    counts = [row["n"] for row in per_screen]
    screens = Screen.objects.filter(project=project).exclude(gold_items__isnull=False).count()
    return {
        "control_items": ControlResult.objects.filter(project=project).count(),
        "paused": Standing.objects.filter(project=project, status="paused").count(),
        "double_leases": assignment_double_leases(project=project),
        "screens": screens,
        "screens_submitted_once": sum(1 for n in counts if n == 1),
        "screens_submitted_twice_or_more": sum(1 for n in counts if n > 1),
        "assignments": Assignment.objects.filter(project=project).count(),
    }


def _child_main(argv: list[str]) -> None:
    import django

    django.setup()
    if argv[0] == "populate":
        result = populate(argv[1], int(argv[2]), int(argv[3]), *argv[4:])
    elif argv[0] == "check":
        result = check(*argv[1:])
    else:
        raise SystemExit(f"unknown command {argv[0]}")
    print(json.dumps(result))


def _child(env: dict[str, str], *args: str) -> dict[str, Any]:
    return run_child("devtools.bench.bench_queue", env, *args)


def run_child(module: str, env: dict[str, str], *args: str, cwd: Path = ROOT) -> dict[str, Any]:
    """Run ``python -m module *args`` in ``cwd`` (a tree: this one, or a baseline's) and read the JSON
    its last line prints."""
    out = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"bench child {module} {args[0]} ({cwd}) failed: {out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# --- server ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """gunicorn on loopback with the given environment; stopped on exit."""

    def __init__(
        self,
        env: dict[str, str],
        cwd: Path = ROOT,
        args: list[str] | None = None,
        start_seconds: float | None = None,
    ) -> None:
        self.port = _free_port()
        self.env = env
        self.cwd = cwd  # the tree whose code it serves (bench_hotpath: a baseline's too)
        self.args = GUNICORN_ARGS if args is None else args
        # A loaded machine starts gunicorn (and renders the schema) slowly: BENCH_SERVER_START_S.
        self.start_seconds = (
            float(os.environ.get("BENCH_SERVER_START_S", "240")) if start_seconds is None else start_seconds
        )
        self.proc: subprocess.Popen[bytes] | None = None
        # gunicorn's (and the app's: one line per request) log goes to a file, never to a pipe nobody
        # reads while the benchmark runs: a full pipe blocks the worker writing to it, and with it the
        # request being answered (the adversarial run hung on that).
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in __exit__)

    def _log_tail(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def __enter__(self) -> Server:
        cmd = [
            sys.executable, "-m", "gunicorn", "annotation.wsgi", *self.args,
            "-b", f"127.0.0.1:{self.port}", "--log-level", "warning",
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, cwd=self.cwd, env=self.env, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + self.start_seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited: {self._log_tail()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/api/schema/")
                conn.getresponse().read()
                conn.close()
                return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not start within {self.start_seconds} s (BENCH_SERVER_START_S)")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()


# --- clients -----------------------------------------------------------------------------


def _annotator(
    port: int,
    slug: str,
    token: str,
    pause: tuple[float, float],
    seed: int,
    out: dict[str, Any],
    barrier: Any,
    stage: str = "questions-1",
) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    next_ms: list[float] = []
    submit_ms: list[float] = []
    errors = 0
    barrier.wait(timeout=60)
    try:
        for _ in range(100_000):  # bounded; the queue empties long before
            if pause[1]:
                time.sleep(rng.uniform(*pause))
            t0 = time.perf_counter()
            conn.request("POST", f"/api/projects/{slug}/stages/{stage}/next/", headers=headers)
            response = conn.getresponse()
            body = response.read()
            next_ms.append((time.perf_counter() - t0) * 1000)
            if response.status == 204:
                break
            if response.status != 200:
                errors += 1
                continue
            assignment = json.loads(body)
            if pause[1]:
                time.sleep(rng.uniform(*pause))
            submission = STAGES[stage]["body"] or {"questions": [f"What does item {rng.randint(0, 19)} say?"]}
            payload = json.dumps(submission)
            t0 = time.perf_counter()
            conn.request("POST", f"/api/assignments/{assignment['id']}/submit/", body=payload, headers=headers)
            response = conn.getresponse()
            response.read()
            submit_ms.append((time.perf_counter() - t0) * 1000)
            if response.status != 200:
                errors += 1
    finally:
        conn.close()
        out["next"], out["submit"], out["errors"] = next_ms, submit_ms, errors


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))], 2)

    return {
        "n": len(values),
        "p50": pct(50),
        "p95": pct(95),
        "p99": pct(99),
        "mean": round(statistics.fmean(values), 2),
    }


def _drive(
    port: int, slug: str, tokens: list[str], pause: tuple[float, float], stage: str = "questions-1"
) -> dict[str, Any]:
    outs: list[dict[str, Any]] = [{} for _ in tokens]
    barrier = threading.Barrier(len(tokens) + 1)
    threads = [
        threading.Thread(target=_annotator, args=(port, slug, token, pause, i, outs[i], barrier, stage))
        for i, token in enumerate(tokens)
    ]
    for t in threads:
        t.start()
    barrier.wait(timeout=60)
    started = time.perf_counter()
    for t in threads:
        t.join(timeout=600)
    wall = time.perf_counter() - started
    next_ms = [v for o in outs for v in o.get("next", [])]
    submit_ms = [v for o in outs for v in o.get("submit", [])]
    return {
        "next_ms": _percentiles(next_ms),
        "submit_ms": _percentiles(submit_ms),
        "requests_per_s": round((len(next_ms) + len(submit_ms)) / wall, 1),
        "submits_per_s": round(len(submit_ms) / wall, 1),
        "errors": sum(o.get("errors", 0) for o in outs),
        "seconds": round(wall, 2),
    }


PACED, SATURATED = (0.25, 0.75), (0.0, 0.0)


def _run_database(name: str, env: dict[str, str], per_client: dict[int, int], full: bool) -> dict[str, Any]:
    """Warm-up, then paced, then saturated runs on one server (see the module docstring)."""
    results: dict[str, Any] = {}
    stamp = int(time.time())
    with Server(env) as server:
        # Warm-up, reported but not a measurement: a server that has just started opens its
        # database connections and prepares its statements during its first requests (a
        # production server does that once). 32 annotators, a few items each.
        warmup = f"bq-{name}-warmup-{stamp}"
        made = _child(env, "populate", warmup, str(32 * 4), "32")
        results["warmup_32"] = _drive(server.port, warmup, made["tokens"], PACED)
        results["warmup_32"].update(_child(env, "check", warmup))
        # Paced before saturated: the saturated runs' writes (and their checkpoint) must not
        # land in the middle of the latency measurement.
        for pacing, pause in (("paced", PACED), ("saturated", SATURATED)):
            for level in LEVELS:
                slug = f"bq-{name}-{pacing[0]}{level}-{stamp}"
                screens = per_client[level] * level
                made = _child(env, "populate", slug, str(screens), str(level))
                load = round(os.getloadavg()[0], 2)
                figures = _drive(server.port, slug, made["tokens"], pause)
                figures["load_average_1min_at_start"] = load
                figures.update(_child(env, "check", slug))
                results[f"{pacing}_{level}"] = figures
    return results


def _run_qc(env: dict[str, str], per_client: dict[int, int]) -> dict[str, Any]:
    """QC mode (see the module docstring): each pacing and level without and with QC, back to
    back on one server, on the ``prefilter`` stage."""
    stage = "prefilter"
    results: dict[str, Any] = {}
    stamp = int(time.time())
    with Server(env) as server:
        for qc in ("off", "on"):  # warm-up, not a measurement: both code paths prepared
            warmup = f"bq-qc{qc}-warmup-{stamp}"
            made = _child(env, "populate", warmup, str(32 * 4), "32", stage, qc)
            results[f"warmup_32_qc_{qc}"] = _drive(server.port, warmup, made["tokens"], PACED, stage)
            results[f"warmup_32_qc_{qc}"].update(_child(env, "check", warmup, stage))
        for pacing, pause in (("paced", PACED), ("saturated", SATURATED)):
            for level in LEVELS:
                pair: dict[str, Any] = {}
                for qc in ("off", "on"):
                    slug = f"bq-qc{qc}-{pacing[0]}{level}-{stamp}"
                    made = _child(env, "populate", slug, str(per_client[level] * level), str(level), stage, qc)
                    load = round(os.getloadavg()[0], 2)
                    figures = _drive(server.port, slug, made["tokens"], pause, stage)
                    figures["load_average_1min_at_start"] = load
                    figures.update(_child(env, "check", slug, stage))
                    pair[f"qc_{qc}"] = figures
                off, on = pair["qc_off"]["next_ms"], pair["qc_on"]["next_ms"]
                pair["p99_next_on_minus_off_ms"] = round(on["p99"] - off["p99"], 2)
                pair["p50_next_on_minus_off_ms"] = round(on["p50"] - off["p50"], 2)
                results[f"{pacing}_{level}"] = pair
    return results


def crowd_run(*, screens: int, annotators: int) -> dict[str, Any]:
    """The scripted crowd through the services (in this process): a whole project from
    pre-filtering to ready-for-post-processing. Screenshots go to a temporary folder."""
    from django.test import override_settings

    from annotation.models import Project
    from devtools.crowd import crowd_simulate
    from pipeline.engine import assignment_double_leases

    with tempfile.TemporaryDirectory(prefix="bench-crowd-") as tmp:
        storage = {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp}}
        from django.conf import settings

        with override_settings(STORAGES={**settings.STORAGES, "default": storage}):
            project = Project.objects.create(slug=f"bq-crowd-{int(time.time())}", name="crowd bench")
            summary = crowd_simulate(project=project, annotators=annotators, seed=7, new_screens=screens)
    submissions = sum(summary["submitted"].values())
    return {
        "screens": screens,
        "annotators": annotators,
        "seconds": summary["seconds"],
        "submissions": submissions,
        "submissions_per_s": round(submissions / summary["seconds"], 1) if summary["seconds"] else None,
        "ready_for_postprocessing": summary["progress"]["ready_for_postprocessing"],
        "questions": summary["progress"]["questions"],
        "double_leases": assignment_double_leases(project=project),
    }


def run(full: bool) -> dict[str, Any]:
    """Figures per database, pacing and concurrency level (see the module docstring)."""
    from django.conf import settings

    # Persistent database connections, as a production server runs: without them every
    # request pays a new PostgreSQL backend (several ms).
    base_env = {**os.environ, "DB_CONN_MAX_AGE": os.environ.get("DB_CONN_MAX_AGE", "600")}
    pg_env = {**base_env, "DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE, "PYTHONPATH": str(ROOT)}
    per_client = {1: 150, 8: 60, 32: 25} if full else {1: 40, 8: 12, 32: 10}
    unknown = set(DATABASES) - {"postgresql", "sqlite"}
    if unknown:
        raise SystemExit(f"BENCH_QUEUE_DATABASES: unknown {', '.join(sorted(unknown))} (postgresql, sqlite)")
    results: dict[str, Any] = {
        "server": f"gunicorn {' '.join(GUNICORN_ARGS)} (loopback), DB_CONN_MAX_AGE=" + base_env["DB_CONN_MAX_AGE"],
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
    }
    if MODE not in ("databases", "qc"):
        raise SystemExit(f"BENCH_QUEUE_MODE: unknown {MODE!r} (databases, qc)")
    if MODE == "qc":
        results["mode"] = "qc: prefilter, PostgreSQL, without and with quality control"
        results["postgresql"] = _run_qc(pg_env, per_client)
        results["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
        results["double_leases_total"] = sum(
            run[qc]["double_leases"] + run[qc]["screens_submitted_twice_or_more"]
            for key, run in results["postgresql"].items()
            if not key.startswith("warmup")
            for qc in ("qc_off", "qc_on")
        )
        return results
    if "postgresql" in DATABASES:
        results["postgresql"] = _run_database("pg", pg_env, per_client, full)
    if "sqlite" in DATABASES:
        with tempfile.TemporaryDirectory(prefix="bench-queue-sqlite-") as tmp:
            sqlite_env = {k: v for k, v in base_env.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
            sqlite_env.update(
                {
                    "DJANGO_SETTINGS_MODULE": "annotation.settings.local",
                    "SCREENQA_DATA_DIR": tmp,
                    "PYTHONPATH": str(ROOT),
                }
            )
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                cwd=ROOT, env=sqlite_env, check=True, timeout=600,
            )  # fmt: skip
            results["sqlite"] = _run_database("sqlite", sqlite_env, per_client, full)
    results["load_average_after_servers"] = [round(v, 2) for v in os.getloadavg()]
    results["crowd_services"] = crowd_run(screens=300 if full else 30, annotators=8)
    results["double_leases_total"] = results["crowd_services"]["double_leases"] + sum(
        fig["double_leases"] + fig["screens_submitted_twice_or_more"]
        for db in DATABASES
        for fig in results[db].values()
    )
    return results


if __name__ == "__main__":
    _child_main(sys.argv[1:])
