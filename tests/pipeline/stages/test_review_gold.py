"""Reviewers are checked (issue 20, item 6): gold reviews mixed into the review queue as control items,
looking exactly like real review items, scored by the verdict and fed into the standing machinery
(qualification, the sequential test); a paused reviewer's reviews are withdrawn; a double-reviewed
sample gives each reviewer's agreement with the others.

Played as an adversary would: a rubber-stamp reviewer (accepts everything) is stopped within a few
gold reviews, a careful one is not; the payload of a gold review is that of a real one; nobody
reviews their own submission."""

from __future__ import annotations

import random
from typing import Any

import pytest

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    GoldSource,
    Purpose,
    QualityEvent,
    Review,
    ReviewState,
    ScreenState,
    Standing,
    StandingStatus,
)
from pipeline.engine import assignment_next, assignment_payload, assignment_submit
from pipeline.quality import gold as gold_module
from pipeline.quality.gold import gold_promote
from pipeline.quality.report import quality_report
from pipeline.quality.review_gold import review_gold_create, reviewer_agreement
from pipeline.quality.standing import standing_act
from tests.factories import ProjectFactory
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db

ACCEPT = {"verdict": "accepted", "reason": "", "comment": ""}
GOLD_SEED = 0
REJECT = {"verdict": "rejected", "reason": "counting", "comment": "Counting is not allowed."}


def configure(project: Any, **values: Any) -> None:
    for name, value in values.items():
        setattr(project, name, value)
    project.save(update_fields=list(values))


def write_set(project: Any, writer: Any, n: int) -> Assignment:
    lease = assignment_next(project=project, user=writer, stage="questions-1")
    assert lease is not None
    texts = [f"What does label {k + 1} say on screen {n}?" for k in range(2)]
    return assignment_submit(assignment_id=lease.pk, user=writer, data={"questions": texts})


def waiting(project: Any, n: int = 200) -> Assignment:
    """A spare writer's set waiting for review: a control item is served only while real work waits
    for the reviewer too (``engine._lease_gold``)."""
    return write_set(project, member(project, f"spare-{n}"), n)


def review(project: Any, reviewer: Any, body: dict[str, Any]) -> Assignment:
    lease = assignment_next(project=project, user=reviewer, stage="review")
    assert lease is not None
    return assignment_submit(assignment_id=lease.pk, user=reviewer, data=dict(body))


@pytest.fixture
def setup(project, monkeypatch):
    """A project whose writers qualify by the review of their first set; a lead who reviewed eight
    sets by eight writers (four fine, four breaking a rule) and made each a gold review. The gold
    pick's draw of a verdict is seeded (``pipeline.quality.gold.gold_random``)."""
    monkeypatch.setattr(gold_module, "gold_random", random.Random(GOLD_SEED))
    configure(
        project,
        qualification_review_sets=1,
        review_rate=1.0,
        review_double_rate=0.0,
        qualification_items=4,
        control_rate=0.0,
        control_rate_new=0.0,
    )
    lead = member(project, "lead", role="lead")
    screens(project, 16, state=ScreenState.QUESTIONS_1)
    truth: dict[int, str] = {}
    for n in range(8):
        writer = member(project, f"gold-writer-{n}")
        submission = write_set(project, writer, n)
        body = REJECT if n % 2 else ACCEPT
        review(project, lead, body)
        truth[submission.pk] = body["verdict"]
        review_gold_create(project=project, submission_id=submission.pk, user=lead)
    assert GoldItem.objects.filter(stage="review").count() == 8
    return {"lead": lead, "truth": truth}


def active_reviewer(project: Any, name: str) -> Any:
    user = member(project, name, role="reviewer")
    Standing.objects.create(project=project, user=user, stage="review", status=StandingStatus.ACTIVE)
    return user


def standing(user: Any) -> str:
    return Standing.objects.get(user=user, stage="review").status


def test_a_gold_review_is_the_reviewed_submission_with_its_verdict(project, setup):
    gold = GoldItem.objects.filter(stage="review").order_by("pk")
    assert [g.answer["verdict"] for g in gold] == ["accepted", "rejected"] * 4
    assert all(g.origin_id in setup["truth"] and g.question_id is None for g in gold)
    # one gold review per submission
    with pytest.raises(ConflictError):
        review_gold_create(project=project, submission_id=gold[0].origin_id, user=setup["lead"])
    # a lead may say the verdict of an unreviewed submission; a submission of another project is unknown
    writer = member(project, "wes")
    fresh = write_set(project, writer, 99)
    lead = setup["lead"]
    made = review_gold_create(project=project, submission_id=fresh.pk, user=lead, verdict="rejected", reason="ads")
    assert made.answer == {"verdict": "rejected", "reason": "ads", "comment": ""}
    with pytest.raises(NotFoundError):
        review_gold_create(project=project, submission_id=10**9, user=setup["lead"])


def test_promoting_a_review_makes_a_gold_review_of_its_submission(project, setup):
    writer = member(project, "wes")
    submission = write_set(project, writer, 99)
    done = review(project, setup["lead"], REJECT)
    gold = gold_promote(project=project, assignment_id=done.pk, user=setup["lead"])
    assert (gold.stage, gold.origin_id, gold.answer["verdict"]) == ("review", submission.pk, "rejected")


def test_a_rubber_stamp_reviewer_fails_the_qualification_and_a_careful_one_passes(project, setup):
    stamp, careful = member(project, "stamp", role="reviewer"), member(project, "careful", role="reviewer")
    good = 0
    for _ in range(4):
        lease = assignment_next(project=project, user=stamp, stage="review")
        assert lease.purpose == Purpose.QUALIFICATION
        good += setup["truth"][lease.reviewed_id] == "accepted"
        assignment_submit(assignment_id=lease.pk, user=stamp, data=dict(ACCEPT))
    # each item's verdict is drawn at random between known-good and known-bad (seeded here: 1 good of 4):
    # accepting everything is right on the good ones only
    assert good == 1
    assert standing(stamp) == StandingStatus.NOT_QUALIFIED
    assert Standing.objects.get(user=stamp, stage="review").reason.startswith(f"{good} of 4 right")
    for _ in range(4):
        lease = assignment_next(project=project, user=careful, stage="review")
        verdict = setup["truth"][lease.reviewed_id]
        assignment_submit(assignment_id=lease.pk, user=careful, data=REJECT if verdict == "rejected" else ACCEPT)
    assert standing(careful) == StandingStatus.ACTIVE


def test_a_rubber_stamp_reviewer_is_paused_within_a_few_gold_reviews_and_their_reviews_are_redone(project, setup):
    # given an active reviewer who decided a writer's qualification by accepting their first set
    stamp = active_reviewer(project, "stamp")
    wes = member(project, "wes")
    first = write_set(project, wes, 50)
    done = review(project, stamp, ACCEPT)
    assert done.purpose == Purpose.WORK and done.reviewed_id == first.pk
    assert Standing.objects.get(user=wes, stage="questions-1").status == StandingStatus.ACTIVE
    # when control reviews come in and the reviewer accepts everything
    configure(project, control_rate=1.0, control_rate_new=1.0)
    waiting(project)
    golds = 0
    while standing(stamp) == StandingStatus.ACTIVE:
        lease = assignment_next(project=project, user=stamp, stage="review")
        assert lease is not None and lease.purpose == Purpose.CONTROL
        assignment_submit(assignment_id=lease.pk, user=stamp, data=dict(ACCEPT))
        golds += 1
    # then the sequential test pauses them within five gold reviews (three wrong, two right)
    assert standing(stamp) == StandingStatus.PAUSED and golds <= 5
    pause = QualityEvent.objects.get(user=stamp, stage="review", rule="control-accuracy")
    assert pause.figures["withdrawn"] == 1
    # and their review is withdrawn: the writer's qualification is decided again on a new review
    assert Review.objects.get(reviewer=stamp).withdrawn_from_id == first.pk
    assert Assignment.objects.get(pk=first.pk).review_state == ReviewState.SAMPLED
    assert Standing.objects.get(user=wes, stage="questions-1").status == StandingStatus.QUALIFYING
    assert QualityEvent.objects.filter(user=wes, rule="review-reopened").exists()
    # a gold review never touched its submission (no review, no state change)
    origins = GoldItem.objects.filter(stage="review").values_list("origin_id", flat=True)
    assert not Review.objects.filter(reviewer=stamp, withdrawn_from__in=origins).exists()
    assert {Review.objects.get(reviewed_id=o).reviewer for o in origins} == {setup["lead"]}


def test_a_careful_reviewer_is_never_paused_even_with_a_slip(project, setup):
    careful = active_reviewer(project, "careful")
    configure(project, control_rate=1.0, control_rate_new=1.0)
    spare = waiting(project)
    for n in range(8):
        lease = assignment_next(project=project, user=careful, stage="review")
        assert lease.purpose == Purpose.CONTROL
        right = setup["truth"][lease.reviewed_id]
        slip = n == 3
        body = REJECT if (right == "rejected") != slip else ACCEPT
        assignment_submit(assignment_id=lease.pk, user=careful, data=body)
    assert standing(careful) == StandingStatus.ACTIVE
    results = ControlResult.objects.filter(user=careful, stage="review")
    assert (results.count(), results.filter(correct=True).count()) == (8, 7)
    # every gold review served once: the next lease is the real work waiting
    last = assignment_next(project=project, user=careful, stage="review")
    assert (last.purpose, last.reviewed_id) == (Purpose.WORK, spare.pk)


def shape(value: Any) -> Any:
    """The payload's structure: keys and value types, not values."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def test_a_gold_review_looks_exactly_like_a_real_one(project, setup):
    rita = active_reviewer(project, "rita")
    wes = member(project, "wes")
    write_set(project, wes, 60)
    real = assignment_next(project=project, user=rita, stage="review")
    assert real.purpose == Purpose.WORK
    real_payload = assignment_payload(assignment=real)
    assignment_submit(assignment_id=real.pk, user=rita, data=dict(ACCEPT))
    configure(project, control_rate=1.0, control_rate_new=1.0)
    waiting(project)
    gold = assignment_next(project=project, user=rita, stage="review")
    assert gold.purpose == Purpose.CONTROL
    gold_payload = assignment_payload(assignment=gold)
    assert shape(gold_payload) == shape(real_payload)
    text = str(gold_payload).lower()
    assert not any(word in text for word in ("gold", "control", "purpose", "qualification"))
    # the submission shown is the gold review's, as it was submitted
    origin = GoldItem.objects.get(pk=gold.gold_id).origin
    assert gold_payload["reviewed"]["submission"] == origin.submission
    assert gold_payload["reviewed"]["stage"] == real_payload["reviewed"]["stage"]
    # and it carries no id that would date it (the submission's, its questions')
    assert "id" not in gold_payload["reviewed"]
    assert all(set(q) == {"text"} for q in gold_payload["reviewed"]["questions"])


def test_nobody_reviews_their_own_submission_real_or_gold(project, setup):
    # given a reviewer who also writes: their set waits for review and is a gold review too
    rita = active_reviewer(project, "rita")
    own = write_set(project, rita, 70)
    assert own.review_state == ReviewState.SAMPLED
    review_gold_create(project=project, submission_id=own.pk, user=setup["lead"], verdict="accepted")
    # and a writer's set they reviewed for real, which the lead then made a gold review
    wes = member(project, "wes")
    theirs = write_set(project, wes, 71)
    assert review(project, rita, ACCEPT).reviewed_id == theirs.pk
    review_gold_create(project=project, submission_id=theirs.pk, user=setup["lead"])
    # then the real queue has nothing for them (their own set is not offered)
    assert assignment_next(project=project, user=rita, stage="review") is None
    # and as control items they get every gold review but their own and the one they reviewed (a
    # repeat would tell)
    configure(project, control_rate=1.0, control_rate_new=1.0)
    waiting(project, 200), waiting(project, 201)
    seen = []
    while (lease := assignment_next(project=project, user=rita, stage="review")).purpose == Purpose.CONTROL:
        seen.append(lease.reviewed_id)
        right = setup["truth"][lease.reviewed_id]
        assignment_submit(assignment_id=lease.pk, user=rita, data=REJECT if right == "rejected" else ACCEPT)
    assert sorted(seen) == sorted(setup["truth"])
    assert own.pk not in seen and theirs.pk not in seen
    # another reviewer gets them all, rita's set included
    carl = active_reviewer(project, "carl")
    truth = {**setup["truth"], own.pk: "accepted", theirs.pk: "accepted"}
    served = []
    while (lease := assignment_next(project=project, user=carl, stage="review")).purpose == Purpose.CONTROL:
        served.append(lease.reviewed_id)
        right = truth[lease.reviewed_id]
        assignment_submit(assignment_id=lease.pk, user=carl, data=REJECT if right == "rejected" else ACCEPT)
    assert sorted(served) == sorted(truth)


def test_double_review_records_a_second_verdict_and_the_reviewers_agreement(project):
    configure(project, qualification_review_sets=1, review_rate=1.0, review_double_rate=1.0)
    ann, bob = member(project, "ann", role="reviewer"), member(project, "bob", role="reviewer")
    lead = member(project, "lead", role="lead")
    screens(project, 3, state=ScreenState.QUESTIONS_1)
    sets = [write_set(project, member(project, f"w{n}"), n) for n in range(3)]
    # ann decides all three
    for _ in range(3):
        review(project, ann, ACCEPT)
    assert all(Assignment.objects.get(pk=s.pk).review_double for s in sets)
    # they come back for a second reviewer, not for ann
    assert assignment_next(project=project, user=ann, stage="review") is None
    second = [review(project, bob, body) for body in (ACCEPT, ACCEPT, REJECT)]
    assert [s.reviewed_id for s in second] == [s.pk for s in sets]
    # a second review decides nothing: the states are ann's, no rejection undid anything
    assert {Assignment.objects.get(pk=s.pk).review_state for s in sets} == {ReviewState.ACCEPTED}
    assert Review.objects.filter(second_of__isnull=False).count() == 3
    assert assignment_next(project=project, user=lead, stage="review") is None
    # each reviewer's agreement with the others: 2 of 3
    assert reviewer_agreement(project=project) == {ann.pk: (2, 3), bob.pk: (2, 3)}
    # the lead sees it per reviewer in the quality figures
    figures = {row.username: row for row in quality_report(project=project, stage="review")}
    assert (figures["ann"].review_agreement_agreed, figures["ann"].review_agreement_compared) == (2, 3)
    assert figures["bob"].review_agreement == round(2 / 3, 4) and figures["lead"].review_agreement is None
    # a paused second reviewer's reviews are withdrawn: the submissions wait for a second review again
    from tests.pipeline.quality.builders import rule_pause

    event = rule_pause(project, bob, "review")
    assert event.figures["withdrawn"] == 3
    assert reviewer_agreement(project=project) == {}
    assert review(project, lead, ACCEPT).reviewed_id == sets[0].pk
    assert reviewer_agreement(project=project, user_ids=[ann.pk]) == {ann.pk: (1, 1)}
    # a lead's reinstate brings back the second reviews nobody redid
    standing_act(project=project, user_id=bob.pk, stage="review", action="reinstate", actor=lead)
    reinstated = QualityEvent.objects.filter(user=bob, stage="review").latest("pk")
    assert (reinstated.figures["restored"], reinstated.figures["redone"]) == (2, 1)
    assert reviewer_agreement(project=project) == {ann.pk: (2, 3), bob.pk: (1, 2), lead.pk: (1, 1)}


def test_a_lead_makes_a_gold_review_over_the_api(project, setup, api_client):
    from tests.conftest import login

    url = f"/api/projects/{project.slug}/quality/gold/review/"
    writer = member(project, "wes")
    fresh = write_set(project, writer, 80)
    login(api_client, setup["lead"])
    no_verdict = api_client.post(url, {"submission_id": fresh.pk}, format="json")
    assert no_verdict.status_code == 400 and no_verdict.json()["field"] == "verdict"
    bad_reason = api_client.post(url, {"submission_id": fresh.pk, "verdict": "rejected", "reason": "x"}, format="json")
    assert bad_reason.status_code == 400 and bad_reason.json()["field"] == "reason"
    made = api_client.post(url, {"submission_id": fresh.pk, "verdict": "rejected", "reason": "ads"}, format="json")
    assert made.status_code == 201
    assert (made.json()["stage"], made.json()["origin_id"]) == ("review", fresh.pk)
    assert api_client.post(url, {"submission_id": fresh.pk, "verdict": "accepted"}, format="json").status_code == 409
    assert api_client.post(url, {"submission_id": 0}, format="json").status_code == 404
    # a reviewer may not
    login(api_client, member(project, "rita", role="reviewer"))
    assert api_client.post(url, {"submission_id": fresh.pk}, format="json").status_code == 403


def test_the_gold_page_promotes_a_review_to_a_gold_review(project, setup, client):
    from tests.conftest import login

    writer = member(project, "wes")
    submission = write_set(project, writer, 90)
    done = review(project, setup["lead"], REJECT)
    login(client, setup["lead"])
    page = client.get(f"/projects/{project.slug}/quality/gold/")
    assert "s id makes a gold review" in page.content.decode()
    response = client.post(f"/projects/{project.slug}/quality/gold/promote/", {"assignment_id": str(done.pk)})
    assert response.status_code == 302
    gold = GoldItem.objects.get(stage="review", origin=submission)
    assert gold.answer["verdict"] == "rejected" and gold.source == "promoted"


def test_several_reviewers_hold_the_same_gold_review_at_once(project, setup):
    GoldItem.objects.filter(stage="review").exclude(pk=GoldItem.objects.filter(stage="review").first().pk).update(
        active=False
    )
    configure(project, control_rate=1.0, control_rate_new=1.0)
    waiting(project)
    leases = [
        assignment_next(project=project, user=active_reviewer(project, f"r{n}"), stage="review") for n in range(3)
    ]
    assert {lease.purpose for lease in leases} == {Purpose.CONTROL}
    assert len({lease.reviewed_id for lease in leases}) == 1
    assert Assignment.objects.filter(pk__in=[lease.pk for lease in leases], status="leased").count() == 3


def test_only_a_submitted_real_submission_of_the_project_becomes_a_gold_review(project, setup):
    lead = setup["lead"]
    writer = member(project, "wes")
    fresh = write_set(project, writer, 98)
    # refused: another project's submission, one still leased, a review itself
    other = ProjectFactory(slug="other")
    theirs = Assignment.objects.create(
        project=other,
        stage="questions-1",
        screen=screens(other, 1, state=ScreenState.QUESTIONS_2)[0],
        annotator=writer,
        status=AssignmentStatus.SUBMITTED,
        lease_expires_at=fresh.lease_expires_at,
        submitted_at=fresh.submitted_at,
    )
    leased = Assignment.objects.filter(pk=fresh.pk)
    review_of = Assignment.objects.filter(stage="review").first()
    for submission_id, change in (
        (theirs.pk, None),
        (fresh.pk, {"status": AssignmentStatus.LEASED}),
        (review_of.pk, None),
    ):
        if change:
            leased.update(**change)
        with pytest.raises(NotFoundError) as err:
            review_gold_create(
                project=project, submission_id=submission_id, user=lead, verdict="rejected", reason="ads"
            )
        assert (err.value.message, err.value.field) == ("No submission with this id in the project.", "submission_id")
        leased.update(status=AssignmentStatus.SUBMITTED)
    # an unreviewed submission needs the lead's verdict
    with pytest.raises(ApplicationError) as err:
        review_gold_create(project=project, submission_id=fresh.pk, user=lead)
    assert (err.value.message, err.value.field) == ("This submission has no review: say the gold verdict.", "verdict")
    # given one: the gold review is the lead's, written by hand, with the note, on the submission's screen
    made = review_gold_create(
        project=project, submission_id=fresh.pk, user=lead, verdict="rejected", reason="ads", note="an ad"
    )
    assert (made.created_by, made.source, made.note, made.screen_id, made.project_id) == (
        lead,
        GoldSource.MANUAL,
        "an ad",
        fresh.screen_id,
        project.pk,
    )
    assert made.answer == {"verdict": "rejected", "reason": "ads", "comment": ""}


def test_the_agreement_pairs_only_this_projects_double_reviews_by_two_reviewers(project):
    # given four sets decided by ann, all sampled for a second review: cy holds the first one's second
    # review (leased, not in), bob gives the next two theirs (agreeing once), the fourth waits
    configure(project, qualification_review_sets=1, review_rate=1.0, review_double_rate=1.0)
    ann, bob, cy = (member(project, name, role="reviewer") for name in ("ann", "bob", "cy"))
    screens(project, 4, state=ScreenState.QUESTIONS_1)
    sets = [write_set(project, member(project, f"w{n}"), n) for n in range(4)]
    for _ in sets:
        review(project, ann, ACCEPT)
    held = assignment_next(project=project, user=cy, stage="review")
    assert held is not None and held.reviewed_id == sets[0].pk
    assert [review(project, bob, body).reviewed_id for body in (ACCEPT, REJECT)] == [sets[1].pk, sets[2].pk]
    # and the same reviewers' pair in another project (they agree there)
    other = ProjectFactory(slug="other")
    configure(other, qualification_review_sets=1, review_rate=1.0, review_double_rate=1.0)
    screens(other, 1, state=ScreenState.QUESTIONS_1)
    far = write_set(other, member(other, "far"), 0)
    for name in ("ann", "bob"):
        assert review(other, member(other, name, role="reviewer"), ACCEPT).reviewed_id == far.pk
    # and a second review of the fourth set in its decider's name: no comparison (the queue never
    # serves a decider the second review; the row is written by hand)
    Review.objects.create(second_of=sets[3], reviewer=ann, verdict="accepted")
    # then each project counts its own pairs, past the first set still waiting for its second review
    assert reviewer_agreement(project=project) == {ann.pk: (1, 2), bob.pk: (1, 2)}
    assert reviewer_agreement(project=other) == {ann.pk: (1, 1), bob.pk: (1, 1)}
    # and asked for bob only, bob's side of each pair counts though ann's review comes first
    assert reviewer_agreement(project=project, user_ids=[bob.pk]) == {bob.pk: (1, 2)}
