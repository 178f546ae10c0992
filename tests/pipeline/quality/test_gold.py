"""pipeline/quality/gold.py called directly: the refusals of gold_item_create in words, an answer naming its
candidate or its box, the project's gold only, what may be served and to whom, results per item, promotion,
the gold page's promotable submissions, servings counted, and gold made from an imported release."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import Case, IntegerField, Q, When
from django.db.models.signals import post_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    GoldSource,
    Purpose,
    Question,
    QuestionSource,
    QuestionState,
    Review,
    ReviewState,
    ScreenState,
)
from pipeline.quality import gold as gold_module
from pipeline.quality.gold import (
    _as_submit_body,
    _release_answer_body,
    gold_available,
    gold_balance,
    gold_exposed,
    gold_from_release,
    gold_item_create,
    gold_items_with_results,
    gold_open_to,
    gold_pick,
    gold_promotable,
    gold_promote,
    gold_servable,
    gold_servable_stages,
    gold_set_active,
    gold_unit_create,
)
from pipeline.stages.prefilter import Prefilter
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


# --- submit bodies, the release import, promotion and the gold page's lists ------------------------

ACCEPT = {"verdict": "accepted", "reason": "", "comment": ""}
OK_BOX, CANCEL_BOX, HELP_BOX = [0, 0, 100, 50], [0, 60, 100, 110], [0, 120, 100, 170]


def submitted(project, user, stage, screen, *, at=None, **fields) -> Assignment:
    """A submission of ``user`` (real work unless ``purpose`` says otherwise) made at ``at``."""
    at = at or timezone.now()
    fields.setdefault("purpose", Purpose.WORK)
    return Assignment.objects.create(
        project=project,
        stage=stage,
        screen=screen,
        annotator=user,
        status=AssignmentStatus.SUBMITTED,
        lease_expires_at=at,
        submitted_at=at,
        **fields,
    )


def imported(screen, text, answers=(), *, final_text=""):
    """A question of an imported release on ``screen`` with its release answers, each ``(verdict,
    full_answer, [(text, box), ...])`` and kept unless a fourth item says False."""
    question = Question.objects.create(
        screen=screen,
        source=QuestionSource.IMPORTED,
        position=Question.objects.filter(screen=screen).count(),
        text=text,
        final_text=final_text,
        state=QuestionState.KEPT,
    )
    for verdict, full, elements, *rest in answers:
        kept = rest[0] if rest else True
        answer = Answer.objects.create(
            question=question,
            verdict=verdict,
            question_text=text,
            full_answer=full,
            kept=kept,
            drop_reason="" if kept else "withdrawn",
        )
        AnswerElement.objects.bulk_create(
            AnswerElement(answer=answer, position=i, left=b[0], top=b[1], right=b[2], bottom=b[3], text=t)
            for i, (t, b) in enumerate(elements)
        )
    return question


def test_a_submit_body_names_a_candidate_or_a_box_never_both():
    # given a normalised answer: a candidate (with its box), a drawn box (no candidate), a bare candidate
    answer = {
        "question": "Which?",
        "elements": [
            {"vh_index": 2, "bounds": [1, 2, 3, 4], "text": "a"},
            {"vh_index": None, "bounds": [5, 6, 7, 8], "text": "b"},
            {"vh_index": 3},
            "not an element",
        ],
    }
    # when it is made a submit body, then each element names one of the two, the rest as it was
    assert _as_submit_body(answer) == {
        "question": "Which?",
        "elements": [
            {"vh_index": 2, "text": "a"},
            {"bounds": [5, 6, 7, 8], "text": "b"},
            {"vh_index": 3},
            "not an element",
        ],
    }
    # and a body without an element list is left alone
    judged = dict(JUDGED)
    assert _as_submit_body(judged) is judged


def test_a_release_answer_as_a_submit_body(project):
    # given a release answer with no full answer, one with its own, and a not-answerable one
    (screen,) = make_screens(project, 1)
    question = imported(
        screen,
        "Which buttons are there?",
        [
            ("answered", "", [("OK", OK_BOX), ("Cancel", CANCEL_BOX)]),
            ("answered", "Press OK.", [("OK", OK_BOX)]),
            ("not_answerable", "", []),
        ],
    )
    said, written, none = question.answers.order_by("pk")
    # then the boxes and texts are drawn elements, and a missing full answer says the texts
    assert _release_answer_body(said, "Which buttons?") == {
        "question": "Which buttons?",
        "verdict": "answered",
        "elements": [{"bounds": OK_BOX, "text": "OK"}, {"bounds": CANCEL_BOX, "text": "Cancel"}],
        "full_answer": "It says OK, Cancel.",
    }
    assert _release_answer_body(written, "Which?")["full_answer"] == "Press OK."
    assert _release_answer_body(none, "Which?") == {
        "question": "Which?",
        "verdict": "not_answerable",
        "elements": [],
        "full_answer": "",
    }


def test_gold_exposed_counts_one_serving_of_that_item(project):
    done = make_screens(project, 2, state=ScreenState.QUESTIONS_1)
    served, _other = (
        GoldItem.objects.create(project=project, stage="prefilter", screen=s, answer=JUDGED) for s in done
    )
    # when the first is served twice, then it counts two servings and the other none
    gold_exposed(gold=served)
    gold_exposed(gold=served)
    assert list(GoldItem.objects.order_by("pk").values_list("exposures", flat=True)) == [2, 0]


def test_gold_from_release_accounts_for_every_imported_question(project):
    # given a project that compares boxes, and imported questions of every kind, in this order
    project.agreement_use_boxes = True
    project.save()
    lead = member(project, "lead", role="lead")
    screen, bare = make_screens(project, 2)
    gold = imported(screen, "Is it gold already?")
    GoldItem.objects.create(
        project=project, stage="answers", screen=screen, question=gold, answer={"verdict": "invalid"}
    )
    imported(screen, "Has it an answer?")
    imported(screen, "Was its answer withdrawn?", [("answered", "OK.", [("OK", OK_BOX)], False)])
    imported(
        screen, "Which of two?", [("answered", "OK.", [("OK", OK_BOX)]), ("answered", "C.", [("Cancel", CANCEL_BOX)])]
    )
    imported(
        screen,
        "Which of three?",
        [
            ("answered", "OK.", [("OK", OK_BOX)]),
            ("answered", "C.", [("Cancel", CANCEL_BOX)]),
            ("answered", "H.", [("Help", HELP_BOX)]),
        ],
    )
    imported(screen, "What is at the bottom?", [("answered", "A footer.", [("footer", [0, 1900, 100, 2000])])])
    imported(screen, "What is unread?", [("answered", "", [])])
    fixed = imported(
        screen,
        "what does teh sign say",
        [("answered", "", [("OK", OK_BOX), ("Cancel", CANCEL_BOX)])],
        final_text="What does the sign say?",
    )
    meanwhile = imported(screen, "Which was made gold meanwhile?", [("answered", "OK.", [("OK", OK_BOX)])])
    boxes = imported(
        bare,
        "Which is it, by its box?",
        [("answered", "It says OK.", [("OK", OK_BOX)]), ("answered", "OK it is.", [("ok", [0, 0, 100, 52])])],
    )
    # decoys: another project's imported question, and a question written here (not imported)
    (far,) = make_screens(ProjectFactory(slug="elsewhere"), 1)
    imported(far, "Is it elsewhere?", [("answered", "OK.", [("OK", OK_BOX)])])
    written = answering_question(bare, text="Was it written here?")
    Answer.objects.create(question=written, verdict="invalid", question_text=written.text)

    def another_import(sender, instance, created, **kwargs):  # a second import makes one gold meanwhile
        if created and instance.question_id == fixed.pk:
            GoldItem.objects.create(
                project=project, stage="answers", screen=screen, question=meanwhile, answer={"verdict": "invalid"}
            )

    post_save.connect(another_import, sender=GoldItem, dispatch_uid="another-import")
    try:
        # when the release's answers are made gold
        summary = gold_from_release(project=project, user=lead)
    finally:
        post_save.disconnect(sender=GoldItem, dispatch_uid="another-import")
    # then every question is counted once, under what became of it, and the run went to the end
    assert summary == {
        "created": 2,
        "already_gold": 2,
        "skipped": {"no-answer": 2, "no-agreement": 2, "refused-by-stage": 2},
    }
    made = {g.question_id: g for g in GoldItem.objects.filter(source=GoldSource.IMPORTED)}
    assert set(made) == {fixed.pk, boxes.pk}
    # the question as post-processed, the release's boxes and texts; who and where it came from
    assert made[fixed.pk].answer == {
        "verdict": "answered",
        "elements": [
            {"vh_index": None, "bounds": OK_BOX, "text": "OK"},
            {"vh_index": None, "bounds": CANCEL_BOX, "text": "Cancel"},
        ],
        "question": "What does the sign say?",
    }
    assert made[boxes.pk].answer["elements"] == [{"vh_index": None, "bounds": OK_BOX, "text": "OK"}]
    assert made[boxes.pk].answer["question"] == "Which is it, by its box?"
    assert {(g.project_id, g.stage, g.screen_id, g.created_by, g.note, g.active) for g in made.values()} == {
        (project.pk, "answers", screen.pk, lead, "from the imported release", True),
        (project.pk, "answers", bare.pk, lead, "from the imported release", True),
    }
    assert GoldItem.objects.count() == 4


def test_gold_from_release_records_nobody_for_a_caller_who_is_not_a_user(project):
    (screen,) = make_screens(project, 1)
    for text in ("What is first?", "What is second?"):
        imported(screen, text, [("answered", "OK.", [("OK", OK_BOX)])])
    for nobody in (AnonymousUser(), object()):
        assert gold_from_release(project=project, user=nobody, limit=1)["created"] == 1
    assert list(GoldItem.objects.values_list("created_by", flat=True)) == [None, None]


def test_gold_from_release_reads_screens_and_elements_with_the_questions(project):
    # given imported questions on three screens, each with one release answer
    for screen in make_screens(project, 3):
        imported(screen, "What does it say?", [("answered", "OK.", [("OK", OK_BOX), ("Cancel", CANCEL_BOX)])])
    with CaptureQueriesContext(connection) as ctx:
        assert gold_from_release(project=project, user=None)["created"] == 3
    sql = [q["sql"] for q in ctx.captured_queries]
    # then no screen is read on its own, and the elements of all answers in one statement
    assert not [s for s in sql if s.startswith("SELECT") and 'FROM "annotation_screen"' in s]
    assert len([s for s in sql if 'FROM "annotation_answerelement"' in s]) == 1


def test_gold_item_create_defaults_and_a_caller_who_is_not_a_user(project):
    first, second = make_screens(project, 2)
    # an anonymous caller, or no user at all: nobody recorded; no note unless given
    for screen, nobody in ((first, AnonymousUser()), (second, object())):
        made = gold_item_create(
            project=project, stage="prefilter", screen=screen, question=None, answer=JUDGED, user=nobody
        )
        assert (made.created_by, made.note, made.source, made.origin) == (None, "", GoldSource.MANUAL, None)


def test_gold_unit_create_names_what_it_did_not_find_and_keeps_the_lead_and_note(project):
    lead = member(project, "lead", role="lead")
    screen, other = make_screens(project, 2)
    question = answering_question(other, text="What does the first label say?")
    make_screens(ProjectFactory(slug="elsewhere"), 1, rico_id="424242")  # another project's screen
    misses = [
        ({"rico_id": "424242"}, "rico_id", "No screen with this rico_id in the project."),
        (
            {"rico_id": screen.rico_id, "question_id": question.pk},
            "question_id",
            "No question with this id on the screen.",
        ),
        (
            {"rico_id": screen.rico_id, "question_text": question.text},
            "question",
            "No question with this text on the screen.",
        ),
    ]
    for unit, field, message in misses:
        with pytest.raises(NotFoundError) as err:
            gold_unit_create(project=project, stage="answers", answer={"verdict": "invalid"}, user=lead, **unit)
        assert (err.value.field, str(err.value)) == (field, message)
    made = gold_unit_create(
        project=project, stage="prefilter", rico_id=screen.rico_id, answer=JUDGED, user=lead, note="seen by the lead"
    )
    assert (made.screen, made.created_by, made.note, made.source) == (
        screen,
        lead,
        "seen by the lead",
        GoldSource.MANUAL,
    )
    plain = gold_unit_create(
        project=project,
        stage="answers",
        rico_id=other.rico_id,
        question_id=question.pk,
        answer={"question": question.text, "verdict": "invalid"},
        user=lead,
    )
    assert (plain.question, plain.note) == (question, "")


def test_promote_refuses_another_projects_submission_and_a_control_item(project):
    judge = member(project, "judge")
    (screen,) = make_screens(project, 1)
    elsewhere = ProjectFactory(slug="elsewhere")
    (far,) = make_screens(elsewhere, 1)
    theirs = submitted(elsewhere, member(elsewhere, "far-judge"), "prefilter", far, submission=JUDGED)
    gold = GoldItem.objects.create(project=project, stage="prefilter", screen=screen, answer=JUDGED)
    control = submitted(project, judge, "prefilter", screen, purpose=Purpose.CONTROL, gold=gold, submission=JUDGED)
    for pk in (theirs.pk, control.pk):
        with pytest.raises(NotFoundError) as err:
            gold_promote(project=project, assignment_id=pk, user=None)
        assert str(err.value) == "No accepted submission with this id in the project."
    assert list(GoldItem.objects.all()) == [gold]


def test_promote_an_answer_as_the_lead_edited_it(project):
    lead, ann = member(project, "lead", role="lead"), member(project, "ann")
    (screen,) = make_screens(project, 1)
    question = answering_question(screen, text="What does the first label say?")
    body = {
        "question": question.text,
        "verdict": "answered",
        "elements": [{"vh_index": 1, "bounds": [10, 10, 500, 80], "text": "Label 1"}],
        "full_answer": "It says Label 1.",
    }
    done = submitted(project, ann, "answers", screen, question=question, submission=body)
    # when the lead promotes it with the second label instead
    gold = gold_promote(
        project=project, assignment_id=done.pk, user=lead, answer={**body, "elements": [{"vh_index": 2}]}
    )
    # then the gold answer is the lead's, on the question, recorded as theirs
    assert (gold.stage, gold.question, gold.created_by, gold.source, gold.origin) == (
        "answers",
        question,
        lead,
        GoldSource.PROMOTED,
        done,
    )
    assert gold.answer == {
        "verdict": "answered",
        "elements": [{"vh_index": 2, "bounds": [10, 110, 500, 180], "text": f"Label 2 of {screen.rico_id}"}],
        "question": question.text,
    }
    assert gold.origin.project == project


def test_promote_a_review_only_while_it_stands(project):
    lead, rita, judge = (
        member(project, "lead", role="lead"),
        member(project, "rita", role="reviewer"),
        member(project, "j"),
    )
    first, second = make_screens(project, 2, state=ScreenState.QUESTIONS_1)
    judged = {**JUDGED, "note": ""}
    decided = submitted(project, judge, "prefilter", first, submission=judged, review_state=ReviewState.ACCEPTED)
    waiting = submitted(project, judge, "prefilter", second, submission=judged, review_state=ReviewState.SAMPLED)
    # the lead's review stands; rita's review of the second was withdrawn; rita's second review decides nothing
    standing = submitted(project, lead, "review", first, reviewed=decided, submission=ACCEPT)
    Review.objects.create(reviewed=decided, assignment=standing, reviewer=lead, verdict="accepted")
    withdrawn = submitted(project, rita, "review", second, reviewed=waiting, submission=ACCEPT)
    Review.objects.create(
        withdrawn_from=waiting, withdrawn_reason="paused", assignment=withdrawn, reviewer=rita, verdict="accepted"
    )
    again = submitted(project, rita, "review", first, reviewed=decided, submission=ACCEPT)
    Review.objects.create(second_of=decided, assignment=again, reviewer=rita, verdict="accepted")
    for review in (withdrawn, again):
        with pytest.raises(NotFoundError) as err:
            gold_promote(project=project, assignment_id=review.pk, user=lead)
        assert str(err.value) == "No accepted submission with this id in the project (a review withdrawn or second)."
    assert not GoldItem.objects.exists()
    gold = gold_promote(project=project, assignment_id=standing.pk, user=lead)
    assert (gold.stage, gold.origin_id, gold.screen, gold.question, gold.answer) == (
        "review",
        decided.pk,
        first,
        None,
        ACCEPT,
    )


def test_set_active_writes_only_the_flag(project):
    # given a gold item served meanwhile (its count moved since it was read)
    (screen,) = make_screens(project, 1, state=ScreenState.QUESTIONS_1)
    gold = GoldItem.objects.create(project=project, stage="prefilter", screen=screen, answer=JUDGED)
    with CaptureQueriesContext(connection) as ctx:
        gold_set_active(project=project, gold_id=gold.pk, active=False)
    # then the one write sets the flag and nothing else (a serving counted meanwhile stays counted)
    (update,) = [q["sql"] for q in ctx.captured_queries if q["sql"].startswith("UPDATE")]
    assert update.startswith('UPDATE "annotation_golditem" SET "active" = false WHERE')


def test_servable_gold_is_the_stages_own(project):
    (judged,) = make_screens(project, 1, state=ScreenState.QUESTIONS_1)
    (asked,) = make_screens(project, 1)
    question = answering_question(asked, text="What is it?")
    Question.objects.filter(pk=question.pk).update(state=QuestionState.KEPT)
    prefilter = GoldItem.objects.create(project=project, stage="prefilter", screen=judged, answer=JUDGED)
    answers = GoldItem.objects.create(
        project=project, stage="answers", screen=asked, question=question, answer={"verdict": "invalid"}
    )
    assert list(gold_servable(project=project, stage="prefilter")) == [prefilter]
    assert list(gold_servable(project=project, stage="answers")) == [answers]


def test_gold_open_to_leaves_out_a_screen_judged_as_real_work_in_the_stage_only(project):
    ann = member(project, "ann")
    judged, written, fresh = make_screens(project, 3, state=ScreenState.QUESTIONS_1)
    golds = [
        GoldItem.objects.create(project=project, stage="prefilter", screen=s, answer=JUDGED)
        for s in (judged, written, fresh)
    ]
    # ann judged the first screen, and wrote questions on the second (another stage)
    submitted(project, ann, "prefilter", judged, submission=JUDGED)
    submitted(project, ann, "questions-1", written, submission={"questions": ["What is it?"]})
    assert set(gold_open_to(project=project, stage="prefilter", user=ann)) == {golds[1], golds[2]}


def test_gold_items_with_results_counts_the_right_ones_in_item_order(project, django_assert_num_queries):
    users = [member(project, name) for name in ("ann", "bob", "cat")]
    (asked,) = make_screens(project, 1)
    question = answering_question(asked, text="What is it?")
    done = make_screens(project, 2, state=ScreenState.QUESTIONS_1)
    first, second = (GoldItem.objects.create(project=project, stage="prefilter", screen=s, answer=JUDGED) for s in done)
    GoldItem.objects.create(project=project, stage="answers", screen=asked, question=question, answer={"verdict": "x"})
    now = timezone.now()
    for user, correct in zip(users, (True, True, False), strict=True):
        a = submitted(project, user, "prefilter", done[0], purpose=Purpose.CONTROL, gold=first, at=now)
        ControlResult.objects.create(
            assignment=a,
            gold=first,
            project=project,
            user=user,
            stage="prefilter",
            purpose=Purpose.CONTROL,
            correct=correct,
        )
    # the first item written again: its row is now stored after the second's
    GoldItem.objects.filter(pk=first.pk).update(note="checked")
    with django_assert_num_queries(1):
        rows = [
            (g.stage, g.pk, g.served, g.correct, g.screen.rico_id, g.question.text if g.question else None)
            for g in gold_items_with_results(project=project)
        ]
    assert rows[1:] == [
        ("prefilter", first.pk, 3, 2, done[0].rico_id, None),
        ("prefilter", second.pk, 0, 0, done[1].rico_id, None),
    ]
    assert rows[0][0] == "answers" and rows[0][5] == "What is it?"


def test_gold_pick_the_least_served_in_a_random_order_after_the_stages_preference(project, django_assert_num_queries):
    ann = member(project, "ann")
    (asked,) = make_screens(project, 1)
    questions = [answering_question(asked, text=f"What is {n}?") for n in range(4)]
    Question.objects.filter(screen=asked).update(state=QuestionState.KEPT)
    served, once, fresh, also = (
        GoldItem.objects.create(
            project=project, stage="answers", screen=asked, question=q, answer={"verdict": "invalid"}, exposures=n
        )
        for q, n in zip(questions, (0, 1, 0, 0), strict=True)
    )
    # ann was served the first before
    submitted(project, ann, "answers", asked, question=questions[0], purpose=Purpose.CONTROL, gold=served)
    # the least served first, never what ann was served, and the stage's loaded with it (one query)
    with django_assert_num_queries(1):
        gold = gold_pick(project=project, stage="answers", user=ann)
        assert (gold.screen.app.package, gold.question.screen_id) == (asked.app.package, asked.pk)
    picks = {gold_pick(project=project, stage="answers", user=ann) for _ in range(40)}
    assert picks == {fresh, also}
    # what the stage prefers comes first, however often served
    prefer = [Case(When(pk=once.pk, then=0), default=1, output_field=IntegerField())]
    assert gold_pick(project=project, stage="answers", user=ann, prefer=prefer) == once
    # and nothing is left once all open to ann are excluded
    assert gold_pick(project=project, stage="answers", user=ann, exclude=Q(pk__in=[once.pk, fresh.pk, also.pk])) is None


def prefilter_gold(project, answer, *, exposures=0):
    (screen,) = make_screens(project, 1, state=ScreenState.QUESTIONS_1)
    return GoldItem.objects.create(
        project=project, stage="prefilter", screen=screen, answer=answer, exposures=exposures
    )


NO_FLAG = {"non_english_app": False, "vh_out_of_sync": False, "note": ""}
NON_ENGLISH = {"non_english_app": True, "vh_out_of_sync": False, "note": ""}


def test_a_balanced_pick_draws_a_class_with_equal_chances_whatever_each_holds_and_however_served(
    project, monkeypatch, django_assert_num_queries
):
    # given nine gold screens with no flag, never served, and one non-English, served often
    monkeypatch.setattr(gold_module, "gold_random", random.Random(3))
    ann = member(project, "ann")
    plain = [prefilter_gold(project, NO_FLAG) for _ in range(9)]
    flagged = prefilter_gold(project, NON_ENGLISH, exposures=9)
    classes = Prefilter.gold_classes
    # without balance the least served always come first: never the flagged one
    assert {gold_pick(project=project, stage="prefilter", user=ann) for _ in range(20)} <= set(plain)
    # balanced, each class the open items hold comes about half of the time (two queries: the classes, the item)
    with django_assert_num_queries(2):
        gold_pick(project=project, stage="prefilter", user=ann, balance=classes)
    picks = Counter(
        gold_pick(project=project, stage="prefilter", user=ann, balance=classes) == flagged for _ in range(200)
    )
    assert 80 <= picks[True] <= 120
    # a class the project lacks (two of the four here) is never drawn: no draw comes back empty
    assert all(gold_pick(project=project, stage="prefilter", user=ann, balance=classes) for _ in range(50))


def test_a_balanced_pick_counts_an_answer_of_no_class_as_a_class_of_its_own(project, monkeypatch):
    monkeypatch.setattr(gold_module, "gold_random", random.Random(5))
    ann = member(project, "ann")
    plain = prefilter_gold(project, NO_FLAG)
    odd = prefilter_gold(project, {"note": "no flags recorded"}, exposures=5)
    picks = Counter(
        gold_pick(project=project, stage="prefilter", user=ann, balance=({"non_english_app": False},))
        for _ in range(100)
    )
    assert set(picks) == {plain, odd} and 30 <= picks[odd] <= 70
    # and the stage's other rules still apply: what is excluded is never drawn, nor its class
    excluded = Counter(
        gold_pick(project=project, stage="prefilter", user=ann, balance=Prefilter.gold_classes, exclude=Q(pk=plain.pk))
        for _ in range(20)
    )
    assert excluded == {odd: 20}


def test_the_class_of_a_balanced_pick_is_drawn_by_the_operating_systems_randomness():
    # nothing in the code (a seed, a hash of the user or of a counter) predicts it
    assert isinstance(gold_module.gold_random, random.SystemRandom)


def test_promotable_is_the_newest_accepted_work_whose_unit_is_not_gold(project, django_assert_num_queries):
    judge, ann = member(project, "judge"), member(project, "ann")
    gold_screen, free, rejected_screen, written = make_screens(project, 4, state=ScreenState.QUESTIONS_1)
    (asked,) = make_screens(project, 1)
    gold_question, free_question = (answering_question(asked, text=t) for t in ("Is it gold?", "Is it free?"))
    elsewhere = ProjectFactory(slug="elsewhere")
    (far,) = make_screens(elsewhere, 1, state=ScreenState.QUESTIONS_1)
    start = timezone.now()

    def at(seconds):
        return start + timedelta(seconds=seconds)

    # submissions, oldest first: on a gold screen, on a free one, a rejected one, a question set (a
    # stage without gold), an answer to a gold question, one to a free question; another project's
    on_gold = submitted(project, judge, "prefilter", gold_screen, at=at(1), submission=JUDGED)
    on_free = submitted(project, judge, "prefilter", free, at=at(2), submission=JUDGED)
    submitted(project, judge, "prefilter", rejected_screen, at=at(3), review_state=ReviewState.REJECTED)
    submitted(project, judge, "questions-1", written, at=at(4), submission={"questions": ["What is it?"]})
    answered_gold = submitted(project, ann, "answers", asked, question=gold_question, at=at(5))
    answered_free = submitted(project, ann, "answers", asked, question=free_question, at=at(6))
    submitted(elsewhere, member(elsewhere, "far"), "prefilter", far, at=at(7))
    # the gold: the first screen's judgment, the first question's answer, and a gold review of the
    # free screen's judgment (a review's gold, not the screen's)
    GoldItem.objects.create(project=project, stage="prefilter", screen=gold_screen, answer=JUDGED, origin=on_gold)
    GoldItem.objects.create(
        project=project, stage="answers", screen=asked, question=gold_question, answer={"verdict": "invalid"}
    )
    GoldItem.objects.create(project=project, stage="review", screen=free, answer=ACCEPT, origin=on_free)
    assert gold_promotable(project=project) == [answered_free, on_free]
    assert gold_promotable(project=project, stage="prefilter") == [on_free]
    assert gold_promotable(project=project, stage="answers") == [answered_free]
    assert gold_promotable(project=project, limit=1) == [answered_free]
    assert answered_gold not in gold_promotable(project=project, stage="answers")
    # each with its screen, question and annotator, in the one query, without the draft and the VH
    with django_assert_num_queries(1):
        (row,) = gold_promotable(project=project, stage="answers")
        assert (row.screen.rico_id, row.question.text, row.annotator.username) == (asked.rico_id, "Is it free?", "ann")
    assert "draft" in row.get_deferred_fields() and "vh" in row.screen.get_deferred_fields()


def test_promotable_submissions_of_one_moment_newest_id_first(project):
    judge = member(project, "judge")
    now = timezone.now()
    earlier, later = (
        submitted(project, judge, "prefilter", s, at=now, submission=JUDGED)
        for s in make_screens(project, 2, state=ScreenState.QUESTIONS_1)
    )
    assert gold_promotable(project=project, stage="prefilter") == [later, earlier]
    if connection.vendor == "postgresql":
        # whatever the plan: read in storage order and sorted (no index; for this test's transaction
        # only), the tie still goes by id
        with connection.cursor() as cursor:
            for scan in ("indexscan", "bitmapscan", "indexonlyscan"):
                cursor.execute(f"SET LOCAL enable_{scan} = off")
        assert gold_promotable(project=project, stage="prefilter") == [later, earlier]


def test_promote_reads_the_submission_with_its_unit(project, django_assert_num_queries):
    lead, ann = member(project, "lead", role="lead"), member(project, "ann")
    (screen,) = make_screens(project, 1)
    question = answering_question(screen, text="What does the first label say?")
    body = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    done = submitted(project, ann, "answers", screen, question=question, submission=body)
    # the submission with its screen and question, the candidates, the gold written in a savepoint
    with django_assert_num_queries(5):
        gold = gold_promote(project=project, assignment_id=done.pk, user=lead)
    assert (gold.screen, gold.question, gold.origin) == (screen, question, done)
    # a review: with the submission it reviewed, its standing review, the reviewed stage's rules
    decided = submitted(project, ann, "prefilter", screen, submission=JUDGED, review_state=ReviewState.ACCEPTED)
    review = submitted(project, lead, "review", screen, reviewed=decided, submission=ACCEPT)
    Review.objects.create(reviewed=decided, assignment=review, reviewer=lead, verdict="accepted")
    with django_assert_num_queries(6):
        gold = gold_promote(project=project, assignment_id=review.pk, user=lead)
    assert (gold.stage, gold.screen, gold.origin) == ("review", screen, decided)


def test_a_gold_review_hides_only_the_review_of_its_own_submission(project):
    # given four answers on one screen, each with a review: two standing (a lead's), one withdrawn (its
    # reviewer was paused) and one second review (double review)
    from annotation.models import Answer, Review
    from pipeline.quality.gold import gold_promotable
    from tests.pipeline.stages.helpers import answering_question, member
    from tests.pipeline.stages.helpers import screens as make

    lead, rita = member(project, "lead", role="lead"), member(project, "rita", role="reviewer")
    (screen,) = make(project, 1)
    now = timezone.now()

    def reviewed_answer(i, **review):
        writer = member(project, f"w{i}")
        question = answering_question(screen, text=f"What does label {i} say?")
        answered = Assignment.objects.create(
            project=project,
            stage="answers",
            screen=screen,
            question=question,
            annotator=writer,
            status=AssignmentStatus.SUBMITTED,
            lease_expires_at=now,
            submitted_at=now,
            review_state="accepted",
        )
        Answer.objects.create(question=question, assignment=answered, annotator=writer, verdict="answered")
        reviewer = review.pop("reviewer", lead)
        given = Assignment.objects.create(
            project=project,
            stage="review",
            screen=screen,
            reviewed=answered,
            annotator=reviewer,
            status=AssignmentStatus.SUBMITTED,
            lease_expires_at=now,
            submitted_at=now,
        )
        fields = {key: answered for key, value in review.items() if value is True}
        Review.objects.create(
            assignment=given,
            reviewer=reviewer,
            verdict="accepted",
            **fields,
            **{k: v for k, v in review.items() if v is not True},
        )
        return given

    first = reviewed_answer(0, reviewed=True)
    second = reviewed_answer(1, reviewed=True)
    reviewed_answer(2, reviewer=rita, withdrawn_from=True, withdrawn_reason="withdrawn")
    reviewed_answer(3, reviewer=rita, second_of=True)
    # then the two standing reviews are promotable, the withdrawn and the second one are not
    assert {a.pk for a in gold_promotable(project=project, stage="review")} == {first.pk, second.pk}
    # when the first one's submission becomes a gold review, then the other review on the same screen
    # stays promotable (a gold review's unit is its submission, not the screen)
    GoldItem.objects.create(
        project=project,
        stage="review",
        screen=screen,
        origin=first.reviewed,
        answer={"verdict": "accepted", "reason": "", "comment": ""},
    )
    assert [a.pk for a in gold_promotable(project=project, stage="review")] == [second.pk]


@pytest.mark.parametrize(
    ("items", "threshold", "extra", "flagged", "passes", "needed"),
    [
        # a set of 10 at 90%, no second sample: a constant answer passes while the other kinds hold at most 1
        (10, 0.9, 0, 0, ["no flag"], 2),
        (10, 0.9, 0, 1, ["no flag"], 2),
        (10, 0.9, 0, 2, [], 2),
        # with a second sample of 5 (none wrong allowed): 2 others could both land in the first ten, and
        # the five more would then be all "no flag"; 3 can fail it
        (10, 0.9, 5, 2, ["no flag"], 3),
        (10, 0.9, 5, 3, [], 3),
        # at 70%: 3 wrong allowed in ten, 1 in five more
        (10, 0.7, 0, 3, ["no flag"], 4),
        (10, 0.7, 0, 4, [], 4),
        (10, 0.7, 5, 5, ["no flag"], 6),
        (10, 0.7, 5, 6, [], 6),
    ],
)
def test_gold_balance_names_the_constant_answers_that_pass_every_attempt(
    project, items, threshold, extra, flagged, passes, needed
):
    project.qualification_items, project.qualification_threshold = items, threshold
    project.qualification_extra_items = extra
    project.save()
    for _ in range(12):
        prefilter_gold(project, NO_FLAG)
    for _ in range(flagged):
        prefilter_gold(project, NON_ENGLISH)
    # decoys: not servable (inactive, retired), another project's, another stage's
    GoldItem.objects.filter(pk=prefilter_gold(project, NON_ENGLISH).pk).update(active=False)
    other = ProjectFactory(slug="other")
    prefilter_gold(other, NON_ENGLISH)
    (row,) = [b for b in gold_balance(project=project) if b.stage == "prefilter"]
    assert (row.constant_passes, row.needed) == (passes, needed)
    assert dict(row.classes) == {
        "no flag": 12,
        "non english app": flagged,
        "vh out of sync": 0,
        "non english app, vh out of sync": 0,
    }


def test_gold_balance_covers_each_balanced_stage_and_counts_an_answer_of_no_kind(project):
    prefilter_gold(project, {"note": "odd"})
    rows = {b.stage: b for b in gold_balance(project=project)}
    assert set(rows) == {"prefilter", "answers", "review"}
    assert ("other", 1) in rows["prefilter"].classes
    assert [label for label, _ in rows["review"].classes] == ["accepted", "rejected"]
    assert [label for label, _ in rows["answers"].classes] == ["answered", "invalid", "not answerable"]
    # with no gold at all no constant answer passes: there is no set to pass
    assert rows["review"].constant_passes == [] and rows["prefilter"].constant_passes == []


def test_an_answer_made_gold_leaves_its_review_promotable_as_a_gold_review(project):
    # given an answer reviewed by the lead, and the answer itself promoted to answers gold (its origin)
    lead, ann = member(project, "lead", role="lead"), member(project, "ann")
    (screen,) = make_screens(project, 1)
    question = answering_question(screen, text="What does the first label say?")
    body = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    answered = submitted(
        project, ann, "answers", screen, question=question, submission=body, review_state=ReviewState.ACCEPTED
    )
    given = submitted(project, lead, "review", screen, reviewed=answered, submission=ACCEPT)
    Review.objects.create(reviewed=answered, assignment=given, reviewer=lead, verdict="accepted")
    assert gold_promote(project=project, assignment_id=answered.pk, user=lead).origin == answered
    # then the answer is not offered any more, its review still is: the answers gold is no gold review
    assert gold_promotable(project=project) == [given]
    # and once the review is promoted too, neither is
    assert gold_promote(project=project, assignment_id=given.pk, user=lead).stage == "review"
    assert gold_promotable(project=project) == []
