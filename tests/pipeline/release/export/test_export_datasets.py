"""Every export format loads with Hugging Face ``datasets``, as dataset owners load it: offline (no hub),
every split, one type per column; the image-folder export with its screenshots.

``datasets`` is in requirements-dev.txt; where it does not install the tests skip and say so."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # never the hub: before datasets is imported, which reads it once
os.environ["HF_DATASETS_OFFLINE"] = "1"
datasets = pytest.importorskip(
    "datasets", reason="datasets is not installed (requirements-dev.txt): exports not loaded"
)

from pipeline.release.export.service import FORMATS, release_export  # noqa: E402
from tests.factories import ScreenFactory, kept_question  # noqa: E402

pytestmark = pytest.mark.django_db

SPLITS = {"train": "train", "validation": "validation", "test": "test"}
BOX = {"left": 10, "top": 20, "right": 110, "bottom": 60, "text": "Deep Squat"}


@pytest.fixture
def release(project):
    """Given questions in every split, on RICO screens and a trace screen (no RICO id), with
    elements from the VH, drawn boxes, and a not-answerable question."""
    s31 = ScreenFactory(project=project, rico_id="31", split="train")
    trace = ScreenFactory(project=project, rico_id="com.app:trace_1:2", split="train", width=540, height=960)
    s5 = ScreenFactory(project=project, rico_id="5", split="validation")
    s7 = ScreenFactory(project=project, rico_id="7", split="test")
    kept_question(
        screen=s31,
        text="What is it?",
        position=0,
        answers=[("A squat.", [{**BOX, "vh_index": 4}])],
        short_answers=["squat"],
    )
    kept_question(screen=s31, text="How long?", position=1, answers=[("", [])], short_answers=["<no answer>"])
    kept_question(
        screen=trace, text="Which exercise?", position=0, answers=[("Squat.", [BOX])], short_answers=["Squat"]
    )
    kept_question(
        screen=s5,
        text="What is the title?",
        position=0,
        answers=[("Deep Squat.", [BOX]), ("It is Deep Squat.", [{**BOX, "vh_index": 2}])],
        short_answers=["Deep Squat"],
    )
    kept_question(screen=s7, text="What is shown?", position=0, answers=[("A list.", [BOX])], short_answers=["list"])
    return project


def load(tmp_path: Path, *args: Any, **kwargs: Any) -> Any:
    return datasets.load_dataset(*args, cache_dir=str(tmp_path / "hf-cache"), **kwargs)


def load_screenqa(out: Path, tmp_path: Path) -> dict[str, Any]:
    return {
        kind: load(tmp_path, "json", data_files={s: str(out / kind / f"{s}.json") for s in SPLITS})
        for kind in ("answers_and_bboxes", "short_answers")
    }


def load_docvqa(out: Path, tmp_path: Path) -> dict[str, Any]:
    names = {"train": "train", "validation": "val", "test": "test"}
    files = {s: str(out / f"{names[s]}.json") for s in SPLITS}
    return {"data": load(tmp_path, "json", data_files=files, field="data")}


def load_jsonl(out: Path, tmp_path: Path) -> dict[str, Any]:
    return {"records": load(tmp_path, "json", data_files={s: str(out / f"{s}.jsonl") for s in SPLITS})}


def load_imagefolder(out: Path, tmp_path: Path) -> dict[str, Any]:
    return {"images": load(tmp_path, "imagefolder", data_dir=str(out))}


# How a dataset owner loads each format; a format missing here fails the test below.
LOADERS = {"screenqa": load_screenqa, "docvqa": load_docvqa, "jsonl": load_jsonl, "imagefolder": load_imagefolder}


def test_every_format_has_a_loader():
    assert set(LOADERS) == set(FORMATS)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_loads_with_datasets(release, tmp_path, fmt):
    # When the project is exported in the format, somewhere else than the working directory
    out = tmp_path / "export"
    manifest = release_export(project=release, out_dir=out, fmt=fmt)
    # Then datasets loads every split of every file, one row per released question
    for name, loaded in LOADERS[fmt](out, tmp_path).items():
        assert set(loaded) == set(SPLITS), name
        for split in SPLITS:
            assert loaded[split].num_rows == manifest["counts"][split]["questions"], (name, split)
        # and an id column holds one type (the trace screen's id is text: all of them are)
        for column in ("image_id", "screen_id"):
            if column in loaded["train"].features:
                assert loaded["train"].features[column].dtype == "string", (name, column)


def test_the_image_folder_export_loads_with_its_screenshots(release, tmp_path):
    # When exported as an image folder and loaded from where it lies (not the working directory)
    out = tmp_path / "export"
    release_export(project=release, out_dir=out, fmt="imagefolder")
    loaded = load_imagefolder(out, tmp_path)["images"]
    # Then each row carries its screenshot (decoded), with the question and its answers
    rows = {row["question"]: row for row in loaded["train"]}
    assert set(rows) == {"What is it?", "How long?", "Which exercise?"}
    trace = rows["Which exercise?"]
    assert trace["image"].size == (54, 96)  # the trace screen's own file (the factory's 1/10 size)
    assert trace["screen_id"] == "com.app:trace_1:2" and trace["short_answers"] == ["Squat"]
    assert rows["What is it?"]["image"].size == (108, 192)
    assert rows["What is it?"]["ground_truth"][0]["ui_elements"][0]["vh_index"] == 4
    assert rows["How long?"]["ground_truth"] == [{"full_answer": "", "ui_elements": []}]
    assert {row["screen_id"] for row in loaded["validation"]} == {"5"}
