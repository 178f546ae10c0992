"""Split: deterministic, seeded, by screen, with the project's ratios."""

from __future__ import annotations

from collections import Counter

import pytest

from annotation.models import Project
from pipeline.engine import split_for


def test_same_inputs_same_split_and_ratios_hold():
    project = Project(slug="p", split_seed="screenqa")
    splits = [split_for(project=project, rico_id=str(i)) for i in range(20_000)]
    assert splits == [split_for(project=project, rico_id=str(i)) for i in range(20_000)]
    shares = {k: v / len(splits) for k, v in Counter(splits).items()}
    assert shares["train"] == pytest.approx(0.8, abs=0.01)
    assert shares["validation"] == pytest.approx(0.1, abs=0.01)
    assert shares["test"] == pytest.approx(0.1, abs=0.01)


def test_seed_and_ratios_change_the_split():
    base = Project(slug="p", split_seed="screenqa")
    other_seed = Project(slug="p", split_seed="other")
    ids = [str(i) for i in range(500)]
    assert [split_for(project=base, rico_id=i) for i in ids] != [split_for(project=other_seed, rico_id=i) for i in ids]
    all_test = Project(slug="p", split_seed="screenqa", split_train=0, split_validation=0, split_test=100)
    assert {split_for(project=all_test, rico_id=i) for i in ids} == {"test"}
