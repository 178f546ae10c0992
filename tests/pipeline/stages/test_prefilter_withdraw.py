"""Pre-filtering under quality control: a stopped judge's judgments are withdrawn (kept for the
record, counted nowhere), what they decided is decided again (screens, app languages, the
questions the app's language dropped), and a lead who reinstates the judge brings back what
nobody redid."""

from __future__ import annotations

import pytest

from annotation.models import (
    App,
    AssignmentStatus,
    PausedWork,
    PrefilterJudgment,
    Question,
    QuestionState,
    ScreenState,
)
from pipeline.engine import app_language_list, app_mark_non_english, assignment_next, assignment_submit
from pipeline.quality.standing import standing_act
from pipeline.stages.prefilter import prefilter_settled
from tests.pipeline.quality.builders import rule_pause
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db

OK = {"non_english_app": False, "vh_out_of_sync": False, "note": ""}


def judge(project, user, **flags):
    lease = assignment_next(project=project, user=user, stage="prefilter")
    assert lease is not None
    return assignment_submit(assignment_id=lease.pk, user=user, data={**OK, **flags})


def state_of(screen):
    screen.refresh_from_db()
    return (screen.state, screen.exclusion_reason, screen.excluded_from)


@pytest.fixture
def spammed(project):
    """A judge (``sam``) whose word alone decided screens of four apps (one judgment per screen):

    * app A: two screens judged non-English, so the app rule made A non-English: its third screen
      (never judged) and a screen whose question was being answered were excluded with it;
    * app B: one screen judged out of sync (excluded), one judged fine that waits for its pass-1
      writer, who holds a lease on it;
    * app C: one screen judged fine whose pass-1 questions are written (further along);
    * app D: one screen judged fine, then a lead marked D non-English.
    """
    sam, wes, lead = member(project, "sam"), member(project, "wes"), member(project, "lead", role="lead")
    a1, a2, a3 = screens(project, 3)
    app_a = a1.app
    a4 = screens(project, 1, app=app_a, state=ScreenState.ANSWERING, split="train")[0]
    asked = answering_question(a4, author=wes, text="What does label 1 say?")
    (c1,) = screens(project, 1)
    b1, b2 = screens(project, 2)
    (d1,) = screens(project, 1)
    # the queue is oldest first: a1, a2 (then A is non-English: a3 leaves the queue), c1, b1, b2, d1
    judge(project, sam, non_english_app=True)
    judge(project, sam, non_english_app=True)
    assert App.objects.get(pk=app_a.pk).language_set_by == "rule"
    judge(project, sam)
    judge(project, sam, vh_out_of_sync=True)
    judge(project, sam)
    judge(project, sam)
    writing = assignment_next(project=project, user=wes, stage="questions-1")
    assert writing.screen_id == c1.pk
    assignment_submit(assignment_id=writing.pk, user=wes, data={"questions": ["What is label 2?"]})
    held = assignment_next(project=project, user=wes, stage="questions-1")
    assert held.screen_id == b2.pk
    app_mark_non_english(project=project, package=d1.app.package)
    before = {s.pk: state_of(s) for s in (a1, a2, a3, a4, b1, b2, c1, d1)}
    assert before == {
        a1.pk: ("excluded", "non_english", ""),
        a2.pk: ("excluded", "non_english", ""),
        a3.pk: ("excluded", "non_english", "prefilter"),
        a4.pk: ("excluded", "non_english", "answering"),
        b1.pk: ("excluded", "vh_out_of_sync", ""),
        b2.pk: ("questions-1", "", ""),
        c1.pk: ("questions-2", "", ""),
        d1.pk: ("excluded", "non_english", "questions-1"),
    }
    assert Question.objects.get(pk=asked.pk).drop_reason == "non-english-app"
    return {
        "sam": sam,
        "wes": wes,
        "lead": lead,
        "screens": {"a1": a1, "a2": a2, "a3": a3, "a4": a4, "b1": b1, "b2": b2, "c1": c1, "d1": d1},
        "asked": asked,
        "held": held,
        "apps": {"A": app_a, "D": d1.app},
    }


def test_a_stopped_judges_work_is_withdrawn_and_what_it_decided_is_undone(
    project, spammed, django_capture_on_commit_callbacks
):
    s = spammed["screens"]
    # when a monitoring rule pauses the judge (the app-language check runs once the pause commits)
    with django_capture_on_commit_callbacks(execute=True):
        event = rule_pause(project, spammed["sam"], "prefilter")
    # then the pause withdrew their six judgments, which stay for the record
    assert event.figures["withdrawn"] == 6
    judgments = PrefilterJudgment.objects.filter(annotator=spammed["sam"])
    assert judgments.count() == 6
    assert set(judgments.values_list("withdrawn_reason", "withdrawn_by")) == {("withdrawn", event.pk)}
    # and app A, which the rule made non-English on their votes alone, is undecided again: its
    # screens are back where they were (the ones they judged back in pre-filtering), and the
    # question its language dropped is answered again
    app_a = App.objects.get(pk=spammed["apps"]["A"].pk)
    assert (app_a.non_english, app_a.language_set_by) == (False, "")
    assert [state_of(s[k]) for k in ("a1", "a2", "a3")] == [("prefilter", "", "")] * 3
    assert state_of(s["a4"]) == ("answering", "", "")
    asked = Question.objects.get(pk=spammed["asked"].pk)
    assert (asked.state, asked.drop_reason) == (QuestionState.ANSWERING, "")
    # and the screen they excluded, and the one waiting for its pass-1 writer on their word, are
    # back in pre-filtering (the writer's lease ended)
    assert state_of(s["b1"]) == ("prefilter", "", "")
    assert state_of(s["b2"]) == ("prefilter", "", "")
    spammed["held"].refresh_from_db()
    assert spammed["held"].status == AssignmentStatus.EXPIRED
    # and the screen whose questions are written stays where it is
    assert state_of(s["c1"]) == ("questions-2", "", "")
    # and the lead's decision on app D stands; its screen will come back to pre-filtering, not to
    # the question passes, if the lead ever declares D English
    app_d = App.objects.get(pk=spammed["apps"]["D"].pk)
    assert (app_d.non_english, app_d.language_set_by) == (True, "lead")
    assert state_of(s["d1"]) == ("excluded", "non_english", "prefilter")
    app_mark_non_english(project=project, package=app_d.package, english=True)
    assert state_of(s["d1"]) == ("prefilter", "", "")
    # and their votes count nowhere: the lead's app list, the queue (their places are free again)
    votes = {row.package: (row.judged, row.judged_non_english) for row in app_language_list(project=project)}
    assert votes[app_a.package] == (0, 0)
    again = member(project, "jo")
    assert judge(project, again).screen_id == s["a1"].pk
    assert state_of(s["a1"]) == ("questions-1", "", "")


def test_a_project_that_keeps_paused_work_keeps_the_judgments(project, spammed, django_capture_on_commit_callbacks):
    project.paused_work = PausedWork.KEEP
    project.save()
    with django_capture_on_commit_callbacks(execute=True):
        event = rule_pause(project, spammed["sam"], "prefilter")
    assert "withdrawn" not in event.figures
    assert not PrefilterJudgment.objects.exclude(withdrawn_reason="").exists()
    assert App.objects.get(pk=spammed["apps"]["A"].pk).non_english
    assert state_of(spammed["screens"]["b1"]) == ("excluded", "vh_out_of_sync", "")


def test_with_several_judges_only_decisions_that_rested_on_the_withdrawn_judgment_are_reopened(
    project, django_capture_on_commit_callbacks
):
    # given three judges per screen, and two screens judged by ann, bob and sam
    project.prefilter_judgments = 3
    project.save()
    ann, bob, sam, carl = (member(project, n) for n in ("ann", "bob", "sam", "carl"))
    settled, open_ = screens(project, 2)
    for user, flags_settled, flags_open in (
        (ann, {}, {}),
        (bob, {}, {"vh_out_of_sync": True}),
        (sam, {"non_english_app": True}, {"vh_out_of_sync": True}),
    ):
        assert judge(project, user, **flags_settled).screen_id == settled.pk
        assert judge(project, user, **flags_open).screen_id == open_.pk
    assert state_of(settled) == ("questions-1", "", "")  # 2 of 3 fine
    assert state_of(open_) == ("excluded", "vh_out_of_sync", "")  # 2 of 3 out of sync
    # when sam is paused by a rule
    with django_capture_on_commit_callbacks(execute=True):
        rule_pause(project, sam, "prefilter")
    # then the screen whose decision the other two judges force stays; the other, where sam's
    # vote made the majority, waits for a third judge again, and that judge decides it
    assert state_of(settled) == ("questions-1", "", "")
    assert state_of(open_) == ("prefilter", "", "")
    assert judge(project, carl).screen_id == open_.pk
    assert state_of(open_) == ("questions-1", "", "")
    assert assignment_next(project=project, user=member(project, "dan"), stage="prefilter") is None


def test_a_lead_who_reinstates_the_judge_brings_back_what_nobody_redid(project, django_capture_on_commit_callbacks):
    # given a judge who excluded two screens as out of sync, paused by a rule (both screens back
    # in pre-filtering), and another judge who judged one of them again meanwhile
    sam, jo, lead = member(project, "sam"), member(project, "jo"), member(project, "lead", role="lead")
    first, second = screens(project, 2)
    judge(project, sam, vh_out_of_sync=True)
    judge(project, sam, vh_out_of_sync=True)
    with django_capture_on_commit_callbacks(execute=True):
        rule_pause(project, sam, "prefilter")
    assert judge(project, jo).screen_id == first.pk
    # when a lead reinstates the judge
    with django_capture_on_commit_callbacks(execute=True):
        standing_act(project=project, user_id=sam.pk, stage="prefilter", action="reinstate", actor=lead)
    # then the judgment nobody redid counts again and decides its screen; the other stays withdrawn
    # (jo's judgment decided that screen), and the lead's event says so
    assert state_of(second) == ("excluded", "vh_out_of_sync", "")
    assert state_of(first) == ("questions-1", "", "")
    counting = PrefilterJudgment.objects.filter(annotator=sam, withdrawn_reason="")
    assert list(counting.values_list("screen_id", flat=True)) == [second.pk]
    reinstated = sam.quality_events.latest("pk")
    assert reinstated.rule == "lead-reinstate"
    assert (reinstated.figures["restored"], reinstated.figures["redone"]) == (1, 1)


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ((0, 0, 0, 1), None),  # no judgment left of one: anything can happen
        ((0, 2, 2, 3), "vh_out_of_sync"),  # 2 of 3 already
        ((0, 0, 2, 3), ""),  # at most 1 of 3 can follow
        ((0, 1, 2, 3), None),  # the missing judge decides
        ((2, 0, 2, 3), "non_english"),
    ],
)
def test_a_decision_is_settled_when_the_missing_judgments_cannot_change_it(votes, expected):
    ne, oos, n, needed = votes
    settled = prefilter_settled(votes_non_english=ne, votes_out_of_sync=oos, judgments=n, needed=needed)
    assert settled == expected
