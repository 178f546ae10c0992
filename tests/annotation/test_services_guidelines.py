"""The guidelines' image allowlist (issue 19 §6): a source is the project's own URL however it is encoded,
never one a browser resolves elsewhere (``/projects/alpha/%2e%2e/%2e%2e/logout/`` loaded ``/logout/`` and
logged the reader out)."""

from __future__ import annotations

import re

import pytest

from annotation.services.guidelines import guidelines_image_allowed, guidelines_render
from tests.factories import ProjectFactory

ALLOWED = [
    "/projects/alpha/screens/900001/",
    "/api/projects/alpha/screens/900001/image/",
    "/api/projects/alpha/screens/900001/image/?v=2#top",
    "/api/projects/alpha/screens/a..b/image/",  # two dots inside a name are no dot segment
    "/api/projects/alpha/screens/%39%30%30001/image/",  # encoded digits: still the project's URL
]

REFUSED = [
    "/projects/alpha/../../logout/",
    "/projects/alpha/%2e%2e/%2e%2e/logout/",  # the report's bypass
    "/projects/alpha/%2E%2E/%2E%2E/logout/",
    "/projects/alpha/%2E./%2E./logout/",
    "/projects/alpha/.%2e/.%2e/logout/",
    "/projects/alpha/.%2E/%2e./logout/",  # mixed case and mixed forms
    "/projects/alpha/%252e%252e/%252e%252e/logout/",  # encoded twice
    "/projects/alpha/%25252e%25252e/logout/",  # three times
    "/projects/alpha/./screens/",
    "/projects/alpha/%2e/screens/",
    "/projects/alpha/..\\..\\logout/",  # browsers read a backslash as a slash
    "/projects/alpha/%5c..%5c..%5clogout/",
    "/projects/alpha/..%2f..%2flogout/",  # an encoded slash
    "/projects/alpha/..%2F..%2Flogout/",
    "/projects/alpha/%252f",
    "/projects/alpha//evil.example/x.png",  # an empty segment
    "//evil.example/projects/alpha/x.png",  # another host
    "/\\evil.example/projects/alpha/x.png",
    "https://evil.example/projects/alpha/x.png",
    "/projects/alpha/.\t./.\n./logout/",  # browsers drop tabs and newlines, then resolve the dots
    "/projects/alpha/.%09./logout/",
    "/projects/alpha/%00/x.png",
    "/projects/alpha/%ff%fe/x.png",  # not UTF-8
    "/Projects/alpha/x.png",  # paths are case-sensitive: not the project's prefix
    "/projects/alphabet/x.png",
    "/projects/beta/x.png",
    "/api/projects/beta/screens/1/image/",
    "javascript:alert(1)//projects/alpha/",
    "/logout/?/projects/alpha/",
]


@pytest.fixture
def project(db):
    return ProjectFactory(slug="alpha")


@pytest.mark.parametrize("src", ALLOWED)
def test_the_projects_own_urls_are_allowed(project, src):
    assert guidelines_image_allowed(project=project, src=src)


@pytest.mark.parametrize("src", REFUSED)
def test_a_source_that_resolves_elsewhere_is_refused(project, src):
    assert not guidelines_image_allowed(project=project, src=src)


@pytest.mark.parametrize(
    "src",
    [
        "/projects/alpha/%2e%2e/%2e%2e/logout/",
        "/projects/alpha/%2E./.%2e/logout/",
        "/projects/alpha/%252e%252e/%252e%252e/logout/",
        "/projects/alpha/..\\\\..\\\\logout/",  # Markdown's escaped backslashes: literal ones
        "/projects/alpha/..%2f..%2flogout/",
        "</projects/alpha/.\t./.\t./logout/>",  # a destination in <...> may hold spaces and tabs
    ],
)
def test_rendered_guidelines_drop_the_source_of_such_an_image(project, src):
    html = guidelines_render(project=project, text=f"Read this ![the rule]({src}) first.")
    img = re.search(r"<img[^>]*>", html)
    assert img, html
    assert "src=" not in img.group(), img.group()
    assert 'alt="the rule"' in img.group()


def test_rendered_guidelines_keep_the_projects_own_image(project):
    html = guidelines_render(project=project, text="![screen](/api/projects/alpha/screens/900001/image/)")
    assert 'src="/api/projects/alpha/screens/900001/image/"' in html
