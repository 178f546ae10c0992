"""The workspace's form parsing and writing hints (pure functions)."""

from __future__ import annotations

import json

import pytest
from django.http import QueryDict

from frontend.forms import FormError, answer_body, answer_elements, prefilter_body, question_hints, questions_body


def _post(**fields) -> QueryDict:
    q = QueryDict(mutable=True)
    for key, value in fields.items():
        q.setlist(key, value if isinstance(value, list) else [value])
    return q


def kinds(text, others=()):
    return [h.kind for h in question_hints(text, others=list(others))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How many reviews does it have?", ["counting"]),
        ("What is the total of the two prices?", ["arithmetic"]),
        ("Which plan is cheaper than the basic one?", ["comparison"]),
        ("What is the cheapest flight?", ["comparison"]),
        ("Is the alarm on?", ["yes-no"]),
        ("Why was the payment declined?", ["yes-no"]),
        ("What does the sponsored banner offer?", ["ad"]),
        ("What is the name of the song?", []),
        ("Who is the sender of the last message?", []),
        ("abc", []),
    ],
)
def test_rule_hints(text, expected):
    assert kinds(text) == expected


def test_duplicate_hint_is_fuzzy_and_names_the_other_question():
    hints = question_hints("What's the departure time", others=["What is the departure time?"])
    assert hints[0].kind == "duplicate" and "What is the departure time?" in hints[0].message
    assert kinds("time departure the is what", ["what is the departure time"]) == ["duplicate"]  # same bag of words
    assert kinds("What is the arrival gate?", ["What is the departure time?"]) == []


def test_prefilter_body_reads_checkboxes():
    assert prefilter_body(_post(non_english_app="on", note=" x ")) == {
        "non_english_app": True,
        "vh_out_of_sync": False,
        "note": "x",
    }


def test_questions_body_caps_and_duplicates():
    assert questions_body(_post(question=["A?", " ", "B?"]), cap=5) == {"questions": ["A?", "B?"]}
    assert questions_body(_post(question=["A?"], action="nothing"), cap=5) == {"questions": []}
    with pytest.raises(FormError) as err:
        questions_body(_post(question=["A?", "B?", "C?", "D?"]), cap=3)
    assert err.value.field == "questions"
    with pytest.raises(FormError, match="twice"):
        questions_body(_post(question=["A?", "a?"]), cap=5)


def test_answer_elements_shapes():
    raw = json.dumps(
        [{"vh_index": 4, "text": " a ", "bounds": [1, 2, 3, 4]}, {"bounds": [1.4, 2, 30.6, 40], "text": "b"}]
    )
    assert answer_elements(raw) == [{"vh_index": 4, "text": "a"}, {"bounds": [1, 2, 31, 40], "text": "b"}]
    assert answer_elements("") == []
    for bad in (
        '{"a": 1}',
        "[1]",
        '[{"text": "a"}]',
        '[{"vh_index": true, "text": "a"}]',
        '[{"bounds": [3, 3, 1, 1], "text": "a"}]',
    ):
        with pytest.raises(FormError) as err:
            answer_elements(bad)
        assert err.value.field == "elements"


def test_answer_body_verdicts():
    post = _post(action="invalid", question="Wat?", elements='[{"vh_index": 1, "text": "x"}]')
    assert answer_body(post) == {"question": "Wat?", "verdict": "invalid", "elements": [], "full_answer": ""}
    with pytest.raises(FormError) as err:
        answer_body(_post(action="bogus", question="Q"))
    assert err.value.field == "action"
