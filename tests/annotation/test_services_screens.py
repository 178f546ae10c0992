"""The screen write service: batches, idempotency, no half-imported screen, storage failures."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.db import connection

from annotation.exceptions import ApplicationError
from annotation.models import App, Candidate, Project, Screen
from annotation.services.screens import ScreenData, project_get_or_create, screen_create_batch
from annotation.vh import CandidateData
from tests.factories import png_bytes

pytestmark = pytest.mark.django_db


def candidate(vh_index: int, left: int = 0, right: int = 10) -> CandidateData:
    return CandidateData(
        vh_index=vh_index,
        left=left,
        top=0,
        right=right,
        bottom=10,
        class_name="android.widget.TextView",
        type="text",
        text=f"t{vh_index}",
        content_desc="",
        resource_id="",
    )


def screen_data(rico_id: str, *, package: str = "com.example", candidates=None, sha: str = "") -> ScreenData:
    return ScreenData(
        rico_id=rico_id,
        app_package=package,
        activity_name=f"{package}/.Main",
        image_bytes=png_bytes(9, 16),
        image_ext="png",
        width=9,
        height=16,
        vh_text=json.dumps({"activity_name": f"{package}/.Main", "activity": {"root": {}}}),
        content_sha256=sha or f"{rico_id:0>64}",
        candidates=candidates if candidates is not None else [candidate(1), candidate(2)],
        name=f"dir/{rico_id}",
    )


def test_project_get_or_create_creates_once():
    first = project_get_or_create(slug="rico-import")
    again = project_get_or_create(slug="rico-import")
    assert first.pk == again.pk
    assert (first.name, first.device_width, first.device_height) == ("rico-import", 1440, 2560)
    assert Project.objects.filter(slug="rico-import").count() == 1


@pytest.mark.parametrize("slug", ["", "Has Space", "UPPER", "x" * 65, "a/b"])
def test_project_get_or_create_refuses_bad_slugs(slug):
    with pytest.raises(ApplicationError, match="Invalid project slug"):
        project_get_or_create(slug=slug)
    assert not Project.objects.exists()


def test_batch_writes_screens_candidates_apps_and_images(project):
    # when a batch of three screens of two apps is written
    result = screen_create_batch(
        project=project, screens=[screen_data("1"), screen_data("2"), screen_data("3", package="org.other")]
    )
    # then every screen is there with its candidates, app and stored image
    assert sorted(result.created) == ["1", "2", "3"]
    assert result.already_present == [] and result.failed == []
    screen = Screen.objects.get(project=project, rico_id="3")
    assert screen.app.package == "org.other"
    assert screen.image.name == "screens/demo/3.png"
    assert default_storage.exists("screens/demo/3.png")
    assert list(screen.candidates.values_list("vh_index", "text")) == [(1, "t1"), (2, "t2")]
    assert screen.vh == {"activity_name": "org.other/.Main", "activity": {"root": {}}}  # stored as jsonb
    assert App.objects.filter(project=project).count() == 2


def test_batch_query_count_does_not_grow_with_the_batch(project, django_assert_max_num_queries):
    with django_assert_max_num_queries(9):
        screen_create_batch(project=project, screens=[screen_data(str(i)) for i in range(5)])
    with django_assert_max_num_queries(9):
        screen_create_batch(project=project, screens=[screen_data(str(i)) for i in range(100, 180)])
    assert Screen.objects.filter(project=project).count() == 85


def test_rewriting_the_same_screens_changes_nothing(project):
    screen_create_batch(project=project, screens=[screen_data("1")])
    before = Screen.objects.get(rico_id="1")
    result = screen_create_batch(project=project, screens=[screen_data("1")])
    assert (result.created, result.already_present, result.failed) == ([], ["1"], [])
    after = Screen.objects.get(rico_id="1")
    assert (after.pk, after.image.name) == (before.pk, before.image.name)
    assert Candidate.objects.filter(screen=after).count() == 2
    assert sorted(p.name for p in Path(default_storage.path("screens/demo")).iterdir()) == ["1.png"]


def test_same_id_with_other_content_is_refused_not_replaced(project):
    screen_create_batch(project=project, screens=[screen_data("1", sha="a" * 64)])
    result = screen_create_batch(project=project, screens=[screen_data("1", sha="b" * 64)])
    assert result.created == [] and result.already_present == []
    assert result.failed == [("1", "id 1 is already in the project with different content; not replaced")]
    assert Screen.objects.get(rico_id="1").content_sha256 == "a" * 64


def test_a_screen_the_database_refuses_fails_alone_and_leaves_nothing(project):
    # given a batch where one screen has a candidate without area (a DB check constraint)
    bad = screen_data("bad", candidates=[candidate(1), candidate(2, left=5, right=5)])
    # when the batch is written
    result = screen_create_batch(project=project, screens=[screen_data("1"), bad, screen_data("2")])
    # then the others are imported, the bad one is reported and left no row, candidate or file
    assert sorted(result.created) == ["1", "2"]
    assert [rico_id for rico_id, _ in result.failed] == ["bad"]
    assert "candidate_positive_area" in result.failed[0][1]
    assert not Screen.objects.filter(rico_id="bad").exists()
    assert Candidate.objects.count() == 4
    assert not default_storage.exists("screens/demo/bad.png")
    # the per-screen retry stores the same things as the batch path
    assert Screen.objects.get(rico_id="1").vh == {"activity_name": "com.example/.Main", "activity": {"root": {}}}


def test_a_failed_storage_write_fails_that_screen_only(project, settings):
    # given: the project's image folder cannot be created (a file is in the way)
    media = Path(settings.MEDIA_ROOT)
    (media / "screens").mkdir(parents=True)
    (media / "screens" / "demo").write_text("not a folder")
    other = Project.objects.create(slug="other", name="other")
    # when both projects import a screen
    failed = screen_create_batch(project=project, screens=[screen_data("1")])
    fine = screen_create_batch(project=other, screens=[screen_data("1")])
    # then the screen whose image could not be stored is rejected and not half-written
    assert failed.created == [] and failed.failed[0][0] == "1"
    assert failed.failed[0][1].startswith("could not store the image")
    assert not Screen.objects.filter(project=project).exists()
    assert fine.created == ["1"]


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_imports_of_the_same_ids_write_each_screen_once():
    # given two threads importing the same 30 screens at the same moment
    project = Project.objects.create(slug="race", name="race")
    screens = [screen_data(str(i)) for i in range(30)]
    barrier = threading.Barrier(2)
    results = []

    def work():
        try:
            barrier.wait()
            results.append(screen_create_batch(project=project, screens=screens))
        finally:
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # then each id is created exactly once and the other import reports it as present
    created = [r for result in results for r in result.created]
    present = [r for result in results for r in result.already_present]
    assert sorted(created) == sorted(s.rico_id for s in screens)
    assert sorted(present) == sorted(s.rico_id for s in screens)
    assert all(result.failed == [] for result in results)
    assert Screen.objects.filter(project=project).count() == 30
    assert Candidate.objects.filter(screen__project=project).count() == 60
    for screen in Screen.objects.filter(project=project):
        assert default_storage.exists(screen.image.name)


def test_hidden_text_fill_gives_old_candidates_their_hidden_childrens_text(project):
    from django.core.management import call_command

    from annotation.services.screens import candidates_hidden_text_fill
    from tests.factories import CandidateFactory, ProjectFactory, ScreenFactory

    # given a screen stored before the rule: its price row (node 1) has no text while its hidden
    # children hold "$58.92" and "Local pickup"; an icon with a content-desc; a plain leaf
    hidden = {"visible-to-user": False, "bounds": [0, 0, 10, 10]}
    root = {
        "class": "root",
        "children": [
            {
                "class": "row",
                "bounds": [0, 0, 100, 10],
                "children": [{**hidden, "text": "$58.92"}, {**hidden, "text": "Local pickup"}],
            },
            {
                "class": "icon",
                "bounds": [0, 0, 10, 10],
                "content-desc": ["Menu"],
                "children": [{**hidden, "text": "x"}],
            },
            {"class": "leaf"},
        ],
    }
    screen = ScreenFactory(project=project, vh={"activity": {"root": root}})
    row = CandidateFactory(screen=screen, vh_index=1, text="", content_desc="")
    icon = CandidateFactory(screen=screen, vh_index=4, text="", content_desc="Menu")
    leaf = CandidateFactory(screen=screen, vh_index=6, text="", content_desc="")
    other = ScreenFactory(project=ProjectFactory(slug="other"), vh={"activity": {"root": root}})
    elsewhere = CandidateFactory(screen=other, vh_index=1, text="", content_desc="")
    # when the fill runs for the project
    assert candidates_hidden_text_fill(project=project) == 1
    # then only the row took its children's text; the other project waits for its own run
    assert [Candidate.objects.get(pk=c.pk).text for c in (row, icon, leaf, elsewhere)] == [
        "$58.92 Local pickup",
        "",
        "",
        "",
    ]
    # and a re-run finds nothing more; the command covers every project
    assert candidates_hidden_text_fill(project=project) == 0
    call_command("fill_hidden_text")
    assert Candidate.objects.get(pk=elsewhere.pk).text == "$58.92 Local pickup"
