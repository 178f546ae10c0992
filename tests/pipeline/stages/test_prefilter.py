"""Pre-filtering: judgments, majority with N judges, exclusion reasons, non-English apps."""

from __future__ import annotations

import pytest

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import AssignmentStatus, PrefilterJudgment, ScreenState
from pipeline.stages import app_mark_non_english, assignment_next, assignment_submit
from pipeline.stages.prefilter import prefilter_decide
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db

OK = {"non_english_app": False, "vh_out_of_sync": False, "note": ""}


def judge(project, user, **flags):
    lease = assignment_next(project=project, user=user, stage="prefilter")
    assert lease is not None
    return assignment_submit(assignment_id=lease.pk, user=user, data={**OK, **flags})


@pytest.mark.parametrize(
    ("flags", "state", "reason"),
    [
        ({}, ScreenState.QUESTIONS_1, ""),
        ({"non_english_app": True}, ScreenState.EXCLUDED, "non_english"),
        ({"vh_out_of_sync": True}, ScreenState.EXCLUDED, "vh_out_of_sync"),
        ({"non_english_app": True, "vh_out_of_sync": True}, ScreenState.EXCLUDED, "non_english"),
    ],
)
def test_one_judgment_decides(project, flags, state, reason):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    judge(project, a, note="menu over content", **flags)
    screen.refresh_from_db()
    assert (screen.state, screen.exclusion_reason) == (state, reason)
    judgment = PrefilterJudgment.objects.get(screen=screen)
    assert judgment.note == "menu over content" and judgment.annotator == a


def test_majority_of_three_judges(project):
    # given a project asking three judgments per screen
    project.prefilter_judgments = 3
    project.save()
    judges = [member(project, n) for n in ("a", "b", "c", "d")]
    (screen,) = screens(project, 1)
    # when two of three say out of sync
    judge(project, judges[0], vh_out_of_sync=True)
    judge(project, judges[1])
    screen.refresh_from_db()
    assert screen.state == ScreenState.PREFILTER  # still waiting for the third
    judge(project, judges[2], vh_out_of_sync=True)
    # then the screen is excluded, and a fourth judge finds nothing
    screen.refresh_from_db()
    assert (screen.state, screen.exclusion_reason) == (ScreenState.EXCLUDED, "vh_out_of_sync")
    assert assignment_next(project=project, user=judges[3], stage="prefilter") is None


def test_one_judge_never_judges_a_screen_twice(project):
    project.prefilter_judgments = 2
    project.save()
    a = member(project, "a")
    screens(project, 1)
    judge(project, a)
    assert assignment_next(project=project, user=a, stage="prefilter") is None


def test_ties_exclude():
    assert prefilter_decide(votes_non_english=1, votes_out_of_sync=0, judgments=2) == "non_english"
    assert prefilter_decide(votes_non_english=0, votes_out_of_sync=1, judgments=2) == "vh_out_of_sync"
    assert prefilter_decide(votes_non_english=1, votes_out_of_sync=1, judgments=3) == ""
    assert prefilter_decide(votes_non_english=0, votes_out_of_sync=0, judgments=1) == ""


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"non_english_app": "no", "vh_out_of_sync": False}, "non_english_app"),
        ({"non_english_app": False}, "vh_out_of_sync"),
        ({**OK, "note": 3}, "note"),
        ({**OK, "colour": "red"}, "colour"),
    ],
)
def test_bad_bodies_name_the_field_and_change_nothing(project, body, field):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    lease = assignment_next(project=project, user=a, stage="prefilter")
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=body)
    assert err.value.field == field
    lease.refresh_from_db()
    screen.refresh_from_db()
    assert lease.status == AssignmentStatus.LEASED and screen.state == ScreenState.PREFILTER
    assert not PrefilterJudgment.objects.exists()


def test_lead_marks_an_app_non_english(project):
    # given an app with a screen waiting (leased by A), one waiting free, one already further along
    a = member(project, "a")
    waiting_leased, waiting_free = screens(project, 2)
    further = screens(project, 1, state=ScreenState.QUESTIONS_1, app=waiting_leased.app)[0]
    lease = assignment_next(project=project, user=a, stage="prefilter")
    assert lease.screen_id == waiting_leased.pk
    # when the lead marks the app non-English
    result = app_mark_non_english(project=project, package=waiting_leased.app.package)
    # then the waiting screens are excluded, the one further along is reported and left alone
    assert result == {
        "app": waiting_leased.app.package,
        "non_english": True,
        "excluded": 2,
        "further_along": {"questions-1": 1},
    }
    for screen in (waiting_leased, waiting_free):
        screen.refresh_from_db()
        assert (screen.state, screen.exclusion_reason) == (ScreenState.EXCLUDED, "non_english")
    further.refresh_from_db()
    assert further.state == ScreenState.QUESTIONS_1
    # and A's late judgment is refused with its content kept as a draft
    with pytest.raises(ConflictError):
        assignment_submit(assignment_id=lease.pk, user=a, data=OK)
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.EXPIRED and lease.draft == OK
    # and marking again changes nothing
    assert app_mark_non_english(project=project, package=waiting_leased.app.package)["excluded"] == 0


def test_unknown_app_is_not_found(project):
    with pytest.raises(NotFoundError):
        app_mark_non_english(project=project, package="com.nowhere")


def test_queue_is_oldest_first_and_skips_non_english_apps(project):
    a = member(project, "a")
    first, second = screens(project, 2)
    other_app_screen = screens(project, 1)[0]
    other_app_screen.app.non_english = True
    other_app_screen.app.save()
    assert assignment_next(project=project, user=a, stage="prefilter").screen_id == first.pk
    assert assignment_next(project=project, user=member(project, "b"), stage="prefilter").screen_id == second.pk
    assert assignment_next(project=project, user=member(project, "c"), stage="prefilter") is None
