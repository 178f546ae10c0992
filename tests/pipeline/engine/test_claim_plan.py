"""Issue 21: the claim's plan does not walk other projects' screens nor finished ones.

On PostgreSQL, with thousands of screens in another project (waiting in the same state) and
thousands of finished screens and questions in the caller's own project, ``EXPLAIN`` of every
stage's claim statement (the one ``pipeline.engine.services._claim`` compiles) must show an index
range scan of the queue index (``screen_queue``, ``screen_queue_not_answerable``,
``question_queue``) with the pivot's ``queue_key`` bound in its condition, no sequential scan and
no walk of the primary key over all rows, and ``EXPLAIN ANALYZE`` must read a handful of rows.

Both plans are checked: the custom plan of a statement run once, and the generic plan that a
prepared statement gets after a few runs (the claims are prepared: ``prepare_threshold``). A
generic plan cannot use a partial index whose predicate is a parameter; that is why the queue
indexes are whole ones led by the project and the state.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from psycopg.sql import Literal

from annotation.models import AssignmentStatus, QuestionState, ScreenState
from annotation.selectors.screens import candidates_aggregated
from pipeline.engine.services import _claim_build
from pipeline.stages.registry import stage_get
from tests.factories import ProjectFactory
from tests.pipeline.bulk import add_assignments, clone_questions, clone_screens
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the plans checked are PostgreSQL's"),
]

MANY = 6000  # per bulk of rows that must not be walked

_plan_names = itertools.count()


@pytest.fixture
def crowded(project):
    """``project`` with a few waiting units per stage, buried among many rows the claims must skip."""
    other = ProjectFactory(slug="other")
    for state in (ScreenState.PREFILTER, ScreenState.QUESTIONS_1, ScreenState.QUESTIONS_2):
        screens(project, 3, state=state, candidates=1)
        # another project's screens, waiting in the same state
        clone_screens(screens(other, 1, state=state, candidates=0)[0].pk, MANY, project_id=other.pk, state=state)
    sampled = screens(project, 3, state=ScreenState.ANSWERING, split="train", not_answerable_sampled=True)
    question = answering_question(sampled[0], needed=3)
    # the project's own finished screens (and answering ones not sampled for not-answerable),
    # each with an answered question
    template = screens(project, 1, state=ScreenState.NO_QUESTIONS, candidates=0)[0].pk
    for state in (ScreenState.NO_QUESTIONS, ScreenState.EXCLUDED, ScreenState.ANSWERING):
        clone_screens(template, MANY, project_id=project.pk, state=state)
    clone_questions(question.pk, ScreenState.ANSWERING, project.pk, QuestionState.ANSWERED)
    clone_questions(question.pk, ScreenState.NO_QUESTIONS, project.pk, QuestionState.KEPT)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_screen")
        cursor.execute("ANALYZE annotation_question")
        cursor.execute("ANALYZE annotation_assignment")
    return project


def _claim_sql(stage_name: str, project: Any, user: Any) -> tuple[str, list[Any]]:
    stage = stage_get(stage_name)
    build = _claim_build(stage, candidates_aggregated(), from_pivot=True)
    values = {"project": project, "user": user, "now": timezone.now(), "pivot": 2**30}
    queryset = build(values).select_for_update(skip_locked=True, of=("self",))[:1]
    sql, params = queryset.query.sql_with_params()
    return sql, list(params)


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found.extend(_nodes(child))
    return found


def _pg_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "bigint"
    if isinstance(value, datetime):
        return "timestamptz"
    return "unknown"


def _explain(sql: str, params: list[Any], *, generic: bool, analyze: bool = False) -> list[dict[str, Any]]:
    options = "FORMAT JSON, ANALYZE" if analyze else "FORMAT JSON"
    with connection.cursor() as cursor:
        if not generic:
            cursor.execute(f"EXPLAIN ({options}) {sql}", params)
        else:
            numbered = itertools.count(1)
            prepared = re.sub(r"%s", lambda _: f"${next(numbered)}", sql).replace("%%", "%")
            name = f"claim_plan_{next(_plan_names)}"
            types = ", ".join(_pg_type(p) for p in params)  # as psycopg sends them (a str: unknown)
            cursor.execute(f"PREPARE {name}({types}) AS {prepared}")
            cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            raw = cursor.connection  # literals: an outer parameter would be of unknown type
            arguments = ", ".join(Literal(str(p) if isinstance(p, str) else p).as_string(raw) for p in params)
            cursor.execute(f"EXPLAIN ({options}) EXECUTE {name}({arguments})")
        (document,) = cursor.fetchone()
        if generic:
            cursor.execute("SET LOCAL plan_cache_mode = auto")
            cursor.execute(f"DEALLOCATE {name}")
    document = document if isinstance(document, list) else json.loads(document)
    return _nodes(document[0]["Plan"])


QUEUES = {
    "prefilter": ("annotation_screen", "screen_queue"),
    "questions-1": ("annotation_screen", "screen_queue"),
    "questions-2": ("annotation_screen", "screen_queue"),
    "not-answerable": ("annotation_screen", "screen_queue_not_answerable"),
    "answers": ("annotation_question", "question_queue"),
}


@pytest.mark.parametrize("generic", [False, True], ids=["custom-plan", "generic-plan"])
@pytest.mark.parametrize("stage_name", list(QUEUES))
def test_the_claim_walks_only_the_projects_waiting_units_from_the_pivot(crowded, stage_name, generic):
    # given a project whose few waiting units are buried among thousands of another project's
    # waiting screens and thousands of its own finished screens and questions
    user = member(crowded, "ann")
    table, index = QUEUES[stage_name]
    sql, params = _claim_sql(stage_name, crowded, user)
    # when the claim statement is explained
    nodes = _explain(sql, params, generic=generic)
    # then the unit table is read through its queue index, bounded by the pivot's key: no
    # sequential scan of screens or questions, no walk of a primary key in id order
    scans = [n for n in nodes if n.get("Relation Name") == table]
    queue_scans = [n for n in scans if n.get("Index Name") == index]
    assert queue_scans, [(n["Node Type"], n.get("Index Name")) for n in scans]
    assert "queue_key" in queue_scans[0].get("Index Cond", ""), queue_scans[0]
    for node in nodes:
        if node.get("Relation Name") in ("annotation_screen", "annotation_question"):
            assert node["Node Type"] != "Seq Scan", node
            if node.get("Index Name", "").endswith("_pkey"):
                assert "Index Cond" in node, node  # a look-up of one row, not a walk


@pytest.mark.parametrize("stage_name", ["questions-1", "answers"])
def test_the_claim_reads_a_handful_of_rows_whatever_else_the_tables_hold(crowded, stage_name):
    # given the same crowded tables and a pivot before every key
    user = member(crowded, "ann")
    table, index = QUEUES[stage_name]
    sql, params = _claim_sql(stage_name, crowded, user)
    params = [0 if p == 2**30 else p for p in params]
    # when the claim runs under EXPLAIN ANALYZE (it locks the unit inside this test's transaction)
    nodes = _explain(sql, params, generic=True, analyze=True)
    # then its queue scan stopped after the first free unit: a few rows, not thousands
    (scan,) = [n for n in nodes if n.get("Relation Name") == table and n.get("Index Name") == index]
    assert scan["Actual Rows"] * scan["Actual Loops"] <= 5, scan
    assert scan.get("Rows Removed by Filter", 0) <= 5, scan


HISTORY = {
    # stage: (unit column, the SQL of the caller's past units, of the units others hold or ran out on)
    "questions-1": (
        "screen_id",
        "SELECT id FROM annotation_screen WHERE project_id = {project} AND state = 'no-questions'",
        "SELECT id FROM annotation_screen WHERE project_id = {other} AND state = 'questions-1'",
    ),
    "answers": (
        "question_id",
        "SELECT q.id FROM annotation_question q JOIN annotation_screen s ON s.id = q.screen_id"
        " WHERE s.project_id = {project} AND q.state = 'kept'",
        "SELECT q.id FROM annotation_question q JOIN annotation_screen s ON s.id = q.screen_id"
        " WHERE s.project_id = {project} AND q.state = 'answered'",
    ),
}


@pytest.mark.parametrize("statistics", ["as-when-empty", "fresh"])
@pytest.mark.parametrize("generic", [False, True], ids=["custom-plan", "generic-plan"])
@pytest.mark.parametrize("stage_name", list(HISTORY))
def test_the_claim_reads_only_the_claimed_units_assignments_whatever_the_annotators_history(
    crowded, stage_name, generic, statistics
):
    # given an annotator with thousands of items of the stage behind them among a crowd's (five
    # others' skipped items on the same units), and others' leases elsewhere (live ones, and run-out
    # ones not reclaimed yet); the planner's statistics of the assignments either taken when the
    # table was empty (a server whose autovacuum is off, as this machine's and CI's, or a table that
    # grew faster than it is analysed) or fresh
    user = member(crowded, "ann")
    crowd = [member(crowded, f"crowd-{n}") for n in range(5)]
    column, past, elsewhere = HISTORY[stage_name]
    other = crowded.__class__.objects.get(slug="other")
    ids = {"project": crowded.pk, "other": other.pk}

    def add(annotator, status, units, *, live=False):
        return add_assignments(
            project_id=crowded.pk,
            stage=stage_name,
            annotator_id=annotator.pk,
            status=status,
            units=units,
            unit_column=column,
            live=live,
        )

    done = add(user, AssignmentStatus.SUBMITTED, past.format(**ids))
    for someone in crowd:
        add(someone, AssignmentStatus.SKIPPED, past.format(**ids))
    held = elsewhere.format(**ids)
    live = add(crowd[0], AssignmentStatus.LEASED, f"{held} ORDER BY 1 LIMIT 50", live=True)
    run_out = add(crowd[1], AssignmentStatus.LEASED, f"{held} ORDER BY 1 DESC LIMIT 50")
    assert done >= MANY and live == run_out == 50
    if statistics == "fresh":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE annotation_assignment")
    sql, params = _claim_sql(stage_name, crowded, user)
    params = [0 if p == 2**30 else p for p in params]
    # when the claim runs under EXPLAIN ANALYZE
    nodes = _explain(sql, params, generic=generic, analyze=True)
    # then it read the claimed unit's own assignments (it has none) and looked for the caller's open
    # lease (none) in the index of open leases: never the caller's history (6,000 rows), the crowd's
    # (30,000) nor the other leases (100)
    scans = [n for n in nodes if n.get("Relation Name") == "annotation_assignment"]
    read = sum((n["Actual Rows"] + n.get("Rows Removed by Filter", 0)) * n["Actual Loops"] for n in scans)
    limit = 10
    assert read <= limit, [
        (n["Node Type"], n.get("Index Name"), n["Actual Rows"], n.get("Rows Removed by Filter"), n["Actual Loops"])
        for n in scans
    ]


def test_a_held_lease_is_still_skipped_from_the_pivot(project):
    # given two waiting screens, one leased by b
    from pipeline.engine.services import assignment_next

    a, b = member(project, "a"), member(project, "b")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    held = assignment_next(project=project, user=b, stage="questions-1")
    # when a asks for work
    got = assignment_next(project=project, user=a, stage="questions-1")
    # then a gets the other one
    assert got.screen_id != held.screen_id
    assert held.status == got.status == AssignmentStatus.LEASED
