"""The adversarial crowd (devtools/adversary.py) at its tiny size, over HTTP against a live server on
PostgreSQL: the invariants quality control holds today (docs/quality.md, "Proof: an adversarial
crowd"). What it does not hold yet is reported by the benchmark, not asserted here."""

from __future__ import annotations

import json

import pytest

from devtools.adversary import SIZES, adversarial_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_adversarial_crowd_holds_todays_invariants(live_server):
    out = adversarial_run(base_url=live_server.url, slug="adv-tiny", size=SIZES["tiny"], seed=0)
    print(json.dumps(out, indent=1, sort_keys=True))
    assert out["postprocess"]["started"]
    assert out["gold"]["prefilter"] >= 10 and out["gold"]["answers"] >= 10
