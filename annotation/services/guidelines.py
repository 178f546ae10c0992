"""A project's annotator guidelines: Markdown written by its leads (the papers' rules by default),
rendered to sanitised HTML, and shown once, unasked, to each new member."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from urllib.parse import unquote

import nh3
from django.db.models import Q
from django.utils import timezone
from markdown_it import MarkdownIt

from annotation.exceptions import ApplicationError
from annotation.models import Membership, Project

GUIDELINES_MAX = 100_000
DEFAULT_FILE = Path(__file__).with_name("guidelines_default.md")

# What the rendered Markdown may contain: text structure, links, tables and images (whose
# sources the attribute filter restricts to the project's own URLs). No raw HTML reaches the
# page unsanitised, and nothing can run script or style.
_TAGS = {
    "a",
    "blockquote",
    "br",
    "code",
    "del",
    "details",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "img",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "strong",
    "summary",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "th": {"align"},
    "td": {"align"},
}


@cache
def guidelines_default() -> str:
    """The papers' rules with worked examples (``guidelines_default.md``)."""
    return DEFAULT_FILE.read_text(encoding="utf-8")


def guidelines_text(*, project: Project) -> str:
    """The project's guidelines as Markdown: the leads' text, else the default."""
    return project.guidelines or guidelines_default()


def image_prefixes(*, project: Project) -> tuple[str, ...]:
    """Where a guidelines image may come from: the project's own pages and API (its screenshots
    and stored files), never another host or project."""
    return (f"/projects/{project.slug}/", f"/api/projects/{project.slug}/")


# Percent-decoding rounds a source may take before it reads the same twice: ``%252e`` needs two.
_DECODE_ROUNDS = 4


def _path_within(src: str, prefixes: tuple[str, ...]) -> bool:
    """Whether a browser asked to load ``src`` asks this site for a path under one of ``prefixes``
    (issue 19 §6). The path (query and fragment aside) must start with a prefix as written and, once
    percent-decoded as often as it decodes (``%2e``, ``%252e``), hold no dot segment (``..``, ``.%2e``,
    ``%2E.``: a browser resolves them, ``/projects/a/%2e%2e/%2e%2e/logout/`` loads ``/logout/``), no
    encoded slash (``%2f``), no backslash (read as a slash), no empty segment (``//``) and no control
    character or space (browsers drop tabs and newlines before they resolve dots)."""
    path = src.split("#", 1)[0].split("?", 1)[0]
    if not path.startswith(prefixes):
        return False
    decoded = path
    for _ in range(_DECODE_ROUNDS):
        once = unquote(decoded, errors="strict")
        if once == decoded:
            break
        decoded = once
    else:
        return False  # still encoded after every round: no URL of ours looks like that
    if "\\" in decoded or any(ord(c) <= 0x20 or ord(c) == 0x7F for c in decoded):
        return False
    if decoded.count("/") != path.count("/"):
        return False  # a slash was encoded
    segments = decoded.split("/")[1:]
    if any(segment in (".", "..") for segment in segments) or "" in segments[:-1]:
        return False
    return decoded.startswith(prefixes)


def guidelines_image_allowed(*, project: Project, src: str) -> bool:
    """Whether the guidelines of ``project`` may show an image from ``src``: one of the project's own
    URLs (``image_prefixes``), however it is encoded, never one that resolves elsewhere."""
    try:
        return _path_within(src, image_prefixes(project=project))
    except UnicodeDecodeError:  # percent-escapes of bytes that are no UTF-8: no URL of ours
        return False


def guidelines_render(*, project: Project, text: str | None = None) -> str:
    """``text`` (default: the project's guidelines) as sanitised HTML, safe to mark safe.

    Images from anywhere but ``image_prefixes`` lose their source (only the alt text stays,
    ``guidelines_image_allowed``); links keep http(s), mailto and relative targets only, and open
    with ``rel="noopener noreferrer"``.
    """
    source = guidelines_text(project=project) if text is None else text
    html = MarkdownIt("commonmark", {"html": False}).enable("table").enable("strikethrough").render(source)

    def keep(tag: str, attribute: str, value: str) -> str | None:
        if tag == "img" and attribute == "src":
            return value if guidelines_image_allowed(project=project, src=value) else None
        return value

    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        attribute_filter=keep,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )


def guidelines_save(*, project: Project, text: str) -> Project:
    """Store the leads' guidelines (blank: back to the default). One ``UPDATE`` of one column."""
    text = (text or "").replace("\r\n", "\n").strip()
    if len(text) > GUIDELINES_MAX:
        raise ApplicationError(f"The guidelines are longer than {GUIDELINES_MAX:,} characters.", field="text")
    if text == guidelines_default().strip():
        text = ""
    Project.objects.filter(pk=project.pk).update(guidelines=text)
    project.guidelines = text
    return project


def guidelines_unseen(*, membership: Membership | None) -> bool:
    """Whether the member has not been shown the guidelines yet (site admins without a membership: no)."""
    return membership is not None and membership.guidelines_seen_at is None


def guidelines_mark_seen(*, membership: Membership | None) -> None:
    """Remember that the member was shown the guidelines (idempotent: the first time is kept)."""
    if membership is None or membership.guidelines_seen_at is not None:
        return
    now = timezone.now()
    Membership.objects.filter(Q(pk=membership.pk) & Q(guidelines_seen_at__isnull=True)).update(guidelines_seen_at=now)
    membership.guidelines_seen_at = now
