"""Pre-filter overlay: labels, drawing, caching and concurrent first requests."""

from __future__ import annotations

import io
import threading

import pytest
from django.core.files.base import ContentFile
from django.db import connection
from PIL import Image

from annotation.models import Candidate, Screen
from annotation.services.overlays import (
    CONTAINER_COLOR,
    OVERLAY_STYLE,
    PALETTE,
    overlay_label,
    overlay_render,
    screen_overlay_ensure,
)
from annotation.vh import vh_candidates
from tests.factories import CandidateFactory, ScreenFactory, png_bytes


def near(pixel, color, tolerance: int = 40) -> bool:
    """JPEG shifts colours a little: compare with a tolerance."""
    return sum(abs(a - b) for a, b in zip(pixel, color, strict=True)) <= tolerance


def palette_colour(pixel) -> bool:
    return any(near(pixel, color) for color in PALETTE)


class TestOverlayLabel:
    def test_short_class_and_first_twelve_characters(self):
        label = overlay_label(class_name="android.widget.TextView", text="Deep Squat 3 sets 15x")
        assert label == "TextView: Deep Squat 3…"

    def test_short_text_is_kept_whole_and_whitespace_squeezed(self):
        assert overlay_label(class_name="a.b.Button", text="  Sign\n in ") == "Button: Sign in"

    def test_no_text_gives_the_class_alone_and_no_class_a_question_mark(self):
        assert overlay_label(class_name="com.foo.a$b", text="") == "a$b"
        assert overlay_label(class_name="", text="") == "?"


class TestOverlayRender:
    def test_boxes_are_outlined_in_palette_colours_on_an_image_of_the_same_size(self):
        # given a white 540x960 screenshot and two candidates
        boxes = [
            Candidate(vh_index=1, left=100, top=300, right=400, bottom=500, class_name="x.TextView", text="Hello"),
            Candidate(
                vh_index=2, left=20, top=700, right=200, bottom=900, class_name="x.ImageView", content_desc="home"
            ),
        ]
        # when the overlay is rendered
        rendered = overlay_render(image_bytes=png_bytes(540, 960), candidates=boxes)
        # then it is a JPEG of the screenshot's size with each box's outline in its colour
        with Image.open(io.BytesIO(rendered)) as image:
            assert image.format == "JPEG"
            assert image.size == (540, 960)
            rgb = image.convert("RGB")
            assert near(rgb.getpixel((250, 499)), PALETTE[0])  # bottom edge of box 1
            assert near(rgb.getpixel((399, 450)), PALETTE[0])  # right edge of box 1
            assert near(rgb.getpixel((110, 899)), PALETTE[1])  # bottom edge of box 2
            # inside a box, below its label: the (lightened) white screenshot, not an outline colour
            assert near(rgb.getpixel((250, 450)), (255, 255, 255))
            # the label is drawn inside the top-left of the box: some dark text pixels there
            label_area = rgb.crop((101, 301, 200, 320))
            darkest = min(label_area.convert("L").getextrema())  # text pixels are dark
            assert darkest < 70

    def test_boxes_outside_the_image_are_clipped_and_a_black_screenshot_still_renders(self):
        boxes = [Candidate(vh_index=1, left=500, top=900, right=900, bottom=2000, class_name="x.View", text="")]
        rendered = overlay_render(image_bytes=png_bytes(540, 960, color="black"), candidates=boxes)
        with Image.open(io.BytesIO(rendered)) as image:
            assert image.size == (540, 960)
            assert near(image.convert("RGB").getpixel((539, 930)), PALETTE[0])

    def test_containers_are_dashed_grey_under_the_candidates(self):
        # given a white 1080x1920 screenshot (outlines 2 px, dashes 8 on 6 off) with one container
        container = (100, 100, 1000, 1800)
        # when the overlay is rendered with it and no candidate
        rendered = overlay_render(image_bytes=png_bytes(1080, 1920), candidates=[], containers=[container])
        with Image.open(io.BytesIO(rendered)) as image:
            rgb = image.convert("RGB")
        # then its edges are grey on the dashes and the screenshot in the gaps, on both axes
        assert near(rgb.getpixel((115, 100)), CONTAINER_COLOR) and near(rgb.getpixel((115, 1798)), CONTAINER_COLOR)
        assert near(rgb.getpixel((123, 100)), (255, 255, 255)) and near(rgb.getpixel((123, 1798)), (255, 255, 255))
        assert near(rgb.getpixel((100, 115)), CONTAINER_COLOR) and near(rgb.getpixel((998, 115)), CONTAINER_COLOR)
        assert near(rgb.getpixel((100, 123)), (255, 255, 255)) and near(rgb.getpixel((998, 123)), (255, 255, 255))
        # and inside it, nothing is drawn
        assert near(rgb.getpixel((500, 900)), (255, 255, 255))

    @pytest.mark.realdata
    def test_real_rico_screen(self, shared_data):
        # given a real RICO screenshot and the candidates of its real view hierarchy
        import json

        folder = shared_data / "rico" / "screens"
        image_path = folder / "3360.jpg"
        if not image_path.exists():
            pytest.skip("RICO sample 3360 absent")
        vh = json.loads((folder / "3360.json").read_text())
        image_bytes = image_path.read_bytes()
        with Image.open(io.BytesIO(image_bytes)) as source:
            width, height = source.size
        candidates = [
            Candidate(**{k: getattr(c, k) for k in c.__slots__})
            for c in vh_candidates(vh, image_width=width, image_height=height, device_width=1440)
        ]
        assert candidates
        # when the overlay is drawn
        rendered = overlay_render(image_bytes=image_bytes, candidates=candidates)
        # then most candidates' bottom-left corners carry an outline colour
        with Image.open(io.BytesIO(rendered)) as image:
            assert image.size == (width, height)
            rgb = image.convert("RGB")
            drawn = sum(1 for c in candidates if palette_colour(rgb.getpixel((c.left, c.bottom - 1))))
            assert drawn >= len(candidates) * 0.6  # labels of later boxes may cover earlier corners


@pytest.mark.django_db
class TestScreenOverlayEnsure:
    def test_renders_once_then_returns_the_cache(self, project):
        # given a screen with a candidate and no overlay
        screen = ScreenFactory(project=project)
        CandidateFactory(screen=screen, left=0, top=0, right=50, bottom=50)
        # when the overlay is ensured twice
        first = screen_overlay_ensure(screen=screen)
        again = screen_overlay_ensure(screen=Screen.objects.get(pk=screen.pk))
        # then one file exists, recorded on the screen, and the second call reused it
        assert first == again
        assert Screen.objects.get(pk=screen.pk).overlay.name == first
        assert screen.overlay.storage.listdir("overlays")[1] == [first.split("/")[-1]]

    def test_containers_come_from_the_vh_in_the_screens_own_device_space(self, project):
        # given a 1080x1920 screen imported with a 720x1280 device (the project's is 1440x2560)
        # whose VH has a container (72, 128)-(648, 1152) holding one leaf
        leaf = {"class": "x.TextView", "bounds": [90, 160, 300, 200], "visible-to-user": True, "text": "Hi"}
        box = {"class": "x.LinearLayout", "bounds": [72, 128, 648, 1152], "visible-to-user": True, "children": [leaf]}
        screen = ScreenFactory(
            project=project,
            image=ContentFile(png_bytes(1080, 1920), name="c.png"),
            device_width=720,
            device_height=1280,
            vh={"activity": {"root": {"class": "x.Frame", "bounds": [0, 0, 720, 1280], "children": [box]}}},
        )
        # when its overlay is rendered
        name = screen_overlay_ensure(screen=Screen.objects.select_related("project").get(pk=screen.pk))
        with screen.overlay.storage.open(name) as fh, Image.open(fh) as image:
            rgb = image.convert("RGB")
        # then the container is dashed at x1.5, (108, 192)-(972, 1728), not at the project's x0.75
        assert near(rgb.getpixel((115, 192)), CONTAINER_COLOR) and near(rgb.getpixel((108, 199)), CONTAINER_COLOR)
        assert near(rgb.getpixel((970, 1000)), CONTAINER_COLOR) or near(rgb.getpixel((970, 1006)), CONTAINER_COLOR)
        assert near(rgb.getpixel((500, 1000)), (255, 255, 255))

    def test_a_cached_overlay_is_served_as_stored(self, project):
        # given a screen whose overlay is already cached, in the current drawing style
        screen = ScreenFactory(project=project)
        screen.overlay.save(f"cached-v{OVERLAY_STYLE}-x.png", ContentFile(b"cached"), save=True)
        # then ensure returns it without rendering (the stored bytes are untouched)
        name = screen_overlay_ensure(screen=Screen.objects.get(pk=screen.pk))
        assert name == screen.overlay.name
        with screen.overlay.storage.open(name) as fh:
            assert fh.read() == b"cached"

    def test_an_overlay_cached_in_an_older_style_is_drawn_again_and_replaced(self, project):
        # given a screen whose overlay was cached before containers were drawn (no style in its name)
        screen = ScreenFactory(project=project)
        CandidateFactory(screen=screen, left=0, top=0, right=50, bottom=50)
        screen.overlay.save("old.jpg", ContentFile(b"old"), save=True)
        old = screen.overlay.name
        # when it is asked for
        name = screen_overlay_ensure(screen=Screen.objects.get(pk=screen.pk))
        # then a new image in the current style is recorded, and the old file is gone
        assert name != old and f"-v{OVERLAY_STYLE}-" in name
        assert Screen.objects.get(pk=screen.pk).overlay.name == name
        assert not screen.overlay.storage.exists(old)
        with screen.overlay.storage.open(name) as fh, Image.open(fh) as image:
            image.verify()


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_requests_agree_on_one_complete_file(project):
    # given a screen with no overlay yet
    screen = ScreenFactory(project=project)
    CandidateFactory.create_batch(20, screen=screen)
    barrier = threading.Barrier(4)
    results: list[str] = []
    errors: list[BaseException] = []

    def request() -> None:
        try:
            barrier.wait()
            results.append(screen_overlay_ensure(screen=Screen.objects.get(pk=screen.pk)))
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    # when four first requests race
    threads = [threading.Thread(target=request) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    # then all return the same name, it is the recorded one, and only that file is left, complete
    assert not errors
    assert len(results) == 4 and len(set(results)) == 1
    stored = Screen.objects.get(pk=screen.pk).overlay
    assert stored.name == results[0]
    assert stored.storage.listdir("overlays")[1] == [results[0].split("/")[-1]]
    with stored.storage.open(stored.name) as fh, Image.open(fh) as image:
        image.verify()
