"""What the stages report to the layer above them (Django signals, sent inside the stage's transaction).

A stage never imports quality control (``pyproject.toml``, the layers contract), yet some of what a stage
does moves someone's standing: a review decides a writer's qualification by review. The review stage
sends these; ``pipeline.quality.receivers`` (connected when Django starts, ``pipeline.apps``) acts on them.

* ``review_recorded``: a review now stands on ``reviewed`` (a new one, or a withdrawn one restored);
  arguments ``reviewed`` (the reviewed submission, an ``Assignment``) and ``now``.
* ``reviews_withdrawn``: reviews were withdrawn from submissions; ``withdrawn`` is a list of
  ``(reviewed submission, when the review was made)`` and ``now``.
"""

from django.dispatch import Signal

review_recorded = Signal()
reviews_withdrawn = Signal()
