"""The monitoring rule's sequential test (pipeline/quality/sequential.py): pure functions, so the
properties the issue asks for are checked exactly, and by simulation where they are statistical."""

from __future__ import annotations

import math
import random

import pytest

from pipeline.quality.sequential import SequentialTest

TEST = SequentialTest(bar=0.95, bound=5.0)


def test_hypotheses_come_from_the_bar():
    assert TEST.good == pytest.approx(0.97) and TEST.bad == pytest.approx(0.80)
    assert TEST.llr(True) == pytest.approx(math.log(0.80 / 0.97))
    assert TEST.llr(False) == pytest.approx(math.log(0.20 / 0.03))
    assert not SequentialTest(bar=1.0, bound=5).on and not SequentialTest(bar=0.0, bound=5).on
    assert not SequentialTest(bar=1.0, bound=5).pauses(100)


@pytest.mark.parametrize("bar", [0.0, 1.0])
def test_a_test_that_is_off_keeps_no_evidence_and_never_divides_by_zero(bar):
    # a bar of 1 (the settings allow it) makes a good annotator's error rate 0: a wrong item's ratio
    # would divide by it, and every control submission of the project would fail
    test = SequentialTest(bar=bar, bound=5.0)
    assert test.step(0.0, False) == 0.0 and test.step(3.0, False) == 0.0 and test.step(3.0, True) == 0.0
    assert test.run([False] * 10) == 0.0


def test_one_or_two_slips_of_a_good_worker_never_pause_them():
    for slips in ([False], [False, False], [True] * 40 + [False, False]):
        assert not TEST.pauses(TEST.run(slips)), slips


def test_three_wrong_in_a_row_pause_even_after_a_long_honest_record():
    # the floor at zero: 500 right answers bank no credit against what comes next
    honest = TEST.run([True] * 500)
    assert honest == 0.0
    assert TEST.pauses(TEST.run([False, False, False], honest))
    # from the first control item on: no minimum count, no free errors
    assert TEST.pauses(TEST.run([False, False, False]))


def test_just_under_and_at_the_bound():
    two = TEST.run([False, False])
    assert not TEST.pauses(two)
    assert SequentialTest(bar=0.95, bound=two).pauses(two)  # at the bound: paused
    assert not SequentialTest(bar=0.95, bound=two + 1e-9).pauses(two)


def test_evidence_drifts_down_for_a_worker_at_the_bar_and_up_below_it():
    def drift(p: float) -> float:
        return p * TEST.llr(True) + (1 - p) * TEST.llr(False)

    assert drift(0.97) < 0 and drift(0.95) < 0  # good workers and workers at the bar clear
    assert drift(0.85) > 0 and drift(0.25) > 0  # bad ones accumulate evidence


def _controls_to_pause(p: float, rng: random.Random, limit: int = 10_000) -> int | None:
    evidence = 0.0
    for n in range(1, limit + 1):
        evidence = TEST.step(evidence, rng.random() < p)
        if TEST.pauses(evidence):
            return n
    return None


def test_by_simulation_careful_workers_are_rarely_paused_and_random_ones_fast():
    rng = random.Random(20)
    # a careful worker (3% slips) over 40 control items (200 items at the first items' 20% rate)
    paused = sum(_controls_to_pause(0.97, rng, limit=40) is not None for _ in range(4000)) / 4000
    assert paused < 0.02
    # a random judge of two yes/no judgments (25% right) is paused within a handful of control items
    taken = sorted(_controls_to_pause(0.25, rng) or 10**9 for _ in range(2000))
    assert taken[len(taken) // 2] <= 4 and taken[int(len(taken) * 0.95)] <= 6


@pytest.mark.parametrize("bar", [0.75, 0.6])
def test_a_bar_so_low_that_h1_is_never_right_makes_a_right_answer_clear_everything(bar):
    # H1's accuracy is 0 (1 - 4 x (1 - bar) <= 0): a right answer is impossible under it
    test = SequentialTest(bar=bar, bound=5.0)
    assert test.bad == 0.0
    assert test.llr(True) == -math.inf
    assert test.step(4.9, True) == 0.0
