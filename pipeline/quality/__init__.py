"""Quality control (docs/quality.md): qualification, control items and the rules that pause an
annotator, review outcomes, gold items, and the figures leads and annotators see.

* ``standing``: an annotator's standing per stage, what their next lease is (real work, a
  qualification item, a control item), what each submission does to it, the lead's actions;
* ``gold``: making gold items (promoted work, an imported release, a lead's own) and picking one;
* ``report``: the figures of the lead's quality pages and API.
* ``consensus``: agreement with the majority on validation/test questions, Dawid–Skene over
  several pre-filtering judgments per screen;
* ``release``: the quality-control section of a release's manifest.
"""

# The stage engine imports this package's modules and they import the stage registry: load the
# stages first, so that importing ``pipeline.quality.gold`` (a command, a test) before anything
# else does not meet a half-initialised module.
import pipeline.stages  # noqa: F401
