"""The engine's contract: open assignment, idempotent submit, late submits, access."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.db import compiled
from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    Membership,
    Purpose,
    QualityEvent,
    Question,
    ScreenState,
    Standing,
    StandingStatus,
)
from pipeline.engine import (
    assignment_double_leases,
    assignment_draft_save,
    assignment_expire_leases,
    assignment_extend,
    assignment_next,
    assignment_next_by_slug,
    assignment_payload,
    assignment_release,
    assignment_result,
    assignment_skip,
    assignment_submit,
    stages_for_user,
    work_payload,
)
from pipeline.engine.services import _next, _still_open, member_context_get
from pipeline.quality.standing import StandingBrief, entered_unqualified
from pipeline.stages.registry import stage_get
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.pipeline.quality.builders import RIGHT, gold_prefilter, rule_pause
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db
BODY = {"questions": ["What is the title?"]}
CLAIM = ("first", ("claim", ("questions-1", "from")))  # the compiled claim from the pivot


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


# --- the survivors of mutation testing (docs/mutation.md) ---


def lease_by_hand(project, user, screen, stage="questions-1", **kw):
    """A live lease made by hand (no queue, no check)."""
    return Assignment.objects.create(
        project=project,
        stage=stage,
        screen=screen,
        annotator=user,
        lease_expires_at=timezone.now() + timedelta(minutes=30),
        **kw,
    )


def test_member_context_reads_the_callers_own_open_lease_and_standing_of_the_stage(project):
    # given the member-open statement forgotten (so that this test compiles it)
    compiled.forget(("first", ("member-open", "questions-1")))
    other = ProjectFactory(slug="other")
    a, b = member(project, "a"), member(project, "b")
    MembershipFactory(project=other, user=a)
    decoy_screens = screens(other, 1, state=ScreenState.QUESTIONS_1)
    made = screens(project, 4, state=ScreenState.QUESTIONS_1)
    now = timezone.now()
    # decoys made first: a's lease in another project and in another stage, b's lease of the stage,
    # a's lease of the stage that ended, and a's standings elsewhere
    lease_by_hand(other, a, decoy_screens[0])
    lease_by_hand(project, a, made[0], stage="questions-2")
    lease_by_hand(project, b, made[1])
    lease_by_hand(project, a, made[2], status=AssignmentStatus.EXPIRED)
    Standing.objects.create(project=other, user=a, stage="questions-1", status=StandingStatus.PAUSED)
    Standing.objects.create(project=project, user=a, stage="questions-2", status=StandingStatus.NOT_QUALIFIED)
    Standing.objects.create(project=project, user=b, stage="questions-1", status=StandingStatus.QUALIFYING)
    # when a has no open lease nor standing of the stage, then neither is read
    context = member_context_get(slug="demo", user=a, stage="questions-1")
    assert (context.project.pk, context.project.slug) == (project.pk, "demo")
    assert (context.membership.user_id, context.membership.project_id) == (a.pk, project.pk)
    assert context.membership.project is context.project
    assert (context.open, context.standing) == (None, None)
    # when a holds two leases of the stage (the later made first) and a standing in it
    later = lease_by_hand(project, a, made[3])
    earlier = lease_by_hand(project, a, made[2])
    Assignment.objects.filter(pk=later.pk).update(created_at=now)
    Assignment.objects.filter(pk=earlier.pk).update(created_at=now - timedelta(minutes=1))
    Standing.objects.create(
        project=project,
        user=a,
        stage="questions-1",
        status=StandingStatus.ACTIVE,
        attempt=2,
        items_done=7,
        controls_done=3,
        evidence=1.5,
    )
    context = member_context_get(slug="demo", user=a, stage="questions-1")
    # then the open one is the earliest made, and the standing is a's own in the stage
    assert context.open == (earlier.pk, earlier.lease_expires_at)
    assert context.standing == StandingBrief(StandingStatus.ACTIVE, 2, 7, 3, 1.5)


def test_member_context_refuses_strangers_and_reads_a_site_admins_open_lease(project):
    # given the member-open statement forgotten; a non-member, an unknown slug, an anonymous caller
    compiled.forget(("first", ("member-open", "questions-1")))
    a = member(project, "a")
    stranger = UserFactory(username="stranger")
    with pytest.raises(NotFoundError, match=r"^Project not found\.$"):
        member_context_get(slug="demo", user=stranger, stage="questions-1")
    with pytest.raises(NotFoundError, match=r"^Project not found\.$"):
        member_context_get(slug="nowhere", user=a, stage="questions-1")
    with pytest.raises(NotFoundError, match=r"^Project not found\.$"):
        member_context_get(slug="demo", user=AnonymousUser(), stage="questions-1")
    # a site admin needs no membership, but a project that exists
    admin = UserFactory(username="root", is_superuser=True)
    with pytest.raises(NotFoundError, match=r"^Project not found\.$"):
        member_context_get(slug="nowhere", user=admin, stage="questions-1")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    held = lease_by_hand(project, admin, screen)
    context = member_context_get(slug="demo", user=admin, stage="questions-1")
    assert (context.project.pk, context.membership, context.open) == (
        project.pk,
        None,
        (held.pk, held.lease_expires_at),
    )
    assert context.standing is True


def test_an_own_lease_that_ran_out_is_renewed_when_nobody_took_it(project):
    # given a's lease whose time ran out, nobody having taken the screen (both ways of asking)
    a = member(project, "a")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    for ask in (
        lambda: assignment_next(project=project, user=a, stage="questions-1"),
        lambda: assignment_next_by_slug(slug="demo", user=a, stage="questions-1").assignment,
    ):
        lease = ask()
        run_out(lease)
        # when a asks again, then a gets the same assignment with a fresh lease, stored
        again = ask()
        assert (again.pk, again.status) == (lease.pk, AssignmentStatus.LEASED)
        assert again.lease_expires_at > timezone.now() + timedelta(minutes=29)
        lease.refresh_from_db()
        assert lease.lease_expires_at > timezone.now() + timedelta(minutes=29)
        assignment_submit(assignment_id=lease.pk, user=a, data=BODY)


def test_extend_refuses_a_closed_assignment_in_words(project):
    # given a submitted assignment, when its lease is extended, then a conflict naming its status
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    assignment_submit(assignment_id=lease.pk, user=a, data=BODY)
    with pytest.raises(ConflictError) as err:
        assignment_extend(assignment_id=lease.pk, user=a)
    assert err.value.message == "This assignment is submitted; ask for new work instead."
    assert err.value.extra == {"status": "submitted"}


def controls_only(project):
    """Every lease of an active annotator a control item, beside two real screens that wait."""
    screens(project, 2)
    project.control_rate = project.control_rate_new = 1.0
    project.save(update_fields=["control_rate", "control_rate_new"])


def control_lease(project, user):
    """``user`` (made active in pre-filtering) leases a control item."""
    Standing.objects.get_or_create(
        project=project, user=user, stage="prefilter", defaults={"status": StandingStatus.ACTIVE}
    )
    lease = assignment_next(project=project, user=user, stage="prefilter")
    assert lease is not None and lease.purpose == Purpose.CONTROL
    return lease


def test_expiring_leases_scores_the_gold_items_left_in_this_sweep_and_project(project):
    # given control items in two projects, and a qualification item in this one
    other = ProjectFactory(slug="other")
    for p in (other, project):
        gold_prefilter(p, 3)
        controls_only(p)
    annie, olga, quinn, earl = (member(project, n) for n in ("annie", "olga", "quinn", "earl"))
    MembershipFactory(project=other, user=olga)
    elsewhere = control_lease(other, olga)  # another project's, ended in the same sweep's instant
    oscar = member(other, "oscar")
    running_out = control_lease(other, oscar)  # another project's, run out and not yet marked
    earlier = control_lease(project, earl)  # this project's, ended before (no result: a decoy)
    mine = control_lease(project, annie)
    project.qualification_items = 2
    project.save(update_fields=["qualification_items"])
    qualifying = assignment_next(project=project, user=quinn, stage="prefilter")
    assert qualifying.purpose == Purpose.QUALIFICATION
    now = timezone.now()
    Assignment.objects.filter(pk=elsewhere.pk).update(status=AssignmentStatus.EXPIRED, updated_at=now)
    Assignment.objects.filter(pk=earlier.pk).update(
        status=AssignmentStatus.EXPIRED, updated_at=now - timedelta(minutes=1)
    )
    Assignment.objects.filter(pk__in=[mine.pk, qualifying.pk, running_out.pk]).update(
        lease_expires_at=now - timedelta(seconds=1)
    )
    # when this project's run-out leases expire
    assert assignment_expire_leases(project=project, now=now) == 2
    # (another project's lease that ran out is left to its own sweep)
    assert Assignment.objects.get(pk=running_out.pk).status == AssignmentStatus.LEASED
    # then only the two gold items left in this sweep of this project count as wrong, left to expire
    results = ControlResult.objects.order_by("assignment_id").values_list("assignment_id", "correct", "outcome")
    assert list(results) == [(mine.pk, False, "expired"), (qualifying.pk, False, "expired")]
    # and a sweep of every project expires and scores the other project's too
    assert assignment_expire_leases(now=now) == 1
    assert ControlResult.objects.filter(assignment_id=elsewhere.pk, outcome="expired").exists()
    assert ControlResult.objects.filter(assignment_id=running_out.pk, outcome="expired").exists()
    assert not ControlResult.objects.filter(assignment_id=earlier.pk).exists()


def test_giving_back_a_gold_item_counts_it_as_released_and_a_beacon_keeps_it(project):
    # given annie's control item: leaving it untouched keeps it; giving it back scores it wrong, "released"
    gold_prefilter(project, 3)
    controls_only(project)
    annie = member(project, "annie")
    lease = control_lease(project, annie)
    kept = assignment_release(assignment_id=lease.pk, user=annie, untouched_leave=True)
    assert kept.status == AssignmentStatus.LEASED and not ControlResult.objects.exists()
    gone = assignment_release(assignment_id=lease.pk, user=annie)
    assert gone.status == AssignmentStatus.RELEASED
    results = ControlResult.objects.values_list("assignment_id", "correct", "outcome")
    assert list(results) == [(lease.pk, False, "released")]


def test_the_payload_names_the_work_and_its_draft(project):
    # given the claim compiled afresh (it reads the candidates along)
    compiled.forget(CLAIM)
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    work = assignment_next_by_slug(slug="demo", user=a, stage="questions-1")
    # then the payload names the assignment, its stage and status, the screen with the candidates
    # the claim read, and an empty draft; once a draft is saved, that draft
    payload = work_payload(work=work)
    assert (payload["id"], payload["stage"], payload["status"], payload["draft"]) == (
        work.assignment.pk,
        "questions-1",
        "leased",
        {},
    )
    assert payload["screen"]["rico_id"] == screen.rico_id
    assert [c["text"] for c in payload["screen"]["candidates"]] == [f"Label {k} of {screen.rico_id}" for k in (1, 2, 3)]
    saved = assignment_draft_save(assignment_id=work.assignment.pk, user=a, draft={"questions": ["Half"]})
    assert assignment_payload(assignment=saved)["draft"] == {"questions": ["Half"]}


def test_stages_for_user_takes_control_items_off_available_down_to_zero(project):
    # given two real prefilter screens and gold items served as control items only
    gold_prefilter(project, 3)
    controls_only(project)
    annie = member(project, "annie")
    # when annie holds one control item, then one of the two is off her figure
    first = control_lease(project, annie)
    rows = {row["stage"]: row for row in stages_for_user(project=project, user=annie)}
    assert (rows["prefilter"]["available"], rows["prefilter"]["open_assignment"]) == (1, first.pk)
    assert rows["prefilter"]["done_today"] == 0
    assert rows["prefilter"]["standing"].status == StandingStatus.ACTIVE
    # when she has done three, then the figure stops at zero
    for _ in range(3):
        lease = assignment_next(project=project, user=annie, stage="prefilter")
        assert lease.purpose == Purpose.CONTROL
        assignment_submit(assignment_id=lease.pk, user=annie, data={**RIGHT, "note": ""})
    rows = {row["stage"]: row for row in stages_for_user(project=project, user=annie)}
    assert (rows["prefilter"]["available"], rows["prefilter"]["open_assignment"]) == (0, None)
    assert rows["prefilter"]["done_today"] == 3


def test_stages_for_user_names_the_callers_oldest_open_lease_of_each_stage(project):
    # given a's two open leases of pass 1 (the newer made first), and leases that are not a's open ones here
    other = ProjectFactory(slug="other")
    a, b = member(project, "a"), member(project, "b")
    MembershipFactory(project=other, user=a)
    (elsewhere,) = screens(other, 1, state=ScreenState.QUESTIONS_2)
    made = screens(project, 4, state=ScreenState.QUESTIONS_1)
    now = timezone.now()
    # decoys first: a's lease in another project, b's lease, a's submitted and expired work
    lease_by_hand(other, a, elsewhere, stage="questions-2")
    lease_by_hand(project, b, made[0], stage="questions-2")
    lease_by_hand(project, a, made[1], stage="questions-2", status=AssignmentStatus.EXPIRED)
    newer = lease_by_hand(project, a, made[2])
    older = lease_by_hand(project, a, made[3])
    Assignment.objects.filter(pk=newer.pk).update(created_at=now)
    Assignment.objects.filter(pk=older.pk).update(created_at=now - timedelta(minutes=1))
    # when a's stages are listed, then only pass 1 names an open lease: the oldest
    rows = {row["stage"]: row for row in stages_for_user(project=project, user=a)}
    assert {stage: row["open_assignment"] for stage, row in rows.items()} == {
        "prefilter": None,
        "questions-1": older.pk,
        "questions-2": None,
        "answers": None,
        "not-answerable": None,
    }
    assert {row["label"] for row in rows.values()} >= {"Questions, pass 1"}


def work_span(project, user, screen, *, stage="questions-1", start, end, status="leased", updated=None, **kw):
    """An assignment made by hand that began at ``start`` with its lease running to ``end``."""
    made = Assignment.objects.create(
        project=project,
        stage=stage,
        screen=screen,
        annotator=user,
        status=status,
        lease_expires_at=end,
        submitted_at=updated if status == "submitted" else None,
        **kw,
    )
    Assignment.objects.filter(pk=made.pk).update(created_at=start, updated_at=updated or start)
    return made


def test_double_leases_end_a_finished_lease_when_it_finished_and_a_live_one_at_its_expiry(project):
    a, b = member(project, "a"), member(project, "b")
    t = timezone.now()
    one, two, three, four = screens(project, 4, state=ScreenState.QUESTIONS_1)
    # a submitted at t+1 of a lease to t+30; b leased at t+5: no overlap
    work_span(
        project, a, one, start=t, end=t + timedelta(minutes=30), status="submitted", updated=t + timedelta(minutes=1)
    )
    work_span(project, b, one, start=t + timedelta(minutes=5), end=t + timedelta(minutes=35))
    assert assignment_double_leases(project=project) == 0
    # an expired lease held its unit until its expiry, whenever it was marked
    work_span(
        project, a, two, start=t, end=t + timedelta(minutes=30), status="expired", updated=t + timedelta(minutes=1)
    )
    work_span(project, b, two, start=t + timedelta(minutes=5), end=t + timedelta(minutes=35))
    assert assignment_double_leases(project=project) == 1
    # a lease that ends the instant the next begins does not overlap it
    work_span(
        project, a, three, start=t, end=t + timedelta(minutes=5), status="released", updated=t + timedelta(minutes=5)
    )
    work_span(project, b, three, start=t + timedelta(minutes=5), end=t + timedelta(minutes=35))
    assert assignment_double_leases(project=project) == 1
    # a released lease ended when it was given back, before its expiry
    work_span(
        project, a, four, start=t, end=t + timedelta(minutes=30), status="released", updated=t + timedelta(minutes=2)
    )
    work_span(project, b, four, start=t + timedelta(minutes=3), end=t + timedelta(minutes=35))
    assert assignment_double_leases(project=project) == 1


def test_double_leases_count_per_stage_and_unit_against_its_capacity(project):
    # given leases that overlap in time, made by hand
    users = [member(project, f"u{k}") for k in range(4)]
    other = ProjectFactory(slug="other")
    t = timezone.now()
    end = t + timedelta(minutes=30)
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    # pass 1 and pass 2 of one screen at once: two units
    work_span(project, users[0], screen, start=t, end=end)
    work_span(project, users[1], screen, stage="questions-2", start=t, end=end)
    # another project's overlap is not this one's
    (theirs,) = screens(other, 1, state=ScreenState.QUESTIONS_1)
    work_span(other, users[0], theirs, start=t, end=end, status="expired")
    work_span(other, users[1], theirs, start=t, end=end)
    # a gold item served to two people at once is not a unit held twice (nor beside its real work)
    gold = GoldItem.objects.create(project=project, stage="questions-1", screen=screen, answer={"questions": ["Q?"]})
    for user in users[2:]:
        work_span(project, user, screen, start=t, end=end, purpose=Purpose.CONTROL, gold=gold)
    assert assignment_double_leases(project=project) == 0
    # a question needing two answers holds two answerers, not three
    (answering,) = screens(project, 1)
    question = answering_question(answering, needed=2)
    for user in users[:2]:
        work_span(project, user, answering, stage="answers", question=question, start=t, end=end)
    assert assignment_double_leases(project=project) == 0
    work_span(project, users[2], answering, stage="answers", question=question, start=t, end=end)
    assert assignment_double_leases(project=project) == 1
    # prefilter holds as many judges as the project asks for
    (judged,) = screens(project, 1)
    for user in users[: project.prefilter_judgments]:
        work_span(project, user, judged, stage="prefilter", start=t, end=end)
    assert assignment_double_leases(project=project) == 1
    work_span(project, users[project.prefilter_judgments], judged, stage="prefilter", start=t, end=end)
    assert assignment_double_leases(project=project) == 2


def test_a_lease_taken_by_another_request_of_the_caller_meanwhile_is_returned(project):
    # given a's open lease, made after a request of a's read that a held nothing (the claim compiled afresh)
    compiled.forget(CLAIM)

    a = member(project, "a")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    held = assignment_next(project=project, user=a, stage="questions-1")
    membership = Membership.objects.get(project=project, user=a)
    # when that request goes on (as if its read came before the lease): the claim finds nothing
    work = _next(stage=stage_get("questions-1"), project=project, membership=membership, user=a, brief=None)
    # then it returns the lease the other request took, and leases nothing more
    assert work.assignment.pk == held.pk
    assert Assignment.objects.filter(annotator=a).count() == 1
    # and once that lease ran out, it is renewed rather than a second one taken
    run_out(held)
    work = _next(stage=stage_get("questions-1"), project=project, membership=membership, user=a, brief=None)
    assert work.assignment.pk == held.pk and work.assignment.lease_expires_at > timezone.now()
    assert Assignment.objects.filter(annotator=a).count() == 1


def test_a_control_item_is_a_lease_of_the_gold_screen_counted_as_served(project, django_assert_num_queries):
    # given gold items, served as control items beside real work
    golds = gold_prefilter(project, 1)
    controls_only(project)
    annie = member(project, "annie")
    # when annie asks for work
    lease = control_lease(project, annie)
    # then she holds a lease of the gold item's screen, the item counted as served once
    assert (lease.gold_id, lease.screen_id, lease.attempt, lease.status) == (
        golds[0].pk,
        golds[0].screen_id,
        0,
        AssignmentStatus.LEASED,
    )
    golds[0].refresh_from_db()
    assert golds[0].exposures == 1
    # and its screen came loaded with the project: the payload only reads the candidates
    with django_assert_num_queries(1):
        payload = assignment_payload(assignment=lease)
    assert payload["screen"]["rico_id"] == golds[0].screen.rico_id


def test_a_control_item_waits_for_real_work_but_a_qualification_item_does_not(project):
    # given gold items and no real work waiting in pre-filtering
    gold_prefilter(project, 2)
    project.control_rate = project.control_rate_new = 1.0
    project.save(update_fields=["control_rate", "control_rate_new"])
    annie, quinn = member(project, "annie"), member(project, "quinn")
    Standing.objects.create(project=project, user=annie, stage="prefilter", status=StandingStatus.ACTIVE)
    # when an active annotator asks, then there is nothing (a lease could only be a control item)
    assert assignment_next(project=project, user=annie, stage="prefilter") is None
    # when a newcomer qualifies on two items, then they get their set all the same, in attempt 1
    project.qualification_items = 2
    project.save(update_fields=["qualification_items"])
    lease = assignment_next(project=project, user=quinn, stage="prefilter")
    assert (lease.purpose, lease.attempt) == (Purpose.QUALIFICATION, 1)


def test_a_writer_qualifying_by_review_gets_leases_marked_for_review(project, django_assert_num_queries):
    # given a new writer (qualifying by review) and a lead, the claim compiled afresh
    compiled.forget(CLAIM)
    a = member(project, "a")
    lead = member(project, "lead", role="lead")
    screens(project, 2, state=ScreenState.QUESTIONS_1, candidates=2)
    work = assignment_next_by_slug(slug="demo", user=a, stage="questions-1")
    assert Assignment.objects.get(pk=work.assignment.pk).review_state == "sampled"
    lead_work = assignment_next_by_slug(slug="demo", user=lead, stage="questions-1")
    assert Assignment.objects.get(pk=lead_work.assignment.pk).review_state == ""
    # the lease came with its screen, project and candidates: its payload needs no query
    with django_assert_num_queries(0):
        payload = work_payload(work=work)
    assert len(payload["screen"]["candidates"]) == 2


def test_a_lease_a_constraint_refuses_is_a_conflict_and_nothing_is_written(project):
    # given a screen in pass 2 whose pass-1 lease a still holds (made by hand: the race the checks miss)
    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_2)
    lease_by_hand(project, a, screen, stage="questions-1")
    # when a asks for pass 2, then the constraint's refusal is a conflict in words, and no lease is made
    with pytest.raises(ConflictError) as err:
        assignment_next(project=project, user=a, stage="questions-2")
    assert err.value.message == "Somebody took this work at the same moment; ask again."
    assert not Assignment.objects.filter(stage="questions-2").exists()


def test_a_submit_a_constraint_refuses_is_kept_as_a_draft(project):
    # given a's lease, and b's pass 1 of the same screen submitted meanwhile (by hand)
    a, b = member(project, "a"), member(project, "b")
    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    Assignment.objects.create(
        project=project,
        stage="questions-1",
        screen=screen,
        annotator=b,
        status="submitted",
        lease_expires_at=timezone.now(),
        submitted_at=timezone.now(),
    )
    # when a submits, then it is a conflict in words, nothing written, and a's content is a's draft
    with pytest.raises(ConflictError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=BODY)
    assert err.value.message == (
        "This submission conflicts with another one made at the same moment; it is kept as a draft."
    )
    assert err.value.extra == {"draft_saved": True}
    lease.refresh_from_db()
    assert (lease.status, lease.draft) == (AssignmentStatus.LEASED, BODY)
    assert not Question.objects.exists()


LOST = (
    "Your lease ended and this work went to someone else (or is complete). "
    "Your content is kept as this assignment's draft."
)


def test_submit_refusals_in_words(project):
    # a body that is not an object, other content for a submitted assignment, a lease someone else took
    a, b = member(project, "a"), member(project, "b")
    screens(project, 2, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    with pytest.raises(ApplicationError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data="text")  # type: ignore[arg-type]
    assert (err.value.message, err.value.field) == ("The submission must be a JSON object.", "body")
    assignment_submit(assignment_id=lease.pk, user=a, data=BODY)
    with pytest.raises(ConflictError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data={"questions": ["Other?"]})
    assert err.value.message == "This assignment is already submitted, with other content."
    # a lease that went to someone else
    lost = assignment_next(project=project, user=a, stage="questions-1")
    run_out(lost)
    assignment_next(project=project, user=b, stage="questions-1")
    with pytest.raises(ConflictError) as err:
        assignment_submit(assignment_id=lost.pk, user=a, data=BODY)
    assert (err.value.message, err.value.extra) == (LOST, {"status": "expired", "draft_saved": True})


def test_a_gold_item_given_back_is_refused_like_lost_work(project):
    # given annie's control item given back (scored wrong), when she submits it, then the words of lost
    # work, her content kept as the draft and no second result
    gold_prefilter(project, 3)
    controls_only(project)
    annie = member(project, "annie")
    lease = control_lease(project, annie)
    assignment_release(assignment_id=lease.pk, user=annie)
    body = {**RIGHT, "note": ""}
    with pytest.raises(ConflictError) as err:
        assignment_submit(assignment_id=lease.pk, user=annie, data=body)
    assert (err.value.message, err.value.extra) == (LOST, {"status": "released", "draft_saved": True})
    lease.refresh_from_db()
    assert (lease.status, lease.draft) == (AssignmentStatus.RELEASED, body)
    assert ControlResult.objects.filter(assignment=lease).count() == 1


def test_work_of_a_paused_annotator_is_refused_in_words(project):
    # given a's lease released by a pause, when a submits it, then the refusal says why, and nothing moves
    a = member(project, "a")
    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=a, stage="questions-1")
    rule_pause(project, a, "questions-1")  # releases a's leases
    with pytest.raises(PermissionDeniedError) as err:
        assignment_submit(assignment_id=lease.pk, user=a, data=BODY)
    assert err.value.message.startswith("You are paused in Questions, pass 1")
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.RELEASED


@pytest.mark.parametrize("stage", ["questions-1", "answers", "prefilter"])
def test_the_fresh_recheck_asks_about_the_claimed_unit_only(project, stage):
    # given the re-check's statement forgotten (this test compiles it), and two units open to a

    compiled.forget(("first", ("exists", ("still-open", stage))))
    a, b = member(project, "a"), member(project, "b")
    state = {"questions-1": ScreenState.QUESTIONS_1, "prefilter": ScreenState.PREFILTER}.get(stage)
    made = screens(project, 2, state=state or ScreenState.QUESTIONS_1)
    units = [answering_question(s, needed=1) for s in made] if stage == "answers" else made
    definition, now = stage_get(stage), timezone.now()
    # when b leases one of them
    taken = assignment_next(project=project, user=b, stage=stage)
    held = taken.question_id if stage == "answers" else taken.screen_id
    (free,) = [unit for unit in units if unit.pk != held]
    # then that one is no longer open to a, the other still is
    assert not _still_open(stage=definition, project=project, user=a, now=now, unit=taken.question or taken.screen)
    assert _still_open(stage=definition, project=project, user=a, now=now, unit=free)


def test_the_claim_serves_from_the_pivot_at_or_after_it_then_wraps_around(project, monkeypatch):
    # given three screens with keys 0, 5 and 9 (the claim from the pivot compiled afresh)
    compiled.forget(CLAIM)
    compiled.forget(("first", ("claim", "questions-1")))
    made = screens(project, 3, state=ScreenState.QUESTIONS_1)
    for screen, key in zip(made, (0, 5, 9), strict=True):
        type(screen).objects.filter(pk=screen.pk).update(queue_key=key)
    users = [member(project, f"u{k}") for k in range(4)]

    def ask(user, pivot):
        monkeypatch.setattr("pipeline.engine.services._pivot", lambda: pivot)
        lease = assignment_next(project=project, user=user, stage="questions-1")
        return None if lease is None else lease.screen_id

    # when the pivot is a unit's key, that unit is served; else the first after it
    assert ask(users[0], 5) == made[1].pk
    assert ask(users[1], 6) == made[2].pk
    # when nothing is left at or after the pivot (1), the queue's head from the start (key 0)
    assert ask(users[2], 1) == made[0].pk
    # and when nothing is left at all, nothing
    assert ask(users[3], 0) is None


def test_the_claim_is_empty_only_for_the_callers_own_open_lease_of_the_stage(project):
    # given the claim compiled afresh, and a's leases elsewhere and b's here (made first)
    compiled.forget(CLAIM)
    other = ProjectFactory(slug="other")
    a, b = member(project, "a"), member(project, "b")
    MembershipFactory(project=other, user=a)
    (elsewhere,) = screens(other, 1, state=ScreenState.QUESTIONS_1)
    made = screens(project, 4, state=ScreenState.QUESTIONS_1)
    lease_by_hand(other, a, elsewhere)
    lease_by_hand(project, a, made[0], stage="prefilter")
    lease_by_hand(project, b, made[1])
    lease_by_hand(project, a, made[2], status=AssignmentStatus.EXPIRED)
    # when a asks for pass 1 here, then a gets the queue's first screen b does not hold
    lease = assignment_next(project=project, user=a, stage="questions-1")
    assert lease.screen_id == made[0].pk


def test_run_out_leases_of_other_units_and_stages_cost_no_update(project):
    # given the claim compiled afresh; a first lease's statements counted with no run-out lease anywhere
    compiled.forget(CLAIM)
    other = ProjectFactory(slug="other")
    a, b, c = member(project, "a"), member(project, "b"), member(project, "c")
    MembershipFactory(project=other, user=c)
    made = screens(project, 2, state=ScreenState.QUESTIONS_1)
    (elsewhere,) = screens(other, 1, state=ScreenState.QUESTIONS_1)
    with CaptureQueriesContext(connection) as before:
        assert assignment_next(project=project, user=a, stage="questions-1").screen_id == made[0].pk
    # given run-out leases: pass 2 of the next screen, pass 1 of another project's screen
    run_out(lease_by_hand(project, c, made[1], stage="questions-2"))
    run_out(lease_by_hand(other, c, elsewhere))
    # when b leases that next screen, then it costs the same statements (no UPDATE of run-out leases)
    with CaptureQueriesContext(connection) as after:
        assert assignment_next(project=project, user=b, stage="questions-1").screen_id == made[1].pk
    assert len(after) == len(before), [q["sql"][:60] for q in after]


def test_answers_outside_the_answer_pool_are_refused_before_anything_is_leased(project):
    # given a member outside the answer pool and a question waiting, both ways of asking are refused
    writer_only = member(project, "w", pool=False)
    (screen,) = screens(project, 1)
    answering_question(screen)
    with pytest.raises(PermissionDeniedError):
        assignment_next(project=project, user=writer_only, stage="answers")
    with pytest.raises(PermissionDeniedError):
        assignment_next_by_slug(slug="demo", user=writer_only, stage="answers")
    assert not Assignment.objects.exists()


def test_a_lease_that_ended_between_the_read_and_the_lock_gives_way_to_new_work(project):
    # given a request that read an open lease of a's whose time ran out, and that lease gone meanwhile
    compiled.forget(CLAIM)
    a = member(project, "a")
    made = screens(project, 1, state=ScreenState.QUESTIONS_1)
    membership = Membership.objects.get(project=project, user=a)
    gone = (10**9, timezone.now() - timedelta(seconds=1))
    # when the request goes on, then it leases the queue's head (the caller holds nothing now)
    work = _next(stage=stage_get("questions-1"), project=project, membership=membership, user=a, brief=gone)
    assert (work.assignment.screen_id, work.assignment.purpose) == (made[0].pk, Purpose.WORK)


def test_a_lease_that_ended_meanwhile_gives_way_to_a_control_item_too(project):
    # the same for an active annotator whose every lease is a control item
    gold = gold_prefilter(project, 1)
    controls_only(project)
    annie = member(project, "annie")
    Standing.objects.create(project=project, user=annie, stage="prefilter", status=StandingStatus.ACTIVE)
    membership = Membership.objects.get(project=project, user=annie)
    gone = (10**9, timezone.now() - timedelta(seconds=1))
    work = _next(stage=stage_get("prefilter"), project=project, membership=membership, user=annie, brief=gone)
    assert (work.assignment.purpose, work.assignment.gold_id) == (Purpose.CONTROL, gold[0].pk)


def test_a_skipped_gold_item_counts_as_wrong(project):
    # given annie's control item, when she skips it, then it is scored wrong, "skipped"
    gold_prefilter(project, 3)
    controls_only(project)
    annie = member(project, "annie")
    lease = control_lease(project, annie)
    skipped = assignment_skip(assignment_id=lease.pk, user=annie, reason="unreadable")
    assert skipped.status == AssignmentStatus.SKIPPED
    results = ControlResult.objects.values_list("assignment_id", "correct", "outcome")
    assert list(results) == [(lease.pk, False, "skipped")]


def test_next_by_slug_reads_the_standing_with_the_membership(project, django_assert_num_queries):
    # given an active writer (their standing comes with their membership and open lease)
    a = member(project, "a")
    screens(project, 3, state=ScreenState.QUESTIONS_1)
    Standing.objects.create(project=project, user=a, stage="questions-1", status=StandingStatus.ACTIVE)
    # when they ask for work: the membership read, the savepoint, the user lock, the claim, the
    # re-check, the lease and the release of the savepoint; nothing reads the standing again
    with django_assert_num_queries(7):
        work = assignment_next_by_slug(slug="demo", user=a, stage="questions-1")
    # and asking again costs the membership read and the assignment
    with django_assert_num_queries(2):
        assert assignment_next_by_slug(slug="demo", user=a, stage="questions-1").assignment.pk == work.assignment.pk


# --- a qualification whose set outlasts the gold, and a claim retried under contention --------------


def _qualifying(project, name, *, items):
    project.qualification_items = items
    project.save(update_fields=["qualification_items"])
    return member(project, name)


def _judge_next(project, user, body):
    lease = assignment_next(project=project, user=user, stage="prefilter")
    assert lease is not None
    assignment_submit(assignment_id=lease.pk, user=user, data={**body, "note": ""})
    return lease


def test_a_qualification_with_fewer_gold_items_than_its_set_is_decided_on_what_was_done(project):
    # given a set of four but two gold items, and real work waiting; another project's standing of the
    # same user and stage, still qualifying (a decoy for the standing the engine locks)
    gold_prefilter(project, 2)
    screens(project, 3)
    judge = _qualifying(project, "judge", items=4)
    elsewhere = ProjectFactory(slug="elsewhere")
    MembershipFactory(project=elsewhere, user=judge)
    Standing.objects.create(project=elsewhere, user=judge, stage="prefilter", status=StandingStatus.QUALIFYING)
    # when the judge does both gold items right
    for _ in range(2):
        assert _judge_next(project, judge, RIGHT).purpose == Purpose.QUALIFICATION
    # then the next request decides the attempt on the two done (none left to serve) and leases real work
    lease = assignment_next(project=project, user=judge, stage="prefilter")
    assert lease is not None and lease.purpose == Purpose.WORK
    standing = Standing.objects.get(project=project, user=judge, stage="prefilter")
    assert (standing.status, standing.reason) == (StandingStatus.ACTIVE, "qualified with 2 of 2")
    assert Standing.objects.get(project=elsewhere, user=judge).status == StandingStatus.QUALIFYING


def test_a_qualification_that_fails_when_the_gold_runs_out_is_refused_with_its_result(project):
    # given a set of four but two gold items, one done wrong
    from tests.pipeline.quality.builders import WRONG

    gold_prefilter(project, 2)
    screens(project, 3)
    judge = _qualifying(project, "judge", items=4)
    _judge_next(project, judge, RIGHT)
    _judge_next(project, judge, WRONG)
    # when the judge asks for more: the attempt is decided on the two (1 of 2), no lease, and the
    # refusal says where they stand
    with pytest.raises(PermissionDeniedError) as refused:
        assignment_next(project=project, user=judge, stage="prefilter")
    standing = Standing.objects.get(project=project, user=judge, stage="prefilter")
    assert standing.status == StandingStatus.NOT_QUALIFIED and standing.reason.startswith("1 of 2 right")
    assert refused.value.message.startswith("You did not qualify for Pre-filtering yet; you can try again after")
    assert not Assignment.objects.filter(annotator=judge, status=AssignmentStatus.LEASED).exists()


@pytest.mark.shuffled_queue
def test_a_claim_retried_under_contention_skips_the_units_tried(project):
    # given three screens waiting in pass 1 (a shuffled queue) and a writer
    from annotation.models import Screen
    from annotation.models.screens import QUEUE_KEY_SPAN
    from pipeline.engine.services import _claim

    made = screens(project, 3, state=ScreenState.QUESTIONS_1)
    # their places spread evenly, so that each comes first after a third of the pivots (random places
    # could leave one a sliver of the key space: never drawn in 60 tries, a flaky test)
    for n, screen in enumerate(made):
        Screen.objects.filter(pk=screen.pk).update(queue_key=n * QUEUE_KEY_SPAN // 3 + QUEUE_KEY_SPAN // 6)
    writer = member(project, "writer")
    stage = stage_get("questions-1")
    now = timezone.now()
    ids = {s.pk for s in made}
    # when the claim is retried with units already tried (their re-check failed): never one of those
    seen = set()
    for _ in range(60):
        for tried in ([], [made[0].pk], [made[0].pk, made[1].pk]):
            claimed = _claim(stage=stage, project=project, user=writer, now=now, tried=list(tried))
            assert claimed is not None and claimed.unit.pk in ids - set(tried)
            assert claimed.stale is False and claimed.screen.pk == claimed.unit.pk
            seen.add((len(tried), claimed.unit.pk))
    # every untried unit can come first (the pivot is random), and with all tried there is none
    assert {pk for n, pk in seen if n == 0} == ids and {pk for n, pk in seen if n == 1} == ids - {made[0].pk}
    assert _claim(stage=stage, project=project, user=writer, now=now, tried=sorted(ids)) is None


def test_a_retried_claim_reads_a_lapsed_lease_on_its_unit(project):
    # given one screen whose only lease ran out (stale), and another waiting
    from pipeline.engine.services import _claim

    first, second = screens(project, 2, state=ScreenState.QUESTIONS_1)
    writer, gone = member(project, "writer"), member(project, "gone")
    Assignment.objects.create(
        project=project,
        stage="questions-1",
        screen=first,
        annotator=gone,
        lease_expires_at=timezone.now() - timedelta(minutes=1),
    )
    stage = stage_get("questions-1")
    # when the claim is retried with the other screen tried: the lapsed lease is read with the claim
    claimed = _claim(stage=stage, project=project, user=writer, now=timezone.now(), tried=[second.pk])
    assert claimed is not None and claimed.unit.pk == first.pk and claimed.stale is True
    claimed = _claim(stage=stage, project=project, user=writer, now=timezone.now(), tried=[first.pk])
    assert claimed is not None and claimed.unit.pk == second.pk and claimed.stale is False


@pytest.mark.parametrize(("body", "status"), [(RIGHT, StandingStatus.ACTIVE), ("WRONG", StandingStatus.NOT_QUALIFIED)])
def test_gold_a_lead_retires_mid_qualification_decides_it_at_the_next_request(project, body, status):
    # given a set of four and four gold items; the judge did one
    from tests.pipeline.quality.builders import WRONG

    body = WRONG if body == "WRONG" else body
    gold_prefilter(project, 4)
    screens(project, 2)
    judge = _qualifying(project, "judge", items=4)
    done = _judge_next(project, judge, body)
    # when a lead retires every gold item left
    GoldItem.objects.filter(project=project).exclude(pk=done.gold_id).update(active=False)
    # then the next request decides the attempt on the one done: right, real work; wrong, refused with
    # the decision's words, and the decision is kept (it used to be rolled back with the refusal,
    # which said "waiting for its result" at every request, for ever)
    if status == StandingStatus.ACTIVE:
        lease = assignment_next(project=project, user=judge, stage="prefilter")
        assert lease is not None and lease.purpose == Purpose.WORK
    else:
        for _ in range(2):
            with pytest.raises(PermissionDeniedError) as refused:
                assignment_next(project=project, user=judge, stage="prefilter")
            assert refused.value.message.startswith("You did not qualify for Pre-filtering yet; you can try again")
        assert QualityEvent.objects.filter(user=judge, rule="qualification-failed").count() == 1
        assert not Assignment.objects.filter(annotator=judge, status=AssignmentStatus.LEASED).exists()
    assert Standing.objects.get(project=project, user=judge).status == status


def test_a_qualification_waits_for_gold_whose_units_are_still_in_the_queue_rather_than_decide_on_a_few(project):
    """The adversarial benchmark with two answers per train question: the lead's gold items were made from
    questions still waiting for their second answer, so none was servable; answers qualifications were
    decided on one item (a careful worker failed for one slip; the constant spammer qualified by luck)."""
    from annotation.models import Screen

    # given a set of four: one servable gold item, and three on screens still waiting in pre-filtering,
    # which an active judge can finish
    gold_prefilter(project, 4)
    judge = _qualifying(project, "judge", items=4)
    gold = list(GoldItem.objects.filter(project=project).order_by("pk"))
    Screen.objects.filter(pk__in=[g.screen_id for g in gold[1:]]).update(state=ScreenState.PREFILTER)
    Standing.objects.create(project=project, user=member(project, "busy"), stage="prefilter", status="active")
    # when the judge does the one served right
    assert _judge_next(project, judge, RIGHT).purpose == Purpose.QUALIFICATION
    # then asking again is refused with a reason to wait, and nothing is decided on one item
    with pytest.raises(PermissionDeniedError) as refused:
        assignment_next(project=project, user=judge, stage="prefilter")
    assert refused.value.extra == {"waiting_for": "qualification-items"}
    assert "not ready yet" in refused.value.message
    standing = Standing.objects.get(project=project, user=judge, stage="prefilter")
    assert standing.status == StandingStatus.QUALIFYING
    assert not QualityEvent.objects.filter(user=judge, rule__startswith="qualification-").exists()
    # and once the screens have left the queue (judged by others), the set goes on and is decided on four
    Screen.objects.filter(pk__in=[g.screen_id for g in gold[1:]]).update(state=ScreenState.QUESTIONS_1)
    for _ in range(3):
        assert _judge_next(project, judge, RIGHT).purpose == Purpose.QUALIFICATION
    standing.refresh_from_db()
    assert (standing.status, standing.reason) == (StandingStatus.ACTIVE, "qualified with 4 of 4")
    # and with nobody active in the stage to finish such screens (the first judges of a stage), nothing is
    # waited for: a set is decided on what was done, as before
    Standing.objects.filter(project=project, stage="prefilter").exclude(user=judge).delete()
    Standing.objects.filter(user=judge).update(status=StandingStatus.NOT_QUALIFIED)
    other = _qualifying(project, "other", items=4)
    Screen.objects.filter(pk__in=[g.screen_id for g in gold[1:]]).update(state=ScreenState.PREFILTER)
    assert _judge_next(project, other, RIGHT).purpose == Purpose.QUALIFICATION
    assert assignment_next(project=project, user=other, stage="prefilter").purpose == Purpose.WORK
    assert Standing.objects.get(project=project, user=other).reason == "qualified with 1 of 1"


def test_a_first_contact_while_all_gold_waits_in_the_queue_lets_the_annotator_work_owing_the_set(project):
    """With two answers per train question no answers gold was servable at the start of the stage, and an
    annotator's first contact then made them active with no qualification set at all; they now owe it."""
    from annotation.models import Screen

    # given four gold items, all on screens still waiting in pre-filtering, and a judge active there
    gold = gold_prefilter(project, 4)
    Screen.objects.filter(pk__in=[g.screen_id for g in gold]).update(state=ScreenState.PREFILTER)
    Standing.objects.create(project=project, user=member(project, "busy"), stage="prefilter", status="active")
    # when a new judge asks for work: real work, owing the set (``entered_unqualified``), and told so
    first = member(project, "first")
    assert assignment_next(project=project, user=first, stage="prefilter").purpose == Purpose.WORK
    assert entered_unqualified(project=project, stage="prefilter") == {first.pk}
    row = Standing.objects.get(user=first)
    assert (row.status, row.qualification_owed) == (StandingStatus.ACTIVE, True)
    assert row.reason == "no gold item to qualify on yet: your qualification set comes once there is"


@pytest.mark.parametrize("passes", [False, True])
def test_an_annotator_let_in_without_a_set_is_served_it_once_gold_is_free_and_failing_it_withdraws_their_work(
    project, passes
):
    """The adversarial benchmark with two answers per train question: the random answerer, let in at the start
    of the answers stage with every gold item waiting, did 53 answers before a control item rule paused it."""
    from annotation.models import PrefilterJudgment, Screen
    from tests.pipeline.quality.builders import WRONG

    # given a set of two, four gold items all on screens waiting in pre-filtering, nobody active, every
    # lease a control draw: a judge let in without a set judges two screens (no control item is servable)
    project.qualification_items, project.qualification_extra_items = 2, 0
    project.control_rate = project.control_rate_new = 1.0
    project.save(update_fields=["qualification_items", "qualification_extra_items", "control_rate", "control_rate_new"])
    gold = gold_prefilter(project, 4)
    screens(project, 4)
    waiting = Screen.objects.filter(pk__in=[g.screen_id for g in gold])
    waiting.update(state=ScreenState.PREFILTER)
    judge = member(project, "judge")
    real = [_judge_next(project, judge, RIGHT) for _ in range(2)]
    assert {lease.purpose for lease in real} == {Purpose.WORK}
    # when the gold screens leave the queue (others judged them): the judge's next control draw starts the set
    waiting.update(state=ScreenState.QUESTIONS_1)
    served = [_judge_next(project, judge, RIGHT if passes else WRONG) for _ in range(2)]
    assert [lease.purpose for lease in served] == [Purpose.QUALIFICATION] * 2
    rules = list(QualityEvent.objects.filter(user=judge).order_by("pk").values_list("rule", flat=True))
    assert rules[:2] == ["started", "qualification-owed"]
    row = Standing.objects.get(user=judge)
    assert row.qualification_owed is False
    mine = PrefilterJudgment.objects.filter(assignment__in=[lease.pk for lease in real])
    if passes:
        # then passing it makes them active like anybody, their work standing
        assert (row.status, row.reason) == (StandingStatus.ACTIVE, "qualified with 2 of 2")
        assert not mine.exclude(withdrawn_reason="").exists()
        assert entered_unqualified(project=project, stage="prefilter") == set()
        assert _judge_next(project, judge, RIGHT).purpose == Purpose.WORK
    else:
        # then failing it withdraws what they did before it, as a failed set does
        assert row.status == StandingStatus.NOT_QUALIFIED
        assert mine.count() == 2 and not mine.filter(withdrawn_reason="").exists()
        failed = QualityEvent.objects.get(user=judge, rule="qualification-failed")
        assert failed.figures["withdrawn"] == 2
        with pytest.raises(PermissionDeniedError):
            assignment_next(project=project, user=judge, stage="prefilter")
        # and a lead who overturns the decision brings back what it withdrew (nobody redid it meanwhile),
        # the lead's word standing for the set: the judge works, their judgments no longer held
        from pipeline.quality.standing import standing_act

        lead = member(project, "lead", role="lead")
        standing_act(project=project, user_id=judge.pk, stage="prefilter", action="reinstate", actor=lead)
        reinstated = QualityEvent.objects.get(user=judge, rule="lead-reinstate")
        assert (reinstated.figures["overturned"], reinstated.figures["restored"]) == ("qualification-failed", 2)
        assert mine.count() == 2 and not mine.exclude(withdrawn_reason="").exists()
        assert entered_unqualified(project=project, stage="prefilter") == set()
        assert assignment_next(project=project, user=judge, stage="prefilter") is not None


def test_a_qualification_set_is_not_drawn_from_one_kind_of_gold_while_another_kind_waits_in_the_queue(project):
    """With two answers per train question the only servable answers gold was not answerable for a while:
    qualification sets drawn then were all of it, and the adversarial benchmark's constant answerer
    ("not answerable") qualified on them. Such a set now waits for the other kind."""
    from annotation.models import Screen
    from tests.pipeline.quality.builders import WRONG

    # given ten servable gold items of one kind (no flag), and on screens still waiting in pre-filtering
    # two of another (non-English) and one of a third (out of sync); a set of four
    gold_prefilter(project, 10)
    flagged = gold_prefilter(project, 3)
    GoldItem.objects.filter(pk__in=[g.pk for g in flagged[:2]]).update(answer=WRONG)
    GoldItem.objects.filter(pk=flagged[2].pk).update(answer={"non_english_app": False, "vh_out_of_sync": True})
    Screen.objects.filter(pk__in=[g.screen_id for g in flagged]).update(state=ScreenState.PREFILTER)
    Standing.objects.create(project=project, user=member(project, "busy"), stage="prefilter", status="active")
    judge = _qualifying(project, "judge", items=4)
    # when the judge asks for a qualification item: refused with a reason to wait, nothing served
    with pytest.raises(PermissionDeniedError) as refused:
        assignment_next(project=project, user=judge, stage="prefilter")
    assert refused.value.extra == {"waiting_for": "qualification-items"}
    assert not Assignment.objects.filter(annotator=judge).exists()
    # and once the non-English screens have left the queue, two kinds are servable: the set is drawn,
    # though the third kind still waits (a constant answer is right on about half of such a set)
    Screen.objects.filter(pk__in=[g.screen_id for g in flagged[:2]]).update(state=ScreenState.QUESTIONS_1)
    for _ in range(2):
        assert _judge_next(project, judge, RIGHT).purpose == Purpose.QUALIFICATION


def test_a_not_qualified_judge_whose_cooldown_is_over_starts_again_when_the_gold_runs_out(project):
    # given no cooldown: a failed attempt decided at a request starts the next one at once
    from tests.pipeline.quality.builders import WRONG

    project.qualification_cooldown_hours = 0
    project.save(update_fields=["qualification_cooldown_hours"])
    gold_prefilter(project, 4)
    screens(project, 2)
    judge = _qualifying(project, "judge", items=4)
    done = _judge_next(project, judge, WRONG)
    GoldItem.objects.filter(project=project).exclude(pk=done.gold_id).update(active=False)
    # when the judge asks for more, the failed attempt is decided and the next one starts: with no gold
    # item left to serve, it is decided on nothing done (active, "no gold items were left")
    lease = assignment_next(project=project, user=judge, stage="prefilter")
    assert lease is not None and lease.purpose == Purpose.WORK
    rules = list(QualityEvent.objects.filter(user=judge).order_by("pk").values_list("rule", flat=True))
    assert rules == ["started", "qualification-failed", "qualification-retry", "no-gold"], rules
