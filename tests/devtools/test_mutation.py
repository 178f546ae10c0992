"""devtools/mutation.py: the targets name real modules and tests, each target's folder carries its own
mutmut configuration, and the runs use a database of their own."""

from __future__ import annotations

import tomllib

import pytest

from devtools import mutation


@pytest.mark.parametrize("name", sorted(mutation.TARGETS))
def test_every_target_names_modules_and_tests_that_exist(name):
    target = mutation.TARGETS[name]
    for pattern in target.mutate:
        assert pattern.endswith((".py", "*")), pattern  # what mutmut's only_mutate takes
        assert list(mutation.ROOT.glob(pattern)), f"{name}: nothing matches {pattern}"
    for tests in target.tests:
        assert (mutation.ROOT / tests).exists(), f"{name}: no {tests}"


def test_the_default_targets_are_targets():
    assert set(mutation.DEFAULT_TARGETS) <= set(mutation.TARGETS)


def test_a_targets_folder_has_its_configuration(tmp_path, monkeypatch):
    # given the folders made under a temporary .mutation/
    monkeypatch.setattr(mutation, "WORK", tmp_path)
    folder = mutation.folder_prepare("agreement", mutation.TARGETS["agreement"], fresh=True)
    # then mutmut reads the target's modules and tests, and the project's own pytest settings
    config = tomllib.loads((folder / "pyproject.toml").read_text())
    assert config["tool"]["mutmut"]["only_mutate"] == ["pipeline/decisions/agreement.py"]
    assert config["tool"]["mutmut"]["pytest_add_cli_args_test_selection"] == [
        "tests/pipeline/decisions/test_agreement.py"
    ]
    assert config["tool"]["mutmut"]["process_isolation"] == "forkserver"
    assert "--reuse-db" in config["tool"]["mutmut"]["pytest_add_cli_args"]
    assert config["tool"]["pytest"]["ini_options"]["DJANGO_SETTINGS_MODULE"] == "annotation.settings.test"
    # and the tree is linked, never copied or changed
    assert (folder / "pipeline").resolve() == mutation.ROOT / "pipeline"
    assert (folder / "tests").resolve() == mutation.ROOT / "tests"


def test_the_runs_use_a_database_of_their_own(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/screenqa_x")
    assert mutation.database_url() == "postgres://postgres@127.0.0.1:5432/screenqa_x_mutation"
    monkeypatch.setenv("DATABASE_URL", "sqlite:///tmp/db.sqlite3")
    with pytest.raises(SystemExit, match="PostgreSQL"):
        mutation.database_url()


def test_a_mutants_name_gives_its_module():
    assert mutation.module_of("pipeline.decisions.agreement.x_box_iou__mutmut_3") == "pipeline/decisions/agreement.py"
    assert (
        mutation.module_of("pipeline.decisions.agreement.xǁAgreementSettingsǁ__post_init____mutmut_4")
        == "pipeline/decisions/agreement.py"
    )


def test_the_scripted_crowds_functions_are_out_of_scope_and_the_stages_rules_are_not():
    skip = mutation.TARGETS["stages-answers"].skip
    out = [
        "pipeline.stages.answers.x__crowd_element__mutmut_1",
        "pipeline.stages.answers.xǁAnswersǁcrowd_submission__mutmut_12",
        "pipeline.stages.answers.x_crowd_question_edit__mutmut_2",
        "pipeline.stages.answers.x__spam_answer__mutmut_7",
    ]
    kept = [
        "pipeline.stages.answers.xǁAnswersǁopen_to__mutmut_3",
        "pipeline.stages.answers.xǁAnswersǁgold_score__mutmut_1",
        "pipeline.stages.answers.x_answers_withdraw__mutmut_5",
        "pipeline.stages.answers.x__posted_element__mutmut_2",  # the answer page's form: the product's
    ]
    assert mutation.function_of(out[0]) == "_crowd_element"
    assert mutation.function_of(kept[0]) == "open_to"
    assert [m for m in out + kept if mutation.out_of_scope(m, skip)] == out
