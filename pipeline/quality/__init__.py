"""Quality control (docs/quality.md): qualification, control items and the rules that pause an
annotator, review outcomes, gold items, and the figures leads and annotators see.

* ``standing``: an annotator's standing per stage, what their next lease is (real work, a
  qualification item, a control item), what each submission does to it, the lead's actions;
* ``gold``: making gold items (promoted work, an imported release, a lead's own) and picking one;
* ``selectors``: the figures of the quality pages;
* ``consensus``: agreement with the majority on validation/test questions, Dawid–Skene over
  several pre-filtering judgments per screen;
* ``release``: the quality-control section of a release's manifest.
"""
