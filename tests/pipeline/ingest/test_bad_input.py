"""Bad input: each case is rejected with a clear one-line reason, loses nothing else, leaves nothing behind."""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import warnings
import zipfile
import zlib
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from annotation.exceptions import ApplicationError
from annotation.models import Candidate, ImportJob, Screen
from pipeline.ingest import import_screens
from pipeline.ingest.sources import zip_entries_check
from tests.conftest import login
from tests.pipeline.ingest.rico_files import jpeg_bytes, node, vh_bytes, vh_dict, write_pair

pytestmark = pytest.mark.django_db


def png_header_only(width: int, height: int) -> bytes:
    """A PNG that claims ``width x height`` pixels but holds almost no data (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b"")
    )


def noisy_jpeg() -> bytes:
    buf = io.BytesIO()
    Image.effect_noise((144, 256), 80).convert("RGB").save(buf, "JPEG", quality=90)
    return buf.getvalue()


def image_bytes(fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (144, 256), "red").save(buf, fmt)
    return buf.getvalue()


def import_with_one_bad(project, folder: Path, make_bad) -> tuple[dict, list[tuple[str, str]]]:
    """Import a folder holding a good pair ``good`` plus whatever ``make_bad(folder)`` writes."""
    write_pair(folder, "good")
    make_bad(folder)
    summary = import_screens(project=project, source=folder)
    assert summary.imported == ["good"], summary.rejected  # the good pair always imports
    return summary.as_dict(), summary.rejected


def assert_nothing_left_for(project, rico_id: str) -> None:
    assert not Screen.objects.filter(project=project, rico_id=rico_id).exists()
    assert not Candidate.objects.filter(screen__rico_id=rico_id).exists()
    media = Path(default_storage.path("screens/demo"))
    assert not list(media.glob(f"{rico_id}.*"))


BAD_VH = {
    "malformed JSON": (b'{"activity": {"root": ', "VH is not valid JSON"),
    "deeply nested array": (b"[" * 200_000 + b"]" * 200_000, "VH JSON is nested too deeply (cap 200)"),
    "nested past the cap": (
        json.dumps({"activity": {"root": {}}, "x": json.loads("[" * 250 + "]" * 250)}).encode(),
        "VH JSON is nested too deeply (cap 200)",
    ),
    "not an object": (b"[1, 2, 3]", "VH JSON is not an object"),
    "not UTF-8": (b'{"activity_name": "a\xff/b"}', "VH JSON is not valid UTF-8"),
    "NUL escape": (vh_bytes()[:-1] + b', "x": "\\u0000"}', "VH JSON holds \\u0000"),
    "no activity.root": (json.dumps({"activity_name": "a/b", "activity": {}}).encode(), "VH has no activity.root"),
    "no activity": (json.dumps({"activity_name": "a/b"}).encode(), "VH has no activity.root"),
    "string bounds": (
        json.dumps(vh_dict(children=[node(["0", 0, 10, 10])])).encode(),
        "VH node 1 has non-numeric bounds",
    ),
    "NaN bounds": (
        json.dumps(vh_dict(children=[node([0, float("nan"), 10, 10])])).encode(),
        "VH JSON holds NaN, which is not a finite number",
    ),
    "Infinity bounds": (
        json.dumps(vh_dict(children=[node([0, 0, float("inf"), 10])])).encode(),
        "VH JSON holds Infinity, which is not a finite number",
    ),
    "huge float bounds": (
        json.dumps(vh_dict(children=[node([0, 0, 1e308, 10])])).encode(),
        "VH node 1 has bounds out of range",
    ),
    "huge integer bounds": (
        json.dumps(vh_dict(children=[node([0, 0, 10**40, 10])])).encode(),
        "VH node 1 has bounds out of range",
    ),
    "three bounds": (
        json.dumps(vh_dict(children=[node([0, 0, 10])])).encode(),
        "VH node 1 has bounds that are not 4 numbers",
    ),
    "no activity_name": (
        json.dumps({"activity": {"root": node([0, 0, 1440, 2560])}}).encode(),
        "VH has no activity_name",
    ),
}


@pytest.mark.parametrize("case", list(BAD_VH))
def test_bad_vh_is_rejected_with_its_reason(project, tmp_path, case):
    raw, reason = BAD_VH[case]
    _, rejected = import_with_one_bad(project, tmp_path / "in", lambda f: write_pair(f, "bad", vh=raw))
    assert len(rejected) == 1
    name, why = rejected[0]
    assert name == "bad" and why.startswith(reason) and "\n" not in why
    assert_nothing_left_for(project, "bad")


BAD_IMAGES = {
    "truncated JPEG": (lambda: noisy_jpeg()[:-2000], "truncated or corrupt JPEG image"),
    "JPEG cut in its header": (lambda: jpeg_bytes()[:300], "truncated or corrupt image header"),
    "truncated PNG": (lambda: image_bytes("PNG")[:-30], "truncated or corrupt PNG image"),
    "text named .jpg": (lambda: b"this is not an image at all", "not a JPEG or PNG image"),
    "empty file": (lambda: b"", "image file is empty"),
    "GIF": (lambda: image_bytes("GIF"), "image format GIF is not supported (JPEG or PNG only)"),
    "WEBP": (lambda: image_bytes("WEBP"), "image format WEBP is not supported"),
    "BMP": (lambda: image_bytes("BMP"), "image format BMP is not supported"),
    "bomb over our cap": (lambda: png_header_only(4500, 8000), "decompression bomb: image of 4500x8000 pixels"),
    "bomb over Pillow's limit": (lambda: png_header_only(9000, 16000), "decompression bomb"),
    "wrong aspect ratio": (
        lambda: jpeg_bytes(200, 200),
        "image 200x200 does not match the VH device space 1440x2560 (aspect ratio)",
    ),
}


@pytest.mark.parametrize("case", list(BAD_IMAGES))
def test_bad_image_is_rejected_with_its_reason(project, tmp_path, case):
    make, reason = BAD_IMAGES[case]
    _, rejected = import_with_one_bad(project, tmp_path / "in", lambda f: write_pair(f, "bad", image=make()))
    assert len(rejected) == 1 and rejected[0][0] == "bad"
    assert rejected[0][1].startswith(reason), rejected[0][1]
    assert_nothing_left_for(project, "bad")


def test_pillow_bomb_warning_is_an_error_even_under_our_cap(project, tmp_path, settings, monkeypatch):
    # given our cap is generous but Pillow's limit is low: Pillow warns, and we treat that as an error
    settings.SCREENQA_IMPORT = {**settings.SCREENQA_IMPORT, "MAX_IMAGE_PIXELS": 10**9}
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100 * 100)
    for i in range(12):  # several, so the image threads overlap
        write_pair(tmp_path / "in", f"bad{i}")  # 144x256 = 36,864 pixels > 10,000: Pillow warns
    filters_before = list(warnings.filters)
    summary = import_screens(project=project, source=tmp_path / "in")
    assert summary.imported == []
    assert len(summary.rejected) == 12
    assert all(reason.startswith("decompression bomb") for _, reason in summary.rejected)
    # the filter that made the warning an error was local: the process's filters are as before
    assert warnings.filters == filters_before


def test_image_and_json_byte_caps(project, tmp_path, settings):
    settings.SCREENQA_IMPORT = {**settings.SCREENQA_IMPORT, "MAX_IMAGE_BYTES": 5000, "MAX_JSON_BYTES": 2000}
    write_pair(tmp_path / "in", "good", image=jpeg_bytes(), vh=vh_bytes())
    write_pair(tmp_path / "in", "big-image", image=jpeg_bytes(144, 256) + b"\0" * 6000)
    write_pair(tmp_path / "in", "big-json", vh=vh_bytes() + b" " * 3000)
    summary = import_screens(project=project, source=tmp_path / "in")
    assert summary.imported == ["good"]
    assert dict(summary.rejected) == {
        "big-image": "big-image.jpg is larger than the cap of 5000 bytes",
        "big-json": "big-json.json is larger than the cap of 2000 bytes",
    }


def test_unpaired_files_are_rejected_one_line_each(project, tmp_path):
    folder = tmp_path / "in"
    write_pair(folder, "good")
    (folder / "lonely.json").write_bytes(vh_bytes())
    (folder / "orphan.jpg").write_bytes(jpeg_bytes())
    (folder / "twice.jpg").write_bytes(jpeg_bytes())
    (folder / "twice.png").write_bytes(jpeg_bytes())
    (folder / "twice.json").write_bytes(vh_bytes())
    (folder / "bad id.jpg").write_bytes(jpeg_bytes())
    (folder / "bad id.json").write_bytes(vh_bytes())
    (folder / "README.txt").write_text("ignored")
    (folder / ".DS_Store").write_text("ignored")
    write_pair(folder / "copy", "good")  # the same id again in another folder
    summary = import_screens(project=project, source=folder)
    assert summary.imported == ["good"]
    assert dict(summary.rejected) == {
        "bad id": "id 'bad id' must be 1-255 letters, digits or . _ - :",
        "good": "duplicate id good in this source (also copy/good)",  # names are processed sorted
        "lonely": "JSON lonely.json has no image (expected lonely.jpg or lonely.png)",
        "orphan": "image orphan.jpg has no JSON (expected orphan.json)",
        "twice": "several files for one screen: twice.jpg, twice.json, twice.png",
    }


def test_trace_layout_pairs_missing_halves(project, tmp_path):
    trace = tmp_path / "traces" / "com.app" / "trace_0"
    (trace / "screenshots").mkdir(parents=True)
    (trace / "view_hierarchies").mkdir()
    (trace / "screenshots" / "1.jpg").write_bytes(jpeg_bytes())
    (trace / "view_hierarchies" / "2.json").write_bytes(vh_bytes())
    summary = import_screens(project=project, source=tmp_path / "traces")
    assert summary.imported == []
    assert [name for name, _ in summary.rejected] == ["com.app/trace_0/1", "com.app/trace_0/2"]


# --- zip archives -------------------------------------------------------------------------


def zip_bytes(entries: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in entries:
            zf.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return buf.getvalue()


def good_entries(rico_id: str = "good") -> list[tuple[str, bytes]]:
    return [(f"{rico_id}.jpg", jpeg_bytes()), (f"{rico_id}.json", vh_bytes())]


def test_zip_entries_escaping_the_root_are_rejected(project):
    archive = zip_bytes(
        [
            *good_entries(),
            ("../evil.jpg", jpeg_bytes()),
            ("../evil.json", vh_bytes()),
            ("/abs/x.json", vh_bytes()),
            ("C:/win/y.json", vh_bytes()),
            ("a/../../z.json", vh_bytes()),
        ]
    )
    summary = import_screens(project=project, source=io.BytesIO(archive))
    assert summary.imported == ["good"]
    reasons = dict(summary.rejected)
    assert set(reasons) == {"../evil.jpg", "../evil.json", "/abs/x.json", "C:/win/y.json", "a/../../z.json"}
    assert set(reasons.values()) == {"unsafe path in zip (absolute or with ../); entry skipped"}
    assert not Screen.objects.filter(rico_id="evil").exists()


def test_zip_bomb_by_ratio_is_stopped_on_bytes_read(project):
    # given a VH padded with 3 MB of spaces: ~3,000x compression, under the 20 MB JSON cap
    bomb_vh = vh_bytes()[:-1] + b" " * 3_000_000 + b"}"
    archive = zip_bytes([*good_entries(), ("bomb.jpg", jpeg_bytes()), ("bomb.json", bomb_vh)])
    summary = import_screens(project=project, source=io.BytesIO(archive))
    assert summary.imported == ["good"]
    assert summary.rejected[0][0] == "bomb"
    assert summary.rejected[0][1].startswith("zip bomb: bomb.json expands beyond 200x its compressed size")


def test_zip_header_that_lies_about_the_size_does_not_get_through(project):
    # given: the bomb entry's headers claim 100 bytes uncompressed (the real stream is 3 MB)
    bomb_vh = vh_bytes()[:-1] + b" " * 3_000_000 + b"}"
    archive = bytearray(zip_bytes([*good_entries(), ("bomb.jpg", jpeg_bytes()), ("bomb.json", bomb_vh)]))
    with zipfile.ZipFile(io.BytesIO(bytes(archive))) as zf:
        info = zf.getinfo("bomb.json")
    struct.pack_into("<I", archive, info.header_offset + 22, 100)  # local header: uncompressed size
    position = 0
    while (position := archive.find(b"PK\x01\x02", position + 1)) != -1:
        name_length = struct.unpack_from("<H", archive, position + 28)[0]
        if archive[position + 46 : position + 46 + name_length] == b"bomb.json":
            struct.pack_into("<I", archive, position + 24, 100)  # central directory: uncompressed size
    # when it is imported, only the real bytes count, and the entry is rejected (not crashed on)
    summary = import_screens(project=project, source=io.BytesIO(bytes(archive)))
    assert summary.imported == ["good"]
    assert summary.rejected[0][0] == "bomb"
    # zipfile stops at the claimed size, so the CRC of what was read does not match
    assert summary.rejected[0][1] == "corrupt zip entry bomb.json: Bad CRC-32 for file 'bomb.json'"


def test_zip_total_uncompressed_cap_rejects_what_is_left(project, settings):
    # given a cap that only the first pair's bytes fit into
    first = sum(len(data) for _, data in good_entries("a"))
    settings.SCREENQA_IMPORT = {**settings.SCREENQA_IMPORT, "ZIP_MAX_TOTAL_BYTES": first + 10}
    archive = zip_bytes([*good_entries("a"), *good_entries("b"), *good_entries("c")])
    summary = import_screens(project=project, source=io.BytesIO(archive))
    assert summary.imported == ["a"]
    assert [name for name, _ in summary.rejected] == ["b", "c"]
    assert all("total uncompressed bytes cap" in reason for _, reason in summary.rejected)


def test_zip_with_too_many_entries_is_refused_whole(project, settings):
    settings.SCREENQA_IMPORT = {**settings.SCREENQA_IMPORT, "ZIP_MAX_ENTRIES": 3}
    archive = zip_bytes([*good_entries("a"), *good_entries("b")])
    with pytest.raises(ApplicationError, match="The zip has 4 entries; the cap is 3"):
        import_screens(project=project, source=io.BytesIO(archive))
    assert not Screen.objects.exists()


def test_corrupt_zip_entry_is_rejected_alone(project):
    archive = bytearray(zip_bytes([*good_entries(), ("broken.jpg", jpeg_bytes()), ("broken.json", vh_bytes())]))
    with zipfile.ZipFile(io.BytesIO(bytes(archive))) as zf:
        info = zf.getinfo("broken.json")
    data_start = info.header_offset + 30 + len(b"broken.json")
    archive[data_start + 5 : data_start + 25] = b"\xff" * 20  # garble the deflate stream
    summary = import_screens(project=project, source=io.BytesIO(bytes(archive)))
    assert summary.imported == ["good"]
    assert [name for name, _ in summary.rejected] == ["broken"]
    assert summary.rejected[0][1].startswith("corrupt zip entry broken.json: Error -3 while decompressing data")


def test_every_bad_case_in_one_run_still_imports_the_good_ones(project, tmp_path):
    # given one folder holding good pairs next to many kinds of bad ones
    folder = tmp_path / "in"
    write_pair(folder, "good1")
    write_pair(folder, "good2")
    for i, (raw, _) in enumerate(BAD_VH.values()):
        write_pair(folder, f"vh{i}", vh=raw)
    for i, (make, _) in enumerate(BAD_IMAGES.values()):
        write_pair(folder, f"img{i}", image=make())
    # when it is imported
    summary = import_screens(project=project, source=folder)
    # then exactly the good ones are in, and every bad one has its one-line reason
    assert summary.imported == ["good1", "good2"]
    assert len(summary.rejected) == len(BAD_VH) + len(BAD_IMAGES)
    assert all(reason and "\n" not in reason and len(reason) < 300 for _, reason in summary.rejected)
    assert Screen.objects.filter(project=project).count() == 2
    assert sorted(p.name for p in Path(default_storage.path("screens/demo")).iterdir()) == ["good1.jpg", "good2.jpg"]


# --- the entry cap, read from the end record before the central directory is parsed ------


def _eocd(count: int, cd_size: int = 0, cd_offset: int = 0) -> bytes:
    return b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, min(count, 0xFFFF), min(count, 0xFFFF), cd_size, cd_offset, 0)


def test_crafted_zip64_header_claiming_600k_entries_is_refused_from_the_end_record(project, settings):
    settings.SCREENQA_IMPORT = {**settings.SCREENQA_IMPORT, "ZIP_MAX_ENTRIES": 500_000}
    # the ZIP64 end record sits at offset 0 here, as its locator says
    record = b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", 44, 45, 45, 0, 0, 600_000, 600_000, 46 * 600_000, 0)
    locator = b"PK\x06\x07" + struct.pack("<IQI", 0, 0, 1)
    classic = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    crafted = record + locator + classic
    with pytest.raises(ApplicationError, match="The zip has 600,000 entries; the cap is 500,000"):
        zip_entries_check(io.BytesIO(crafted), cap=500_000)
    with pytest.raises(ApplicationError, match="600,000 entries"):
        import_screens(project=project, source=io.BytesIO(crafted))


def test_classic_end_record_over_the_cap_is_refused(settings):
    crafted = b"PK\x03\x04" + b"\x00" * 100 + _eocd(60_000, cd_size=46 * 60_000, cd_offset=104)
    with pytest.raises(ApplicationError, match="The zip has 60,000 entries; the cap is 1,000"):
        zip_entries_check(io.BytesIO(crafted), cap=1000)


def test_an_end_record_that_lies_about_the_count_is_caught_by_the_walk():
    # given a real zip of 50 empty entries whose end record claims just one
    archive = bytearray(zip_bytes([(f"e{n}.json", b"") for n in range(50)], method=zipfile.ZIP_STORED))
    at = archive.rfind(b"PK\x05\x06")
    archive[at + 8 : at + 12] = struct.pack("<HH", 1, 1)
    with pytest.raises(ApplicationError, match="more than 10 entries"):
        zip_entries_check(io.BytesIO(bytes(archive)), cap=10)
    # and under the cap it is counted right
    assert zip_entries_check(io.BytesIO(bytes(archive)), cap=100) == 50


def test_entry_check_memory_stays_flat_where_zipfile_would_grow():
    # given 20,000 empty entries over a cap of 100
    archive = io.BytesIO(zip_bytes([(f"{n}", b"") for n in range(20_000)], method=zipfile.ZIP_STORED))
    tracemalloc.start()
    try:
        with pytest.raises(ApplicationError, match="20,000 entries"):
            zip_entries_check(archive, cap=100)
        ours = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        zipfile.ZipFile(archive).close()
        theirs = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ours < 200_000 < 10 * ours < theirs  # the tail only (64 KiB), not an object per entry


def test_an_upload_over_the_entry_cap_is_refused_in_the_request(client, project, lead, settings):
    settings.SCREENQA_IMPORT = {**settings.SCREENQA_IMPORT, "ZIP_MAX_ENTRIES": 3}
    login(client, lead)
    upload = SimpleUploadedFile("many.zip", zip_bytes([*good_entries("a"), *good_entries("b")]))
    response = client.post(f"/api/projects/{project.slug}/imports/", {"file": upload})
    assert response.status_code == 400
    assert response.json()["field"] == "file" and "4 entries" in response.json()["detail"]
    assert not ImportJob.objects.exists()
