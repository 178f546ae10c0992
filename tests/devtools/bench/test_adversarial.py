"""The adversarial crowd (devtools/adversary.py) at its tiny size, over HTTP against a live server on
PostgreSQL: pre-filtering with two careful judges, a random one, a sly one and a hit-and-run one,
then the lead starts post-processing. Asserted: the invariants quality control holds today
(docs/quality.md, "Proof: an adversarial crowd"). What it does not hold yet (a constant judge can
pass a qualification set of mostly negative gold; the tell-based skippers; the rubber stamp; the
writing stages) is measured and reported by ``make bench``, not asserted here."""

from __future__ import annotations

import pytest

from devtools.adversary import SIZES, adversarial_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
KINDS = ("careful", "random", "sly", "hit-and-run")


def test_the_adversarial_crowd_holds_todays_invariants(live_server):
    out = adversarial_run(
        base_url=live_server.url, slug="adv-tiny", size=SIZES["tiny"], kinds=KINDS, stages=("prefilter",)
    )
    assert out["gold"]["prefilter"] >= 10
    spammers = out["spammers"]
    # A random judge never passes its qualification set: every item it did was gold
    row = spammers["random"]["prefilter"]
    assert (row["status"], row["stopped_by"], row["items"]) == ("not_qualified", "qualification-failed", 10)
    # The sly and hit-and-run judges qualified honestly, then turned
    for name in ("sly", "hit-and-run"):
        assert spammers[name]["prefilter"]["honest"] >= 10 and spammers[name]["prefilter"]["spam"] > 0
    # No careful judge is paused
    stopped_by = [row["stopped_by"] for row in out["careful"]["paused_rows"]]
    assert out["careful"]["workers_x_stages"] == 2 and out["careful"]["paused"] == 0, stopped_by
    # Post-processing started (once any held-back work was redone), and most of the turned judges' spam
    # no longer counts. Not all of it: a random judgment that happens to be right on a control item
    # confirms the work before it (docs/quality.md, "Proof: an adversarial crowd"), so 0 is not held.
    # (Nothing may be left to hold back: a pause already withdrew the turned judges' work.)
    assert out["postprocess"]["started"]
    spam = sum(spammers[name]["prefilter"]["spam"] for name in ("sly", "hit-and-run"))
    assert out["spam_in_release"]["prefilter_judgments_counting"] <= spam // 2, out["spam_in_release"]
    # each spam judgment that still counts is explained (the worker's control items around it)
    leaks = out["spam_in_release"]["leaks"]
    assert len(leaks) == out["spam_in_release"]["prefilter_judgments_counting"]
    assert all(row["stage"] == "prefilter" and row["worker"] in ("sly", "hit-and-run") for row in leaks), leaks
    # and told apart: what another judge of the screen judged alike, and what counts on the spammer's word
    alone = [row for row in leaks if not row["judged_alike_by_another"] and not row["majority_with"]]
    assert out["spam_in_release"]["uncorroborated"] == len(alone)
    assert sum(out["spam_in_release"]["uncorroborated_wrong_by_worker"].values()) == sum(r["wrong"] for r in alone)
    assert out["provisional_work"] == "evidence"
    assert out["next_ms"]["n"] > 50


def test_the_rubber_stamp_meets_gold_reviews_and_is_stopped_by_them(live_server):
    # given a spam writer whose first sets are all reviewed, and a lead who reviews some honestly and makes
    # them gold reviews before the rubber stamp's first review
    out = adversarial_run(
        base_url=live_server.url,
        slug="adv-review",
        size=SIZES["tiny"],
        kinds=("careful", "spam-writer", "rubber-stamp"),
        stages=("prefilter", "questions-1", "review"),
    )
    assert out["gold"]["review"] >= 1
    # then the reviewer who accepts everything is stopped by the gold reviews (its qualification set, or
    # the control reviews after it), within 20 items
    row = out["spammers"]["rubber-stamp"]["review"]
    assert row["stopped"] and row["stopped_by"] in ("qualification-failed", "control-accuracy"), row
    assert row["items"] <= 20, row
