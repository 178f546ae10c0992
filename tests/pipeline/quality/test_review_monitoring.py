"""Active writers are monitored by the reviews of their sampled work (``review-rejections``).

A writing stage has no gold, so once a writer has qualified by review nothing but review sampling looks
at their work. Before this rule a rejection took out the one set it rejected and nothing else: a writer
honest through their qualification who then wrote junk (the adversarial crowd's sly worker, in a writing
stage) kept writing, and every set review did not sample (90% at the default rate) reached the release.
Now each review of an active writer's sampled work is a control item of the sequential test
(``pipeline.quality.sequential``), their work goes to review at the alert rate while the evidence is
against them, and a writer paused on rejections that are later withdrawn (a stopped reviewer's) is back.
Everything runs through the engine, as the API runs it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import (
    Assignment,
    QualityEvent,
    Question,
    QuestionState,
    Review,
    ReviewState,
    ScreenState,
    Standing,
)
from annotation.models import StandingStatus as S
from pipeline.engine import assignment_next, assignment_submit
from pipeline.quality.standing import pause, plan_next, standing_act, standing_read
from pipeline.stages.registry import stage_get
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db

ACCEPT = {"verdict": "accepted", "reason": "", "comment": ""}
REJECT = {"verdict": "rejected", "reason": "counting", "comment": "Counting is not allowed."}
WRITING = stage_get("questions-1")


@pytest.fixture
def crowd(project):
    """A project whose every pass-1 set is reviewed, writers qualifying on their first two sets; a
    writer, a reviewer and a lead."""
    project.review_rate = 1.0
    project.qualification_review_sets = 2
    project.control_rate_alert = 0.5
    project.review_double_rate = 0.0  # a second review decides nothing: every review here decides
    project.save()
    screens(project, 50, state=ScreenState.QUESTIONS_1)
    return {
        "writer": member(project, "wes"),
        "reviewer": member(project, "rita", role="reviewer"),
        "lead": member(project, "lena", role="lead"),
    }


def write(project: Any, writer: Any, text: str = "What is the title of the page?") -> Assignment:
    lease = assignment_next(project=project, user=writer, stage="questions-1")
    return assignment_submit(assignment_id=lease.pk, user=writer, data={"questions": [text]})


def review(project: Any, reviewer: Any, verdict: dict[str, str]) -> Assignment:
    lease = assignment_next(project=project, user=reviewer, stage="review")
    assert lease is not None, "a submission waits for review"
    assignment_submit(assignment_id=lease.pk, user=reviewer, data=dict(verdict))
    return Assignment.objects.get(pk=lease.reviewed_id)


def qualified(project: Any, crowd: dict[str, Any], by: str = "reviewer") -> None:
    for _ in range(2):
        write(project, crowd["writer"])
        review(project, crowd[by], ACCEPT)
    assert standing_read(project=project, user=crowd["writer"], stage="questions-1").status == S.ACTIVE


def standing_of(user: Any) -> Standing:
    return Standing.objects.get(user=user, stage="questions-1")


def stop_reviewer(project: Any, reviewer: Any) -> None:
    """The reviewer is paused by a rule (their reviews are withdrawn), as the control-accuracy rule does."""
    Standing.objects.update_or_create(
        project=project, user=reviewer, stage="review", defaults={"status": S.ACTIVE, "reason": "qualified"}
    )
    theirs = Standing.objects.select_for_update().get(user=reviewer, stage="review")
    pause(
        stage=stage_get("review"),
        standing=theirs,
        project=project,
        rule="control-accuracy",
        reason="0 of your last 5 control items were right",
        figures={},
        now=timezone.now(),
    )


def test_a_writer_who_turns_after_qualifying_is_paused_and_the_junk_review_missed_is_withdrawn(project, crowd):
    # given a writer who qualified honestly and wrote three more good sets, all accepted
    writer, reviewer = crowd["writer"], crowd["reviewer"]
    qualified(project, crowd)
    good = [write(project, writer) for _ in range(3)]
    for _ in good:
        review(project, reviewer, ACCEPT)
    # when they turn: five junk sets, of which review reaches the first three (rejected) before the rest
    junk = [write(project, writer, text=f"How many icons are there? {n}") for n in range(5)]
    review(project, reviewer, REJECT)
    review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.ACTIVE  # two rejections: not yet (a careful writer may slip twice)
    review(project, reviewer, REJECT)
    # then the third rejection pauses them by the review rule, saying why in their words
    mine = standing_of(writer)
    assert mine.status == S.PAUSED and mine.reason == "3 of your last 8 reviewed submissions were rejected"
    decision = QualityEvent.objects.get(user=writer, rule="review-rejections")
    assert decision.figures["recent"] == [False, False, False, True, True, True, True, True]
    # and every junk set is out of the release, the two review never reached included; the good sets stay
    junk_states = set(Question.objects.filter(origin__in=junk).values_list("state", flat=True))
    assert junk_states == {QuestionState.DROPPED}
    assert not Question.objects.filter(origin__in=good, state=QuestionState.DROPPED).exists()


def test_a_careful_writers_slips_never_pause_them(project, crowd):
    # given a writer with four rejections in forty sets, two of them in a row (a strict reviewer, or slips)
    writer, reviewer = crowd["writer"], crowd["reviewer"]
    qualified(project, crowd)
    for n in range(40):
        write(project, writer)
        review(project, reviewer, REJECT if n in (10, 20, 21, 35) else ACCEPT)
    # then they are never paused (the test pauses clearly under the bar: three rejections close together)
    assert standing_of(writer).status == S.ACTIVE
    assert not QualityEvent.objects.filter(user=writer, rule="review-rejections").exists()
    assert standing_of(writer).evidence == pytest.approx(2.58, abs=0.01)


def test_the_qualifications_own_reviews_do_not_count_and_a_leads_reinstate_starts_afresh(project, crowd):
    # given a writer whose second qualifying set was rejected (one of two: 50%, under a bar of 0.5 qualifies)
    writer, reviewer, lead = crowd["writer"], crowd["reviewer"], crowd["lead"]
    project.qualification_threshold = 0.5
    project.save()
    write(project, writer)
    review(project, reviewer, ACCEPT)
    write(project, writer)
    review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.ACTIVE
    # then as an active writer they start with no evidence against them
    assert standing_of(writer).evidence == 0.0
    # when three rejections pause them and a lead reinstates them
    for _ in range(3):
        write(project, writer)
        review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.PAUSED
    standing_act(project=project, user_id=writer.pk, stage="questions-1", action="reinstate", actor=lead)
    # then one more rejection is one, not a fourth
    write(project, writer)
    review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.ACTIVE
    assert standing_of(writer).evidence == pytest.approx(1.9, abs=0.05)


def test_a_doubted_writers_work_goes_to_review_at_the_alert_rate(project, crowd):
    # given a project that samples no writing for review but its alert rate, and a qualified writer
    writer, reviewer = crowd["writer"], crowd["reviewer"]
    qualified(project, crowd)
    project.review_rate, project.control_rate_alert = 0.0, 1.0
    project.save()
    # then while nothing speaks against them nothing of theirs is sampled
    assert write(project, writer).review_state == ReviewState.NONE
    # when review rejects a set of theirs (a lead may review any submission: here one sampled at the old rate)
    project.review_rate = 1.0
    project.save()
    write(project, writer)
    review(project, reviewer, REJECT)
    project.review_rate = 0.0
    project.save()
    # then every lease of theirs is marked for review from the start, by the plan, not at submit
    brief = standing_read(project=project, user=writer, stage="questions-1")
    assert brief.evidence > 0
    plan = plan_next(stage=WRITING, project=project, user=writer, membership=None, standing=brief, now=timezone.now())
    assert plan.review
    assert write(project, writer).review_state == ReviewState.SAMPLED


def test_a_writer_paused_on_a_stopped_reviewers_rejections_is_back_with_their_work(project, crowd):
    # given a writer qualified by the lead's reviews, then paused by three rejections of a reviewer who
    # rejects everything
    writer, reviewer = crowd["writer"], crowd["reviewer"]
    qualified(project, crowd, by="lead")
    sets = [write(project, writer) for _ in range(3)]
    for _ in sets:
        review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.PAUSED
    assert set(Question.objects.filter(origin__in=sets).values_list("state", flat=True)) == {QuestionState.DROPPED}
    # when the reviewer is stopped by a rule (their reviews are withdrawn)
    stop_reviewer(project, reviewer)
    # then the writer is active again, on no evidence, with their questions back where they were
    mine = standing_of(writer)
    assert (mine.status, mine.evidence) == (S.ACTIVE, 0.0)
    back = QualityEvent.objects.get(user=writer, rule="review-pause-withdrawn")
    assert back.status_before == S.PAUSED and back.figures["overturned_event"] == (
        QualityEvent.objects.get(user=writer, rule="review-rejections").pk
    )
    assert QuestionState.DROPPED not in set(Question.objects.filter(origin__in=sets).values_list("state", flat=True))
    # and the sets wait for review again
    assert set(Assignment.objects.filter(pk__in=[s.pk for s in sets]).values_list("review_state", flat=True)) == {
        ReviewState.SAMPLED
    }


def test_a_leads_pause_stays_when_reviews_are_withdrawn(project, crowd):
    writer, reviewer, lead = crowd["writer"], crowd["reviewer"], crowd["lead"]
    qualified(project, crowd)
    write(project, writer)
    review(project, reviewer, REJECT)
    standing_act(project=project, user_id=writer.pk, stage="questions-1", action="pause", actor=lead)
    stop_reviewer(project, reviewer)
    assert standing_of(writer).status == S.PAUSED
    assert not QualityEvent.objects.filter(user=writer, rule="review-pause-withdrawn").exists()


def test_a_writer_whose_qualification_and_pause_rested_on_a_stopped_reviewer_qualifies_again(project, crowd):
    # given a writer qualified on rita's reviews, then paused by rita's three rejections
    writer, reviewer, lead = crowd["writer"], crowd["reviewer"], crowd["lead"]
    qualified(project, crowd)
    sets = [write(project, writer) for _ in range(3)]
    for _ in sets:
        review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.PAUSED
    # when rita is stopped by a rule
    stop_reviewer(project, reviewer)
    # then the writer qualifies again (nothing rita decided stands), with the paused work back in review
    mine = standing_of(writer)
    assert (mine.status, mine.reason) == (S.QUALIFYING, "first submissions are reviewed again")
    assert QualityEvent.objects.get(user=writer, rule="review-pause-withdrawn").status_after == S.QUALIFYING
    assert QuestionState.DROPPED not in set(Question.objects.filter(origin__in=sets).values_list("state", flat=True))
    # and the lead's reviews of the first two submissions decide it, as for any writer
    review(project, lead, ACCEPT)
    review(project, lead, ACCEPT)
    assert standing_of(writer).status == S.ACTIVE


def test_a_writer_failed_early_on_a_stopped_reviewers_rejection_qualifies_again_with_the_waiting_set_back(
    project, crowd
):
    # given a writer whose first set a reviewer rejected: under the 90% bar they can no longer qualify, so
    # they are not qualified at once and their second set, still waiting for review, is withdrawn
    writer, reviewer, lead = crowd["writer"], crowd["reviewer"], crowd["lead"]
    first, second = write(project, writer), write(project, writer, text="What is the price of the ticket?")
    review(project, reviewer, REJECT)
    mine = standing_of(writer)
    assert (mine.status, mine.reason) == (
        S.NOT_QUALIFIED,
        "1 of your first 2 submissions rejected: too many to qualify",
    )
    assert set(Question.objects.filter(origin__in=[first, second]).values_list("state", flat=True)) == {
        QuestionState.DROPPED
    }
    # when the reviewer is stopped by a rule
    stop_reviewer(project, reviewer)
    # then the writer qualifies again with both sets back, and the lead's reviews decide it
    assert standing_of(writer).status == S.QUALIFYING
    assert QuestionState.DROPPED not in set(
        Question.objects.filter(origin__in=[first, second]).values_list("state", flat=True)
    )
    review(project, lead, ACCEPT)
    review(project, lead, ACCEPT)
    assert standing_of(writer).status == S.ACTIVE


# --- writers' work no review confirmed goes to review before post-processing ---------------------------


def start_postprocessing(project: Any, lead: Any) -> dict[str, Any]:
    from annotation.exceptions import ConflictError
    from pipeline.release.postprocess import release_job_start

    try:
        release_job_start(project=project, kind="postprocess", user=lead)
    except ConflictError as refused:
        return dict(refused.extra)
    return {}


def test_a_sly_writers_unreviewed_nonsense_goes_to_review_before_post_processing_and_is_taken_out(project, crowd):
    # given a writer who qualified, then wrote five sets of nonsense that review sampling missed
    writer, reviewer, lead = crowd["writer"], crowd["reviewer"], crowd["lead"]
    qualified(project, crowd)
    project.review_rate = 0.0
    project.save()
    junk = [write(project, writer, text=f"What does the blorp {n} mean?") for n in range(5)]
    assert {s.review_state for s in junk} == {ReviewState.NONE}
    # when the lead starts post-processing
    refused = start_postprocessing(project, lead)
    # then it waits: the writer's record is thin (no set accepted since qualifying), so their sets go to review
    assert refused == {"review_first": {"questions-1": 5}}
    marked = QualityEvent.objects.get(user=writer, rule="provisional-review")
    assert sorted(marked.figures["assignments"]) == sorted(s.pk for s in junk)
    assert set(Assignment.objects.filter(pk__in=[s.pk for s in junk]).values_list("review_state", flat=True)) == {
        ReviewState.SAMPLED
    }
    # when review rejects what it reads: the third rejection pauses the writer and takes out the rest
    for _ in range(3):
        review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.PAUSED
    assert set(Question.objects.filter(origin__in=junk).values_list("state", flat=True)) == {QuestionState.DROPPED}
    # and post-processing starts (nothing of theirs waits any more)
    assert start_postprocessing(project, lead) == {}


def test_a_writer_with_enough_accepted_reviews_and_nothing_against_them_waits_for_nobody(project, crowd):
    # given a writer with three sets accepted since qualifying, and two more sets review did not sample
    writer, reviewer, lead = crowd["writer"], crowd["reviewer"], crowd["lead"]
    qualified(project, crowd)
    for _ in range(3):
        write(project, writer)
        review(project, reviewer, ACCEPT)
    project.review_rate = 0.0
    project.save()
    later = [write(project, writer) for _ in range(2)]
    # then post-processing starts at once with the default policy (evidence)
    assert start_postprocessing(project, lead) == {}
    assert not QualityEvent.objects.filter(user=writer, rule="provisional-review").exists()
    # while with strict, the sets after the last accepted one go to review first
    from annotation.models import ReleaseJob

    ReleaseJob.objects.filter(project=project).delete()
    project.provisional_work = "strict"
    project.save()
    assert start_postprocessing(project, lead) == {"review_first": {"questions-1": 2}}
    assert sorted(QualityEvent.objects.get(user=writer, rule="provisional-review").figures["assignments"]) == sorted(
        s.pk for s in later
    )
    # and with off, nothing waits
    project.provisional_work = "off"
    project.save()
    assert start_postprocessing(project, lead) == {}


def test_a_writer_still_qualifying_is_reviewed_first_unless_thin_records_are_turned_off(project, crowd):
    # given a writer whose two qualifying sets wait for review
    writer, lead = crowd["writer"], crowd["lead"]
    write(project, writer)
    write(project, writer)
    assert standing_of(writer).status == S.QUALIFYING
    # then post-processing waits for those reviews
    assert start_postprocessing(project, lead) == {"review_first": {"questions-1": 2}}
    # unless the lead turned thin records off (``provisional_min_controls`` 0, as the demo does)
    project.provisional_min_controls = 0
    project.save()
    assert start_postprocessing(project, lead) == {}


def test_the_sweeps_one_statement_count_of_accepted_sets_is_the_per_writer_count(project, crowd):
    # given writers in every case the count meets: qualified then reviewed, reinstated by a lead, and a
    # standing made without any event (all its reviews count)
    from annotation.models import ReviewVerdict
    from pipeline.quality.standing import reviews_since_active, with_accepted_since_active

    writer, reviewer, lead = crowd["writer"], crowd["reviewer"], crowd["lead"]
    qualified(project, crowd)
    for verdict in (ACCEPT, REJECT, ACCEPT):
        write(project, writer)
        review(project, reviewer, verdict)
    other = member(project, "otto")
    Standing.objects.create(project=project, user=other, stage="questions-1", status=S.ACTIVE)
    for _ in range(2):
        write(project, other)
        review(project, lead, ACCEPT)
    # then the statement the sweep selects with counts what the per-writer reading counts
    counted = dict(
        with_accepted_since_active(Standing.objects.filter(project=project)).values_list("user_id", "accepted")
    )
    for standing in Standing.objects.filter(project=project, stage="questions-1"):
        assert (
            counted[standing.user_id]
            == reviews_since_active(standing=standing).filter(verdict=ReviewVerdict.ACCEPTED).count()
        )
    assert (counted[writer.pk], counted[other.pk]) == (2, 2)


def test_a_writer_who_stops_just_before_the_rule_fires_has_the_rest_reviewed_before_the_release(project, crowd):
    # given a writer with three sets accepted since qualifying, then junk: review catches two sets of it
    # (two rejections: one short of the pause) and misses the next three, and the writer stops there
    writer, reviewer, lead = crowd["writer"], crowd["reviewer"], crowd["lead"]
    qualified(project, crowd)
    for _ in range(3):
        write(project, writer)
        review(project, reviewer, ACCEPT)
    for n in range(2):
        write(project, writer, text=f"What does the blorp {n} mean?")
        review(project, reviewer, REJECT)
    assert (standing_of(writer).status, standing_of(writer).evidence > 0) == (S.ACTIVE, True)
    project.review_rate, project.control_rate_alert = 0.0, 0.0
    project.save()
    missed = [write(project, writer, text=f"What does the zibber {n} mean?") for n in range(3)]
    # when the lead starts post-processing
    refused = start_postprocessing(project, lead)
    # then the sets after the last accepted one that no review saw go to review first (the record is not
    # thin, but the reviews speak against the writer)
    assert refused == {"review_first": {"questions-1": 3}}
    marked = QualityEvent.objects.get(user=writer, rule="provisional-review")
    assert sorted(marked.figures["assignments"]) == sorted(s.pk for s in missed)
    assert marked.figures["why"] == "reviews speak against them"
    # and the first rejection of them pauses the writer and takes the rest out
    review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.PAUSED
    assert set(Question.objects.filter(origin__in=missed).values_list("state", flat=True)) == {QuestionState.DROPPED}


def test_a_writer_sees_reviews_of_their_monitored_work_only_the_next_day(project, crowd):
    """The timing attack of docs/quality.md: a writer who sees a rejection at once knows when review caught
    them (junk until one shows, honest until the evidence clears, junk again). Verdicts on an active
    writer's work show from the day after (as control figures do); their qualification's at once."""
    writer, reviewer = crowd["writer"], crowd["reviewer"]
    qualified(project, crowd)
    qualification = set(Assignment.objects.filter(annotator=writer).values_list("pk", flat=True))
    rejected = write(project, writer, text="How many icons are there?")
    review(project, reviewer, REJECT)
    accepted = write(project, writer)
    review(project, reviewer, ACCEPT)
    unreviewed = write(project, writer)  # sampled (every set is), not yet reviewed
    client = APIClient()
    client.force_login(writer)

    def seen() -> tuple[dict[int, Any], dict[str, Any]]:
        body = client.get(f"/api/projects/{project.slug}/my-work/").json()
        rows = {row["id"]: row for row in body["history"]}
        return rows, body["figures"]

    # today: the monitored rows look alike whatever review made of them (no verdict, no "waiting")
    rows, figures = seen()
    monitored = [rows[a.pk] for a in (rejected, accepted, unreviewed)]
    assert [(row["review"], row["review_state"]) for row in monitored] == [(None, "")] * 3
    assert {
        k: v for k, v in monitored[0].items() if k not in ("id", "rico_id", "created_at", "submitted_at", "questions")
    } == {
        k: v for k, v in monitored[1].items() if k not in ("id", "rico_id", "created_at", "submitted_at", "questions")
    }
    # and the figures count the qualification's reviews only; the qualification's rows show their verdicts
    assert (figures["reviewed"], figures["review_accepted"], figures["reviews_held_back"]) == (2, 2, ["questions-1"])
    assert all(rows[pk]["review"]["verdict"] == "accepted" for pk in qualification)
    # the page says so
    page = client.get(f"/projects/{project.slug}/my-work/")
    assert page.status_code == 200 and b'data-testid="reviews-held-back"' in page.content
    # the next day (the reviews were made before today's start): the verdicts are there, with the reason
    Review.objects.filter(reviewed__in=[rejected, accepted]).update(created_at=timezone.now() - timedelta(days=1))
    rows, figures = seen()
    assert rows[rejected.pk]["review"]["verdict"] == "rejected" and rows[rejected.pk]["review_state"] == "rejected"
    assert rows[rejected.pk]["review"]["comment"] == "Counting is not allowed."
    assert rows[accepted.pk]["review_state"] == "accepted"
    assert (rows[unreviewed.pk]["review"], rows[unreviewed.pk]["review_state"]) == (None, "")
    assert (figures["reviewed"], figures["review_accepted"]) == (4, 3)


def test_a_paused_writer_sees_every_verdict_at_once(project, crowd):
    # given a writer paused by three rejections (nothing left to time: they see why at once)
    writer, reviewer = crowd["writer"], crowd["reviewer"]
    qualified(project, crowd)
    junk = []
    for n in range(3):
        junk.append(write(project, writer, text=f"How many icons are there? {n}"))
        review(project, reviewer, REJECT)
    assert standing_of(writer).status == S.PAUSED
    client = APIClient()
    client.force_login(writer)
    body = client.get(f"/api/projects/{project.slug}/my-work/").json()
    rows = {row["id"]: row for row in body["history"]}
    assert [rows[a.pk]["review"]["verdict"] for a in junk] == ["rejected"] * 3
    assert (body["figures"]["reviewed"], body["figures"]["reviews_held_back"]) == (5, [])
