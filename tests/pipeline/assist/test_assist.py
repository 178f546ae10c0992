"""Model assistance end to end (docs/assist.md): the contract, the client against the baseline backend
and against failing ones, suggestions computed ahead and read by ``next``, what an annotator did with
them, control items, the rubber-stamping rule, the lead's figures and the manifest's counts."""

from __future__ import annotations

import math
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import (
    AssistJob,
    AssistUse,
    Candidate,
    GoldItem,
    Purpose,
    QuestionState,
    ScreenState,
    Standing,
    StandingStatus,
    Suggestion,
    SuggestionStatus,
    SuggestionUse,
)
from annotation.models.projects import SETTINGS
from devtools.assist_baseline.ranker import rank
from devtools.assist_baseline.server import Config
from pipeline.assist.client import Backend, backend_call
from pipeline.assist.contract import ContractError, suggest_request, suggest_response
from pipeline.assist.report import (
    assist_annotator_figures,
    assist_backend_figures,
    model_judge_agreement,
    release_assist_figures,
)
from pipeline.assist.service import suggestion_for, suggestion_hidden, suggestions_job_work
from pipeline.engine import assignment_next, assignment_payload, assignment_submit
from tests.pipeline.assist.servers import baseline, scripted
from tests.pipeline.stages.helpers import answering_question, member, screens

SCREEN = {
    "rico_id": "1",
    "width": 1080,
    "height": 1920,
    "candidates": [
        {"vh_index": 3, "bounds": [10, 10, 200, 60], "text": "Price"},
        {"vh_index": 4, "bounds": [220, 10, 400, 60], "text": "$3.99"},
        {"vh_index": 7, "bounds": [10, 900, 1000, 1000], "text": "Buy now"},
    ],
}


def _run_job(project, *, by_stage=False):
    """The job's result: its totals, or with ``by_stage`` its counts per assisted stage."""
    job = AssistJob.objects.create(project=project)
    result = suggestions_job_work(job=job, progress=lambda *args: None).result
    if by_stage:
        return result["by_stage"]
    assert (
        result["by_stage"]["answers"]["suggested"] + result["by_stage"]["prefilter"]["suggested"] == result["suggested"]
    )
    return {"suggested": result["suggested"], "failed": result["failed"]}


def _with_backend(project, url, **settings):
    project.assist_url = url
    for name, value in settings.items():
        setattr(project, name, value)
    project.save()
    return project


def _body(question, elements, full_answer="It is so."):
    return {"question": question.text, "verdict": "answered", "elements": elements, "full_answer": full_answer}


def _top(suggestion):
    top = suggestion["elements"][0]
    return {"vh_index": top["vh_index"], "text": top["text"]}


# --- the contract -------------------------------------------------------------------------------


def test_a_reply_is_ranked_and_takes_bounds_and_text_from_the_screen():
    reply = {
        "model_version": "m1",
        "elements": [
            {"vh_index": 7, "score": 0.1},
            {"vh_index": 4, "score": 0.9, "text": "something else", "bounds": [0, 0, 1, 1]},
            {"bounds": [5, 5, 50, 50], "text": " a  drawn box ", "score": 0.5},
        ],
    }
    checked = suggest_response(reply, stage="answers", screen=SCREEN)
    assert checked["model_version"] == "m1"
    assert checked["elements"] == [
        {"vh_index": 4, "bounds": [220, 10, 400, 60], "text": "$3.99", "score": 0.9},
        {"vh_index": None, "bounds": [5, 5, 50, 50], "text": "a drawn box", "score": 0.5},
        {"vh_index": 7, "bounds": [10, 900, 1000, 1000], "text": "Buy now", "score": 0.1},
    ]


@pytest.mark.parametrize(
    "reply",
    [
        [],
        {"elements": [{"vh_index": 99, "score": 1}]},  # not a candidate of the screen
        {"elements": [{"vh_index": 4, "score": math.nan}]},
        {"elements": [{"vh_index": 4, "score": True}]},
        {"elements": [{"bounds": [0, 0, 5000, 10], "text": "x", "score": 1}]},  # outside the screenshot
        {"elements": [{"bounds": [0, 0, 10, 10], "text": " ", "score": 1}]},
        {"elements": "4"},
        {"model_version": 3, "elements": []},
    ],
)
def test_a_reply_that_breaks_the_contract_is_refused_whole(reply):
    with pytest.raises(ContractError):
        suggest_response(reply, stage="answers", screen=SCREEN)


def test_the_baseline_ranks_the_value_next_to_the_label_the_question_names():
    ranked = rank(question="What is the price?", candidates=SCREEN["candidates"], width=1080, height=1920)
    assert ranked[0][0] == 4
    assert all(0 < score < 1 for _, score in ranked)
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)


# --- computed ahead, read by next -----------------------------------------------------------------


def test_suggestions_are_computed_ahead_and_next_reads_them_in_one_more_query(project):
    a = member(project, "a")
    screen_a, screen_b = screens(project, 2)
    answering_question(screen_a, text=f"What does Label 2 of {screen_a.rico_id} say?")
    answering_question(screen_b)
    with baseline() as url:
        _with_backend(project, url)
        assert _run_job(project) == {"suggested": 2, "failed": 0}
    assert Suggestion.objects.filter(status=SuggestionStatus.OK).count() == 2
    lease = assignment_next(project=project, user=a, stage="answers")
    payload = assignment_payload(assignment=lease)
    suggestion = payload["suggestion"]
    assert suggestion["model_version"] == "baseline-text-layout-1"
    scores = [e["score"] for e in suggestion["elements"]]
    assert scores == sorted(scores, reverse=True)
    assert suggestion["elements"][0]["vh_index"] == 2  # the candidate the question names
    # the payload reads the cache with one indexed query, and none without a backend
    with CaptureQueriesContext(connection) as with_backend:
        assignment_payload(assignment=lease)
    project.assist_url = ""
    with CaptureQueriesContext(connection) as without:
        assert assignment_payload(assignment=lease)["suggestion"] is None
    assert len(with_backend) == len(without) + 1


@pytest.mark.parametrize(
    ("reply", "delay", "why"),
    [
        ((500, {"error": "boom"}), 0.0, "HTTP 500"),
        ((200, b"not json"), 0.0, "not JSON"),
        ((200, {"elements": [{"vh_index": 999, "score": 1}]}), 0.0, "breaks the contract"),
        ((200, {"elements": []}), 1.5, "no answer within"),
    ],
)
def test_a_failing_or_slow_backend_is_counted_and_never_blocks_a_lease(project, lead, reply, delay, why):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    with scripted(lambda body: reply, delay=delay) as (url, _seen):
        _with_backend(project, url, assist_timeout_seconds=0.3)
        started = time.monotonic()
        assert _run_job(project) == {"suggested": 0, "failed": 1}
        assert time.monotonic() - started < 1.2  # the timeout, not the backend, decides
        _run_job(project)  # the next job tries it again
    row = Suggestion.objects.get()
    assert (row.status, row.calls, row.failures) == (SuggestionStatus.FAILED, 2, 2)
    assert why in row.error
    # the item is served, without a suggestion
    lease = assignment_next(project=project, user=a, stage="answers")
    assert lease is not None and assignment_payload(assignment=lease)["suggestion"] is None
    figures = assist_backend_figures(project=project)
    assert (figures["calls"], figures["failures"], figures["error_rate"]) == (2, 2, 1.0)
    assert why in figures["last_error"]


def test_the_token_goes_as_a_bearer_token_and_the_baseline_can_require_it(project):
    (screen,) = screens(project, 1)
    answering_question(screen)
    with baseline(Config(token="s3cret")) as url:
        _with_backend(project, url, assist_token="wrong")
        assert _run_job(project) == {"suggested": 0, "failed": 1}
        assert "HTTP 401" in Suggestion.objects.get().error
        _with_backend(project, url, assist_token="s3cret")
        assert _run_job(project) == {"suggested": 1, "failed": 0}


def test_a_share_of_questions_is_shown_without_suggestions_the_same_for_everybody(project):
    project.assist_hidden_share = 0.5
    hidden = [suggestion_hidden(project=project, question_id=i) for i in range(400)]
    assert hidden == [suggestion_hidden(project=project, question_id=i) for i in range(400)]
    assert 150 < sum(hidden) < 250
    project.assist_hidden_share = 1.0
    assert all(suggestion_hidden(project=project, question_id=i) for i in range(50))


# --- what the annotator did -----------------------------------------------------------------------


def test_an_answer_records_whether_the_suggestion_was_accepted_edited_or_absent(project):
    a = member(project, "a")
    made = screens(project, 3)
    questions = [answering_question(s) for s in made]
    with baseline() as url:
        _with_backend(project, url)
        _run_job(project)
    Suggestion.objects.filter(question=questions[2]).delete()  # the backend had nothing for this one
    uses = []
    for n in range(3):
        lease = assignment_next(project=project, user=a, stage="answers")
        suggestion = assignment_payload(assignment=lease)["suggestion"]
        if n == 0:
            elements = [_top(suggestion)]  # one key: the pre-annotation as it is
        elif n == 1:
            other = next(e for e in suggestion["elements"] if e["vh_index"] != suggestion["elements"][0]["vh_index"])
            elements = [{"vh_index": other["vh_index"], "text": other["text"]}]
        else:
            assert suggestion is None
            elements = [{"vh_index": 1, "text": "Label 1"}]
        done = assignment_submit(assignment_id=lease.pk, user=a, data=_body(lease.question, elements))
        uses.append(done.answer.suggestion_use)
    assert uses == [SuggestionUse.ACCEPTED, SuggestionUse.EDITED, SuggestionUse.NONE]
    # the suggestion is never an answer: every answer is an annotator's own submission
    assert all(q.answers.count() == 1 for q in questions)
    (row,) = assist_annotator_figures(project=project)
    assert (row["shown"], row["accepted"], row["edited"], row["acceptance_rate"]) == (2, 1, 1, 0.5)


def test_changing_the_suggested_text_is_an_edit(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen)
    with baseline() as url:
        _with_backend(project, url)
        _run_job(project)
    lease = assignment_next(project=project, user=a, stage="answers")
    top = _top(assignment_payload(assignment=lease)["suggestion"])
    done = assignment_submit(
        assignment_id=lease.pk, user=a, data=_body(lease.question, [{**top, "text": top["text"] + " (fixed)"}])
    )
    assert done.answer.suggestion_use == SuggestionUse.EDITED


# --- control items and the rubber-stamping rule ---------------------------------------------------


def _gold_with_wrong_suggestion(project, lead, n):
    """A gold item whose right answer is candidate 1, with a cached suggestion of candidate 2 (wrong)."""
    from pipeline.quality.gold import gold_item_create

    (screen,) = screens(project, 1)
    question = answering_question(screen, text=f"What does the first label say? ({n})")
    question.state = QuestionState.KEPT
    question.save(update_fields=["state"])
    right = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    gold = gold_item_create(project=project, stage="answers", screen=screen, question=question, answer=right, user=lead)
    candidate = screen.candidates.get(vh_index=2)
    Suggestion.objects.create(
        project=project,
        stage="answers",
        screen=screen,
        question=question,
        status=SuggestionStatus.OK,
        calls=1,
        result={"elements": [{"vh_index": 2, "bounds": candidate.bounds, "text": candidate.text, "score": 0.9}]},
    )
    return gold


def test_control_items_carry_suggestions_like_real_work_and_rubber_stampers_are_paused(project, lead):
    _with_backend(
        project,
        "http://127.0.0.1:9",  # the suggestions are cached: nothing calls the backend here
        control_rate=1.0,
        control_rate_new=1.0,
        monitoring_evidence=SETTINGS["monitoring_evidence"].high,  # the accuracy rule stays out of the way
        assist_wrong_accept_min=2,
        assist_wrong_accept_threshold=0.5,
    )
    for n in range(3):
        _gold_with_wrong_suggestion(project, lead, n)
    stamper, careful = member(project, "stamper"), member(project, "careful")
    for user in (stamper, careful):
        Standing.objects.create(project=project, user=user, stage="answers", status=StandingStatus.ACTIVE)
    # real work waits for both (a control item is served only then)
    (waiting,) = screens(project, 1)
    answering_question(waiting)
    for user, accept in ((stamper, True), (careful, False)):
        for _ in range(2):
            lease = assignment_next(project=project, user=user, stage="answers")
            assert lease.purpose == Purpose.CONTROL
            payload = assignment_payload(assignment=lease)
            # the same fields as on real work: a suggestion is no tell
            assert set(payload["suggestion"]) == {"model_version", "elements"}
            elements = [_top(payload["suggestion"])] if accept else [{"vh_index": 1}]
            assignment_submit(assignment_id=lease.pk, user=user, data=_body(lease.question, elements))
    assert Standing.objects.get(user=stamper).status == StandingStatus.PAUSED
    assert Standing.objects.get(user=careful).status == StandingStatus.ACTIVE
    assert stamper.quality_events.filter(rule="accepts-wrong-suggestions").exists()
    rows = {row["username"]: row for row in assist_annotator_figures(project=project)}
    assert (rows["stamper"]["wrong_met"], rows["stamper"]["wrong_accepted"]) == (2, 2)
    assert rows["stamper"]["control_accuracy_when_wrong"] == 0.0
    assert rows["careful"]["control_accuracy_when_wrong"] == 1.0
    assert AssistUse.objects.filter(purpose=Purpose.CONTROL, suggestion_wrong=True).count() == 4
    assert GoldItem.objects.count() == 3  # a suggestion never becomes gold or an answer


def test_the_job_computes_suggestions_for_control_items_too(project, lead):
    from pipeline.quality.gold import gold_item_create

    (screen,) = screens(project, 1)
    question = answering_question(screen)
    question.state = QuestionState.KEPT
    question.save(update_fields=["state"])
    right = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    gold_item_create(project=project, stage="answers", screen=screen, question=question, answer=right, user=lead)
    with baseline() as url:
        _with_backend(project, url)
        assert _run_job(project) == {"suggested": 1, "failed": 0}
        assert suggestion_for(project=project, question_id=question.pk) is not None


# --- short answers through the contract; the manifest -------------------------------------------


def test_short_answers_through_the_contract_come_from_the_rules_without_a_chat_endpoint():
    body = suggest_request(
        stage="short-answers",
        project="p",
        screen=SCREEN,
        question={"id": 1, "text": "How many reviews does the app have?"},
        answer={"elements": ["3 reviews"], "full_answer": "The app has 3 reviews."},
    )
    with baseline() as url:
        reply = backend_call(backend=Backend(url=url, token="", timeout=5), body=body, screen=SCREEN)
    texts = [item["text"] for item in reply.result["short_answers"]]
    assert reply.result["model_version"] == "rules"
    assert "3" in texts and "three" in texts


def test_the_manifest_counts_answers_accepted_unchanged_per_split(project):
    a = member(project, "a")
    (screen,) = screens(project, 1)
    question = answering_question(screen)
    with baseline() as url:
        _with_backend(project, url)
        _run_job(project)
    lease = assignment_next(project=project, user=a, stage="answers")
    top = _top(assignment_payload(assignment=lease)["suggestion"])
    assignment_submit(assignment_id=lease.pk, user=a, data=_body(lease.question, [top]))
    question.refresh_from_db()
    question.state = QuestionState.KEPT
    question.save(update_fields=["state"])
    figures = release_assist_figures(project=project)["answers_by_suggestion_use"]
    assert figures["train"] == {"accepted": 1, "edited": 0, "none": 0}
    assert figures["test"] == {"accepted": 0, "edited": 0, "none": 0}
    # the lead sees the model against the crowd: here the one answer took the suggestion
    assert assist_backend_figures(project=project)["crowd_agreement"] == {"questions": 1, "agree": 1, "share": 1.0}


def test_the_scripted_stamper_submits_the_suggestion_and_the_careful_annotator_ignores_it(project):
    from devtools.crowd import PROFILES, ScriptedAnnotator

    a = member(project, "a")
    (screen,) = screens(project, 1)
    answering_question(screen, text=f'What does "Label 2 of {screen.rico_id}" say?')
    with baseline() as url:
        _with_backend(project, url)
        _run_job(project)
    lease = assignment_next(project=project, user=a, stage="answers")
    payload = assignment_payload(assignment=lease)
    stamper = ScriptedAnnotator(username="s", seed=1, profile=PROFILES["stamper"])
    body = stamper.work(payload)
    assert body["elements"] == [_top(payload["suggestion"])]
    done = assignment_submit(assignment_id=lease.pk, user=a, data=body)
    assert done.answer.suggestion_use == SuggestionUse.ACCEPTED
    # without a suggestion the same profile answers as a careful annotator does
    careful = ScriptedAnnotator(username="s", seed=1, profile=PROFILES["stamper"]).work({**payload, "suggestion": None})
    assert careful["verdict"] == "answered" and careful["elements"][0]["text"] == f"Label 2 of {screen.rico_id}"


# --- pre-filtering: suggested judgments per screen --------------------------------------------------


def _judge(project, user, **flags):
    """``user`` takes the next pre-filtering item, sees its payload, and submits ``flags``."""
    lease = assignment_next(project=project, user=user, stage="prefilter")
    payload = assignment_payload(assignment=lease)
    body = {"non_english_app": False, "vh_out_of_sync": False, "note": "", **flags}
    return lease, payload, assignment_submit(assignment_id=lease.pk, user=user, data=body)


def _non_english(screen):
    Candidate.objects.filter(screen=screen).update(text="Цена товара в рублях")


def test_screens_waiting_for_pre_filtering_get_suggested_judgments_and_next_shows_them(project):
    a = member(project, "a")
    english, russian = screens(project, 2, state=ScreenState.PREFILTER)
    _non_english(russian)
    answering_question(screens(project, 1)[0])  # the answers stage's queue is served by the same job
    with baseline() as url:
        _with_backend(project, url)
        assert _run_job(project, by_stage=True) == {
            "answers": {"suggested": 1, "failed": 0},
            "prefilter": {"suggested": 2, "failed": 0},
        }
        assert _run_job(project) == {"suggested": 0, "failed": 0}  # idempotent: nothing is missing now
    shown = {}
    for _ in range(2):
        lease = assignment_next(project=project, user=a, stage="prefilter")
        shown[lease.screen_id] = assignment_payload(assignment=lease)["suggestion"]
        assignment_submit(
            assignment_id=lease.pk, user=a, data={"non_english_app": False, "vh_out_of_sync": False, "note": ""}
        )
    assert shown[english.pk] == {
        "model_version": "baseline-text-layout-1",
        "judgments": {"non_english_app": False, "vh_out_of_sync": False},  # 0.5 is "cannot tell": no flag
        "scores": {"non_english_app": 0.0, "vh_out_of_sync": 0.5},
    }
    assert shown[russian.pk]["judgments"] == {"non_english_app": True, "vh_out_of_sync": False}
    # the payload reads the cache with one indexed query more than without a backend
    (other,) = screens(project, 1, state=ScreenState.PREFILTER)
    Suggestion.objects.create(
        project=project,
        stage="prefilter",
        screen=other,
        status=SuggestionStatus.OK,
        calls=1,
        result={"judgments": {"non_english_app": 0.9, "vh_out_of_sync": 0.7}},
    )
    lease = assignment_next(project=project, user=a, stage="prefilter")
    with CaptureQueriesContext(connection) as with_backend:
        assert assignment_payload(assignment=lease)["suggestion"]["judgments"] == {
            "non_english_app": True,
            "vh_out_of_sync": True,
        }
    project.assist_url = ""
    with CaptureQueriesContext(connection) as without:
        assert assignment_payload(assignment=lease)["suggestion"] is None
    assert len(with_backend) == len(without) + 1


def test_a_judgment_records_whether_the_suggested_judgments_were_accepted_edited_or_absent(project):
    a = member(project, "a")
    made = screens(project, 3, state=ScreenState.PREFILTER)
    with baseline() as url:
        _with_backend(project, url)
        _run_job(project)
    Suggestion.objects.filter(screen=made[2]).delete()  # the backend had nothing for this one
    uses = {}
    for flags in ({}, {"vh_out_of_sync": True}, {"non_english_app": True}):
        lease, payload, _ = _judge(project, a, **flags)
        uses[lease.screen_id] = (payload["suggestion"] is not None, AssistUse.objects.get(assignment=lease).use)
    assert uses == {
        made[0].pk: (True, SuggestionUse.ACCEPTED),  # both judgments as suggested
        made[1].pk: (True, SuggestionUse.EDITED),  # one changed
        made[2].pk: (False, SuggestionUse.NONE),
    }
    (row,) = assist_annotator_figures(project=project)
    assert row["stage"] == "prefilter"
    assert (row["shown"], row["accepted"], row["edited"], row["acceptance_rate"]) == (2, 1, 1, 0.5)


def test_a_hidden_share_of_screens_is_judged_without_suggestions(project):
    a = member(project, "a")
    made = screens(project, 2, state=ScreenState.PREFILTER)
    with baseline() as url:
        _with_backend(project, url, assist_hidden_share=1.0)
        _run_job(project)  # computed all the same: the share only hides them
    assert Suggestion.objects.filter(stage="prefilter", status=SuggestionStatus.OK).count() == 2
    lease, payload, _ = _judge(project, a)
    assert payload["suggestion"] is None
    assert AssistUse.objects.get(assignment=lease).use == SuggestionUse.NONE
    # screens and questions draw apart: a screen's id is no question's
    project.assist_hidden_share = 0.5
    screens_hidden = [suggestion_hidden(project=project, screen_id=i) for i in range(400)]
    questions_hidden = [suggestion_hidden(project=project, question_id=i) for i in range(400)]
    assert 150 < sum(screens_hidden) < 250
    assert screens_hidden != questions_hidden
    assert made  # (the two screens above)


def _prefilter_gold_with_wrong_suggestion(project, lead):
    """A gold screen whose right judgment is "out of sync", with a cached suggestion of "in sync" (wrong)."""
    from pipeline.quality.gold import gold_item_create

    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)
    right = {"non_english_app": False, "vh_out_of_sync": True, "note": ""}
    gold_item_create(project=project, stage="prefilter", screen=screen, question=None, answer=right, user=lead)
    Suggestion.objects.create(
        project=project,
        stage="prefilter",
        screen=screen,
        status=SuggestionStatus.OK,
        calls=1,
        result={"judgments": {"non_english_app": 0.05, "vh_out_of_sync": 0.2}},
    )
    return screen


def test_pre_filtering_control_items_carry_suggestions_and_a_judge_who_stamps_them_is_paused(project, lead):
    _with_backend(
        project,
        "http://127.0.0.1:9",  # the suggestions are cached: nothing calls the backend here
        control_rate=1.0,
        control_rate_new=1.0,
        monitoring_evidence=SETTINGS["monitoring_evidence"].high,  # the accuracy rule stays out of the way
        assist_wrong_accept_min=2,
        assist_wrong_accept_threshold=0.5,
    )
    for _ in range(3):
        _prefilter_gold_with_wrong_suggestion(project, lead)
    stamper, careful = member(project, "stamper"), member(project, "careful")
    for user in (stamper, careful):
        Standing.objects.create(project=project, user=user, stage="prefilter", status=StandingStatus.ACTIVE)
    screens(project, 1, state=ScreenState.PREFILTER)  # real work waits (a control item is served only then)
    for user, accept in ((stamper, True), (careful, False)):
        for _ in range(2):
            lease = assignment_next(project=project, user=user, stage="prefilter")
            assert lease.purpose == Purpose.CONTROL
            payload = assignment_payload(assignment=lease)
            assert set(payload["suggestion"]) == {"model_version", "judgments", "scores"}  # as on real work
            flags = payload["suggestion"]["judgments"] if accept else {"non_english_app": False, "vh_out_of_sync": True}
            assignment_submit(assignment_id=lease.pk, user=user, data={**flags, "note": ""})
    assert Standing.objects.get(user=stamper, stage="prefilter").status == StandingStatus.PAUSED
    assert Standing.objects.get(user=careful, stage="prefilter").status == StandingStatus.ACTIVE
    event = stamper.quality_events.get(rule="accepts-wrong-suggestions")
    assert event.stage == "prefilter"
    rows = {row["username"]: row for row in assist_annotator_figures(project=project)}
    assert (rows["stamper"]["wrong_met"], rows["stamper"]["wrong_accepted"]) == (2, 2)
    assert (rows["careful"]["wrong_met"], rows["careful"]["wrong_accepted"]) == (2, 0)
    assert rows["careful"]["control_accuracy_when_wrong"] == 1.0


def test_a_right_suggestion_accepted_on_a_control_item_is_never_counted_against_the_judge(project, lead):
    _with_backend(project, "http://127.0.0.1:9", control_rate=1.0, control_rate_new=1.0)
    screen = _prefilter_gold_with_wrong_suggestion(project, lead)
    Suggestion.objects.filter(screen=screen).update(
        result={"judgments": {"non_english_app": 0.0, "vh_out_of_sync": 0.9}}
    )
    a = member(project, "a")
    Standing.objects.create(project=project, user=a, stage="prefilter", status=StandingStatus.ACTIVE)
    screens(project, 1, state=ScreenState.PREFILTER)
    lease, _payload, _ = _judge(project, a, vh_out_of_sync=True)
    assert lease.purpose == Purpose.CONTROL
    use = AssistUse.objects.get(assignment=lease)
    assert (use.use, use.suggestion_wrong, use.correct) == (SuggestionUse.ACCEPTED, False, True)


def test_the_job_computes_suggested_judgments_for_pre_filtering_control_items_too(project, lead):
    from pipeline.quality.gold import gold_item_create

    (screen,) = screens(project, 1, state=ScreenState.QUESTIONS_1)  # judged long ago: not in the queue
    right = {"non_english_app": False, "vh_out_of_sync": False, "note": ""}
    gold_item_create(project=project, stage="prefilter", screen=screen, question=None, answer=right, user=lead)
    with baseline() as url:
        _with_backend(project, url)
        assert _run_job(project, by_stage=True)["prefilter"] == {"suggested": 1, "failed": 0}
    assert suggestion_for(project=project, screen_id=screen.pk) is not None


def test_the_lead_sees_how_often_the_models_judgments_are_the_judges_majority(project):
    judges = [member(project, name) for name in ("a", "b", "c")]
    project.prefilter_judgments = 3
    project.save()
    agreed, outvoted = screens(project, 2, state=ScreenState.PREFILTER)
    for screen, out_of_sync in ((agreed, 0.1), (outvoted, 0.9)):
        Suggestion.objects.create(
            project=project,
            stage="prefilter",
            screen=screen,
            status=SuggestionStatus.OK,
            calls=1,
            result={"judgments": {"non_english_app": 0.0, "vh_out_of_sync": out_of_sync}},
        )
    _with_backend(project, "http://127.0.0.1:9")
    for judge, flags in zip(judges, ({}, {}, {"vh_out_of_sync": True}), strict=True):
        for _ in range(2):  # each judges both screens: two of three say "in sync"
            _judge(project, judge, **flags)
    assert model_judge_agreement(project=project) == {
        "screens": 2,
        "agree": 1,
        "share": 0.5,
        "judges_screens": 2,  # judged three times each
        "judges_agree": 0,  # one judge said out of sync on each
        "judges_share": 0.0,
    }
    assert assist_backend_figures(project=project)["prefilter_agreement"]["agree"] == 1


def test_the_scripted_stamper_takes_the_suggested_judgments(project):
    from devtools.crowd import PROFILES, ScriptedAnnotator

    a = member(project, "a")
    (screen,) = screens(project, 1, state=ScreenState.PREFILTER)
    Suggestion.objects.create(
        project=project,
        stage="prefilter",
        screen=screen,
        status=SuggestionStatus.OK,
        calls=1,
        result={"judgments": {"non_english_app": 0.8, "vh_out_of_sync": 0.6}},
    )
    _with_backend(project, "http://127.0.0.1:9")
    lease = assignment_next(project=project, user=a, stage="prefilter")
    payload = assignment_payload(assignment=lease)
    body = ScriptedAnnotator(username="s", seed=1, profile=PROFILES["stamper"]).work(payload)
    assert (body["non_english_app"], body["vh_out_of_sync"]) == (True, True)
    assignment_submit(assignment_id=lease.pk, user=a, data=body)
    assert AssistUse.objects.get(assignment=lease).use == SuggestionUse.ACCEPTED


# --- a missing suggestion is no tell either -------------------------------------------------------


def test_a_gold_items_suggestion_is_left_out_as_often_as_real_work_lately_went_without_one(project, lead):
    from pipeline.assist.service import _gold_draw, _miss_share

    _with_backend(project, "http://127.0.0.1:9", control_rate=1.0, control_rate_new=1.0)
    judge = member(project, "judge")
    Standing.objects.create(project=project, user=judge, stage="prefilter", status=StandingStatus.ACTIVE)
    # real work first (no gold yet): 4 screens, the backend had a suggestion for 1 (it was down for the rest)
    real = screens(project, 4, state=ScreenState.PREFILTER)
    Suggestion.objects.create(
        project=project,
        stage="prefilter",
        screen=real[0],
        status=SuggestionStatus.OK,
        calls=1,
        result={"judgments": {"non_english_app": 0.0, "vh_out_of_sync": 0.0}},
    )
    for _ in range(4):
        lease, payload, _ = _judge(project, judge)
        assert lease.purpose == Purpose.WORK
        assert (payload["suggestion"] is not None) == (lease.screen_id == real[0].pk)
    assert _miss_share(project=project, stage="prefilter") == 0.75
    # now every lease is a control item, each gold screen with a suggestion computed long ago
    for _ in range(12):
        _prefilter_gold_with_wrong_suggestion(project, lead)
    screens(project, 1, state=ScreenState.PREFILTER)  # real work waits (a control item is served only then)
    for _ in range(12):
        lease, payload, _ = _judge(project, judge, vh_out_of_sync=True)
        assert lease.purpose == Purpose.CONTROL
        # left out exactly when the assignment's keyed draw falls under the miss share, and read the same
        # way again (the page's reload, the submit's record)
        assert (payload["suggestion"] is None) == (_gold_draw(lease.pk) < 0.75)
        use = AssistUse.objects.get(assignment=lease)
        assert use.use == (SuggestionUse.NONE if payload["suggestion"] is None else SuggestionUse.EDITED)
        assert use.suggestion_wrong is (None if payload["suggestion"] is None else True)
    # with real work all suggested again, gold items show theirs
    assert _miss_share(project=project, stage="prefilter") == 0.75  # control submissions do not count
    AssistUse.objects.filter(purpose="work").update(use=SuggestionUse.EDITED)
    assert _miss_share(project=project, stage="prefilter") == 0.0


def test_the_miss_share_leaves_out_the_hidden_share_that_gold_items_meet_alike(project):
    from pipeline.assist.service import _miss_share

    _with_backend(project, "http://127.0.0.1:9")
    judge = member(project, "judge")
    for _ in range(4):
        screens(project, 1, state=ScreenState.PREFILTER)
        _judge(project, judge)  # no suggestion: every one goes without
    assert _miss_share(project=project, stage="prefilter") == 1.0
    project.assist_hidden_share = 0.5  # half of them were hidden on purpose: the other half missed
    assert _miss_share(project=project, stage="prefilter") == 1.0
    AssistUse.objects.filter(pk__in=list(AssistUse.objects.values_list("pk", flat=True)[:1])).update(use="accepted")
    assert _miss_share(project=project, stage="prefilter") == 0.5  # (0.75 - 0.5) / 0.5
    project.assist_hidden_share = 1.0
    assert _miss_share(project=project, stage="prefilter") == 0.0
