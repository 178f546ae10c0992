"""Each stage's form parsing: an HTML form of the workspace as the engine's submit body."""

from __future__ import annotations

import json

import pytest
from django.http import QueryDict

from annotation.exceptions import ApplicationError
from pipeline.engine import stage_get


def _post(**fields) -> QueryDict:
    q = QueryDict(mutable=True)
    for key, value in fields.items():
        q.setlist(key, value if isinstance(value, list) else [value])
    return q


def body(stage, **fields):
    return stage_get(stage).form_body(post=_post(**fields), assignment=None)


def test_prefilter_reads_checkboxes():
    assert body("prefilter", non_english_app="on", note=" x ") == {
        "non_english_app": True,
        "vh_out_of_sync": False,
        "note": "x",
    }


def test_questions_nothing_to_ask_is_explicit():
    assert body("questions-1", question=["A?", " ", "B?"]) == {"questions": ["A?", "B?"]}
    assert body("questions-2", question=["A?"], action="nothing") == {"questions": [], "flags": []}
    # pass 2's flags: one choice per pass-1 question ("" = none; a name without an id is not ours)
    flagged = body("questions-2", question=["A?"], **{"flag-7": "ads", "flag-8": "", "flag-x": "ads"})
    assert flagged == {"questions": ["A?"], "flags": [{"question_id": 7, "reason": "ads"}]}
    with pytest.raises(ApplicationError, match="Nothing to ask") as err:
        body("questions-1", question=["", " "])
    assert err.value.field == "questions"


def test_answer_elements_as_the_engine_takes_them():
    raw = json.dumps(
        [
            {"vh_index": 4, "text": " a ", "bounds": [1, 2, 3, 4]},
            {"vh_index": -1, "bounds": [1.4, 2, 30.6, 40], "text": "b"},
        ]
    )
    assert body("answers", question="Q?", elements=raw, full_answer="It is a.") == {
        "question": "Q?",
        "verdict": "answered",
        "elements": [{"vh_index": 4, "text": "a"}, {"bounds": [1, 2, 31, 40], "text": "b"}],
        "full_answer": "It is a.",
    }
    for bad, message in (('{"a": 1}', "could not be read"), ("not json", "could not be read"), ("[]", "at least one")):
        with pytest.raises(ApplicationError, match=message) as err:
            body("answers", question="Q?", elements=bad, full_answer="x")
        assert err.value.field == "elements"
    with pytest.raises(ApplicationError, match="Element 2 has no text") as err:
        body("answers", question="Q?", elements=json.dumps([{"vh_index": 1, "text": "x"}, {"vh_index": 2}]))


def test_answer_verdicts():
    post = {"action": "invalid", "question": "Wat?", "elements": '[{"vh_index": 1, "text": "x"}]'}
    assert body("answers", **post) == {"question": "Wat?", "verdict": "invalid", "elements": [], "full_answer": ""}
    with pytest.raises(ApplicationError) as err:
        body("answers", action="bogus", question="Q")
    assert err.value.field == "action"
    with pytest.raises(ApplicationError) as err:
        body("answers", action="answer", question="Q", elements='[{"vh_index": 1, "text": "x"}]')
    assert err.value.field == "full_answer"


def test_not_answerable_needs_its_question():
    assert body("not-answerable", question=" What is hidden? ") == {"question": "What is hidden?"}
    with pytest.raises(ApplicationError) as err:
        body("not-answerable", question=" ")
    assert err.value.field == "question"


def _answers():
    return stage_get("answers")


def test_answer_form_state_keeps_what_was_typed_and_reads_a_broken_element_list_as_none():
    state = _answers().form_state(post=_post(question="Q?", full_answer="A.", elements='[{"vh_index": 1}]'))
    assert state == {"question": "Q?", "full_answer": "A.", "elements": [{"vh_index": 1}]}
    for broken in ("not json", '{"a": 1}', ""):
        assert _answers().form_state(post=_post(elements=broken)) == {"question": "", "full_answer": "", "elements": []}


def test_answer_draft_lines_name_each_element_by_candidate_or_box():
    draft = {
        "question": "What is it?",
        "elements": [
            {"vh_index": 3, "text": "Save"},
            {"bounds": [1, 2, 3, 4], "text": "Logo"},
            {"vh_index": 5},  # no text: not shown
            "junk",
        ],
        "full_answer": "It is Save.",
    }
    assert _answers().draft_lines(draft=draft) == [
        ("Question", "What is it?"),
        ("Element 1 (VH #3)", "Save"),
        ("Element 2 (box [1, 2, 3, 4])", "Logo"),
        ("Full answer", "It is Save."),
    ]
    assert _answers().draft_lines(draft={"question": "  ", "full_answer": " ", "elements": None}) == []


def test_answer_page_shows_the_payloads_suggestion():
    suggestion = {"model_version": "m", "elements": []}
    assert _answers().page_context(payload={"suggestion": suggestion}, state={}, limits={}) == {
        "suggestion": suggestion
    }
    assert _answers().page_context(payload={}, state={}, limits={}) == {"suggestion": None}


def test_answers_pending_and_capacity():
    stage = _answers()
    assert (
        stage.pending(project=None, screens={"answering": 9}, questions={"drafting": 2, "answering": 3, "kept": 7}) == 5
    )
    assert stage.pending(project=None, screens={}, questions={}) == 0
    assert [stage.capacity(project=None, unit_answers_needed=n) for n in (None, 0, 1, 3)] == [1, 1, 1, 3]


def test_an_empty_element_list_posts_as_none_and_names_the_field():
    for raw in ("", "  "):
        with pytest.raises(ApplicationError, match="Select or draw at least one element") as err:
            body("answers", question="Q?", elements=raw, full_answer="x")
        assert err.value.field == "elements"
    with pytest.raises(ApplicationError, match="Select or draw at least one element"):
        body("answers", question="Q?", full_answer="x")


def test_a_hostile_element_list_is_refused_naming_its_field():
    from annotation.hostile import JSON_MAX_DEPTH, HostileInputError

    nested = "[" * (JSON_MAX_DEPTH + 5) + "]" * (JSON_MAX_DEPTH + 5)
    with pytest.raises(HostileInputError) as err:
        body("answers", question="Q?", elements=nested, full_answer="x")
    assert err.value.field.startswith("elements[0]")


def test_an_unknown_answer_action_is_named():
    with pytest.raises(ApplicationError) as err:
        body("answers", action="bogus", question="Q")
    assert (err.value.field, str(err.value.message)) == ("action", "Unknown action.")


def test_a_drawn_box_without_usable_bounds_goes_on_for_the_engine_to_refuse():
    raw = json.dumps([{"vh_index": -1, "text": "a"}, {"vh_index": -1, "bounds": ["1", 2, 3, 4], "text": "b"}])
    assert body("answers", question="Q?", elements=raw, full_answer="A.")["elements"] == [
        {"bounds": None, "text": "a"},
        {"bounds": ["1", 2, 3, 4], "text": "b"},
    ]


def test_prefilter_reads_each_checkbox_by_its_own_name_in_the_body_and_the_state():
    stage = stage_get("prefilter")
    assert body("prefilter", vh_out_of_sync="on") == {"non_english_app": False, "vh_out_of_sync": True, "note": ""}
    assert stage.form_state(post=_post(non_english_app="on", note=" kept ")) == {
        "non_english_app": True,
        "vh_out_of_sync": False,
        "note": " kept ",
    }
    assert stage.form_state(post=_post(vh_out_of_sync="on")) == {
        "non_english_app": False,
        "vh_out_of_sync": True,
        "note": "",
    }


def test_prefilter_page_shows_the_payloads_suggestion():
    suggestion = {"non_english_app": True, "vh_out_of_sync": False, "scores": {"non_english_app": 0.9}}
    context = stage_get("prefilter").page_context(payload={"suggestion": suggestion}, state={}, limits={})
    assert context == {"suggestion": suggestion}
    assert stage_get("prefilter").page_context(payload={}, state={}, limits={}) == {"suggestion": None}
