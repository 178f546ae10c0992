"""Issue 21: the gold page's list of items is a walk of ``gold_list``, and its promotable submissions a
walk of ``assignment_submitted_newest`` that stops after the page's rows, not a sort of every submission
of the project.

On PostgreSQL, with thousands of submitted prefilter judgments in the project (and as many in
another project, and leases that are not submissions), ``EXPLAIN ANALYZE`` of
``gold_promotable_query`` must read the partial index newest first and stop after a page: no sort
node over the submissions and no sequential scan of the assignments.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, GoldItem, Purpose, Screen, ScreenState
from pipeline.quality.gold import gold_promotable, gold_promotable_query
from pipeline.quality.report import gold_stat_rows
from tests.factories import ProjectFactory
from tests.pipeline.bulk import clone_screens
from tests.pipeline.stages.helpers import member, screens

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the plan checked is PostgreSQL's"),
]

MANY = 3000


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found.extend(_nodes(child))
    return found


def _submissions(project, user, *, status=AssignmentStatus.SUBMITTED) -> int:
    """A prefilter submission of ``user`` on every screen of ``project``, a second apart."""
    now = timezone.now()
    ids = list(project.screens.values_list("pk", flat=True))
    Assignment.objects.bulk_create(
        Assignment(
            project=project,
            annotator=user,
            stage="prefilter",
            screen_id=screen_id,
            status=status,
            purpose=Purpose.WORK,
            lease_expires_at=now,
            submitted_at=now - timedelta(seconds=i) if status == AssignmentStatus.SUBMITTED else None,
        )
        for i, screen_id in enumerate(ids)
    )
    return len(ids)


def test_the_promotable_submissions_walk_the_newest_index_and_stop_after_a_page(project):
    # given thousands of submitted judgments in this project and in another, and leases
    judge, leaser = member(project, "judge"), member(project, "leaser")
    (template,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    clone_screens(template.pk, MANY, project_id=project.pk, state=ScreenState.QUESTIONS_1)
    other = ProjectFactory(slug="other")
    (far,) = screens(other, 1, state=ScreenState.QUESTIONS_1)
    clone_screens(far.pk, MANY, project_id=other.pk, state=ScreenState.QUESTIONS_1)
    assert _submissions(project, judge) == MANY + 1
    _submissions(other, judge)
    _submissions(project, leaser, status=AssignmentStatus.LEASED)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_assignment")
        cursor.execute("ANALYZE annotation_screen")
    limit = 50
    # when the gold page's statement is explained, run
    query = gold_promotable_query(project=project, stage="prefilter", limit=limit)
    (plan,) = json.loads(query.explain(format="json", analyze=True))
    nodes = _nodes(plan["Plan"])
    # then the partial index is read newest first, a page of rows and no more, and nothing is sorted
    walks = [n for n in nodes if n.get("Index Name") == "assignment_submitted_newest"]
    assert walks, [(n["Node Type"], n.get("Index Name"), n.get("Relation Name")) for n in nodes]
    assert walks[0]["Actual Rows"] <= 2 * limit
    assert not [n for n in nodes if n["Node Type"] == "Sort"], [n["Node Type"] for n in nodes]
    assert not [n for n in nodes if n["Node Type"] == "Seq Scan" and n["Relation Name"] == "annotation_assignment"]
    # and the page holds this project's newest submissions
    found = gold_promotable(project=project, stage="prefilter", limit=limit)
    assert len(found) == limit and {a.project_id for a in found} == {project.pk}
    times = [a.submitted_at for a in found]
    assert times == sorted(times, reverse=True)


def test_the_gold_list_walks_its_index_and_stops_after_a_page(project):
    # given thousands of gold items in this project and in another (at full size the sort of every item spilled
    # to disk: 50 ms of the gold page)
    (template,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    clone_screens(template.pk, MANY, project_id=project.pk, state=ScreenState.QUESTIONS_1)
    other = ProjectFactory(slug="other")
    (far,) = screens(other, 1, state=ScreenState.QUESTIONS_1)
    clone_screens(far.pk, MANY, project_id=other.pk, state=ScreenState.QUESTIONS_1)
    answer = {"non_english_app": False, "vh_out_of_sync": False}
    GoldItem.objects.bulk_create(
        GoldItem(project_id=screen.project_id, stage="prefilter", screen=screen, answer=answer)
        for screen in Screen.objects.all()
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_golditem")
    # when the gold page's statement is explained, run, for its first page
    limit = 50
    query = gold_stat_rows(project=project)[:limit]
    (plan,) = json.loads(query.explain(format="json", analyze=True))
    nodes = _nodes(plan["Plan"])
    # then the list index is read in order, a page of rows and no more, and nothing is sorted
    walks = [n for n in nodes if n.get("Index Name") == "gold_list"]
    assert walks, [(n["Node Type"], n.get("Index Name"), n.get("Relation Name")) for n in nodes]
    assert walks[0]["Actual Rows"] <= 2 * limit
    assert not [n for n in nodes if n["Node Type"] in ("Sort", "Incremental Sort")], [n["Node Type"] for n in nodes]
    assert [g.project_id for g in query] == [project.pk] * limit
