"""The RICO-format screen generator: VH shape and traps, pixels where the VH says, determinism."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from annotation.vh import iter_nodes
from devtools.demo.generator import KINDS, generate_screens, generate_zip, render_screen

BACKGROUND = (250, 250, 250)


def _nodes(vh):
    return [node for _, _, node in iter_nodes(vh["activity"]["root"])]


def _is_a(node, name):
    return node["class"].endswith(name) or any(a.endswith(name) for a in node["ancestors"])


def _visible(node):
    b = node["bounds"]
    return node["visible-to-user"] and b[2] > b[0] and b[3] > b[1]


@pytest.fixture(scope="module")
def screens():
    return {
        (k, w): render_screen(rico_id=1000 + i, kind=k, size=(w, w * 16 // 9), seed=3)
        for i, k in enumerate(KINDS)
        for w in (1080, 540)
    }


def test_vh_has_the_real_key_set(shared_data, screens):
    # given the node keys of real RICO files
    real_keys, real_top = set(), set()
    for path in sorted((shared_data / "rico" / "screens").glob("*.json"))[:10]:
        vh = json.loads(path.read_text())
        real_top |= set(vh) | {f"activity.{k}" for k in vh["activity"]}
        for node in _nodes(vh):
            real_keys |= set(node)
    # when we look at every generated screen
    for screen in screens.values():
        vh = json.loads(screen.vh_bytes())
        top = set(vh) | {f"activity.{k}" for k in vh["activity"]}
        # then top level and node keys are real ones, and leaves have no children key
        assert top == real_top
        for node in _nodes(vh):
            assert set(node) <= real_keys, set(node) - real_keys
            assert "children" not in node or node["children"]
            assert "checked" not in node and "checkable" not in node
            assert isinstance(node["content-desc"], list) and len(node["content-desc"]) == 1


def test_vh_contains_the_traps(screens):
    # given all kinds at one size
    nodes = {k: _nodes(screens[(k, 1080)].vh) for k in KINDS}
    every = [n for ns in nodes.values() for n in ns]
    # then invisible, gone, zero-area, inverted and off-screen nodes exist
    assert any(n["visibility"] == "gone" for n in every)
    assert any(not n["visible-to-user"] for n in every)
    assert any(n["bounds"][0] == n["bounds"][2] for n in every)
    assert any(n["bounds"][2] < n["bounds"][0] for n in every)
    assert {1440, 2880} <= {n["bounds"][0] for n in nodes["list"]}
    assert all(not n["visible-to-user"] for n in nodes["list"] if n["bounds"][0] >= 1440)
    # obfuscated classes recognisable only by their ancestors
    obf = [n for n in every if n["class"].rsplit(".", 1)[-1] in {"al", "ay"}]
    assert obf and all(n["ancestors"][0].startswith("android.widget.") for n in obf)
    # duplicate texts on one screen, a paragraph in one node, icons labelled only in content-desc
    texts = [n["text"] for n in nodes["list"] if n.get("text")]
    assert len(texts) > len(set(texts))
    assert any(len(n.get("text", "").split()) > 25 for n in nodes["login"])
    icons = [n for n in every if n["content-desc"] != [None] and _is_a(n, "ImageView")]
    assert icons and all("text" not in n for n in icons)
    # checkboxes: text "" and state only in pixels
    boxes = [n for n in nodes["settings"] if _is_a(n, "CheckBox") and _visible(n)]
    assert len(boxes) >= 5 and all(n["text"] == "" for n in boxes)
    # a WebView without children
    webs = [n for n in nodes["webview"] if _is_a(n, "WebView")]
    assert len(webs) == 1 and "children" not in webs[0] and webs[0]["ancestors"][0] == "android.webkit.WebView"


def test_dialog_root_is_only_the_dialog_window(screens):
    # given a dialog screen
    vh = screens[("dialog", 1080)].vh
    root = vh["activity"]["root"]
    # then the root is the window, smaller than the device, and every node lies inside it
    x1, y1, x2, y2 = root["bounds"]
    assert x1 > 0 and x2 < 1440
    texts = {n.get("text") for n in _nodes(vh)}
    assert "OK" in texts and not any(n.get("resource-id", "").endswith(":id/name") for n in _nodes(vh))
    for node in _nodes(vh):
        if _visible(node):
            b = node["bounds"]
            assert x1 <= b[0] and b[2] <= x2 and y1 <= b[1] and b[3] <= y2


@pytest.mark.parametrize("width", [1080, 540])
@pytest.mark.parametrize("kind", KINDS)
def test_drawn_text_is_inside_its_vh_box(screens, kind, width):
    # given a screen and its visible text nodes
    screen = screens[(kind, width)]
    image = Image.open(io.BytesIO(screen.image)).convert("L")
    assert image.size == (width, width * 16 // 9)
    scale = width / 1440
    text_nodes = [n for n in _nodes(screen.vh) if _visible(n) and n.get("text")]
    assert text_nodes
    for node in text_nodes:
        left, t, r, b = (round(v * scale) for v in node["bounds"])
        inside = image.crop((left, t, r, b))
        lo, hi = inside.getextrema()
        # then the box holds drawn glyphs (strong contrast) ...
        assert hi - lo > 60, (kind, node["text"], node["bounds"])
        # ... and the strip just outside the text box, left of it, is plain (no glyph spill-over)
        if left >= 3 and node["class"] == "android.widget.TextView":
            strip = image.crop((left - 3, t + 2, left - 1, b - 2))
            lo2, hi2 = strip.getextrema()
            assert hi2 - lo2 < 60, (kind, node["text"])
            right = image.crop((r + 1, t + 2, r + 3, b - 2))
            assert right.getextrema()[1] - right.getextrema()[0] < 60, (kind, node["text"], "spills right")


def test_checkbox_state_is_in_the_pixels(screens):
    # given the visible checkboxes of a settings screen
    screen = screens[("settings", 1080)]
    image = Image.open(io.BytesIO(screen.image)).convert("RGB")
    boxes = [n for n in _nodes(screen.vh) if _is_a(n, "CheckBox") and _visible(n)]
    fills = []
    for node in boxes:
        left, t, r, b = (round(v * 0.75) for v in node["bounds"])
        inner = image.crop((left + 30, t + 30, r - 30, b - 30)).resize((1, 1), Image.Resampling.BOX)
        fills.append(inner.getpixel((0, 0)))
    # then each is either mostly the accent colour (checked) or mostly background (unchecked)
    checked = [f for f in fills if f[1] > f[0] + 40]
    unchecked = [f for f in fills if min(f) > 200]
    assert len(checked) + len(unchecked) == len(fills)
    assert checked and unchecked  # seed 3 draws both states


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    # when the same set is generated twice, and once with another seed
    ids_a = generate_screens(tmp_path / "a", count=6, seed=7)
    ids_b = generate_screens(tmp_path / "b", count=6, seed=7)
    generate_screens(tmp_path / "c", count=6, seed=8)
    # then the files are byte-identical for the same seed, different for another
    assert ids_a == ids_b == [str(900000 + i) for i in range(6)]
    for name in sorted(p.name for p in (tmp_path / "a").iterdir()):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "900000.jpg").read_bytes() != (tmp_path / "c" / "900000.jpg").read_bytes()


def test_parallel_rendering_writes_the_same_bytes(tmp_path):
    # when the same set is rendered on one process and on two
    generate_screens(tmp_path / "one", count=6, seed=4)
    generate_zip(tmp_path / "two.zip", count=6, seed=4, workers=2)
    # then every file is identical
    with zipfile.ZipFile(tmp_path / "two.zip") as zf:
        for name in zf.namelist():
            assert zf.read(name) == (tmp_path / "one" / name).read_bytes()


def test_both_sizes_and_every_kind_in_ten_screens(tmp_path):
    # when ten screens are generated
    generate_screens(tmp_path, count=10)
    sizes = {Image.open(p).size for p in tmp_path.glob("*.jpg")}
    names = {json.loads(p.read_text())["activity_name"].split(".")[-1] for p in tmp_path.glob("*.json")}
    # then both sizes and all five kinds (one activity each) are there
    assert sizes == {(1080, 1920), (540, 960)}
    assert len(names) == len(KINDS)


def test_zip_holds_the_same_pairs(tmp_path):
    # when the same screens are written to a folder and to a zip
    generate_screens(tmp_path / "dir", count=4, seed=1, start_id=5)
    ids = generate_zip(tmp_path / "out.zip", count=4, seed=1, start_id=5)
    generate_zip(tmp_path / "again.zip", count=4, seed=1, start_id=5)
    # then the zip entries equal the files, and the zip is reproducible
    with zipfile.ZipFile(tmp_path / "out.zip") as zf:
        assert sorted(zf.namelist()) == sorted(f"{i}.{e}" for i in ids for e in ("jpg", "json"))
        for name in zf.namelist():
            assert zf.read(name) == (tmp_path / "dir" / name).read_bytes()
    assert (tmp_path / "out.zip").read_bytes() == (tmp_path / "again.zip").read_bytes()


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown"):
        render_screen(rico_id=1, kind="carousel", size=(1080, 1920))
    with pytest.raises(ValueError):
        generate_screens(tmp_path, count=2, kinds=["nope"])
    assert not list(Path(tmp_path).glob("*.json"))


def test_committed_fixtures_are_what_the_command_makes(tmp_path):
    # given the committed set (fixtures/README.md names the command)
    committed = Path(__file__).resolve().parents[3] / "fixtures" / "generated"
    # when it is regenerated
    generate_screens(tmp_path, count=10, seed=0)
    # then the JSON is identical (JPEG bytes may differ across Pillow versions, so only sizes)
    for path in sorted(committed.glob("*.json")):
        assert path.read_bytes() == (tmp_path / path.name).read_bytes()
    for path in sorted(committed.glob("*.jpg")):
        assert Image.open(path).size == Image.open(tmp_path / path.name).size
    assert len(list(committed.glob("*.jpg"))) == 10
