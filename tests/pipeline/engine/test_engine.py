"""The engine's contract: open assignment, idempotent submit, late submits, access."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import Assignment, AssignmentStatus, Question, ScreenState
from pipeline.engine import (
    assignment_next,
    assignment_release,
    assignment_result,
    assignment_skip,
    assignment_submit,
    stages_for_user,
)
from tests.factories import UserFactory
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db
BODY = {"questions": ["What is the title?"]}


def run_out(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def test_next_returns_the_open_assignment_until_it_is_done(project):
    a = member(project, "a")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    first = assignment_next(project=project, user=a, stage="questions-1")
    assert assignment_next(project=project, user=a, stage="questions-1").pk == first.pk
    assignment_submit(assignment_id=first.pk, user=a, data=BODY)
    second = assignment_next(project=project, user=a, stage="questions-1")
    assert second.pk != first.pk and second.screen_id != first.screen_id


def test_same_submission_twice_is_one_row_and_the_same_answer(project):
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    first = assignment_result(assignment=assignment_submit(assignment_id=lease.pk, user=a, data=BODY))
    again = assignment_result(assignment=assignment_submit(assignment_id=lease.pk, user=a, data=dict(BODY)))
    assert first == again
    assert Question.objects.count() == 1
    with pytest.raises(ConflictError):
        assignment_submit(assignment_id=lease.pk, user=a, data={"questions": ["Something else?"]})
    assert Question.objects.count() == 1


def test_late_submit_is_accepted_when_nobody_took_the_work(project):
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    run_out(lease)
    done = assignment_submit(assignment_id=lease.pk, user=a, data=BODY)
    assert done.status == AssignmentStatus.SUBMITTED
    screen.refresh_from_db()
    assert screen.state == ScreenState.QUESTIONS_2


def test_submit_after_release_is_accepted_while_the_work_is_free(project):
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    assignment_release(assignment_id=lease.pk, user=a)
    assert assignment_submit(assignment_id=lease.pk, user=a, data=BODY).status == AssignmentStatus.SUBMITTED


def test_late_submit_after_someone_else_took_the_work_is_409_and_kept(project):
    # given A's lease ran out and B took the screen
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    run_out(lease)
    taken = assignment_next(project=project, user=b, stage="questions-1")
    assert taken.screen_id == lease.screen_id
    # when A submits
    with pytest.raises(ConflictError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=BODY)
    # then 409 with a clear message, nothing written, and A's content is A's draft
    assert "someone else" in err.value.message
    lease.refresh_from_db()
    assert (lease.status, lease.draft) == (AssignmentStatus.EXPIRED, BODY)
    assert not Question.objects.exists()
    # and B still submits normally
    assert assignment_submit(assignment_id=taken.pk, user=b, data=BODY).status == AssignmentStatus.SUBMITTED


def test_skipped_work_cannot_be_submitted_after_another_writer_took_it(project):
    a, b = member(project, "a"), member(project, "b")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    assignment_skip(assignment_id=lease.pk, user=a, reason="blank")
    other = assignment_next(project=project, user=b, stage="questions-1")
    assignment_submit(assignment_id=other.pk, user=b, data=BODY)
    with pytest.raises(ConflictError):
        assignment_submit(assignment_id=lease.pk, user=a, data=BODY)


def test_access_rules(project, outsider):
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    with pytest.raises(NotFoundError):
        assignment_next(project=project, user=outsider, stage="questions-1")
    with pytest.raises(NotFoundError):
        assignment_next(project=project, user=a, stage="no-such-stage")
    lease = assignment_next(project=project, user=a, stage="questions-1")
    with pytest.raises(NotFoundError):
        assignment_submit(assignment_id=lease.pk, user=outsider, data=BODY)
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=["not", "an", "object"])  # type: ignore[arg-type]
    assert err.value.field == "body"
    # a site admin needs no membership
    admin = UserFactory(username="root", is_superuser=True)
    assert assignment_next(project=project, user=admin, stage="questions-1") is None


def test_stages_for_user_counts_available_and_done_today(project):
    a = member(project, "a")
    writer_only = member(project, "w", pool=False)
    screens(project, 3, state=ScreenState.QUESTIONS_1)
    (answer_screen,) = screens(project, 1)
    answering_question(answer_screen)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    assignment_submit(assignment_id=lease.pk, user=a, data=BODY)
    rows = {row["stage"]: row for row in stages_for_user(project=project, user=a)}
    assert list(rows) == ["prefilter", "questions-1", "questions-2", "answers", "not-answerable"]
    assert (rows["questions-1"]["available"], rows["questions-1"]["done_today"]) == (2, 1)
    assert rows["questions-2"]["available"] == 0  # A wrote pass 1 of the only screen in pass 2
    assert rows["answers"]["available"] == 1
    assert "answers" not in {row["stage"] for row in stages_for_user(project=project, user=writer_only)}


def test_next_query_counts(project, django_assert_max_num_queries):
    a = member(project, "a")
    screens(project, 20, state=ScreenState.QUESTIONS_1, candidates=30)
    # an annotator's first contact with a stage records their standing (once per stage)
    first = assignment_next(project=project, user=a, stage="questions-1")
    assignment_submit(assignment_id=first.pk, user=a, data={"questions": ["x?"]})
    # (inside the test's transaction, BEGIN/COMMIT show up as SAVEPOINT/RELEASE: 2 of these;
    # synchronous_commit is set by the user lock's statement; no UPDATE of run-out leases
    # when there are none; the standing is one query here, none through the API, where it
    # comes with the membership; while the writer qualifies by review, one more: how many of their
    # sets wait for it)
    with django_assert_max_num_queries(10):
        lease = assignment_next(project=project, user=a, stage="questions-1")
    with django_assert_max_num_queries(3):  # membership, open check, the assignment: no lock, no write
        assert assignment_next(project=project, user=a, stage="questions-1").pk == lease.pk
    with django_assert_max_num_queries(10):  # one more than before quality control: the count of items done
        assignment_submit(assignment_id=lease.pk, user=a, data={"questions": ["a?", "b?", "c?"]})


def test_resubmitting_pass_two_and_not_answerable_is_idempotent(project):
    # given accepted pass-2 and not-answerable submissions (whose questions are now on the screen)
    a, b, c = member(project, "a"), member(project, "b"), member(project, "c")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    assignment_submit(assignment_id=lease.pk, user=a, data={"questions": ["First?"]})
    second = assignment_next(project=project, user=b, stage="questions-2")
    body = {"questions": ["Second?"]}
    assignment_submit(assignment_id=second.pk, user=b, data=body)
    screen.refresh_from_db()
    screen.not_answerable_sampled = True
    screen.save()
    na = assignment_next(project=project, user=c, stage="not-answerable")
    assignment_submit(assignment_id=na.pk, user=c, data={"question": "Where is the exit?"})
    # when the same bodies arrive again (a client retry), then they are accepted once
    assert assignment_submit(assignment_id=second.pk, user=b, data=body).status == AssignmentStatus.SUBMITTED
    assert assignment_submit(assignment_id=na.pk, user=c, data={"question": "Where is the exit?"}).submission == {
        "question": "Where is the exit?"
    }
    assert Question.objects.filter(screen=screen).count() == 3


def test_compiled_claim_is_checked_against_the_orm_and_gives_the_queue_head(project):
    # given a compiled-claim cache that is empty, and three screens
    from annotation.db import compiled

    claim_key = ("first", ("claim", ("questions-1", "from")))  # the claim from the pivot
    compiled.forget(claim_key)
    a, b = member(project, "a"), member(project, "b")
    made = screens(project, 3, state=ScreenState.QUESTIONS_1)
    # when two annotators ask in turn
    first = assignment_next(project=project, user=a, stage="questions-1")
    second = assignment_next(project=project, user=b, stage="questions-1")
    # then they get the oldest screens, loaded for the payload, and the statement was cached
    # (on PostgreSQL: it matched the ORM's SQL and parameters with the real values)
    assert (first.screen_id, second.screen_id) == (made[0].pk, made[1].pk)
    assert first.screen.app.package == made[0].app.package
    assert first.screen.rico_id == made[0].rico_id
    assert compiled.is_cached(claim_key)


@pytest.mark.parametrize("stage", ["questions-1", "answers", "prefilter"])
def test_the_fresh_recheck_sees_a_lease_taken_after_the_claim(project, stage):
    # given a unit open to annotator a (a screen, or a question needing one answer)
    from pipeline.engine.services import _still_open
    from pipeline.stages.registry import stage_get

    a, b = member(project, "a"), member(project, "b")
    state = {"questions-1": ScreenState.QUESTIONS_1, "prefilter": ScreenState.PREFILTER}.get(stage)
    (screen,) = screens(project, 1, state=state or ScreenState.QUESTIONS_1)
    unit = answering_question(screen, needed=1) if stage == "answers" else screen
    definition, now = stage_get(stage), timezone.now()
    assert _still_open(stage=definition, project=project, user=a, now=now, unit=unit)
    # when b's lease of it commits (as if after a's claim read the queue)
    assignment_next(project=project, user=b, stage=stage)
    # then the re-check says it is no longer open to a, and a's next finds nothing
    assert not _still_open(stage=definition, project=project, user=a, now=now, unit=unit)
    assert assignment_next(project=project, user=a, stage=stage) is None
