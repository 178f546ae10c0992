"""The monitoring rule: a sequential test on control items (docs/quality.md, "Monitoring").

Page's CUSUM, i.e. Wald's sequential probability ratio test restarted at zero whenever the evidence
clears, between two accuracies derived from the project's bar ``monitoring_threshold`` (the papers'
95%):

* H0, a good annotator: accuracy ``good = 1 - 0.6 (1 - bar)`` (97% for a bar of 95%);
* H1, a bad one: accuracy ``bad = 1 - 4 (1 - bar)`` (80%).

Each control item adds its log-likelihood ratio to the annotator's evidence ``S`` (a right one
``log(bad/good)`` < 0, a wrong one ``log((1-bad)/(1-good))`` > 0), and ``S`` never goes below 0:

    S <- max(0, S + llr)        pause when S >= monitoring_evidence (default 5.0)

What that gives, and why it replaces a rolling accuracy over a short window:

* evidence accumulates from the first control item: there is no minimum number of items before the
  rule can act, so no free errors to bank at the start (a random spammer's four wrong answers in a
  row are +7.6: paused);
* one slip of a good worker (+1.9) never pauses them, nor two in a row (+3.8); three wrong within a
  few items do. At a 97% accuracy the chance of a pause over 200 items is about 1-2% (the benchmark
  measures it: docs/quality.md);
* the floor at 0 keeps a long honest record from banking credit: a worker who turns bad late is
  judged on what they do from then on (a sly spammer at 25% accuracy is paused after 3 or 4 control
  items; one at 60% after about 8);
* while ``S > 0`` (recent control items speak against the annotator) the control rate rises to
  ``control_rate_alert``, so the evidence is settled within a few items either way.

A skipped, released or expired control item counts as wrong (``pipeline.quality.standing``), so
leaving a suspected control item is no escape. The functions here are pure: no queries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

GOOD_ERROR_SHARE = 0.6  # H0's error rate, as a share of the bar's
BAD_ERROR_FACTOR = 4.0  # H1's error rate, as a multiple of the bar's


@dataclass(frozen=True)
class SequentialTest:
    """The CUSUM of one project's settings: ``bar`` (``monitoring_threshold``) and ``bound``
    (``monitoring_evidence``)."""

    bar: float
    bound: float

    @property
    def good(self) -> float:
        return 1 - GOOD_ERROR_SHARE * (1 - self.bar)

    @property
    def bad(self) -> float:
        return max(0.0, 1 - BAD_ERROR_FACTOR * (1 - self.bar))

    @property
    def on(self) -> bool:
        """A bar of 0 (nothing is below it) or 1 (nothing is above it) leaves no test to run."""
        return 0 < self.bar < 1

    def llr(self, correct: bool) -> float:
        """One control item's log-likelihood ratio, H1 against H0."""
        good, bad = self.good, self.bad
        if correct:
            return math.log(bad / good) if bad > 0 else -math.inf
        return math.log((1 - bad) / (1 - good))

    def step(self, evidence: float, correct: bool) -> float:
        """The evidence after one more control item (always 0 when the test is off: with a bar of 1 a
        good annotator's error rate is 0, and a wrong item's ratio would divide by it)."""
        if not self.on:
            return 0.0
        return max(0.0, evidence + self.llr(correct))

    def run(self, outcomes: Iterable[bool], evidence: float = 0.0) -> float:
        """The evidence after ``outcomes`` (oldest first)."""
        for correct in outcomes:
            evidence = self.step(evidence, correct)
        return evidence

    def pauses(self, evidence: float) -> bool:
        return self.on and evidence >= self.bound


def sequential_test(project: object) -> SequentialTest:
    """The test of ``project`` (its ``monitoring_threshold`` and ``monitoring_evidence``)."""
    return SequentialTest(bar=float(project.monitoring_threshold), bound=float(project.monitoring_evidence))  # type: ignore[attr-defined]
