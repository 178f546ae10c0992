"""Pre-filtering under quality control: a stopped judge's judgments are withdrawn (kept for the
record, counted nowhere), what they decided is decided again (screens, app languages, the
questions the app's language dropped), and a lead who reinstates the judge brings back what
nobody redid."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.db import compiled
from annotation.models import (
    App,
    Assignment,
    AssignmentStatus,
    PausedWork,
    PrefilterJudgment,
    Question,
    QuestionState,
    ScreenState,
)
from pipeline.engine import app_language_list, app_mark_non_english, assignment_next, assignment_submit, stage_get
from pipeline.quality.standing import standing_act
from pipeline.stages.prefilter import (
    app_language_recheck,
    judgments_restore,
    judgments_withdraw,
    prefilter_settled,
)
from tests.factories import MembershipFactory, ProjectFactory
from tests.pipeline.quality.builders import rule_pause
from tests.pipeline.stages.helpers import answering_question, member, prefilter_control_record, screens

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _queue_compiled_afresh():
    """Every test compiles the pre-filtering claim and its fresh re-check itself
    (``annotation.db.compiled`` keeps a statement per process: a cached one runs none of ``queue``, and
    mutation testing would map the queue to the first test alone; docs/mutation.md, "A trap")."""
    for key in (("claim", ("prefilter", "from")), ("claim", "prefilter"), ("exists", ("still-open", "prefilter"))):
        compiled.forget(("first", key))


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


@pytest.mark.parametrize(
    ("votes", "language", "expected"),
    [
        ((0, 1, 2, 2), True, "vh_out_of_sync"),  # all judged: nothing missing
        ((1, 0, 3, 2), True, ""),  # more judgments than needed: 1 of 3
        ((0, 0, 2, 2), False, ""),  # the language votes do not count...
        ((2, 0, 2, 2), False, ""),
        ((2, 0, 2, 3), False, ""),  # ...nor could a missing one's
        ((2, 0, 2, 3), True, "non_english"),
        ((1, 2, 2, 3), True, None),  # out of sync by 2 of 3, unless the missing judge makes non-English 2 of 3
        ((1, 2, 2, 3), False, "vh_out_of_sync"),  # ...whose vote does not count
    ],
)
def test_a_decision_is_settled_by_the_judgments_that_count(votes, language, expected):
    ne, oos, n, needed = votes
    settled = prefilter_settled(
        votes_non_english=ne, votes_out_of_sync=oos, judgments=n, needed=needed, language=language
    )
    assert settled == expected


def withdraw(judgments, capture):
    with capture(execute=True):
        return judgments_withdraw(judgments, reason="withdrawn", now=timezone.now())


def test_withdrawing_reports_what_moved_and_holds_the_non_english_apps_screens(project, spammed):
    s = spammed["screens"]
    mine = PrefilterJudgment.objects.filter(annotator=spammed["sam"])
    # when the judge's judgments are withdrawn (before the app-language check, which runs on commit)
    moved = judgments_withdraw(mine, reason="withdrawn", now=timezone.now())
    # then five screens go back (those of a non-English app held excluded, from pre-filtering) and
    # the one whose questions are written stays
    assert moved == {"withdrawn": 6, "screens_requeued": 5, "screens_further_along": 1}
    assert [state_of(s[k]) for k in ("a1", "a2", "d1")] == [("excluded", "non_english", "prefilter")] * 3
    assert [state_of(s[k]) for k in ("b1", "b2")] == [("prefilter", "", "")] * 2
    assert state_of(s["c1"]) == ("questions-2", "", "")
    # and withdrawing again finds nothing left to withdraw
    again = judgments_withdraw(mine, reason="withdrawn", now=timezone.now())
    assert again == {"withdrawn": 0, "screens_requeued": 0, "screens_further_along": 0}


def test_rechecking_app_languages_restores_and_excludes_by_the_rule(project, spammed):
    apps = spammed["apps"]
    judgments_withdraw(
        PrefilterJudgment.objects.filter(annotator=spammed["sam"]), reason="withdrawn", now=timezone.now()
    )
    app_ids = [apps["A"].pk, apps["D"].pk]
    # the rule's app A no longer meets the rule; the lead's app D stands; checking twice changes nothing
    assert app_language_recheck(project_id=project.pk, app_ids=app_ids) == {
        "restored": [apps["A"].package],
        "excluded": [],
    }
    assert app_language_recheck(project_id=project.pk, app_ids=app_ids) == {"restored": [], "excluded": []}
    # brought back, the judgments make A non-English again
    PrefilterJudgment.objects.filter(annotator=spammed["sam"]).update(withdrawn_reason="")
    assert app_language_recheck(project_id=project.pk, app_ids=app_ids) == {
        "restored": [],
        "excluded": [apps["A"].package],
    }
    assert App.objects.filter(pk=apps["A"].pk, non_english=True, language_set_by="rule").exists()
    # and another project's check does not reach its apps
    PrefilterJudgment.objects.filter(annotator=spammed["sam"]).update(withdrawn_reason="withdrawn")
    other = ProjectFactory(slug="other")
    assert app_language_recheck(project_id=other.pk, app_ids=app_ids) == {"restored": [], "excluded": []}


def test_a_withdrawn_judgment_on_a_screen_its_app_holds_moves_nothing(project, django_capture_on_commit_callbacks):
    # given two judges per screen, a screen judged once, then excluded with its app by a lead
    project.prefilter_judgments = 2
    project.save()
    sam = member(project, "sam")
    (screen,) = screens(project, 1)
    judge(project, sam)
    app_mark_non_english(project=project, package=screen.app.package)
    # when the judgment is withdrawn: the screen is neither requeued nor further along
    moved = withdraw(PrefilterJudgment.objects.all(), django_capture_on_commit_callbacks)
    assert moved == {"withdrawn": 1, "screens_requeued": 0, "screens_further_along": 0}
    assert state_of(screen) == ("excluded", "non_english", "prefilter")


def test_with_three_judges_a_leads_english_outweighs_the_language_votes_also_once_one_is_withdrawn(
    project, django_capture_on_commit_callbacks
):
    # given three judges per screen, and an app a lead declared English
    project.prefilter_judgments = 3
    project.save()
    (screen,) = screens(project, 1)
    app_mark_non_english(project=project, package=screen.app.package, english=True)
    ann, bob, sam = member(project, "ann"), member(project, "bob"), member(project, "sam")
    # when two of three judges say non-English: the screen goes on to the question passes
    judge(project, ann)
    judge(project, bob, non_english_app=True)
    judge(project, sam, non_english_app=True)
    assert state_of(screen) == ("questions-1", "", "")
    # when sam's judgment is withdrawn: the two left force that decision (language votes do not count)
    moved = withdraw(PrefilterJudgment.objects.filter(annotator=sam), django_capture_on_commit_callbacks)
    assert moved == {"withdrawn": 1, "screens_requeued": 0, "screens_further_along": 0}
    assert state_of(screen) == ("questions-1", "", "")


def test_a_withdrawn_judgment_leaves_its_place_to_a_lease_that_ran_out(project, django_capture_on_commit_callbacks):
    # given a judge whose lease ran out (reclaimed), and another who judged the screen meanwhile, withdrawn
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    late = assignment_next(project=project, user=a, stage="prefilter")
    Assignment.objects.filter(pk=late.pk).update(
        status=AssignmentStatus.EXPIRED, lease_expires_at=timezone.now() - timedelta(minutes=1)
    )
    judge(project, b, vh_out_of_sync=True)
    withdraw(PrefilterJudgment.objects.filter(annotator=b), django_capture_on_commit_callbacks)
    assert state_of(screen) == ("prefilter", "", "")
    # then the late judgment is accepted and decides the screen
    assignment_submit(assignment_id=late.pk, user=a, data=OK)
    assert state_of(screen) == ("questions-1", "", "")


def test_a_review_rejection_withdraws_the_judgment_and_its_reversal_brings_it_back(
    project, django_capture_on_commit_callbacks
):
    # given a screen excluded as out of sync by one judge, and (a decoy) another judgment withdrawn
    a, b = member(project, "a"), member(project, "b")
    (decoy,) = screens(project, 1)
    (screen,) = screens(project, 1)
    judge(project, b)
    done = judge(project, a, vh_out_of_sync=True)
    assert done.screen_id == screen.pk
    withdraw(PrefilterJudgment.objects.filter(annotator=b), django_capture_on_commit_callbacks)
    stage = stage_get("prefilter")
    # when a reviewer rejects the judgment: it is withdrawn as rejected, its screen decided again
    with django_capture_on_commit_callbacks(execute=True):
        stage.review_rejected(reviewed=done, reason="sync", now=timezone.now())
    assert PrefilterJudgment.objects.get(assignment=done).withdrawn_reason == "review-rejected"
    assert state_of(screen) == ("prefilter", "", "")
    # when the rejection is reverted: the judgment counts again and decides its screen (the decoy stays)
    with django_capture_on_commit_callbacks(execute=True):
        assert stage.review_reverted(reviewed=done, now=timezone.now()) == {"restored": 1, "redone": 0}
    assert state_of(screen) == ("excluded", "vh_out_of_sync", "")
    assert PrefilterJudgment.objects.get(screen=decoy).withdrawn_reason == "withdrawn"


def test_withdrawing_some_assignments_of_a_judge_in_one_project(project, django_capture_on_commit_callbacks):
    # given a judge's two judgments, and (a decoy) their judgment in another project
    sam = member(project, "sam")
    first, second = screens(project, 2)
    one = judge(project, sam)
    judge(project, sam)
    other = ProjectFactory(slug="other")
    MembershipFactory(project=other, user=sam)
    screens(other, 1)
    judge(other, sam)
    stage = stage_get("prefilter")
    # when quality control withdraws one assignment's judgment, then all of this project's
    with django_capture_on_commit_callbacks(execute=True):
        assert stage.withdraw(project=project, user=sam, requeue=False, now=timezone.now(), assignments=[one.pk]) == 1
    withdrawn = PrefilterJudgment.objects.exclude(withdrawn_reason="")
    assert list(withdrawn.values_list("assignment_id", flat=True)) == [one.pk]
    assert (state_of(first), state_of(second)) == (("prefilter", "", ""), ("questions-1", "", ""))
    with django_capture_on_commit_callbacks(execute=True):
        assert stage.withdraw(project=project, user=sam, requeue=True, now=timezone.now()) == 1
    # then the other project's judgment still counts
    assert list(PrefilterJudgment.objects.filter(withdrawn_reason="").values_list("screen__project", flat=True)) == [
        other.pk
    ]


def test_restoring_a_pause_brings_back_only_what_that_pause_withdrew(project, django_capture_on_commit_callbacks):
    # given a judge whose judgment on one screen a reviewer rejected, whose judgment on another a
    # pause withdrew, and (a decoy) whose judgment in another project the same pause names
    sam = member(project, "sam")
    rejected, paused = screens(project, 2)
    reviewed = judge(project, sam, vh_out_of_sync=True)
    judge(project, sam, vh_out_of_sync=True)
    other = ProjectFactory(slug="other")
    MembershipFactory(project=other, user=sam)
    (elsewhere,) = screens(other, 1)
    judge(other, sam, vh_out_of_sync=True)
    stage = stage_get("prefilter")
    with django_capture_on_commit_callbacks(execute=True):
        stage.review_rejected(reviewed=reviewed, reason="sync", now=timezone.now())
        event = rule_pause(project, sam, "prefilter")
    PrefilterJudgment.objects.filter(screen=elsewhere).update(withdrawn_reason="withdrawn", withdrawn_by=event)
    # when the pause is undone
    with django_capture_on_commit_callbacks(execute=True):
        assert stage.restore(project=project, user=sam, event=event, now=timezone.now()) == {"restored": 1, "redone": 0}
    # then only the pause's judgment in this project counts again
    counting = PrefilterJudgment.objects.filter(withdrawn_reason="").values_list("screen_id", flat=True)
    assert list(counting) == [paused.pk]
    assert state_of(paused) == ("excluded", "vh_out_of_sync", "")
    assert state_of(rejected) == ("prefilter", "", "")


def test_restoring_counts_other_judges_live_leases_and_one_judgment_per_place(
    project, django_capture_on_commit_callbacks
):
    # given sam's withdrawn judgments on four screens: one another judge holds now, one ann judged
    # again (withdrawn too), two of an app a lead marked non-English since (sam said one is out of sync)
    sam, ann, jo = member(project, "sam"), member(project, "ann"), member(project, "jo")
    taken, twice = screens(project, 2)
    out_of_sync, fine = screens(project, 2)
    for flags in ({}, {}, {"vh_out_of_sync": True}, {}):
        judge(project, sam, **flags)
    withdraw(PrefilterJudgment.objects.filter(annotator=sam), django_capture_on_commit_callbacks)
    assert assignment_next(project=project, user=jo, stage="prefilter").screen_id == taken.pk
    assert judge(project, ann).screen_id == twice.pk
    withdraw(PrefilterJudgment.objects.filter(annotator=ann), django_capture_on_commit_callbacks)
    app_mark_non_english(project=project, package=fine.app.package)
    # when all are brought back
    with django_capture_on_commit_callbacks(execute=True):
        done = judgments_restore(PrefilterJudgment.objects.all(), now=timezone.now())
    # then the held screen's judgment stays withdrawn, one of the twice-judged screen's two comes
    # back and decides it, and the judgments on the app's screens come back and decide where they would go
    assert done == {"restored": 3, "redone": 2}
    assert PrefilterJudgment.objects.get(screen=taken).withdrawn_reason == "withdrawn"
    assert PrefilterJudgment.objects.filter(screen=twice, withdrawn_reason="").count() == 1
    assert state_of(taken) == ("prefilter", "", "")
    assert state_of(twice) == ("questions-1", "", "")
    assert state_of(out_of_sync) == ("excluded", "vh_out_of_sync", "")
    assert state_of(fine) == ("excluded", "non_english", "questions-1")
    # and restoring again brings back nothing
    again = judgments_restore(PrefilterJudgment.objects.filter(screen=out_of_sync), now=timezone.now())
    assert again == {"restored": 0, "redone": 0}


def test_restored_language_votes_do_not_outweigh_a_leads_english(project, django_capture_on_commit_callbacks):
    sam = member(project, "sam")
    (screen,) = screens(project, 1)
    judge(project, sam, non_english_app=True)
    withdraw(PrefilterJudgment.objects.all(), django_capture_on_commit_callbacks)
    app_mark_non_english(project=project, package=screen.app.package, english=True)
    with django_capture_on_commit_callbacks(execute=True):
        assert judgments_restore(PrefilterJudgment.objects.all(), now=timezone.now()) == {"restored": 1, "redone": 0}
    assert state_of(screen) == ("questions-1", "", "")


def test_withdrawing_reopens_a_lead_english_apps_screen_counts_every_screen_further_along_and_ends_only_its_writer(
    project, django_capture_on_commit_callbacks
):
    # given sam's word alone sent four screens on: two whose pass-1 questions are written, one of an
    # app a lead declared English (its pass-1 writer holds it); ann's judgment sent a fifth on, and
    # vic holds that one for pass 1
    sam, ann, wes, vic = (member(project, n) for n in ("sam", "ann", "wes", "vic"))
    c1, c2 = screens(project, 2)
    (e1,) = screens(project, 1)
    (o1,) = screens(project, 1)
    app_mark_non_english(project=project, package=e1.app.package, english=True)
    assert [judge(project, sam).screen_id for _ in range(3)] == [c1.pk, c2.pk, e1.pk]
    assert judge(project, ann).screen_id == o1.pk
    for screen in (c1, c2):
        writing = assignment_next(project=project, user=wes, stage="questions-1")
        assert writing.screen_id == screen.pk
        assignment_submit(assignment_id=writing.pk, user=wes, data={"questions": ["What is label 2?"]})
    held = assignment_next(project=project, user=wes, stage="questions-1")
    decoy = assignment_next(project=project, user=vic, stage="questions-1")
    assert (held.screen_id, decoy.screen_id) == (e1.pk, o1.pk)
    # when sam's judgments are withdrawn
    moved = withdraw(PrefilterJudgment.objects.filter(annotator=sam), django_capture_on_commit_callbacks)
    # then the English app's screen (no judgment counts: nothing is forced, even with its language
    # votes ignored) waits for a judge again and its writer's lease ends; both screens with questions
    # stay and are both reported; ann's screen and vic's lease are untouched
    assert moved == {"withdrawn": 3, "screens_requeued": 1, "screens_further_along": 2}
    assert [state_of(s) for s in (c1, c2, e1, o1)] == [
        ("questions-2", "", ""),
        ("questions-2", "", ""),
        ("prefilter", "", ""),
        ("questions-1", "", ""),
    ]
    held.refresh_from_db()
    decoy.refresh_from_db()
    assert (held.status, decoy.status) == (AssignmentStatus.EXPIRED, AssignmentStatus.LEASED)


def test_a_leads_english_sends_each_screen_its_language_excluded_where_its_own_judges_put_it(project):
    # given sam judged two screens of app X non-English (one also out of sync), so the rule made X
    # non-English: its unjudged screen and the one whose question was being answered were excluded
    # with it; and app Y, whose question is also dropped, a lead marked non-English
    sam, wes = member(project, "sam"), member(project, "wes")
    x1, x2, x3 = screens(project, 3)
    x4 = screens(project, 1, app=x1.app, state=ScreenState.ANSWERING, split="train")[0]
    asked = answering_question(x4, author=wes)
    y1 = screens(project, 1, state=ScreenState.ANSWERING, split="train")[0]
    decoy = answering_question(y1, author=wes)
    judge(project, sam, non_english_app=True, vh_out_of_sync=True)
    judge(project, sam, non_english_app=True)
    app_mark_non_english(project=project, package=y1.app.package)
    assert [state_of(s) for s in (x1, x2, x3, x4)] == [
        ("excluded", "non_english", ""),
        ("excluded", "non_english", ""),
        ("excluded", "non_english", "prefilter"),
        ("excluded", "non_english", "answering"),
    ]
    # when a lead declares X English
    done = app_mark_non_english(project=project, package=x1.app.package, english=True)
    # then the screen its judges found out of sync stays excluded for that, the other goes on to
    # pass 1, the others return to the states they left, and so does X's question (not Y's)
    assert [state_of(s) for s in (x1, x2, x3, x4)] == [
        ("excluded", "vh_out_of_sync", ""),
        ("questions-1", "", ""),
        ("prefilter", "", ""),
        ("answering", "", ""),
    ]
    assert (done["restored"], done["questions_restored"]) == (3, 1)
    asked.refresh_from_db()
    decoy.refresh_from_db()
    assert (asked.state, asked.drop_reason, asked.dropped_from) == (QuestionState.ANSWERING, "", "")
    assert (decoy.state, decoy.drop_reason) == (QuestionState.DROPPED, "non-english-app")


def test_with_three_judges_two_language_votes_left_keep_a_screen_excluded_in_an_undecided_app(
    project, django_capture_on_commit_callbacks
):
    # given three judges said one screen's app is non-English, one of them also out of sync (one
    # screen: the app stays undecided)
    project.prefilter_judgments = 3
    project.save()
    ann, bob, sam = (member(project, n) for n in ("ann", "bob", "sam"))
    (screen,) = screens(project, 1)
    for user, out_of_sync in ((ann, False), (bob, True), (sam, False)):
        judge(project, user, non_english_app=True, vh_out_of_sync=out_of_sync)
    assert state_of(screen) == ("excluded", "non_english", "")
    # when sam's judgment is withdrawn, the two language votes left still force the decision (were
    # they ignored, the missing third judge could make it out of sync or not)
    moved = withdraw(PrefilterJudgment.objects.filter(annotator=sam), django_capture_on_commit_callbacks)
    assert moved == {"withdrawn": 1, "screens_requeued": 0, "screens_further_along": 0}
    assert state_of(screen) == ("excluded", "non_english", "")
    assert App.objects.get(pk=screen.app_id).language_set_by == ""


def test_restoring_fills_a_screens_free_places_one_judgment_each(project, django_capture_on_commit_callbacks):
    # given two judgments per screen: ann and bob judged both screens, and both were withdrawn
    # (both screens back in pre-filtering); carl judged the second screen again since
    project.prefilter_judgments = 2
    project.save()
    ann, bob, carl = (member(project, name) for name in ("ann", "bob", "carl"))
    empty, half = screens(project, 2)
    for user in (ann, bob):
        assert judge(project, user).screen_id == empty.pk
        assert judge(project, user).screen_id == half.pk
    event = rule_pause(project, ann, "prefilter")
    withdraw(PrefilterJudgment.objects.filter(annotator=bob), django_capture_on_commit_callbacks)
    assert (state_of(empty), state_of(half)) == (("prefilter", "", ""),) * 2
    assert judge(project, carl).screen_id in (empty.pk, half.pk)
    if PrefilterJudgment.objects.filter(annotator=carl, screen=empty).exists():
        empty, half = half, empty
    # when all four are brought back
    with django_capture_on_commit_callbacks(execute=True):
        done = judgments_restore(PrefilterJudgment.objects.exclude(annotator=carl), now=timezone.now())
    # then the screen nobody judged again gets both back, the other one of them (its other place
    # is carl's), and each screen is decided; a judgment brought back no longer names the pause
    assert done == {"restored": 3, "redone": 1}
    assert PrefilterJudgment.objects.filter(screen=empty, withdrawn_reason="").count() == 2
    assert PrefilterJudgment.objects.filter(screen=half, withdrawn_reason="").count() == 2
    assert (state_of(empty), state_of(half)) == (("questions-1", "", ""),) * 2
    assert not PrefilterJudgment.objects.filter(withdrawn_reason="", withdrawn_by=event).exists()
    assert PrefilterJudgment.objects.filter(withdrawn_reason="", withdrawn_by__isnull=True).count() == 4


def test_restored_language_votes_decide_their_screens_and_their_app_again(
    project, spammed, django_capture_on_commit_callbacks
):
    # given the spammer's judgments withdrawn: app A restored, its judged screens back in pre-filtering
    sam, apps, s = spammed["sam"], spammed["apps"], spammed["screens"]
    withdraw(PrefilterJudgment.objects.filter(annotator=sam), django_capture_on_commit_callbacks)
    assert not App.objects.get(pk=apps["A"].pk).non_english
    assert state_of(s["a1"]) == ("prefilter", "", "")
    # when they are brought back (nobody judged those screens since)
    with django_capture_on_commit_callbacks(execute=True):
        judgments_restore(PrefilterJudgment.objects.filter(annotator=sam), now=timezone.now())
    # then the two non-English votes exclude their screens again, and, once the restore commits,
    # the app rule makes A non-English again (its third screen held with it)
    assert state_of(s["a1"]) == ("excluded", "non_english", "")
    assert state_of(s["a2"]) == ("excluded", "non_english", "")
    app = App.objects.get(pk=apps["A"].pk)
    assert (app.non_english, app.language_set_by) == (True, "rule")
    assert state_of(s["a3"]) == ("excluded", "non_english", "prefilter")


def test_a_restored_judgment_on_a_screen_its_app_holds_says_what_its_judges_decided(
    project, django_capture_on_commit_callbacks
):
    # given a judgment of non-English withdrawn (its screen back in pre-filtering), then a lead who
    # marked the app non-English (the screen held excluded, from pre-filtering)
    sam = member(project, "sam")
    (screen,) = screens(project, 1)
    judge(project, sam, non_english_app=True)
    withdraw(PrefilterJudgment.objects.all(), django_capture_on_commit_callbacks)
    app_mark_non_english(project=project, package=screen.app.package)
    assert state_of(screen) == ("excluded", "non_english", "prefilter")
    # when it is brought back
    with django_capture_on_commit_callbacks(execute=True):
        assert judgments_restore(PrefilterJudgment.objects.all(), now=timezone.now()) == {"restored": 1, "redone": 0}
    # then the screen is excluded by its own judge's word as well (not "from pass 1": it never went on)
    assert state_of(screen) == ("excluded", "non_english", "")


def test_with_several_judges_weighed_decisions_are_undone_and_redone_by_the_same_weights(
    project, django_capture_on_commit_callbacks
):
    # given two judges per screen: a sloppy judge (2 of 12 control items right) said non-English,
    # a good one (12 of 12) said all is well: by their weights the screen went on (a plain count
    # would have excluded it on the tie)
    project.prefilter_judgments = 2
    project.save()
    sloppy, good, lead = member(project, "sloppy"), member(project, "good"), member(project, "lead", role="lead")
    prefilter_control_record(project, sloppy, right=2)
    prefilter_control_record(project, good, right=12)
    (screen,) = screens(project, 1)
    judge(project, sloppy, non_english_app=True)
    judge(project, good)
    assert state_of(screen) == ("questions-1", "", "")
    # when the good judge is paused: the sloppy vote alone would force "non-English" by count, but
    # the decision the screen has rested on the withdrawn judgment: it waits for a judge again
    with django_capture_on_commit_callbacks(execute=True):
        rule_pause(project, good, "prefilter")
    assert state_of(screen) == ("prefilter", "", "")
    # and when a lead reinstates the good judge, the judgment comes back and the screen is decided
    # as the submit decided it: by the judges' weights
    with django_capture_on_commit_callbacks(execute=True):
        standing_act(project=project, user_id=good.pk, stage="prefilter", action="reinstate", actor=lead)
    assert state_of(screen) == ("questions-1", "", "")


def test_reverting_a_review_brings_back_only_the_judgment_that_review_rejected(
    project, django_capture_on_commit_callbacks
):
    # given three out-of-sync judgments of sam's: two rejected by reviews, the third withdrawn by a
    # pause of another judge's (bob's) review... by sam's pause, after which its review rejected it too
    sam, writer = member(project, "sam"), member(project, "wes")
    first, second, third = screens(project, 3)
    done = {judge(project, sam, vh_out_of_sync=True).screen_id: None for _ in range(3)}
    by_screen = {a.screen_id: a for a in Assignment.objects.filter(annotator=sam, stage="prefilter")}
    assert set(done) == {first.pk, second.pk, third.pk}
    stage = stage_get("prefilter")
    with django_capture_on_commit_callbacks(execute=True):
        stage.review_rejected(reviewed=by_screen[first.pk], reason="sync", now=timezone.now())
        stage.review_rejected(reviewed=by_screen[second.pk], reason="sync", now=timezone.now())
        withdraw(PrefilterJudgment.objects.filter(screen=third), django_capture_on_commit_callbacks)
        stage.review_rejected(reviewed=by_screen[third.pk], reason="sync", now=timezone.now())
    # when the first review's rejection is reverted, and the third's
    with django_capture_on_commit_callbacks(execute=True):
        assert stage.review_reverted(reviewed=by_screen[first.pk], now=timezone.now()) == {"restored": 1, "redone": 0}
        assert stage.review_reverted(reviewed=by_screen[third.pk], now=timezone.now()) == {"restored": 0, "redone": 0}
    # then only the first judgment counts again: the second is still rejected, and the third stays
    # withdrawn by what withdrew it (not the review's to bring back)
    reasons = dict(PrefilterJudgment.objects.values_list("screen_id", "withdrawn_reason"))
    assert reasons == {first.pk: "", second.pk: "review-rejected", third.pk: "withdrawn"}
    assert writer is not None


def test_a_review_rejection_ends_the_lease_of_the_writer_of_a_screen_sent_back_at_its_time(
    project, django_capture_on_commit_callbacks
):
    # given a screen judged fine whose pass-1 writer holds it
    sam, wes = member(project, "sam"), member(project, "wes")
    (screen,) = screens(project, 1)
    done = judge(project, sam)
    writing = assignment_next(project=project, user=wes, stage="questions-1")
    assert writing.screen_id == screen.pk
    # when a reviewer rejects the judgment
    now = timezone.now() + timedelta(seconds=7)
    with django_capture_on_commit_callbacks(execute=True):
        stage_get("prefilter").review_rejected(reviewed=done, reason="sync", now=now)
    # then the screen waits for a judge again and the writer's lease ended then
    assert state_of(screen) == ("prefilter", "", "")
    writing.refresh_from_db()
    assert (writing.status, writing.updated_at) == (AssignmentStatus.EXPIRED, now)


def test_restoring_a_pause_brings_back_only_its_own_judges_judgments(project, django_capture_on_commit_callbacks):
    # given sam's pause, and (a decoy) bob's withdrawn judgment made to name the same event
    sam, bob = member(project, "sam"), member(project, "bob")
    mine, his = screens(project, 2)
    assert judge(project, sam, vh_out_of_sync=True).screen_id == mine.pk
    assert judge(project, bob, vh_out_of_sync=True).screen_id == his.pk
    with django_capture_on_commit_callbacks(execute=True):
        event = rule_pause(project, sam, "prefilter")
    withdraw(PrefilterJudgment.objects.filter(annotator=bob), django_capture_on_commit_callbacks)
    PrefilterJudgment.objects.filter(annotator=bob).update(withdrawn_by=event)
    # when the pause is undone
    with django_capture_on_commit_callbacks(execute=True):
        done = stage_get("prefilter").restore(project=project, user=sam, event=event, now=timezone.now())
    # then sam's judgment alone comes back
    assert done == {"restored": 1, "redone": 0}
    assert PrefilterJudgment.objects.get(annotator=bob).withdrawn_reason == "withdrawn"
    assert state_of(mine) == ("excluded", "vh_out_of_sync", "")
    assert state_of(his) == ("prefilter", "", "")


def test_a_leads_english_decides_again_a_screen_its_judges_left_undecided_once_one_was_withdrawn(
    project, django_capture_on_commit_callbacks
):
    # given two judges per screen who both said non-English on two screens (sam also said out of
    # sync on the second): the app rule made the app non-English
    project.prefilter_judgments = 2
    project.save()
    sam, bob = member(project, "sam"), member(project, "bob")
    undecided, out_of_sync = screens(project, 2)
    for user in (sam, bob):
        assert judge(project, user, non_english_app=True).screen_id == undecided.pk
        flags = {"vh_out_of_sync": True} if user == sam else {}
        assert judge(project, user, non_english_app=True, **flags).screen_id == out_of_sync.pk
    assert App.objects.get(pk=undecided.app_id).language_set_by == "rule"
    # when bob's judgments are withdrawn: no screen has all its judgments any more, so the rule no
    # longer holds and the app is undecided again; but sam's vote alone still forces "non-English"
    # on both screens (a tie excludes), so both stay excluded by their judges
    withdraw(PrefilterJudgment.objects.filter(annotator=bob), django_capture_on_commit_callbacks)
    app = App.objects.get(pk=undecided.app_id)
    assert (app.non_english, app.language_set_by) == (False, "")
    assert (state_of(undecided), state_of(out_of_sync)) == (("excluded", "non_english", ""),) * 2
    # when a lead declares the app English
    with django_capture_on_commit_callbacks(execute=True):
        app_mark_non_english(project=project, package=undecided.app.package, english=True)
    # then, without the language votes, sam's out-of-sync vote forces that screen out (a tie
    # excludes); the other one's missing judgment could decide it either way: it waits for a judge
    assert state_of(out_of_sync) == ("excluded", "vh_out_of_sync", "")
    assert state_of(undecided) == ("prefilter", "", "")


def test_a_screen_its_judges_excluded_in_an_app_a_lead_made_non_english_stays_theirs(
    project, django_capture_on_commit_callbacks
):
    # given two judges who said non-English on a screen, then a lead who marked its app non-English
    project.prefilter_judgments = 2
    project.save()
    sam, bob = member(project, "sam"), member(project, "bob")
    (screen,) = screens(project, 1)
    judge(project, sam, non_english_app=True)
    judge(project, bob, non_english_app=True)
    app_mark_non_english(project=project, package=screen.app.package)
    # when bob's judgment is withdrawn
    withdraw(PrefilterJudgment.objects.filter(annotator=bob), django_capture_on_commit_callbacks)
    # then sam's vote still forces its judges' decision: the screen stays excluded by its judges
    # (not held by the app from pre-filtering)
    assert state_of(screen) == ("excluded", "non_english", "")


def test_withdrawing_counts_a_screen_its_app_holds_from_further_along(project, django_capture_on_commit_callbacks):
    # given a screen judged fine whose pass-1 questions are written, then a lead who marked its app
    # non-English (held from pass 2)
    sam, wes = member(project, "sam"), member(project, "wes")
    (screen,) = screens(project, 1)
    judge(project, sam)
    writing = assignment_next(project=project, user=wes, stage="questions-1")
    assignment_submit(assignment_id=writing.pk, user=wes, data={"questions": ["What is label 2?"]})
    app_mark_non_english(project=project, package=screen.app.package)
    assert state_of(screen) == ("excluded", "non_english", "questions-2")
    # when the judgment is withdrawn: the screen stays held, reported as further along
    done = withdraw(PrefilterJudgment.objects.all(), django_capture_on_commit_callbacks)
    assert done == {"withdrawn": 1, "screens_requeued": 0, "screens_further_along": 1}
    assert state_of(screen) == ("excluded", "non_english", "questions-2")


def test_an_app_whose_last_language_votes_are_withdrawn_is_undecided_again_even_at_a_one_screen_rule(
    project, django_capture_on_commit_callbacks
):
    # given a rule of one non-English screen: a judge's one non-English screen made the app non-English
    project.app_non_english_screens = 1
    project.save()
    sam = member(project, "sam")
    (screen,) = screens(project, 1)
    judge(project, sam, non_english_app=True)
    assert App.objects.get(pk=screen.app_id).language_set_by == "rule"
    # when the judgment is withdrawn, the app has no decided screen, so no vote: it is undecided again
    withdraw(PrefilterJudgment.objects.all(), django_capture_on_commit_callbacks)
    app = App.objects.get(pk=screen.app_id)
    assert (app.non_english, app.language_set_by) == (False, "")
    assert state_of(screen) == ("prefilter", "", "")


def test_a_screen_its_judge_excluded_as_out_of_sync_is_held_as_non_english_once_the_judgment_is_withdrawn(
    project, django_capture_on_commit_callbacks
):
    # given a screen its judge excluded as out of sync, then a lead who marked its app non-English
    sam = member(project, "sam")
    (screen,) = screens(project, 1)
    judge(project, sam, vh_out_of_sync=True)
    app_mark_non_english(project=project, package=screen.app.package)
    assert state_of(screen) == ("excluded", "vh_out_of_sync", "")
    # when the judgment is withdrawn: nothing decides the screen now but its app, which holds it
    # from pre-filtering, as non-English
    done = withdraw(PrefilterJudgment.objects.all(), django_capture_on_commit_callbacks)
    assert done["screens_requeued"] == 1
    assert state_of(screen) == ("excluded", "non_english", "prefilter")


def test_a_withdrawal_the_remaining_votes_outlast_counts_no_screen_further_along(
    project, django_capture_on_commit_callbacks
):
    # given three judges per screen who all said all is well, pass-1 questions written on the
    # screen, then a lead who marked its app non-English (the screen held from pass 2)
    project.prefilter_judgments = 3
    project.save()
    judges = [member(project, name) for name in ("ann", "bob", "sam")]
    wes = member(project, "wes")
    (screen,) = screens(project, 1)
    for user in judges:
        judge(project, user)
    writing = assignment_next(project=project, user=wes, stage="questions-1")
    assignment_submit(assignment_id=writing.pk, user=wes, data={"questions": ["What is label 2?"]})
    app_mark_non_english(project=project, package=screen.app.package)
    assert state_of(screen) == ("excluded", "non_english", "questions-2")
    # when sam's judgment is withdrawn: the two left force "all is well", the screen's own decision,
    # so nothing rested on it and no screen is reported as further along on uncertain evidence
    done = withdraw(PrefilterJudgment.objects.filter(annotator=judges[2]), django_capture_on_commit_callbacks)
    assert done == {"withdrawn": 1, "screens_requeued": 0, "screens_further_along": 0}
    assert state_of(screen) == ("excluded", "non_english", "questions-2")


def test_a_screen_excluded_as_out_of_sync_in_an_english_app_waits_again_once_its_only_judgment_is_withdrawn(
    project, django_capture_on_commit_callbacks
):
    # given an app a lead declared English, and a screen of it its one judge excluded as out of sync
    sam = member(project, "sam")
    (screen,) = screens(project, 1)
    app_mark_non_english(project=project, package=screen.app.package, english=True)
    judge(project, sam, vh_out_of_sync=True)
    assert state_of(screen) == ("excluded", "vh_out_of_sync", "")
    # when the judgment is withdrawn, nothing decides the screen: it waits for a judge again
    done = withdraw(PrefilterJudgment.objects.all(), django_capture_on_commit_callbacks)
    assert done == {"withdrawn": 1, "screens_requeued": 1, "screens_further_along": 0}
    assert state_of(screen) == ("prefilter", "", "")
