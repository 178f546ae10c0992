"""devtools.release_study: the figures docs/postprocessing.md quotes as evidence for the agreement rule."""

from __future__ import annotations

import json

import pytest

from devtools.release_study import _list_relations, main, release_study

pytestmark = pytest.mark.realdata


def test_the_figures_the_docs_quote(shared_data):
    figures = release_study(shared_data)
    assert figures["questions"] == 17_033
    assert figures["answers_per_question"]["1"] == 3722
    assert figures["answers_per_question_mean"] == pytest.approx(2.783)
    assert figures["no_answer_only"] == {"count": 1302, "share": 0.0764}
    assert figures["no_answer_beside_text"] == {
        "count": 460,
        "share": 0.027,
        "by_split": {"validation": 188, "test": 272},
    }


def test_list_relations():
    assert _list_relations(["C Max 2014", "C Max"]) == (False, False)  # not list-shaped
    assert _list_relations(["GOOGLE, FACEBOOK", "GOOGLE, FACEBOOK, E-MAIL", "<no answer>"]) == (True, False)
    assert _list_relations(["Facebook, HERE", "Facebook or Email"]) == (False, True)


def test_command_line_prints_json(shared_data, capsys):
    main(["--data", str(shared_data)])
    assert json.loads(capsys.readouterr().out)["questions"] == 17_033
