"""Agreement rules, one case each (pipeline/decisions/agreement.py; docs/postprocessing.md).

``TEXT_ONLY`` is the default (the ``release`` rule); ``STRICT`` the strict one. Cases that hold under
both rules are parametrised over them; real records of the release are in test_real_data.py and at
the end of this file."""

from __future__ import annotations

import pytest

from annotation.models import AgreementRule, Project
from pipeline.decisions.agreement import (
    ALL,
    NONE,
    RULES,
    TWO,
    AgreementResult,
    AgreementSettings,
    AnswerView,
    ElementView,
    agreement_group,
    agreement_tokens,
    answers_agree,
    box_iou,
)

TEXT_ONLY = AgreementSettings()
STRICT = AgreementSettings(rule="strict")
WITH_BOXES = AgreementSettings(use_boxes=True, iou_threshold=0.5)
BOX = (10, 10, 200, 60)
BOTH_RULES = pytest.mark.parametrize("rule", RULES)
NOT_ANSWERABLE = AnswerView(verdict="not_answerable")
INVALID = AnswerView(verdict="invalid")


def answered(*elements: str | tuple[str, tuple[int, int, int, int]]) -> AnswerView:
    views = [
        ElementView(text=e, bounds=BOX) if isinstance(e, str) else ElementView(text=e[0], bounds=e[1]) for e in elements
    ]
    return AnswerView(verdict="answered", elements=tuple(views))


def test_the_rules_are_the_models_choices():
    assert set(RULES) == set(AgreementRule.values)
    assert Project._meta.get_field("agreement_rule").default == AgreementSettings().rule == "release"
    with pytest.raises(ValueError, match=r"^unknown agreement rule 'lenient'; one of release, strict$"):
        AgreementSettings(rule="lenient")


@BOTH_RULES
@pytest.mark.parametrize("verdict", ["invalid", "not_answerable"])
def test_same_non_answer_verdicts_agree(verdict, rule):
    # given two answers with the same non-answer verdict
    a, b = AnswerView(verdict=verdict), AnswerView(verdict=verdict)
    # then they agree
    assert answers_agree(a, b, settings=AgreementSettings(rule=rule))


@BOTH_RULES
def test_invalid_agrees_only_with_invalid(rule):
    settings = AgreementSettings(rule=rule)
    assert not answers_agree(NOT_ANSWERABLE, INVALID, settings=settings)
    assert not answers_agree(answered("Male"), INVALID, settings=settings)


def test_strict_not_answerable_disagrees_with_an_answer():
    assert not answers_agree(answered("Male"), NOT_ANSWERABLE, settings=STRICT)


def test_release_not_answerable_agrees_with_an_answer():
    # the release keeps a not-answerable vote (an empty element list, "<no answer>") beside text answers
    assert answers_agree(answered("Male"), NOT_ANSWERABLE, settings=TEXT_ONLY)
    assert answers_agree(NOT_ANSWERABLE, answered("Male"), settings=TEXT_ONLY)
    # but not with an answer that has no element (no usable answer)
    assert not answers_agree(answered(), NOT_ANSWERABLE, settings=TEXT_ONLY)


@BOTH_RULES
def test_same_elements_up_to_case_and_punctuation_agree(rule):
    assert answers_agree(
        answered("Unauthorized transactions."),
        answered("unauthorized  TRANSACTIONS"),
        settings=AgreementSettings(rule=rule),
    )


@BOTH_RULES
def test_different_segmentation_of_the_same_words_agrees(rule):
    # given the paper's figure 1c answer, segmented differently by two answerers
    a = answered("Deep Squat, 3 sets, 15x", "Lunge, 3 sets, 10x")
    b = answered("Deep Squat", "3 sets", "15x", "Lunge", "3 sets", "10x")
    # then every element of each is a hit against the other
    assert answers_agree(a, b, settings=AgreementSettings(rule=rule))
    assert answers_agree(b, a, settings=AgreementSettings(rule=rule))


def test_strict_an_extra_element_disagrees():
    # the extra "2014" is a miss in one direction: strict agreement needs both
    assert not answers_agree(answered("C Max", "2014"), answered("C Max"), settings=STRICT)
    assert not answers_agree(answered("C Max"), answered("C Max", "2014"), settings=STRICT)


def test_release_an_extra_element_agrees():
    # the real validation record 37374 keeps both raters (FORMATS.md)
    assert answers_agree(answered("C Max", "2014"), answered("C Max"), settings=TEXT_ONLY)
    assert answers_agree(answered("C Max"), answered("C Max", "2014"), settings=TEXT_ONLY)


def test_release_partial_overlap_of_elements_agrees():
    # each answer has an element the other lacks, and one in common
    assert answers_agree(answered("Facebook", "HERE"), answered("Email", "facebook"), settings=TEXT_ONLY)
    assert not answers_agree(answered("Facebook", "HERE"), answered("Facebook", "Email"), settings=STRICT)


def test_release_a_shared_element_in_another_segmentation_agrees():
    # the shared part is found across a different segmentation: "Deep Squat, 3 sets, 15x" = three elements
    a = answered("Deep Squat, 3 sets, 15x", "Lunge, 3 sets, 10x")
    b = answered("Deep Squat", "3 sets", "15x", "Plank")
    assert answers_agree(a, b, settings=TEXT_ONLY)
    assert answers_agree(b, a, settings=TEXT_ONLY)
    assert not answers_agree(a, b, settings=STRICT)


@BOTH_RULES
def test_different_texts_disagree(rule):
    assert not answers_agree(answered("3 reviews"), answered("4.5 stars"), settings=AgreementSettings(rule=rule))
    assert not answers_agree(answered("Male", "Other"), answered("Female"), settings=AgreementSettings(rule=rule))


@BOTH_RULES
def test_part_of_one_element_disagrees(rule):
    # "Lunge" is inside "Lunge 3 sets" but is not the whole element, under either rule
    settings = AgreementSettings(rule=rule)
    assert not answers_agree(answered("Lunge 3 sets"), answered("Lunge"), settings=settings)
    assert not answers_agree(answered("Lunge"), answered("Lunge 3 sets"), settings=settings)
    # nor with an element beside it: "Sign in" shares no whole element with "Sign in with Google", "Help"
    assert not answers_agree(answered("Sign in with Google", "Help"), answered("Sign in"), settings=settings)


@BOTH_RULES
def test_answered_without_elements_agrees_with_nothing(rule):
    settings = AgreementSettings(rule=rule)
    assert not answers_agree(answered(), answered(), settings=settings)
    assert not answers_agree(answered(), answered("Male"), settings=settings)


@BOTH_RULES
def test_symbol_only_texts_still_match_themselves(rule):
    settings = AgreementSettings(rule=rule)
    assert agreement_tokens("★★★") == ["★", "★", "★"]
    assert answers_agree(answered("★★★"), answered("★★★"), settings=settings)
    assert not answers_agree(answered("★★★"), answered("★★"), settings=settings)
    assert not answers_agree(answered("★★", "Good"), answered("★★★", "Good "), settings=STRICT)
    # under the release rule "Good" is the shared element; the ratings still differ, and are left out
    assert answers_agree(answered("★★", "Good"), answered("★★★", "Good "), settings=TEXT_ONLY)


@BOTH_RULES
def test_boxes_are_ignored_unless_the_project_asks(rule):
    far_apart = answered(("Male", (0, 0, 100, 50))), answered(("Male", (500, 500, 600, 550)))
    assert answers_agree(*far_apart, settings=AgreementSettings(rule=rule))
    assert not answers_agree(*far_apart, settings=AgreementSettings(rule=rule, use_boxes=True))


def test_release_with_boxes_compares_the_shared_elements_boxes():
    # given the shared "C Max" in the same place, and an extra element far away
    a = answered(("C Max", (33, 319, 939, 376)), ("2014", (33, 483, 939, 540)))
    b = answered(("C Max", (33, 319, 939, 376)))
    moved = answered(("C Max", (33, 1000, 939, 1057)))
    # then the extra element's box does not matter; the shared element's does
    assert answers_agree(a, b, settings=WITH_BOXES)
    assert not answers_agree(a, moved, settings=WITH_BOXES)


@BOTH_RULES
def test_boxes_must_cover_each_other_both_ways(rule):
    # given the same words as one element and as two: the one box is where "Deep Squat" is, and the
    # other answer boxes "Deep Squat" there and "15x" far below, where the first answer has no box
    one = answered(("Deep Squat 15x", (0, 0, 300, 50)))
    two = answered(("Deep Squat", (0, 0, 300, 50)), ("15x", (0, 900, 100, 950)))
    settings = AgreementSettings(rule=rule, use_boxes=True)
    assert answers_agree(one, two, settings=AgreementSettings(rule=rule))  # the texts agree
    # then the boxes disagree, whichever answer comes first
    assert not answers_agree(one, two, settings=settings)
    assert not answers_agree(two, one, settings=settings)
    # given one box around both words, and two boxes that each cover most of it
    around = answered(("Deep Squat 15x", (0, 0, 300, 100)))
    halves = answered(("Deep Squat", (0, 0, 300, 60)), ("15x", (0, 40, 300, 100)))  # IoU 0.6 each
    # then every box of each has its counterpart in the other: they agree, in both orders
    assert answers_agree(around, halves, settings=settings)
    assert answers_agree(halves, around, settings=settings)


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
    # apart along one axis only: side by side, or one above the other
    assert box_iou((0, 0, 10, 10), (20, 0, 30, 10)) == 0.0
    assert box_iou((0, 0, 10, 10), (0, 20, 10, 30)) == 0.0
    # boxes that are not squares: each side's width and height count
    assert box_iou((0, 0, 20, 10), (10, 0, 30, 10)) == pytest.approx(100 / 300)
    assert box_iou((0, 0, 10, 20), (0, 10, 10, 30)) == pytest.approx(100 / 300)
    # a box of one pixel is itself
    assert box_iou((5, 5, 6, 6), (5, 5, 6, 6)) == 1.0


def test_boxes_agree_at_exactly_the_threshold():
    # given two boxes whose IoU is exactly 0.5 (one covers the left half of the other)
    whole, half = answered(("Male", (0, 0, 100, 10))), answered(("Male", (0, 0, 50, 10)))
    # then they agree at a threshold of 0.5, and not above it
    assert answers_agree(whole, half, settings=AgreementSettings(use_boxes=True, iou_threshold=0.5))
    assert not answers_agree(whole, half, settings=AgreementSettings(use_boxes=True, iou_threshold=0.51))


def test_group_all_agree():
    result = agreement_group([answered("Male"), answered("male"), answered("MALE.")], settings=TEXT_ONLY)
    assert (result.label, result.group, result.tie) == (ALL, (0, 1, 2), False)


def test_group_two_agree_names_the_two():
    result = agreement_group([answered("Male"), answered("Female"), answered("male")], settings=TEXT_ONLY)
    assert (result.label, result.group) == (TWO, (0, 2))


def test_strict_group_two_not_answerable_against_one_answer():
    result = agreement_group([NOT_ANSWERABLE, answered("Male"), NOT_ANSWERABLE], settings=STRICT)
    assert (result.label, result.group) == (TWO, (0, 2))


def test_release_group_not_answerable_beside_an_answer_is_all():
    result = agreement_group([NOT_ANSWERABLE, answered("Male"), NOT_ANSWERABLE], settings=TEXT_ONLY)
    assert (result.label, result.group) == (ALL, (0, 1, 2))


def test_release_group_not_answerable_between_two_different_answers_is_a_tie():
    # it agrees with each, and they disagree with each other: two groups of two, nothing to keep
    result = agreement_group([answered("Male"), NOT_ANSWERABLE, answered("Female")], settings=TEXT_ONLY)
    assert (result.label, result.group, result.tie) == (NONE, (), True)


def test_release_group_partial_overlaps_are_not_transitive():
    # a~b and b~c share an element, a and c share none: the largest group is one of two pairs (a tie)
    a, b, c = answered("A", "B"), answered("B", "C"), answered("C", "D")
    assert answers_agree(a, b, settings=TEXT_ONLY) and answers_agree(b, c, settings=TEXT_ONLY)
    assert not answers_agree(a, c, settings=TEXT_ONLY)
    assert agreement_group([a, b, c], settings=TEXT_ONLY).tie


@BOTH_RULES
def test_group_none_when_no_two_agree(rule):
    result = agreement_group([answered("A"), answered("B"), INVALID], settings=AgreementSettings(rule=rule))
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
    assert agreement_group([answered("Male")], settings=TEXT_ONLY) == AgreementResult(label=NONE, group=())
    assert agreement_group([], settings=TEXT_ONLY) == AgreementResult(label=NONE, group=())


@BOTH_RULES
def test_group_of_two_answers(rule):
    # given two answers (a question with one answer withdrawn, or a project asking for two)
    settings = AgreementSettings(rule=rule)
    # then two that agree are all of them, and two that do not are none
    assert agreement_group([answered("Male"), answered("male")], settings=settings) == AgreementResult(ALL, (0, 1))
    assert agreement_group([answered("Male"), answered("Female")], settings=settings) == AgreementResult(NONE, ())


def test_group_of_five_takes_the_largest_clique():
    answers = [answered("A"), answered("A"), answered("B"), answered("A"), answered("B")]
    result = agreement_group(answers, settings=TEXT_ONLY)
    assert (result.label, result.group) == (TWO, (0, 1, 3))


def test_a_lone_symbol_ignores_punctuation_around_it():
    assert agreement_tokens("$.") == ["$"]
    assert answers_agree(answered("$"), answered("$."), settings=TEXT_ONLY)
    assert agreement_tokens("...") == [".", ".", "."]


def test_agreement_tokens_are_the_folded_words():
    assert agreement_tokens("Deep Squat, 3 sets") == ["deep", "squat", "3", "sets"]
    assert agreement_tokens("Straße") == ["strasse"]


def test_case_folding_beyond_lower_case():
    assert answers_agree(answered("Straße"), answered("STRASSE"), settings=TEXT_ONLY)
