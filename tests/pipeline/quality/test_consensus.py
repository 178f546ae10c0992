"""Consensus figures: agreement with the majority, and Dawid–Skene on hand-checked examples."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotation.models import Answer, AnswerElement, Assignment, AssignmentStatus, PrefilterJudgment, Question
from pipeline.quality.consensus import dawid_skene, prefilter_dawid_skene
from pipeline.quality.report import quality_report
from tests.pipeline.stages.helpers import answering_question, member, screens


def test_dawid_skene_finds_the_worker_who_is_always_wrong_and_breaks_a_tie_by_reliability():
    # Given A and B always right and C always wrong on items 1-4 (yes, yes, no, no) ...
    truth = {1: "yes", 2: "yes", 3: "no", 4: "no"}
    flip = {"yes": "no", "no": "yes"}
    votes = [(i, w, t) for i, t in truth.items() for w in ("A", "B")] + [(i, "C", flip[t]) for i, t in truth.items()]
    # ... and item 5 judged by A ("yes") and C ("no") only: a tie for the majority vote
    votes += [(5, "A", "yes"), (5, "C", "no")]
    result = dawid_skene(votes)
    # Then (by hand: confusion[k][k] = (2 + 0.01 smoothing) / (2 + 0.02) once posteriors are 0/1,
    # item 5 adding ~1 to A's and C's counts) A and B are ~99.5% accurate, C ~0.5%
    assert result.accuracy["B"] == pytest.approx(2.01 / 2.02, abs=1e-3)
    assert result.accuracy["A"] == pytest.approx(3.01 / 3.02, abs=2e-3)
    assert result.accuracy["C"] == pytest.approx(0.01 / 3.02, abs=2e-3)
    # And the labels are the truth, item 5 going with the reliable judge
    assert result.labels == {**truth, 5: "yes"}
    assert result.posteriors[5]["yes"] > 0.99
    assert result.priors["yes"] == pytest.approx(3 / 5, abs=1e-2)


def test_dawid_skene_with_unanimous_workers_is_the_majority_vote():
    votes = [(i, w, "x" if i % 2 else "y") for i in range(6) for w in ("A", "B", "C")]
    result = dawid_skene(votes)
    assert result.labels == {i: "x" if i % 2 else "y" for i in range(6)}
    assert all(a == pytest.approx(3.01 / 3.02, abs=1e-6) for a in result.accuracy.values())
    assert result.iterations <= 3


def answer(question: Question, user, *texts: str) -> None:
    verdict = "answered" if texts else "not_answerable"
    made = Answer.objects.create(question=question, annotator=user, verdict=verdict, question_text=question.text)
    for i, text in enumerate(texts):
        AnswerElement.objects.create(
            answer=made, position=i, left=0, top=50 * i, right=100, bottom=50 * i + 40, text=text
        )


@pytest.mark.django_db
def test_majority_agreement_on_validation_questions(project):
    u1, u2, u3 = (member(project, name) for name in ("u1", "u2", "u3"))
    first, second, third, train = screens(project, 4)
    for screen in (first, second, third):
        screen.split = "validation"
        screen.save()
    q1, q2, q3 = (answering_question(s, needed=3) for s in (first, second, third))
    answer(q1, u1, "OK")
    answer(q1, u2, "OK")
    answer(q1, u3, "Cancel")  # the odd one out
    for user in (u1, u2, u3):
        answer(q2, user, "Yes")
    answer(q3, u1, "Red")  # three different answers: no majority
    answer(q3, u2, "Green")
    answer(q3, u3, "Blue")
    answer(answering_question(train, needed=1), u3, "Other")  # train: one answer, not counted
    # the lead's report counts, per annotator, their answers to questions with a majority and those in it
    Question.objects.filter(pk__in=[q1.pk, q2.pk, q3.pk]).update(state="answered")
    rows = {row.user_id: row for row in quality_report(project=project)}
    assert {u: (rows[u.pk].agreement_agreed, rows[u.pk].agreement_answers) for u in (u1, u2, u3)} == {
        u1: (2, 3),
        u2: (2, 3),
        u3: (1, 3),
    }


@pytest.mark.django_db
def test_prefilter_dawid_skene_reports_each_judge(project):
    judges = [member(project, name) for name in ("j1", "j2", "j3")]
    made = screens(project, 4)
    assert prefilter_dawid_skene(project=project) is None  # one judgment per screen: nothing to aggregate
    project.prefilter_judgments = 3
    project.save()
    now = timezone.now()
    for n, screen in enumerate(made):
        out_of_sync = n % 2 == 0
        for judge in judges:
            lease = Assignment.objects.create(
                project=project,
                stage="prefilter",
                screen=screen,
                annotator=judge,
                status=AssignmentStatus.SUBMITTED,
                lease_expires_at=now,
                submitted_at=now,
            )
            wrong = judge.username == "j3"  # j3 always judges the sync the other way
            PrefilterJudgment.objects.create(
                assignment=lease,
                screen=screen,
                annotator=judge,
                non_english_app=False,
                vh_out_of_sync=out_of_sync != wrong,
            )
    figures = prefilter_dawid_skene(project=project)
    assert figures is not None
    assert figures["screens"] == 4
    assert figures["classes"] == {"ok": 2, "out_of_sync": 2}
    accuracy = {pk: judge["accuracy"] for pk, judge in figures["judges"].items()}
    assert accuracy[judges[0].pk] == pytest.approx(0.995, abs=1e-3)
    assert accuracy[judges[1].pk] == pytest.approx(0.995, abs=1e-3)
    assert accuracy[judges[2].pk] < 0.01
    assert all(judge["judgments"] == 4 for judge in figures["judges"].values())
