"""Answer matching, nDCG_v and item F1 (paper v1, 2.3.1-2.3.3)."""

from __future__ import annotations

import math

import pytest

from pipeline.metrics.matching import (
    answer_match,
    answer_matching_best,
    char_tokens,
    item_f1,
    ndcg_v,
    word_tokens,
)

PAPER_A = ["AB", "B", "BB", "CBA"]
PAPER_AG = ["AB", "BC", "AB"]


def test_paper_worked_example_with_character_tokens():
    # given the paper's example, where each capital letter is a word token
    # when matched character by character
    hits = answer_match(PAPER_A, PAPER_AG, tokenize=char_tokens)
    # then the hits are the paper's
    assert hits == ([1, 0, 1, 1], [1, 1, 0])


def test_paper_worked_example_with_single_letter_words():
    # given the same example written as real text with one-letter words
    predicted = ["A B", "B", "B B", "C B A"]
    ground_truth = ["A B", "B C", "A B"]
    # when matched with the default word tokenizer
    hits = answer_match(predicted, ground_truth)
    # then the hits are the paper's too
    assert hits == ([1, 0, 1, 1], [1, 1, 0])


def test_paper_example_scores():
    # given the paper's hits [1,0,1,1] / [1,1,0]
    # then nDCG_v = (1/log2 2 + 1/log2 4 + 1/log2 5) / (1/log2 2 + 1/log2 3 + 1/log2 4)
    dcg = 1 + 1 / math.log2(4) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_v(PAPER_A, PAPER_AG, tokenize=char_tokens) == pytest.approx(dcg / idcg)
    # and F1 = 2PR/(P+R) with P = 3/4 and R = 2/3
    p, r = 3 / 4, 2 / 3
    assert item_f1(PAPER_A, PAPER_AG, tokenize=char_tokens) == pytest.approx(2 * p * r / (p + r))


def test_word_tokens_normalise_case_and_punctuation():
    assert word_tokens("  Deep Squat, 3 sets — 15x! ") == ["deep", "squat", "3", "sets", "15x"]
    assert word_tokens("1,000,000") == ["1000000"]
    assert word_tokens("...") == []


def test_segmentation_difference_still_scores_one():
    # given a rater who selected one element and a model that returned it in two pieces
    predicted = ["Deep Squat", "3 sets, 15x"]
    ground_truth = ["Deep Squat, 3 sets, 15x"]
    # when matched
    # then every item is a hit and both metrics are perfect (nDCG_v is clamped to 1)
    assert answer_match(predicted, ground_truth) == ([1, 1], [1])
    assert ndcg_v(predicted, ground_truth) == 1.0
    assert item_f1(predicted, ground_truth) == 1.0


def test_match_is_case_and_punctuation_insensitive_but_word_exact():
    assert answer_match(["Free Shipping!"], ["free shipping"]) == ([1], [1])
    # a partial word is not a hit ("ship" is not a token of "shipping")
    assert answer_match(["shipping"], ["ship"]) == ([0], [0])


def test_matched_run_is_removed_so_duplicates_need_duplicates():
    # given a ground truth that names the same text twice
    # when the prediction holds it once, the second is a miss
    assert answer_match(["Sale"], ["Sale", "Sale"]) == ([1], [1, 0])
    # and when it holds it twice, both hit
    assert answer_match(["Sale", "Sale"], ["Sale", "Sale"]) == ([1, 1], [1, 1])


def test_no_match_across_a_removed_run():
    # given A^c = "x y z" and the ground truth "y" first, then "x z"
    # when "y" is removed, "x" and "z" end up in different segments
    assert answer_match(["x y z"], ["y", "x z"]) == ([1], [1, 0])


def test_a_run_is_found_after_a_false_start():
    # the run's first word occurs earlier, followed by something else
    assert answer_match(["a a b"], ["a b"]) == ([1], [1])
    assert answer_match(["x a y a b"], ["a b"]) == ([1], [1])
    # and occurs again at the last place a run could start, still followed by something else
    assert answer_match(["a b a c"], ["a d"]) == ([0], [0])


def test_every_segment_is_searched_and_kept():
    # after "b" is removed, A^c is "a" | "c d": "c" is found in the second segment
    assert answer_match(["a b c"], ["b", "c"]) == ([1], [1, 1])
    # and removing "a" from the first segment keeps the second
    assert answer_match(["a b c d"], ["b", "a", "d"]) == ([1], [1, 1, 1])


def test_a_ground_truth_item_without_words_does_not_stop_the_others():
    assert answer_match(["Male"], ["!!!", "Male"]) == ([1], [0, 1])


def test_no_hit_at_all_scores_zero():
    assert item_f1(["x"], ["y"]) == 0.0
    assert ndcg_v(["x"], ["y"]) == 0.0


def test_half_precision_and_half_recall_is_half():
    # precision + recall = 1 is an ordinary case, not "nothing found"
    assert item_f1(["a", "x"], ["a", "y"]) == pytest.approx(0.5)


def test_the_best_over_raters_uses_the_tokenizer_given():
    # "a b" and "ab" are the same characters, not the same words
    assert answer_matching_best(["a b"], [["ab"]], tokenize=char_tokens) == (1.0, 1.0)
    assert answer_matching_best(["a b"], [["ab"]]) == (0.0, 0.0)


def test_wrong_order_is_penalised_by_ndcg_not_f1():
    # given a single relevant item predicted at position 3 instead of 1
    predicted = ["a1", "a2", "answer"]
    ground_truth = ["answer"]
    # then nDCG_v = 1/log2(4) = 0.5 (the paper's own example) and F1 = 2*(1/3)*1/(1/3+1)
    assert ndcg_v(predicted, ground_truth) == pytest.approx(0.5)
    assert item_f1(predicted, ground_truth) == pytest.approx(0.5)


def test_empty_lists():
    # both empty: a not-answerable question answered with nothing
    assert ndcg_v([], []) == 1.0
    assert item_f1([], []) == 1.0
    # one of them empty
    assert ndcg_v(["x"], []) == 0.0
    assert item_f1(["x"], []) == 0.0
    assert ndcg_v([], ["x"]) == 0.0
    assert item_f1([], ["x"]) == 0.0
    # an empty or punctuation-only ground-truth item is a miss, never a free hit
    assert answer_match(["x"], ["", "!!"]) == ([0], [0, 0])


def test_best_over_raters_takes_each_maximum_independently():
    # given a rater who wants only "a" and one who wants "a", "x" and "w"
    predicted = ["a", "x"]
    raters = [["a"], ["a", "x", "w"]]
    # when the best over raters is taken
    best_ndcg, best_f1 = answer_matching_best(predicted, raters)
    # then nDCG_v comes from the first rater (1.0) and F1 from the second (P=1, R=2/3)
    assert best_ndcg == 1.0
    assert best_f1 == pytest.approx(0.8)
    # and no raters scores zero
    assert answer_matching_best(["a"], []) == (0.0, 0.0)
