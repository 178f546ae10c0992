"""Issue 20, 2(b): the order work is served in tells an annotator nothing.

Tried as an attacker would: served oldest first, the screen (or question) ids an annotator
received climbed steadily, so a control item (a gold screen from elsewhere in the project) broke
the sequence and could be picked out. The queues are now claimed from a random pivot over a
random ``queue_key``: the real sequence is not monotone, and the statistics an attacker reads
from the order (does an item break the order of the one before? is it lower than all of the last
few?) come out alike for real and control items.

These tests run the real shuffled order (``shuffled_queue``), on whichever database the suite
runs on (the embedded SQLite default or PostgreSQL).
"""

from __future__ import annotations

import itertools
import random

import pytest

from annotation.models import GoldItem, Purpose, ScreenState, Standing, StandingStatus
from pipeline.engine import assignment_next, assignment_submit
from tests.pipeline.quality.builders import RIGHT
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = [pytest.mark.django_db, pytest.mark.shuffled_queue]


def _descents(ids: list[int]) -> float:
    """The fraction of items whose id is below the one served just before: about 1/2 in a random
    order, 0 in a steady one."""
    return sum(b < a for a, b in itertools.pairwise(ids)) / (len(ids) - 1)


def test_the_real_queue_is_not_served_in_a_steady_order(project):
    # given 60 screens waiting for question writing, and 60 writers
    made = screens(project, 60, state=ScreenState.QUESTIONS_1, candidates=1)
    writers = [member(project, f"w{k}") for k in range(60)]
    # when each writer in turn asks for work
    got = [assignment_next(project=project, user=w, stage="questions-1").screen_id for w in writers]
    # then every screen is served once, and in an order that neither climbs nor falls
    assert sorted(got) == sorted(s.pk for s in made)
    assert 0.25 <= _descents(got) <= 0.75, got


def test_the_answers_queue_is_not_served_in_a_steady_order(project):
    # given 40 questions waiting for an answer, and 40 answerers
    questions = [answering_question(s) for s in screens(project, 40, candidates=1)]
    answerers = [member(project, f"a{k}") for k in range(40)]
    # when each asks for work in turn
    got = [assignment_next(project=project, user=a, stage="answers").question_id for a in answerers]
    # then each question is served once, in no steady order
    assert sorted(got) == sorted(q.pk for q in questions)
    assert 0.25 <= _descents(got) <= 0.75, got


def test_a_control_item_cannot_be_picked_out_by_the_order(project):
    # given 300 screens imported together, 30 of them already judged and kept as gold (so gold ids
    # come from the same range as the work's), and an active judge drawing control items often
    imported = screens(project, 300, candidates=0)
    for screen in random.Random(20).sample(imported, 30):
        screen.state = ScreenState.QUESTIONS_1
        screen.save(update_fields=["state"])
        GoldItem.objects.create(project=project, stage="prefilter", screen=screen, answer=dict(RIGHT))
    project.control_rate = project.control_rate_new = 0.25
    project.save(update_fields=["control_rate", "control_rate_new"])
    judge = member(project, "judge")
    Standing.objects.create(project=project, user=judge, stage="prefilter", status=StandingStatus.ACTIVE)
    # when the judge works through 200 items, answering everything right
    served: list[tuple[int, bool]] = []
    for _ in range(200):
        lease = assignment_next(project=project, user=judge, stage="prefilter")
        assert lease is not None
        served.append((lease.screen_id, lease.purpose != Purpose.WORK))
        assignment_submit(assignment_id=lease.pk, user=judge, data={**RIGHT, "note": ""})
    ids = [screen_id for screen_id, _ in served]
    controls = [k for k, (_, control) in enumerate(served) if control and k >= 5]
    real = [k for k, (_, control) in enumerate(served) if not control and k >= 5]
    assert len(controls) >= 15, len(controls)  # enough control items to compare
    # then the real work comes in no steady order
    assert 0.3 <= _descents([ids[k] for k in range(len(ids)) if not served[k][1]]) <= 0.7
    # and an attacker's order statistics flag control items about as often as real ones:
    # "lower than the item before" (1/2 for both) and "lower than all of the last 5" (1/6)
    for flagged in (lambda k: ids[k] < ids[k - 1], lambda k: ids[k] < min(ids[k - 5 : k])):
        on_controls = sum(map(flagged, controls)) / len(controls)
        on_real = sum(map(flagged, real)) / len(real)
        assert abs(on_controls - on_real) <= 0.3, (on_controls, on_real)
