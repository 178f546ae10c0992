"""The live writing hints (pure functions)."""

from __future__ import annotations

import pytest

from frontend.hints import question_hints


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
