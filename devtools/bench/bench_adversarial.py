"""The adversarial crowd benchmark (issue 20, "Proof"; ``devtools/adversary.py``): scripted careful
workers, spammers of six kinds, a spam writer and a rubber-stamp reviewer work a project over the
real HTTP API of gunicorn, on PostgreSQL and on the embedded SQLite default, from pre-filtering
to post-processing; then careful workers alone do a fixed number of pre-filtering items each (the
soak). Each database runs in a child process with the server's settings (as ``bench_queue``).

Figures per database: careful workers paused (main run and soak), each spammer's items after
turning until a rule stopped it, spam items in the release after post-processing (pre-filtering
judgments that still count, with the screens they excluded or let through and the apps they made
non-English; the spam writer's kept questions; spam answers kept), the tell-based skippers'
precision and recall at finding control items against chance, and ``next`` latency. ``targets``:
issue 20's bars, each true or false.

CI size (``make bench``): 60 screens, 5 careful workers, a soak of 6 x 60 items; ``--full``
(``make bench-full``): 160 screens, 8 careful workers, a soak of 20 x 200 items.
``BENCH_ADVERSARIAL_DATABASES``: which databases (default ``postgresql,sqlite``);
``BENCH_ADVERSARIAL_GUNICORN``: the server's options (default 2 processes of 2 threads);
``BENCH_ADVERSARIAL_SEEDS``: the crowd's seeds, comma-separated (default ``0``): each seed is a run of
its own on each database (another crowd, other screens, other draws), reported under ``runs``; the
figures of the first seed stay at the top level as before; ``BENCH_ADVERSARIAL_SETTINGS``: project
settings as a JSON object (for example ``{"provisional_work": "strict", "provisional_confirmations": 2}``;
default: none), set by the lead over the settings API before the crowd starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

from .bench_queue import ROOT, Server

GUNICORN = os.environ.get("BENCH_ADVERSARIAL_GUNICORN", "-w 2 -k gthread --threads 2 --timeout 120")
DATABASES = tuple(os.environ.get("BENCH_ADVERSARIAL_DATABASES", "postgresql,sqlite").split(","))
SEEDS = tuple(int(seed) for seed in os.environ.get("BENCH_ADVERSARIAL_SEEDS", "0").split(","))
SETTINGS = json.loads(os.environ.get("BENCH_ADVERSARIAL_SETTINGS") or "{}")


def _child_main(size: str, slug: str, seed: str = "0") -> None:
    import django

    django.setup()
    from devtools.adversary import SIZES, adversarial_run

    # One client at a time (the crowd works in turns): two processes suffice; a loaded machine is slow to start them.
    with Server(dict(os.environ), args=GUNICORN.split(), start_seconds=300) as server:
        out = adversarial_run(
            base_url=f"http://127.0.0.1:{server.port}",
            slug=slug,
            size=SIZES[size],
            seed=int(seed),
            settings=SETTINGS,
        )
    print(json.dumps(out))


def targets(out: dict[str, Any]) -> dict[str, Any]:
    """Issue 20's bars on one database's figures."""
    stops, listed_stops = [], []
    for name, per in out["spammers"].items():
        for stage, row in per.items():
            if stage in ("prefilter", "answers") and name not in ("spam-writer", "sly-writer", "rubber-stamp"):
                stops.append(row)
                if name != "cherry-picker":
                    listed_stops.append(row)

    def within_20(row: dict[str, Any]) -> bool:
        # a hit-and-run worker that leaves within 20 items meets it too: its work is the release's concern
        return (row["stopped"] and (row["spam_before_stopped"] or 0) <= 20) or (row["left"] and row["spam"] <= 20)

    soak = out.get("soak") or {}
    tells = out["tells"].values()
    return {
        "careful_paused_at_most_2_percent": (out["careful"]["share_paused"] or 0) <= 0.02
        and (soak.get("share_paused") or 0) <= 0.02,
        "random_and_constant_stopped_by_qualification": all(
            row["stopped_by"] == "qualification-failed"
            for name in ("random", "constant")
            for row in out["spammers"].get(name, {}).values()
        ),
        "every_spammer_stopped_within_20_items_of_turning": all(within_20(row) for row in stops),
        # the same without the cherry-picker (this benchmark's own addition; see below)
        "listed_spammers_stopped_within_20_items_of_turning": all(within_20(row) for row in listed_stops),
        "spam_writer_stopped": all(row["stopped"] for row in out["spammers"].get("spam-writer", {}).values()),
        # a writing stage has no gold: the sly writer is stopped by the reviews of its sampled sets
        # (``review-rejections``), or its nonsense held out of the release
        "sly_writer_stopped_or_kept_out": out["spam_in_release"]["postprocessed"]
        and out["spam_in_release"]["questions_from_sly_writer"] == 0,
        "rubber_stamp_stopped": all(row["stopped"] for row in out["spammers"].get("rubber-stamp", {}).values()),
        "no_spam_in_release": out["spam_in_release"]["postprocessed"] and out["spam_in_release"]["total"] == 0,
        # the workers (the cherry-picker is this benchmark's own addition): no wrong item of theirs
        # in the release that nobody corroborates, and no spam writer's question
        "no_wrong_uncorroborated_spam_of_the_listed_workers": out["spam_in_release"]["postprocessed"]
        and out["spam_in_release"]["questions_from_spam_writer"] == 0
        and out["spam_in_release"]["questions_from_sly_writer"] == 0
        and not set(out["spam_in_release"]["uncorroborated_wrong_by_worker"]) - {"cherry-picker"},
        "skippers_no_better_than_chance": all(
            t["precision"] is None or t["chance_precision"] is None or t["precision"] <= t["chance_precision"] + 0.1
            for t in tells
        ),
    }


def run(full: bool = False) -> dict[str, Any]:
    from django.conf import settings

    size = "full" if full else "ci"
    stamp = int(time.time())
    base_env = {**os.environ, "DB_CONN_MAX_AGE": "600", "PYTHONPATH": str(ROOT)}
    results: dict[str, Any] = {"size": size, "load_average_at_start": [round(v, 2) for v in os.getloadavg()]}
    for seed, db in ((seed, db) for seed in SEEDS for db in DATABASES):
        with tempfile.TemporaryDirectory(prefix=f"bench-adv-{db}-") as tmp:
            if db == "postgresql":
                env = {**base_env, "DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE}
            elif db == "sqlite":
                env = {k: v for k, v in base_env.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
                env.update({"DJANGO_SETTINGS_MODULE": "annotation.settings.local", "SCREENQA_DATA_DIR": tmp})
                subprocess.run(
                    [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                    cwd=ROOT, env=env, check=True, timeout=600,
                )  # fmt: skip
            else:
                raise SystemExit(f"BENCH_ADVERSARIAL_DATABASES: unknown {db!r} (postgresql, sqlite)")
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "devtools.bench.bench_adversarial", size, f"adv-{db[:2]}-{seed}-{stamp}",
                 str(seed)],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=7200, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise RuntimeError(f"adversarial bench on {db} failed: {done.stderr[-3000:]}")
            out = json.loads(done.stdout.strip().splitlines()[-1])
            out["wall_seconds"] = round(time.perf_counter() - started, 1)
            out["targets"] = targets(out)
            out["seed"] = seed
            out["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
            if seed == SEEDS[0]:
                results[db] = out
            results.setdefault("runs", []).append(out)
    results["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    return results


if __name__ == "__main__":
    _child_main(*sys.argv[1:])
