"""pipeline/quality/gold.py called directly: the refusals of gold_item_create in words, an answer naming its
candidate or its box, the project's gold only, what may be served and to whom, results per item, promotion."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    GoldSource,
    Purpose,
    Question,
    QuestionState,
    ScreenState,
)
from pipeline.quality.gold import (
    gold_available,
    gold_item_create,
    gold_items_with_results,
    gold_open_to,
    gold_promote,
    gold_servable,
    gold_servable_stages,
    gold_set_active,
)
from tests.factories import ProjectFactory
from tests.pipeline.stages.helpers import answering_question, member
from tests.pipeline.stages.helpers import screens as make_screens

pytestmark = pytest.mark.django_db


JUDGED = {"non_english_app": False, "vh_out_of_sync": False}


def test_gold_item_create_refuses_with_its_words(project):
    lead = member(project, "lead", role="lead")
    screen, other = make_screens(project, 2)
    question = answering_question(other, text="What does the first label say?")
    (far,) = make_screens(ProjectFactory(slug="elsewhere"), 1)
    refusals = [
        (
            {"stage": "questions-1", "screen": screen, "question": None, "answer": {}},
            ApplicationError,
            "stage",
            "The stage 'questions-1' has no gold items (it is qualified by review).",
        ),
        (
            {"stage": "prefilter", "screen": far, "question": None, "answer": JUDGED},
            NotFoundError,
            None,
            "No such screen or question in this project.",
        ),
        (
            {"stage": "answers", "screen": screen, "question": question, "answer": {}},
            NotFoundError,
            None,
            "No such screen or question in this project.",
        ),
        (
            {"stage": "answers", "screen": other, "question": None, "answer": {}},
            ApplicationError,
            "question",
            "A gold item of answers names a question.",
        ),
        (
            {"stage": "prefilter", "screen": other, "question": question, "answer": JUDGED},
            ApplicationError,
            "question",
            "A gold item of prefilter names a screen.",
        ),
        (
            {"stage": "review", "screen": other, "question": None, "answer": {}},
            ApplicationError,
            "origin",
            "A gold review names the reviewed submission.",
        ),
    ]
    for kwargs, error, field, message in refusals:
        with pytest.raises(error) as err:
            gold_item_create(project=project, user=lead, **kwargs)
        assert (type(err.value), err.value.field, str(err.value)) == (error, field, message)
    # a lead's gold item records who made it, its source and note; an anonymous one nobody
    made = gold_item_create(
        project=project, stage="prefilter", screen=screen, question=None, answer=JUDGED, user=lead, note="n"
    )
    assert (made.created_by, made.source, made.note, made.answer) == (lead, GoldSource.MANUAL, "n", JUDGED)
    with pytest.raises(ConflictError, match=r"^This item is already gold\.$"):
        gold_item_create(project=project, stage="prefilter", screen=screen, question=None, answer=JUDGED, user=lead)
    anonymous = gold_item_create(
        project=project, stage="prefilter", screen=other, question=None, answer=JUDGED, user=None
    )
    assert anonymous.created_by is None


def test_a_normalised_answer_names_its_candidate_or_its_box(project):
    (screen,) = make_screens(project, 1)
    q1, q2 = (answering_question(screen, text=t) for t in ("What is first?", "What is drawn?"))
    body = {"question": "What is first?", "verdict": "answered", "full_answer": "So."}
    # an element as gold keeps it (candidate and box): named by its candidate when it has one
    by_candidate = {"vh_index": 1, "bounds": [0, 0, 5, 5], "text": "ignored"}
    gold = gold_item_create(
        project=project,
        stage="answers",
        screen=screen,
        question=q1,
        answer={**body, "elements": [by_candidate]},
        user=None,
    )
    assert [(e["vh_index"], e["bounds"]) for e in gold.answer["elements"]] == [(1, [10, 10, 500, 80])]
    # and by its box when it has none
    drawn = {"vh_index": None, "bounds": [10, 20, 110, 60], "text": "Drawn"}
    gold = gold_item_create(
        project=project,
        stage="answers",
        screen=screen,
        question=q2,
        answer={**body, "question": q2.text, "elements": [drawn]},
        user=None,
    )
    assert [(e["vh_index"], e["bounds"], e["text"]) for e in gold.answer["elements"]] == [
        (None, [10, 20, 110, 60], "Drawn")
    ]


def test_set_active_finds_only_the_projects_gold(project):
    (screen,) = make_screens(project, 1, state=ScreenState.QUESTIONS_1)
    gold = GoldItem.objects.create(project=project, stage="prefilter", screen=screen, answer=JUDGED)
    with pytest.raises(NotFoundError, match=r"^Gold item not found\.$"):
        gold_set_active(project=ProjectFactory(slug="elsewhere"), gold_id=gold.pk, active=False)
    assert gold_set_active(project=project, gold_id=gold.pk, active=False).active is False
    gold.refresh_from_db()
    assert gold.active is False


def test_servable_gold_is_active_not_retired_and_out_of_the_queue(project):
    project.gold_exposures_max = 2
    project.save()
    done = make_screens(project, 4, state=ScreenState.QUESTIONS_1)
    (waiting,) = make_screens(project, 1)  # still in pre-filtering
    (far,) = make_screens(ProjectFactory(slug="elsewhere"), 1, state=ScreenState.QUESTIONS_1)
    fresh, once, retired, _inactive = (
        GoldItem.objects.create(project=project, stage="prefilter", screen=s, answer=JUDGED, exposures=n, active=a)
        for s, n, a in zip(done, (0, 1, 2, 0), (True, True, True, False), strict=False)
    )
    GoldItem.objects.create(project=project, stage="prefilter", screen=waiting, answer=JUDGED)
    GoldItem.objects.create(project=far.project, stage="prefilter", screen=far, answer=JUDGED)
    assert set(gold_servable(project=project, stage="prefilter")) == {fresh, once}
    assert gold_available(project=project, stage="prefilter") == 2
    assert gold_servable_stages(project=project) == {"prefilter"}
    # with no cap nothing retires
    project.gold_exposures_max = 0
    assert set(gold_servable(project=project, stage="prefilter")) == {fresh, once, retired}
    # and the stages with a servable item: none once all are served their most
    project.gold_exposures_max = 1
    GoldItem.objects.filter(pk=fresh.pk).update(exposures=1)
    assert gold_servable_stages(project=project) == set()


def test_gold_open_to_never_repeats_a_unit(project):
    ann, writer = member(project, "ann"), member(project, "w")
    screens = make_screens(project, 4, state=ScreenState.ANSWERING, split="train")
    questions = [
        answering_question(s, text="What is it?", author=writer if k == 3 else None) for k, s in enumerate(screens)
    ]
    Question.objects.filter(pk__in=[q.pk for q in questions]).update(state=QuestionState.KEPT)
    golds = [
        GoldItem.objects.create(
            project=project, stage="answers", screen=q.screen, question=q, answer={"verdict": "invalid"}
        )
        for q in questions
    ]
    now = timezone.now()
    # ann was served the first before, answered the second as real work; the fourth is writer's
    Assignment.objects.create(
        project=project,
        stage="answers",
        screen=screens[0],
        question=questions[0],
        annotator=ann,
        status=AssignmentStatus.EXPIRED,
        purpose=Purpose.CONTROL,
        gold=golds[0],
        lease_expires_at=now,
    )
    Assignment.objects.create(
        project=project,
        stage="answers",
        screen=screens[1],
        question=questions[1],
        annotator=ann,
        status=AssignmentStatus.SUBMITTED,
        purpose=Purpose.WORK,
        lease_expires_at=now,
        submitted_at=now,
    )
    assert set(gold_open_to(project=project, stage="answers", user=ann)) == {golds[2], golds[3]}
    assert set(gold_open_to(project=project, stage="answers", user=writer)) == {golds[0], golds[1], golds[2]}


def test_gold_items_with_results_counts_each_items_results(project):
    ann, bob = member(project, "ann"), member(project, "bob")
    done = make_screens(project, 2, state=ScreenState.QUESTIONS_1)
    first, second = (GoldItem.objects.create(project=project, stage="prefilter", screen=s, answer=JUDGED) for s in done)
    now = timezone.now()
    for user, correct in ((ann, True), (bob, False)):
        a = Assignment.objects.create(
            project=project,
            stage="prefilter",
            screen=done[0],
            annotator=user,
            status=AssignmentStatus.SUBMITTED,
            purpose=Purpose.CONTROL,
            gold=first,
            lease_expires_at=now,
            submitted_at=now,
        )
        ControlResult.objects.create(
            assignment=a,
            gold=first,
            project=project,
            user=user,
            stage="prefilter",
            purpose=Purpose.CONTROL,
            correct=correct,
        )
    rows = gold_items_with_results(project=project, stage="prefilter")
    assert [(g.pk, g.served, g.correct) for g in rows] == [(first.pk, 2, 1), (second.pk, 0, 0)]
    assert list(gold_items_with_results(project=project, stage="answers")) == []
    assert len(gold_items_with_results(project=project)) == 2


def test_promote_finds_only_an_accepted_submission_of_the_project(project):
    judge = member(project, "judge")
    (screen,) = make_screens(project, 1)
    now = timezone.now()
    leased = Assignment.objects.create(
        project=project,
        stage="prefilter",
        screen=screen,
        annotator=judge,
        status=AssignmentStatus.LEASED,
        purpose=Purpose.WORK,
        lease_expires_at=now + timedelta(minutes=5),
        submission=JUDGED,
    )
    for pk, where in ((leased.pk, project), (999999, project)):
        with pytest.raises(NotFoundError, match=r"^No accepted submission with this id in the project\.$"):
            gold_promote(project=where, assignment_id=pk, user=None)
