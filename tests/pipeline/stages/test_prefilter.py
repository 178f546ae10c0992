"""Pre-filtering: judgments, majority with N judges, exclusion reasons, non-English apps."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    PrefilterJudgment,
    Question,
    QuestionState,
    Screen,
    ScreenState,
)
from pipeline.engine import app_language_list, app_mark_non_english, assignment_next, assignment_submit
from pipeline.stages.prefilter import judge_weights, prefilter_decide, prefilter_decide_weighted
from tests.pipeline.stages.helpers import answering_question, member, screens

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


def test_weighted_votes_reduce_to_the_majority_with_equal_weights():
    for votes in ([(True, False), (False, False)], [(False, True), (False, False), (False, True)], [(False, False)]):
        weighted = prefilter_decide_weighted([(ne, oos, 1.3) for ne, oos in votes])
        counted = prefilter_decide(
            votes_non_english=sum(v[0] for v in votes), votes_out_of_sync=sum(v[1] for v in votes), judgments=len(votes)
        )
        assert weighted == counted, votes
    # a judge who weighs nothing raises nothing
    assert prefilter_decide_weighted([(True, True, 0.0), (False, False, 2.0)]) == ""


def test_several_judges_weigh_by_their_record_on_gold(project):
    # given two judges per screen: one whose control items are mostly wrong, one with a clean record
    project.prefilter_judgments = 2
    project.save()
    sloppy, good = member(project, "sloppy"), member(project, "good")
    gold_screens = screens(project, 12, state=ScreenState.QUESTIONS_1)
    golds = [GoldItem.objects.create(project=project, stage="prefilter", screen=g, answer={}) for g in gold_screens]
    for user, right in ((sloppy, 2), (good, 12)):
        for i, gold_item in enumerate(golds):
            done = Assignment.objects.create(
                project=project,
                stage="prefilter",
                screen=gold_item.screen,
                annotator=user,
                status="submitted",
                lease_expires_at=timezone.now(),
                submitted_at=timezone.now(),
                purpose="control",
                gold=gold_item,
            )
            ControlResult.objects.create(
                assignment=done,
                gold=gold_item,
                project=project,
                user=user,
                stage="prefilter",
                purpose="control",
                correct=i < right,
            )
    weights = judge_weights(project=project, user_ids=[sloppy.pk, good.pk])
    assert weights[sloppy.pk] < weights[good.pk] / 3
    # when the sloppy judge says non-English and the good one says all is well
    (screen,) = screens(project, 1)
    judge(project, sloppy, non_english_app=True)
    judge(project, good)
    # then the screen goes on (a plain count would have excluded it on a tie)
    screen.refresh_from_db()
    assert screen.state == ScreenState.QUESTIONS_1


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
    # given an app with a screen waiting (leased by A), one waiting free, one already further
    # along with a question being answered (leased by B)
    a, b, author = member(project, "a"), member(project, "b"), member(project, "author")
    waiting_leased, waiting_free = screens(project, 2)
    further = screens(project, 1, state=ScreenState.ANSWERING, app=waiting_leased.app, split="train")[0]
    question = answering_question(further, author=author)
    lease = assignment_next(project=project, user=a, stage="prefilter")
    assert lease.screen_id == waiting_leased.pk
    answering = assignment_next(project=project, user=b, stage="answers")
    assert answering.question_id == question.pk
    # when the lead marks the app non-English
    result = app_mark_non_english(project=project, package=waiting_leased.app.package)
    # then every screen of the app is excluded whatever its state, and its question dropped
    assert result["excluded"] == 3 and result["questions_dropped"] == 1
    assert result["excluded_by_state"] == {"prefilter": 2, "answering": 1}
    for screen in (waiting_leased, waiting_free, further):
        screen.refresh_from_db()
        assert (screen.state, screen.exclusion_reason) == (ScreenState.EXCLUDED, "non_english")
    question.refresh_from_db()
    assert (question.state, question.drop_reason) == ("dropped", "non-english-app")
    assert assignment_next(project=project, user=member(project, "c"), stage="answers") is None
    # and A's late judgment is refused with its content kept as a draft
    with pytest.raises(ConflictError):
        assignment_submit(assignment_id=lease.pk, user=a, data=OK)
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.EXPIRED and lease.draft == OK
    answering.refresh_from_db()
    assert answering.status == AssignmentStatus.EXPIRED
    # and marking again changes nothing
    assert app_mark_non_english(project=project, package=waiting_leased.app.package)["excluded"] == 0


def test_the_app_rule_makes_an_app_non_english_and_a_lead_can_overrule_it(project):
    # given an app with five screens, the project's rule: 2 screens, half of the judged ones
    a = member(project, "a")
    made = screens(project, 5)
    app = made[0].app
    assert all(s.app_id == app.pk for s in made)
    yes = {"non_english_app": True, "vh_out_of_sync": False, "note": ""}
    # when one screen is judged non-English: the app is not decided yet (1 < 2)
    first = assignment_next(project=project, user=a, stage="prefilter")
    assignment_submit(assignment_id=first.pk, user=a, data=yes)
    app.refresh_from_db()
    assert not app.non_english
    assert Screen.objects.filter(app=app, state=ScreenState.PREFILTER).count() == 4
    # when a second one is: the app is non-English, and all its screens leave the queue
    second = assignment_next(project=project, user=a, stage="prefilter")
    assignment_submit(assignment_id=second.pk, user=a, data=yes)
    app.refresh_from_db()
    assert (app.non_english, app.language_set_by) == (True, "rule")
    assert not Screen.objects.filter(app=app).exclude(state=ScreenState.EXCLUDED).exists()
    assert assignment_next(project=project, user=a, stage="prefilter") is None


def test_a_lead_who_says_english_keeps_the_rule_and_the_language_votes_away(project):
    a = member(project, "a")
    made = screens(project, 4)
    result = app_mark_non_english(project=project, package=made[0].app.package, english=True)
    assert (result["non_english"], result["excluded"], result["restored"]) == (False, 0, 0)
    yes = {"non_english_app": True, "vh_out_of_sync": False, "note": ""}
    for _ in range(3):
        lease = assignment_next(project=project, user=a, stage="prefilter")
        assignment_submit(assignment_id=lease.pk, user=a, data=yes)
    # the app stays English (the lead's word), and its judges' language votes no longer exclude
    # a screen: the three judged go on to the question passes; the fourth still waits
    app = made[0].app
    app.refresh_from_db()
    assert (app.non_english, app.language_set_by) == (False, "lead")
    assert Screen.objects.filter(state=ScreenState.QUESTIONS_1).count() == 3
    assert Screen.objects.filter(state=ScreenState.PREFILTER).count() == 1
    # (out of sync still excludes)
    lease = assignment_next(project=project, user=a, stage="prefilter")
    assignment_submit(assignment_id=lease.pk, user=a, data={**yes, "vh_out_of_sync": True})
    assert Screen.objects.get(pk=lease.screen_id).exclusion_reason == "vh_out_of_sync"


def test_declaring_english_restores_what_the_apps_language_excluded(project):
    # given an app with screens at every stage: two waiting for pre-filtering, one in the
    # question passes, one whose question is being answered, one whose question was kept; one
    # its judge excluded as non-English, one its judge excluded as out of sync; and a question
    # post-processing had dropped before
    a, b, author = member(project, "a"), member(project, "b"), member(project, "author")
    judged_non_english, judged_out_of_sync = screens(project, 2)
    app = judged_non_english.app
    waiting, waiting_too = screens(project, 2, app=app)
    judge(project, a, non_english_app=True)  # (the queue is oldest first)
    judge(project, a, vh_out_of_sync=True)
    passes = screens(project, 1, app=app, state=ScreenState.QUESTIONS_1)[0]
    answering = screens(project, 1, app=app, state=ScreenState.ANSWERING, split="train")[0]
    asked = answering_question(answering, author=author)
    kept = answering_question(answering, author=author, text="What is kept?")
    Question.objects.filter(pk=kept.pk).update(state=QuestionState.KEPT, final_text="What is kept now?")
    dropped_before = answering_question(answering, author=author, text="What is twice?")
    Question.objects.filter(pk=dropped_before.pk).update(state=QuestionState.DROPPED, drop_reason="duplicate")
    lease = assignment_next(project=project, user=b, stage="answers")
    assert lease.question_id == asked.pk
    # when the lead marks the app non-English
    excluded = app_mark_non_english(project=project, package=app.package)
    assert excluded["excluded"] == 4 and excluded["questions_dropped"] == 2
    assert excluded["excluded_by_state"] == {"prefilter": 2, "questions-1": 1, "answering": 1}
    assert assignment_next(project=project, user=b, stage="answers") is None
    # and then declares it English
    result = app_mark_non_english(project=project, package=app.package, english=True)
    # then every screen its language excluded is back where it was (the one its judge excluded
    # as non-English goes on to the question passes), the out-of-sync one stays excluded
    assert (result["non_english"], result["language_set_by"]) == (False, "lead")
    assert result["restored"] == 5 and result["questions_restored"] == 2
    assert result["restored_by_state"] == {"prefilter": 2, "questions-1": 2, "answering": 1}
    states = {s.pk: (s.state, s.exclusion_reason, s.excluded_from) for s in Screen.objects.filter(app=app)}
    assert states == {
        waiting.pk: ("prefilter", "", ""),
        waiting_too.pk: ("prefilter", "", ""),
        judged_non_english.pk: ("questions-1", "", ""),
        judged_out_of_sync.pk: ("excluded", "vh_out_of_sync", ""),
        passes.pk: ("questions-1", "", ""),
        answering.pk: ("answering", "", ""),
    }
    questions = {q.pk: (q.state, q.drop_reason, q.final_text) for q in Question.objects.all()}
    assert questions == {
        asked.pk: ("answering", "", ""),
        kept.pk: ("kept", "", "What is kept now?"),
        dropped_before.pk: ("dropped", "duplicate", ""),
    }
    # and the restored work is handed out again
    again = assignment_next(project=project, user=b, stage="answers")
    assert again is not None and again.question_id == asked.pk
    assert assignment_next(project=project, user=member(project, "c"), stage="prefilter") is not None
    # and declaring it English again changes nothing
    assert app_mark_non_english(project=project, package=app.package, english=True)["restored"] == 0


def test_app_language_list_counts_the_votes_of_every_app(project, django_assert_num_queries):
    a = member(project, "a")
    first = screens(project, 3)
    other = screens(project, 1)
    judge(project, a, non_english_app=True)
    judge(project, a)
    with django_assert_num_queries(2):
        rows = {row.package: row for row in app_language_list(project=project)}
    assert (rows[first[0].app.package].judged, rows[first[0].app.package].judged_non_english) == (2, 1)
    assert rows[first[0].app.package].decision == "undecided"
    assert rows[other[0].app.package].judged == 0
    app_mark_non_english(project=project, package=other[0].app.package, english=True)
    assert {r.package: r.decision for r in app_language_list(project=project)}[other[0].app.package] == "English"


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
