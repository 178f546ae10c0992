"""Draws that an annotator must not be able to compute: a number in [0, 1) fixed by its parts and
keyed by the site's secret (``SECRET_KEY``, HMAC-SHA-256).

A sample decided by a plain hash of something the annotator sees (an assignment's id is in every
``next`` payload) is a sample the annotator can compute before working: a writer who knows which of
their submissions review will sample writes well on those and junk on the rest. Keyed by the secret,
the draw is still reproducible (the same in every process and on every retry of a submit) but
nobody without the secret can tell it from chance. Every sample of the pipeline that checks work
draws here; draws of a shared truth (a scripted crowd's) or of what every annotator sees alike (a
unit shown without a suggestion) need no secret.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from django.conf import settings


def secret_draw(*parts: Any) -> float:
    """A number in [0, 1) fixed by ``parts`` and the site's secret."""
    message = "\x1f".join(str(p) for p in parts).encode()
    digest = hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
