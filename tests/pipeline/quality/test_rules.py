"""The quality rules' table (``pipeline.quality.rules.TABLE``): one entry is everything about a rule.
Checked against the code that records events, the declared settings and docs/quality.md; and a rule
added to the table alone pauses, through every moment it can be checked at."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from annotation.exceptions import PermissionDeniedError
from annotation.models import QualityEvent, ScreenState, Standing, StandingStatus
from annotation.models.projects import SETTINGS
from pipeline.engine import assignment_next, assignment_skip, assignment_submit
from pipeline.quality import rules
from pipeline.quality.rules import MOMENTS, RULES, TABLE, Finding
from tests.pipeline.stages.helpers import member, screens

ROOT = Path(__file__).resolve().parents[3]


def recorded_codes() -> dict[str, str]:
    """Every rule code written as a literal in the product (``rule="..."`` arguments and comparisons)."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "pipeline").rglob("*.py")) + sorted((ROOT / "frontend").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.keyword) and node.arg == "rule" and isinstance(node.value, ast.Constant)):
                continue
            if isinstance(node.value.value, str) and "-" in node.value.value:
                found.setdefault(node.value.value, str(path.relative_to(ROOT)))
    return found


def test_every_code_the_product_records_is_one_entry_of_the_table():
    codes = [rule.code for rule in TABLE]
    assert len(codes) == len(set(codes))
    unknown = {code: where for code, where in recorded_codes().items() if code not in RULES}
    assert not unknown, f"rule codes outside pipeline/quality/rules.py TABLE: {unknown}"


def test_a_rule_that_pauses_says_when_it_runs_what_it_checks_and_which_settings_it_reads():
    declared = set(SETTINGS.names)
    for rule in TABLE:
        if rule.on:
            assert rule.on in MOMENTS and rule.check is not None and rule.when and rule.pauses, rule.code
            assert rule.settings and set(rule.settings) <= declared, rule.code
            for name in rule.settings:  # the docs sentence names each setting it reads
                assert f"`{name}`" in rule.when, (rule.code, name)
        else:
            assert rule.check is None and not rule.settings, rule.code


def test_docs_list_exactly_the_table_s_rules_that_pause():
    text = (ROOT / "docs" / "quality.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)` \| (.+) \|$", text, flags=re.M)
    pausing = {rule.code: rule.when for rule in TABLE if rule.on}
    documented = {code: when for code, when in rows if code in RULES}
    assert documented == pausing


@pytest.fixture
def rule_added(monkeypatch):
    """A new rule, one entry appended to the table, that finds against whoever it sees."""
    seen: list[str] = []

    def add(moment: str) -> list[str]:
        def check(event):
            seen.append(event.assignment.purpose)
            return Finding("the new rule found against you", {"moment": moment})

        new = rules.Rule("new-rule", "a rule added by the test", on=moment, check=check, settings=("control_rate",))
        monkeypatch.setattr(rules, "TABLE", (*TABLE, new))
        return seen

    return add


def active_writer_with_a_lease(project):
    screens(project, 3, state=ScreenState.QUESTIONS_1)
    writer = member(project, "writer")
    Standing.objects.create(project=project, user=writer, stage="questions-1", status=StandingStatus.ACTIVE)
    return writer, assignment_next(project=project, user=writer, stage="questions-1")


def test_a_rule_added_to_the_table_pauses_on_submit(project, rule_added):
    seen = rule_added("submit")
    writer, lease = active_writer_with_a_lease(project)
    assignment_submit(assignment_id=lease.pk, user=writer, data={"questions": ["What is the title?"]})
    standing = Standing.objects.get(user=writer, stage="questions-1")
    assert seen == ["work"] and standing.status == StandingStatus.PAUSED
    assert standing.reason == "the new rule found against you"
    event = QualityEvent.objects.get(user=writer, rule="new-rule")
    assert event.figures["moment"] == "submit" and event.figures["withdrawn"] == 1 and event.actor is None
    with pytest.raises(PermissionDeniedError, match="the new rule found against you"):
        assignment_next(project=project, user=writer, stage="questions-1")


def test_a_rule_added_to_the_table_pauses_on_skip(project, rule_added):
    seen = rule_added("skip")
    writer, lease = active_writer_with_a_lease(project)
    assignment_skip(assignment_id=lease.pk, user=writer, reason="unclear")
    assert seen == ["work"]
    assert Standing.objects.get(user=writer, stage="questions-1").status == StandingStatus.PAUSED


def test_a_rule_pauses_only_the_standings_it_names(project, rule_added, monkeypatch):
    # given a rule that pauses active annotators only, and a writer qualifying by review
    rule_added("submit")
    only_active = dataclasses.replace(rules.TABLE[-1], pauses=(StandingStatus.ACTIVE,))
    monkeypatch.setattr(rules, "TABLE", (*TABLE, only_active))
    screens(project, 3, state=ScreenState.QUESTIONS_1)
    writer = member(project, "writer")
    lease = assignment_next(project=project, user=writer, stage="questions-1")
    assignment_submit(assignment_id=lease.pk, user=writer, data={"questions": ["What is the title?"]})
    # then the writer keeps qualifying
    assert Standing.objects.get(user=writer, stage="questions-1").status == StandingStatus.QUALIFYING
    assert not QualityEvent.objects.filter(rule="new-rule").exists()
