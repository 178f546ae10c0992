"""Statements compiled once (``annotation.db.compiled``): same rows as the ORM, for any values."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.db import compiled
from annotation.models import Assignment, AssignmentStatus, Candidate, Screen
from tests.factories import CandidateFactory, ProjectFactory, ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


def leases(values):
    return (
        Assignment.objects.filter(
            project=values["project"],
            annotator_id=values["user_id"],
            stage=values["stage"],
            lease_expires_at__gt=values["now"],
        )
        .order_by("pk")
        .values_list("pk", "draft", "lease_expires_at")
    )


def lease(project, user, screen, *, minutes=30, draft=None):
    return Assignment.objects.create(
        project=project,
        stage="questions-1",
        screen=screen,
        annotator=user,
        status=AssignmentStatus.LEASED,
        lease_expires_at=timezone.now() + timedelta(minutes=minutes),
        draft=draft or {},
    )


@pytest.fixture
def world():
    project = ProjectFactory()
    a, b = UserFactory(username="a"), UserFactory(username="b")
    s1, s2 = ScreenFactory(project=project), ScreenFactory(project=project)
    return project, a, b, lease(project, a, s1, draft={"q": ["x"]}), lease(project, b, s2, minutes=-1)


def test_rows_match_the_orm_for_every_value_and_the_statement_is_cached(world):
    # given leases of two annotators (one run out) and an empty cache
    project, a, b, mine, _theirs = world
    compiled.forget(("first", "test-leases"))
    now = timezone.now()
    for user, expected in ((a, mine), (b, None), (a, mine)):
        values = {"project": project, "user_id": user.pk, "stage": "questions-1", "now": now}
        # when the first live lease is fetched through the compiled statement
        row = compiled.fetch_one(key="test-leases", build=leases, values=values)
        # then it is the ORM's row, JSON decoded, with the real values (not the stand-ins)
        orm = leases(values).first()
        assert row == (tuple(orm) if orm else None)
        assert (row[0], row[1]) == (expected.pk, {"q": ["x"]}) if expected else row is None
    assert compiled.is_cached(("first", "test-leases"))


def test_a_key_that_does_not_fix_the_shape_is_never_cached_and_stays_correct(world):
    # given a build whose SQL depends on a value that is not part of the key
    project, a, b, mine, theirs = world
    compiled.forget(("first", "test-shape"))

    def build(values):
        qs = Assignment.objects.filter(project=values["project"])
        if values["user_id"] == a.pk:
            qs = qs.filter(annotator_id=values["user_id"])
        return qs.order_by("-pk").values_list("pk")

    # when it runs with both shapes
    first = compiled.fetch_one(key="test-shape", build=build, values={"project": project, "user_id": a.pk})
    second = compiled.fetch_one(key="test-shape", build=build, values={"project": project, "user_id": b.pk})
    # then each answer is right and nothing wrong was cached
    assert first == (mine.pk,)
    assert second == (theirs.pk,)
    assert not compiled.is_cached(("first", "test-shape"))


def test_booleans_must_be_declared_inputs(world):
    project = world[0]
    compiled.forget(("first", "test-bool"))
    with pytest.raises(TypeError, match="declare it as an input"):
        compiled.fetch_one(
            key="test-bool",
            build=lambda v: Screen.objects.filter(project=v["project"], not_answerable_sampled=v["flag"]),
            values={"project": project, "flag": True},
        )


def test_fetch_all_and_exists(world):
    _project, _a, _b, mine, theirs = world
    screen = mine.screen
    CandidateFactory(screen=screen, vh_index=2, text="two")
    CandidateFactory(screen=screen, vh_index=1, text="one")

    def build(values):
        return Candidate.objects.filter(screen_id=values["screen_id"]).order_by("vh_index").values_list("text")

    assert compiled.fetch_all(key="test-all", build=build, values={"screen_id": screen.pk}) == [("one",), ("two",)]
    assert compiled.fetch_all(key="test-all", build=build, values={"screen_id": theirs.screen_id}) == []
    assert compiled.exists(key="test-exists", build=build, values={"screen_id": screen.pk}) is True
    assert compiled.exists(key="test-exists", build=build, values={"screen_id": theirs.screen_id}) is False


def test_insert_writes_like_save(world):
    # given a new lease object with defaults and auto_now fields left to the model
    project, a, b, mine, theirs = world
    before = timezone.now()
    new = Assignment(
        project=project,
        stage="prefilter",
        screen=theirs.screen,
        annotator=a,
        lease_expires_at=before + timedelta(minutes=5),
    )
    # when it is inserted twice over (two rows)
    compiled.insert(new)
    other = compiled.insert(
        Assignment(project=project, stage="prefilter", screen=mine.screen, annotator=b, lease_expires_at=before)
    )
    # then both rows read back as save() would have written them
    assert new.pk and other.pk and new.pk != other.pk
    assert not new._state.adding
    stored = Assignment.objects.get(pk=new.pk)
    assert (stored.status, stored.draft, stored.submission, stored.skip_reason) == ("leased", {}, None, "")
    assert stored.created_at >= before and stored.created_at == new.created_at
    assert Assignment.objects.get(pk=other.pk).annotator_id == b.pk


def test_update_writes_the_named_fields_like_save_and_nothing_else(world):
    # given two saved assignments, one changed in memory in the fields named and one more
    _project, _a, _b, mine, theirs = world
    untouched = Assignment.objects.get(pk=theirs.pk)
    before = timezone.now()
    mine.status, mine.submission, mine.draft = "submitted", {"questions": ["What is 'it'?"]}, {}
    mine.submitted_at, mine.skip_reason = before, "not named: not written"
    # when the named fields are written
    written = compiled.update(mine, ("status", "submission", "submitted_at", "draft", "updated_at"))
    # then the row holds them (JSON as JSON, auto_now moved on), the unnamed field and the other row as before
    stored = Assignment.objects.get(pk=mine.pk)
    assert written == 1
    assert (stored.status, stored.submission, stored.draft) == ("submitted", {"questions": ["What is 'it'?"]}, {})
    assert stored.skip_reason == "" and stored.updated_at >= before and stored.updated_at == mine.updated_at
    assert Assignment.objects.get(pk=theirs.pk).updated_at == untouched.updated_at
    # and a row that is gone writes nothing (the caller says so, as save() raises)
    Assignment.objects.filter(pk=mine.pk).delete()
    assert compiled.update(mine, ("status",)) == 0


def test_add_to_adds_to_the_rows_the_filter_names_only(world):
    from annotation.models import Standing

    project, a, b, _mine, _theirs = world
    for user, stage in ((a, "prefilter"), (a, "answers"), (b, "prefilter")):
        Standing.objects.create(project=project, user=user, stage=stage, status="active")
    assert compiled.add_to(Standing, "items_done", 1, project_id=project.pk, user_id=a.pk, stage="prefilter") == 1
    assert compiled.add_to(Standing, "items_done", 2, project_id=project.pk, user_id=a.pk, stage="prefilter") == 1
    assert compiled.add_to(Standing, "items_done", 1, project_id=project.pk, user_id=a.pk, stage="review") == 0
    assert sorted(Standing.objects.values_list("user_id", "stage", "items_done")) == sorted(
        [(a.pk, "prefilter", 3), (a.pk, "answers", 0), (b.pk, "prefilter", 0)]
    )


def judges(values):
    """A build whose SQL depends on a project setting (one judge or several)."""
    screens = Screen.objects.filter(project=values["project"])
    if values["project"].prefilter_judgments > 1:
        screens = screens.filter(not_answerable_sampled=False)
    return screens.order_by("pk").values_list("pk")


def test_declared_inputs_key_the_sql_so_two_projects_never_share_it(world):
    # given two projects whose settings give different SQL, each with a screen
    one, several = ProjectFactory(prefilter_judgments=1), ProjectFactory(prefilter_judgments=3)
    s1 = ScreenFactory(project=one)
    ScreenFactory(project=several, not_answerable_sampled=True)
    compiled.forget("test-judges")
    inputs = {"project": ("prefilter_judgments",)}
    # when the statement runs for both, the setting declared as an input
    rows = [
        compiled.fetch_all(key="test-judges", build=judges, values={"project": p}, inputs=inputs)
        for p in (one, several)
    ]
    # then each project gets its own SQL, both cached, and the right rows
    assert rows == [[(s1.pk,)], []]
    assert compiled.is_cached("test-judges", {"project": one}, inputs)
    assert compiled.is_cached("test-judges", {"project": several}, inputs)


def test_an_undeclared_input_is_refused_by_name_before_any_sql_is_kept(world):
    # given the same build, its setting not declared
    one = ProjectFactory(prefilter_judgments=3)
    compiled.forget("test-undeclared")
    # when it runs, then the read of the undeclared setting fails at once, naming it, and nothing is kept
    with pytest.raises(compiled.UndeclaredInput, match=r"Project\.prefilter_judgments"):
        compiled.fetch_all(key="test-undeclared", build=judges, values={"project": one})
    assert not compiled.is_cached("test-undeclared", {"project": one})


def test_compiled_statements_run_on_the_database_in_use(world):
    # the same statements compile and convert rows on any backend (the embedded default is SQLite)
    project, a, _b, mine, _theirs = world
    values = {"project": project, "user_id": a.pk, "stage": "questions-1", "now": timezone.now()}
    row = compiled.fetch_one(key="test-any", build=leases, values=values)
    assert row[0] == mine.pk and row[1] == {"q": ["x"]} and row[2] == mine.lease_expires_at
    assert compiled.is_cached(("first", "test-any"))
    assert connection.vendor in {"postgresql", "sqlite"}


def test_an_inline_constant_is_written_into_the_sql_and_refuses_anything_but_a_plain_word():
    # given a filter on a constant written inline (what lets a generic plan use a partial index)
    from annotation.db.compiled import Inline
    from annotation.models import Assignment

    sql, params = Assignment.objects.filter(status=Inline("leased")).query.sql_with_params()
    # then the value is in the text, not among the parameters
    assert "= 'leased'" in sql and "leased" not in params
    # and only plain words are taken: quotes, spaces or anything else cannot reach the SQL
    for hostile in ("leased' OR '1'='1", "a b", "", "x;", 3):
        with pytest.raises(ValueError):
            Inline(hostile)  # type: ignore[arg-type]
