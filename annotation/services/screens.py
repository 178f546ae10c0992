"""Writes of screens: the project an import goes into, and batches of validated screens.

The importer (``pipeline.ingest``) validates every pair in memory first, then hands a batch
of ``ScreenData`` to ``screen_create_batch``, which stores the images and writes each screen
together with its candidates. Nothing here parses files.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import DatabaseError, IntegrityError, models, transaction
from django.db.models import Value
from django.db.models.functions import Cast
from django.utils.text import slugify

from annotation.db import bulk, session
from annotation.exceptions import ApplicationError
from annotation.models import App, Candidate, Project, Screen
from annotation.vh import CandidateData, VHError, hidden_text, iter_nodes, vh_root

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScreenData:
    """One validated screen, ready to write. ``image_ext`` is ``jpg`` or ``png`` (from the content).

    The VH travels as text and PostgreSQL parses it into jsonb: this saves re-serialising a
    dict in Python and keeps a batch's memory to the file sizes.
    """

    rico_id: str
    app_package: str
    activity_name: str
    image_bytes: bytes
    image_ext: str
    width: int
    height: int
    vh_text: str  # the VH file's JSON text, already validated (see annotation.vh.parse_vh)
    content_sha256: str
    candidates: list[CandidateData]
    name: str = ""  # the pair's name in the source, for messages
    # The VH device space used to compute ``candidates`` (turned for a landscape screen);
    # recorded on the screen so that every later VH-to-pixel conversion uses the same scale.
    device_width: int | None = None
    device_height: int | None = None


@dataclass
class ScreenBatchResult:
    created: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (rico_id, reason)


def project_get_or_create(*, slug: str, split_seed: str | None = None) -> Project:
    """The project with this slug, created with the defaults (name = slug; a random split seed unless
    ``split_seed`` is given: the developer tools' demo and crowds give one, so that they replay) if missing.

    Idempotent and race-safe (``get_or_create`` on the unique slug). ``ApplicationError``
    when ``slug`` is not a valid slug.
    """
    if not slug or slugify(slug) != slug or len(slug) > 64:
        raise ApplicationError(f"Invalid project slug {slug!r}: use lowercase letters, digits and '-'.", field="slug")
    defaults = {"name": slug, **({"split_seed": split_seed} if split_seed else {})}
    project, _ = Project.objects.get_or_create(slug=slug, defaults=defaults)
    return project


def screen_image_name(*, project: Project, rico_id: str, ext: str) -> str:
    """Storage name of a screenshot: ``screens/<project slug>/<rico_id>.<ext>``."""
    return f"screens/{project.slug}/{rico_id}.{ext}"


def _apps_for(*, project: Project, packages: set[str]) -> dict[str, App]:
    apps = {a.package: a for a in App.objects.filter(project=project, package__in=packages)}
    missing = packages - apps.keys()
    if missing:
        # ignore_conflicts: a concurrent import may create the same app; re-read after.
        App.objects.bulk_create([App(project=project, package=p) for p in sorted(missing)], ignore_conflicts=True)
        apps.update({a.package: a for a in App.objects.filter(project=project, package__in=missing)})
    return apps


def _screen_row(*, project: Project, app: App, data: ScreenData, image_name: str) -> Screen:
    return Screen(
        project=project,
        app=app,
        rico_id=data.rico_id,
        activity_name=data.activity_name[:512],
        image=image_name,
        width=data.width,
        height=data.height,
        # An expression (not a value) also makes PostgreSQL's bulk_create use VALUES rows
        # instead of UNNEST arrays: psycopg quotes array elements in Python, which cost ~6 ms
        # per screen for a real RICO VH (measured); a plain text parameter is escaped in C.
        vh=Cast(Value(data.vh_text, output_field=models.TextField()), output_field=models.JSONField()),
        content_sha256=data.content_sha256,
        device_width=data.device_width,
        device_height=data.device_height,
    )


def _candidate_rows(screen: Screen, data: ScreenData) -> list[Candidate]:
    return [
        Candidate(
            screen=screen,
            vh_index=c.vh_index,
            left=c.left,
            top=c.top,
            right=c.right,
            bottom=c.bottom,
            class_name=c.class_name,
            type=c.type,
            text=c.text,
            content_desc=c.content_desc,
            resource_id=c.resource_id,
        )
        for c in data.candidates
    ]


def screen_create_batch(*, project: Project, screens: Sequence[ScreenData]) -> ScreenBatchResult:
    """Write a batch of validated screens; each screen row commits together with its candidates.

    Contract:
    * Ids already in the project (one query) are reported ``already_present`` and left
      untouched: a re-import changes nothing and duplicates nothing. An id already present
      with DIFFERENT content (image or VH hash) is ``failed`` (not replaced).
    * Images are written to the default storage first (``screens/<slug>/<id>.<ext>``); a failed
      write fails that screen only.
    * The batch is written in one transaction (``bulk_create``). If it fails (e.g. a
      concurrent import inserted the same id: the unique constraint is the race safety net),
      it is retried one screen per transaction, so one bad screen fails alone.
    * Images of screens that were not written are deleted again (unless a screen row of
      the project references that name), so a failure leaves no orphan file behind.
    Takes no row locks. Ids must be unique within ``screens``.
    """
    result = ScreenBatchResult()
    if not screens:
        return result
    existing = dict(
        Screen.objects.filter(project=project, rico_id__in=[s.rico_id for s in screens]).values_list(
            "rico_id", "content_sha256"
        )
    )
    todo: list[ScreenData] = []
    for data in screens:
        if data.rico_id in existing:
            _report_existing(result, data, existing[data.rico_id])
        else:
            todo.append(data)

    stored: dict[str, str] = {}  # rico_id -> storage name actually written
    writable: list[ScreenData] = []
    for data in todo:
        name = screen_image_name(project=project, rico_id=data.rico_id, ext=data.image_ext)
        try:
            stored[data.rico_id] = default_storage.save(name, ContentFile(data.image_bytes))
        except Exception as exc:  # any storage backend error fails this screen only
            logger.warning("storing %s failed: %s", name, exc)
            result.failed.append((data.rico_id, f"could not store the image: {exc}"[:300]))
            continue
        writable.append(data)

    if writable:
        written = _write_all(project=project, screens=writable, stored=stored)
        if written:
            result.created.extend(s.rico_id for s in writable)
        else:
            _write_one_by_one(project=project, screens=writable, stored=stored, result=result)
    _delete_unused_images(project=project, stored=stored, keep=set(result.created))
    return result


def _report_existing(result: ScreenBatchResult, data: ScreenData, sha: str) -> None:
    if sha == data.content_sha256:
        result.already_present.append(data.rico_id)
    else:
        result.failed.append(
            (data.rico_id, f"id {data.rico_id} is already in the project with different content; not replaced")
        )


_CANDIDATE_COLUMNS = (
    "screen_id",
    "vh_index",
    "left",
    "top",
    "right",
    "bottom",
    "class_name",
    "type",
    "text",
    "content_desc",
    "resource_id",
)


def _insert_candidates(rows: list[Screen], screens: list[ScreenData]) -> None:
    """Insert the candidates of freshly inserted screens (``rows[i]`` is ``screens[i]``)."""
    bulk.copy_rows(
        Candidate,
        _CANDIDATE_COLUMNS,
        (
            (
                row.pk,
                c.vh_index,
                c.left,
                c.top,
                c.right,
                c.bottom,
                c.class_name,
                c.type,
                c.text,
                c.content_desc,
                c.resource_id,
            )
            for row, data in zip(rows, screens, strict=True)
            for c in data.candidates
        ),
    )


def _write_all(*, project: Project, screens: list[ScreenData], stored: dict[str, str]) -> bool:
    try:
        with transaction.atomic():
            session.large_values_lz4()
            apps = _apps_for(project=project, packages={s.app_package for s in screens})
            rows = bulk.insert_returning(
                [
                    _screen_row(project=project, app=apps[s.app_package], data=s, image_name=stored[s.rico_id])
                    for s in screens
                ],
                as_text={"vh": [s.vh_text for s in screens]},
            )
            _insert_candidates(rows, screens)
    except DatabaseError as exc:
        logger.info("batch write failed (%s); retrying one screen at a time", exc)
        return False
    return True


def _write_one_by_one(
    *, project: Project, screens: list[ScreenData], stored: dict[str, str], result: ScreenBatchResult
) -> None:
    for data in screens:
        try:
            with transaction.atomic():
                app = _apps_for(project=project, packages={data.app_package})[data.app_package]
                row = _screen_row(project=project, app=app, data=data, image_name=stored[data.rico_id])
                row.save(force_insert=True)
                Candidate.objects.bulk_create(_candidate_rows(row, data))
        except IntegrityError as exc:
            sha = Screen.objects.filter(project=project, rico_id=data.rico_id).values_list("content_sha256", flat=True)
            if sha:
                _report_existing(result, data, sha[0])  # a concurrent import won the race
            else:
                result.failed.append((data.rico_id, f"database refused the screen: {_first_line(exc)}"))
        except DatabaseError as exc:
            result.failed.append((data.rico_id, f"database error: {_first_line(exc)}"))
        else:
            result.created.append(data.rico_id)


def _delete_unused_images(*, project: Project, stored: dict[str, str], keep: set[str]) -> None:
    unused = {rico_id: name for rico_id, name in stored.items() if rico_id not in keep}
    if not unused:
        return
    referenced = set(
        Screen.objects.filter(project=project, image__in=list(unused.values())).values_list("image", flat=True)
    )
    for name in unused.values():
        if name in referenced:
            continue  # e.g. S3 with file_overwrite: the same name belongs to the winner of a race
        try:
            default_storage.delete(name)
        except Exception as exc:  # cleanup is best effort; the screen is already reported
            logger.warning("could not delete unused image %s: %s", name, exc)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def candidates_hidden_text_fill(*, project: Project | None = None, batch: int = 200) -> int:
    """Give the candidates stored before the hidden-child rule their text: a candidate with
    neither text nor content-desc takes the texts of its hidden descendants
    (``annotation.vh.hidden_text``, as ``vh_candidates`` now does at import). Reads the VH of
    the screens that have such candidates, ``batch`` screens at a time; idempotent (a filled
    candidate has text, so a re-run finds it no more). Returns the number of candidates filled.

    Candidates never change otherwise after import and nothing locks them; a page already open
    keeps the empty text it was served.
    """
    empty = Candidate.objects.filter(text="", content_desc="")
    if project is not None:
        empty = empty.filter(screen__project=project)
    screen_ids = list(empty.order_by("screen_id").values_list("screen_id", flat=True).distinct())
    filled = 0
    for start in range(0, len(screen_ids), batch):
        chunk = screen_ids[start : start + batch]
        wanted: dict[int, list[Candidate]] = {}
        for candidate in empty.filter(screen_id__in=chunk).only("pk", "screen_id", "vh_index", "text"):
            wanted.setdefault(candidate.screen_id, []).append(candidate)
        changed = []
        for screen_id, vh in Screen.objects.filter(pk__in=chunk).values_list("pk", "vh"):
            try:
                walk = list(iter_nodes(vh_root(vh)))
            except VHError:
                continue  # the importer refuses such a VH: nothing here to fill from
            nodes = [node for _, _, node in walk]
            parents = [parent for _, parent, _ in walk]
            for candidate in wanted.get(screen_id, []):
                if candidate.vh_index >= len(nodes):
                    continue
                try:
                    candidate.text = hidden_text(nodes, parents, candidate.vh_index)
                except VHError:
                    continue
                if candidate.text:
                    changed.append(candidate)
        with transaction.atomic():
            Candidate.objects.bulk_update(changed, ["text"])
        filled += len(changed)
    return filled
