"""The short_answers management command (pipeline/management/commands/short_answers.py)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command


def test_prints_one_json_line_per_input(tmp_path):
    # given two inputs, one not answerable
    path = tmp_path / "in.json"
    path.write_text(
        json.dumps(
            [
                {"question": "How many reviews?", "elements": ["3 reviews"], "full_answer": "It has 3 reviews."},
                {"question": "What is the phone number?", "elements": [], "full_answer": "", "not_answerable": True},
            ]
        )
    )
    out = io.StringIO()
    # when the command runs with the rules
    call_command("short_answers", str(path), "--backend", "rules", stdout=out)
    # then each line is the generator's answer
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["source"] == "rules"
    assert lines[0]["answers"][:2] == ["3", "3 reviews"]
    assert lines[1] == {"answers": ["<no answer>"], "source": "rules"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[", "not valid JSON"),
        ("{}", "JSON list"),
        ('[{"question": 1, "elements": []}]', "'question' and 'full_answer' must be strings"),
        ('[{"question": "q", "elements": "a"}]', "'elements' must be a list of strings"),
        ('[{"question": "q", "elements": [], "not_answerable": "yes"}]', "'not_answerable'"),
    ],
)
def test_malformed_input_is_exit_code_two(tmp_path, content, message):
    path = tmp_path / "in.json"
    path.write_text(content)
    with pytest.raises(CommandError, match=message) as info:
        call_command("short_answers", str(path))
    assert info.value.returncode == 2


def test_missing_file(tmp_path):
    with pytest.raises(CommandError, match="cannot read") as info:
        call_command("short_answers", str(tmp_path / "nope.json"))
    assert info.value.returncode == 2
