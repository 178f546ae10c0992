"""annotation/draws.py: a draw an annotator cannot compute, fixed by its parts and the site's secret."""

from __future__ import annotations

import hashlib

from annotation.draws import secret_draw


def test_a_draw_is_fixed_by_its_parts_and_the_secret_and_spread_over_zero_to_one(settings):
    draws = [secret_draw("review", n) for n in range(2000)]
    assert draws == [secret_draw("review", n) for n in range(2000)]  # every process, every retry
    assert all(0.0 <= d < 1.0 for d in draws)
    assert 0.45 < sum(d < 0.5 for d in draws) / len(draws) < 0.55
    # the parts are kept apart: ("review", 12) is not ("review1", 2)
    assert secret_draw("review", 12) != secret_draw("review1", 2)
    # and not the plain hash of what the annotator sees
    plain = int.from_bytes(hashlib.sha256(b"review\x1f12").digest()[:8], "big") / 2**64
    assert secret_draw("review", 12) != plain
    settings.SECRET_KEY = "another site"
    assert [secret_draw("review", n) for n in range(50)] != draws[:50]
