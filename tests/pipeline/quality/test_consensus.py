"""Consensus figures: agreement with the majority, and Dawid–Skene on hand-checked examples."""

from __future__ import annotations

import random

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


# --- each part by itself (what a planted bug would change) -----------------------------------------


def test_dawid_skene_counts_its_iterations_and_stops_at_the_cap_or_when_nothing_moves():
    truth = {1: "yes", 2: "yes", 3: "no", 4: "no"}
    flip = {"yes": "no", "no": "yes"}
    votes = [(i, w, t) for i, t in truth.items() for w in ("A", "B")] + [(i, "C", flip[t]) for i, t in truth.items()]
    votes += [(5, "A", "yes"), (5, "C", "no")]
    assert dawid_skene(votes).iterations == 6  # by running it: the posteriors settle at the sixth
    assert dawid_skene(votes, max_iterations=1).iterations == 1
    assert dawid_skene(votes, tolerance=0).iterations == 100  # never exactly still: the default cap
    # one class only: nothing moves after the first round, which is not "less than" a tolerance of 0
    assert dawid_skene([(1, "A", "x"), (1, "B", "x")], tolerance=0).iterations == 100
    assert dawid_skene([(1, "A", "x"), (1, "B", "x")]).iterations == 1


def test_dawid_skene_gives_distributions_from_the_first_round():
    votes = [(1, "A", "yes"), (1, "B", "yes"), (1, "C", "no"), (2, "A", "no"), (2, "B", "no"), (2, "C", "no")]
    for rounds in (1, 100):
        result = dawid_skene(votes, max_iterations=rounds)
        assert sum(result.priors.values()) == pytest.approx(1)
        for posterior in result.posteriors.values():
            assert sum(posterior.values()) == pytest.approx(1)
        for matrix in result.confusion.values():
            for row in matrix.values():
                assert sum(row.values()) == pytest.approx(1)
    # no votes, no rounds: empty figures, not missing ones
    empty = dawid_skene([], max_iterations=0)
    assert (empty.priors, empty.confusion, empty.labels, empty.accuracy) == ({}, {}, {}, {})


def test_dawid_skene_takes_workers_and_classes_of_any_kind():
    # user ids and names, labels of mixed types: sorted by their repr, never compared directly
    votes = [(1, 7, "x"), (1, "bot", "x"), (2, 7, 0), (2, "bot", 0)]
    result = dawid_skene(votes)
    assert result.labels == {1: "x", 2: 0}
    assert set(result.accuracy) == {7, "bot"}


def test_the_prior_breaks_a_tie_between_equally_reliable_workers():
    # many items are "yes"; on item 99 A says yes and B no, and both are as reliable as each other
    votes = [(i, w, "yes") for i in range(8) for w in ("A", "B")] + [(i, w, "no") for i in (8, 9) for w in ("A", "B")]
    votes += [(99, "A", "yes"), (99, "B", "no")]
    result = dawid_skene(votes)
    assert result.priors["yes"] > 0.7
    assert result.labels[99] == "yes" and result.posteriors[99]["yes"] > 0.5


def test_many_votes_on_one_item_do_not_underflow():
    votes = [(1, f"w{n}", "yes" if n % 4 else "no") for n in range(400)]
    votes += [(2, f"w{n}", "no") for n in range(400)]
    result = dawid_skene(votes)
    assert result.labels == {1: "yes", 2: "no"}
    assert sum(result.posteriors[1].values()) == pytest.approx(1)
    # 600 coin-flipping workers on each of ten items: every class's likelihood is about 0.5^600, far under
    # the smallest float; only the step to the best class's log (``v - top``) keeps the posteriors finite
    rng = random.Random(3)
    coins = [(item, f"w{n}", rng.choice(["a", "b"])) for item in range(10) for n in range(600)]
    flipped = dawid_skene(coins)
    assert all(sum(p.values()) == pytest.approx(1) for p in flipped.posteriors.values())


def test_a_majority_is_more_than_half():
    from pipeline.decisions.agreement import AgreementSettings, AnswerView
    from pipeline.quality.consensus import majority_of

    settings = AgreementSettings()
    na, invalid = AnswerView(verdict="not_answerable"), AnswerView(verdict="invalid")
    assert majority_of([na, na, na, invalid], settings=settings) == {0, 1, 2}
    assert majority_of([na, na, invalid, invalid], settings=settings) == set()  # a tie
    # a group of exactly half (the other two agree with nobody) is not a majority
    assert majority_of([na, na, invalid, AnswerView(verdict="answered")], settings=settings) == set()
    assert majority_of([na, na, invalid], settings=settings) == {0, 1}
    assert majority_of([na, invalid], settings=settings) == set()


def test_every_pair_of_flags_is_its_own_class():
    from pipeline.quality.consensus import prefilter_class

    assert prefilter_class(non_english_app=False, vh_out_of_sync=False) == "ok"
    assert prefilter_class(non_english_app=False, vh_out_of_sync=True) == "out_of_sync"
    assert prefilter_class(non_english_app=True, vh_out_of_sync=False) == "non_english"
    assert prefilter_class(non_english_app=True, vh_out_of_sync=True) == "both"


def _judge(project, screen, judge, *, non_english=False, out_of_sync=False):
    now = timezone.now()
    lease = Assignment.objects.create(
        project=project,
        stage="prefilter",
        screen=screen,
        annotator=judge,
        status=AssignmentStatus.SUBMITTED,
        lease_expires_at=now,
        submitted_at=now,
    )
    PrefilterJudgment.objects.create(
        assignment=lease, screen=screen, annotator=judge, non_english_app=non_english, vh_out_of_sync=out_of_sync
    )


@pytest.mark.django_db
def test_prefilter_dawid_skene_with_two_judgments_a_screen(project):
    j1, j2 = member(project, "j1"), member(project, "j2")
    project.prefilter_judgments = 2
    project.save()
    both, split, alone = screens(project, 3)
    # only one judgment so far: no screen to aggregate, and figures that say so
    _judge(project, alone, j1)
    assert prefilter_dawid_skene(project=project) == {"screens": 0, "judges": {}, "classes": {}, "iterations": 0}
    _judge(project, both, j1, non_english=True)
    _judge(project, both, j2, non_english=True)
    _judge(project, split, j1)
    _judge(project, split, j2, out_of_sync=True)
    figures = prefilter_dawid_skene(project=project)
    expected = dawid_skene(
        [
            (both.pk, j1.pk, "non_english"),
            (both.pk, j2.pk, "non_english"),
            (split.pk, j1.pk, "ok"),
            (split.pk, j2.pk, "out_of_sync"),
        ]
    )
    assert figures == {
        "screens": 2,
        "judges": {
            j1.pk: {"judgments": 2, "accuracy": round(expected.accuracy[j1.pk], 4)},
            j2.pk: {"judgments": 2, "accuracy": round(expected.accuracy[j2.pk], 4)},
        },
        "classes": dict(sorted({"non_english": 1, str(expected.labels[split.pk]): 1}.items())),
        "iterations": expected.iterations,
    }
    assert round(expected.accuracy[j1.pk], 4) != round(expected.accuracy[j1.pk], 5)
