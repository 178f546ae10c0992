"""Pre-filtering: judgments, majority with N judges, exclusion reasons, non-English apps."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.db import compiled
from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import (
    App,
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    PrefilterJudgment,
    Question,
    QuestionSource,
    QuestionState,
    Screen,
    ScreenState,
)
from pipeline.engine import app_language_list, app_mark_non_english, assignment_next, assignment_submit, stage_get
from pipeline.stages.prefilter import (
    app_language_check,
    app_language_votes,
    judge_weights,
    prefilter_decide,
    prefilter_decide_weighted,
)
from tests.factories import AppFactory, MembershipFactory, ProjectFactory
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
    prefilter_control_record(project, sloppy, right=2)
    prefilter_control_record(project, good, right=12)
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


# --- the pure rules ------------------------------------------------------------------------------


def test_no_vote_and_no_weight_exclude_nothing():
    assert prefilter_decide(votes_non_english=0, votes_out_of_sync=0, judgments=0) == ""
    assert prefilter_decide_weighted([]) == ""
    assert prefilter_decide_weighted([(False, False, 0.0)]) == ""
    # the weight raising a flag just under the weight against: it does not hold; equal: it does
    assert prefilter_decide_weighted([(True, True, 1.0), (False, False, 1.01)]) == ""
    assert prefilter_decide_weighted([(False, True, 1.5), (True, False, 0.5), (False, False, 1.0)]) == "vh_out_of_sync"


def control_results(project, user, *, right, wrong, stage="prefilter"):
    """``right`` then ``wrong`` scored control items of ``user`` in ``stage`` of ``project``."""
    for i, gold_screen in enumerate(screens(project, right + wrong, state=ScreenState.QUESTIONS_1, candidates=0)):
        gold = GoldItem.objects.create(project=project, stage=stage, screen=gold_screen, answer={})
        done = Assignment.objects.create(
            project=project,
            stage=stage,
            screen=gold_screen,
            annotator=user,
            status=AssignmentStatus.SUBMITTED,
            lease_expires_at=timezone.now(),
            submitted_at=timezone.now(),
            purpose="control",
            gold=gold,
        )
        ControlResult.objects.create(
            assignment=done, gold=gold, project=project, user=user, stage=stage, purpose="control", correct=i < right
        )


def log_odds_per_flag(accuracy):
    p = math.sqrt(accuracy)
    return math.log(p / (1 - p))


def test_a_judges_weight_is_the_log_odds_of_their_record_on_this_projects_prefilter_gold(project):
    # given a judge with no record, one right on 2 of 12 control items, one right on none of 30
    fresh, sloppy, hopeless = member(project, "fresh"), member(project, "sloppy"), member(project, "hopeless")
    control_results(project, sloppy, right=2, wrong=10)
    control_results(project, hopeless, right=0, wrong=30)
    # and (decoys) the fresh judge's wrong items in another stage and in another project
    control_results(project, fresh, right=0, wrong=5, stage="questions-1")
    other = ProjectFactory(slug="other")
    control_results(other, fresh, right=0, wrong=5)
    weights = judge_weights(project=project, user_ids=[fresh.pk, sloppy.pk, hopeless.pk])
    # then each weighs the log-odds of the square root of their accuracy under the prior (0.9 over 10 items)
    assert weights[fresh.pk] == pytest.approx(log_odds_per_flag(0.9), rel=1e-9)
    assert weights[sloppy.pk] == pytest.approx(log_odds_per_flag((2 + 9) / (12 + 10)), rel=1e-9)
    # and one worse than chance weighs nothing (their votes are ignored, not inverted)
    assert weights[hopeless.pk] == 0.0


# --- the stage's small parts ---------------------------------------------------------------------


def test_gold_scoring_names_each_flag_judged_differently():
    stage = stage_get("prefilter")
    gold = {"non_english_app": True, "vh_out_of_sync": False}
    same = {"non_english_app": True, "vh_out_of_sync": False}
    assert stage.gold_score(given=same, gold=gold, project=None) == (True, "")
    both = {"non_english_app": False, "vh_out_of_sync": True}
    assert stage.gold_score(given=both, gold=gold, project=None) == (
        False,
        "Judged differently: non-English app, VH out of sync.",
    )
    sync = {"non_english_app": True, "vh_out_of_sync": True}
    assert stage.gold_score(given=sync, gold=gold, project=None) == (False, "Judged differently: VH out of sync.")
    # a flag missing reads as not raised
    missing = {"vh_out_of_sync": False}
    assert stage.gold_score(given=missing, gold=gold, project=None) == (False, "Judged differently: non-English app.")
    # the gold answer is the submission's two flags, nothing else; a gold item waits with its screen
    submitted = {"non_english_app": True, "vh_out_of_sync": False, "note": "menu"}
    assert stage.gold_answer(submission=submitted) == {"non_english_app": True, "vh_out_of_sync": False}
    waiting = str(GoldItem.objects.filter(stage.gold_unit_waiting()).query)  # an EXISTS of its screen, waiting
    assert 'EXISTS(SELECT 1 AS "a" FROM "annotation_screen" U0' in waiting and 'U0."state" = prefilter' in waiting


def test_a_draft_reads_as_lines_and_a_form_keeps_what_was_typed():
    stage = stage_get("prefilter")
    draft = {"non_english_app": True, "vh_out_of_sync": False, "note": "menu over content"}
    assert stage.draft_lines(draft=draft) == [
        ("Non-English app", "yes"),
        ("VH out of sync", "no"),
        ("Note", "menu over content"),
    ]
    assert stage.draft_lines(draft={"vh_out_of_sync": True, "note": "  "}) == [("VH out of sync", "yes")]
    assert stage.draft_lines(draft={"note": 3}) == []
    post = QueryDict(mutable=True)
    post.update({"vh_out_of_sync": "on", "note": " as typed "})
    assert stage.form_state(post=post) == {"non_english_app": False, "vh_out_of_sync": True, "note": " as typed "}
    assert stage.form_state(post=QueryDict()) == {"non_english_app": False, "vh_out_of_sync": False, "note": ""}


def test_pending_capacity_and_limits(project):
    stage = stage_get("prefilter")
    project.prefilter_judgments = 3
    assert stage.pending(project=project, screens={"prefilter": 4, "questions-1": 2}, questions={}) == 4
    assert stage.pending(project=project, screens={"questions-1": 2}, questions={}) == 0
    assert stage.capacity(project=project, unit_answers_needed=None) == 3
    assert stage.limits(project=project) == {"note_max": 2000}


# --- who may judge a screen ----------------------------------------------------------------------


def run_out(lease):
    """The lease's time ran out and it was reclaimed (``expired``)."""
    Assignment.objects.filter(pk=lease.pk).update(
        status=AssignmentStatus.EXPIRED, lease_expires_at=timezone.now() - timedelta(minutes=1)
    )


def test_with_several_judges_a_screen_is_offered_until_its_leases_reach_the_number(project):
    # given two judgments per screen, and (a decoy) a live pass-1 lease on the screen, made first
    project.prefilter_judgments = 2
    project.save()
    (screen,) = screens(project, 1)
    Assignment.objects.create(
        project=project,
        stage="questions-1",
        screen=screen,
        annotator=member(project, "writer"),
        status=AssignmentStatus.LEASED,
        lease_expires_at=timezone.now() + timedelta(hours=1),
    )
    # when two judges hold it at once
    assert assignment_next(project=project, user=member(project, "a"), stage="prefilter").screen_id == screen.pk
    assert assignment_next(project=project, user=member(project, "b"), stage="prefilter").screen_id == screen.pk
    # then a third finds nothing
    assert assignment_next(project=project, user=member(project, "c"), stage="prefilter") is None


def test_a_lease_that_ran_out_is_accepted_while_the_screen_is_still_open_to_its_judge(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    lease = assignment_next(project=project, user=a, stage="prefilter")
    run_out(lease)
    done = assignment_submit(assignment_id=lease.pk, user=a, data={**OK, "vh_out_of_sync": True})
    assert done.status == AssignmentStatus.SUBMITTED
    screen.refresh_from_db()
    assert (screen.state, screen.exclusion_reason) == (ScreenState.EXCLUDED, "vh_out_of_sync")


def test_a_lease_that_ran_out_is_refused_when_another_judge_holds_the_screen(project):
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1)
    lease = assignment_next(project=project, user=a, stage="prefilter")
    run_out(lease)
    assert assignment_next(project=project, user=b, stage="prefilter").screen_id == screen.pk
    with pytest.raises(ConflictError, match="went to someone else"):
        assignment_submit(assignment_id=lease.pk, user=a, data=OK)
    assert Screen.objects.get(pk=screen.pk).state == ScreenState.PREFILTER


def test_a_lease_that_ran_out_is_refused_when_its_judge_holds_the_screen_again(project):
    # given two judgments per screen, and a judge whose first lease ran out who took the screen again
    project.prefilter_judgments = 2
    project.save()
    a = member(project, "a")
    (screen,) = screens(project, 1)
    first = assignment_next(project=project, user=a, stage="prefilter")
    run_out(first)
    second = assignment_next(project=project, user=a, stage="prefilter")
    assert second.pk != first.pk and second.screen_id == screen.pk
    # then the old lease is refused: one judge, one judgment per screen
    with pytest.raises(ConflictError, match="went to someone else"):
        assignment_submit(assignment_id=first.pk, user=a, data=OK)


def test_a_lease_that_ran_out_is_refused_once_its_app_is_non_english(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    lease = assignment_next(project=project, user=a, stage="prefilter")
    run_out(lease)
    App.objects.filter(pk=screen.app_id).update(non_english=True)
    with pytest.raises(ConflictError, match="went to someone else"):
        assignment_submit(assignment_id=lease.pk, user=a, data=OK)


def test_a_judgment_on_a_screen_that_left_pre_filtering_is_refused(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    lease = assignment_next(project=project, user=a, stage="prefilter")
    Screen.objects.filter(pk=screen.pk).update(state=ScreenState.QUESTIONS_1)
    with pytest.raises(ConflictError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=OK)
    assert str(err.value) == "This screen is no longer waiting for pre-filtering."
    assert not PrefilterJudgment.objects.exists()


# --- app language ----------------------------------------------------------------------------------


def test_the_app_rule_needs_the_share_of_judged_screens(project):
    # given the rule "1 screen, half of the judged ones", an app judged 2 fine then 2 non-English,
    # and one judged 3 fine then 2 non-English (the queue is oldest first)
    project.app_non_english_screens = 1
    project.save()
    a = member(project, "a")
    half = screens(project, 4)
    under = screens(project, 5)
    for flags in ({}, {}, {"non_english_app": True}, {"non_english_app": True}):
        judge(project, a, **flags)
    for flags in ({}, {}, {}, {"non_english_app": True}, {"non_english_app": True}):
        judge(project, a, **flags)
    # then 2 of 4 make the first app non-English, 2 of 5 do not make the second
    assert App.objects.get(pk=half[0].app_id).non_english
    assert not App.objects.get(pk=under[0].app_id).non_english


def test_app_language_check_says_whether_the_app_became_non_english(project):
    # given an app with two screens judged non-English while the rule asked for three
    project.app_non_english_screens = 3
    project.save()
    a = member(project, "a")
    made = screens(project, 3)
    judge(project, a, non_english_app=True)
    judge(project, a, non_english_app=True)
    app = App.objects.get(pk=made[0].app_id)
    assert not app.non_english
    # when the rule asks for two: the check makes it non-English (its last screen leaves the queue)
    project.app_non_english_screens = 2
    project.save()
    assert app_language_check(project=project, app_id=app.pk) is True
    app.refresh_from_db()
    assert (app.non_english, app.language_set_by) == (True, "rule")
    assert Screen.objects.get(pk=made[2].pk).state == ScreenState.EXCLUDED
    # and checking again, or from another project, or a lead's English app, changes nothing
    assert app_language_check(project=project, app_id=app.pk) is False
    assert app_language_check(project=ProjectFactory(slug="other"), app_id=app.pk) is False
    english = AppFactory(project=project, language_set_by="lead")
    assert app_language_check(project=project, app_id=english.pk) is False


def test_with_several_judges_a_screen_counts_for_its_app_once_all_judged_it(project):
    project.prefilter_judgments = 2
    project.save()
    (screen,) = screens(project, 1)
    judge(project, member(project, "a"), non_english_app=True)
    rows = {row.package: row for row in app_language_list(project=project)}
    assert (rows[screen.app.package].judged, rows[screen.app.package].judged_non_english) == (0, 0)
    judge(project, member(project, "b"))
    # a tie of the screen's judges counts as non-English, as it excludes the screen
    rows = {row.package: row for row in app_language_list(project=project)}
    assert (rows[screen.app.package].judged, rows[screen.app.package].judged_non_english) == (1, 1)


def test_app_language_list_of_some_apps(project, django_assert_num_queries):
    a = member(project, "a")
    screens(project, 1)  # (a decoy: another app, judged too)
    (second,) = screens(project, 1)
    judge(project, a, non_english_app=True)
    judge(project, a, non_english_app=True)
    app_mark_non_english(project=project, package=second.app.package)
    rows = app_language_list(project=project, app_ids=[second.app_id])
    assert [(r.package, r.judged, r.judged_non_english, r.decision) for r in rows] == [
        (second.app.package, 1, 1, "non-English")
    ]
    with django_assert_num_queries(0):
        assert app_language_list(project=project, app_ids=[]) == []


def test_marking_an_app_reports_its_votes(project):
    a = member(project, "a")
    made = screens(project, 3)
    judge(project, a, non_english_app=True)
    judge(project, a)
    result = app_mark_non_english(project=project, package=made[0].app.package)
    assert result == {
        "app": made[0].app.package,
        "non_english": True,
        "language_set_by": "lead",
        "excluded": 2,
        "excluded_by_state": {"prefilter": 1, "questions-1": 1},
        "questions_dropped": 0,
        "restored": 0,
        "restored_by_state": {},
        "questions_restored": 0,
        "judged": 2,
        "judged_non_english": 1,
    }
    undone = app_mark_non_english(project=project, package=made[0].app.package, english=True)
    assert undone == {
        "app": made[0].app.package,
        "non_english": False,
        "language_set_by": "lead",
        "excluded": 0,
        "excluded_by_state": {},
        "questions_dropped": 0,
        "restored": 3,
        "restored_by_state": {"prefilter": 1, "questions-1": 2},
        "questions_restored": 0,
        "judged": 2,
        "judged_non_english": 1,
    }


def test_marking_an_app_records_the_state_each_question_was_dropped_from(project):
    author = member(project, "author")
    (screen,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    asked = answering_question(screen, author=author)
    done = answering_question(screen, author=author, text="What is done?")
    Question.objects.filter(pk=done.pk).update(state=QuestionState.ANSWERED, answers_done=1)
    app_mark_non_english(project=project, package=screen.app.package)
    dropped = {q.pk: (q.state, q.drop_reason, q.dropped_from) for q in Question.objects.all()}
    assert dropped == {
        asked.pk: ("dropped", "non-english-app", "answering"),
        done.pk: ("dropped", "non-english-app", "answered"),
    }


def test_questions_dropped_without_a_record_of_their_state_come_back_as_their_screen_implies(project):
    # given an app's screens excluded as non-English from the question passes and from answering,
    # with questions dropped before the state they left was recorded
    author = member(project, "author")
    excluded = {"state": ScreenState.EXCLUDED, "exclusion_reason": "non_english", "split": "train"}
    (drafting,) = screens(project, 1, excluded_from=ScreenState.QUESTIONS_2, **excluded)
    (answering,) = screens(project, 1, app=drafting.app, excluded_from=ScreenState.ANSWERING, **excluded)

    def dropped(screen, *, needed, done):
        return Question.objects.create(
            screen=screen,
            author=author,
            source=QuestionSource.PASS_1,
            position=Question.objects.filter(screen=screen).count(),
            text=f"Question {needed} {done}?",
            state=QuestionState.DROPPED,
            drop_reason="non-english-app",
            answers_needed=needed,
            answers_done=done,
        )

    written = dropped(drafting, needed=0, done=0)
    complete, partial, unset = (
        dropped(answering, needed=2, done=2),
        dropped(answering, needed=2, done=1),
        dropped(answering, needed=0, done=0),
    )
    # when a lead declares the app English
    result = app_mark_non_english(project=project, package=drafting.app.package, english=True)
    # then each question returns to drafting (its screen in the question passes), to answered (all
    # its answers in) or to answering
    assert result["questions_restored"] == 4
    assert {q.pk: q.state for q in Question.objects.all()} == {
        written.pk: "drafting",
        complete.pk: "answered",
        partial.pk: "answering",
        unset.pk: "answering",
    }


def test_the_queue_is_the_projects_waiting_screens_of_apps_not_non_english(project):
    # given a waiting screen, one further along, one of a non-English app, and another project's waiting one
    judge = member(project, "judge")
    waiting, further = screens(project, 2)
    Screen.objects.filter(pk=further.pk).update(state=ScreenState.QUESTIONS_1)
    (foreign,) = screens(project, 1)
    App.objects.filter(pk=foreign.app_id).update(non_english=True)
    elsewhere = ProjectFactory(slug="elsewhere")
    screens(elsewhere, 1)
    now = timezone.now()
    for judges in (1, 2):  # one judge a screen, and several
        project.prefilter_judgments = judges
        project.save(update_fields=["prefilter_judgments"])
        queue = stage_get("prefilter").queue(project=project, user=judge, now=now)
        assert list(queue.values_list("pk", flat=True)) == [waiting.pk], judges
    # and through the engine: the judge gets that screen, then nothing
    lease = assignment_next(project=project, user=judge, stage="prefilter")
    assert lease is not None and lease.screen_id == waiting.pk
    assignment_submit(
        assignment_id=lease.pk, user=judge, data={"non_english_app": False, "vh_out_of_sync": False, "note": ""}
    )
    assert assignment_next(project=project, user=judge, stage="prefilter") is None


def test_a_screen_is_open_to_a_judge_by_that_screens_leases_and_judgments_alone(project):
    # given two judgments per screen; (decoys) another app of the project that is non-English, and
    # carl holding a pre-filtering lease on a screen of another project
    project.prefilter_judgments = 2
    project.save()
    stage = stage_get("prefilter")
    ann, bob, carl = member(project, "ann"), member(project, "bob"), member(project, "carl")
    screens(project, 1, app=AppFactory(project=project, non_english=True))
    other = ProjectFactory(slug="other")
    MembershipFactory(project=other, user=carl)
    screens(other, 1)
    assert assignment_next(project=other, user=carl, stage="prefilter") is not None
    (screen,) = screens(project, 1)
    # when ann has judged the screen and bob holds a lease on it
    judge(project, ann)
    held = assignment_next(project=project, user=bob, stage="prefilter")
    assert held.screen_id == screen.pk
    now = timezone.now()
    # then it is open to nobody: ann judged it, and her judgment and bob's lease fill its two places
    assert stage.open_to(unit=screen, user=ann, now=now) is False
    assert stage.open_to(unit=screen, user=carl, now=now) is False
    # but a lead may hand bob's lease to carl: the lease handed over leaves its own place
    assert stage.open_to(unit=screen, user=carl, now=now, own=held) is True


def test_a_judge_of_little_weight_alone_still_raises_a_flag():
    # a vote weighs the log-odds of its judge's record: below 1 for a judge right about half the time
    assert prefilter_decide_weighted([(True, False, 0.5)]) == "non_english"
    assert prefilter_decide_weighted([(False, True, 0.4), (False, False, 0.3)]) == "vh_out_of_sync"
    assert prefilter_decide_weighted([(False, True, 0.4), (False, False, 0.5)]) == ""


def test_with_two_judges_a_no_that_completes_a_screen_another_judge_called_non_english_counts_for_its_app(project):
    # given two judges per screen and two screens of one app: both judges said non-English on the
    # first; on the second ann said non-English, and bob, judging it last, says all is well
    project.prefilter_judgments = 2
    project.save()
    ann, bob = member(project, "ann"), member(project, "bob")
    first, second = screens(project, 2)
    assert judge(project, ann, non_english_app=True).screen_id == first.pk
    assert judge(project, ann, non_english_app=True).screen_id == second.pk
    assert judge(project, bob, non_english_app=True).screen_id == first.pk
    assert not App.objects.get(pk=first.app_id).non_english  # one decided screen of the two so far
    assert judge(project, bob).screen_id == second.pk
    # then the second screen is decided non-English (a tie excludes), which makes two of two: the app
    # rule makes the app non-English on bob's "no", the judgment that completed the screen's count
    second.refresh_from_db()
    assert (second.state, second.exclusion_reason) == (ScreenState.EXCLUDED, "non_english")
    app = App.objects.get(pk=first.app_id)
    assert (app.non_english, app.language_set_by) == (True, "rule")


def test_an_app_nobody_judged_has_no_votes(project):
    (screen,) = screens(project, 1)
    assert app_language_votes(app=screen.app) == (0, 0)


@pytest.mark.parametrize("judges", [1, 3])
def test_the_queue_runs_by_key_then_id_and_counts_judgments_that_count_with_live_leases(project, judges):
    # given screens whose keys run against their ids (two share a key)
    project.prefilter_judgments = judges
    project.save()
    made = screens(project, 4)
    for screen, key in zip(made, (30, 10, 20, 10), strict=True):
        Screen.objects.filter(pk=screen.pk).update(queue_key=key)
    stage, now = stage_get("prefilter"), timezone.now()
    dan = member(project, "dan")
    order = list(stage.queue(project=project, user=dan, now=now).values_list("pk", flat=True))
    assert order == [made[1].pk, made[3].pk, made[2].pk, made[0].pk]
    if judges == 1:
        return
    # and, with three judges per screen, a screen two judges judged and a third holds is full
    ann, bob, carl = member(project, "ann"), member(project, "bob"), member(project, "carl")
    for user in (ann, bob):
        assert judge(project, user).screen_id == made[1].pk
    assert assignment_next(project=project, user=carl, stage="prefilter").screen_id == made[1].pk
    order = list(stage.queue(project=project, user=dan, now=timezone.now()).values_list("pk", flat=True))
    assert order == [made[3].pk, made[2].pk, made[0].pk]


def test_a_leads_english_for_another_app_leaves_this_apps_language_votes_alone(project):
    # given a lead who declared another app of the project English
    ann = member(project, "ann")
    other = AppFactory(project=project)
    app_mark_non_english(project=project, package=other.package, english=True)
    (screen,) = screens(project, 1)
    # when a judge says this app's screen is non-English, the vote counts
    judge(project, ann, non_english_app=True)
    screen.refresh_from_db()
    assert (screen.state, screen.exclusion_reason) == (ScreenState.EXCLUDED, "non_english")


def test_with_several_judges_a_careless_non_english_outweighed_on_its_screens_does_not_decide_their_app(project):
    # given two judges per screen: a careless judge (2 of 12 control items right) says non-English on
    # both screens of an app, a careful one (12 of 12) says all is well on both
    project.prefilter_judgments = 2
    project.save()
    sloppy, good = member(project, "sloppy"), member(project, "good")
    prefilter_control_record(project, sloppy, right=2)
    prefilter_control_record(project, good, right=12)
    first, second = screens(project, 2)
    for screen in (first, second):
        assert judge(project, sloppy, non_english_app=True).screen_id == screen.pk
        assert judge(project, good).screen_id == screen.pk
    # then both screens go on, and their app, whose screens count as their decisions say, stays
    # undecided (counted by a plain majority, two ties would have made it non-English by the rule
    # and excluded both screens)
    for screen in (first, second):
        screen.refresh_from_db()
        assert screen.state == ScreenState.QUESTIONS_1
    app = App.objects.get(pk=first.app_id)
    assert (app.non_english, app.language_set_by) == (False, "")
    assert app_language_votes(app=app) == (2, 0)
    [row] = app_language_list(project=project, app_ids=[app.pk])
    assert (row.judged, row.judged_non_english, row.decision) == (2, 0, "undecided")


def test_with_one_judge_per_screen_a_judgment_reads_no_judges_record(project):
    # the weights are read only when several judges share a screen: with one, the submit does not
    # query anybody's control results
    ann = member(project, "ann")
    screens(project, 1)
    lease = assignment_next(project=project, user=ann, stage="prefilter")
    with CaptureQueriesContext(connection) as ctx:
        assignment_submit(assignment_id=lease.pk, user=ann, data=OK)
    assert [q["sql"] for q in ctx.captured_queries if "controlresult" in q["sql"].lower()] == []
