"""The per-example rules of each official metric (FORMATS.md section 3), one hand-made case each.

The contract is the release's code; test_reference.py compares with it on generated input.
"""

from __future__ import annotations

import pytest

from pipeline.metrics.anls import anls_score, levenshtein
from pipeline.metrics.rouge import rouge_scores
from pipeline.metrics.squad import is_no_answer, normalize_answer, squad_scores
from pipeline.metrics.uic import Element, iou, matched_pairs, uic_bb_scores, uic_scores

# --- SQA-S ----------------------------------------------------------------------------------------


def test_squad_normalisation():
    assert normalize_answer("  The  Quick, brown FOX! ") == "quick brown fox"
    assert normalize_answer("an apple a day") == "apple day"
    assert normalize_answer("$3.00") == "300"


def test_squad_exact_match_against_any_ground_truth():
    assert squad_scores("the 128-bit", ["128 bits", "128-bit"]) == (1.0, 1.0)


def test_squad_f1_is_best_token_bag_f1():
    # given "128 bit encryption" against "128 bits" (1 common of 3/2) and "128-bit encryption" ("128bit encryption")
    em, f1 = squad_scores("128 bit encryption", ["128 bits", "128 bit"])
    # then no exact match, and the best F1 is against "128 bit": P = 2/3, R = 1
    assert em == 0.0
    assert f1 == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


def test_no_answer_prediction_scores_one_iff_some_ground_truth_is_no_answer():
    assert squad_scores("<no answer>", ["off", "<no answer>"]) == (1.0, 1.0)
    assert squad_scores("<no answer>", ["off", "disabled"]) == (0.0, 0.0)


def test_only_the_exact_literal_is_a_no_answer():
    # given other spellings of "no answer" (the v2 prompt's, capitalised, padded)
    for spelling in ("<<<no answer>>>", "<No Answer>", " <no answer>", "<no answer> "):
        # then they are text: against a not-answerable question they score 0 ...
        assert squad_scores(spelling, ["<no answer>"]) == (0.0, 0.0)
        # ... and against an answer "no answer" they are a match after normalisation
        assert squad_scores(spelling, ["no answer"]) == (1.0, 1.0)
        assert not is_no_answer(spelling)
    assert is_no_answer("<no answer>")


def test_no_answer_ground_truths_are_ignored_for_other_predictions():
    # given "no answer" text that would match the literal's tokens
    assert squad_scores("no answer", ["<no answer>", "off"]) == (0.0, 0.0)
    # and an all-no-answer ground truth gives a text prediction nothing
    assert squad_scores("anything", ["<no answer>"]) == (0.0, 0.0)
    # while the answers next to it still count
    assert squad_scores("Off", ["<no answer>", "off"]) == (1.0, 1.0)


def test_empty_prediction_is_not_a_no_answer():
    assert squad_scores("", ["<no answer>"]) == (0.0, 0.0)
    assert squad_scores("", ["x"]) == (0.0, 0.0)


def test_texts_that_normalise_to_nothing_match_exactly_but_have_no_f1():
    # "$" and "The" both normalise to "": equal strings (EM 1), but no token in common (F1 0)
    assert squad_scores("$", ["The"]) == (1.0, 0.0)
    assert squad_scores("the +", ["x", "$"]) == (1.0, 0.0)
    assert squad_scores("", ["a"]) == (1.0, 0.0)


# --- SQA-UIC --------------------------------------------------------------------------------------


def test_uic_exact_match_is_ordered_and_unnormalised():
    raters = [["C Max", "2014"], ["C Max"]]
    assert uic_scores(["C Max", "2014"], raters) == (1.0, 1.0)
    assert uic_scores(["C Max"], raters) == (1.0, 1.0)
    em, f1 = uic_scores(["2014", "C Max"], raters)  # order matters for EM only
    assert (em, f1) == (0.0, 1.0)
    em, f1 = uic_scores(["c max"], raters)  # no normalisation
    assert (em, f1) == (0.0, 0.0)


def test_uic_f1_is_a_multiset_f1_best_over_raters():
    # given a prediction with a duplicate: counted once against a rater who has it once
    em, f1 = uic_scores(["a", "a", "b"], [["a", "b", "c"]])
    # then P = 2/3, R = 2/3
    assert em == 0.0
    assert f1 == pytest.approx(2 / 3)


def test_uic_empty_prediction():
    assert uic_scores([], [["x"], []]) == (1.0, 1.0)
    assert uic_scores([], [["x"]]) == (0.0, 0.0)
    assert uic_scores(["x"], [[]]) == (0.0, 0.0)


# --- SQA-UIC-BB -----------------------------------------------------------------------------------


def test_iou():
    assert iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0
    assert iou([0, 0, 0, 10], [0, 0, 0, 10]) == 0.0  # degenerate


def el(text, *bounds):
    return Element(text, tuple(float(b) for b in bounds))


def test_bb_threshold_is_inclusive_at_one_tenth():
    # given boxes with IoU exactly 0.1: [0,0,10,10] and [0,0,100,10] (inter 100, union 1000)
    gold = [[el("a", 0, 0, 100, 10)]]
    # then they match, and F1 counts the match (it does not weigh it by its IoU)
    assert uic_bb_scores([el("a", 0, 0, 10, 10)], gold) == (1.0, 1.0, 1.0)
    # and just below it nothing matches
    assert uic_bb_scores([el("a", 0, 0, 9, 10)], gold) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("scores", "matches"),
    [
        ([[0.05]], 0),  # one pair, under the threshold
        ([[0.05, 0.5]], 1),  # one row
        ([[0.05], [0.05]], 0),  # one column, nothing valid
        ([[0.5, 0.05], [0.05, 0.5]], 2),  # valid pairs in their own rows and columns
        ([[0.5, 0.05], [0.05, 0.09]], 1),  # one of them under the threshold
        ([[0.5, 0.4], [0.3, 0.05]], 2),  # the assignment decides
        ([[0.5, 0.5], [0.05, 0.05]], 1),  # two valid pairs in one row: one match
        ([[0.1, 0.1], [0.1, 0.05]], 2),  # the assignment's pairs exactly at the threshold count
    ],
)
def test_matched_pairs_count_only_pairs_at_or_above_the_threshold(scores, matches):
    assert matched_pairs(scores, 0.1) == matches


def test_matched_pairs_at_a_threshold_of_zero_count_every_assigned_pair():
    # every pair scores >= 0: the assignment's pairs all count, overlapping or not (as the reference)
    assert matched_pairs([[0.0]], 0.0) == 1
    assert matched_pairs([[0.0, 0.0], [0.0, 0.3]], 0.0) == 2


def test_bb_hungarian_matching_is_one_to_one_and_maximises_matches():
    # given two predicted boxes; the first overlaps both raters' boxes, the second only the first.
    rater = [el("x", 0, 0, 10, 10), el("y", 20, 0, 30, 10)]
    predicted = [el("y", 5, 0, 25, 10), el("x", 0, 0, 9, 10)]
    # a greedy match of predicted[0] to the first box (IoU 1/5 vs 1/5 tie) could strand predicted[1];
    # the assignment pairs predicted[0] with rater[1] and predicted[1] with rater[0]
    box_f1, em, f1 = uic_bb_scores(predicted, [rater])
    assert box_f1 == 1.0
    # EM needs the pairs in order: predicted[0] ("y") vs rater[0] ("x") differs
    assert em == 0.0
    # F1: pairs with equal texts and IoU >= 0.1 count, y-y (IoU 0.2) and x-x (0.9): two matches of two
    assert f1 == 1.0


def test_bb_the_largest_total_iou_wins_over_more_pairs():
    # given p0 that fits r0 perfectly (IoU 1) and just touches r1 (IoU 1/9), and p1 that overlaps
    # only r0 (IoU 0.2): the largest total IoU (p0-r0 alone, 1.0 > 1/9 + 0.2) leaves p1 unmatched
    rater = [el("a", 0, 0, 100, 10), el("b", 80, 0, 180, 10)]
    predicted = [el("a", 0, 0, 100, 10), el("c", 0, 0, 20, 10)]
    # when matched one to one
    box_f1, em, f1 = uic_bb_scores(predicted, [rater])
    # then, as the release's code does, one match: P = R = 1/2 (two pairs were possible)
    assert box_f1 == pytest.approx(0.5)
    assert em == 0.0  # texts differ in order
    # and the text-aware F1: only "a"-"a" can score -> P = R = 1/2
    assert f1 == pytest.approx(0.5)


def test_bb_a_tie_between_assignments_is_broken_as_scipy_breaks_it():
    # given IoUs [[1/2, 2/3], [0, 1/6]]: p0-r0 + p1-r1 = 2/3 = p0-r1 alone, two optimal assignments
    predicted = [el("a", 4, 0, 7, 1), el("a", 0, 0, 5, 1)]
    rater = [el("a", 5, 0, 8, 1), el("a", 4, 0, 6, 1)]
    assert 0.5 + 1 / 6 == 2 / 3
    # then the count is the one linear_sum_assignment's choice gives (one pair), as in the release
    assert uic_bb_scores(predicted, [rater]) == (0.5, 1.0, 0.5)


def test_bb_exact_match_and_best_over_raters():
    predicted = [el("Sale", 0, 0, 100, 40)]
    raters = [[el("Sale", 500, 500, 600, 540)], [el("Sale", 2, 1, 100, 41)]]
    box_f1, em, f1 = uic_bb_scores(predicted, raters)
    assert (box_f1, em, f1) == (1.0, 1.0, 1.0)
    assert iou([0, 0, 100, 40], [2, 1, 100, 41]) < 1


def test_bb_inverted_and_zero_area_boxes_match_nothing():
    inverted, flat = el("a", 10, 10, 0, 0), el("a", 0, 0, 0, 10)
    assert iou(inverted.bounds, inverted.bounds) == 0.0
    assert uic_bb_scores([inverted], [[inverted]]) == (0.0, 0.0, 0.0)
    assert uic_bb_scores([flat], [[flat]]) == (0.0, 0.0, 0.0)


def test_bb_empty_lists():
    assert uic_bb_scores([], [[el("a", 0, 0, 1, 1)], []]) == (1.0, 1.0, 1.0)
    assert uic_bb_scores([], [[el("a", 0, 0, 1, 1)]]) == (0.0, 0.0, 0.0)
    assert uic_bb_scores([el("a", 0, 0, 1, 1)], [[]]) == (0.0, 0.0, 0.0)


# --- SQA-L ----------------------------------------------------------------------------------------


def test_rouge_is_the_packages_best_over_raters():
    from rouge_score import rouge_scorer

    references = ["You are protected from unauthorized transactions.", "Unauthorized transactions."]
    prediction = "You are protected from fraud."
    expected = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    best = {
        name: max(expected.score(ref, prediction)[name].fmeasure for ref in references)
        for name in ("rouge1", "rouge2", "rougeL")
    }
    assert rouge_scores(prediction, references) == pytest.approx(best)
    assert rouge_scores(prediction, references)["rouge1"] == pytest.approx(2 * 0.8 * (4 / 6) / (0.8 + 4 / 6))
    assert rouge_scores("x", []) == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}


# --- ANLS -----------------------------------------------------------------------------------------


def test_levenshtein():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("abc", "abc") == 0


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("abc", "", 3),
        ("a", "b", 1),  # one substitution
        ("ab", "ba", 2),  # no transposition: two substitutions
        ("flaw", "lawn", 2),  # a deletion and an insertion
        ("gumbo", "gambol", 2),
        ("sunday", "saturday", 3),
        ("abcdef", "azced", 3),
        ("book", "back", 2),
    ],
)
def test_levenshtein_counts_each_edit_once_in_either_order(a, b, distance):
    assert levenshtein(a, b) == levenshtein(b, a) == distance


def test_anls_case_insensitive_and_thresholded():
    assert anls_score("TRANSMIT CONFIRMATION REPORT", ["transmit confirmation report"]) == 1.0
    # one edit in 8 characters: 1 - 1/8
    assert anls_score("12/15/89", ["12/15/88"]) == pytest.approx(7 / 8)
    # NL >= 0.5 scores 0
    assert anls_score("abcd", ["abxy"]) == 0.0
    assert anls_score("abcd", ["abcx", "zzzz"]) == pytest.approx(0.75)
    # surrounding whitespace ignored, inner spaces count
    assert anls_score("  12/15/88 ", ["12/15/88"]) == 1.0
    assert anls_score("12/15 /88", ["12/15/88"]) == pytest.approx(1 - 1 / 9)


def test_anls_edges():
    # two empty texts are identical; one character apart is a whole edit (NL = 1)
    assert anls_score("", [""]) == 1.0
    assert anls_score("  ", ["", "x"]) == 1.0
    assert anls_score("a", ["b"]) == 0.0
    assert anls_score("a", []) == 0.0
    # lower case, as the official script: "ß" stays one letter (upper case would make it "SS")
    assert anls_score("straße", ["strasse"]) == pytest.approx(1 - 2 / 7)
    assert anls_score("x", []) == 0.0
