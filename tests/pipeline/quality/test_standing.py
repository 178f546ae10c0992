"""pipeline/quality/standing.py: every rule that moves an annotator's standing, at its boundaries
(just under, at, just over each number the project sets).

Each group is one rule: the qualification set and its threshold, retries (attempts and cooldown),
the monitoring rule (accuracy on control items), fast responses, skips in a row, and writers
qualified by the review of their first submissions. The rules are called as the engine calls them
(``gold_submitted``, ``work_submitted``, ``skip_recorded``, ``review_recorded``, ``plan_next``),
on rows written by the builders so that every figure is chosen by hand; the retry flow and the
skips go through the engine itself.

The monitoring rule (``TestMonitoringAccuracyRule``) is due to become a sequential test: its
group stands alone, so that it can be replaced without touching the other rules' tests.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from annotation.draws import secret_draw
from annotation.exceptions import PermissionDeniedError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    Membership,
    PrefilterJudgment,
    Project,
    Purpose,
    QualityEvent,
    ReviewState,
    ScreenState,
    Standing,
    StandingStatus,
)
from pipeline.engine import assignment_next, assignment_skip, assignment_submit, stage_get
from pipeline.quality.sequential import sequential_test
from pipeline.quality.standing import (
    StandingBrief,
    control_rate_for,
    gold_left,
    gold_submitted,
    plan_next,
    qualification_check,
    qualification_sample,
    retry_after,
    review_qualifications_reopen,
    review_recorded,
    skip_recorded,
    standing_act,
    standing_read,
    work_refusal,
    work_submitted,
)
from tests.factories import MembershipFactory, ScreenFactory, UserFactory
from tests.pipeline.quality.builders import RIGHT, WRONG, gold_prefilter, rule_pause, work_prefilter
from tests.pipeline.quality.report_builders import START, control, gold, question, standing, work
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db

PREFILTER = stage_get("prefilter")  # a stage with gold items: qualification set, control items
WRITING = stage_get("questions-1")  # a stage without gold, reviewed: writers qualify by review


def configure(project: Project, **fields: Any) -> Project:
    for name, value in fields.items():
        setattr(project, name, value)
    project.save(update_fields=list(fields))
    return project


def status_of(user: Any, stage: str = "prefilter") -> str:
    return Standing.objects.get(user=user, stage=stage).status


def rules_of(user: Any) -> list[str]:
    return list(QualityEvent.objects.filter(user=user).order_by("pk").values_list("rule", flat=True))


# --- qualification: a set of gold items, and its threshold ------------------------------------------


class TestQualificationThreshold:
    def qualify(self, project: Project, user: Any, *, right: int, items: int) -> None:
        """``user`` did ``items`` qualification items of attempt 1, ``right`` of them right; the set is decided."""
        row = standing(project, user, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START)
        for i in range(items):
            control(project, user, correct=i < right, purpose=Purpose.QUALIFICATION, attempt=1)
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)

    @pytest.mark.parametrize(
        ("right", "status", "rule"),
        [
            (8, StandingStatus.NOT_QUALIFIED, "qualification-failed"),  # 80%: under
            (9, StandingStatus.ACTIVE, "qualification-passed"),  # 90%: exactly at the threshold
            (10, StandingStatus.ACTIVE, "qualification-passed"),  # 100%: over
        ],
    )
    def test_a_score_at_the_threshold_qualifies(self, project, annotator, right, status, rule):
        # given the default threshold (90%) and a set of 10 items, with no second sample (below)
        assert (project.qualification_threshold, project.qualification_items) == (0.9, 10)
        configure(project, qualification_extra_items=0)
        # when the annotator finishes the set with ``right`` right answers
        self.qualify(project, annotator, right=right, items=10)
        # then they qualify at or above 90%, and the event keeps the figures
        assert status_of(annotator) == status
        event = QualityEvent.objects.get(user=annotator, rule=rule)
        assert event.figures == {
            "attempt": 1,
            "correct": right,
            "items": 10,
            "score": right / 10,
            "threshold": 0.9,
        }

    def test_a_threshold_between_two_scores(self, project, annotator):
        # given a threshold of 3 of 4: 3 right qualifies, 2 does not
        configure(project, qualification_items=4, qualification_threshold=0.75, qualification_extra_items=0)
        self.qualify(project, annotator, right=3, items=4)
        assert status_of(annotator) == StandingStatus.ACTIVE
        other = member(project, "other")
        self.qualify(project, other, right=2, items=4)
        assert status_of(other) == StandingStatus.NOT_QUALIFIED

    def test_the_set_is_decided_with_its_last_item_not_before(self, project, annotator):
        # given a set of 3 items (one sample): two done (both right), a third gold item still to serve
        configure(project, qualification_items=3, qualification_extra_items=0)
        row = standing(project, annotator, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START)
        for _ in range(2):
            control(project, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
        gold(project)
        # when the check runs after the second, the set waits for its third item
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        assert status_of(annotator) == StandingStatus.QUALIFYING
        # and a wrong third item decides it: 2 of 3 is under 90%
        control(project, annotator, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        assert status_of(annotator) == StandingStatus.NOT_QUALIFIED
        assert Standing.objects.get(user=annotator).reason == "2 of 3 right; you can try again in 24 hours"

    def test_with_no_gold_left_the_set_is_decided_on_what_was_done(self, project, annotator):
        # given a set of 10, of which only 2 could be served (no gold item left), both right
        row = standing(project, annotator, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START)
        for _ in range(2):
            control(project, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        assert status_of(annotator) == StandingStatus.ACTIVE

    def test_only_the_current_attempt_counts(self, project, annotator):
        # given a first attempt with every item wrong, and a second with every item right
        configure(project, qualification_items=2)
        for _ in range(2):
            control(project, annotator, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
        row = standing(project, annotator, status=StandingStatus.QUALIFYING, attempt=2, attempt_started_at=START)
        for _ in range(2):
            control(project, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
        # then the second attempt qualifies alone
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        assert status_of(annotator) == StandingStatus.ACTIVE


# --- retries: attempts and cooldown ------------------------------------------------------------------


class TestSecondSample:
    """A set one right item short of the threshold goes on with ``qualification_extra_items`` more,
    which decide it alone (``qualification_sample``): a careful worker's two slips in ten are not the end."""

    def attempt(self, project: Project, user: Any, results: list[bool], *, gold_left: int = 5) -> Standing:
        row = standing(project, user, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START)
        for correct in results:
            control(project, user, correct=correct, purpose=Purpose.QUALIFICATION, attempt=1)
        if not gold_left:  # none left for them: the control items' own gold retired too
            GoldItem.objects.filter(project=project).update(active=False)
        for _ in range(gold_left):
            gold(project)
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        return Standing.objects.get(pk=row.pk)

    @pytest.mark.parametrize(
        ("first_right", "status"),
        [
            (7, StandingStatus.NOT_QUALIFIED),  # two short: failed at once
            (8, StandingStatus.QUALIFYING),  # one short: five more items
            (9, StandingStatus.ACTIVE),  # at the threshold: qualified at once
        ],
    )
    def test_one_right_item_short_of_the_threshold_goes_on(self, project, annotator, first_right, status):
        assert (project.qualification_items, project.qualification_extra_items) == (10, 5)
        row = self.attempt(project, annotator, [True] * first_right + [False] * (10 - first_right))
        assert row.status == status

    @pytest.mark.parametrize(
        ("extra", "status", "reason"),
        [
            ([True] * 5, StandingStatus.ACTIVE, "qualified with 5 of 5 more items (a second sample)"),
            ([True] * 4 + [False], StandingStatus.NOT_QUALIFIED, "4 of 5 more items (a second sample) right;"),
            ([False] + [True] * 4, StandingStatus.NOT_QUALIFIED, "4 of 5 more items (a second sample) right;"),
        ],
    )
    def test_the_second_sample_decides_alone_at_the_threshold(self, project, annotator, extra, status, reason):
        # the first ten: the two wrong ones last (the order served is the order decided)
        first = [True] * 8 + [False] * 2
        row = self.attempt(project, annotator, first + extra[:4])
        assert row.status == StandingStatus.QUALIFYING  # 14 of 15 done: waits for the last
        control(project, annotator, correct=extra[4], purpose=Purpose.QUALIFICATION, attempt=1)
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        row.refresh_from_db()
        assert row.status == status and row.reason.startswith(reason)
        event = QualityEvent.objects.get(user=annotator, rule__startswith="qualification-")
        assert event.figures == {
            "attempt": 1,
            "correct": sum(extra),
            "items": 5,
            "score": sum(extra) / 5,
            "threshold": 0.9,
            "first_correct": 8,
        }

    def test_with_no_second_sample_one_short_fails(self, project, annotator):
        configure(project, qualification_extra_items=0)
        row = self.attempt(project, annotator, [True] * 8 + [False] * 2)
        assert row.status == StandingStatus.NOT_QUALIFIED and row.reason.startswith("8 of 10 right")

    def test_with_no_gold_left_for_the_second_sample_the_first_decides(self, project, annotator):
        row = self.attempt(project, annotator, [True] * 8 + [False] * 2, gold_left=0)
        assert row.status == StandingStatus.NOT_QUALIFIED and row.reason.startswith("8 of 10 right")
        # and with gold running out part way, what was done of the second sample decides
        other = member(project, "other")
        row = self.attempt(project, other, [True] * 8 + [False] * 2 + [True] * 3, gold_left=0)
        assert (
            row.status == StandingStatus.ACTIVE and row.reason == "qualified with 3 of 3 more items (a second sample)"
        )

    @pytest.mark.parametrize(("items", "threshold", "short"), [(10, 0.9, 2), (10, 0.7, 4), (4, 0.75, 2), (20, 0.95, 2)])
    def test_one_short_is_one_wrong_more_than_the_threshold_allows(self, project, items, threshold, short):
        configure(project, qualification_items=items, qualification_threshold=threshold)
        one_short = [False] * short + [True] * (items - short)
        assert qualification_sample(project=project, results=one_short) == (items + 5, one_short)
        two_short = [False] * (short + 1) + [True] * (items - short - 1)
        assert qualification_sample(project=project, results=two_short) == (items, two_short)
        right = [False] * (short - 1) + [True] * (items - short + 1)
        assert qualification_sample(project=project, results=right) == (items, right)
        # results past the first set are the second sample's
        assert qualification_sample(project=project, results=[*one_short, True, False]) == (items + 5, [True, False])
        # an unfinished first set is decided by its own (the gold ran out)
        assert qualification_sample(project=project, results=one_short[:-1]) == (items, one_short[:-1])


class TestRetries:
    def test_failing_every_allowed_attempt_then_being_refused(self, project, annotator):
        # given a project that allows 2 attempts of a 1-item set, 24 hours apart, and enough gold for 3
        configure(
            project,
            qualification_items=1,
            qualification_attempts=2,
            qualification_cooldown_hours=24,
            qualification_extra_items=0,
        )
        gold_prefilter(project, 3)
        for attempt in (1, 2):
            # when the annotator fails attempt ``attempt``
            lease = assignment_next(project=project, user=annotator, stage="prefilter")
            assert (lease.purpose, lease.attempt) == ("qualification", attempt)
            assignment_submit(assignment_id=lease.pk, user=annotator, data=dict(WRONG))
            row = Standing.objects.get(user=annotator)
            assert (row.status, row.attempt) == (StandingStatus.NOT_QUALIFIED, attempt)
            if attempt == 1:
                # then after the first they wait for the cooldown, and start again once it is over
                with pytest.raises(PermissionDeniedError, match="try again after"):
                    assignment_next(project=project, user=annotator, stage="prefilter")
                started = row.attempt_started_at - timedelta(hours=24)
                Standing.objects.filter(pk=row.pk).update(attempt_started_at=started)
        # after the last allowed attempt they are refused for good: now, and long after the cooldown
        for started in (row.attempt_started_at, START - timedelta(days=30)):
            Standing.objects.filter(pk=row.pk).update(attempt_started_at=started)
            with pytest.raises(PermissionDeniedError, match="Ask a lead"):
                assignment_next(project=project, user=annotator, stage="prefilter")
        row = Standing.objects.get(user=annotator)
        assert (row.status, row.attempt) == (StandingStatus.NOT_QUALIFIED, 2)
        assert retry_after(stage=PREFILTER, standing=row, project=project) is None
        assert rules_of(annotator) == ["started", "qualification-failed", "qualification-retry", "qualification-failed"]
        assert Assignment.objects.filter(annotator=annotator, purpose=Purpose.QUALIFICATION).count() == 2

    @pytest.mark.parametrize(
        ("attempt", "retry"),
        [(1, True), (2, True), (3, False), (4, False)],  # 3 attempts allowed: a 3rd failure is the last
    )
    def test_retry_after_counts_the_attempts(self, project, annotator, attempt, retry):
        row = standing(
            project, annotator, status=StandingStatus.NOT_QUALIFIED, attempt=attempt, attempt_started_at=START
        )
        assert project.qualification_attempts == 3
        expected = START + timedelta(hours=24) if retry else None
        assert retry_after(stage=PREFILTER, standing=row, project=project) == expected

    def test_a_stage_without_gold_has_no_retry(self, project, annotator):
        row = standing(project, annotator, stage="questions-1", status=StandingStatus.NOT_QUALIFIED, attempt=1)
        assert retry_after(stage=WRITING, standing=row, project=project) is None

    @pytest.mark.parametrize(
        ("after", "allowed"),
        [
            (timedelta(hours=24) - timedelta(microseconds=1), False),  # just under the cooldown
            (timedelta(hours=24), True),  # exactly at it
            (timedelta(hours=24, seconds=1), True),  # just over
        ],
    )
    def test_the_cooldown_ends_at_its_hour(self, project, annotator, after, allowed):
        # given an annotator who failed attempt 1, started at START, with a cooldown of 24 hours
        standing(project, annotator, status=StandingStatus.NOT_QUALIFIED, attempt=1, attempt_started_at=START)
        gold(project)
        membership = Membership.objects.get(project=project, user=annotator)

        def plan() -> Any:
            brief = standing_read(project=project, user=annotator, stage="prefilter")
            return plan_next(
                stage=PREFILTER,
                project=project,
                user=annotator,
                membership=membership,
                standing=brief,
                now=START + after,
            )

        # when they ask for work ``after`` the start of their attempt
        if not allowed:
            with pytest.raises(PermissionDeniedError, match=r"try again after .*\(1 of 3 attempts used\)"):
                plan()
            assert status_of(annotator) == StandingStatus.NOT_QUALIFIED
            return
        # then from the cooldown's end they start attempt 2, on a gold item
        assert (plan().purpose, plan().attempt) == (Purpose.QUALIFICATION, 2)
        row = Standing.objects.get(user=annotator)
        assert (row.status, row.attempt, row.attempt_started_at) == (StandingStatus.QUALIFYING, 2, START + after)
        assert rules_of(annotator) == ["qualification-retry"]


# --- monitoring: the accuracy rule on control items (to be replaced by a sequential test) ------------


class TestMonitoringAccuracyRule:
    """Paused when the sequential test's evidence (``pipeline.quality.sequential``: a CUSUM of the
    log-likelihood ratio of a bad against a good accuracy, derived from ``monitoring_threshold``)
    reaches ``monitoring_evidence``. The test's arithmetic: tests/pipeline/quality/test_sequential.py."""

    def answer_control(self, project: Project, user: Any, *, correct: bool) -> None:
        """``user`` submits a control item, right or wrong, as the engine does after the submit."""
        item = gold(project)
        assignment = Assignment.objects.create(
            project=project,
            stage="prefilter",
            screen=item.screen,
            annotator=user,
            status=AssignmentStatus.SUBMITTED,
            lease_expires_at=START + timedelta(hours=1),
            submitted_at=START,
            purpose=Purpose.CONTROL,
            gold=item,
        )
        gold_submitted(stage=PREFILTER, assignment=assignment, cleaned=dict(RIGHT if correct else WRONG), now=START)

    def answers(self, project: Project, user: Any, results: list[bool]) -> None:
        for correct in results:
            self.answer_control(project, user, correct=correct)

    @staticmethod
    def evidence_of(results: list[bool], project: Project) -> float:
        return sequential_test(project).run(results)

    @pytest.mark.parametrize(("nudge", "paused"), [(1e-9, False), (0.0, True), (-1e-9, True)])
    def test_just_under_at_and_over_the_bound(self, project, annotator, nudge, paused):
        # given a bound set exactly at what two wrong control items in a row add up to (+/- a hair)
        two = self.evidence_of([False, False], project)
        configure(project, monitoring_evidence=two + nudge)
        standing(project, annotator)
        # when they answer two wrong
        self.answers(project, annotator, [False, False])
        # then only evidence at or over the bound pauses
        assert status_of(annotator) == (StandingStatus.PAUSED if paused else StandingStatus.ACTIVE)
        if paused:
            event = QualityEvent.objects.get(user=annotator, rule="control-accuracy")
            assert event.figures["recent"] == [False, False] and event.figures["evidence"] == round(two, 3)
            assert Standing.objects.get(user=annotator).reason == "0 of your last 2 control items were right"
        assert Standing.objects.get(user=annotator).controls_done == 2

    def test_a_long_honest_record_banks_no_credit(self, project, annotator):
        # the default bound (5.0): three wrong in a row pause, whatever came before
        standing(project, annotator)
        self.answers(project, annotator, [True] * 30 + [False, False])
        assert status_of(annotator) == StandingStatus.ACTIVE
        self.answer_control(project, annotator, correct=False)
        assert status_of(annotator) == StandingStatus.PAUSED

    def test_right_answers_between_slips_clear_the_evidence(self, project, annotator):
        standing(project, annotator)
        self.answers(project, annotator, [False, False] + [True] * 20 + [False, False])
        assert status_of(annotator) == StandingStatus.ACTIVE
        assert Standing.objects.get(user=annotator).evidence == pytest.approx(self.evidence_of([False, False], project))

    def test_qualification_items_are_not_control_items(self, project, annotator):
        # given a bound of two wrong, and two wrong qualification items of an earlier attempt
        configure(project, monitoring_evidence=self.evidence_of([False, False], project))
        standing(project, annotator)
        for _ in range(2):
            control(project, annotator, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
        # when a control item is wrong: its evidence alone is under the bound
        self.answer_control(project, annotator, correct=False)
        assert status_of(annotator) == StandingStatus.ACTIVE
        # and the second decides
        self.answer_control(project, annotator, correct=False)
        assert status_of(annotator) == StandingStatus.PAUSED

    def test_a_paused_annotator_is_not_paused_again(self, project, annotator):
        configure(project, monitoring_evidence=1)
        standing(project, annotator, status=StandingStatus.PAUSED)
        self.answer_control(project, annotator, correct=False)
        assert rules_of(annotator) == []


# --- fast responses ------------------------------------------------------------------------------------


class TestFastResponses:
    """Paused when ``fast_response_count`` of the last ``fast_response_window`` submits (this one
    included) took less than ``fast_response_seconds``."""

    def submit_after(self, project: Project, user: Any, seconds: float) -> None:
        """``user`` submits real work ``seconds`` after leasing it, after the history (work_submitted)."""
        at = START + timedelta(hours=1)
        lease = work(project, user, status=AssignmentStatus.LEASED, at=at)
        work_submitted(stage=PREFILTER, assignment=lease, now=at + timedelta(seconds=seconds))

    def history(self, project: Project, user: Any, seconds: list[float]) -> None:
        """Submits done before, oldest first, each taking its seconds."""
        for i, s in enumerate(seconds):
            work(project, user, seconds=s, at=START + timedelta(minutes=i))

    @pytest.fixture(autouse=True)
    def rule(self, project, annotator):
        configure(project, fast_response_seconds=2.0, fast_response_count=3, fast_response_window=10, review_rate=0)
        standing(project, annotator)

    @pytest.mark.parametrize(
        ("seconds", "paused"),
        [(1.999, True), (2.0, False), (2.001, False)],  # just under the minimum time, at it, just over
    )
    def test_a_submit_at_the_minimum_time_is_not_fast(self, project, annotator, seconds, paused):
        # given two fast submits (1 s) before: one more fast submit pauses
        self.history(project, annotator, [1, 1])
        # when the next submit takes ``seconds``
        self.submit_after(project, annotator, seconds)
        # then only under 2 s it is fast
        assert status_of(annotator) == (StandingStatus.PAUSED if paused else StandingStatus.ACTIVE)
        assert Standing.objects.get(user=annotator).items_done == 1

    @pytest.mark.parametrize(("earlier", "paused"), [(1.999, True), (2.0, False)])
    def test_earlier_submits_at_the_minimum_time_are_not_fast(self, project, annotator, earlier, paused):
        # given two earlier submits that took ``earlier`` seconds
        self.history(project, annotator, [earlier, earlier])
        # when a fast one comes
        self.submit_after(project, annotator, 1)
        # then the earlier ones count as fast only under 2 s
        assert status_of(annotator) == (StandingStatus.PAUSED if paused else StandingStatus.ACTIVE)

    @pytest.mark.parametrize(("seconds", "paused"), [(1.999, True), (2.0, False)])
    def test_only_a_fast_submit_can_pause(self, project, annotator, seconds, paused):
        # given a window that already holds three fast submits (say, from before a lead reinstated them)
        self.history(project, annotator, [1, 1, 1])
        # when the next submit takes ``seconds``: then only a fast one pauses
        self.submit_after(project, annotator, seconds)
        assert status_of(annotator) == (StandingStatus.PAUSED if paused else StandingStatus.ACTIVE)

    @pytest.mark.parametrize(("fast_before", "paused"), [(1, False), (2, True), (3, True)])
    def test_the_count_of_fast_submits(self, project, annotator, fast_before, paused):
        # given ``fast_before`` fast submits among slow ones
        self.history(project, annotator, [30] * 4 + [1] * fast_before)
        # when one more is fast: 2, 3 or 4 fast submits of the last 10
        self.submit_after(project, annotator, 1)
        # then 3 pause
        assert status_of(annotator) == (StandingStatus.PAUSED if paused else StandingStatus.ACTIVE)
        if paused:
            event = QualityEvent.objects.get(user=annotator, rule="fast-responses")
            figures = {"fast": fast_before + 1, "window": 4 + fast_before + 1, "seconds": 2.0}
            assert event.figures.items() >= figures.items()

    @pytest.mark.parametrize(
        ("slow_since", "paused"),
        [(7, True), (8, False)],  # the older fast submits are in the last 10 / one is just outside
    )
    def test_only_the_window_counts(self, project, annotator, slow_since, paused):
        # given two fast submits, then ``slow_since`` slow ones
        self.history(project, annotator, [1, 1] + [30] * slow_since)
        # when one more is fast
        self.submit_after(project, annotator, 1)
        # then the older fast submits count while they are among the last 10 (this one included)
        assert status_of(annotator) == (StandingStatus.PAUSED if paused else StandingStatus.ACTIVE)

    def test_a_slow_submit_never_pauses(self, project, annotator):
        # given nine fast submits, when a slow one comes, then the rule does not look
        self.history(project, annotator, [1] * 9)
        self.submit_after(project, annotator, 30)
        assert status_of(annotator) == StandingStatus.ACTIVE

    def test_zero_seconds_turns_the_rule_off(self, project, annotator):
        configure(project, fast_response_seconds=0)
        self.history(project, annotator, [0.1] * 9)
        self.submit_after(project, annotator, 0.1)
        assert status_of(annotator) == StandingStatus.ACTIVE


# --- skips in a row --------------------------------------------------------------------------------------


class TestSkipsInARow:
    """Paused after ``skips_in_a_row`` skips with no submit between them; 0 turns the rule off."""

    @pytest.fixture(autouse=True)
    def queue(self, project):
        screens(project, 12)  # pre-filtering work; no gold: the annotator starts active

    def skip(self, project: Project, user: Any) -> None:
        lease = assignment_next(project=project, user=user, stage="prefilter")
        assert lease is not None
        assignment_skip(assignment_id=lease.pk, user=user, reason="cannot tell")

    @pytest.mark.parametrize(("skips", "paused"), [(2, False), (3, True)])
    def test_the_limit_of_skips(self, project, annotator, skips, paused):
        # given a limit of 3 skips in a row
        configure(project, skips_in_a_row=3)
        # when the annotator skips ``skips`` items in a row
        for _ in range(skips):
            self.skip(project, annotator)
        # then the third pauses
        assert status_of(annotator) == (StandingStatus.PAUSED if paused else StandingStatus.ACTIVE)
        if paused:
            assert rules_of(annotator) == ["started", "skips-in-a-row"]
            with pytest.raises(PermissionDeniedError, match="your last 3 items were skipped"):
                assignment_next(project=project, user=annotator, stage="prefilter")

    def test_a_submit_breaks_the_run(self, project, annotator):
        # given a limit of 3: two skips, a submit, two skips
        configure(project, skips_in_a_row=3)
        for _ in range(2):
            self.skip(project, annotator)
        work_prefilter(project, annotator, RIGHT)
        for _ in range(2):
            self.skip(project, annotator)
        # then four skips of five are not three in a row
        assert status_of(annotator) == StandingStatus.ACTIVE
        # until the next skip
        self.skip(project, annotator)
        assert status_of(annotator) == StandingStatus.PAUSED

    def test_zero_turns_the_rule_off(self, project, annotator):
        configure(project, skips_in_a_row=0)
        for _ in range(10):
            self.skip(project, annotator)
        assert status_of(annotator) == StandingStatus.ACTIVE


# --- writers: qualified by the review of their first submissions -----------------------------------------


class TestReviewQualification:
    """A writing stage has no gold: a writer's first ``qualification_review_sets`` submissions are
    all reviewed, and their share accepted is held to ``qualification_threshold``."""

    def reviewed(self, project: Project, user: Any, states: list[str]) -> Assignment:
        """Submissions of pass 1, in order, with their review states; the last reviewed is returned."""
        rows = [
            work(project, user, stage="questions-1", review_state=state, at=START + timedelta(minutes=i))
            for i, state in enumerate(states)
        ]
        last = [row for row in rows if row.review_state in (ReviewState.ACCEPTED, ReviewState.REJECTED)][-1]
        review_recorded(reviewed=last, now=START + timedelta(hours=1))
        return last

    @pytest.fixture(autouse=True)
    def writer(self, project, annotator):
        configure(project, qualification_review_sets=10)
        standing(
            project,
            annotator,
            stage="questions-1",
            status=StandingStatus.QUALIFYING,
            attempt=1,
            attempt_started_at=START - timedelta(hours=1),
        )

    @pytest.mark.parametrize(
        ("accepted", "status", "rule"),
        [
            (8, StandingStatus.NOT_QUALIFIED, "review-not-qualified"),  # 80%: under 90%
            (9, StandingStatus.ACTIVE, "review-qualified"),  # exactly at the threshold
            (10, StandingStatus.ACTIVE, "review-qualified"),  # over
        ],
    )
    def test_the_share_accepted_at_the_threshold_qualifies(self, project, annotator, accepted, status, rule):
        # given 10 first submissions reviewed, ``accepted`` of them accepted (the rejected ones first)
        states = [ReviewState.REJECTED] * (10 - accepted) + [ReviewState.ACCEPTED] * accepted
        self.reviewed(project, annotator, states)
        # then 90% qualifies
        assert status_of(annotator, "questions-1") == status
        event = QualityEvent.objects.get(user=annotator, rule=rule)
        assert (event.figures["accepted"], event.figures["reviewed"]) == (accepted, 10)

    def test_no_decision_before_every_first_submission_is_reviewed_while_the_writer_can_still_qualify(
        self, project, annotator
    ):
        # given 9 reviewed, one rejected (9 of 10 still qualify), and the 10th still waiting for its review
        self.reviewed(project, annotator, [ReviewState.REJECTED] + [ReviewState.ACCEPTED] * 8 + [ReviewState.SAMPLED])
        # then nothing is decided yet
        assert status_of(annotator, "questions-1") == StandingStatus.QUALIFYING
        assert rules_of(annotator) == []

    def test_a_writer_who_can_no_longer_qualify_is_decided_at_once(self, project, annotator):
        # given two of the first ten rejected (8 of 10 at best: under 90%), the rest not reviewed yet, and a
        # later submission: the spam writer of the adversarial benchmark, which the end of a stage used to
        # find still qualifying
        states = [ReviewState.SAMPLED, ReviewState.REJECTED, ReviewState.SAMPLED, ReviewState.REJECTED]
        self.reviewed(project, annotator, states)
        # then they are not qualified now, saying why
        row = Standing.objects.get(user=annotator, stage="questions-1")
        assert (row.status, row.reason) == (
            StandingStatus.NOT_QUALIFIED,
            "2 of your first 10 submissions rejected: too many to qualify",
        )
        event = QualityEvent.objects.get(user=annotator, rule="review-not-qualified")
        assert (event.figures["accepted"], event.figures["reviewed"], event.figures["decided_early"]) == (0, 2, True)

    def test_a_rejection_after_the_first_submissions_decides_nothing_early(self, project, annotator):
        # given one rejection among the first ten (still possible: 9 of 10) and two rejected after them
        configure(project, qualification_review_sets=10)
        states = [ReviewState.REJECTED] + [ReviewState.SAMPLED] * 9 + [ReviewState.REJECTED] * 2
        self.reviewed(project, annotator, states)
        # then the later ones do not count: nothing is decided yet
        assert status_of(annotator, "questions-1") == StandingStatus.QUALIFYING

    def test_only_the_first_submissions_count(self, project, annotator):
        # given the first 10 with 9 accepted, and two later submissions rejected
        states = [ReviewState.ACCEPTED] * 9 + [ReviewState.REJECTED] * 3
        self.reviewed(project, annotator, states)
        # then the first 10 decide: qualified
        assert status_of(annotator, "questions-1") == StandingStatus.ACTIVE

    def test_submissions_before_the_attempt_do_not_count(self, project, annotator):
        # given two rejected submissions before the attempt started (an earlier qualification)
        for i in range(2):
            work(
                project,
                annotator,
                stage="questions-1",
                review_state=ReviewState.REJECTED,
                at=START - timedelta(hours=2, minutes=i),
            )
        # when the attempt's first 10 are 9 accepted
        self.reviewed(project, annotator, [ReviewState.REJECTED] + [ReviewState.ACCEPTED] * 9)
        # then only those count
        assert status_of(annotator, "questions-1") == StandingStatus.ACTIVE

    def test_the_decision_writes_its_reason_and_figures(self, project, annotator):
        configure(project, qualification_review_sets=3, qualification_threshold=0.6)
        self.reviewed(project, annotator, [ReviewState.ACCEPTED, ReviewState.REJECTED, ReviewState.ACCEPTED])
        row = Standing.objects.get(user=annotator, stage="questions-1")
        assert (row.status, row.reason) == (StandingStatus.ACTIVE, "2 of your first 3 accepted")
        event = QualityEvent.objects.get(user=annotator, rule="review-qualified")
        assert event.figures == {"accepted": 2, "reviewed": 3, "score": 0.6667, "threshold": 0.6}

    def test_the_first_submissions_are_the_earliest_submitted_not_the_first_ids(self, project, annotator):
        # given 3 sets: the one with the highest id was submitted first, and is the only one rejected
        configure(project, qualification_review_sets=2, qualification_threshold=1.0)
        later = [
            work(
                project,
                annotator,
                stage="questions-1",
                review_state=ReviewState.ACCEPTED,
                at=START + timedelta(minutes=m),
            )
            for m in (10, 20)
        ]
        first = work(project, annotator, stage="questions-1", review_state=ReviewState.REJECTED, at=START)
        assert first.pk > later[-1].pk
        review_recorded(reviewed=later[-1], now=START + timedelta(hours=1))
        # then the first two submitted (one rejected) decide: not qualified at 100%
        assert status_of(annotator, "questions-1") == StandingStatus.NOT_QUALIFIED

    def test_other_writers_stages_and_projects_do_not_count(self, project, annotator):
        # given one of theirs accepted, of two needed, and accepted sets that are not theirs to count
        configure(project, qualification_review_sets=2)
        other = member(project, "other")
        work(project, other, stage="questions-1", review_state=ReviewState.ACCEPTED, at=START)
        work(project, annotator, stage="questions-2", review_state=ReviewState.ACCEPTED, at=START)
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        work(elsewhere, annotator, stage="questions-1", review_state=ReviewState.ACCEPTED, at=START)
        self.reviewed(project, annotator, [ReviewState.ACCEPTED])
        # then nothing is decided: one of two
        assert status_of(annotator, "questions-1") == StandingStatus.QUALIFYING

    def test_a_writer_who_is_not_qualifying_is_left_alone(self, project, annotator):
        Standing.objects.filter(user=annotator).update(status=StandingStatus.ACTIVE)
        self.reviewed(project, annotator, [ReviewState.REJECTED] * 10)
        assert status_of(annotator, "questions-1") == StandingStatus.ACTIVE
        assert rules_of(annotator) == []


# --- who is never gated ----------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["lead", "admin"])
def test_leads_and_site_admins_are_never_gated(project, who):
    # given a paused standing (as if a rule had paused them)
    user = member(project, "leo", role="lead") if who == "lead" else member(project, "root")
    if who == "admin":
        type(user).objects.filter(pk=user.pk).update(is_superuser=True)
        user.refresh_from_db()
    standing(project, user, status=StandingStatus.PAUSED)
    membership = Membership.objects.get(project=project, user=user)
    brief = standing_read(project=project, user=user, stage="prefilter")
    # then they get real work
    plan = plan_next(stage=PREFILTER, project=project, user=user, membership=membership, standing=brief, now=START)
    assert plan.purpose == Purpose.WORK


# --- what each decision writes: the standing's reason and evidence, the event, the refusal's words ---


class TestDecisionsInDetail:
    def test_a_pass_writes_its_reason_resets_the_evidence_and_records_the_figures(self, project, annotator):
        configure(project, qualification_items=3, qualification_threshold=0.6)
        row = standing(
            project, annotator, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START, evidence=0.7
        )
        for i in range(3):
            control(project, annotator, correct=i < 2, purpose=Purpose.QUALIFICATION, attempt=1)
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        row = Standing.objects.get(pk=row.pk)
        assert (row.status, row.reason, row.evidence) == (StandingStatus.ACTIVE, "qualified with 2 of 3", 0.0)
        event = QualityEvent.objects.get(user=annotator, rule="qualification-passed")
        assert (event.status_before, event.status_after, event.stage, event.project_id) == (
            "qualifying",
            "active",
            "prefilter",
            project.pk,
        )
        assert event.figures == {"attempt": 1, "correct": 2, "items": 3, "score": 0.6667, "threshold": 0.6}

    def test_with_nothing_served_and_no_gold_left_the_annotator_starts_active(self, project, annotator):
        row = standing(
            project, annotator, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START, evidence=0.4
        )
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        row = Standing.objects.get(pk=row.pk)
        assert (row.status, row.reason, row.evidence) == (
            StandingStatus.ACTIVE,
            "no gold items were left for a qualification",
            0.0,
        )
        event = QualityEvent.objects.get(user=annotator)
        assert (event.rule, event.status_before, event.status_after, event.figures) == (
            "no-gold",
            "qualifying",
            "active",
            {},
        )

    def test_only_the_annotators_own_items_of_this_project_stage_and_purpose_count(self, project, annotator):
        # given a set of 2, one item done right; the other waits on a gold item still to serve
        configure(project, qualification_items=2)
        row = standing(project, annotator, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START)
        control(project, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
        gold(project)
        # and done items that are not of this set: another annotator's, a control item, another
        # stage's, another project's
        other = member(project, "other")
        control(project, other, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
        control(project, annotator, correct=True, purpose=Purpose.CONTROL)
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        control(elsewhere, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
        work(project, annotator)  # real work of the stage
        # then the set is not decided: one of two done
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        assert status_of(annotator) == StandingStatus.QUALIFYING

    def test_a_leased_item_holds_the_decision_even_with_no_gold_left(self, project, annotator):
        configure(project, qualification_items=2, qualification_extra_items=0)
        row = standing(project, annotator, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START)
        control(project, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
        lease = Assignment.objects.filter(annotator=annotator).first()
        item = gold(project)
        held = Assignment.objects.create(
            project=project,
            stage="prefilter",
            screen=item.screen,
            gold=item,
            annotator=annotator,
            status=AssignmentStatus.LEASED,
            lease_expires_at=START + timedelta(hours=1),
            purpose=Purpose.QUALIFICATION,
            attempt=1,
        )
        assert lease is not None and held.pk != lease.pk
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        assert status_of(annotator) == StandingStatus.QUALIFYING
        # once the lease ran out, it is done (and wrong): 1 of 2
        Assignment.objects.filter(pk=held.pk).update(status=AssignmentStatus.EXPIRED)
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        assert Standing.objects.get(pk=row.pk).reason.startswith("1 of 2 right")

    @pytest.mark.parametrize(("reason", "said"), [("3 of 10 right", ": 3 of 10 right"), ("", "")])
    def test_the_refusal_after_the_last_attempt_gives_the_reason(self, project, annotator, reason, said):
        configure(project, qualification_attempts=1)
        gold(project)
        standing(project, annotator, status=StandingStatus.NOT_QUALIFIED, attempt=1, reason=reason)
        # another stage's and another project's standings of theirs are not read
        standing(project, annotator, stage="answers", status=StandingStatus.NOT_QUALIFIED, reason="other stage")
        with pytest.raises(PermissionDeniedError) as err:
            assignment_next(project=project, user=annotator, stage="prefilter")
        assert str(err.value.message) == f"You did not qualify for Pre-filtering{said}. Ask a lead."

    def test_the_cooldown_refusal_says_when_and_how_many_attempts_were_used(self, project, annotator, settings):
        settings.TIME_ZONE = "UTC"
        gold(project)
        now = timezone.now()
        standing(project, annotator, status=StandingStatus.NOT_QUALIFIED, attempt=1, attempt_started_at=now)
        with pytest.raises(PermissionDeniedError) as err:
            assignment_next(project=project, user=annotator, stage="prefilter")
        ready = timezone.localtime(now + timedelta(hours=24))
        assert str(err.value.message) == (
            f"You did not qualify for Pre-filtering yet; you can try again after {ready:%Y-%m-%d %H:%M} "
            "(1 of 3 attempts used)."
        )

    def test_a_retry_starts_the_next_attempt_and_keeps_the_counts(self, project, annotator):
        gold(project)
        past = timezone.now() - timedelta(hours=25)
        row = standing(
            project,
            annotator,
            status=StandingStatus.NOT_QUALIFIED,
            attempt=1,
            attempt_started_at=past,
            items_done=7,
            controls_done=3,
        )
        brief = plan_next(
            stage=PREFILTER,
            project=project,
            user=annotator,
            membership=None,
            standing=standing_read(project=project, user=annotator, stage="prefilter"),
            now=timezone.now(),
        )
        assert (brief.purpose, brief.attempt) == (Purpose.QUALIFICATION, 2)
        row = Standing.objects.get(pk=row.pk)
        assert (row.status, row.reason, row.attempt, row.items_done, row.controls_done) == (
            StandingStatus.QUALIFYING,
            "qualification attempt 2",
            2,
            7,
            3,
        )
        event = QualityEvent.objects.get(user=annotator, rule="qualification-retry")
        assert (event.figures, event.status_before) == ({"attempt": 2}, "not_qualified")

    def test_a_retry_without_a_start_time_counts_from_the_last_change(self, project, annotator):
        row = standing(project, annotator, status=StandingStatus.NOT_QUALIFIED, attempt=1)
        Standing.objects.filter(pk=row.pk).update(updated_at=START)
        row = Standing.objects.get(pk=row.pk)
        assert row.attempt_started_at is None
        assert retry_after(stage=PREFILTER, standing=row, project=project) == START + timedelta(hours=24)

    @pytest.mark.parametrize(
        ("reason", "said"), [("4 of 5 control items wrong", ": 4 of 5 control items wrong"), ("", "")]
    )
    def test_a_paused_annotator_is_told_why_in_this_stage(self, project, annotator, reason, said):
        standing(project, annotator, status=StandingStatus.PAUSED, reason=reason)
        standing(project, annotator, stage="answers", status=StandingStatus.PAUSED, reason="another stage's")
        with pytest.raises(PermissionDeniedError) as err:
            assignment_next(project=project, user=annotator, stage="prefilter")
        assert str(err.value.message) == f"You are paused in Pre-filtering{said}. A lead can reinstate you."


class TestFirstContactAndPauses:
    @pytest.mark.parametrize(
        ("stage", "with_gold", "status", "attempt", "reason", "mode"),
        [
            ("prefilter", True, StandingStatus.QUALIFYING, 1, "qualification set", "gold"),
            # no gold yet: nothing to qualify on
            (
                "prefilter",
                False,
                StandingStatus.ACTIVE,
                0,
                "no gold item to qualify on yet: your qualification set comes once there is",
                "",
            ),
            ("questions-1", False, StandingStatus.QUALIFYING, 1, "first submissions are reviewed", "review"),
        ],
    )
    def test_first_contact_with_a_stage(self, project, annotator, stage, with_gold, status, attempt, reason, mode):
        if with_gold:
            gold(project)
        now = timezone.now()
        plan_next(stage=stage_get(stage), project=project, user=annotator, membership=None, standing=None, now=now)
        row = Standing.objects.get(user=annotator, stage=stage)
        assert (row.status, row.attempt, row.reason) == (status, attempt, reason)
        assert row.attempt_started_at == (now if mode else None)
        event = QualityEvent.objects.get(user=annotator)
        assert (event.rule, event.status_before, event.status_after, event.figures) == (
            "started",
            "",
            status,
            {"mode": mode},
        )

    def test_a_qualifying_writers_cap_counts_their_own_waiting_submissions_of_the_stage(self, project, annotator):
        configure(project, qualification_review_sets=2)
        row = standing(project, annotator, stage="questions-1", status=StandingStatus.QUALIFYING, attempt=1)
        brief = standing_read(project=project, user=annotator, stage="questions-1")
        other = member(project, "other")

        def submitted(user, *, stage="questions-1", review_state=ReviewState.SAMPLED, proj=project):
            return work(proj, user, stage=stage, review_state=review_state)

        # one waiting of theirs, and waiting or decided ones that are not theirs or not of the stage
        submitted(annotator)
        submitted(other)
        submitted(annotator, stage="questions-2")
        submitted(annotator, review_state=ReviewState.ACCEPTED)
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        submitted(annotator, proj=elsewhere)
        plan = plan_next(stage=WRITING, project=project, user=annotator, membership=None, standing=brief, now=START)
        assert plan.review is True
        # a second waiting one of theirs reaches the cap
        submitted(annotator)
        with pytest.raises(PermissionDeniedError) as err:
            plan_next(stage=WRITING, project=project, user=annotator, membership=None, standing=brief, now=START)
        assert str(err.value.message) == (
            "Your first 2 submissions in Questions, pass 1 are waiting for review; "
            "you can go on once a reviewer has looked at them."
        )
        assert err.value.extra == {"waiting_for": "review"}
        assert row.status == StandingStatus.QUALIFYING

    def test_a_lead_pauses_without_withdrawing_and_is_named(self, project, annotator, lead):
        # given an active annotator with a submitted judgment, a live lease, and a lease in another stage
        gold_prefilter(project, 0)
        standing(project, annotator)
        screens(project, 2)
        done = work_prefilter(project, annotator, RIGHT)
        held = assignment_next(project=project, user=annotator, stage="prefilter")
        standing_act(
            project=project, user_id=annotator.pk, stage="prefilter", action="pause", actor=lead, note="Checking."
        )
        event = QualityEvent.objects.filter(user=annotator).latest("pk")
        assert (event.actor_id, event.note, event.status_after) == (lead.pk, "Checking.", "paused")
        held.refresh_from_db()
        done.refresh_from_db()
        assert held.status == AssignmentStatus.RELEASED
        assert done.status == AssignmentStatus.SUBMITTED
        assert PrefilterJudgment.objects.get(assignment=done).withdrawn_by is None

    def test_a_rules_pause_releases_only_this_stages_leases_and_says_what_it_did(self, project, annotator):
        # given an annotator with a live lease in pre-filtering, and another in pass 1 of another project
        screens(project, 2)
        held = assignment_next(project=project, user=annotator, stage="prefilter")
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        MembershipFactory(project=elsewhere, user=annotator)
        screens(elsewhere, 1)
        far = assignment_next(project=elsewhere, user=annotator, stage="prefilter")
        # and another annotator's lease in the stage, and the annotator's own lease in pass 1
        theirs = assignment_next(project=project, user=member(project, "neighbour"), stage="prefilter")
        (writing,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
        own_other_stage = Assignment.objects.create(
            project=project,
            stage="questions-1",
            screen=writing,
            annotator=annotator,
            status=AssignmentStatus.LEASED,
            lease_expires_at=timezone.now() + timedelta(minutes=10),
        )
        configure(project, paused_work="requeue")
        decision = rule_pause(project, annotator, "prefilter")
        for row in (held, far, theirs, own_other_stage):
            row.refresh_from_db()
        assert (held.status, far.status) == (AssignmentStatus.RELEASED, AssignmentStatus.LEASED)
        assert (theirs.status, own_other_stage.status) == (AssignmentStatus.LEASED, AssignmentStatus.LEASED)
        assert decision.figures["released"] == 1 and decision.figures["paused_work"] == "requeue"
        assert decision.actor_id is None
        # a project that keeps paused work: leases released, nothing withdrawn, no paused_work figure
        other = member(project, "other")
        configure(project, paused_work="keep")
        kept = rule_pause(project, other, "prefilter")
        assert kept.figures == {"correct": 2, "items": 5, "released": 0}  # the rule's own figures, and what it did


class TestControlItemsLeft:
    """A control or qualification item skipped or given back scores as wrong, with the reason shown."""

    def lease_control(self, project, annotator):
        configure(project, control_rate=1.0, control_rate_new=1.0)
        items = gold_prefilter(project, 2)
        screens(project, 1)  # real work waits (a control item is served only then)
        standing(project, annotator)
        lease = assignment_next(project=project, user=annotator, stage="prefilter")
        assert lease.purpose == Purpose.CONTROL
        return lease, {item.pk: item for item in items}[lease.gold_id]

    def test_a_skipped_control_item_scores_wrong_once_with_its_reason(self, project, annotator):
        lease, item = self.lease_control(project, annotator)
        assignment_skip(assignment_id=lease.pk, user=annotator, reason="The screen did not load.")
        result = ControlResult.objects.get(assignment=lease)
        assert (result.correct, result.purpose, result.gold_id) == (False, Purpose.CONTROL, item.pk)
        assert result.feedback == {
            "given": None,
            "gold": item.answer,
            "why": "Skipped: a skipped control item counts as wrong.",
        }
        # and once only: leaving it again records nothing more
        lease.refresh_from_db()
        gold_left(stage=PREFILTER, assignment=lease, outcome="expired", now=timezone.now())
        assert ControlResult.objects.filter(assignment=lease).count() == 1

    def test_real_work_left_is_not_scored(self, project, annotator):
        screens(project, 1)
        standing(project, annotator)
        lease = assignment_next(project=project, user=annotator, stage="prefilter")
        assert lease.purpose == Purpose.WORK
        gold_left(stage=PREFILTER, assignment=lease, outcome="skipped", now=timezone.now())
        assert not ControlResult.objects.exists()


class TestCountsAndRates:
    def test_review_sampling_draws_each_submission_at_the_rate(self, project, annotator):
        # given an active writer's 200 pass-1 submissions, each checked as the engine does
        def sampled_share(rate: float) -> float:
            configure(project, review_rate=rate)
            picked = 0
            for _ in range(200):
                row = work(project, annotator, stage="questions-1", review_state=ReviewState.NONE)
                picked += work_submitted(stage=WRITING, assignment=row, now=START) == ReviewState.SAMPLED
            return picked / 200

        standing(project, annotator, stage="questions-1")
        assert sampled_share(0.0) == 0.0
        assert sampled_share(1.0) == 1.0
        assert 0.3 <= sampled_share(0.5) <= 0.7  # a draw per submission: neither none nor all
        # a submission the engine already sent to review (a qualifying writer's) stays sampled
        configure(project, review_rate=0.0)
        row = work(project, annotator, stage="questions-1", review_state=ReviewState.SAMPLED)
        assert work_submitted(stage=WRITING, assignment=row, now=START) == ReviewState.SAMPLED
        # and the review stage's own submissions are never sampled for review
        configure(project, review_rate=1.0)
        row = work(project, annotator, stage="questions-1", review_state=ReviewState.NONE)
        assert work_submitted(stage=stage_get("review"), assignment=row, now=START) == ReviewState.NONE

    def test_a_writer_cannot_compute_which_submissions_review_samples(self, project, annotator, settings):
        # given an active writer who reads the code: the assignment's id is in every ``next`` payload,
        # and the review draw used to be a plain SHA-256 of it (write well where it samples, junk elsewhere)
        def public_draw(pk: int) -> bool:
            digest = hashlib.sha256(f"{pk}\x1freview".encode()).digest()
            return int.from_bytes(digest[:8], "big") / 2**64 < 0.5

        standing(project, annotator, stage="questions-1")
        configure(project, review_rate=0.5)
        rows = [work(project, annotator, stage="questions-1", review_state=ReviewState.NONE) for _ in range(120)]
        sampled = [work_submitted(stage=WRITING, assignment=row, now=START) == ReviewState.SAMPLED for row in rows]
        # then the public formula guesses no better than a coin (binomial(120, 0.5): 99.99% within 0.33-0.67)
        guessed = sum(public_draw(row.pk) == drawn for row, drawn in zip(rows, sampled, strict=True)) / len(rows)
        assert 0.33 <= guessed <= 0.67, guessed
        # and the draw is fixed by the site's secret: the same secret draws the same (a retried submit, any
        # process), another secret other submissions
        assert [secret_draw("review", row.pk) < 0.5 for row in rows] == sampled
        settings.SECRET_KEY = "another secret of another site"
        redrawn = [secret_draw("review", row.pk) < 0.5 for row in rows]
        assert 0.25 <= sum(a == b for a, b in zip(redrawn, sampled, strict=True)) / len(rows) <= 0.75

    def test_a_submit_counts_in_its_own_standing_only(self, project, annotator):
        mine = standing(project, annotator)
        other_stage = standing(project, annotator, stage="answers")
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        other_project = standing(elsewhere, annotator)
        row = work(project, annotator, stage="prefilter", review_state=ReviewState.NONE)
        work_submitted(stage=PREFILTER, assignment=row, now=START)
        counts = {s.pk: s.items_done for s in Standing.objects.all()}
        assert counts == {mine.pk: 1, other_stage.pk: 0, other_project.pk: 0}
        assert standing_read(project=project, user=annotator, stage="prefilter").items_done == 1
        assert standing_read(project=elsewhere, user=annotator, stage="prefilter").items_done == 0
        assert standing_read(project=project, user=member(project, "new"), stage="prefilter") is None

    @pytest.mark.parametrize(
        ("items_done", "evidence", "rate"),
        [(4, 0.0, 0.3), (5, 0.0, 0.1), (6, 0.0, 0.1), (6, 0.5, 0.5), (2, 0.5, 0.5), (6, 1.5, 0.5)],
    )
    def test_the_control_rate_new_then_usual_and_on_alert(self, project, items_done, evidence, rate):
        configure(project, control_rate_new=0.3, control_new_items=5, control_rate=0.1, control_rate_alert=0.5)
        brief = StandingBrief("active", 0, items_done, 0, evidence)
        assert control_rate_for(project=project, standing=brief) == rate

    def test_a_control_submission_keeps_what_was_given_the_gold_and_why(self, project, annotator):
        configure(project, control_rate=1.0, control_rate_new=1.0)
        (item,) = gold_prefilter(project, 1)
        screens(project, 1)
        standing(project, annotator)
        lease = assignment_next(project=project, user=annotator, stage="prefilter")
        assert lease.gold_id == item.pk
        assignment_submit(assignment_id=lease.pk, user=annotator, data=dict(WRONG))
        result = ControlResult.objects.get(assignment=lease)
        assert result.correct is False
        assert set(result.feedback) == {"given", "gold", "why"}
        assert (result.feedback["gold"], result.feedback["given"]["non_english_app"]) == (item.answer, True)
        assert result.feedback["why"]


class TestWorkRefusal:
    """Work submitted on a lease that is no longer open: refused while paused, not qualified or
    qualifying on gold; the words say why."""

    @pytest.mark.parametrize(
        ("status", "reason", "said"),
        [
            (
                StandingStatus.PAUSED,
                "too fast",
                "You are paused in Pre-filtering: too fast; this work is not accepted.",
            ),
            (StandingStatus.PAUSED, "", "You are paused in Pre-filtering; this work is not accepted."),
            (
                StandingStatus.NOT_QUALIFIED,
                "1 of 2 right",
                "You did not qualify for Pre-filtering: 1 of 2 right; this work is not accepted.",
            ),
            (StandingStatus.QUALIFYING, "", "You are qualifying for Pre-filtering; finish the qualification first."),
            (StandingStatus.ACTIVE, "", None),
        ],
    )
    def test_the_refusal_says_why(self, project, annotator, status, reason, said):
        standing(project, annotator, status=status, reason=reason)
        standing(project, annotator, stage="answers", status=StandingStatus.ACTIVE)  # another stage: not read
        assert work_refusal(stage=PREFILTER, project=project, user=annotator) == said

    def test_only_this_projects_standing_counts_and_none_means_no_refusal(self, project, annotator):
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        MembershipFactory(project=elsewhere, user=annotator)
        standing(elsewhere, annotator, status=StandingStatus.PAUSED, reason="elsewhere")
        assert work_refusal(stage=PREFILTER, project=project, user=annotator) is None
        other = member(project, "other")
        standing(project, other, status=StandingStatus.PAUSED)
        assert work_refusal(stage=PREFILTER, project=project, user=annotator) is None

    def test_a_writer_qualifying_by_review_may_submit(self, project, annotator):
        standing(project, annotator, stage="questions-1", status=StandingStatus.QUALIFYING)
        assert work_refusal(stage=WRITING, project=project, user=annotator) is None

    def test_a_lead_is_never_refused(self, project, lead):
        standing(project, lead, status=StandingStatus.PAUSED, reason="x")
        assert work_refusal(stage=PREFILTER, project=project, user=lead) is None

    def test_a_paused_annotators_released_lease_is_refused_on_submit(self, project, annotator):
        screens(project, 1)
        standing(project, annotator)
        lease = assignment_next(project=project, user=annotator, stage="prefilter")
        rule_pause(project, annotator, "prefilter")
        with pytest.raises(PermissionDeniedError) as err:
            assignment_submit(assignment_id=lease.pk, user=annotator, data=dict(RIGHT))
        assert str(err.value.message).startswith("You are paused in Pre-filtering")
        assert not PrefilterJudgment.objects.exists()


class TestReviewQualificationsReopen:
    """Reviews withdrawn (their reviewer stopped): a qualification by review decided on them is open again."""

    def decided(self, project, user, *, status=StandingStatus.ACTIVE, rule="review-qualified", actor=None):
        """``user``'s qualification by review decided at START + 1 h on a submission made at START."""
        row = standing(project, user, stage="questions-1", status=status, attempt=1, attempt_started_at=START)
        submission = work(project, user, stage="questions-1", review_state=ReviewState.ACCEPTED, at=START)
        Assignment.objects.filter(pk=submission.pk).update(submitted_at=START + timedelta(minutes=5))
        submission.refresh_from_db()
        event = QualityEvent.objects.create(
            project=project,
            user=user,
            stage="questions-1",
            rule=rule,
            actor=actor,
            status_before="qualifying",
            status_after=status,
        )
        QualityEvent.objects.filter(pk=event.pk).update(created_at=START + timedelta(hours=1))
        event.refresh_from_db()
        return row, submission, event

    def test_each_writer_decided_on_a_withdrawn_review_qualifies_again(self, project, annotator):
        # given a writer decided by a lead (the lowest id: handled first), one whose standing is paused,
        # and two qualified on reviews made before their decisions
        paused, other, third = member(project, "paused"), member(project, "other"), member(project, "third")
        lead = member(project, "lead", role="lead")
        _, by_lead, _ = self.decided(project, annotator, rule="lead-reinstate", actor=lead)
        _, moved_on, _ = self.decided(project, paused, status=StandingStatus.PAUSED)
        _, theirs, _ = self.decided(project, other, status=StandingStatus.NOT_QUALIFIED, rule="review-not-qualified")
        _, mine, decision = self.decided(project, third)
        # when the four reviews are withdrawn: the ones that stay are skipped, not the end of the list
        made = START + timedelta(minutes=30)
        withdrawn = [(mine, made), (theirs, made), (moved_on, made), (by_lead, made)]
        reopened = review_qualifications_reopen(withdrawn=withdrawn, now=START + timedelta(hours=2))
        # then both writers qualify again, the lead's decision and the paused standing stay
        assert reopened == 2
        assert status_of(third, "questions-1") == status_of(other, "questions-1") == StandingStatus.QUALIFYING
        assert status_of(annotator, "questions-1") == StandingStatus.ACTIVE
        assert status_of(paused, "questions-1") == StandingStatus.PAUSED
        row = Standing.objects.get(user=third, stage="questions-1")
        assert row.reason == "first submissions are reviewed again"
        event = QualityEvent.objects.filter(user=third).latest("pk")
        assert (event.rule, event.status_before, event.figures) == (
            "review-reopened",
            "active",
            {"overturned": "review-qualified", "overturned_event": decision.pk},
        )

    @pytest.mark.parametrize(
        ("submitted", "reviewed", "reopened"),
        [
            (START, START + timedelta(minutes=30), 1),  # submitted as the attempt started: counted
            (START - timedelta(seconds=1), START + timedelta(minutes=30), 0),  # before the attempt
            (START + timedelta(minutes=5), START + timedelta(hours=1), 1),  # reviewed as the decision was made
            (START + timedelta(minutes=5), START + timedelta(hours=1, seconds=1), 0),  # reviewed after it
        ],
    )
    def test_only_a_review_the_decision_could_have_counted(self, project, annotator, submitted, reviewed, reopened):
        _, submission, _ = self.decided(project, annotator)
        Assignment.objects.filter(pk=submission.pk).update(submitted_at=submitted)
        submission.refresh_from_db()
        assert (
            review_qualifications_reopen(withdrawn=[(submission, reviewed)], now=START + timedelta(hours=2)) == reopened
        )

    def test_the_decision_is_this_stages_and_projects_latest_event(self, project, annotator):
        _, submission, _ = self.decided(project, annotator)
        # later events of the writer in another stage and in another project do not hide the decision
        for project_id, stage in ((project.pk, "prefilter"),):
            QualityEvent.objects.create(project_id=project_id, user=annotator, stage=stage, rule="lead-pause")
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        QualityEvent.objects.create(project=elsewhere, user=annotator, stage="questions-1", rule="lead-pause")
        made = START + timedelta(minutes=30)
        assert review_qualifications_reopen(withdrawn=[(submission, made)], now=START + timedelta(hours=2)) == 1

    def test_a_later_decision_of_a_lead_stays(self, project, annotator):
        lead = member(project, "lead", role="lead")
        _, submission, _ = self.decided(project, annotator)
        later = QualityEvent.objects.create(
            project=project, user=annotator, stage="questions-1", rule="lead-reinstate", actor=lead
        )
        QualityEvent.objects.filter(pk=later.pk).update(created_at=START + timedelta(hours=1, minutes=1))
        made = START + timedelta(minutes=30)
        assert review_qualifications_reopen(withdrawn=[(submission, made)], now=START + timedelta(hours=2)) == 0

    def test_a_review_of_a_stage_qualified_on_gold_is_passed_over_not_the_end(self, project, annotator):
        # given a withdrawn review of pre-filtering work (a stage qualified on gold: nothing to reopen),
        # listed first (the annotator's id is the lowest), and a writer qualified on a withdrawn review
        writer = member(project, "writer")
        _, submission, _ = self.decided(project, writer)
        judged = work(project, annotator, stage="prefilter", review_state=ReviewState.ACCEPTED, at=START)
        made = START + timedelta(minutes=30)
        withdrawn = [(submission, made), (judged, made)]
        # then the writer qualifies again
        assert review_qualifications_reopen(withdrawn=withdrawn, now=START + timedelta(hours=2)) == 1
        assert status_of(writer, "questions-1") == StandingStatus.QUALIFYING

    def test_a_review_made_after_the_decision_is_passed_over_not_the_end(self, project, annotator):
        # given a writer (listed first) whose withdrawn review was made after their decision, and a
        # second writer whose withdrawn review was made before theirs
        _, late, _ = self.decided(project, annotator)
        writer = member(project, "writer")
        _, submission, _ = self.decided(project, writer)
        withdrawn = [(submission, START + timedelta(minutes=30)), (late, START + timedelta(hours=1, minutes=1))]
        # then only the second writer qualifies again
        assert review_qualifications_reopen(withdrawn=withdrawn, now=START + timedelta(hours=2)) == 1
        assert status_of(writer, "questions-1") == StandingStatus.QUALIFYING
        assert status_of(annotator, "questions-1") == StandingStatus.ACTIVE


class TestScopes:
    """Every read of a standing, a set or a count is of this annotator, project, stage (and attempt)."""

    def decoys(self, project, annotator, status):
        """Standings that must not be read, made first (so that an unfiltered read would find them)."""
        other = member(project, "decoy")
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        standing(project, other, status=status, reason="someone else's", attempt=3)
        standing(elsewhere, annotator, status=status, reason="another project's", attempt=3)
        standing(project, annotator, stage="answers", status=status, reason="another stage's", attempt=3)

    def test_the_paused_refusal_reads_this_standing(self, project, annotator):
        self.decoys(project, annotator, StandingStatus.PAUSED)
        standing(project, annotator, status=StandingStatus.PAUSED, reason="mine")
        with pytest.raises(PermissionDeniedError, match=r"You are paused in Pre-filtering: mine\. A lead"):
            assignment_next(project=project, user=annotator, stage="prefilter")

    def test_the_not_qualified_refusal_reads_this_standing(self, project, annotator):
        configure(project, qualification_attempts=3)
        gold(project)
        self.decoys(project, annotator, StandingStatus.NOT_QUALIFIED)
        standing(
            project, annotator, status=StandingStatus.NOT_QUALIFIED, reason="mine", attempt=1, attempt_started_at=START
        )
        # their own first attempt, long ago: a retry (the decoys, at their last attempt, would refuse)
        lease = assignment_next(project=project, user=annotator, stage="prefilter")
        assert (lease.purpose, lease.attempt) == (Purpose.QUALIFICATION, 2)

    def test_standing_read_is_of_the_stage(self, project, annotator):
        standing(project, annotator, stage="answers")
        assert standing_read(project=project, user=annotator, stage="prefilter") is None

    def test_a_sets_score_counts_its_own_results_only(self, project, annotator):
        # given a set of 2, both done (one right, one wrong), and right results that are not of this set
        configure(
            project,
            qualification_items=2,
            qualification_threshold=1.0,
            qualification_attempts=2,
            qualification_extra_items=0,
        )
        row = standing(project, annotator, status=StandingStatus.QUALIFYING, attempt=2, attempt_started_at=START)
        control(project, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
        control(project, annotator, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
        control(project, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
        control(project, annotator, correct=True, purpose=Purpose.CONTROL, attempt=2)
        elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
        control(elsewhere, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        # then 1 of 2: not qualified, and on the last attempt no retry is offered
        assert Standing.objects.get(pk=row.pk).reason == "1 of 2 right"

    def test_the_review_cap_counts_submissions_not_leases(self, project, annotator):
        configure(project, qualification_review_sets=1)
        standing(project, annotator, stage="questions-1", status=StandingStatus.QUALIFYING, attempt=1)
        brief = standing_read(project=project, user=annotator, stage="questions-1")
        # a live lease of theirs, marked for review as a qualifying writer's leases are
        (screen,) = screens(project, 1)
        Assignment.objects.create(
            project=project,
            stage="questions-1",
            screen=screen,
            annotator=annotator,
            status=AssignmentStatus.LEASED,
            lease_expires_at=timezone.now() + timedelta(minutes=5),
            review_state=ReviewState.SAMPLED,
        )
        plan = plan_next(stage=WRITING, project=project, user=annotator, membership=None, standing=brief, now=START)
        assert plan.review is True


def test_skipped_control_items_count_in_the_skips_in_a_row(project, annotator):
    # given the skips-in-a-row rule at 3, every lease a control item, and the accuracy rule out of reach
    configure(project, skips_in_a_row=3, control_rate=1.0, control_rate_new=1.0, monitoring_evidence=50.0)
    gold_prefilter(project, 4)
    screens(project, 1)
    standing(project, annotator)
    for _ in range(3):
        lease = assignment_next(project=project, user=annotator, stage="prefilter")
        assert lease.purpose == Purpose.CONTROL
        assignment_skip(assignment_id=lease.pk, user=annotator, reason="Did not load.")
    # then the third skip pauses them, by the skips rule (and each skipped control item scored wrong)
    assert status_of(annotator) == StandingStatus.PAUSED
    assert rules_of(annotator)[-1] == "skips-in-a-row"
    assert ControlResult.objects.filter(user=annotator, correct=False).count() == 3


def test_a_site_admin_is_never_refused_and_a_lead_elsewhere_is(project, annotator):
    admin = UserFactory(username="root", is_superuser=True)
    standing(project, admin, status=StandingStatus.PAUSED, reason="x")
    assert work_refusal(stage=PREFILTER, project=project, user=admin) is None
    # an annotator here who leads another project (that membership made first) is refused here
    elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
    boss = UserFactory(username="boss")
    MembershipFactory(project=elsewhere, user=boss, role="lead")
    MembershipFactory(project=project, user=boss, role="annotator")
    standing(project, boss, status=StandingStatus.PAUSED, reason="x")
    assert work_refusal(stage=PREFILTER, project=project, user=boss) == (
        "You are paused in Pre-filtering: x; this work is not accepted."
    )


def test_a_failed_attempt_offers_a_retry_while_one_is_left(project, annotator):
    configure(project, qualification_items=1, qualification_attempts=3, qualification_extra_items=0)
    row = standing(project, annotator, status=StandingStatus.QUALIFYING, attempt=2, attempt_started_at=START)
    control(project, annotator, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
    qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
    assert Standing.objects.get(pk=row.pk).reason == "0 of 1 right; you can try again in 24 hours"


class TestTimesPassedOn:
    """The time a submission, skip or review happened is the time of what follows from it: the
    evidence cleared, and the leases a pause or a failed qualification ends (never "now" read again)."""

    NOW = START + timedelta(hours=3)

    def control_lease(self, project, user, *, status=AssignmentStatus.SUBMITTED) -> Assignment:
        """A control item of ``user``, submitted (or skipped) at START."""
        item = gold(project)
        return Assignment.objects.create(
            project=project,
            stage="prefilter",
            screen=item.screen,
            annotator=user,
            status=status,
            lease_expires_at=START + timedelta(hours=1),
            submitted_at=START if status == AssignmentStatus.SUBMITTED else None,
            purpose=Purpose.CONTROL,
            gold=item,
        )

    def test_a_right_control_item_clears_the_evidence_at_the_submissions_time(self, project, annotator):
        row = standing(project, annotator, evidence=0.0)
        assert row.evidence_clear_at is None
        lease = self.control_lease(project, annotator)
        gold_submitted(stage=PREFILTER, assignment=lease, cleaned=dict(RIGHT), now=self.NOW)
        row = Standing.objects.get(pk=row.pk)
        assert (row.evidence, row.evidence_clear_at, row.controls_done) == (0.0, self.NOW, 1)

    @pytest.mark.parametrize("how", ["submitted", "expired", "skipped"])
    def test_a_pause_on_a_control_item_ends_the_open_leases_at_its_time(self, project, annotator, how):
        # given a bound one wrong control item reaches, and a live lease of real work in the stage
        configure(project, monitoring_evidence=1.0, skips_in_a_row=0)
        standing(project, annotator)
        held = work(project, annotator, status=AssignmentStatus.LEASED, at=START)
        # when a control item is answered wrong, left to expire or skipped at NOW
        if how == "submitted":
            lease = self.control_lease(project, annotator)
            gold_submitted(stage=PREFILTER, assignment=lease, cleaned=dict(WRONG), now=self.NOW)
        elif how == "expired":
            lease = self.control_lease(project, annotator, status=AssignmentStatus.EXPIRED)
            gold_left(stage=PREFILTER, assignment=lease, outcome="expired", now=self.NOW)
        else:
            lease = self.control_lease(project, annotator, status=AssignmentStatus.SKIPPED)
            skip_recorded(stage=PREFILTER, assignment=lease, now=self.NOW)
        # then the rule pauses them, and the live lease ended at NOW
        assert status_of(annotator) == StandingStatus.PAUSED
        assert rules_of(annotator) == ["control-accuracy"]
        held.refresh_from_db()
        assert (held.status, held.updated_at) == (AssignmentStatus.RELEASED, self.NOW)

    def test_a_pause_on_skips_in_a_row_ends_the_open_leases_at_its_time(self, project, annotator):
        configure(project, skips_in_a_row=2)
        standing(project, annotator)
        held = work(project, annotator, status=AssignmentStatus.LEASED, at=START)
        work(project, annotator, status=AssignmentStatus.SKIPPED, at=START)
        skipped = work(project, annotator, status=AssignmentStatus.SKIPPED, at=START + timedelta(minutes=1))
        skip_recorded(stage=PREFILTER, assignment=skipped, now=self.NOW)
        assert rules_of(annotator) == ["skips-in-a-row"]
        held.refresh_from_db()
        assert (held.status, held.updated_at) == (AssignmentStatus.RELEASED, self.NOW)

    def test_a_writer_found_not_qualified_has_the_open_leases_ended_at_the_reviews_time(self, project, annotator):
        configure(project, qualification_review_sets=1)
        standing(
            project,
            annotator,
            stage="questions-1",
            status=StandingStatus.QUALIFYING,
            attempt=1,
            attempt_started_at=START - timedelta(hours=1),
        )
        held = work(project, annotator, stage="questions-1", status=AssignmentStatus.LEASED, at=START)
        rejected = work(project, annotator, stage="questions-1", review_state=ReviewState.REJECTED, at=START)
        review_recorded(reviewed=rejected, now=self.NOW)
        assert status_of(annotator, "questions-1") == StandingStatus.NOT_QUALIFIED
        held.refresh_from_db()
        assert (held.status, held.updated_at) == (AssignmentStatus.RELEASED, self.NOW)


@pytest.mark.parametrize(("use_boxes", "correct"), [(True, False), (False, True)])
def test_an_answers_control_item_is_scored_by_the_projects_agreement_rule(project, annotator, use_boxes, correct):
    # given a project that compares boxes (or not), and a gold answer of the answers stage
    configure(project, agreement_use_boxes=use_boxes)
    right = {"verdict": "answered", "elements": [{"text": "Sign in", "bounds": [0, 0, 100, 40]}]}
    item = gold(project, stage="answers", answer=right, on=question(project))
    lease = Assignment.objects.create(
        project=project,
        stage="answers",
        screen=item.screen,
        question=item.question,
        annotator=annotator,
        status=AssignmentStatus.SUBMITTED,
        lease_expires_at=START + timedelta(hours=1),
        submitted_at=START,
        purpose=Purpose.CONTROL,
        gold=item,
    )
    # when the annotator gives the same text in a box far from the gold one
    given = {"verdict": "answered", "elements": [{"text": "Sign in", "bounds": [500, 900, 600, 940]}]}
    gold_submitted(stage=stage_get("answers"), assignment=lease, cleaned=given, now=START)
    # then it is right only where boxes are not compared
    assert ControlResult.objects.get(assignment=lease).correct is correct


class TestReadsOfTheirOwn:
    """Reads that an unfiltered query would get wrong only beside another stage's or person's rows made
    first (rows without an order come back in the order they were made)."""

    def test_the_refusal_reads_the_users_own_membership(self, project):
        # given a lead's membership made before the annotator's in the project
        member(project, "leo", role="lead")
        annie = member(project, "annie")
        standing(project, annie, status=StandingStatus.PAUSED, reason="too fast")
        # then the annotator is refused: the lead's role is not theirs
        assert work_refusal(stage=PREFILTER, project=project, user=annie) == (
            "You are paused in Pre-filtering: too fast; this work is not accepted."
        )

    @pytest.mark.parametrize(
        ("status", "said"),
        [
            (StandingStatus.ACTIVE, None),
            (StandingStatus.PAUSED, "You are paused in Pre-filtering: mine; this work is not accepted."),
        ],
    )
    def test_the_refusal_reads_the_stages_own_standing(self, project, annotator, status, said):
        # given a standing in another stage, made first
        standing(project, annotator, stage="answers", status=StandingStatus.NOT_QUALIFIED, reason="another stage's")
        standing(project, annotator, status=status, reason="mine")
        assert work_refusal(stage=PREFILTER, project=project, user=annotator) == said

    @pytest.mark.parametrize("decoy", [AssignmentStatus.SUBMITTED, AssignmentStatus.LEASED])
    def test_a_sets_results_are_of_its_stage(self, project, annotator, decoy):
        # given a set of 3 at 100%, two items done right and no gold left to serve the third
        configure(project, qualification_items=3, qualification_threshold=1.0, qualification_extra_items=0)
        row = standing(project, annotator, status=StandingStatus.QUALIFYING, attempt=1, attempt_started_at=START)
        # and, made first, a qualification item of the same attempt in another stage: wrong, or still leased
        other = gold(project, stage="answers", on=question(project))
        if decoy == AssignmentStatus.SUBMITTED:
            control(project, annotator, correct=False, item=other, purpose=Purpose.QUALIFICATION, attempt=1)
        else:
            Assignment.objects.create(
                project=project,
                stage="answers",
                screen=other.screen,
                question=other.question,
                annotator=annotator,
                status=AssignmentStatus.LEASED,
                lease_expires_at=START + timedelta(hours=1),
                purpose=Purpose.QUALIFICATION,
                gold=other,
                attempt=1,
            )
        for _ in range(2):
            control(project, annotator, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
        # when the set is checked: then the pre-filtering items alone decide it, and nothing is open
        qualification_check(stage=PREFILTER, standing=row, project=project, now=START)
        row = Standing.objects.get(pk=row.pk)
        assert (row.status, row.reason) == (StandingStatus.ACTIVE, "qualified with 2 of 2")

    @pytest.mark.parametrize("indexes", [True, False])
    def test_first_submissions_submitted_at_one_time_are_taken_in_id_order(self, project, annotator, indexes):
        # given a writer qualifying on their first submission at 100%, and three submitted at the same
        # moment: the accepted one has the lowest id but was made second, between two rejected ones
        # (the table holds ties in the order made: read forwards or backwards, a rejected one would
        # come first). On a small table PostgreSQL reads them through ``assignment_submitted_newest``,
        # whose last column is the id; a larger table may be read without it (here: indexes off for
        # this transaction), and then only the query's own order decides.
        if not indexes:
            with connection.cursor() as cursor:
                for setting in ("enable_indexscan", "enable_bitmapscan", "enable_indexonlyscan"):
                    cursor.execute(f"SET LOCAL {setting} = off")
        configure(project, qualification_review_sets=1, qualification_threshold=1.0)
        standing(
            project,
            annotator,
            stage="questions-1",
            status=StandingStatus.QUALIFYING,
            attempt=1,
            attempt_started_at=START - timedelta(hours=1),
        )
        last = Assignment.objects.order_by("-pk").values_list("pk", flat=True).first() or 0

        def submitted(pk: int, state: str) -> Assignment:
            return Assignment.objects.create(
                pk=pk,
                project=project,
                stage="questions-1",
                screen=ScreenFactory(project=project),
                annotator=annotator,
                status=AssignmentStatus.SUBMITTED,
                lease_expires_at=START + timedelta(hours=1),
                submitted_at=START,
                review_state=state,
            )

        submitted(last + 10_000, ReviewState.REJECTED)
        accepted = submitted(last + 5_000, ReviewState.ACCEPTED)
        submitted(last + 15_000, ReviewState.REJECTED)
        # when a review is recorded: the lowest id is the first submission, and it decides
        review_recorded(reviewed=accepted, now=START + timedelta(hours=1))
        assert status_of(annotator, "questions-1") == StandingStatus.ACTIVE
