"""The export formats: one table (:data:`EXPORT_FORMATS`), each entry a writer and its label. Each
writer streams :func:`release_records` into files written through :func:`atomic_writer`, and returns
what it wrote (paths, hashes, counts). A new format is one function plus its entry.

JSON is written one entry at a time in exactly the layout ``json.dumps(list)`` gives
(``[{...}, {...}]``, ASCII, default separators, no trailing newline), which is byte for
byte the layout of the public ScreenQA files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from annotation.exceptions import ApplicationError
from annotation.models import Project, Screen

from .atomic import HashingWriter, atomic_writer
from .records import (
    SPLITS,
    ReleaseRecord,
    release_image_id,
    release_image_ids_as_text,
    release_image_path,
    release_records,
)

Progress = Callable[[int], None]
PROGRESS_EVERY = 1000


@dataclass
class SplitCounts:
    questions: int = 0
    screens: int = 0
    answers: int = 0
    ui_elements: int = 0
    questions_without_answers: int = 0
    questions_without_short_answers: int = 0
    non_numeric_image_ids: int = 0


@dataclass
class WrittenFiles:
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, rel: str, writer: HashingWriter) -> None:
        self.files[rel] = {"sha256": writer.sha256.hexdigest(), "bytes": writer.size}


class _JsonList:
    """Writes ``[a, b, ...]`` one item at a time."""

    def __init__(self, out: HashingWriter) -> None:
        self.out = out
        self.first = True
        out.write("[")

    def add(self, item: Any) -> None:
        self.out.write(("" if self.first else ", ") + json.dumps(item))
        self.first = False

    def close(self) -> None:
        self.out.write("]")


def _counted(
    records: Iterator[ReleaseRecord], counts: SplitCounts, progress: Progress | None, done: list[int]
) -> Iterator[ReleaseRecord]:
    last_rico_id = None
    for record in records:
        counts.questions += 1
        if record.rico_id != last_rico_id:
            counts.screens += 1
            last_rico_id = record.rico_id
            if isinstance(record.image_id, str):
                counts.non_numeric_image_ids += 1
        counts.answers += len(record.ground_truth)
        counts.ui_elements += sum(len(gt["ui_elements"]) for gt in record.ground_truth)
        counts.questions_without_answers += not record.ground_truth
        counts.questions_without_short_answers += not record.short_answers
        yield record
        done[0] += 1
        if progress is not None and done[0] % PROGRESS_EVERY == 0:
            progress(done[0])


def _write_splits(
    *,
    project: Project,
    out_dir: Path,
    progress: Progress | None,
    files_for: Callable[[str], list[str]],
    write: Callable[[ReleaseRecord, list[Any], str], None],
    open_sinks: Callable[[str, list[HashingWriter]], list[Any]],
) -> WrittenFiles:
    written = WrittenFiles()
    done = [0]
    for split in SPLITS:
        counts = SplitCounts()
        rels = files_for(split)
        with ExitStack() as stack:
            writers = [stack.enter_context(atomic_writer(out_dir / rel)) for rel in rels]
            sinks = open_sinks(split, writers)
            for record in _counted(release_records(project=project, split=split), counts, progress, done):
                write(record, sinks, split)
            for sink in sinks:
                sink.close()
        for rel, writer in zip(rels, writers, strict=True):
            written.add(rel, writer)
        written.counts[split] = asdict(counts)
    if progress is not None:
        progress(done[0])
    return written


def write_screenqa(*, project: Project, out_dir: Path, progress: Progress | None = None) -> WrittenFiles:
    """``answers_and_bboxes/<split>.json`` and ``short_answers/<split>.json``: the same
    (image, question) pairs in the same order, one ``ground_truth`` item per kept answer.
    ``image_id``: the release's integers, or strings throughout when the export holds a trace screen."""
    as_text = release_image_ids_as_text(project=project)

    def write(record: ReleaseRecord, sinks: list[Any], split: str) -> None:
        answers, short = sinks
        image_id = release_image_id(record.rico_id, as_text=as_text)
        answers.add(
            {
                "image_id": image_id,
                "image_width": record.width,
                "image_height": record.height,
                "question": record.question,
                "ground_truth": record.ground_truth,
            }
        )
        short.add({"image_id": image_id, "question": record.question, "ground_truth": record.short_answers})

    return _write_splits(
        project=project,
        out_dir=out_dir,
        progress=progress,
        files_for=lambda split: [f"answers_and_bboxes/{split}.json", f"short_answers/{split}.json"],
        write=write,
        open_sinks=lambda split, writers: [_JsonList(w) for w in writers],
    )


DOCVQA_SPLIT = {"train": "train", "validation": "val", "test": "test"}
DOCVQA_VERSION = "1.0"


class _DocVqaFile:
    """``{"dataset_name", "dataset_split", "dataset_version", "data": [...]}`` written incrementally."""

    def __init__(self, out: HashingWriter, *, dataset_name: str, split: str) -> None:
        head = {"dataset_name": dataset_name, "dataset_split": DOCVQA_SPLIT[split], "dataset_version": DOCVQA_VERSION}
        out.write(json.dumps(head)[:-1] + ', "data": ')
        self.items = _JsonList(out)
        self.out = out

    def add(self, item: Any) -> None:
        self.items.add(item)

    def close(self) -> None:
        self.items.close()
        self.out.write("}")


def write_docvqa(*, project: Project, out_dir: Path, progress: Progress | None = None) -> WrittenFiles:
    """DocVQA task-1 ground truth, one file per split (``train.json``, ``val.json``, ``test.json``).

    ``answers`` are the short answers (``<no answer>`` included as is); ``questionId`` is the
    question's database id (stable for the project); ``image`` is a relative path; ``image_id`` is
    always the ``rico_id`` string (not a DocVQA field: its type need not follow the ScreenQA release's).
    """

    def write(record: ReleaseRecord, sinks: list[Any], split: str) -> None:
        sinks[0].add(
            {
                "questionId": record.question_id,
                "question": record.question,
                "image": release_image_path(record.rico_id, record.image_name),
                "image_id": release_image_id(record.rico_id, as_text=True),
                "answers": record.short_answers,
                "data_split": DOCVQA_SPLIT[split],
            }
        )

    def open_sinks(split: str, writers: list[HashingWriter]) -> list[Any]:
        return [_DocVqaFile(writers[0], dataset_name=f"screenqa-{project.slug}", split=split)]

    return _write_splits(
        project=project,
        out_dir=out_dir,
        progress=progress,
        files_for=lambda split: [f"{DOCVQA_SPLIT[split]}.json"],
        write=write,
        open_sinks=open_sinks,
    )


class _JsonLines:
    def __init__(self, out: HashingWriter) -> None:
        self.out = out

    def add(self, item: Any) -> None:
        self.out.write(json.dumps(item) + "\n")

    def close(self) -> None:
        pass


def write_jsonl(*, project: Project, out_dir: Path, progress: Progress | None = None) -> WrittenFiles:
    """``<split>.jsonl``: one JSON object per line and question. ``screen_id`` is always a string
    (Arrow-based loaders need one type per column), ``image`` a relative path."""

    def write(record: ReleaseRecord, sinks: list[Any], split: str) -> None:
        sinks[0].add(
            {
                "question_id": record.question_id,
                "screen_id": record.rico_id,
                "image": release_image_path(record.rico_id, record.image_name),
                "image_width": record.width,
                "image_height": record.height,
                "question": record.question,
                "short_answers": record.short_answers,
                "ground_truth": record.ground_truth,
                "split": split,
            }
        )

    return _write_splits(
        project=project,
        out_dir=out_dir,
        progress=progress,
        files_for=lambda split: [f"{split}.jsonl"],
        write=write,
        open_sinks=lambda split, writers: [_JsonLines(writers[0])],
    )


def _copy_image(*, rico_id: str, name: str, target: Path) -> HashingWriter:
    """Copy a screenshot out of storage (local files or S3) into ``target``, atomically."""
    storage = Screen._meta.get_field("image").storage  # type: ignore[attr-defined]
    try:
        source = storage.open(name, "rb")
    except FileNotFoundError:
        raise ApplicationError(f"The screenshot of screen {rico_id} ({name!r}) is missing from storage.") from None
    with source, atomic_writer(target) as out:
        while block := source.read(1 << 20):
            out.write_bytes(block)
    return out


def write_imagefolder(*, project: Project, out_dir: Path, progress: Progress | None = None) -> WrittenFiles:
    """Hugging Face's image-folder layout, which loads *with its images* wherever it is unpacked:
    ``<split>/metadata.jsonl`` (one object per question, the JSON Lines record with ``file_name`` in
    place of ``image``) and the split's screenshots under ``<split>/images/`` (each screen's once, the
    name ``file_name`` gives, relative to the metadata file). ``datasets.load_dataset("imagefolder",
    data_dir=...)`` reads it. A split without questions has no folder (``datasets`` refuses an empty
    split)."""
    written = WrittenFiles()
    done = [0]
    for split in SPLITS:
        counts = SplitCounts()
        with ExitStack() as stack:
            sink: _JsonLines | None = None
            metadata: HashingWriter | None = None
            last_rico_id = None
            for record in _counted(release_records(project=project, split=split), counts, progress, done):
                file_name = release_image_path(record.rico_id, record.image_name)
                if sink is None:
                    metadata = stack.enter_context(atomic_writer(out_dir / split / "metadata.jsonl"))
                    sink = _JsonLines(metadata)
                if record.rico_id != last_rico_id:  # records come screen by screen
                    rel = f"{split}/{file_name}"
                    written.add(rel, _copy_image(rico_id=record.rico_id, name=record.image_name, target=out_dir / rel))
                    last_rico_id = record.rico_id
                sink.add(
                    {
                        "file_name": file_name,
                        "question_id": record.question_id,
                        "screen_id": record.rico_id,
                        "image_width": record.width,
                        "image_height": record.height,
                        "question": record.question,
                        "short_answers": record.short_answers,
                        "ground_truth": record.ground_truth,
                    }
                )
        if metadata is not None:
            written.add(f"{split}/metadata.jsonl", metadata)
        written.counts[split] = asdict(counts)
    if progress is not None:
        progress(done[0])
    return written


@dataclass(frozen=True)
class ExportFormat:
    label: str  # what the lead's export page shows
    write: Callable[..., WrittenFiles]


EXPORT_FORMATS: dict[str, ExportFormat] = {
    "screenqa": ExportFormat("ScreenQA public format (answers_and_bboxes + short_answers)", write_screenqa),
    "docvqa": ExportFormat("DocVQA task 1 ground truth", write_docvqa),
    "jsonl": ExportFormat("JSON Lines, one record per question", write_jsonl),
    "imagefolder": ExportFormat(
        "Hugging Face image folder: the screenshots with a metadata.jsonl per split", write_imagefolder
    ),
}
