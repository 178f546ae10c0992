"""Short answers for kept questions (pipeline/release/postprocess.py) and the lead's edit."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import Question, ReleaseJob
from pipeline.jobs.runner import job_run
from pipeline.release.short_answers.service import (
    question_short_answers_update,
    short_answers_sample,
)
from tests.factories import ProjectFactory, answered_question
from tests.pipeline.assist.servers import baseline, scripted

pytestmark = pytest.mark.django_db


def postprocess(project) -> None:
    job_run(kind="postprocess", job_id=ReleaseJob.objects.create(project=project, kind="postprocess").pk)


def short_answers(project, **kwargs) -> dict:
    job = ReleaseJob.objects.create(project=project, kind="short-answers")
    return job_run(kind="short-answers", job_id=job.pk, **kwargs).result


def reviews_question(project):
    """A train question answered once with "3 reviews" (the rules give "3", "three", ...)."""
    return answered_question(
        project=project,
        split="train",
        text="How many reviews are there?",
        answers=[{"elements": ["3 reviews"], "full_answer": "There are 3 reviews."}],
    )


def test_kept_answered_question_gets_rule_short_answers(project):
    q = reviews_question(project)
    postprocess(project)
    result = short_answers(project)
    q.refresh_from_db()
    assert q.short_answers_source == "rules"
    assert q.short_answers[0] == "3"  # question words trimmed by the rules
    assert "three" in q.short_answers
    assert result == {"generated": 1, "sources": {"rules": 1}}


def test_the_rules_never_load_the_screens_view_hierarchies(project):
    # the screen's vh is the largest column: read for every kept question it was 60% of the job at
    # ScreenQA size, and only the backend's screen payload needs it
    reviews_question(project)
    postprocess(project)
    with CaptureQueriesContext(connection) as queries:
        assert short_answers(project)["generated"] == 1
    assert not [q["sql"] for q in queries.captured_queries if '"annotation_screen"."vh"' in q["sql"]]


def test_not_answerable_question_gets_no_answer(project):
    q = answered_question(project=project, split="validation", answers=["not_answerable"] * 3)
    postprocess(project)
    short_answers(project)
    q.refresh_from_db()
    assert (q.short_answers, q.short_answers_source) == (["<no answer>"], "rules")


def test_short_answers_merge_the_kept_answers_only(project):
    q = answered_question(
        project=project,
        split="validation",
        text="Which plan is selected?",
        answers=[["Gold plan"], ["Silver"], ["gold plan"]],
    )
    postprocess(project)
    short_answers(project)
    q.refresh_from_db()
    assert "Gold plan" in q.short_answers and "gold plan" in q.short_answers
    assert not any("Silver" in a for a in q.short_answers)


def test_dropped_questions_get_none(project):
    q = answered_question(project=project, split="train", answers=["invalid"])
    postprocess(project)
    short_answers(project)
    q.refresh_from_db()
    assert (q.short_answers, q.short_answers_source) == ([], "")


def test_rerun_only_fills_missing_and_never_overwrites_a_lead(project, lead):
    edited = answered_question(project=project, split="train", answers=[["Male"]])
    other = answered_question(project=project, split="train", answers=[["Female"]])
    postprocess(project)
    short_answers(project)
    question_short_answers_update(project=project, question_id=edited.pk, answers=["man"], user=lead)
    Question.objects.filter(pk=other.pk).update(short_answers=[], short_answers_source="")
    result = short_answers(project)
    edited.refresh_from_db()
    assert result["generated"] == 1
    assert (edited.short_answers, edited.short_answers_source) == (["man"], "lead")


def test_failure_is_recorded(project):
    answered_question(project=project, split="train", answers=[["Male"]])
    postprocess(project)
    job = ReleaseJob.objects.create(project=project, kind="short-answers")
    with pytest.raises(ValueError):
        job_run(kind="short-answers", job_id=job.pk, backend="no-such-backend")
    job.refresh_from_db()
    assert job.status == "failed" and "no-such-backend" in job.error


def test_lead_edit_records_reviewer_and_source(project, lead):
    q = answered_question(project=project, split="train", answers=[["Male"]])
    postprocess(project)
    saved = question_short_answers_update(
        project=project, question_id=q.pk, answers=[" male ", "", "man", "male"], user=lead
    )
    q.refresh_from_db()
    assert q.short_answers == ["male", "man"] == saved.short_answers
    assert (q.short_answers_source, q.short_answers_reviewed_by) == ("lead", lead)


def test_lead_edit_refuses_bad_input_and_keeps_the_old_answers(project, lead):
    q = answered_question(project=project, split="train", answers=[["Male"]])
    postprocess(project)
    short_answers(project)
    before = Question.objects.get(pk=q.pk).short_answers
    with pytest.raises(ApplicationError):
        question_short_answers_update(project=project, question_id=q.pk, answers=["  ", ""], user=lead)
    with pytest.raises(ApplicationError):
        question_short_answers_update(project=project, question_id=q.pk, answers=["x" * 501], user=lead)
    assert Question.objects.get(pk=q.pk).short_answers == before


def test_lead_edit_needs_a_kept_question_of_the_project(project, lead):
    dropped = answered_question(project=project, split="train", answers=["invalid"])
    elsewhere = answered_question(project=ProjectFactory(), split="train", answers=[["Male"]])
    postprocess(project)
    with pytest.raises(ConflictError):
        question_short_answers_update(project=project, question_id=dropped.pk, answers=["a"], user=lead)
    with pytest.raises(NotFoundError):
        question_short_answers_update(project=project, question_id=elsewhere.pk, answers=["a"], user=lead)


def test_sample_is_seeded_and_sized(project, django_assert_max_num_queries):
    for _ in range(12):
        answered_question(project=project, split="train", answers=[["Male"]])
    answered_question(project=project, split="train", answers=["invalid"])
    postprocess(project)
    with django_assert_max_num_queries(3):
        first = short_answers_sample(project=project, size=5, seed="a")
        assert all(len(q.answers.all()[0].elements.all()) == 1 for q in first)
    again = short_answers_sample(project=project, size=5, seed="a")
    other = short_answers_sample(project=project, size=5, seed="b")
    everything = short_answers_sample(project=project, size=50, seed="a")
    assert [q.pk for q in first] == [q.pk for q in again]
    assert [q.pk for q in first] != [q.pk for q in other]
    assert len(everything) == 12 and all(q.state == "kept" for q in everything)
    with pytest.raises(ApplicationError):
        short_answers_sample(project=project, size=0, seed="a")


def test_a_lead_save_during_generation_wins(project, lead, monkeypatch):
    # given a kept question whose short answers are being generated
    q = answered_question(project=project, split="train", answers=[["Male"]])
    postprocess(project)
    import pipeline.release.short_answers.service as service

    generate = service._short_answers_for

    def lead_saves_meanwhile(question, backend, assist):
        # the lead saves between the job's read of the batch and its write
        question_short_answers_update(project=project, question_id=q.pk, answers=["man"], user=lead)
        return generate(question, backend, assist)

    monkeypatch.setattr(service, "_short_answers_for", lead_saves_meanwhile)
    # when the job writes its batch
    result = short_answers(project)
    # then the conditional write skipped the question: the lead's answers stay
    q.refresh_from_db()
    assert (q.short_answers, q.short_answers_source) == (["man"], "lead")
    assert result["generated"] == 0


# --- from the project's suggestion backend (Project.assist_short_answers) -------------------------


def with_assist(project, url, *, on=True):
    project.assist_url, project.assist_short_answers = url, on
    project.save()


def assist_reply(*texts_scores):
    return lambda body: (
        200,
        {"model_version": "m1", "short_answers": [{"text": t, "score": s} for t, s in texts_scores]},
    )


def test_short_answers_come_from_the_backend_when_the_project_asks_it(project):
    q = answered_question(
        project=project,
        split="train",
        text="Which colour is chosen?",
        answers=[{"elements": ["Blue", "dark"], "full_answer": "Dark blue is chosen."}],
    )
    postprocess(project)
    with scripted(assist_reply(("blue", 0.4), ("dark blue", 0.9), ("blue", 0.1), ("x" * 501, 0.2))) as (url, seen):
        with_assist(project, url)
        result = short_answers(project)
    q.refresh_from_db()
    # best first, a repeat once, a text longer than a short answer may be left out
    assert (q.short_answers, q.short_answers_source) == (["dark blue", "blue"], "assist")
    assert result == {"generated": 1, "sources": {"assist": 1}, "assist_failures": 0}
    # the backend was asked in the contract's shape: the question, the answer's elements and full answer
    (call,) = seen
    body = call["body"]
    assert (call["path"], body["stage"], body["project"]) == ("/suggest", "short-answers", project.slug)
    assert body["question"] == {"id": q.pk, "text": "Which colour is chosen?"}
    assert body["answer"] == {"elements": ["Blue", "dark"], "full_answer": "Dark blue is chosen."}


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (lambda body: (500, {"error": "boom"}), "HTTP 500 from the backend"),
        (lambda body: (200, {"model_version": "m1", "short_answers": []}), "the backend gave no short answer"),
        (lambda body: (200, {"model_version": "m1", "short_answers": [{"text": " "}]}), "breaks the contract"),
        (lambda body: (200, b"not json"), "not JSON"),
    ],
)
def test_a_failing_backend_leaves_the_rules_answers_and_says_why(project, reply, why):
    q = reviews_question(project)
    postprocess(project)
    with scripted(reply) as (url, seen):
        with_assist(project, url)
        result = short_answers(project)
    q.refresh_from_db()
    assert (q.short_answers_source, q.short_answers[0]) == ("rules", "3")
    assert len(seen) == 1 and result["assist_failures"] == 1 and why in result["assist_last_error"]


def test_the_backend_is_asked_only_when_the_project_says_so_and_never_for_a_not_answerable_question(project):
    answered = answered_question(
        project=project, split="train", answers=[{"elements": ["Blue"], "full_answer": "Blue."}]
    )
    none = answered_question(project=project, split="validation", answers=["not_answerable"] * 3)
    postprocess(project)
    with scripted(assist_reply(("blue", 1.0))) as (url, seen):
        with_assist(project, url, on=False)
        result = short_answers(project)
    answered.refresh_from_db()
    assert (answered.short_answers_source, seen, "assist_failures" in result) == ("rules", [], False)
    Question.objects.update(short_answers=[], short_answers_source="")
    with scripted(assist_reply(("blue", 1.0))) as (url, seen):
        with_assist(project, url)
        short_answers(project)
    answered.refresh_from_db()
    none.refresh_from_db()
    assert len(seen) == 1 and seen[0]["body"]["question"]["id"] == answered.pk
    assert (answered.short_answers_source, none.short_answers, none.short_answers_source) == (
        "assist",
        ["<no answer>"],
        "rules",
    )


def test_the_baseline_backend_gives_the_rules_answers_as_its_own(project):
    q = reviews_question(project)
    postprocess(project)
    with baseline() as url:
        with_assist(project, url)
        short_answers(project)
    q.refresh_from_db()
    assert q.short_answers_source == "assist" and q.short_answers[0] == "3" and "three" in q.short_answers
