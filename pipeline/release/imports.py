"""Import a public-format ScreenQA release (``answers_and_bboxes`` and/or ``short_answers``)
into a project whose screens are already imported, so a team can extend or re-annotate it.

Contract of :func:`release_import`:

* **Validate, then write.** Every file is parsed and every entry checked before the first
  write; a malformed file or entry refuses the whole import with a message naming the file
  and entry (``skip_invalid=True`` skips bad entries instead and reports them). Writes happen
  in one transaction: a failure leaves the project as it was.
* **Split from the file.** An entry from ``<kind>/<split>.json`` belongs to ``split``; a screen
  without a split gets it, a screen already in another split is not touched (reported).
* **Already post-processed.** New questions are ``kept`` with ``source=imported``; their answers
  are ``kept`` (``verdict`` ``answered``, or ``not_answerable`` when ``ui_elements`` is empty);
  short answers are stored with ``short_answers_source=imported``.
* **Idempotent.** A question is identified by (screen, question text). Re-importing creates
  nothing new; it only fills what an earlier import of the same question lacked (short
  answers, or answers when the earlier import had none). Questions written in the pipeline
  are never changed.
* Entries whose ``image_id`` is not a screen of the project are skipped and counted.

No row locks: the import appends questions after the screen's last position and sets a
screen's split only where it is blank (conditional UPDATEs). A question writer adding a
question to the same screen at the same instant makes the unique (screen, position)
constraint fail the import as a whole, which is then safe to re-run.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max

from annotation.exceptions import ApplicationError, ConflictError
from annotation.models import (
    Answer,
    AnswerElement,
    Project,
    Question,
    QuestionSource,
    QuestionState,
    Screen,
    ScreenState,
    Verdict,
)

SPLITS = ("train", "validation", "test")
KINDS = ("answers_and_bboxes", "short_answers")
MAX_REPORTED = 20
BATCH = 2000


class InvalidEntry(ValueError):
    pass


@dataclass
class ParsedAnswer:
    full_answer: str
    elements: list[tuple[int, int, int, int, str, int | None]]


@dataclass
class Entry:
    split: str
    rico_id: str
    question: str
    where: str
    answers: list[ParsedAnswer] | None = None
    short_answers: list[str] | None = None
    size: tuple[Any, Any] | None = None


@dataclass
class SplitSummary:
    entries: int = 0
    questions_created: int = 0
    answers_created: int = 0
    questions_filled: int = 0
    already_present: int = 0
    unknown_screen: int = 0
    split_conflict: int = 0
    size_mismatch: int = 0
    invalid: int = 0


@dataclass
class ImportSummary:
    splits: dict[str, SplitSummary] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    unknown_image_ids: int = 0
    unknown_image_ids_sample: list[str] = field(default_factory=list)
    split_conflicts_sample: list[str] = field(default_factory=list)
    size_mismatch_sample: list[str] = field(default_factory=list)
    invalid_sample: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        totals: dict[str, int] = defaultdict(int)
        splits = {}
        for name, summary in self.splits.items():
            splits[name] = vars(summary).copy()
            for key, value in splits[name].items():
                totals[key] += value
        return {
            "files": self.files,
            "splits": splits,
            "total": dict(totals),
            "unknown_image_ids": self.unknown_image_ids,
            "unknown_image_ids_sample": self.unknown_image_ids_sample,
            "split_conflicts_sample": self.split_conflicts_sample,
            "size_mismatch_sample": self.size_mismatch_sample,
            "invalid_sample": self.invalid_sample,
        }


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _image_id(value: Any) -> str:
    if _is_int(value) and value >= 0:
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    raise InvalidEntry("image_id must be a non-negative integer or a non-empty string")


def _question(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidEntry("question must be a non-empty string")
    return value


def _element(value: Any) -> tuple[int, int, int, int, str, int | None]:
    if not isinstance(value, dict):
        raise InvalidEntry("a ui_elements item must be an object")
    bounds, text, vh_index = value.get("bounds"), value.get("text"), value.get("vh_index", -1)
    if not isinstance(bounds, list) or len(bounds) != 4 or not all(_is_int(b) for b in bounds):
        raise InvalidEntry("bounds must be 4 integers [left, top, right, bottom]")
    left, top, right, bottom = bounds
    if left < 0 or top < 0 or right <= left or bottom <= top:
        raise InvalidEntry(f"bounds {bounds} are not a box with positive area inside the image")
    if not isinstance(text, str) or not text:
        raise InvalidEntry("a ui_elements item needs a non-empty text")
    if not _is_int(vh_index) or vh_index < -1:
        raise InvalidEntry("vh_index must be -1 or a non-negative integer")
    return left, top, right, bottom, text, None if vh_index == -1 else vh_index


def _answers(value: Any) -> list[ParsedAnswer]:
    if not isinstance(value, list):
        raise InvalidEntry("ground_truth must be a list")
    answers = []
    for item in value:
        if not isinstance(item, dict):
            raise InvalidEntry("a ground_truth item must be an object")
        full_answer, elements = item.get("full_answer", ""), item.get("ui_elements")
        if not isinstance(full_answer, str):
            raise InvalidEntry("full_answer must be a string")
        if not isinstance(elements, list):
            raise InvalidEntry("ui_elements must be a list")
        answers.append(ParsedAnswer(full_answer=full_answer, elements=[_element(e) for e in elements]))
    return answers


def _short_answers(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidEntry("ground_truth must be a list of strings")
    return list(value)


def _load_list(path: Path) -> list[Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApplicationError(f"{path}: not a readable JSON file ({exc}).") from exc
    if not isinstance(data, list):
        raise ApplicationError(f"{path}: the release format is a JSON list of entries.")
    return data


def release_files_parse(*, directory: Path, summary: ImportSummary, skip_invalid: bool = False) -> list[Entry]:
    """Parse and check every release file under ``directory``; return the entries in file order,
    an (image, question) pair once per split with its answers and short answers merged."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ApplicationError(f"{directory} is not a folder.", field="directory")
    invalid: list[str] = []
    entries: list[Entry] = []
    for split in SPLITS:
        merged: dict[tuple[str, str], Entry] = {}
        split_summary = summary.splits.setdefault(split, SplitSummary())
        for kind in KINDS:
            path = directory / kind / f"{split}.json"
            if not path.exists():
                continue
            summary.files.append(f"{kind}/{split}.json")
            seen: set[tuple[str, str]] = set()
            for index, raw in enumerate(_load_list(path)):
                where = f"{kind}/{split}.json[{index}]"
                try:
                    if not isinstance(raw, dict):
                        raise InvalidEntry("an entry must be an object")
                    key = (_image_id(raw.get("image_id")), _question(raw.get("question")))
                    if key in seen:
                        raise InvalidEntry("duplicate (image_id, question) in this file")
                    seen.add(key)
                    if kind == "answers_and_bboxes":
                        answers = _answers(raw.get("ground_truth"))
                        merged[key] = Entry(
                            split=split,
                            rico_id=key[0],
                            question=key[1],
                            where=where,
                            answers=answers,
                            size=(raw.get("image_width"), raw.get("image_height")),
                        )
                    else:
                        short = _short_answers(raw.get("ground_truth"))
                        entry = merged.get(key)
                        if entry is None:
                            entry = merged[key] = Entry(split=split, rico_id=key[0], question=key[1], where=where)
                        entry.short_answers = short
                except InvalidEntry as exc:
                    split_summary.invalid += 1
                    invalid.append(f"{where}: {exc}")
        entries.extend(merged.values())
        split_summary.entries = len(merged)
    if not summary.files:
        raise ApplicationError(
            f"No release files in {directory}: expected answers_and_bboxes/<split>.json "
            "and/or short_answers/<split>.json.",
            field="directory",
        )
    summary.invalid_sample = invalid[:MAX_REPORTED]
    if invalid and not skip_invalid:
        raise ApplicationError(
            f"{len(invalid)} invalid entries; nothing was imported. First: " + "; ".join(invalid[:5]),
            extra={"invalid": invalid[:MAX_REPORTED]},
        )
    return entries


def release_import(*, project: Project, directory: Path, skip_invalid: bool = False) -> dict[str, Any]:
    """Import the release files in ``directory`` into ``project`` (see the module docstring)."""
    summary = ImportSummary()
    entries = release_files_parse(directory=directory, summary=summary, skip_invalid=skip_invalid)
    try:
        with transaction.atomic():
            _write(project=project, entries=entries, summary=summary)
    except IntegrityError as exc:
        # Only a concurrent writer on the same screens gets here (positions are computed
        # from what this transaction saw); nothing was written, so a re-run is safe.
        raise ConflictError(
            "Another change to these screens' questions happened during the import; nothing was "
            "imported. Run the import again."
        ) from exc
    return summary.as_dict()


def _write(*, project: Project, entries: list[Entry], summary: ImportSummary) -> None:
    rico_ids = sorted({e.rico_id for e in entries})
    screens: dict[str, tuple[int, str]] = {}
    sizes: dict[int, tuple[int, int]] = {}
    for start in range(0, len(rico_ids), BATCH):
        for pk, rico_id, split, width, height in Screen.objects.filter(
            project=project, rico_id__in=rico_ids[start : start + BATCH]
        ).values_list("pk", "rico_id", "split", "width", "height"):
            screens[rico_id] = (pk, split)
            sizes[pk] = (width, height)
    unknown = [r for r in rico_ids if r not in screens]
    summary.unknown_image_ids = len(unknown)
    summary.unknown_image_ids_sample = unknown[:MAX_REPORTED]

    screen_ids = [pk for pk, _ in screens.values()]
    existing: dict[tuple[int, str], tuple[int, str, bool]] = {}
    next_position: dict[int, int] = {}
    for start in range(0, len(screen_ids), BATCH):
        chunk = screen_ids[start : start + BATCH]
        for pk, screen_id, text, final_text, source, short in Question.objects.filter(screen_id__in=chunk).values_list(
            "pk", "screen_id", "text", "final_text", "source", "short_answers"
        ):
            for key_text in {text, final_text} - {""}:
                existing.setdefault((screen_id, key_text), (pk, source, bool(short)))
        next_position.update(
            Question.objects.filter(screen_id__in=chunk)
            .values("screen_id")
            .annotate(top=Max("position"))
            .values_list("screen_id", "top")
        )
    with_answers = set(
        Answer.objects.filter(question_id__in=[pk for pk, source, _ in existing.values() if source == "imported"])
        .values_list("question_id", flat=True)
        .distinct()
    )

    assigned_split: dict[int, str] = {}
    new_questions: list[tuple[Entry, Question]] = []
    fill_short: list[tuple[int, list[str]]] = []
    fill_answers: list[tuple[Entry, int]] = []
    for entry in entries:
        split_summary = summary.splits[entry.split]
        if entry.rico_id not in screens:
            split_summary.unknown_screen += 1
            continue
        screen_id, screen_split = screens[entry.rico_id]
        if entry.size is not None and entry.size != sizes[screen_id]:
            # Imported anyway (the release's boxes are in its pixels), but the export writes the
            # screen's own size, so the lead must know the two disagree.
            split_summary.size_mismatch += 1
            if len(summary.size_mismatch_sample) < MAX_REPORTED:
                summary.size_mismatch_sample.append(
                    f"{entry.where}: file says {entry.size[0]}x{entry.size[1]}, "
                    f"screen {entry.rico_id} is {sizes[screen_id][0]}x{sizes[screen_id][1]}"
                )
        wanted = assigned_split.setdefault(screen_id, screen_split or entry.split)
        if wanted != entry.split:
            split_summary.split_conflict += 1
            if len(summary.split_conflicts_sample) < MAX_REPORTED:
                summary.split_conflicts_sample.append(f"{entry.where}: screen {entry.rico_id} is in {wanted}")
            continue
        found = existing.get((screen_id, entry.question))
        if found is not None:
            pk, source, has_short = found
            filled = False
            if source == QuestionSource.IMPORTED:
                if entry.short_answers is not None and not has_short:
                    fill_short.append((pk, entry.short_answers))
                    filled = True
                if entry.answers and pk not in with_answers:
                    fill_answers.append((entry, pk))
                    with_answers.add(pk)
                    filled = True
            if filled:
                split_summary.questions_filled += 1
            else:
                split_summary.already_present += 1
            continue
        position = next_position.get(screen_id)
        position = 0 if position is None else position + 1
        next_position[screen_id] = position
        count = len(entry.answers or [])
        question = Question(
            screen_id=screen_id,
            source=QuestionSource.IMPORTED,
            position=position,
            text=entry.question,
            final_text=entry.question,
            state=QuestionState.KEPT,
            answers_needed=count,
            answers_done=count,
            short_answers=entry.short_answers or [],
            short_answers_source="imported" if entry.short_answers is not None else "",
        )
        existing[(screen_id, entry.question)] = (0, QuestionSource.IMPORTED, entry.short_answers is not None)
        new_questions.append((entry, question))
        split_summary.questions_created += 1

    for start in range(0, len(new_questions), BATCH):
        Question.objects.bulk_create([q for _, q in new_questions[start : start + BATCH]])
    answer_rows = [(entry, q.pk) for entry, q in new_questions if entry.answers] + fill_answers
    _create_answers(answer_rows=answer_rows, summary=summary)
    for pk, short in fill_short:
        Question.objects.filter(pk=pk).update(short_answers=short, short_answers_source="imported")
    for pk_entry, pk in fill_answers:
        count = len(pk_entry.answers or [])
        Question.objects.filter(pk=pk).update(answers_needed=count, answers_done=count)

    current_split = dict(screens.values())
    by_split: dict[str, list[int]] = defaultdict(list)
    for screen_id, split in assigned_split.items():
        if not current_split[screen_id]:
            by_split[split].append(screen_id)
    for split, ids in by_split.items():
        for start in range(0, len(ids), BATCH):
            chunk = ids[start : start + BATCH]
            Screen.objects.filter(pk__in=chunk, split="").update(split=split)
    touched = [q.screen_id for _, q in new_questions]
    for start in range(0, len(touched), BATCH):
        # Screens nobody has started on skip the writing stages: their questions are final.
        Screen.objects.filter(pk__in=touched[start : start + BATCH], state=ScreenState.PREFILTER).update(
            state=ScreenState.ANSWERING
        )


def _create_answers(*, answer_rows: list[tuple[Entry, int]], summary: ImportSummary) -> None:
    for start in range(0, len(answer_rows), BATCH):
        chunk = answer_rows[start : start + BATCH]
        answers: list[Answer] = []
        parsed: list[ParsedAnswer] = []
        for entry, question_id in chunk:
            for item in entry.answers or []:
                answers.append(
                    Answer(
                        question_id=question_id,
                        verdict=Verdict.ANSWERED if item.elements else Verdict.NOT_ANSWERABLE,
                        question_text=entry.question,
                        full_answer=item.full_answer,
                        kept=True,
                    )
                )
                parsed.append(item)
            summary.splits[entry.split].answers_created += len(entry.answers or [])
        Answer.objects.bulk_create(answers)
        AnswerElement.objects.bulk_create(
            [
                AnswerElement(
                    answer_id=answer.pk,
                    position=position,
                    left=left,
                    top=top,
                    right=right,
                    bottom=bottom,
                    text=text,
                    vh_index=vh_index,
                )
                for answer, item in zip(answers, parsed, strict=True)
                for position, (left, top, right, bottom, text, vh_index) in enumerate(item.elements)
            ],
            batch_size=BATCH,
        )
