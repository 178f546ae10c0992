"""The lead's quality figures (``pipeline.quality.report``): each figure against numbers chosen
by hand, a fixed number of queries however many annotators, sorting, the timeline, gold stats."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    ControlResult,
    Membership,
    Purpose,
    QualityEvent,
    Question,
    QuestionSource,
    Review,
    ReviewState,
)
from pipeline.quality.report import (
    AnnotatorFigures,
    StageStanding,
    _add_work_in_python,
    agreement_by_user,
    control_timeline,
    gold_stat,
    gold_stats,
    member_get_for_report,
    quality_events,
    quality_report,
    rule_label,
)
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

from .report_builders import START, answer, control, gold, question, standing, work

pytestmark = pytest.mark.django_db


def member(project, username, role="annotator"):
    user = UserFactory(username=username)
    MembershipFactory(project=project, user=user, role=role)
    return user


@pytest.fixture
def crowd(project):
    annie, bob, carl = (member(project, name) for name in ("annie", "bob", "carl"))
    member(project, "leo", role="lead")
    # standings: annie active after a second attempt (1 of 2, then 2 of 2); bob paused
    standing(project, annie, attempt=2, items_done=3, reason="qualified with 2 of 2")
    standing(project, bob, status="paused", attempt=1, reason="1 of your last 3 control items were right")
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
    control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
    control(project, bob, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
    # control items: annie 3 of 4 right (two days), bob 1 of 3
    for i, right in enumerate((True, True, False, True)):
        control(project, annie, correct=right, at=START + timedelta(days=i // 2))
    for right in (True, False, False):
        control(project, bob, correct=right)
    # work: annie 10 s, 20 s, 60 s (median 20), one skip, one accepted and one rejected in review
    work(project, annie, seconds=10, review_state="accepted")
    work(project, annie, seconds=20, review_state="rejected")
    work(project, annie, seconds=60)
    work(project, annie, status=AssignmentStatus.SKIPPED)
    work(project, bob, seconds=4)
    # questions carl wrote: one judged invalid, one not answerable, one fine; one of the
    # not-answerable stage judged not answerable (meant to be: not counted against him)
    for verdict, source in (
        ("invalid", QuestionSource.PASS_1),
        ("not_answerable", QuestionSource.PASS_2),
        ("answered", QuestionSource.PASS_1),
        ("not_answerable", QuestionSource.NOT_ANSWERABLE),
    ):
        q = question(project, author=carl, source=source)
        answer(q, annie, verdict, ("Foo",) if verdict == "answered" else ())
    # a validation question: annie and bob agree, carl does not; a test question: all three differ
    q = question(project, split="validation")
    answer(q, annie, "answered", ("Send",))
    answer(q, bob, "answered", ("Send", "Cancel"))
    answer(q, carl, "invalid")
    q = question(project, split="test")
    answer(q, annie, "answered", ("One",))
    answer(q, bob, "answered", ("Two",))
    answer(q, carl, "invalid")
    return {"annie": annie, "bob": bob, "carl": carl}


def by_name(rows):
    return {r.username: r for r in rows}


def test_figures_per_annotator(project, crowd):
    rows = by_name(quality_report(project=project))
    annie, bob, carl = rows["annie"], rows["bob"], rows["carl"]
    # standing and qualification (the last attempt: 2 of 2)
    assert [(s.stage, s.status) for s in annie.standings] == [("prefilter", "active")]
    assert annie.standings[0].reason == "qualified with 2 of 2"
    assert annie.qualification_score == 1.0 and annie.standings[0].qualification_items == 2
    assert bob.status == "paused" and bob.qualification_score == 1.0
    assert carl.standings == [] and carl.qualification_score is None
    # control accuracy
    assert (annie.control_correct, annie.control_items, annie.control_accuracy) == (3, 4, 0.75)
    assert (bob.control_correct, bob.control_items) == (1, 3)
    # work: median duration, skips, reviews (gold items do not count as work)
    assert (annie.submitted, annie.skips, annie.median_seconds) == (3, 1, 20.0)
    assert (annie.reviews_accepted, annie.reviews_rejected) == (1, 1)
    assert (bob.submitted, bob.median_seconds) == (1, 4.0)
    # questions carl wrote: 2 of 4 judged invalid or not answerable
    assert (carl.questions_written, carl.questions_flagged, carl.invalid_rate) == (4, 2, 0.5)
    assert (carl.questions_flagged_pass2, carl.questions_faulted) == (0, 2)
    assert annie.invalid_rate is None
    # agreement: annie and bob with the majority on the validation question only; carl never;
    # the train questions (one answer each) do not count
    assert (annie.agreement_agreed, annie.agreement_answers) == (1, 2)
    assert (bob.agreement_agreed, bob.agreement_answers) == (1, 2)
    assert (carl.agreement_agreed, carl.agreement_answers) == (0, 2)
    assert rows["leo"].role == "lead" and rows["leo"].submitted == 0


def test_pass_two_flags_count_in_the_writers_invalid_rate(project, crowd):
    """A pass-2 writer's flag counts against the pass-1 writer; a question judged invalid and
    also flagged counts once."""
    carl = crowd["carl"]
    invalid, answered = Question.objects.filter(author=carl, source=QuestionSource.PASS_1).order_by("pk")
    Question.objects.filter(pk__in=[invalid.pk, answered.pk]).update(flag_reason="counting")
    carl_row = by_name(quality_report(project=project))["carl"]
    assert (carl_row.questions_flagged, carl_row.questions_flagged_pass2, carl_row.questions_faulted) == (2, 2, 3)
    assert carl_row.invalid_rate == 0.75
    pass2 = by_name(quality_report(project=project, stage="questions-2"))["carl"]
    assert (pass2.questions_written, pass2.questions_flagged_pass2, pass2.invalid_rate) == (1, 0, 1.0)
    assert quality_report(project=project, sort="-invalid")[0].username == "carl"


def test_median_of_an_even_count_is_the_mean_of_the_middle_two(project, crowd):
    # bob: 4 s, then 9 s and 100 s: (4, 9, 100) → 9; with 1 s more: (1, 4, 9, 100) → 6.5
    for seconds in (9, 100):
        work(project, crowd["bob"], seconds=seconds)
    assert by_name(quality_report(project=project))["bob"].median_seconds == 9.0
    work(project, crowd["bob"], seconds=1)
    assert by_name(quality_report(project=project))["bob"].median_seconds == 6.5


def test_one_stage_only(project, crowd):
    work(project, crowd["annie"], seconds=500, stage="questions-1")
    rows = by_name(quality_report(project=project, stage="questions-1"))
    assert rows["annie"].submitted == 1 and rows["annie"].median_seconds == 500.0
    assert rows["annie"].control_items == 0 and rows["annie"].standings == []
    assert rows["annie"].agreement_answers == 0  # agreement is the answers stage's
    assert (rows["carl"].questions_written, rows["carl"].questions_flagged) == (2, 1)  # pass 1 only
    with pytest.raises(ApplicationError):
        quality_report(project=project, stage="nope")


def test_query_count_does_not_grow_with_the_crowd(project, crowd, django_assert_num_queries):
    with django_assert_num_queries(10):
        quality_report(project=project)
    for i in range(5):
        extra = member(project, f"extra{i}")
        control(project, extra, correct=False)
        work(project, extra, seconds=3)
        answer(question(project, split="validation"), extra, "invalid")
    with django_assert_num_queries(10):
        rows = quality_report(project=project)
    assert len(rows) == 9


def test_sorting(project, crowd):
    names = [r.username for r in quality_report(project=project, sort="-control")]
    assert names[:2] == ["annie", "bob"] and set(names[2:]) == {"carl", "leo"}  # no figure: last
    assert quality_report(project=project, sort="status")[0].username == "bob"
    assert [r.username for r in quality_report(project=project, sort="median")][:2] == ["bob", "annie"]
    with pytest.raises(ApplicationError) as err:
        quality_report(project=project, sort="height")
    assert err.value.field == "sort"


def test_control_accuracy_over_time(project, crowd):
    days = control_timeline(project=project, user_id=crowd["annie"].pk)
    assert [(p.label, p.correct, p.items) for p in days] == [("2026-03-02", 2, 2), ("2026-03-03", 1, 2)]
    assert days[1].results[0].feedback["why"].startswith("Judged differently")
    runs = control_timeline(project=project, user_id=crowd["annie"].pk, per=3)
    assert [(p.label, p.correct, p.items) for p in runs] == [("1–3", 2, 3), ("4–6", 1, 1)]
    with pytest.raises(ApplicationError):
        control_timeline(project=project, user_id=crowd["annie"].pk, per=0)


def test_gold_stats_mark_an_item_most_fail(project, crowd):
    bad = gold(project)
    for name, right in (("annie", False), ("bob", False), ("carl", True)):
        control(project, crowd[name], correct=right, item=bad)
    stats = {s.gold.pk: s for s in gold_stats(project=project)}
    assert (stats[bad.pk].served, stats[bad.pk].correct, stats[bad.pk].suspect) == (3, 1, True)
    assert not any(s.suspect for pk, s in stats.items() if pk != bad.pk)


def test_quality_events_filter(project, crowd):
    lead = UserFactory(username="leo")
    QualityEvent.objects.create(project=project, user=crowd["annie"], stage="prefilter", rule="lead-pause", actor=lead)
    QualityEvent.objects.create(project=project, user=crowd["bob"], stage="answers", rule="control-accuracy")
    assert [e.rule for e in quality_events(project=project, user_id=crowd["bob"].pk)] == ["control-accuracy"]
    assert [e.user.username for e in quality_events(project=project, stage="prefilter")] == ["annie"]


def test_one_annotator_reads_only_their_questions(project, crowd):
    (carl,) = quality_report(project=project, user_id=crowd["carl"].pk)
    assert (carl.username, carl.agreement_agreed, carl.agreement_answers) == ("carl", 0, 2)
    assert carl.questions_written == 4


def test_timeline_and_gold_stats_are_one_query_each(project, crowd, django_assert_num_queries):
    with django_assert_num_queries(1):
        points = control_timeline(project=project, user_id=crowd["annie"].pk)
        [r.gold.screen.rico_id for p in points for r in p.results]
    with django_assert_num_queries(1):
        stats = gold_stats(project=project)
        [s.gold.screen.rico_id for s in stats]
    assert len(stats) == 12


# --- each part called directly (written for the mutation target: each boundary, word and filter) ---


def test_shares_round_to_four_places_and_a_lowest_qualification_score(project):
    # given annie 1 of 3 right in her last pre-filtering set and 2 of 3 in answers; control 2 of 3
    annie = member(project, "annie")
    standing(project, annie, stage="questions-1", status="qualifying", attempt=1)
    standing(project, annie, attempt=1)
    standing(project, annie, stage="answers", attempt=1)  # no result: no score
    for right in (True, False, False):
        control(project, annie, correct=right, purpose=Purpose.QUALIFICATION, attempt=1)
    for right in (True, True, False):
        control(
            project,
            annie,
            correct=right,
            purpose=Purpose.QUALIFICATION,
            attempt=1,
            item=gold(project, stage="questions-1"),
        )
    for right in (True, True, False):
        control(project, annie, correct=right)

    [row] = quality_report(project=project)

    assert [(s.stage, s.qualification_correct, s.qualification_items) for s in row.standings] == [
        ("answers", 0, 0),
        ("prefilter", 1, 3),
        ("questions-1", 2, 3),
    ]
    assert [s.qualification_score for s in row.standings] == [None, 0.3333, 0.6667]
    assert row.qualification_score == 0.3333
    assert row.control_accuracy == 0.6667
    assert row.status == "qualifying"


def test_the_worst_standing_is_the_status():
    def figures(*statuses):
        row = AnnotatorFigures(1, "annie", "annotator")
        row.standings = [StageStanding("prefilter", s, "", 1, 0) for s in statuses]
        return row.status

    assert figures("active", "paused", "not_qualified") == "paused"
    assert figures("active", "qualifying", "not_qualified") == "not_qualified"
    assert figures("active", "qualifying") == "qualifying"
    assert figures("active") == "active"
    assert figures() == ""


def test_a_new_attempt_without_results_shows_the_one_before(project):
    annie = member(project, "annie")
    standing(project, annie, status="qualifying", attempt=3)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
    control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=2)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=2)
    [row] = quality_report(project=project)
    assert (row.standings[0].attempt, row.standings[0].qualification_correct, row.standings[0].qualification_items) == (
        3,
        1,
        2,
    )


@pytest.fixture
def three(project):
    """Three annotators with a figure in every column, each column ordering them differently."""
    zoe, amy, Bea = member(project, "zoe"), member(project, "amy"), member(project, "Bea")
    member(project, "nil")  # no figure at all
    standing(project, zoe, status="active")
    standing(project, amy, status="not_qualified")
    standing(project, Bea, status="qualifying")
    for user, rights in ((zoe, (True, False)), (amy, (True, True)), (Bea, (False, False))):
        for right in rights:
            control(project, user, correct=right, purpose=Purpose.QUALIFICATION, attempt=0)
            control(project, user, correct=right)
    return zoe, amy, Bea


def names(project, sort):
    return [r.username for r in quality_report(project=project, sort=sort)]


def test_each_column_sorts(project, three):
    zoe, amy, Bea = three
    # work: zoe 3 submitted (median 30 s), amy 1 (5 s) and 2 skips, Bea 2 (100 s) and 1 skip
    for seconds in (10, 30, 50):
        work(project, zoe, seconds=seconds, review_state="accepted")
    work(project, amy, seconds=5, review_state="rejected")
    for _ in range(2):
        work(project, amy, status=AssignmentStatus.SKIPPED)
    for _ in range(2):
        work(project, Bea, seconds=100, review_state="rejected")
    work(project, Bea, status=AssignmentStatus.SKIPPED)
    assert names(project, "username") == ["amy", "Bea", "nil", "zoe"]
    assert names(project, "-username") == ["zoe", "nil", "Bea", "amy"]
    assert names(project, "status") == ["amy", "Bea", "zoe", "nil"]
    assert names(project, "qualification") == ["Bea", "zoe", "amy", "nil"]
    assert names(project, "-control") == ["amy", "zoe", "Bea", "nil"]
    assert names(project, "accepted") == ["amy", "Bea", "nil", "zoe"]
    assert names(project, "-rejected") == ["Bea", "amy", "zoe", "nil"]  # ties: by name, descending too
    assert names(project, "median") == ["amy", "zoe", "Bea", "nil"]
    assert names(project, "-submitted") == ["zoe", "Bea", "amy", "nil"]
    assert names(project, "-skips") == ["amy", "Bea", "zoe", "nil"]
    with pytest.raises(ApplicationError) as err:
        quality_report(project=project, sort="-height")
    assert str(err.value) == (
        "Unknown sort '-height'; one of username, status, qualification, control, agreement, accepted, rejected, "
        "invalid, median, submitted, skips."
    )


def test_work_counts_done_items_only_and_rounds_the_median(project):
    # given annie's work: 10 s and 10.5 s (median 10.25 → 10.2); an open lease, a released and an
    # expired one; a leased item already accepted in review (counts as reviewed, not as submitted);
    # and decoys: bob's, another project's, a control item
    annie, bob = member(project, "annie"), member(project, "bob")
    work(project, bob, seconds=1000)
    other = ProjectFactory(slug="other")
    work(other, annie, seconds=1000)
    control(project, annie, correct=True)
    work(project, annie, seconds=10)
    work(project, annie, seconds=10.5)
    for status in (AssignmentStatus.LEASED, AssignmentStatus.RELEASED, AssignmentStatus.EXPIRED):
        work(project, annie, status=status)
    work(project, annie, status=AssignmentStatus.RELEASED, review_state="accepted")
    work(project, annie, status=AssignmentStatus.EXPIRED, review_state="sampled")
    # a released lease with a time (not a submission: its time is not a duration of work)
    late = work(project, annie, status=AssignmentStatus.RELEASED, review_state="rejected")
    Assignment.objects.filter(pk=late.pk).update(submitted_at=START + timedelta(seconds=900))

    row = by_name(quality_report(project=project))["annie"]

    assert (row.submitted, row.skips, row.reviews_accepted, row.reviews_rejected) == (2, 0, 1, 1)
    assert row.median_seconds == 10.2


def test_one_annotator_or_none(project):
    annie, bob = member(project, "annie"), member(project, "bob")
    outsider = UserFactory(username="outsider")
    control(project, annie, correct=True)
    control(project, bob, correct=False)
    [row] = quality_report(project=project, user_id=bob.pk)
    assert (row.username, row.role, row.control_items, row.control_correct) == ("bob", "annotator", 1, 0)
    assert quality_report(project=project, user_id=outsider.pk) == []


def test_agreement_given_is_used_for_the_answers_stage_only(project):
    annie, _bob = member(project, "annie"), member(project, "bob")
    given = {annie.pk: (2, 3), 999_999: (1, 1)}
    rows = by_name(quality_report(project=project, agreement=given))
    assert (rows["annie"].agreement_agreed, rows["annie"].agreement_answers, rows["annie"].agreement) == (2, 3, 0.6667)
    assert rows["bob"].agreement is None
    answers = by_name(quality_report(project=project, stage="answers", agreement=given))["annie"]
    assert answers.agreement_answers == 3
    assert by_name(quality_report(project=project, stage="prefilter", agreement=given))["annie"].agreement is None
    assert [r.username for r in quality_report(project=project, agreement=given, sort="-agreement")] == ["annie", "bob"]


def test_reviewers_agreement_in_the_review_stage(project):
    # given a double-reviewed submission of carl's: annie accepted it, bob rejected it
    annie, bob, carl = member(project, "annie"), member(project, "bob"), member(project, "carl")
    submission = work(project, carl, review_state="rejected")
    Assignment.objects.filter(pk=submission.pk).update(review_double=True)
    Review.objects.create(reviewed=submission, reviewer=bob, verdict="rejected", reason="sync")
    Review.objects.create(second_of=submission, reviewer=annie, verdict="accepted")

    for stage in (None, "review"):
        rows = by_name(quality_report(project=project, stage=stage))
        assert (rows["annie"].review_agreement_agreed, rows["annie"].review_agreement_compared) == (0, 1)
        assert rows["bob"].review_agreement == 0.0 and rows["carl"].review_agreement is None
    assert by_name(quality_report(project=project, stage="prefilter"))["annie"].review_agreement is None


def test_agreement_counts_decided_validation_and_test_questions_with_two_answers(project):
    # given validation questions: one all in where annie and bob agree and carl not; one still
    # answering; one with a single answer; a train one; and a test one kept where all three agree
    annie, bob, carl = member(project, "annie"), member(project, "bob"), member(project, "carl")
    decided = question(project, split="validation")
    for user, texts in ((annie, ("Send",)), (bob, ("Send",)), (carl, ("Cancel",))):
        answer(decided, user, "answered", texts)
    running = question(project, split="validation", state="answering")
    lonely = question(project, split="test")
    train = question(project, split="train")
    kept = question(project, split="test", state="kept")
    for q in (running, train, kept):
        for user in (annie, bob, carl):
            answer(q, user, "answered", ("Same",))
    answer(lonely, carl, "answered", ("Alone",))
    gone = member(project, "gone")
    answer(decided, gone, "answered", ("Send",))
    gone.delete()  # an answer whose annotator left counts for nobody
    elsewhere = ProjectFactory(slug="other")
    for user in (annie, carl):
        answer(question(elsewhere, split="validation"), user, "answered", ("Other",))

    assert agreement_by_user(project=project) == {annie.pk: (2, 2), bob.pk: (2, 2), carl.pk: (1, 2)}
    assert agreement_by_user(project=project, user_id=carl.pk) == {carl.pk: (1, 2)}
    # and only the questions the one annotator answered
    dana = member(project, "dana")
    assert agreement_by_user(project=project, user_id=dana.pk) == {}


def test_control_timeline_of_one_stage(project):
    annie, bob = member(project, "annie"), member(project, "bob")
    control(project, bob, correct=True, at=START)
    control(project, annie, correct=True, purpose=Purpose.QUALIFICATION, attempt=1)
    control(project, annie, correct=False, item=gold(project, stage="questions-1"), at=START - timedelta(days=1))
    control(project, annie, correct=True, at=START + timedelta(days=1))
    control(project, annie, correct=False, at=START)
    control(ProjectFactory(slug="other"), annie, correct=True, at=START)

    days = control_timeline(project=project, user_id=annie.pk, stage="prefilter")

    assert [(p.label, p.correct, p.items, p.accuracy) for p in days] == [
        ("2026-03-02", 0, 1, 0.0),
        ("2026-03-03", 1, 1, 1.0),
    ]
    runs = control_timeline(project=project, user_id=annie.pk, per=2)
    assert [(p.label, p.correct, p.items) for p in runs] == [("1–2", 0, 2), ("3–4", 1, 1)]
    with pytest.raises(ApplicationError) as err:
        control_timeline(project=project, user_id=annie.pk, per=0)
    assert (str(err.value), err.value.field) == ("per is a number of control items, 1 or more.", "per")
    assert [len(p.results) for p in control_timeline(project=project, user_id=annie.pk, per=1)] == [1, 1, 1]


def test_a_report_on_a_non_member_is_not_found(project):
    annie = member(project, "annie", role="lead")
    found = member_get_for_report(project=project, user_id=annie.pk)
    assert (found.user.username, found.role) == ("annie", "lead")
    outsider = UserFactory(username="outsider")
    with pytest.raises(NotFoundError) as err:
        member_get_for_report(project=project, user_id=outsider.pk)
    assert str(err.value) == "This user is not a member of the project."


def test_quality_events_newest_first_of_the_project(project):
    annie, bob = member(project, "annie"), member(project, "bob")
    QualityEvent.objects.create(project=ProjectFactory(slug="other"), user=annie, stage="prefilter", rule="lead-pause")
    first = QualityEvent.objects.create(project=project, user=annie, stage="prefilter", rule="lead-pause")
    second = QualityEvent.objects.create(project=project, user=annie, stage="answers", rule="control-accuracy")
    third = QualityEvent.objects.create(project=project, user=bob, stage="prefilter", rule="skips")
    QualityEvent.objects.filter(pk=first.pk).update(created_at=START + timedelta(days=1))
    QualityEvent.objects.filter(pk__in=[second.pk, third.pk]).update(created_at=START)

    assert [e.pk for e in quality_events(project=project)] == [first.pk, third.pk, second.pk]
    assert [e.pk for e in quality_events(project=project, user_id=annie.pk, stage="prefilter")] == [first.pk]
    assert rule_label("control-accuracy") != "control-accuracy" and rule_label("made-up") == "made-up"


def test_gold_stats_at_the_boundaries_of_most_fail(project):
    people = [member(project, name) for name in ("a", "b", "c", "d")]
    two_wrong = gold(project)  # 0 of 2: too few to tell
    half = gold(project)  # 2 of 4: half, not fewer
    one_of_three = gold(project)  # 1 of 3: suspect
    answers_item = gold(project, stage="questions-1")
    for user in people[:2]:
        control(project, user, correct=False, item=two_wrong)
    for user, right in zip(people, (True, True, False, False), strict=True):
        control(project, user, correct=right, item=half)
    for user, right in zip(people, (True, False, False), strict=False):
        control(project, user, correct=right, item=one_of_three)

    stats = {s.gold.pk: s for s in gold_stats(project=project, stage="prefilter")}
    assert answers_item.pk not in stats
    assert (stats[two_wrong.pk].served, stats[two_wrong.pk].share, stats[two_wrong.pk].suspect) == (2, 0.0, False)
    assert (stats[half.pk].share, stats[half.pk].suspect) == (0.5, False)
    assert (stats[one_of_three.pk].share, stats[one_of_three.pk].suspect) == (0.3333, True)
    one = gold_stat(project=project, gold_id=half.pk)
    assert (one.gold.pk, one.served, one.correct) == (half.pk, 4, 2)
    with pytest.raises(NotFoundError) as err:
        gold_stat(project=ProjectFactory(slug="other"), gold_id=half.pk)
    assert str(err.value) == "Gold item not found."


def test_events_and_a_member_are_one_query_each(project, django_assert_num_queries):
    annie, leo = member(project, "annie"), member(project, "leo", role="lead")
    QualityEvent.objects.create(project=project, user=annie, stage="prefilter", rule="lead-pause", actor=leo)
    with django_assert_num_queries(1):
        assert [(e.user.username, e.actor.username) for e in quality_events(project=project)] == [("annie", "leo")]
    with django_assert_num_queries(1):
        assert member_get_for_report(project=project, user_id=annie.pk).user.username == "annie"


# --- each filter with a decoy, each argument passed on (written for the mutation target) ---------------


def test_qualification_scores_are_of_the_projects_qualification_results_per_user_stage_and_attempt(project):
    # given annie at attempt 2 in two stages and bob at attempt 2 in pre-filtering, with results of
    # each user, stage and attempt: annie pre-filtering 1 of 2 (attempt 1: 0 of 1), questions 3 of 3,
    # bob 2 of 4; decoys: annie's qualification results in another project and her control items
    # of attempt 2
    annie, bob = member(project, "annie"), member(project, "bob")
    standing(project, annie, attempt=2, items_done=7)
    standing(project, annie, stage="questions-1", attempt=2, items_done=4)
    standing(project, bob, attempt=2, items_done=5)
    for user, stage, attempt, rights in (
        (annie, "prefilter", 2, (True, False)),
        (annie, "prefilter", 1, (False,)),
        (annie, "questions-1", 2, (True, True, True)),
        (bob, "prefilter", 2, (True, True, False, False)),
    ):
        for right in rights:
            item = gold(project, stage=stage)
            control(project, user, correct=right, item=item, purpose=Purpose.QUALIFICATION, attempt=attempt)
    other = ProjectFactory(slug="other")
    for right in (False, False, False):
        control(other, annie, correct=right, purpose=Purpose.QUALIFICATION, attempt=2)
    for right in (False, False, False):
        control(project, annie, correct=right, attempt=2)

    # when
    rows = by_name(quality_report(project=project))

    # then each standing has its own attempt's results and its items done
    assert [
        (s.stage, s.attempt, s.items_done, s.qualification_correct, s.qualification_items)
        for s in rows["annie"].standings
    ] == [("prefilter", 2, 7, 1, 2), ("questions-1", 2, 4, 3, 3)]
    assert [(s.items_done, s.qualification_correct, s.qualification_items) for s in rows["bob"].standings] == [
        (5, 2, 4)
    ]
    assert (rows["annie"].user_id, rows["bob"].user_id) == (annie.pk, bob.pk)


def test_control_accuracy_counts_the_projects_control_items_only(project):
    # given annie right on one control item of the project, wrong on two of another project
    annie = member(project, "annie")
    control(project, annie, correct=True)
    other = ProjectFactory(slug="other")
    for _ in range(2):
        control(other, annie, correct=False)

    # when
    [row] = quality_report(project=project)

    # then
    assert (row.user_id, row.control_correct, row.control_items, row.control_accuracy) == (annie.pk, 1, 1, 1.0)


def test_one_annotators_agreement_reads_only_the_questions_they_answered(project, crowd, django_assert_num_queries):
    # given dana, a member who answered none of the crowd's validation and test questions
    dana = member(project, "dana")

    # when her report is read: the full report's ten queries but the two reading answers and their
    # elements (no question is hers: none is read)
    with django_assert_num_queries(8):
        [row] = quality_report(project=project, user_id=dana.pk)

    # then no agreement; and annie's own report has her figure of everyone's report
    assert (row.username, row.agreement_answers, row.agreement) == ("dana", 0, None)
    [annie] = quality_report(project=project, user_id=crowd["annie"].pk)
    assert (annie.agreement_agreed, annie.agreement_answers) == (1, 2)


def test_one_reviewers_report_and_a_reviewer_who_left(project):
    # given a double-reviewed submission of carl's: annie accepted it, bob rejected it
    annie, bob, carl = member(project, "annie"), member(project, "bob"), member(project, "carl")
    submission = work(project, carl, review_state="rejected")
    Assignment.objects.filter(pk=submission.pk).update(review_double=True)
    Review.objects.create(reviewed=submission, reviewer=bob, verdict="rejected", reason="sync")
    Review.objects.create(second_of=submission, reviewer=annie, verdict="accepted")

    # when annie's report is read: her review agreement only (bob is not in it)
    [row] = quality_report(project=project, user_id=annie.pk)

    # then
    assert (row.username, row.review_agreement_agreed, row.review_agreement_compared) == ("annie", 0, 1)
    # and once bob has left the project, the report has no row for him, and annie's figure stays
    Membership.objects.filter(project=project, user=bob).delete()
    rows = by_name(quality_report(project=project, stage="review"))
    assert set(rows) == {"annie", "carl"} and rows["annie"].review_agreement_compared == 1


def test_agreement_counts_the_projects_questions_with_two_answers(project):
    # given a validation question with exactly two answers, which agree; a test question with two
    # that differ (a tie: none agrees); and another project's validation question both answered alike
    annie, bob = member(project, "annie"), member(project, "bob")
    pair = question(project, split="validation")
    for user in (annie, bob):
        answer(pair, user, "answered", ("Send",))
    tie = question(project, split="test")
    answer(tie, annie, "answered", ("One",))
    answer(tie, bob, "answered", ("Two",))
    elsewhere = question(ProjectFactory(slug="other"), split="validation")
    for user in (annie, bob):
        answer(elsewhere, user, "answered", ("Other",))

    # when / then
    assert agreement_by_user(project=project) == {annie.pk: (1, 2), bob.pk: (1, 2)}
    assert agreement_by_user(project=project, user_id=bob.pk) == {bob.pk: (1, 2)}


def test_one_annotators_agreement_passes_over_a_question_where_their_answer_was_withdrawn(project):
    # given annie's answer to a first validation question withdrawn by quality control (bob's and
    # carl's stand), then a second question where annie and bob agree
    annie, bob, carl = member(project, "annie"), member(project, "bob"), member(project, "carl")
    first = question(project, split="validation")
    withdrawn = answer(first, annie, "answered", ("Send",))
    Answer.objects.filter(pk=withdrawn.pk).update(kept=False, drop_reason="withdrawn")
    for user in (bob, carl):
        answer(first, user, "answered", ("Send",))
    second = question(project, split="validation")
    for user in (annie, bob):
        answer(second, user, "answered", ("Send",))

    # when / then: the first question counts for the others only, the second for annie too
    assert agreement_by_user(project=project, user_id=annie.pk) == {annie.pk: (1, 1)}
    assert agreement_by_user(project=project) == {annie.pk: (1, 1), bob.pk: (2, 2), carl.pk: (1, 1)}


def test_control_results_of_the_same_moment_come_in_the_order_they_were_made(project):
    # given two of annie's control results at the same moment, the first one (of the questions stage)
    # written again last: neither the table nor the index by stage holds them in the order they were made
    annie = member(project, "annie")
    first = control(project, annie, correct=True, item=gold(project, stage="questions-1"))
    second = control(project, annie, correct=False)
    ControlResult.objects.filter(pk=first.pk).update(created_at=START)

    # when
    runs = control_timeline(project=project, user_id=annie.pk, per=1)

    # then
    assert [(p.label, [r.pk for r in p.results]) for p in runs] == [("1–1", [first.pk]), ("2–2", [second.pk])]


def test_the_timeline_brings_each_results_gold_question_and_assignment_in_its_one_query(
    project, django_assert_num_queries
):
    # given annie's control results on a gold item of the answers stage (a question) and of pre-filtering
    annie = member(project, "annie")
    asked = question(project)
    on_question = control(project, annie, correct=True, item=gold(project, stage="answers", on=asked))
    on_screen = control(project, annie, correct=False)

    # when the timeline is read with each result's gold item, screen, question and assignment
    with django_assert_num_queries(1):
        points = control_timeline(project=project, user_id=annie.pk)
        seen = [
            (r.gold.screen.pk, r.gold.question.text if r.gold.question else None, r.assignment.pk)
            for p in points
            for r in p.results
        ]

    # then
    assert seen == [
        (asked.screen_id, "What is shown?", on_question.assignment_id),
        (on_screen.gold.screen_id, None, on_screen.assignment_id),
    ]


def test_a_member_of_another_project_only_is_not_found_in_this_one(project):
    olga = UserFactory(username="olga")
    other = ProjectFactory(slug="other")
    MembershipFactory(project=other, user=olga, role="lead")
    with pytest.raises(NotFoundError):
        member_get_for_report(project=project, user_id=olga.pk)
    assert member_get_for_report(project=other, user_id=olga.pk).role == "lead"


# --- work figures: the grouped query (PostgreSQL) and the Python path give the same figures --------


@pytest.fixture
def worked(project):
    """Work of every kind, each annotator's median a different case."""
    annie, bob, carl, dana = (member(project, name) for name in ("annie", "bob", "carl", "dana"))
    member(project, "leo", role="lead")  # no work at all
    # annie: 10 s, 20 s and 60 s (an odd count: 20), one accepted and one rejected in review; a skip
    work(project, annie, seconds=10, review_state="accepted")
    work(project, annie, seconds=20, review_state="rejected")
    work(project, annie, seconds=60)
    work(project, annie, status=AssignmentStatus.SKIPPED)
    # bob: 4 s, 10 s, 10.5 s and 30 s (an even count: the mean of 10 and 10.5, 10.25 → 10.2)
    for seconds in (30, 10.5, 4, 10):
        work(project, bob, seconds=seconds)
    # carl: two skips only (no median)
    for _ in range(2):
        work(project, carl, status=AssignmentStatus.SKIPPED)
    # dana: reviewed but never submitted: a released lease accepted, an expired one with a time and
    # rejected (its time is not a duration of work); an open lease
    work(project, dana, status=AssignmentStatus.RELEASED, review_state="accepted")
    late = work(project, dana, status=AssignmentStatus.EXPIRED, review_state="rejected")
    Assignment.objects.filter(pk=late.pk).update(submitted_at=START + timedelta(seconds=900))
    work(project, dana, status=AssignmentStatus.LEASED)
    # decoys: annie's work in another project and a control item of hers
    work(ProjectFactory(slug="other"), annie, seconds=1000)
    control(project, annie, correct=True)
    return {"annie": annie, "bob": bob, "carl": carl, "dana": dana}


# (submitted, skips, accepted, rejected, median seconds) of each member
WORKED = {
    "annie": (3, 1, 1, 1, 20.0),
    "bob": (4, 0, 0, 0, 10.2),
    "carl": (0, 2, 0, 0, None),
    "dana": (0, 0, 1, 1, None),
    "leo": (0, 0, 0, 0, None),
}


def work_figures(rows):
    return {r.username: (r.submitted, r.skips, r.reviews_accepted, r.reviews_rejected, r.median_seconds) for r in rows}


def test_on_postgresql_the_median_is_taken_in_the_grouped_query(project, worked):
    # when
    with CaptureQueriesContext(connection) as queries:
        rows = quality_report(project=project)

    # then one query reads the assignments, grouped, with the median in it: no row of work is fetched
    on_assignments = [q["sql"] for q in queries.captured_queries if 'FROM "annotation_assignment"' in q["sql"]]
    assert len(on_assignments) == 1
    assert "PERCENTILE_CONT(0.5) WITHIN GROUP" in on_assignments[0] and "GROUP BY" in on_assignments[0]
    # and the figures, an annotator with only skipped work without a median
    assert work_figures(rows) == WORKED


def test_work_figures_in_python_are_those_of_the_grouped_query(project, worked, django_assert_num_queries):
    # given the rows ``_add_work`` hands on: the project's real work submitted, skipped or reviewed
    done = Assignment.objects.filter(project=project, purpose=Purpose.WORK).filter(
        Q(status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED])
        | Q(review_state__in=[ReviewState.ACCEPTED, ReviewState.REJECTED])
    )
    members = Membership.objects.filter(project=project).select_related("user")
    rows = {m.user_id: AnnotatorFigures(m.user_id, m.user.username, m.role) for m in members}

    # when the Python path (databases without percentile_cont) takes them: one query
    with django_assert_num_queries(1):
        _add_work_in_python(rows, done)

    # then the figures chosen by hand, the same as PostgreSQL's grouped query
    assert work_figures(rows.values()) == WORKED
    assert work_figures(rows.values()) == work_figures(quality_report(project=project))
