"""Races on PostgreSQL with real threads: no unit leased twice at once, caps and counts exact.

Each thread is one annotator asking for work and submitting it as fast as it can.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from annotation.exceptions import ConflictError
from annotation.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    ControlResult,
    PrefilterJudgment,
    Purpose,
    Screen,
    ScreenState,
    Split,
    Standing,
    StandingStatus,
)
from pipeline.engine import assignment_double_leases, assignment_next, assignment_release, assignment_submit
from pipeline.quality.gold import gold_item_create
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 32


def run_threads(workers: list[Callable[[], Any]]) -> list[BaseException]:
    """Start all workers at once; each closes its own DB connection. Returns their errors."""
    barrier = threading.Barrier(len(workers))
    errors: list[BaseException] = []

    def wrap(work: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=30)
            work()
        except BaseException as exc:  # collected and asserted in the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=wrap, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker hung (deadlock?)"
    return errors


def drain(project, user, stage: str, body: Callable[[Assignment], dict], seed: int, release_rate: float = 0.0):
    rng = random.Random(seed)

    def work() -> None:
        for _ in range(5000):  # bounded
            lease = assignment_next(project=project, user=user, stage=stage)
            if lease is None:
                # Nothing for me now; but work another annotator holds may still be given
                # back (released), and then perhaps only I may take it: stop only when
                # nobody holds anything.
                if Assignment.objects.filter(project=project, stage=stage, status=AssignmentStatus.LEASED).exists():
                    time.sleep(0.005)
                    continue
                return
            # (only real work: a gold item given back counts as wrong, docs/quality.md)
            if lease.purpose == "work" and rng.random() < release_rate:
                assignment_release(assignment_id=lease.pk, user=user)
                continue
            assignment_submit(assignment_id=lease.pk, user=user, data=body(lease))

    return work


def test_32_writers_over_200_screens(project):
    # given 200 screens waiting for pass 1 and 32 writers who sometimes give work back
    made = screens(project, 200, state=ScreenState.QUESTIONS_1, candidates=1)
    writers = [member(project, f"w{i}") for i in range(THREADS)]
    for writer in writers:  # qualified already (a writer qualifying by review waits for it after 5 sets)
        Standing.objects.create(project=project, user=writer, stage="questions-1", status=StandingStatus.ACTIVE)
    # when they all drain the queue at once
    errors = run_threads(
        [
            drain(project, w, "questions-1", lambda lease: {"questions": [f"Q {lease.screen_id}?"]}, i, 0.1)
            for i, w in enumerate(writers)
        ]
    )
    # then every screen got exactly one pass-1 writer, and no screen was ever held by two at once
    assert errors == []
    submitted = Assignment.objects.filter(stage="questions-1", status=AssignmentStatus.SUBMITTED)
    assert sorted(submitted.values_list("screen_id", flat=True)) == sorted(s.pk for s in made)
    assert assignment_double_leases(project=project) == 0
    assert set(Screen.objects.filter(pk__in=[s.pk for s in made]).values_list("state", flat=True)) == {
        ScreenState.QUESTIONS_2
    }


def test_32_answerers_fill_every_question_exactly(project):
    # given 40 validation questions (3 answers each), written by one author
    author = member(project, "author")
    made = screens(project, 20, candidates=2)
    questions = []
    for screen in made:
        screen.state, screen.split = ScreenState.ANSWERING, Split.VALIDATION
        screen.save()
        questions += [answering_question(screen, author=author, needed=3, text=f"Q{k}?") for k in range(2)]
    answerers = [member(project, f"a{i}") for i in range(THREADS)]
    body = {"question": "Q?", "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "A."}
    # when 32 answerers drain the queue (and the author tries too)
    workers = [drain(project, a, "answers", lambda lease: body, i, 0.1) for i, a in enumerate(answerers)]
    errors = run_threads([*workers, drain(project, author, "answers", lambda lease: body, 99)])
    # then each question has exactly 3 answers by 3 different non-authors
    assert errors == []
    per_question = Counter(Answer.objects.values_list("question_id", flat=True))
    assert per_question == {q.pk: 3 for q in questions}
    pairs = list(Answer.objects.values_list("question_id", "annotator_id"))
    assert len(pairs) == len(set(pairs))
    assert not Answer.objects.filter(annotator=author).exists()
    assert assignment_double_leases(project=project) == 0
    for q in questions:
        q.refresh_from_db()
        assert (q.answers_done, q.state) == (3, "answered")


def test_three_judges_per_screen_under_contention(project):
    project.prefilter_judgments = 3
    project.save()
    made = screens(project, 60, candidates=1)
    judges = [member(project, f"j{i}") for i in range(THREADS)]
    body = {"non_english_app": False, "vh_out_of_sync": False, "note": ""}
    errors = run_threads([drain(project, j, "prefilter", lambda lease: body, i) for i, j in enumerate(judges)])
    assert errors == []
    per_screen = Counter(PrefilterJudgment.objects.values_list("screen_id", flat=True))
    assert per_screen == {s.pk: 3 for s in made}
    assert assignment_double_leases(project=project) == 0


def test_one_annotator_asking_twice_at_once_gets_one_assignment(project):
    screens(project, 10, state=ScreenState.QUESTIONS_1, candidates=1)
    a = member(project, "a")
    got: list[int] = []

    def ask() -> None:
        lease = assignment_next(project=project, user=a, stage="questions-1")
        got.append(lease.pk)

    assert run_threads([ask] * 8) == []
    assert len(set(got)) == 1
    assert Assignment.objects.filter(annotator=a, status=AssignmentStatus.LEASED).count() == 1


def test_same_submission_from_two_threads_is_one_row(project):
    screens(project, 1, state=ScreenState.QUESTIONS_1, candidates=1)
    a = member(project, "a")
    lease = assignment_next(project=project, user=a, stage="questions-1")
    results: list[str] = []

    def submit() -> None:
        try:
            results.append(assignment_submit(assignment_id=lease.pk, user=a, data={"questions": ["Once?"]}).status)
        except ConflictError as exc:
            results.append(f"conflict: {exc.message}")

    assert run_threads([submit] * 8) == []
    assert results == ["submitted"] * 8
    assert Assignment.objects.get(pk=lease.pk).screen.questions.count() == 1


def test_control_items_and_qualifications_mixed_in_under_contention(project):
    # given 120 screens waiting for pre-filtering, 30 gold screens, a high control rate, and 16
    # annotators new to the stage (each qualifies on 5 gold items first)
    project.qualification_items = 5
    project.control_rate = project.control_rate_new = 0.5
    project.fast_response_seconds = 0  # the threads submit at once
    project.save()
    lead = member(project, "lead", role="lead")
    real = screens(project, 120, candidates=1)
    gold_screens = screens(project, 30, state=ScreenState.EXCLUDED, exclusion_reason="vh_out_of_sync", candidates=1)
    right = {"non_english_app": False, "vh_out_of_sync": False}
    for screen in gold_screens:
        gold_item_create(project=project, stage="prefilter", screen=screen, question=None, answer=right, user=lead)
    judges = [member(project, f"j{i}") for i in range(16)]
    # when they all drain the queue at once, sometimes giving work back
    errors = run_threads(
        [drain(project, j, "prefilter", lambda lease: {**right, "note": ""}, i, 0.1) for i, j in enumerate(judges)]
    )
    # then nobody held a unit twice, every judge qualified, and no gold item went twice to one judge
    assert errors == []
    assert assignment_double_leases(project=project) == 0
    assert set(Standing.objects.filter(user__in=judges).values_list("status", flat=True)) == {StandingStatus.ACTIVE}
    held = Assignment.objects.filter(
        gold__isnull=False, status__in=[AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED]
    )
    pairs = list(held.values_list("annotator_id", "gold_id"))
    assert len(pairs) == len(set(pairs))
    served = Counter(held.filter(status=AssignmentStatus.SUBMITTED).values_list("purpose", flat=True))
    assert served[Purpose.QUALIFICATION] == 16 * 5
    assert served[Purpose.CONTROL] > 0
    assert ControlResult.objects.count() == sum(served.values())
    # and every real screen has exactly one judgment, the gold screens none
    work = Assignment.objects.filter(purpose=Purpose.WORK, status=AssignmentStatus.SUBMITTED)
    assert sorted(work.values_list("screen_id", flat=True)) == sorted(s.pk for s in real)
    assert Counter(PrefilterJudgment.objects.values_list("screen_id", flat=True)) == {s.pk: 1 for s in real}
    assert set(Screen.objects.filter(pk__in=[s.pk for s in real]).values_list("state", flat=True)) == {
        ScreenState.QUESTIONS_1
    }
