"""import_release: public-format files into a project; round trip, idempotency, bad input, real data."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.exceptions import ApplicationError
from annotation.models import Answer, AnswerElement, Question, Screen
from pipeline.release.export.service import release_export
from pipeline.release.imports import release_import
from tests.factories import ScreenFactory

pytestmark = pytest.mark.django_db

KINDS = ("answers_and_bboxes", "short_answers")
SPLITS = ("train", "validation", "test")


def el(bounds, text, vh_index=-1):
    return {"bounds": bounds, "text": text, "vh_index": vh_index}


HAND_MADE = {
    "train": [
        (
            37374,
            1080,
            1920,
            "What type of Ford car is selected?",
            [
                {
                    "full_answer": "The type of selected Ford car is the C Max 2014.",
                    "ui_elements": [el([33, 319, 939, 376], "C Max", 12), el([33, 483, 939, 540], "2014", 15)],
                }
            ],
            ["C Max 2014", "C Max"],
        ),
        (
            37374,
            1080,
            1920,
            "Which tab is open?",
            [{"full_answer": "The \u201cCars\u201d tab is open.", "ui_elements": [el([0, 0, 100, 50], "Cars")]}],
            ["Cars"],
        ),
        (
            40000,
            540,
            960,
            "Is the Wi-Fi switch on?",
            [{"full_answer": "Yes, it is on.", "ui_elements": [el([400, 100, 500, 150], "on", 3)]}],
            ["on"],
        ),
    ],
    "validation": [
        (
            31,
            1080,
            1920,
            "From whom are you protected?",
            [
                {
                    "full_answer": "You are protected from unauthorized transactions.",
                    "ui_elements": [el([424, 1078, 852, 1117], "unauthorized transactions")],
                },
                {
                    "full_answer": "You are protected from unauthorized transactions.",
                    "ui_elements": [el([426, 1078, 852, 1113], "unauthorized transactions")],
                },
                {
                    "full_answer": "You are protected from unauthorized transactions.",
                    "ui_elements": [el([416, 1078, 854, 1115], "unauthorized transactions")],
                },
            ],
            ["unauthorized transactions"],
        ),
        (
            31,
            1080,
            1920,
            "What is the color of the sky?",
            [
                {"full_answer": "", "ui_elements": []},
                {"full_answer": "Not shown.", "ui_elements": []},
                {"full_answer": "", "ui_elements": []},
            ],
            ["<no answer>"],
        ),
    ],
    "test": [],
}


def write_release(folder: Path, data=HAND_MADE) -> None:
    """The public layout, written exactly as the real files are (``json.dumps`` of a list)."""
    for split in SPLITS:
        answers = [
            {"image_id": i, "image_width": w, "image_height": h, "question": q, "ground_truth": gt}
            for i, w, h, q, gt, _ in data[split]
        ]
        short = [{"image_id": i, "question": q, "ground_truth": sa} for i, _, _, q, _, sa in data[split]]
        for kind, payload in zip(KINDS, (answers, short), strict=True):
            (folder / kind).mkdir(parents=True, exist_ok=True)
            (folder / kind / f"{split}.json").write_text(json.dumps(payload))


@pytest.fixture
def screens(project):
    """Given the screens of the hand-made release, imported but not yet split."""
    return {
        rico_id: ScreenFactory(project=project, rico_id=rico_id, width=w, height=h)
        for rico_id, w, h in (("37374", 1080, 1920), ("40000", 540, 960), ("31", 1080, 1920))
    }


def test_import_then_export_gives_back_the_same_bytes(project, screens, tmp_path):
    # Given a hand-made release in the public format
    write_release(tmp_path / "in")
    # When it is imported and the project is exported again
    summary = release_import(project=project, directory=tmp_path / "in")
    release_export(project=project, out_dir=tmp_path / "out", fmt="screenqa")
    # Then every data file is byte-for-byte the input
    for kind in KINDS:
        for split in SPLITS:
            rel = f"{kind}/{split}.json"
            assert (tmp_path / "out" / rel).read_bytes() == (tmp_path / "in" / rel).read_bytes(), rel
    assert summary["total"]["questions_created"] == 5
    assert summary["total"]["answers_created"] == 9


def test_imported_rows_are_post_processed_and_keep_the_split_of_their_file(project, screens, tmp_path):
    write_release(tmp_path)
    release_import(project=project, directory=tmp_path)
    # Then screens take the split of their file, questions are kept and imported, answers kept
    assert dict(Screen.objects.filter(project=project).values_list("rico_id", "split")) == {
        "37374": "train",
        "40000": "train",
        "31": "validation",
    }
    assert set(Screen.objects.filter(project=project).values_list("state", flat=True)) == {"answering"}
    question = Question.objects.get(text="What is the color of the sky?")
    assert (question.state, question.source, question.short_answers_source) == ("kept", "imported", "imported")
    assert question.short_answers == ["<no answer>"]
    assert (question.answers_needed, question.answers_done) == (3, 3)
    assert list(question.answers.values_list("verdict", "kept", "full_answer")) == [
        ("not_answerable", True, ""),
        ("not_answerable", True, "Not shown."),
        ("not_answerable", True, ""),
    ]
    ford = Question.objects.get(text="What type of Ford car is selected?")
    assert list(AnswerElement.objects.filter(answer__question=ford).values_list("position", "vh_index", "text")) == [
        (0, 12, "C Max"),
        (1, 15, "2014"),
    ]
    assert AnswerElement.objects.get(text="Cars").vh_index is None  # -1 = drawn box


def test_reimport_is_idempotent(project, screens, tmp_path):
    write_release(tmp_path)
    release_import(project=project, directory=tmp_path)
    counts = (Question.objects.count(), Answer.objects.count(), AnswerElement.objects.count())
    # When the same files are imported again
    summary = release_import(project=project, directory=tmp_path)
    # Then nothing is duplicated and the summary says so
    assert (Question.objects.count(), Answer.objects.count(), AnswerElement.objects.count()) == counts
    assert summary["total"]["questions_created"] == 0
    assert summary["total"]["already_present"] == 5


def test_short_answers_imported_later_fill_the_questions(project, screens, tmp_path):
    # Given an import of answers only
    write_release(tmp_path / "full")
    (tmp_path / "a" / "answers_and_bboxes").mkdir(parents=True)
    for split in SPLITS:
        src = tmp_path / "full" / "answers_and_bboxes" / f"{split}.json"
        (tmp_path / "a" / "answers_and_bboxes" / f"{split}.json").write_bytes(src.read_bytes())
    release_import(project=project, directory=tmp_path / "a")
    assert Question.objects.get(text="Which tab is open?").short_answers == []
    # When the full release is imported afterwards
    summary = release_import(project=project, directory=tmp_path / "full")
    # Then the short answers are filled in, nothing is duplicated
    assert summary["total"]["questions_filled"] == 5
    assert Question.objects.count() == 5
    assert Question.objects.get(text="Which tab is open?").short_answers == ["Cars"]


def test_unknown_screens_are_skipped_and_counted(project, tmp_path):
    # Given only screen 31 is in the project
    ScreenFactory(project=project, rico_id="31")
    write_release(tmp_path)
    summary = release_import(project=project, directory=tmp_path)
    # Then the other image ids are reported, not imported
    assert summary["unknown_image_ids"] == 2
    assert summary["unknown_image_ids_sample"] == ["37374", "40000"]
    assert summary["splits"]["train"]["unknown_screen"] == 3
    assert summary["total"]["questions_created"] == 2


def test_screen_already_in_another_split_is_not_moved(project, tmp_path):
    ScreenFactory(project=project, rico_id="31", split="test")
    write_release(tmp_path)
    summary = release_import(project=project, directory=tmp_path)
    assert summary["splits"]["validation"]["split_conflict"] == 2
    assert "screen 31 is in test" in summary["split_conflicts_sample"][0]
    assert not Question.objects.exists()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["validation"][0][4][0]["ui_elements"][0].update(bounds=[5, 5, 5, 9]), "positive area"),
        (lambda d: d["validation"][0][4][0]["ui_elements"][0].update(text=""), "non-empty text"),
        (lambda d: d["train"].append((True, 1, 1, "Q?", [], [])), "image_id"),
        (lambda d: d["train"].append(d["train"][0]), "duplicate"),
    ],
)
def test_bad_entries_refuse_the_whole_import_with_a_clear_error(project, screens, tmp_path, mutate, message):
    data = json.loads(json.dumps(HAND_MADE))
    mutate(data)
    write_release(tmp_path, data)
    with pytest.raises(ApplicationError, match=message) as info:
        release_import(project=project, directory=tmp_path)
    assert "nothing was imported" in info.value.message
    assert not Question.objects.exists()


def test_skip_invalid_imports_the_rest(project, screens, tmp_path):
    data = json.loads(json.dumps(HAND_MADE))
    data["validation"][0][4][0]["ui_elements"][0]["bounds"] = [5, 5, 5, 9]
    write_release(tmp_path, data)
    summary = release_import(project=project, directory=tmp_path, skip_invalid=True)
    assert summary["splits"]["validation"]["invalid"] == 1
    assert "answers_and_bboxes/validation.json[0]" in summary["invalid_sample"][0]
    assert Question.objects.count() == 5  # the question still comes in, from short_answers
    assert not Answer.objects.filter(question__text="From whom are you protected?").exists()


def test_files_that_are_not_a_release_are_refused(project, tmp_path):
    with pytest.raises(ApplicationError, match="No release files"):
        release_import(project=project, directory=tmp_path)
    (tmp_path / "short_answers").mkdir()
    (tmp_path / "short_answers" / "test.json").write_text('{"not": "a list"}')
    with pytest.raises(ApplicationError, match="JSON list"):
        release_import(project=project, directory=tmp_path)
    (tmp_path / "short_answers" / "test.json").write_text("[{")
    with pytest.raises(ApplicationError, match="not a readable JSON"):
        release_import(project=project, directory=tmp_path)


@pytest.mark.realdata
def test_real_short_answers_import_and_export_back(project, shared_data, tmp_path):
    # Given the real RICO screens that have ScreenQA questions, as screens of the project
    source = shared_data / "screen_qa"
    ids = {"3363", "33627", "33651", "33657", "33686", "33692", "33694"}
    for rico_id in ids:
        ScreenFactory(project=project, rico_id=rico_id)
    real = {s: json.loads((source / "short_answers" / f"{s}.json").read_text()) for s in ("validation", "test")}
    # When the real short-answer files are imported
    summary = release_import(project=project, directory=source)
    # Then the questions of those screens come in, in their splits, and every other image_id is skipped
    ours = {s: [e for e in real[s] if str(e["image_id"]) in ids] for s in real}
    assert summary["splits"]["validation"]["questions_created"] == len(ours["validation"]) == 8
    assert summary["splits"]["test"]["questions_created"] == len(ours["test"]) == 9
    all_ids = {str(e["image_id"]) for s in real for e in real[s]}
    assert summary["unknown_image_ids"] == len(all_ids) - len(ids)
    assert summary["total"]["unknown_screen"] == sum(len(real[s]) for s in real) - 17
    # And exporting gives back exactly the real records of those screens, byte for byte
    release_export(project=project, out_dir=tmp_path / "out")
    for split in ("validation", "test"):
        assert (tmp_path / "out" / "short_answers" / f"{split}.json").read_bytes() == json.dumps(ours[split]).encode()
    # And a second import changes nothing
    again = release_import(project=project, directory=source)
    assert again["total"]["questions_created"] == 0
    assert Question.objects.count() == 17


def test_commands_round_trip(project, screens, tmp_path):
    write_release(tmp_path / "in")
    out = StringIO()
    call_command("import_release", str(tmp_path / "in"), "--project", project.slug, stdout=out)
    assert json.loads(out.getvalue())["total"]["questions_created"] == 5
    out = StringIO()
    err = StringIO()
    call_command("export_release", "--project", project.slug, "--out", str(tmp_path / "out"), stdout=out, stderr=err)
    assert json.loads(out.getvalue())["counts"]["total"]["questions"] == 5
    assert "5 / 5 questions written" in err.getvalue()
    assert (tmp_path / "out" / "manifest.json").exists()
    call_command(
        "export_release",
        "--project",
        project.slug,
        "--out",
        str(tmp_path / "j"),
        "--format",
        "jsonl",
        stdout=StringIO(),
    )
    assert len((tmp_path / "j" / "train.jsonl").read_text().splitlines()) == 3
    with pytest.raises(CommandError, match="No project"):
        call_command("export_release", "--project", "nope", "--out", str(tmp_path / "x"))
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("import_release", str(tmp_path / "empty-does-not-exist"), "--project", project.slug)


def test_a_screenshot_size_that_differs_from_the_screen_is_reported(project, tmp_path):
    # Given screen 40000 was imported at 1080x1920 while the release says 540x960
    for rico_id in ("37374", "40000", "31"):
        ScreenFactory(project=project, rico_id=rico_id, width=1080, height=1920)
    write_release(tmp_path)
    summary = release_import(project=project, directory=tmp_path)
    # Then the entry comes in, and the mismatch is counted with its location
    assert summary["splits"]["train"]["size_mismatch"] == 1
    assert summary["size_mismatch_sample"] == [
        "answers_and_bboxes/train.json[2]: file says 540x960, screen 40000 is 1080x1920"
    ]
    assert summary["total"]["questions_created"] == 5


@pytest.mark.django_db(transaction=True)
def test_a_question_written_during_the_import_makes_it_refuse_cleanly(project, tmp_path):
    """Real race on PostgreSQL: a writer holds a new question at position 0 of screen 31 while the
    import computes the same position; when the writer commits, the import fails as a whole with a
    conflict, and a re-run succeeds."""
    import threading
    import time as _time

    from django.db import connection, transaction

    from annotation.exceptions import ConflictError
    from tests.factories import QuestionFactory

    screen = ScreenFactory(project=project, rico_id="31")
    write_release(tmp_path, {"train": [], "validation": HAND_MADE["validation"], "test": []})
    outcome: dict[str, object] = {}

    def importer() -> None:
        try:
            outcome["summary"] = release_import(project=project, directory=tmp_path)
        except Exception as exc:
            outcome["error"] = exc
        finally:
            connection.close()

    with transaction.atomic():
        QuestionFactory(screen=screen, position=0, text="Written meanwhile?", state="kept")
        thread = threading.Thread(target=importer)
        thread.start()
        _time.sleep(1.5)  # the importer is now blocked on the unique (screen, position) index
        assert thread.is_alive()
    thread.join(timeout=30)
    assert isinstance(outcome.get("error"), ConflictError), outcome
    assert list(Question.objects.values_list("text", flat=True)) == ["Written meanwhile?"]
    assert not Answer.objects.exists()
    # And running it again imports after the new question
    summary = release_import(project=project, directory=tmp_path)
    assert summary["total"]["questions_created"] == 2
    assert list(Question.objects.order_by("position").values_list("position", flat=True)) == [0, 1, 2]
