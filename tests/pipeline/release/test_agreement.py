"""Agreement rules, one case each (pipeline/release/agreement.py; docs/postprocessing.md)."""

from __future__ import annotations

import pytest

from pipeline.release.agreement import (
    ALL,
    NONE,
    TWO,
    AgreementSettings,
    AnswerView,
    ElementView,
    agreement_group,
    agreement_tokens,
    answers_agree,
    box_iou,
)

TEXT_ONLY = AgreementSettings()
WITH_BOXES = AgreementSettings(use_boxes=True, iou_threshold=0.5)
BOX = (10, 10, 200, 60)


def answered(*elements: str | tuple[str, tuple[int, int, int, int]]) -> AnswerView:
    views = [
        ElementView(text=e, bounds=BOX) if isinstance(e, str) else ElementView(text=e[0], bounds=e[1]) for e in elements
    ]
    return AnswerView(verdict="answered", elements=tuple(views))


@pytest.mark.parametrize("verdict", ["invalid", "not_answerable"])
def test_same_non_answer_verdicts_agree(verdict):
    # given two answers with the same non-answer verdict
    a, b = AnswerView(verdict=verdict), AnswerView(verdict=verdict)
    # then they agree
    assert answers_agree(a, b, settings=TEXT_ONLY)


def test_different_verdicts_disagree():
    assert not answers_agree(AnswerView(verdict="not_answerable"), AnswerView(verdict="invalid"), settings=TEXT_ONLY)
    assert not answers_agree(answered("Male"), AnswerView(verdict="not_answerable"), settings=TEXT_ONLY)


def test_same_elements_up_to_case_and_punctuation_agree():
    assert answers_agree(
        answered("Unauthorized transactions."), answered("unauthorized  TRANSACTIONS"), settings=TEXT_ONLY
    )


def test_different_segmentation_of_the_same_words_agrees():
    # given the paper's figure 1c answer, segmented differently by two answerers
    a = answered("Deep Squat, 3 sets, 15x", "Lunge, 3 sets, 10x")
    b = answered("Deep Squat", "3 sets", "15x", "Lunge", "3 sets", "10x")
    # then every element of each is a hit against the other
    assert answers_agree(a, b, settings=TEXT_ONLY)
    assert answers_agree(b, a, settings=TEXT_ONLY)


def test_an_extra_element_disagrees():
    # the extra "2014" is a miss in one direction: agreement needs both
    assert not answers_agree(answered("C Max", "2014"), answered("C Max"), settings=TEXT_ONLY)
    assert not answers_agree(answered("C Max"), answered("C Max", "2014"), settings=TEXT_ONLY)


def test_different_texts_disagree():
    assert not answers_agree(answered("3 reviews"), answered("4.5 stars"), settings=TEXT_ONLY)


def test_partial_overlap_of_one_element_disagrees():
    # "Lunge" is inside "Lunge 3 sets" but "3 sets" is not in the other answer
    assert not answers_agree(answered("Lunge 3 sets"), answered("Lunge"), settings=TEXT_ONLY)


def test_answered_without_elements_agrees_with_nothing():
    assert not answers_agree(answered(), answered(), settings=TEXT_ONLY)
    assert not answers_agree(answered(), answered("Male"), settings=TEXT_ONLY)


def test_symbol_only_texts_still_match_themselves():
    assert agreement_tokens("★★★") == ["★", "★", "★"]
    assert answers_agree(answered("★★★"), answered("★★★"), settings=TEXT_ONLY)
    assert not answers_agree(answered("★★★"), answered("★★"), settings=TEXT_ONLY)


def test_boxes_are_ignored_unless_the_project_asks():
    far_apart = answered(("Male", (0, 0, 100, 50))), answered(("Male", (500, 500, 600, 550)))
    assert answers_agree(*far_apart, settings=TEXT_ONLY)
    assert not answers_agree(*far_apart, settings=WITH_BOXES)


def test_boxes_agree_at_or_above_the_threshold():
    # given the real validation record image_id 31 (FORMATS.md): three drawn boxes a few pixels apart
    raters = [
        answered(("unauthorized transactions", (424, 1078, 852, 1117))),
        answered(("unauthorized transactions", (426, 1078, 852, 1113))),
        answered(("unauthorized transactions", (416, 1078, 854, 1115))),
    ]
    # then all three agree with boxes at IoU >= 0.5
    assert agreement_group(raters, settings=WITH_BOXES) == agreement_group(raters, settings=TEXT_ONLY)
    assert agreement_group(raters, settings=WITH_BOXES).label == ALL
    # and a threshold above their overlap separates them
    assert agreement_group(raters, settings=AgreementSettings(use_boxes=True, iou_threshold=0.99)).label == NONE


def test_box_iou():
    assert box_iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert box_iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert box_iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert box_iou((0, 0, 0, 10), (0, 0, 0, 10)) == 0.0


def test_group_all_agree():
    result = agreement_group([answered("Male"), answered("male"), answered("MALE.")], settings=TEXT_ONLY)
    assert (result.label, result.group, result.tie) == (ALL, (0, 1, 2), False)


def test_group_two_agree_names_the_two():
    result = agreement_group([answered("Male"), answered("Female"), answered("male")], settings=TEXT_ONLY)
    assert (result.label, result.group) == (TWO, (0, 2))


def test_group_two_not_answerable_against_one_answer():
    result = agreement_group(
        [AnswerView(verdict="not_answerable"), answered("Male"), AnswerView(verdict="not_answerable")],
        settings=TEXT_ONLY,
    )
    assert (result.label, result.group) == (TWO, (0, 2))


def test_group_none_when_no_two_agree():
    result = agreement_group([answered("A"), answered("B"), AnswerView(verdict="invalid")], settings=TEXT_ONLY)
    assert (result.label, result.group, result.tie) == (NONE, (), False)


def test_group_tie_between_two_pairs_is_none():
    # given boxes where a~b and b~c overlap enough but a and c do not (agreement is not transitive)
    a = answered(("Male", (0, 0, 100, 100)))
    b = answered(("Male", (20, 0, 120, 100)))
    c = answered(("Male", (40, 0, 140, 100)))
    settings = AgreementSettings(use_boxes=True, iou_threshold=0.6)
    assert answers_agree(a, b, settings=settings) and answers_agree(b, c, settings=settings)
    assert not answers_agree(a, c, settings=settings)
    # then there is no single group to keep
    result = agreement_group([a, b, c], settings=settings)
    assert (result.label, result.group, result.tie) == (NONE, (), True)


def test_group_of_one_answer_is_none():
    assert agreement_group([answered("Male")], settings=TEXT_ONLY).label == NONE


def test_group_of_five_takes_the_largest_clique():
    answers = [answered("A"), answered("A"), answered("B"), answered("A"), answered("B")]
    result = agreement_group(answers, settings=TEXT_ONLY)
    assert (result.label, result.group) == (TWO, (0, 1, 3))


def test_a_lone_symbol_ignores_punctuation_around_it():
    assert agreement_tokens("$.") == ["$"]
    assert answers_agree(answered("$"), answered("$."), settings=TEXT_ONLY)
    assert agreement_tokens("...") == [".", ".", "."]


def test_case_folding_beyond_lower_case():
    assert answers_agree(answered("Straße"), answered("STRASSE"), settings=TEXT_ONLY)
