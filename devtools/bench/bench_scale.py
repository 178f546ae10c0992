"""The lead pages at ScreenQA size (issue 21): a large project built quickly, then every lead page and
API timed, with its queries counted and its HTML weighed.

Building: the real crowd simulation (``devtools.crowd.crowd_simulate``, quality control on, a crowd of
careful, careless and spammer profiles) runs on a small template project; then the template is cloned
``copies`` times into the same project with set-based SQL (``clone``): one ``INSERT ... SELECT ... CROSS
JOIN generate_series`` per table, ids offset per copy, screens' and apps' names suffixed, and the
annotators mapped onto ``groups`` groups of new accounts (copy ``k`` is worked by group ``k % groups``),
so a full-size project (35,400 screens, 1,000 annotators, ~400k assignments) takes a minute or two instead
of hours. Then ``leases`` live leases are handed out on waiting screens, ``ANALYZE`` runs (as autovacuum
would), and the quality figures are computed once (the ``quality-figures`` job's work, timed).

Timing: in-process (Django's test client, the lead logged in), each page ``repeat`` times after one
warm-up request: p50 / p95 in ms, the queries of one request, the size of its body. PostgreSQL only (the
cloning uses ``generate_series``).

    python -m devtools.bench --only scale            # medium: 1/10 of full size
    python -m devtools.bench --only scale --full     # full ScreenQA size (make bench-full)
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, models, transaction
from django.db.models import Max, Min
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import (
    AnnotatorFigures,
    Answer,
    AnswerElement,
    App,
    Assignment,
    AssignmentStatus,
    Candidate,
    ControlResult,
    GoldItem,
    Membership,
    PrefilterJudgment,
    Project,
    Purpose,
    QualityEvent,
    Question,
    Review,
    Role,
    Screen,
    ScreenState,
    Stage,
    Standing,
)
from pipeline.analytics.stored import snapshot_refresh
from pipeline.quality.figures import quality_figures_refresh

SLUG = "bench-scale"
PROFILES = {"careful": 0.7, "careless": 0.1, "spammer": 0.2}


@dataclass(frozen=True)
class Size:
    template_screens: int
    template_annotators: int
    copies: int  # the template and copies - 1 clones of it
    groups: int  # groups of annotators (annotators = template_annotators * groups)
    waiting: int  # screens waiting in pre-filtering (template), for the live leases
    leases: int


FULL = Size(template_screens=30, template_annotators=8, copies=1180, groups=125, waiting=10, leases=500)
MEDIUM = Size(template_screens=30, template_annotators=8, copies=118, groups=13, waiting=10, leases=50)

# The cloned tables, each with the path from its rows to their project.
CLONED: list[tuple[type[models.Model], str]] = [
    (App, "project"),
    (Screen, "project"),
    (Candidate, "screen__project"),
    (Question, "screen__project"),
    (Assignment, "project"),
    (Answer, "question__screen__project"),
    (AnswerElement, "answer__question__screen__project"),
    (PrefilterJudgment, "screen__project"),
    (GoldItem, "project"),
    (ControlResult, "project"),
    (Review, "assignment__project"),
    (QualityEvent, "project"),
]
# One row per (project, user, ...): cloned for the groups of annotators only, not for every copy.
PER_USER: list[tuple[type[models.Model], str]] = [(Membership, "project"), (Standing, "project")]
SUFFIXED = {(Screen, "rico_id"), (App, "package")}


def template_build(*, slug: str, screens: int, annotators: int, waiting: int) -> Project:
    """A fresh project run through every stage by the simulated crowd with quality control, plus
    ``waiting`` screens left in pre-filtering."""
    from devtools.crowd import crowd_screens_create, crowd_simulate

    project_drop(slug)
    project = Project.objects.create(slug=slug, name="Scale benchmark")
    crowd_simulate(project=project, annotators=annotators, new_screens=screens, qc=True, profiles=PROFILES)
    if waiting:
        crowd_screens_create(project=project, count=waiting, seed=99)
    return project


def project_drop(slug: str) -> None:
    """Delete a (large) benchmark project with set-based SQL, its cloned accounts included."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        return
    users = list(Membership.objects.filter(project=project).values_list("user_id", flat=True))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        dropped: list[tuple[type[models.Model], str]] = [*reversed(CLONED), *PER_USER, (AnnotatorFigures, "project")]
        for model, path in dropped:
            ids = model._default_manager.filter(**{path: project}).order_by().values("pk")
            sql, params = ids.query.sql_with_params()
            cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE id IN ({sql})", params)  # noqa: S608
        project.delete()
        get_user_model().objects.filter(pk__in=users, username__contains="~").delete()


def _span(cursor: Any, model: type[models.Model]) -> int:
    cursor.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {model._meta.db_table}")  # noqa: S608
    return int(cursor.fetchone()[0])


def clone(*, project: Project, copies: int, groups: int, into: Project | None = None) -> dict[str, Any]:
    """Clone the project's rows ``copies - 1`` times into itself, or ``copies`` times into the project
    ``into`` (see the module's docstring)."""
    user_model = get_user_model()
    target = into or project
    first = 1 if into is not None else 0  # into another project: the template's own rows are a copy too
    lead_ids = set(Membership.objects.filter(project=project, role=Role.LEAD).values_list("user_id", flat=True))
    crowd = sorted(set(Membership.objects.filter(project=project).values_list("user_id", flat=True)) - lead_ids)
    crowd_list = ",".join(str(u) for u in crowd) or "NULL"
    started = time.perf_counter()
    rows: dict[str, int] = {}

    def q(name: str | None) -> str:
        return connection.ops.quote_name(name or "")

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        # copy k of a row: its id shifted past every id of the table, the template's ids packed (so a
        # thousand copies fit in a 32-bit id however many rows other projects have)
        spans: dict[Any, str] = {}
        for model, path in CLONED:
            found = model._default_manager.filter(**{path: project}).aggregate(lo=Min("pk"), hi=Max("pk"))
            lo, hi = found["lo"] or 0, found["hi"] or 0
            spans[model] = f"({_span(cursor, model) - lo} + (k - 1) * {hi - lo + 1})"
        user_span = _span(cursor, user_model)
        users_table = user_model._meta.db_table

        def user_of(column: str, k: str) -> str:  # copy k's annotator for a template annotator
            mapped = f"{column} + MOD({k}, {groups}) * {user_span}"
            return f"CASE WHEN {column} IN ({crowd_list}) THEN {mapped} ELSE {column} END"

        # the groups of annotators: accounts, memberships, standings
        user_fields = list(user_model._meta.concrete_fields)
        columns = ", ".join(q(f.column) for f in user_fields)
        values = ", ".join(
            f"u.id + g * {user_span}"
            if f.primary_key
            else f"u.username || '~' || (u.id + g * {user_span})"
            if f.name == "username"
            else f"u.{q(f.column)}"
            for f in user_fields
        )
        cursor.execute(
            f"INSERT INTO {users_table} ({columns}) SELECT {values} FROM {users_table} u "  # noqa: S608
            f"CROSS JOIN generate_series(1, {groups - 1}) g WHERE u.id IN ({crowd_list})"
        )
        rows["users"] = cursor.rowcount
        for model, path in PER_USER:
            fields = [f for f in model._meta.concrete_fields if not f.primary_key]
            ids = model._default_manager.filter(**{path: project}, user_id__in=crowd).order_by().values("pk")
            sql, params = ids.query.sql_with_params()
            table = model._meta.db_table
            picked = ", ".join(
                f"t.{q(f.column)} + g * {user_span}"
                if f.name == "user"
                else str(target.pk)
                if f.name == "project"
                else f"t.{q(f.column)}"
                for f in fields
            )
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(q(f.column) for f in fields)}) SELECT {picked} "  # noqa: S608
                f"FROM {table} t CROSS JOIN generate_series({1 - first}, {groups - 1}) g WHERE t.id IN ({sql})",
                params,
            )
            rows[table] = cursor.rowcount
        # every cloned table, all copies in one statement
        for model, path in CLONED:
            table = model._meta.db_table
            exprs, names = [], []
            for f in model._meta.concrete_fields:
                column = f"t.{q(f.column)}"
                names.append(q(f.column))
                related = f.related_model if f.is_relation else None
                if f.primary_key:
                    exprs.append(f"{column} + {spans[model]}")
                elif related is not None and related in spans:
                    exprs.append(f"{column} + {spans[related]}")
                elif related is user_model:
                    exprs.append(user_of(column, "k"))
                elif related is Project:
                    exprs.append(str(target.pk))
                elif (model, f.name) in SUFFIXED:
                    exprs.append(f"{column} || '~' || (t.id + {spans[model]})")
                else:
                    exprs.append(column)
            ids = model._default_manager.filter(**{path: project}).order_by().values("pk")
            sql, params = ids.query.sql_with_params()
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(exprs)} "  # noqa: S608
                f"FROM {table} t CROSS JOIN generate_series(1, {copies - 1 + first}) k WHERE t.id IN ({sql})",
                params,
            )
            rows[table] = cursor.rowcount
        for model in [*spans, user_model, *(m for m, _ in PER_USER)]:
            table = model._meta.db_table
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))"  # noqa: S608
            )
        if into is not None:  # the leads come along (they are not cloned)
            for user_id in lead_ids:
                Membership.objects.get_or_create(project=into, user_id=user_id, defaults={"role": Role.LEAD})
    return {"seconds": round(time.perf_counter() - started, 1), "rows": rows}


def leases_hand_out(*, project: Project, count: int) -> int:
    """``count`` live pre-filtering leases on waiting screens, each to a different annotator."""
    screens = list(
        Screen.objects.filter(project=project, state=ScreenState.PREFILTER).order_by("pk").values_list("pk", flat=True)
    )
    people = list(
        Membership.objects.filter(project=project, role=Role.ANNOTATOR)
        .order_by("user_id")
        .values_list("user_id", flat=True)
    )
    until = timezone.now() + timedelta(minutes=30)
    made = [
        Assignment(
            project=project,
            stage=Stage.PREFILTER,
            screen_id=screen,
            annotator_id=person,
            status=AssignmentStatus.LEASED,
            lease_expires_at=until,
            purpose=Purpose.WORK,
        )
        for screen, person in zip(screens[:count], people, strict=False)
    ]
    Assignment.objects.bulk_create(made)
    return len(made)


def pages(slug: str) -> dict[str, str]:
    """Every lead page and API, by name."""
    p, a = f"/projects/{slug}/", f"/api/projects/{slug}/"
    return {
        "quality": f"{p}quality/",
        "quality_sorted_median": f"{p}quality/?sort=-median",
        "quality_search": f"{p}quality/?q=nobody-by-this-name",
        "quality_api": f"{a}quality/",
        "leases": f"{p}leases/",
        "analysis": f"{p}analysis/",
        "analysis_api": f"{a}analysis/",
        "project": p,
        "project_screens_page": f"{p}?state=answering&page=2",
        "actions": f"{p}actions/",
        "gold": f"{p}quality/gold/",
        "gold_api": f"{a}quality/gold/",
    }


def _one(client: Client, url: str) -> tuple[float, Any]:
    started = time.perf_counter()
    response = client.get(url)
    return (time.perf_counter() - started) * 1000, response


def _figures(times: list[float], queries: int, response: Any) -> dict[str, Any]:
    times = sorted(times)
    return {
        "best_ms": round(times[0], 1),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
        "queries": queries,
        "bytes": len(response.content),
    }


def measure_projects(projects: list[Project], *, repeat: int) -> list[dict[str, Any]]:
    """Every lead page and API of each project (its lead logged in): one warm-up request, one with its
    queries counted, then ``repeat`` timed requests, the projects' requests interleaved so that the
    machine's load falls on every project alike. Per project and page: best / p50 / p95 ms, queries and
    bytes of one response."""
    if "testserver" not in settings.ALLOWED_HOSTS:  # the test client's host, outside the test runner
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    clients = []
    for project in projects:
        lead = Membership.objects.filter(project=project, role=Role.LEAD).select_related("user").first()
        assert lead is not None
        client = Client()
        client.force_login(lead.user)
        clients.append(client)
    results: list[dict[str, Any]] = [{} for _ in projects]
    for name in pages(""):
        urls = [pages(p.slug)[name] for p in projects]
        counted = []
        for client, url in zip(clients, urls, strict=True):
            assert client.get(url).status_code == 200, url
            with CaptureQueriesContext(connection) as queries:
                response = client.get(url)
            counted.append((len(queries), response))  # now: the next request resets the query log
        times: list[list[float]] = [[] for _ in projects]
        for _ in range(repeat):
            for i, (client, url) in enumerate(zip(clients, urls, strict=True)):
                times[i].append(_one(client, url)[0])
        for i, (n_queries, response) in enumerate(counted):
            results[i][name] = _figures(times[i], n_queries, response)
    return results


def measure_all(*, project: Project, repeat: int) -> dict[str, Any]:
    return measure_projects([project], repeat=repeat)[0]


def build(*, slug: str, size: Size) -> dict[str, Any]:
    started = time.perf_counter()
    template = template_build(
        slug=f"{slug}-template",
        screens=size.template_screens,
        annotators=size.template_annotators,
        waiting=size.waiting,
    )
    template_seconds = round(time.perf_counter() - started, 1)
    project_drop(slug)
    project = Project.objects.create(slug=slug, name="Scale benchmark")
    cloned = clone(project=template, copies=size.copies, groups=size.groups, into=project)
    leases = leases_hand_out(project=project, count=size.leases)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    started = time.perf_counter()
    refreshed = quality_figures_refresh(project=project)
    quality_seconds = round(time.perf_counter() - started, 1)
    jobs = {}
    for kind in ("analysis", "progress"):
        started = time.perf_counter()
        snapshot_refresh(project=project, kind=kind)
        jobs[f"{kind}_figures_job_seconds"] = round(time.perf_counter() - started, 1)
    return {
        "template_seconds": template_seconds,
        "clone": cloned,
        "live_leases": leases,
        "quality_figures_job_seconds": quality_seconds,
        "quality_figures_rows": refreshed["rows"],
        **jobs,
    }


def counts(project: Project) -> dict[str, int]:
    return {
        "screens": Screen.objects.filter(project=project).count(),
        "questions": Question.objects.filter(screen__project=project).count(),
        "answers": Answer.objects.filter(question__screen__project=project).count(),
        "assignments": Assignment.objects.filter(project=project).count(),
        "members": Membership.objects.filter(project=project).count(),
        "apps": App.objects.filter(project=project).count(),
        "gold": GoldItem.objects.filter(project=project).count(),
        "control_results": ControlResult.objects.filter(project=project).count(),
    }


def jobs_time(project: Project) -> dict[str, Any]:
    """The release's jobs on the benchmark project, each in a fresh process (time and peak RSS): post-processing
    (every question it can decide), short answers, the ScreenQA export (issue 21: "jobs at full size")."""
    from devtools.bench.bench_postprocess import _in_child
    from devtools.bench.bench_release import CHILD as EXPORT_CHILD
    from devtools.bench.bench_release import _run_child

    figures: dict[str, Any] = {}
    for kind in ("postprocess", "short-answers"):
        done = _in_child(kind, slug=project.slug)
        result = {k: v for k, v in done["result"].items() if isinstance(v, int | float)}
        figures[kind] = {"seconds": done["seconds"], "peak_rss_mb": done["peak_rss_mb"], **result}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "screenqa"
        done = _run_child(EXPORT_CHILD, project.slug, str(out), "screenqa")
        size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
        figures["export"] = {"seconds": done["seconds"], "peak_rss_mb": done["peak_rss_mb"], "bytes": size}
    return figures


def run(full: bool) -> dict[str, Any]:
    size = FULL if full else MEDIUM
    # The project page reads its stored counts from SCREENQA_STORED_FIGURES_MIN_SCREENS screens (5,000): the
    # full size is above it; the CI size is measured the same way
    settings.SCREENQA_STORED_FIGURES_MIN_SCREENS = 1
    built = build(slug=SLUG, size=size)
    project = Project.objects.get(slug=SLUG)
    return {
        "size": size.__dict__,
        "built": built,
        "counts": counts(project),
        "pages": measure_all(project=project, repeat=20),
        # BENCH_SCALE_JOBS=0 leaves them out (they take minutes at full size)
        "jobs": jobs_time(project) if os.environ.get("BENCH_SCALE_JOBS", "1") != "0" else None,
    }
