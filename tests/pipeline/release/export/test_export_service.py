"""Export of a project's release: exact public format, order, manifest, determinism, streaming."""

from __future__ import annotations

import json

import pytest

from annotation.exceptions import ApplicationError
from annotation.models import Question
from pipeline.release.export.atomic import file_sha256
from pipeline.release.export.records import release_records
from pipeline.release.export.service import release_export
from tests.factories import AnswerFactory, QuestionFactory, ScreenFactory, kept_question

pytestmark = pytest.mark.django_db

BOX = {"left": 424, "top": 1078, "right": 852, "bottom": 1117, "text": "unauthorized transactions"}


@pytest.fixture
def release(project):
    """Given a project with screens 31, 5 and a trace screen in validation, one train screen,
    kept and dropped questions, and a dropped answer."""
    s31 = ScreenFactory(project=project, rico_id="31", split="validation")
    s5 = ScreenFactory(project=project, rico_id="5", split="validation", width=540, height=960)
    trace = ScreenFactory(project=project, rico_id="com.app:trace_1:2", split="validation")
    train = ScreenFactory(project=project, rico_id="37374", split="train")
    ScreenFactory(project=project, rico_id="99", split="test")  # no questions
    # Positions deliberately created out of order: the release orders by position.
    kept_question(
        screen=s31,
        text="How many bits are used?",
        position=3,
        answers=[("128 bits.", [{"left": 1, "top": 2, "right": 30, "bottom": 40, "text": "128", "vh_index": 7}])],
        short_answers=["128"],
    )
    kept_question(
        screen=s31,
        text="From whom are you protectd?",
        final_text="From whom are you protected?",
        position=1,
        answers=[
            ("You are protected from unauthorized transactions.", [BOX]),
            ("You are protected from unauthorized transactions.", [{**BOX, "bottom": 1113, "left": 426}]),
            ("", []),
        ],
        short_answers=["unauthorized transactions"],
        agreement="two",
    )
    dropped_answer_question = kept_question(
        screen=s5, text="What is the price?", position=0, answers=[("It is $3.", [BOX])], short_answers=["$3"]
    )
    AnswerFactory(question=dropped_answer_question, kept=False, drop_reason="disagrees", full_answer="No")
    kept_question(
        screen=trace, text="What is the title?", position=0, answers=[("", [])], short_answers=["<no answer>"]
    )
    kept_question(
        screen=train,
        text="What type of Ford car is selected?",
        position=0,
        answers=[
            (
                "The type of selected Ford car is the C Max 2014.",
                [
                    {"left": 33, "top": 319, "right": 939, "bottom": 376, "text": "C Max", "vh_index": 12},
                    {"left": 33, "top": 483, "right": 939, "bottom": 540, "text": "2014", "vh_index": 15},
                ],
            )
        ],
        short_answers=["C Max 2014"],
    )
    QuestionFactory(screen=s31, position=2, state="dropped", drop_reason="invalid", text="asdf?", agreement="none")
    QuestionFactory(screen=s31, position=4, state="answering", text="Not post-processed yet?")
    QuestionFactory(
        screen=ScreenFactory(project=project, rico_id="500", split=""), position=0, text="No split?", state="kept"
    )
    return project


TRACE = "com.app:trace_1:2"


def test_screenqa_files_are_the_exact_public_format(release, tmp_path):
    # Given a project of RICO screens only (the trace screen's question is not released)
    Question.objects.filter(screen__rico_id=TRACE).delete()
    # When the project is exported in the ScreenQA format
    release_export(project=release, out_dir=tmp_path, fmt="screenqa")
    # Then validation holds the kept questions sorted by numeric image_id (integers, as in the
    # release), then by question position; one ground_truth item per kept answer.
    box = [424, 1078, 852, 1117]
    expected = [
        {
            "image_id": 5,
            "image_width": 540,
            "image_height": 960,
            "question": "What is the price?",
            "ground_truth": [
                {"full_answer": "It is $3.", "ui_elements": [{"bounds": box, "text": BOX["text"], "vh_index": -1}]}
            ],
        },
        {
            "image_id": 31,
            "image_width": 1080,
            "image_height": 1920,
            "question": "From whom are you protected?",
            "ground_truth": [
                {
                    "full_answer": "You are protected from unauthorized transactions.",
                    "ui_elements": [{"bounds": box, "text": BOX["text"], "vh_index": -1}],
                },
                {
                    "full_answer": "You are protected from unauthorized transactions.",
                    "ui_elements": [{"bounds": [426, 1078, 852, 1113], "text": BOX["text"], "vh_index": -1}],
                },
                {"full_answer": "", "ui_elements": []},
            ],
        },
        {
            "image_id": 31,
            "image_width": 1080,
            "image_height": 1920,
            "question": "How many bits are used?",
            "ground_truth": [
                {"full_answer": "128 bits.", "ui_elements": [{"bounds": [1, 2, 30, 40], "text": "128", "vh_index": 7}]}
            ],
        },
    ]
    raw = (tmp_path / "answers_and_bboxes" / "validation.json").read_bytes()
    assert raw == json.dumps(expected).encode()
    short = (tmp_path / "short_answers" / "validation.json").read_bytes()
    assert json.loads(short) == [
        {"image_id": 5, "question": "What is the price?", "ground_truth": ["$3"]},
        {"image_id": 31, "question": "From whom are you protected?", "ground_truth": ["unauthorized transactions"]},
        {"image_id": 31, "question": "How many bits are used?", "ground_truth": ["128"]},
    ]
    assert (tmp_path / "short_answers" / "test.json").read_bytes() == b"[]"
    assert json.loads((tmp_path / "answers_and_bboxes" / "train.json").read_text())[0]["ground_truth"][0][
        "ui_elements"
    ][1] == {"bounds": [33, 483, 939, 540], "text": "2014", "vh_index": 15}


def test_an_export_with_a_trace_screen_writes_every_image_id_as_a_string(release, tmp_path):
    # When a project that holds a trace screen (no RICO id) is exported in the ScreenQA format
    release_export(project=release, out_dir=tmp_path, fmt="screenqa")
    # Then every image_id of every file is a string (one type per field: loaders need it), the trace
    # screen's last, in the same order as with integers
    ids = {}
    for kind in ("answers_and_bboxes", "short_answers"):
        for split in ("train", "validation", "test"):
            ids[kind, split] = [e["image_id"] for e in json.loads((tmp_path / kind / f"{split}.json").read_text())]
    assert ids["answers_and_bboxes", "validation"] == ["5", "31", "31", TRACE]
    assert ids["short_answers", "validation"] == ids["answers_and_bboxes", "validation"]
    assert ids["answers_and_bboxes", "train"] == ["37374"]  # another split: the same type


def test_docvqa_image_ids_are_always_strings(release, tmp_path):
    # When a project with RICO screens and a trace screen is exported as DocVQA
    release_export(project=release, out_dir=tmp_path, fmt="docvqa")
    # Then image_id is the rico_id string in every entry (a mix broke datasets.load_dataset: ArrowInvalid)
    data = json.loads((tmp_path / "val.json").read_text())["data"]
    assert [d["image_id"] for d in data] == ["5", "31", "31", TRACE]


def test_manifest_counts_settings_agreement_drops_and_hashes(release, tmp_path):
    # When the project is exported
    returned = release_export(project=release, out_dir=tmp_path, fmt="screenqa")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    # Then the manifest on disk is the one returned, and describes the files
    assert manifest == returned
    assert manifest["counts"]["validation"]["questions"] == 4
    assert manifest["counts"]["validation"]["screens"] == 3
    assert manifest["counts"]["validation"]["answers"] == 6
    assert manifest["counts"]["validation"]["non_numeric_image_ids"] == 1
    assert manifest["counts"]["train"]["questions"] == 1
    assert manifest["counts"]["test"] == dict.fromkeys(manifest["counts"]["test"], 0)
    assert manifest["counts"]["total"]["questions"] == 5
    assert manifest["dropped"] == {"questions": {"invalid": 1}, "answers": {"disagrees": 1}}
    assert manifest["kept_without_split"] == 1
    assert manifest["agreement"]["counts"] == {"all": 0, "two": 1, "none": 1}
    assert manifest["agreement"]["shares"]["two"] == 0.5
    assert manifest["settings"]["answers_validation"] == 3
    assert manifest["settings"]["agreement_rule"] == "release"  # which rule decided the agreement figures
    assert manifest["code_version"]
    assert set(manifest["files"]) == {
        f"{k}/{s}.json" for k in ("answers_and_bboxes", "short_answers") for s in ("train", "validation", "test")
    }
    for rel, meta in manifest["files"].items():
        assert file_sha256(tmp_path / rel) == meta["sha256"]
        assert (tmp_path / rel).stat().st_size == meta["bytes"]


@pytest.mark.parametrize("fmt", ["screenqa", "docvqa", "jsonl"])
def test_rerunning_an_export_gives_byte_identical_files(release, tmp_path, fmt):
    # Given a first export
    release_export(project=release, out_dir=tmp_path / "a", fmt=fmt)
    # When the same data is exported again
    release_export(project=release, out_dir=tmp_path / "b", fmt=fmt)
    # Then every file, the manifest included, is byte-identical, and no temporary file is left
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    assert not [p for p in files_a if p.name.startswith(".")]
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_docvqa_layout(release, tmp_path):
    # When exported as DocVQA
    manifest = release_export(project=release, out_dir=tmp_path, fmt="docvqa")
    # Then each split is one task-1 ground-truth file with relative image paths and short answers
    assert set(manifest["files"]) == {"train.json", "val.json", "test.json"}
    val = json.loads((tmp_path / "val.json").read_text())
    assert {k: val[k] for k in ("dataset_name", "dataset_split", "dataset_version")} == {
        "dataset_name": "screenqa-demo",
        "dataset_split": "val",
        "dataset_version": "1.0",
    }
    assert [d["question"] for d in val["data"]][:2] == ["What is the price?", "From whom are you protected?"]
    first = val["data"][0]
    assert first["image"] == "images/5.png"
    assert first["answers"] == ["$3"]
    assert first["data_split"] == "val"
    assert isinstance(first["questionId"], int)
    assert val["data"][-1]["image"] == "images/com.app_trace_1_2.png"
    assert len({d["questionId"] for d in val["data"]}) == 4


def test_jsonl_one_object_per_line_with_stable_types(release, tmp_path):
    # When exported as JSON Lines
    release_export(project=release, out_dir=tmp_path, fmt="jsonl")
    lines = (tmp_path / "validation.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    # Then there is one object per question, every field with one type across records (loaders need it)
    assert len(records) == 4
    for key in records[0]:
        assert len({type(r[key]) for r in records}) == 1, key
    assert records[0]["screen_id"] == "5"
    assert records[0]["image"] == "images/5.png"
    assert records[0]["split"] == "validation"
    assert records[1]["ground_truth"][2] == {"full_answer": "", "ui_elements": []}


def test_unknown_format_is_refused(release, tmp_path):
    with pytest.raises(ApplicationError, match="Unknown export format"):
        release_export(project=release, out_dir=tmp_path / "out", fmt="csv")
    assert not (tmp_path / "out").exists()


def test_records_stream_in_chunks_with_constant_queries_per_chunk(project, django_assert_max_num_queries):
    # Given 30 kept questions with an answer and an element each
    for i in range(30):
        screen = ScreenFactory(project=project, rico_id=str(100 + i), split="train")
        kept_question(screen=screen, text=f"Q{i}?", position=0, answers=[("A.", [BOX])], short_answers=["a"])
    # When the records are read in chunks of 10
    # Then it costs 3 queries per chunk of screens (questions, answers, elements) plus the screens' cursor
    with django_assert_max_num_queries(3 * 3 + 2):
        records = list(release_records(project=project, split="train", chunk_size=10))
    assert [r.image_id for r in records] == list(range(100, 130))
    assert all(len(r.ground_truth) == 1 for r in records)


@pytest.mark.django_db(transaction=True)
def test_files_and_manifest_come_from_one_snapshot(project, tmp_path):
    """Writes committed by others while the export runs do not reach its manifest."""
    import threading

    from django.db import connection as main_connection

    from annotation.models import Question

    screen = ScreenFactory(project=project, rico_id="31", split="validation")
    kept_question(screen=screen, text="Q?", position=0, answers=[("A.", [BOX])], short_answers=["a"])

    def someone_else_drops_a_question() -> None:
        from django.db import connection

        QuestionFactory(screen=screen, position=1, state="dropped", drop_reason="invalid", text="late?")
        connection.close()

    def progress(done: int) -> None:
        # Called after the data files are written and before the manifest is built.
        worker = threading.Thread(target=someone_else_drops_a_question)
        worker.start()
        worker.join()

    # When another connection commits a dropped question in the middle of the export
    assert not main_connection.in_atomic_block
    manifest = release_export(project=project, out_dir=tmp_path / "out", progress=progress)
    # Then the manifest describes the state the data files were read from
    assert Question.objects.filter(state="dropped").count() == 1
    assert manifest["dropped"]["questions"] == {}
    assert manifest["counts"]["total"]["questions"] == 1
