"""The README's command lines (issue 22 §12), run as written, in order, after ``make demo``'s setup:
from the scripted crowd (a project of its own) to scoring example predictions of the exported
release. The two lines on ``../shared`` data (``import_rico``, ``create_annotators --project rico``)
are left out: they need RICO."""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path

import pytest
from django.core.management import call_command

README = Path(__file__).resolve().parents[2] / "README.md"
PREFIX = [".venv/bin/python", "manage.py"]


def readme_command_lines() -> list[list[str]]:
    """The README's "From the command line" block, one argv per command (continuations joined,
    comments dropped)."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"\*\*From the command line\*\*.*?```sh\n(.*?)```", text, flags=re.S)
    assert block, "the README lost its command-line block"
    joined = block.group(1).replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in joined.splitlines() if line.strip()]


def test_the_readme_block_names_the_commands_it_should():
    names = [argv[2] for argv in readme_command_lines()]
    assert all(argv[:2] == PREFIX for argv in readme_command_lines())
    assert names[-2:] == ["example_predictions", "score"]


@pytest.mark.django_db(transaction=True)
def test_the_readme_command_lines_run_as_written_after_make_demo(settings, tmp_path, monkeypatch):
    # given the demo as `make demo` leaves it (fewer screens), in a fresh working directory
    settings.DATA_DIR = tmp_path / "data"
    call_command("demo_setup", screens=2, stdout=io.StringIO())
    monkeypatch.chdir(tmp_path)
    # when every README line that needs no RICO data runs, in order
    outputs = {}
    for argv in readme_command_lines():
        if any("../shared" in arg or arg == "rico" for arg in argv):
            continue
        out = io.StringIO()
        call_command(*argv[2:], stdout=out, stderr=io.StringIO())
        outputs[argv[2]] = out.getvalue()
    # then the release was written, the example predictions cover its test questions, and the score
    # line printed the short-answer figures as JSON
    assert {"simulate_crowd", "postprocess", "export_release", "example_predictions", "score"} <= set(outputs)
    test_questions = json.loads((tmp_path / "release" / "short_answers" / "test.json").read_text())
    predictions = json.loads((tmp_path / "preds.json").read_text())
    assert test_questions, "\n".join(outputs.values())
    assert {(p["image_id"], p["question"]) for p in predictions} == {
        (q["image_id"], q["question"]) for q in test_questions
    }
    summary = json.loads(outputs["score"].strip().splitlines()[-1])
    assert summary["sqa_s"]["n_gold"] == len(test_questions)
    assert summary["sqa_s"]["missing"] == 0
    assert 0 <= summary["sqa_s"]["over_gold"]["f1"] < 1  # the question's last word is not the answer
