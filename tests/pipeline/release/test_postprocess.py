"""Post-processing decisions (pipeline/release/postprocess.py): each rule, shares, idempotency, batches."""

from __future__ import annotations

import pytest

from annotation.models import Answer, Question, ReleaseJob
from pipeline.decisions.decide import agreement_settings_for
from pipeline.decisions.selectors import postprocess_summary
from pipeline.jobs.runner import job_run
from pipeline.release.postprocess import postprocess_batch_apply
from tests.factories import ProjectFactory, answered_question

pytestmark = pytest.mark.django_db

NA = "not_answerable"


def run(project) -> dict:
    job = ReleaseJob.objects.create(project=project, kind="postprocess")
    return job_run(kind="postprocess", job_id=job.pk).result


def decided(question: Question) -> Question:
    question.refresh_from_db()
    return question


def answers_of(question: Question) -> list[tuple[bool, str]]:
    return [(a.kept, a.drop_reason) for a in Answer.objects.filter(question=question).order_by("created_at", "pk")]


# --- train: one answer ----------------------------------------------------------------------


def test_train_takes_the_answerers_fixed_text(project):
    q = answered_question(
        project=project,
        split="train",
        text="what is teh price ?",
        answers=[{"elements": ["$3"], "question_text": "What is the price?"}],
    )
    run(project)
    q = decided(q)
    assert (q.state, q.final_text, q.drop_reason, q.agreement) == ("kept", "What is the price?", "", "")


def test_train_without_an_edit_keeps_the_original_text(project):
    q = answered_question(
        project=project, split="train", text="What is  the price?", answers=[{"elements": ["$3"], "question_text": ""}]
    )
    run(project)
    assert decided(q).final_text == "What is the price?"


def test_train_invalid_is_dropped(project):
    q = answered_question(project=project, split="train", answers=["invalid"])
    run(project)
    q = decided(q)
    assert (q.state, q.drop_reason) == ("dropped", "invalid")


def test_train_not_answerable_is_kept(project):
    q = answered_question(project=project, split="train", answers=[NA])
    run(project)
    assert decided(q).state == "kept"


def test_train_answer_without_elements_is_no_usable_answer(project):
    q = answered_question(project=project, split="train", answers=[[]])
    run(project)
    q = decided(q)
    assert (q.state, q.drop_reason) == ("dropped", "no-usable-answer")
    assert answers_of(q) == [(False, "no-elements")]


def test_question_without_answers_is_dropped(project):
    q = answered_question(project=project, split="train", answers=[])
    run(project)
    q = decided(q)
    assert (q.state, q.drop_reason) == ("dropped", "no-usable-answer")


# --- validation / test: three answers -------------------------------------------------------


@pytest.mark.parametrize("split", ["validation", "test"])
def test_all_agree_is_kept_with_every_answer(project, split):
    q = answered_question(project=project, split=split, answers=[["Male"], ["male"], ["MALE."]])
    run(project)
    q = decided(q)
    assert (q.state, q.agreement) == ("kept", "all")
    assert answers_of(q) == [(True, "")] * 3


@pytest.mark.parametrize("split", ["validation", "test"])
def test_two_agree_drops_the_disagreeing_answer(project, split):
    q = answered_question(project=project, split=split, answers=[["Male"], ["Female"], ["male"]])
    run(project)
    q = decided(q)
    assert (q.state, q.agreement) == ("kept", "two")
    assert answers_of(q) == [(True, ""), (False, "disagrees"), (True, "")]


def test_no_agreement_is_dropped(project):
    q = answered_question(project=project, split="validation", answers=[["A"], ["B"], ["C"]])
    run(project)
    q = decided(q)
    assert (q.state, q.drop_reason, q.agreement) == ("dropped", "no-agreement", "none")


def test_strict_two_not_answerable_are_kept_as_not_answerable(project):
    project.agreement_rule = "strict"
    project.save()
    q = answered_question(project=project, split="test", answers=[NA, ["Male"], NA])
    run(project)
    q = decided(q)
    assert (q.state, q.agreement) == ("kept", "two")
    assert answers_of(q) == [(True, ""), (False, "disagrees"), (True, "")]


def test_release_not_answerable_beside_an_answer_keeps_both(project):
    # as the release keeps "<no answer>" beside text answers (460 real validation/test questions)
    q = answered_question(project=project, split="test", answers=[NA, ["Male"], NA])
    run(project)
    q = decided(q)
    assert (q.state, q.agreement) == ("kept", "all")
    assert answers_of(q) == [(True, "")] * 3


def test_release_keeps_the_real_record_37374_and_drops_the_odd_one(project):
    # given the two raters of validation record 37374 (FORMATS.md) and a third who chose another car
    c_max, year = ("C Max", (33, 319, 939, 376)), ("2014", (33, 483, 939, 540))
    q = answered_question(
        project=project, split="validation", answers=[[c_max, year], [c_max], [("Focus", (33, 600, 939, 657))]]
    )
    run(project)
    q = decided(q)
    # then the two release raters agree and are kept together, as in the release
    assert (q.state, q.agreement) == ("kept", "two")
    assert answers_of(q) == [(True, ""), (True, ""), (False, "disagrees")]
    # and under the strict rule no two agree: the question would not be in the release
    project.agreement_rule = "strict"
    project.save()
    run(project)
    assert (decided(q).state, decided(q).drop_reason) == ("dropped", "no-agreement")


def test_one_invalid_of_three_is_the_disagreeing_answer(project):
    q = answered_question(project=project, split="validation", answers=[["Male"], "invalid", ["male"]])
    run(project)
    q = decided(q)
    assert (q.state, q.agreement) == ("kept", "two")
    assert answers_of(q)[1] == (False, "disagrees")


def test_two_invalid_of_three_drop_the_question_as_invalid(project):
    q = answered_question(project=project, split="validation", answers=["invalid", ["Male"], "invalid"])
    run(project)
    q = decided(q)
    assert (q.state, q.drop_reason, q.agreement) == ("dropped", "invalid", "two")


def test_empty_answer_outside_the_group_is_marked_no_elements(project):
    q = answered_question(project=project, split="validation", answers=[["Male"], [], ["male"]])
    run(project)
    assert answers_of(decided(q))[1] == (False, "no-elements")


def test_tied_groups_are_dropped_as_a_tie(project):
    # given boxes where 1~2 and 2~3 agree but 1 and 3 do not, with box agreement on
    project.agreement_use_boxes, project.agreement_iou_threshold = True, 0.6
    project.save()
    q = answered_question(
        project=project,
        split="validation",
        answers=[
            [("Male", (0, 0, 100, 100))],
            [("Male", (20, 0, 120, 100))],
            [("Male", (40, 0, 140, 100))],
        ],
    )
    run(project)
    q = decided(q)
    assert (q.state, q.drop_reason, q.agreement) == ("dropped", "agreement-tie", "none")


def test_project_box_setting_is_applied(project):
    far = [[("Male", (0, 0, 100, 50))], [("Male", (400, 400, 500, 450))], [("Male", (800, 800, 900, 850))]]
    q = answered_question(project=project, split="validation", answers=far)
    run(project)
    assert decided(q).agreement == "all"
    project.agreement_use_boxes = True
    project.save()
    run(project)
    assert (decided(q).state, decided(q).agreement) == ("dropped", "none")


def test_majority_question_edit_wins(project):
    fixed = "What is the gender?"
    q = answered_question(
        project=project,
        split="validation",
        text="what is gender",
        answers=[
            {"elements": ["Male"], "question_text": fixed},
            {"elements": ["Male"], "question_text": "What gender is it?"},
            {"elements": ["Male"], "question_text": fixed},
        ],
    )
    run(project)
    assert decided(q).final_text == fixed


def test_edit_tie_keeps_the_original_when_it_is_tied(project):
    q = answered_question(
        project=project,
        split="validation",
        text="What is the gender?",
        answers=[
            {"elements": ["Male"], "question_text": "What's the gender?"},
            {"elements": ["Female"]},
            {"elements": ["Male"], "question_text": "What is the gender?"},
        ],
    )
    run(project)
    # the group is answers 1 and 3: one edit, one original -> tie -> original
    assert decided(q).final_text == "What is the gender?"


def test_edit_tie_without_the_original_takes_the_earliest_edit(project):
    q = answered_question(
        project=project,
        split="test",
        text="wat gender",
        answers=[
            {"elements": ["Male"], "question_text": "What gender?"},
            {"elements": ["Male"], "question_text": "Which gender?"},
            {"elements": ["Male"], "question_text": "What is the gender?"},
        ],
    )
    run(project)
    assert decided(q).final_text == "What gender?"


def test_edit_of_the_disagreeing_answer_does_not_count(project):
    q = answered_question(
        project=project,
        split="validation",
        text="What is the gender?",
        answers=[
            {"elements": ["Female"], "question_text": "Gender?"},
            {"elements": ["Male"], "question_text": "What is the gender"},
            {"elements": ["Male"], "question_text": "What is the gender"},
        ],
    )
    run(project)
    assert decided(q).final_text == "What is the gender"


def test_only_answered_and_decided_questions_are_touched(project):
    q = answered_question(project=project, split="train", answers=[["Male"]])
    Question.objects.filter(pk=q.pk).update(state="answering")
    run(project)
    assert decided(q).state == "answering"


def test_other_projects_are_not_touched(project):
    other = ProjectFactory()
    q = answered_question(project=other, split="train", answers=["invalid"])
    run(project)
    assert decided(q).state == "answered"


# --- shares and counts ----------------------------------------------------------------------


def test_summary_counts_and_shares(project):
    # given 3 all-agree, 1 two-agree, 1 no-agreement in validation; 1 kept and 1 invalid in train
    for _ in range(3):
        answered_question(project=project, split="validation", answers=[["A"], ["a"], ["A"]])
    answered_question(project=project, split="validation", answers=[["A"], ["B"], ["A"]])
    answered_question(project=project, split="validation", answers=[["A"], ["B"], ["C"]])
    answered_question(project=project, split="train", answers=[["A"]])
    answered_question(project=project, split="train", answers=["invalid"])
    answered_question(project=project, split="test", answers=[["A"], ["a"], ["A"]]).screen
    # when post-processing runs
    result = run(project)
    summary = postprocess_summary(project=project)
    # then
    assert result["summary"] == summary
    validation = summary["splits"]["validation"]
    assert validation["agreement"] == {"all": 3, "two": 1, "none": 1}
    assert validation["agreement_shares"] == {"all": 0.6, "two": 0.2, "none": 0.2}
    assert (validation["kept"], validation["dropped"]) == (4, {"no-agreement": 1})
    assert summary["splits"]["train"]["kept"] == 1
    assert summary["splits"]["train"]["dropped"] == {"invalid": 1}
    assert summary["splits"]["train"]["agreement"] == {"all": 0, "two": 0, "none": 0}
    assert summary["agreement"] == {"all": 4, "two": 1, "none": 1}
    assert summary["agreement_shares"]["all"] == pytest.approx(4 / 6)
    assert (summary["kept"], summary["dropped"], summary["pending"]) == (6, 2, 0)
    assert summary["answers_dropped"] == {"disagrees": 1}


def test_summary_counts_pending_questions(project):
    answered_question(project=project, split="train", answers=[["A"]])
    assert postprocess_summary(project=project)["pending"] == 1


# --- re-runs --------------------------------------------------------------------------------


def snapshot(project):
    questions = list(
        Question.objects.filter(screen__project=project)
        .order_by("pk")
        .values_list("pk", "state", "final_text", "drop_reason", "agreement")
    )
    answers = list(
        Answer.objects.filter(question__screen__project=project).order_by("pk").values_list("pk", "kept", "drop_reason")
    )
    return questions, answers


def test_rerun_on_the_same_data_changes_nothing(project):
    answered_question(project=project, split="validation", answers=[["A"], ["B"], ["A"]])
    answered_question(project=project, split="validation", answers=[["A"], ["B"], ["C"]])
    answered_question(project=project, split="train", answers=[{"elements": ["A"], "question_text": "Fixed?"}])
    first = run(project)
    before = snapshot(project)
    second = run(project)
    assert (first["changed"], second["changed"]) == (3, 0)
    assert second["decided"] == 3
    assert snapshot(project) == before


def test_rerun_decides_questions_answered_since(project):
    old = answered_question(project=project, split="train", answers=[["A"]])
    run(project)
    new = answered_question(project=project, split="train", answers=["invalid"])
    result = run(project)
    assert result["changed"] == 1
    assert (decided(old).state, decided(new).state) == ("kept", "dropped")


def test_changed_decision_clears_generated_short_answers_but_not_a_leads(project, lead):
    generated = answered_question(project=project, split="validation", answers=[[("A", (0, 0, 9, 9))]] * 3)
    edited = answered_question(project=project, split="validation", answers=[[("B", (0, 0, 9, 9))]] * 3)
    run(project)
    Question.objects.filter(pk=generated.pk).update(short_answers=["A"], short_answers_source="rules")
    Question.objects.filter(pk=edited.pk).update(short_answers=["b!"], short_answers_source="lead")
    # when the decision of both changes (identical boxes still agree: change the texts' meaning instead)
    Answer.objects.filter(question=generated).order_by("pk").first().elements.update(text="Z")
    Answer.objects.filter(question=edited).order_by("pk").first().elements.update(text="Z")
    run(project)
    # then the generated ones are cleared and the lead's stay
    generated, edited = decided(generated), decided(edited)
    assert (generated.agreement, edited.agreement) == ("two", "two")
    assert (generated.short_answers, generated.short_answers_source) == ([], "")
    assert (edited.short_answers, edited.short_answers_source) == (["b!"], "lead")


# --- batches and queries --------------------------------------------------------------------


@pytest.mark.parametrize("n", [4, 40])
def test_batch_reads_and_writes_a_constant_number_of_queries(project, n, django_assert_max_num_queries):
    # given n validation questions (two-agree: question and answer rows both change)
    for _ in range(n):
        answered_question(project=project, split="validation", answers=[["A"], ["B"], ["A"]])
    ids = list(Question.objects.filter(screen__project=project).values_list("pk", flat=True))
    settings = agreement_settings_for(project)
    # then the batch is 3 reads, 3 writes and a savepoint pair, whatever its size
    with django_assert_max_num_queries(8):
        assert postprocess_batch_apply(question_ids=ids, settings=settings) == n
    # and a second pass over the same batch reads and writes nothing more
    with django_assert_max_num_queries(3):
        assert postprocess_batch_apply(question_ids=ids, settings=settings) == 0


@pytest.mark.parametrize("n", [3, 30])
def test_job_queries_do_not_grow_with_questions(project, n, django_assert_max_num_queries):
    for _ in range(n):
        answered_question(project=project, split="validation", answers=[["A"], ["B"], ["A"]])
    job = ReleaseJob.objects.create(project=project, kind="postprocess")
    with django_assert_max_num_queries(17):
        job_run(kind="postprocess", job_id=job.pk, batch_size=50)


def test_job_in_small_batches_reports_progress(project):
    for _ in range(7):
        answered_question(project=project, split="train", answers=[["A"]])
    job = ReleaseJob.objects.create(project=project, kind="postprocess")
    result = job_run(kind="postprocess", job_id=job.pk, batch_size=3).result
    job.refresh_from_db()
    assert (job.status, job.total, job.processed, job.error) == ("done", 7, 7, "")
    assert job.finished_at is not None
    assert result["decided"] == 7 and job.result["changed"] == 7
    assert Question.objects.filter(state="kept").count() == 7


def test_failure_is_recorded_on_the_job(project, monkeypatch):
    answered_question(project=project, split="validation", answers=[["A"], ["A"], ["A"]])

    def broken(*args, **kwargs):
        raise RuntimeError("agreement exploded")

    monkeypatch.setattr("pipeline.decisions.decide.agreement_group", broken)
    job = ReleaseJob.objects.create(project=project, kind="postprocess")
    with pytest.raises(RuntimeError):
        job_run(kind="postprocess", job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    assert "agreement exploded" in job.error


def test_a_finished_job_redelivered_does_nothing(project):
    answered_question(project=project, split="train", answers=[["A"]])
    job = ReleaseJob.objects.create(project=project, kind="postprocess")
    first = job_run(kind="postprocess", job_id=job.pk).result
    Question.objects.update(state="answered")
    assert job_run(kind="postprocess", job_id=job.pk).result == first
    assert Question.objects.get().state == "answered"
