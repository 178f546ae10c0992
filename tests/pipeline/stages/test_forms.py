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
