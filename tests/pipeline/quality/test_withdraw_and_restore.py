"""What a quality decision withdraws, under the right reason, and what comes back when a lead
overturns it (a reinstate) or when the review it rested on is withdrawn (a stopped reviewer)."""

from __future__ import annotations

import pytest

from annotation.models import (
    Answer,
    Assignment,
    Question,
    QuestionState,
    Review,
    ReviewState,
    ScreenState,
    Standing,
    StandingStatus,
)
from pipeline.engine import assignment_next, assignment_submit
from pipeline.quality.standing import standing_act
from tests.pipeline.quality.builders import rule_pause
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


def write_sets(project, writer, count, per=3):
    """``count`` pass-1 question sets of ``per`` questions each, one per screen."""
    done = []
    for n in range(count):
        lease = assignment_next(project=project, user=writer, stage="questions-1")
        texts = [f"What does label {k + 1} say on {n}?" for k in range(per)]
        done.append(assignment_submit(assignment_id=lease.pk, user=writer, data={"questions": texts}))
    return done


def review_next(project, reviewer, verdict, reason=""):
    lease = assignment_next(project=project, user=reviewer, stage="review")
    assert lease is not None
    body = {"verdict": verdict, "reason": reason, "comment": ""}
    assignment_submit(assignment_id=lease.pk, user=reviewer, data=body)
    return lease.reviewed_id


def reasons_of(writer):
    return sorted(Question.objects.filter(author=writer).values_list("drop_reason", flat=True))


def standing_of(user, stage):
    return Standing.objects.get(user=user, stage=stage).status


def test_one_rejection_and_a_reinstate_keep_the_writers_questions(project):
    # given a writer qualifying by the review of their first four question sets (12 questions)
    project.qualification_review_sets = 4
    project.review_rate = 0
    project.save()
    wes, lead = member(project, "wes"), member(project, "lead", role="lead")
    screens(project, 4, state=ScreenState.QUESTIONS_1)
    sets = write_sets(project, wes, 4)
    assert {s.review_state for s in sets} == {ReviewState.SAMPLED}
    # when a lead accepts three sets and rejects the last one (a rejection first decides at once: 3 of 4 at
    # best is under 90%, and the sets still waiting would be withdrawn with the decision)
    for _ in range(3):
        review_next(project, lead, "accepted")
    review_next(project, lead, "rejected", reason="counting")
    # then the writer did not qualify (3 of 4 < 90%): the rejected set's questions leave the release for
    # the review; the three sets the lead accepted stay (a review vouched for each); nothing is
    # "author paused": nobody paused them
    assert standing_of(wes, "questions-1") == StandingStatus.NOT_QUALIFIED
    assert reasons_of(wes) == [""] * 9 + ["review-rejected"] * 3
    decision = wes.quality_events.get(rule="review-not-qualified")
    assert decision.figures["withdrawn"] == 0
    # when the lead reinstates the writer
    standing_act(project=project, user_id=wes.pk, stage="questions-1", action="reinstate", actor=lead)
    # then the nine accepted questions are where they were (waiting for pass 2); the set the review
    # rejected stays out; the lead's event says nothing came back (nothing was withdrawn)
    assert standing_of(wes, "questions-1") == StandingStatus.ACTIVE
    assert reasons_of(wes) == [""] * 9 + ["review-rejected"] * 3
    back = Question.objects.filter(author=wes, drop_reason="")
    assert set(back.values_list("state", flat=True)) == {QuestionState.DRAFTING}
    reinstated = wes.quality_events.latest("pk")
    assert reinstated.figures == {"overturned": "review-not-qualified", "overturned_event": decision.pk}
    # and they go on through the pipeline: pass 2 finalises the screens, the questions wait for answers
    pat = member(project, "pat")
    for _ in range(4):
        lease = assignment_next(project=project, user=pat, stage="questions-2")
        assignment_submit(assignment_id=lease.pk, user=pat, data={"questions": []})
    assert set(back.values_list("state", flat=True)) == {QuestionState.ANSWERING}
    assert 0 not in set(back.values_list("answers_needed", flat=True))


def test_a_reinstate_brings_back_answers_unless_others_redid_them_and_says_so(project):
    # given an answerer whose two answers a rule's pause withdrew (their questions asked again)
    ann, other, lead = member(project, "ann"), member(project, "other"), member(project, "lead", role="lead")
    made = screens(project, 2)
    questions = [answering_question(s, text=f"What does label 1 of {s.rico_id} say?") for s in made]
    body = {"verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "It says so."}
    for question in questions:
        lease = assignment_next(project=project, user=ann, stage="answers")
        assignment_submit(assignment_id=lease.pk, user=ann, data={**body, "question": question.text})
    rule_pause(project, ann, "answers")
    assert list(Answer.objects.filter(annotator=ann).values_list("kept", "drop_reason")) == [(False, "withdrawn")] * 2
    # and another annotator answered the first question meanwhile
    lease = assignment_next(project=project, user=other, stage="answers")
    assert lease.question_id == questions[0].pk
    assignment_submit(assignment_id=lease.pk, user=other, data={**body, "question": questions[0].text})
    # when a lead reinstates the answerer
    standing_act(project=project, user_id=ann.pk, stage="answers", action="reinstate", actor=lead)
    # then the answer nobody redid is back (its question complete again), the other stays out
    kept = dict(Answer.objects.filter(annotator=ann).values_list("question_id", "kept"))
    assert kept == {questions[0].pk: False, questions[1].pk: True}
    second = Question.objects.get(pk=questions[1].pk)
    assert (second.state, second.answers_done) == (QuestionState.ANSWERED, 1)
    reinstated = ann.quality_events.latest("pk")
    assert (reinstated.figures["restored"], reinstated.figures["redone"]) == (1, 1)


def test_requalify_gives_another_chance_and_brings_nothing_back(project):
    ann, lead = member(project, "ann"), member(project, "lead", role="lead")
    question = answering_question(screens(project, 1)[0])
    lease = assignment_next(project=project, user=ann, stage="answers")
    body = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    assignment_submit(assignment_id=lease.pk, user=ann, data=body)
    rule_pause(project, ann, "answers")
    standing_act(project=project, user_id=ann.pk, stage="answers", action="requalify", actor=lead)
    assert list(Answer.objects.filter(annotator=ann).values_list("kept", flat=True)) == [False]


def test_a_stopped_reviewers_reviews_are_withdrawn_and_reviewed_again(project):
    # given a writer qualifying on two question sets, an answerer, and a reviewer who accepted the writer's
    # first set and rejected the second (so the writer did not qualify) and the answerer's answer
    project.qualification_review_sets = 2
    project.review_rate = 1.0
    project.save()
    wes, ann = member(project, "wes"), member(project, "ann")
    rita, lead = member(project, "rita", role="reviewer"), member(project, "lead", role="lead")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    first, second = write_sets(project, wes, 2)
    question = answering_question(screens(project, 1)[0], text="What does label 1 say?")
    lease = assignment_next(project=project, user=ann, stage="answers")
    body = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    answered = assignment_submit(assignment_id=lease.pk, user=ann, data=body)
    assert review_next(project, rita, "accepted") == first.pk
    assert review_next(project, rita, "rejected", reason="counting") == second.pk
    assert review_next(project, rita, "rejected", reason="wrong-element") == answered.pk
    assert standing_of(wes, "questions-1") == StandingStatus.NOT_QUALIFIED
    assert reasons_of(wes) == [""] * 3 + ["review-rejected"] * 3  # the accepted set stays: a review vouched
    assert Answer.objects.get(annotator=ann).drop_reason == "review-rejected"
    # when a rule pauses the reviewer
    event = rule_pause(project, rita, "review")
    # then their three reviews are withdrawn (kept for the record) and the submissions wait for review
    assert event.figures["withdrawn"] == 3
    withdrawn = Review.objects.filter(reviewer=rita)
    assert set(withdrawn.values_list("reviewed", "withdrawn_reason")) == {(None, "withdrawn")}
    assert set(withdrawn.values_list("withdrawn_from", flat=True)) == {first.pk, second.pk, answered.pk}
    states = Assignment.objects.filter(pk__in=[first.pk, second.pk, answered.pk]).values_list("review_state", flat=True)
    assert set(states) == {ReviewState.SAMPLED}
    # and the rejections' effects are undone: the answer counts again, the rejected set is back
    answer = Answer.objects.get(annotator=ann)
    assert (answer.kept, answer.drop_reason) == (True, "")
    assert Question.objects.get(pk=question.pk).state == QuestionState.ANSWERED
    # and the writer's qualification, decided on those reviews, is open again: what the decision
    # withdrew is back too
    assert standing_of(wes, "questions-1") == StandingStatus.QUALIFYING
    assert wes.quality_events.latest("pk").rule == "review-reopened"
    assert reasons_of(wes) == [""] * 6
    # when a lead reviews the submissions again
    assert review_next(project, lead, "accepted") == first.pk
    assert review_next(project, lead, "accepted") == second.pk
    # then the writer qualifies on the new reviews
    assert standing_of(wes, "questions-1") == StandingStatus.ACTIVE
    assert Review.objects.filter(reviewed=first).get().reviewer == lead
    # when a lead reinstates the reviewer: the review nobody redid comes back (and does again what
    # it did), the two the lead redid stay withdrawn
    standing_act(project=project, user_id=rita.pk, stage="review", action="reinstate", actor=lead)
    reinstated = rita.quality_events.latest("pk")
    assert (reinstated.figures["restored"], reinstated.figures["redone"]) == (1, 2)
    assert Answer.objects.get(annotator=ann).drop_reason == "review-rejected"
