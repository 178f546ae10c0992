"""Gold from data: ``import_release --gold`` and the ``gold`` command."""

from __future__ import annotations

import copy
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.exceptions import NotFoundError
from annotation.models import Assignment, AssignmentStatus, GoldItem, GoldSource, Purpose, Question
from pipeline.quality.gold import gold_from_release, gold_unit_create
from tests.pipeline.release.test_imports import HAND_MADE, el, screens, write_release  # noqa: F401
from tests.pipeline.stages.helpers import answering_question, member
from tests.pipeline.stages.helpers import screens as make_screens

pytestmark = pytest.mark.django_db

RELEASE = copy.deepcopy(HAND_MADE)
RELEASE["validation"] = [
    *RELEASE["validation"],
    (  # three answers on three different elements: no agreement, no gold
        31,
        1080,
        1920,
        "Which button is blue?",
        [
            {"full_answer": "OK.", "ui_elements": [el([0, 0, 100, 50], "OK")]},
            {"full_answer": "Cancel.", "ui_elements": [el([0, 60, 100, 110], "Cancel")]},
            {"full_answer": "Help.", "ui_elements": [el([0, 120, 100, 170], "Help")]},
        ],
        ["OK"],
    ),
    (  # a box outside the 1080x1920 screenshot: the answers stage would refuse it
        31,
        1080,
        1920,
        "What is at the bottom?",
        [{"full_answer": "A footer.", "ui_elements": [el([0, 1900, 100, 2000], "footer")]}],
        ["footer"],
    ),
]


def command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_import_release_gold_makes_answers_gold_from_the_agreeing_answers(project, screens, tmp_path):  # noqa: F811
    write_release(tmp_path, RELEASE)
    summary = json.loads(command("import_release", str(tmp_path), "--project", project.slug, "--gold"))
    # Then every question whose answers agree is gold; the others are skipped with their reason
    assert summary["gold"] == {"created": 5, "already_gold": 0, "skipped": {"no-agreement": 1, "refused-by-stage": 1}}
    gold = {g.question.text: g for g in GoldItem.objects.select_related("question")}
    assert set(gold) == {
        "What type of Ford car is selected?",
        "Which tab is open?",
        "Is the Wi-Fi switch on?",
        "From whom are you protected?",
        "What is the color of the sky?",
    }
    assert all(g.stage == "answers" and g.source == GoldSource.IMPORTED and g.active for g in gold.values())
    ford = gold["What type of Ford car is selected?"].answer
    assert ford["verdict"] == "answered"
    assert ford["question"] == "What type of Ford car is selected?"
    assert [(e["bounds"], e["text"]) for e in ford["elements"]] == [
        ([33, 319, 939, 376], "C Max"),
        ([33, 483, 939, 540], "2014"),
    ]
    assert gold["What is the color of the sky?"].answer["verdict"] == "not_answerable"
    # And a second run adds nothing
    again = json.loads(command("import_release", str(tmp_path), "--project", project.slug, "--gold"))
    assert again["gold"]["created"] == 0 and again["gold"]["already_gold"] == 5
    assert GoldItem.objects.count() == 5


def test_gold_from_release_limit(project, screens, tmp_path):  # noqa: F811
    write_release(tmp_path, RELEASE)
    call_command("import_release", str(tmp_path), "--project", project.slug, stdout=StringIO())
    assert gold_from_release(project=project, user=None, limit=2)["created"] == 2
    assert GoldItem.objects.count() == 2
    with pytest.raises(CommandError, match="gold-limit"):
        call_command("import_release", str(tmp_path), "--project", project.slug, "--gold", "--gold-limit", "-1")


def test_gold_command_create_list_deactivate(project, tmp_path):
    screen, other = make_screens(project, 2)
    question = answering_question(other, text="What does the first label say?")
    items = [
        {"stage": "prefilter", "rico_id": screen.rico_id, "answer": {"non_english_app": False, "vh_out_of_sync": True}},
        {
            "stage": "answers",
            "rico_id": other.rico_id,
            "question": question.text,
            "answer": {
                "question": question.text,
                "verdict": "answered",
                "elements": [{"vh_index": 1}],
                "full_answer": "It says label 1.",
            },
        },
    ]
    (tmp_path / "gold.json").write_text(json.dumps(items))
    created = json.loads(command("gold", "create", str(tmp_path / "gold.json"), "--project", project.slug))["created"]
    assert len(created) == 2
    answers_gold = GoldItem.objects.get(stage="answers")
    assert answers_gold.answer["elements"][0]["text"] == f"Label 1 of {other.rico_id}"  # the candidate's label
    listed = json.loads(command("gold", "list", "--project", project.slug, "--json"))
    assert [(r["stage"], r["served"], r["active"]) for r in listed] == [("answers", 0, True), ("prefilter", 0, True)]
    assert "not served yet" in command("gold", "list", "--project", project.slug, "--stage", "prefilter")
    command("gold", "deactivate", str(created[0]), "--project", project.slug)
    assert not GoldItem.objects.get(pk=created[0]).active
    command("gold", "activate", str(created[0]), "--project", project.slug)
    assert GoldItem.objects.get(pk=created[0]).active


def test_gold_command_create_is_all_or_nothing_and_says_which_item(project, tmp_path):
    (screen,) = make_screens(project, 1)
    judged = {"non_english_app": False, "vh_out_of_sync": False}
    items = [
        {"stage": "prefilter", "rico_id": screen.rico_id, "answer": judged},
        {"stage": "prefilter", "rico_id": "nope", "answer": judged},
    ]
    (tmp_path / "gold.json").write_text(json.dumps(items))
    with pytest.raises(CommandError, match="item 1, rico_id"):
        command("gold", "create", str(tmp_path / "gold.json"), "--project", project.slug)
    assert GoldItem.objects.count() == 0
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CommandError, match="not a readable JSON file"):
        command("gold", "create", str(tmp_path / "bad.json"), "--project", project.slug)
    (tmp_path / "writing.json").write_text(json.dumps([{**items[0], "stage": "questions-1"}]))
    with pytest.raises(CommandError, match="no gold items"):
        command("gold", "create", str(tmp_path / "writing.json"), "--project", project.slug)
    with pytest.raises(CommandError, match="No project"):
        command("gold", "list", "--project", "missing")


def test_gold_command_promotes_an_accepted_submission(project):
    (screen,) = make_screens(project, 1)
    judge = member(project, "judge")
    done = Assignment.objects.create(
        project=project,
        stage="prefilter",
        screen=screen,
        annotator=judge,
        status=AssignmentStatus.SUBMITTED,
        purpose=Purpose.WORK,
        submission={"non_english_app": True, "vh_out_of_sync": False, "note": ""},
        lease_expires_at=timezone.now(),
        submitted_at=timezone.now(),
    )
    out = json.loads(command("gold", "promote", str(done.pk), "--project", project.slug))
    assert out["answer"] == {"non_english_app": True, "vh_out_of_sync": False}
    assert GoldItem.objects.get(pk=out["id"]).origin_id == done.pk
    with pytest.raises(CommandError, match="already gold"):
        command("gold", "promote", str(done.pk), "--project", project.slug)
    with pytest.raises(CommandError, match="No accepted submission"):
        command("gold", "promote", "999999", "--project", project.slug)
    assert Question.objects.count() == 0


def test_one_lookup_names_the_unit_for_the_api_and_the_command(project):
    """``gold_unit_create``: the screen by rico_id, the question by id (API) or text (command),
    always on that screen; a miss is a 404 naming the field."""
    screen, other = make_screens(project, 2)
    question = answering_question(other, text="What does the first label say?")
    elsewhere = answering_question(screen, text="What is elsewhere?")
    body = {"question": question.text, "verdict": "invalid"}
    by_id = gold_unit_create(
        project=project, stage="answers", rico_id=other.rico_id, question_id=question.pk, answer=body, user=None
    )
    assert (by_id.screen, by_id.question, by_id.source) == (other, question, GoldSource.MANUAL)
    Question.objects.filter(pk=elsewhere.pk).update(final_text="What is on the other screen?")
    by_text = gold_unit_create(
        project=project,
        stage="answers",
        rico_id=screen.rico_id,
        question_text="What is on the other screen?",  # the post-processed text names it too
        answer={"question": elsewhere.text, "verdict": "invalid"},
        user=None,
    )
    assert by_text.question == elsewhere
    misses = [
        ({"rico_id": "nope"}, "rico_id"),
        ({"rico_id": screen.rico_id, "question_id": question.pk}, "question_id"),  # a question of another screen
        ({"rico_id": screen.rico_id, "question_text": question.text}, "question"),
    ]
    for unit, field in misses:
        with pytest.raises(NotFoundError) as err:
            gold_unit_create(project=project, stage="answers", answer=body, user=None, **unit)
        assert err.value.field == field
    assert GoldItem.objects.count() == 2
