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


@pytest.mark.django_db
def test_a_new_projects_seed_is_random_so_an_annotator_cannot_compute_the_splits():
    # given two projects created as a site admin creates them, without a seed
    from annotation.services.projects import project_create
    from tests.factories import UserFactory

    admin = UserFactory(is_superuser=True)
    first = project_create(user=admin, slug="first", name="First")
    second = project_create(user=admin, slug="second", name="Second")
    # then neither has the seed written in the code (which anyone can read), nor do they share one
    assert len({first.split_seed, second.split_seed, "screenqa"}) == 3
    assert all(len(p.split_seed) == 32 for p in (first, second))
    # so the code's seed guesses a screen's validation/test split no better than the shares do: an annotator
    # cannot find the train questions (one answer each, which nobody else's answer checks) to spam them
    ids = [str(i) for i in range(4000)]
    guessed = [split_for(project=Project(slug="first", split_seed="screenqa"), rico_id=i) for i in ids]
    real = [split_for(project=first, rico_id=i) for i in ids]
    checked = [i for i, split in enumerate(guessed) if split != "train"]
    hits = sum(real[i] != "train" for i in checked) / len(checked)
    assert hits == pytest.approx(0.2, abs=0.06)
    # and the seed given at creation is kept (a split reproduced on purpose)
    assert project_create(user=admin, slug="third", name="Third", split_seed="screenqa").split_seed == "screenqa"
