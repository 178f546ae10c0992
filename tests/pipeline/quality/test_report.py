"""The lead's quality figures (``pipeline.quality.report``): each figure against numbers chosen
by hand, a fixed number of queries however many annotators, sorting, the timeline, gold stats."""

from __future__ import annotations

from datetime import timedelta

import pytest

from annotation.exceptions import ApplicationError
from annotation.models import AssignmentStatus, Purpose, QualityEvent, Question, QuestionSource
from pipeline.quality.report import control_timeline, gold_stats, quality_events, quality_report
from tests.factories import MembershipFactory, UserFactory

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
