"""Screen API: payload, permissions, query counts, image/overlay streaming, OpenAPI schema and docs."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.staticfiles import finders
from PIL import Image
from rest_framework.authtoken.models import Token

from annotation.models import Screen
from tests.conftest import login
from tests.factories import CandidateFactory, MembershipFactory, ProjectFactory, ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


def detail_url(slug: str, rico_id: str, suffix: str = "") -> str:
    return f"/api/projects/{slug}/screens/{rico_id}/{suffix}"


@pytest.fixture
def screen(project):
    screen = ScreenFactory(project=project, rico_id="31")
    CandidateFactory(screen=screen, vh_index=4, text="Sign in", class_name="android.widget.Button", type="button")
    CandidateFactory(screen=screen, vh_index=2, text="", content_desc="home", class_name="android.widget.ImageView")
    return screen


class TestScreenDetail:
    def test_member_gets_screen_with_candidates_in_vh_order(self, api_client, annotator, screen):
        # given an annotator of the project
        login(api_client, annotator)
        # when they fetch the screen
        response = api_client.get(detail_url("demo", "31"))
        # then they get the shared wire shape with candidates ordered by vh_index
        assert response.status_code == 200
        body = response.json()
        assert body["rico_id"] == "31"
        assert body["app"] == screen.app.package
        assert (body["width"], body["height"]) == (1080, 1920)
        assert body["image_url"] == detail_url("demo", "31", "image/")
        assert body["overlay_url"] == detail_url("demo", "31", "overlay/")
        assert body["vh_url"] == detail_url("demo", "31", "vh/")
        assert [c["vh_index"] for c in body["candidates"]] == [2, 4]
        assert body["candidates"][0]["text"] == "home"  # content-desc stands in for missing text
        assert body["candidates"][1] == {
            "vh_index": 4,
            "bounds": [10, 10, 200, 60],
            "text": "Sign in",
            "type": "button",
            "class_name": "android.widget.Button",
        }

    def test_lead_and_site_admin_may_read(self, api_client, lead, screen):
        admin = UserFactory(username="root", is_superuser=True, is_staff=True)
        for user in (lead, admin):
            login(api_client, user)
            assert api_client.get(detail_url("demo", "31")).status_code == 200

    def test_token_authentication(self, api_client, annotator, screen):
        token = Token.objects.create(user=annotator)
        api_client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        assert api_client.get(detail_url("demo", "31")).status_code == 200

    def test_anonymous_gets_403(self, api_client, screen):
        response = api_client.get(detail_url("demo", "31"))
        assert response.status_code == 403
        assert "detail" in response.json()

    def test_non_member_and_member_of_another_project_get_404(self, api_client, outsider, screen):
        other_annotator = UserFactory(username="bea")
        MembershipFactory(project=ProjectFactory(slug="other"), user=other_annotator, role="lead")
        for user in (outsider, other_annotator):
            login(api_client, user)
            response = api_client.get(detail_url("demo", "31"))
            assert response.status_code == 404
            assert response.json() == {"detail": "Project not found."}

    def test_unknown_screen_is_404(self, api_client, annotator, screen):
        login(api_client, annotator)
        response = api_client.get(detail_url("demo", "999"))
        assert response.status_code == 404
        assert response.json() == {"detail": "Screen not found."}

    def test_screen_of_another_project_is_not_reachable_through_this_one(self, api_client, annotator, project):
        ScreenFactory(project=ProjectFactory(slug="other"), rico_id="77")
        login(api_client, annotator)
        assert api_client.get(detail_url("demo", "77")).status_code == 404

    @pytest.mark.parametrize("n_candidates", [1, 300])
    def test_query_count_does_not_grow_with_candidates(
        self, api_client, annotator, project, n_candidates, django_assert_max_num_queries
    ):
        # given a screen with few or many candidates
        screen = ScreenFactory(project=project, rico_id="500")
        CandidateFactory.create_batch(n_candidates, screen=screen)
        login(api_client, annotator)
        # when it is fetched, then the number of queries is the same:
        # session + user (authentication), project, screen, candidates
        with django_assert_max_num_queries(5):
            response = api_client.get(detail_url("demo", "500"))
        assert len(response.json()["candidates"]) == n_candidates


class TestScreenImage:
    def test_member_gets_the_stored_bytes_with_private_cache_headers(self, api_client, annotator, screen):
        login(api_client, annotator)
        response = api_client.get(detail_url("demo", "31", "image/"))
        assert response.status_code == 200
        assert response["Content-Type"] == "image/png"
        assert response["Cache-Control"] == "private, max-age=86400"
        with screen.image.open("rb") as fh:
            assert b"".join(response.streaming_content) == fh.read()

    def test_revalidation_with_etag_returns_304(self, api_client, annotator, screen):
        login(api_client, annotator)
        etag = api_client.get(detail_url("demo", "31", "image/"))["ETag"]
        response = api_client.get(detail_url("demo", "31", "image/"), HTTP_IF_NONE_MATCH=etag)
        assert response.status_code == 304
        assert response["ETag"] == etag

    def test_anonymous_403_outsider_404(self, api_client, outsider, screen):
        assert api_client.get(detail_url("demo", "31", "image/")).status_code == 403
        login(api_client, outsider)
        assert api_client.get(detail_url("demo", "31", "image/")).status_code == 404


def _node(name, bounds, visible=True, children=(), **extra):
    return {"class": name, "bounds": list(bounds), "visible-to-user": visible, "children": list(children), **extra}


@pytest.fixture
def vh_screen(project):
    """A landscape-free 1080x1920 screen whose VH has a container, a text, a hidden node and a
    row whose text sits in a hidden child."""
    root = _node(
        "com.android.internal.policy.PhoneWindow$DecorView",
        (0, 0, 1440, 2560),
        children=[
            _node("android.widget.TextView", (0, 0, 1440, 200), text="Title"),
            _node("android.widget.Button", (0, 300, 720, 400), visible=False, text="Gone"),
            _node(
                "android.widget.LinearLayout",
                (0, 400, 1440, 600),
                children=[
                    _node("android.widget.TextView", (0, 400, 720, 600), visible=False, text="$58.92"),
                ],
            ),
        ],
    )
    return ScreenFactory(
        project=project, rico_id="41", vh={"activity_name": "com.example/.Main", "activity": {"root": root}}
    )


class TestScreenVH:
    def test_member_gets_every_shown_node_in_pixels(self, api_client, annotator, vh_screen):
        # given an annotator of the project
        login(api_client, annotator)
        # when they fetch the screen's VH
        response = api_client.get(detail_url("demo", "41", "vh/"))
        # then every shown node comes back in vh_index order, in screenshot pixels (1440 -> 1080)
        assert response.status_code == 200
        assert response["Cache-Control"] == "private, max-age=86400"
        body = response.json()
        assert (body["rico_id"], body["width"], body["height"]) == ("41", 1080, 1920)
        assert body["nodes"] == [
            {
                "vh_index": 0,
                "parent_index": -1,
                "bounds": [0, 0, 1080, 1920],
                "leaf": False,
                "text": "",
                "class_name": "com.android.internal.policy.PhoneWindow$DecorView",
            },
            {
                "vh_index": 1,
                "parent_index": 0,
                "bounds": [0, 0, 1080, 150],
                "leaf": True,
                "text": "Title",
                "class_name": "android.widget.TextView",
            },
            {
                "vh_index": 3,
                "parent_index": 0,
                "bounds": [0, 300, 1080, 450],
                "leaf": True,
                "text": "$58.92",
                "class_name": "android.widget.LinearLayout",
            },
        ]

    def test_a_landscape_screen_reads_the_turned_device(self, api_client, annotator, project):
        root = _node("root", (0, 0, 2560, 1440), children=[_node("t", (1280, 720, 2560, 1440), text="x")])
        ScreenFactory(project=project, rico_id="42", width=1920, height=1080, vh={"activity": {"root": root}})
        login(api_client, annotator)
        nodes = api_client.get(detail_url("demo", "42", "vh/")).json()["nodes"]
        assert [node["bounds"] for node in nodes] == [[0, 0, 1920, 1080], [960, 540, 1920, 1080]]

    def test_the_screens_own_device_size_wins_over_the_projects(self, api_client, annotator, project):
        # given a screen imported with a 720x1280 device (the project's is 1440x2560)
        root = _node("root", (0, 0, 720, 1280), children=[_node("t", (360, 640, 720, 1280), text="x")])
        ScreenFactory(
            project=project, rico_id="43", device_width=720, device_height=1280, vh={"activity": {"root": root}}
        )
        login(api_client, annotator)
        # when its VH is fetched, then the boxes scale by 1080 / 720, not 1080 / 1440
        nodes = api_client.get(detail_url("demo", "43", "vh/")).json()["nodes"]
        assert [node["bounds"] for node in nodes] == [[0, 0, 1080, 1920], [540, 960, 1080, 1920]]

    def test_revalidation_with_etag_returns_304(self, api_client, annotator, vh_screen):
        login(api_client, annotator)
        etag = api_client.get(detail_url("demo", "41", "vh/"))["ETag"]
        response = api_client.get(detail_url("demo", "41", "vh/"), HTTP_IF_NONE_MATCH=etag)
        assert response.status_code == 304
        assert response["ETag"] == etag

    def test_anonymous_403_outsider_404_unknown_404(self, api_client, outsider, annotator, vh_screen):
        assert api_client.get(detail_url("demo", "41", "vh/")).status_code == 403
        login(api_client, outsider)
        assert api_client.get(detail_url("demo", "41", "vh/")).status_code == 404
        login(api_client, annotator)
        assert api_client.get(detail_url("demo", "999", "vh/")).status_code == 404

    def test_query_count(self, api_client, annotator, vh_screen, django_assert_max_num_queries):
        login(api_client, annotator)
        # session + user (authentication), project, screen with its VH
        with django_assert_max_num_queries(4):
            assert api_client.get(detail_url("demo", "41", "vh/")).status_code == 200

    def test_serializer_matches_the_payload_keys(self, api_client, annotator, vh_screen):
        from annotation.apis.screens import ScreenVHOutputSerializer, VHNodeOutputSerializer

        login(api_client, annotator)
        body = api_client.get(detail_url("demo", "41", "vh/")).json()
        assert set(body) == set(ScreenVHOutputSerializer().fields)
        assert set(body["nodes"][0]) == set(VHNodeOutputSerializer().fields)


class TestScreenOverlay:
    def test_first_request_renders_and_caches_later_requests_stream_the_cache(self, api_client, annotator, screen):
        login(api_client, annotator)
        # when the overlay is requested for the first time
        first = api_client.get(detail_url("demo", "31", "overlay/"))
        # then a JPEG of the screenshot's size comes back and is recorded on the screen
        assert first.status_code == 200
        assert first["Content-Type"] == "image/jpeg"
        assert first["Cache-Control"] == "private, max-age=86400"
        body = b"".join(first.streaming_content)
        with Image.open(io.BytesIO(body)) as image:
            assert image.size == (108, 192)
        screen.refresh_from_db()
        cached_name = screen.overlay.name
        assert cached_name.startswith("overlays/")
        # when it is requested again, the cached file is served (same name, same bytes, nothing new stored)
        second = api_client.get(detail_url("demo", "31", "overlay/"))
        assert b"".join(second.streaming_content) == body
        screen.refresh_from_db()
        assert screen.overlay.name == cached_name
        assert screen.overlay.storage.listdir("overlays")[1] == [cached_name.split("/")[-1]]

    def test_anonymous_403_outsider_404_and_nothing_rendered(self, api_client, outsider, screen):
        assert api_client.get(detail_url("demo", "31", "overlay/")).status_code == 403
        login(api_client, outsider)
        assert api_client.get(detail_url("demo", "31", "overlay/")).status_code == 404
        assert Screen.objects.get(pk=screen.pk).overlay.name == ""


class TestOpenApi:
    def test_schema_documents_the_screen_endpoints_with_serializers(self, api_client):
        response = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
        assert response.status_code == 200
        schema = response.json()
        paths = schema["paths"]
        detail = paths["/api/projects/{slug}/screens/{rico_id}/"]["get"]
        assert detail["operationId"] == "screen_retrieve"
        assert detail["responses"]["200"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ScreenOutput"
        }
        assert set(detail["responses"]) >= {"200", "403", "404"}
        screen_schema = schema["components"]["schemas"]["ScreenOutput"]
        assert set(screen_schema["properties"]) == {
            "rico_id",
            "app",
            "image_url",
            "overlay_url",
            "vh_url",
            "width",
            "height",
            "candidates",
        }
        assert screen_schema["properties"]["candidates"]["items"] == {"$ref": "#/components/schemas/CandidateOutput"}
        image = paths["/api/projects/{slug}/screens/{rico_id}/image/"]["get"]
        content = image["responses"]["200"]["content"]
        assert set(content) == {"image/png", "image/jpeg"}  # what the importer stores; no wildcard
        assert {media["schema"]["format"] for media in content.values()} == {"binary"}
        overlay = paths["/api/projects/{slug}/screens/{rico_id}/overlay/"]["get"]
        assert "image/jpeg" in overlay["responses"]["200"]["content"]

    def test_serializer_matches_the_payload_keys(self, api_client, annotator, screen):
        # The serializer documents screen_payload; a key added to one must be added to the other.
        from annotation.apis.screens import CandidateOutputSerializer, ScreenOutputSerializer

        login(api_client, annotator)
        body = api_client.get(detail_url("demo", "31")).json()
        assert set(body) == set(ScreenOutputSerializer().fields)
        assert set(body["candidates"][0]) == set(CandidateOutputSerializer().fields)

    def test_docs_page_uses_only_assets_served_by_the_app(self, client):
        response = client.get("/api/docs/")
        assert response.status_code == 200
        html = response.content.decode()
        refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
        assert refs, "the docs page should load its Swagger UI assets"
        for ref in refs:
            assert ref.startswith("/"), ref
            assert not ref.startswith("//"), ref
        # every static asset exists in the app (sidecar), so the page works offline
        static_refs = [r for r in refs if r.startswith("/static/")]
        assert any("swagger-ui" in r for r in static_refs)
        for ref in static_refs:
            assert finders.find(ref.removeprefix("/static/").split("?")[0]), ref
        assert "cdn" not in html.lower()
        assert not re.search(r"https?://", html), "no absolute URL: everything comes from this app"
        # Swagger UI's start script is a request of its own (no inline script under the CSP)
        (script,) = [r for r in refs if "script=" in r]
        assert 'url: "/api/schema/"' in client.get(script.replace("&amp;", "&")).content.decode()
