"""The per-example rules of each official metric (FORMATS.md section 3), one hand-made case each."""

from __future__ import annotations

import pytest

from pipeline.metrics.anls import anls_score, levenshtein
from pipeline.metrics.rouge import rouge_scores
from pipeline.metrics.squad import normalize_answer, squad_scores
from pipeline.metrics.uic import Element, iou, uic_bb_scores, uic_scores

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
    assert squad_scores("<<<no answer>>>", ["<no answer>"]) == (1.0, 1.0)
    assert squad_scores("<no answer>", ["off", "disabled"]) == (0.0, 0.0)


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
    assert uic_bb_scores([el("a", 0, 0, 10, 10)], gold) == (1.0, 1.0, pytest.approx(0.1))
    # and just below it nothing matches
    assert uic_bb_scores([el("a", 0, 0, 9, 10)], gold) == (0.0, 0.0, 0.0)


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
    # F1: pairs worth their IoU when the texts match: y-y (5/25 = 0.2) and x-x (0.9)
    soft = 0.2 + 0.9
    assert f1 == pytest.approx(soft / 2)


def test_bb_more_pairs_beat_more_iou():
    # given p0 that fits r0 perfectly (IoU 1) and just touches r1 (IoU 1/9), and p1 that overlaps
    # only r0 (IoU 0.2): the largest total IoU (p0-r0 alone) leaves p1 unmatched
    rater = [el("a", 0, 0, 100, 10), el("b", 80, 0, 180, 10)]
    predicted = [el("a", 0, 0, 100, 10), el("c", 0, 0, 20, 10)]
    # when matched one to one
    box_f1, em, f1 = uic_bb_scores(predicted, [rater])
    # then the number of pairs comes first: p0-r1 and p1-r0, box F1 = 1
    assert box_f1 == 1.0
    assert em == 0.0  # texts differ in order
    # and the text-aware F1 uses its own assignment: only "a"-"a" can score, IoU 1 -> P = R = 1/2
    assert f1 == pytest.approx(0.5)


def test_bb_exact_match_and_best_over_raters():
    predicted = [el("Sale", 0, 0, 100, 40)]
    raters = [[el("Sale", 500, 500, 600, 540)], [el("Sale", 2, 1, 100, 41)]]
    box_f1, em, f1 = uic_bb_scores(predicted, raters)
    assert (box_f1, em) == (1.0, 1.0)
    assert f1 == pytest.approx(iou([0, 0, 100, 40], [2, 1, 100, 41]))


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
    assert anls_score("x", []) == 0.0
