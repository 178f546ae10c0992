"""Content-Security-Policy on every page (django-csp), and the API documentation pages (issue 12 §8, §10).

HSTS and the HTTPS settings belong to the production profile: tests/annotation/test_settings.py and the
web role under production settings (tests/ci/test_entrypoint.py) check them.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import login
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def directives(header: str) -> dict[str, list[str]]:
    parsed = {}
    for part in header.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


def test_pages_carry_a_strict_policy_whose_nonce_is_the_pages(client):
    response = client.get("/login/")
    assert response.status_code == 200
    policy = directives(response["Content-Security-Policy"])
    assert policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"] and policy["form-action"] == ["'self'"]
    # no inline code but the page's own, marked with this response's nonce
    for directive in ("script-src", "style-src"):
        assert "'unsafe-inline'" not in policy[directive] and "'unsafe-eval'" not in policy[directive]
    (nonce,) = {v for v in policy["script-src"] if v.startswith("'nonce-")}
    assert policy["style-src"] == ["'self'", nonce]
    assert nonce.removeprefix("'nonce-").removesuffix("'") in response.content.decode()
    # style attributes only (chart bars), which cannot run code
    assert policy["style-src-attr"] == ["'unsafe-inline'"]


def test_each_response_has_a_nonce_of_its_own(client):
    first, second = client.get("/login/"), client.get("/login/")
    assert first["Content-Security-Policy"] != second["Content-Security-Policy"]


def test_no_template_has_inline_code_without_the_nonce():
    # Inline event handlers (onclick=...) and <script>/<style> blocks without the nonce are blocked by the
    # policy; the browser suite would see them only on the pages it visits.
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    templates = [*root.glob("frontend/templates/**/*.html"), *root.glob("annotation/templates/**/*.html")]
    assert templates
    for path in templates:
        html = re.sub(r"\{#.*?#\}", "", path.read_text())  # template comments
        assert not re.search(r"\son[a-z]+\s*=", html), f"inline event handler in {path}"
        for tag in re.findall(r"<(?:script|style)\b[^>]*>", html):
            assert "src=" in tag or 'nonce="{{ csp_nonce }}"' in tag or "application/json" in tag, (path, tag)


@pytest.mark.parametrize("path", ["/api/docs/"])
def test_options_on_the_docs_pages_names_the_methods(client, path):
    # Given anyone, when they ask a docs page which methods it allows, then it says so (it was a 500)
    response = client.options(path)
    assert response.status_code == 200
    assert set(response["Allow"].replace(" ", "").split(",")) >= {"GET", "OPTIONS"}


@pytest.mark.parametrize("path", ["/api/docs/"])
def test_the_docs_pages_render_with_their_own_relaxation_only(client, path):
    lead = UserFactory(username="leo")
    MembershipFactory(project=ProjectFactory(slug="demo"), user=lead, role="lead")
    login(client, lead)
    response = client.get(path)
    assert response.status_code == 200
    policy = directives(response["Content-Security-Policy"])
    assert policy["img-src"] == ["'self'", "data:"]
    assert "'unsafe-inline'" not in policy["script-src"]
    html = response.content.decode()
    assert "fonts.googleapis.com" not in html
    for tag in re.findall(r"<(?:script|style)\b[^>]*>", html):
        assert "src=" in tag or "nonce=" in tag, tag


def test_swagger_start_script_is_served_as_javascript(client):
    response = client.get("/api/docs/?script=")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle(" in response.content.decode()


def test_the_json_api_has_no_policy_but_its_documentation_has(client, django_user_model):
    # a policy governs documents a browser renders; the JSON API's responses skip the work
    response = client.get("/api/projects/demo/stages/")
    assert "Content-Security-Policy" not in response
    assert "Content-Security-Policy" in client.get("/api/docs/")


def test_redoc_is_dropped_and_its_address_lands_on_swagger_ui(client):
    # ReDoc fetched its logo from a CDN; the old address redirects to the page served locally
    response = client.get("/api/redoc/")
    assert (response.status_code, response["Location"]) == (301, "/api/docs/")
