"""What one released question looks like, read in chunks straight from the database.

Every decision about the public format that the ScreenQA release does not spell
out lives in exactly one function here (see ``docs/formats.md``):

* :func:`release_image_id` - the ``image_id`` of a screen, and :func:`release_image_ids_as_text` - whether
  an export writes every one of them as a string (one type per field);
* :func:`release_image_path` - the relative image path of the DocVQA / JSONL formats;
* :func:`release_question_text` - which text of a question is released;
* :func:`release_element` - one ``ui_elements`` item (``vh_index`` -1 for drawn boxes);
* ordering (:func:`release_records`) - by ``image_id``, then question position.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.db.models import BigIntegerField, Case, F, When
from django.db.models.functions import Cast

from annotation.models import Answer, AnswerElement, Project, Question, QuestionState, Screen

SPLITS = ("train", "validation", "test")
NO_ANSWER = "<no answer>"
_NUMERIC = re.compile(r"^[0-9]{1,18}$")
# Screens are read this many at a time (about 2.4 questions and 3.5 answers each); their
# questions, answers and elements are fetched per chunk, so memory stays flat whatever the
# size of the project.
CHUNK_SIZE = 1000


def release_image_id(rico_id: str, *, as_text: bool = False) -> int | str:
    """RICO ids are integers in the release; trace screens (``<app>:trace_<n>:<k>``) keep their string id.

    A made-up integer could collide with a real RICO id, so non-numeric ids stay strings (the manifest
    counts them as ``non_numeric_image_ids``). A file holds one type per field (Arrow-based loaders such
    as ``datasets`` refuse a column of integers and strings), so an export that holds a trace screen
    writes *every* ``image_id`` as its ``rico_id`` string: ``as_text``, from
    :func:`release_image_ids_as_text`.
    """
    return int(rico_id) if _NUMERIC.match(rico_id) and not as_text else rico_id


def release_image_ids_as_text(*, project: Project) -> bool:
    """Whether an export of ``project`` holds a screen without a RICO id (a trace screen): then all its
    ``image_id``s are strings. A project of RICO screens only keeps the release's integers, byte for byte."""
    return (
        Screen.objects.filter(project=project, split__in=SPLITS, questions__state=QuestionState.KEPT)
        .exclude(rico_id__regex=_NUMERIC.pattern)
        .exists()
    )


def release_image_path(rico_id: str, image_name: str) -> str:
    """``images/<rico_id><ext>``; ``:`` (trace ids) becomes ``_`` so the name is valid everywhere."""
    ext = ""
    base = image_name.rsplit("/", 1)[-1]
    if "." in base:
        ext = "." + base.rsplit(".", 1)[-1].lower()
    return f"images/{rico_id.replace(':', '_')}{ext or '.jpg'}"


def release_question_text(*, text: str, final_text: str) -> str:
    """Post-processing's ``final_text`` (the agreed edit); the text as written if it set none."""
    return final_text or text


def release_element(*, left: int, top: int, right: int, bottom: int, text: str, vh_index: int | None) -> dict:
    """One ``ui_elements`` item, keys in the release's order; a drawn box has ``vh_index`` -1."""
    return {"bounds": [left, top, right, bottom], "text": text, "vh_index": -1 if vh_index is None else vh_index}


@dataclass(slots=True)
class ReleaseRecord:
    """One kept question with its kept answers, ready to be written in any format."""

    question_id: int
    rico_id: str
    image_name: str
    width: int
    height: int
    question: str
    short_answers: list[str]
    ground_truth: list[dict[str, Any]] = field(default_factory=list)

    @property
    def image_id(self) -> int | str:
        return release_image_id(self.rico_id)


def release_screens_qs(*, project: Project, split: str):
    """Screens of one split in release order: numeric ``image_id`` ascending, then non-numeric
    ids (as strings)."""
    numeric = Case(
        When(rico_id__regex=r"^[0-9]{1,18}$", then=Cast("rico_id", BigIntegerField())),
        default=None,
        output_field=BigIntegerField(),
    )
    return (
        Screen.objects.filter(project=project, split=split)
        .annotate(release_numeric_id=numeric)
        .order_by(F("release_numeric_id").asc(nulls_last=True), "rico_id", "pk")
    )


def _chunks(iterator: Iterator[Any], size: int) -> Iterator[list[Any]]:
    while chunk := list(islice(iterator, size)):
        yield chunk


def release_records(*, project: Project, split: str, chunk_size: int = CHUNK_SIZE) -> Iterator[ReleaseRecord]:
    """Stream the records of ``split``, in release order. Read-only.

    Driven by screens: screens come through a server-side cursor in release order, ``chunk_size``
    at a time; per chunk, three queries fetch their kept questions, the questions' kept answers
    and those answers' elements by id lists. The id lists keep every query on its foreign-key
    index whatever the planner's statistics say (a fresh bulk import has none), and memory is
    bounded by one chunk.
    """
    screens = (
        release_screens_qs(project=project, split=split)
        .values_list("pk", "rico_id", "image", "width", "height")
        .iterator(chunk_size=chunk_size)
    )
    for chunk in _chunks(screens, chunk_size):
        order = {row[0]: index for index, row in enumerate(chunk)}
        by_screen = {row[0]: row for row in chunk}
        questions = sorted(
            Question.objects.filter(screen_id__in=list(order), state=QuestionState.KEPT).values_list(
                "pk", "screen_id", "position", "text", "final_text", "short_answers"
            ),
            key=lambda q: (order[q[1]], q[2], q[0]),
        )
        if not questions:
            continue
        answers = list(
            Answer.objects.filter(question_id__in=[q[0] for q in questions], kept=True)
            .order_by("question_id", "created_at", "pk")
            .values_list("pk", "question_id", "full_answer")
        )
        elements: dict[int, list[dict[str, Any]]] = defaultdict(list)
        if answers:
            for answer_id, left, top, right, bottom, text, vh_index in (
                AnswerElement.objects.filter(answer_id__in=[a[0] for a in answers])
                .order_by("answer_id", "position")
                .values_list("answer_id", "left", "top", "right", "bottom", "text", "vh_index")
            ):
                elements[answer_id].append(
                    release_element(left=left, top=top, right=right, bottom=bottom, text=text, vh_index=vh_index)
                )
        ground_truth: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for answer_id, question_id, full_answer in answers:
            ground_truth[question_id].append({"full_answer": full_answer, "ui_elements": elements.get(answer_id, [])})
        for pk, screen_id, _position, text, final_text, short_answers in questions:
            _, rico_id, image_name, width, height = by_screen[screen_id]
            yield ReleaseRecord(
                question_id=pk,
                rico_id=rico_id,
                image_name=image_name or "",
                width=width,
                height=height,
                question=release_question_text(text=text, final_text=final_text),
                short_answers=list(short_answers or []),
                ground_truth=ground_truth.get(pk, []),
            )
