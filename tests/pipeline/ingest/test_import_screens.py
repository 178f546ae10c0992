"""import_screens on every kind of source: folder, zip path, zip stream, storage prefix, traces."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotation.exceptions import ApplicationError
from annotation.models import Candidate, Screen
from pipeline.ingest import ImportSummary, StoragePrefix, import_screens
from tests.conftest import login
from tests.pipeline.ingest.rico_files import jpeg_bytes, node, png_bytes, vh_bytes, vh_dict, write_pair

pytestmark = pytest.mark.django_db


def zip_of(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_folder_import_keeps_id_app_image_size_vh_and_candidates(project, tmp_path):
    # given a folder with a JPEG pair and a PNG pair (144x256: x0.1 of the device)
    write_pair(tmp_path / "in", "101", vh=vh_bytes("com.shop"))
    write_pair(tmp_path / "in", "102", image=png_bytes(), ext="png")
    progress = []
    # when it is imported
    summary = import_screens(project=project, source=tmp_path / "in", progress=lambda d, t: progress.append((d, t)))
    # then both screens are there, with what the next stages need
    assert summary.as_dict() == {"imported": 2, "already_present": 0, "rejected": [], "imported_ids": ["101", "102"]}
    screen = Screen.objects.select_related("app").get(project=project, rico_id="101")
    assert (screen.app.package, screen.activity_name) == ("com.shop", "com.shop/com.shop.MainActivity")
    assert (screen.width, screen.height, screen.image.name) == (144, 256, "screens/demo/101.jpg")
    assert screen.vh["activity"]["root"]["class"] == "android.widget.FrameLayout"
    assert default_storage.open(screen.image.name).read() == (tmp_path / "in" / "101.jpg").read_bytes()
    assert list(screen.candidates.values_list("vh_index", "left", "top", "right", "bottom", "type", "text")) == [
        (1, 0, 8, 144, 26, "text", "Title"),
        (3, 100, 230, 140, 250, "button", "OK"),
    ]
    assert Screen.objects.get(rico_id="102").image.name == "screens/demo/102.png"
    assert progress[0] == (0, 2) and progress[-1] == (2, 2)


def test_reimport_changes_nothing_and_duplicates_nothing(project, tmp_path):
    write_pair(tmp_path / "in", "1")
    write_pair(tmp_path / "in", "2")
    import_screens(project=project, source=tmp_path / "in")
    before = list(Screen.objects.values_list("pk", "rico_id", "image"))
    candidates = Candidate.objects.count()
    # when the same folder is imported again
    again = import_screens(project=project, source=tmp_path / "in")
    # then nothing is written
    assert (again.imported, sorted(again.already_present), again.rejected) == ([], ["1", "2"], [])
    assert list(Screen.objects.values_list("pk", "rico_id", "image")) == before
    assert Candidate.objects.count() == candidates
    assert sorted(p.name for p in Path(default_storage.path("screens/demo")).iterdir()) == ["1.jpg", "2.jpg"]


def test_zip_path_and_zip_stream_import_the_same(project, tmp_path):
    archive = zip_of(
        {"pack/7.jpg": jpeg_bytes(), "pack/7.json": vh_bytes(), "8.png": png_bytes(), "8.json": vh_bytes()}
    )
    (tmp_path / "screens.zip").write_bytes(archive)
    from_path = import_screens(project=project, source=str(tmp_path / "screens.zip"))
    assert sorted(from_path.imported) == ["7", "8"]
    # a seekable stream (what the web upload opens from storage) into another project
    from tests.factories import ProjectFactory

    other = ProjectFactory(slug="other")
    from_stream = import_screens(project=other, source=io.BytesIO(archive))
    assert sorted(from_stream.imported) == ["7", "8"]
    assert Screen.objects.filter(project=other).count() == 2


def test_storage_prefix_import(project):
    for name, data in {
        "uploads/u1/5.jpg": jpeg_bytes(),
        "uploads/u1/5.json": vh_bytes(),
        "uploads/u1/sub/6.jpg": jpeg_bytes(),
        "uploads/u1/sub/6.json": vh_bytes(),
    }.items():
        default_storage.save(name, ContentFile(data))
    summary = import_screens(project=project, source=StoragePrefix("uploads/u1/"))
    assert sorted(summary.imported) == ["5", "6"]


def test_storage_prefix_that_holds_nothing_is_an_error(project):
    with pytest.raises(ApplicationError, match="Nothing found"):
        import_screens(project=project, source=StoragePrefix("nowhere/"))


def test_trace_layout_takes_the_app_from_the_path(project, tmp_path):
    trace = tmp_path / "traces" / "com.trace.app" / "trace_3"
    (trace / "screenshots").mkdir(parents=True)
    (trace / "view_hierarchies").mkdir()
    (trace / "screenshots" / "12.jpg").write_bytes(jpeg_bytes())
    (trace / "view_hierarchies" / "12.json").write_bytes(vh_bytes("com.from.activity"))
    summary = import_screens(project=project, source=tmp_path / "traces")
    assert summary.imported == ["com.trace.app:trace_3:12"]
    screen = Screen.objects.get(rico_id="com.trace.app:trace_3:12")
    assert screen.app.package == "com.trace.app"
    assert screen.image.name == "screens/demo/com.trace.app:trace_3:12.jpg"


def test_device_size_override_and_project_default(project, tmp_path):
    # given a 100x200 screenshot (1:2): not RICO's 9:16
    write_pair(tmp_path / "in", "1", image=jpeg_bytes(100, 200))
    assert "aspect ratio" in import_screens(project=project, source=tmp_path / "in").rejected[0][1]
    # when the device space is given as 1000x2000 it imports, scaled by 100/1000
    summary = import_screens(project=project, source=tmp_path / "in", device_size=(1000, 2000))
    assert summary.imported == ["1"]
    title = Candidate.objects.get(screen__rico_id="1", vh_index=1)
    assert (title.left, title.top, title.right, title.bottom) == (0, 8, 100, 26)
    # and the screen records the device size it was imported with (the project's stays 1440x2560)
    screen = Screen.objects.get(rico_id="1")
    assert (screen.device_width, screen.device_height) == (1000, 2000)


def test_a_one_off_device_size_scales_the_vh_endpoint_like_the_candidates(project, tmp_path, api_client, annotator):
    # given a screen imported with a device size other than the project's (1000x2000, not 1440x2560)
    vh = vh_dict(children=[node([0, 80, 1000, 260], text="Title"), node([500, 1800, 1000, 2000], text="OK")])
    vh["activity"]["root"]["bounds"] = [0, 0, 1000, 2000]
    write_pair(tmp_path / "in", "1", image=jpeg_bytes(100, 200), vh=json.dumps(vh).encode())
    assert import_screens(project=project, source=tmp_path / "in", device_size=(1000, 2000)).imported == ["1"]
    # when an annotator fetches the screen's whole VH
    login(api_client, annotator)
    nodes = api_client.get("/api/projects/demo/screens/1/vh/").json()["nodes"]
    # then its boxes are scaled by 100 / 1000, as the candidates were at import
    assert [node["bounds"] for node in nodes] == [[0, 0, 100, 200], [0, 8, 100, 26], [50, 180, 100, 200]]
    candidates = Candidate.objects.filter(screen__rico_id="1").order_by("vh_index")
    assert [n["bounds"] for n in nodes if n["leaf"]] == [[c.left, c.top, c.right, c.bottom] for c in candidates]


def test_import_query_count_is_per_batch_not_per_screen(project, tmp_path, django_assert_max_num_queries):
    for i in range(60):
        write_pair(tmp_path / "in", str(i))
    with django_assert_max_num_queries(10):
        summary = import_screens(project=project, source=tmp_path / "in")
    assert len(summary.imported) == 60


def test_batches_commit_as_they_go(project, tmp_path, monkeypatch):
    monkeypatch.setattr("pipeline.ingest.BATCH_SIZE", 3)
    for i in range(7):
        write_pair(tmp_path / "in", str(i))
    seen = []

    def progress(done, total):
        seen.append((done, total, Screen.objects.filter(project=project).count()))

    summary = import_screens(project=project, source=tmp_path / "in", progress=progress)
    assert len(summary.imported) == 7
    # after each full batch, progress sees those screens already written
    assert (3, 7, 3) in seen and (6, 7, 6) in seen and seen[-1] == (7, 7, 7)


def test_missing_or_wrong_source_is_an_error_and_imports_nothing(project, tmp_path):
    with pytest.raises(ApplicationError, match="does not exist"):
        import_screens(project=project, source=tmp_path / "nope")
    (tmp_path / "file.txt").write_text("hello")
    with pytest.raises(ApplicationError, match="neither a folder nor a zip"):
        import_screens(project=project, source=tmp_path / "file.txt")
    with pytest.raises(ApplicationError, match="Not a readable zip"):
        import_screens(project=project, source=io.BytesIO(b"not a zip at all"))
    with pytest.raises(ApplicationError, match="device size"):
        import_screens(project=project, source=tmp_path, device_size=(0, 10))
    assert not Screen.objects.exists()


def test_summary_as_dict_shape():
    summary = ImportSummary(imported=["1"], already_present=["2", "3"], rejected=[("x/4", "why")])
    assert summary.as_dict() == {
        "imported": 1,
        "already_present": 2,
        "rejected": [{"name": "x/4", "reason": "why"}],
        "imported_ids": ["1"],
    }


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_writer_thread_writes_the_batches(tmp_path, monkeypatch):
    # given: small batches, and a spy on the real write service that notes the thread
    import threading

    from annotation.services import screens as screen_services
    from tests.factories import ProjectFactory

    monkeypatch.setattr("pipeline.ingest.BATCH_SIZE", 4)
    threads = []
    real_write = screen_services.screen_create_batch

    def spy(**kwargs):
        threads.append(threading.current_thread().name)
        return real_write(**kwargs)

    monkeypatch.setattr("pipeline.ingest.writer.screen_create_batch", spy)
    project = ProjectFactory(slug="threaded")
    for i in range(10):
        write_pair(tmp_path / "in", f"s{i}")
    write_pair(tmp_path / "in", "zbad", vh=b"{")
    # when imported outside any transaction
    summary = import_screens(project=project, source=tmp_path / "in")
    # then the writer thread wrote all three batches, and the results are complete
    assert threads == ["import-writer"] * 3
    assert sorted(summary.imported) == [f"s{i}" for i in range(10)]
    assert [name for name, _ in summary.rejected] == ["zbad"]
    assert Screen.objects.filter(project=project).count() == 10
    assert Candidate.objects.filter(screen__project=project).count() == 20
    # and a re-run on the thread changes nothing
    again = import_screens(project=project, source=tmp_path / "in")
    assert (again.imported, len(again.already_present)) == ([], 10)


def test_landscape_screenshot_uses_the_turned_device_space(project, tmp_path):
    # given a 256x144 screenshot whose VH is in landscape coordinates (2560x1440)
    vh = vh_dict(children=[node([1280, 720, 2560, 1440], text="corner")])
    vh["activity"]["root"]["bounds"] = [0, 0, 2560, 1440]
    write_pair(tmp_path / "in", "land", image=jpeg_bytes(256, 144), vh=json.dumps(vh).encode())
    # when imported with the project's portrait device (1440x2560)
    summary = import_screens(project=project, source=tmp_path / "in")
    # then it is scaled by 256 / 2560
    assert summary.imported == ["land"]
    corner = Candidate.objects.get(screen__rico_id="land", vh_index=1)
    assert (corner.left, corner.top, corner.right, corner.bottom) == (128, 72, 256, 144)
    # and the screen records the turned device space it was read in
    screen = Screen.objects.get(rico_id="land")
    assert (screen.device_width, screen.device_height) == (2560, 1440)


def test_mpo_jpeg_is_a_jpeg(project, tmp_path):
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (144, 256), "green").save(buf, "MPO")
    write_pair(tmp_path / "in", "mpo", image=buf.getvalue())
    assert import_screens(project=project, source=tmp_path / "in").imported == ["mpo"]
    assert Screen.objects.get(rico_id="mpo").image.name == "screens/demo/mpo.jpg"


def test_reimport_with_changed_content_is_refused_and_keeps_the_old_screen(project, tmp_path):
    write_pair(tmp_path / "in", "1")
    write_pair(tmp_path / "in", "2")
    import_screens(project=project, source=tmp_path / "in")
    old_sha = Screen.objects.get(rico_id="2").content_sha256
    # when screen 2's screenshot changes and the folder is imported again
    (tmp_path / "in" / "2.jpg").write_bytes(jpeg_bytes(color="black"))
    again = import_screens(project=project, source=tmp_path / "in")
    # then 1 is already present, 2 is refused, and nothing changed in the database
    assert again.already_present == ["1"]
    assert again.rejected == [("2", "id 2 is already in the project with different content; not replaced")]
    assert Screen.objects.get(rico_id="2").content_sha256 == old_sha


def test_batches_are_also_cut_by_bytes(project, tmp_path, monkeypatch):
    # given a byte budget that two pairs exceed
    monkeypatch.setattr("pipeline.ingest.BATCH_MAX_BYTES", 2 * len(jpeg_bytes()) + 10)
    for i in range(5):
        write_pair(tmp_path / "in", str(i))
    seen = []
    summary = import_screens(
        project=project,
        source=tmp_path / "in",
        progress=lambda done, total: seen.append((done, Screen.objects.filter(project=project).count())),
    )
    # then screens are written two by two (the inline writer: tests run inside a transaction)
    assert len(summary.imported) == 5
    assert (2, 2) in seen and (4, 4) in seen


@pytest.mark.django_db(transaction=True)
def test_an_unexpected_error_on_the_writer_thread_reaches_the_caller(tmp_path, monkeypatch):
    # given a write service that breaks on its first batch (a bug, not a database error)
    from tests.factories import ProjectFactory

    monkeypatch.setattr("pipeline.ingest.BATCH_SIZE", 2)

    def broken(**kwargs):
        raise RuntimeError("writer broke")

    monkeypatch.setattr("pipeline.ingest.writer.screen_create_batch", broken)
    project = ProjectFactory(slug="broken")
    for i in range(7):
        write_pair(tmp_path / "in", str(i))
    # when imported, the error surfaces (no hang, no silent success)
    with pytest.raises(RuntimeError, match="writer broke"):
        import_screens(project=project, source=tmp_path / "in")
    assert not Screen.objects.filter(project=project).exists()
