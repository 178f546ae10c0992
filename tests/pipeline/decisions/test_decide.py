"""The decision rules of one question (pipeline/decisions/decide.py), on plain values: no database.

test_postprocess.py runs the same rules through the post-processing job on stored questions; here
each rule is one call of ``question_decide``, so every branch (and every reason code) is checked
directly."""

from __future__ import annotations

import pytest

from annotation.models import Project
from pipeline.decisions.agreement import AgreementSettings, AnswerView, ElementView
from pipeline.decisions.decide import (
    AnswerRecord,
    QuestionDecision,
    agreement_settings_for,
    clean_text,
    question_decide,
)

RELEASE = AgreementSettings()
STRICT = AgreementSettings(rule="strict")
BOX = (10, 10, 200, 60)
TEXT = "What is the gender?"


def record(pk: int, *texts: str, verdict: str = "answered", question_text: str = "") -> AnswerRecord:
    elements = tuple(ElementView(text=t, bounds=BOX) for t in texts)
    return AnswerRecord(pk=pk, verdict=verdict, question_text=question_text, elements=elements)


def decide(*answers: AnswerRecord, text: str = TEXT, settings: AgreementSettings = RELEASE) -> QuestionDecision:
    return question_decide(text=text, answers=answers, settings=settings)


# --- what an answer offers ----------------------------------------------------------------------


def test_an_answer_is_usable_with_elements_or_without_being_answered():
    assert record(1, "Male").usable
    assert not record(1).usable  # answered, and nothing selected
    assert record(1, verdict="not_answerable").usable
    assert record(1, verdict="invalid").usable


def test_an_answers_view_is_its_verdict_and_elements():
    answer = record(1, "Male", verdict="answered")
    assert answer.view == AnswerView(verdict="answered", elements=(ElementView(text="Male", bounds=BOX),))


def test_clean_text_collapses_spaces():
    assert clean_text("  What  is\tthe \n gender? ") == "What is the gender?"


def test_the_projects_agreement_settings():
    project = Project(agreement_use_boxes=True, agreement_iou_threshold=0.7, agreement_rule="strict")
    assert agreement_settings_for(project) == AgreementSettings(use_boxes=True, iou_threshold=0.7, rule="strict")


# --- no answer, one answer (train) ---------------------------------------------------------------


def test_no_answer_is_no_usable_answer():
    assert decide() == QuestionDecision("dropped", "", "no-usable-answer", "")


def test_one_answer_is_kept_with_the_answerers_text():
    # given one answer whose answerer fixed the question
    decision = decide(record(7, "Male", question_text="  What is  the gender? "), text="what gender")
    # then the question is kept as they left it (spaces cleaned), with the answer
    assert decision == QuestionDecision("kept", "What is the gender?", "", "", {7: (True, "")})


def test_one_answer_without_an_edit_keeps_the_original_text():
    decision = decide(record(7, "Male", question_text="   "), text=" What  is the gender? ")
    assert (decision.state, decision.final_text) == ("kept", "What is the gender?")


def test_one_invalid_answer_drops_the_question_and_keeps_the_answer():
    decision = decide(record(7, verdict="invalid"))
    assert decision == QuestionDecision("dropped", "", "invalid", "", {7: (True, "")})


def test_one_answer_without_elements_drops_both():
    decision = decide(record(7))
    assert decision == QuestionDecision("dropped", "", "no-usable-answer", "", {7: (False, "no-elements")})


def test_one_not_answerable_answer_is_kept():
    decision = decide(record(7, verdict="not_answerable", question_text=TEXT))
    assert decision == QuestionDecision("kept", TEXT, "", "", {7: (True, "")})


# --- several answers (validation, test) -----------------------------------------------------------


@pytest.mark.parametrize("rule", [RELEASE, STRICT])
def test_all_agree_keeps_every_answer(rule):
    decision = decide(record(1, "Male"), record(2, "male"), record(3, "MALE."), settings=rule)
    assert decision == QuestionDecision("kept", TEXT, "", "all", {1: (True, ""), 2: (True, ""), 3: (True, "")})


def test_two_agree_drops_the_third_as_disagreeing():
    decision = decide(record(1, "Male"), record(2, "Female"), record(3, "male"))
    assert (decision.state, decision.agreement) == ("kept", "two")
    assert decision.answers == {1: (True, ""), 2: (False, "disagrees"), 3: (True, "")}


def test_an_answer_without_elements_outside_the_group_is_no_elements():
    decision = decide(record(1, "Male"), record(2), record(3, "male"))
    assert decision.answers == {1: (True, ""), 2: (False, "no-elements"), 3: (True, "")}


def test_no_two_agree_drops_the_question_and_keeps_the_answers():
    decision = decide(record(1, "Male"), record(2, "Female"), record(3, "Other"))
    answers = {1: (True, ""), 2: (True, ""), 3: (True, "")}
    assert decision == QuestionDecision("dropped", "", "no-agreement", "none", answers)


def test_two_groups_of_two_are_a_tie():
    # not answerable agrees with each of two different answers (the release rule): two pairs
    decision = decide(record(1, "Male"), record(2, verdict="not_answerable"), record(3, "Female"))
    answers = {1: (True, ""), 2: (True, ""), 3: (True, "")}
    assert decision == QuestionDecision("dropped", "", "agreement-tie", "none", answers)


def test_agreeing_invalid_answers_drop_the_question_as_invalid():
    decision = decide(record(1, verdict="invalid"), record(2, "Male"), record(3, verdict="invalid"))
    answers = {1: (True, ""), 2: (False, "disagrees"), 3: (True, "")}
    assert decision == QuestionDecision("dropped", "", "invalid", "two", answers)


def test_not_answerable_beside_an_answer_keeps_both_under_the_release_rule():
    decision = decide(record(1, verdict="not_answerable"), record(2, "Male"), record(3, verdict="not_answerable"))
    assert (decision.state, decision.agreement) == ("kept", "all")


# --- the question's text: the group's majority edit ------------------------------------------------


def test_the_majority_edit_of_the_group_wins():
    decision = decide(
        record(1, "Male", question_text="What gender?"),
        record(2, "Male", question_text="What is the gender"),
        record(3, "Male", question_text="What gender?"),
        text="wat gender",
    )
    assert decision.final_text == "What gender?"


def test_a_tie_keeps_the_original_when_it_is_among_the_tied():
    decision = decide(
        record(1, "Male", question_text="What's the gender?"),
        record(2, "Male", question_text=TEXT),
        text=f"  {TEXT} ",
    )
    assert decision.final_text == TEXT


def test_a_tie_without_the_original_takes_the_earliest_edit():
    decision = decide(
        record(1, "Male", question_text="Which gender?"),
        record(2, "Male", question_text="What gender?"),
        record(3, "Male", question_text="What is the gender"),
        text="wat gender",
    )
    assert decision.final_text == "Which gender?"


def test_answers_without_an_edit_count_as_the_original():
    # two answers left the text as it was, one fixed it: the original wins, two to one
    decision = decide(
        record(1, "Male", question_text="What gender?"), record(2, "Male"), record(3, "Male"), text="wat gender"
    )
    assert decision.final_text == "wat gender"


def test_edits_outside_the_group_do_not_count():
    decision = decide(
        record(1, "Female", question_text="Gender?"),
        record(2, "Female", question_text="Gender?"),
        record(3, "Male", question_text="What is the gender"),
        record(4, "Male", question_text="What is the gender"),
        record(5, "Male", question_text="What is the gender"),
    )
    assert (decision.agreement, decision.final_text) == ("two", "What is the gender")
