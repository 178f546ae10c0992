"""The quality rules' table (``pipeline.quality.rules.TABLE``): one entry is everything about a rule.
Checked against the code that records events, the declared settings and docs/quality.md; and a rule
added to the table alone pauses, through every moment it can be checked at."""

from __future__ import annotations

import ast
import dataclasses
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.exceptions import PermissionDeniedError
from annotation.models import (
    Assignment,
    AssistUse,
    ControlResult,
    Purpose,
    QualityEvent,
    ScreenState,
    Standing,
    StandingStatus,
)
from annotation.models.projects import SETTINGS
from pipeline.engine import assignment_next, assignment_skip, assignment_submit, stage_get
from pipeline.quality import rules
from pipeline.quality.rules import MOMENTS, RULES, TABLE, Finding
from tests.factories import ProjectFactory, ScreenFactory
from tests.pipeline.quality.report_builders import START, control, standing, work
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


# --- each check by itself: its boundaries, words, figures and scope -------------------------------------


def _seen(project, assignment, *, stage="prefilter", now=None, standing=None):
    return rules.Seen(
        stage=stage_get(stage), project=project, assignment=assignment, now=now or timezone.now(), standing=standing
    )


def _use(project, user, *, use="accepted", wrong=True, purpose="control", stage="prefilter"):
    assignment = work(project, user, stage=stage)
    return AssistUse.objects.create(
        assignment=assignment, project=project, user=user, stage=stage, purpose=purpose, use=use, suggestion_wrong=wrong
    )


def test_wrong_accepts_counts_this_annotators_wrong_suggestions_on_control_items_in_this_stage(project):
    annie, bob = member(project, "annie"), member(project, "bob")
    elsewhere = ProjectFactory(slug="elsewhere")
    # decoys first: another annotator's, another project's, another stage's, real work's, a right suggestion
    _use(project, bob)
    _use(elsewhere, annie)
    _use(project, annie, stage="questions-1")
    _use(project, annie, purpose="work")
    _use(project, annie, wrong=False)
    _use(project, annie, wrong=None)
    # annie met three wrong suggestions on control items: two accepted unchanged, one edited
    _use(project, annie)
    _use(project, annie)
    _use(project, annie, use="edited")
    assert rules.wrong_accepts(project_id=project.pk, user_id=annie.pk, stage="prefilter") == (3, 2)
    assert rules.wrong_accepts(project_id=project.pk, user_id=bob.pk, stage="prefilter") == (1, 1)


@pytest.mark.parametrize(
    ("met", "accepted", "minimum", "threshold", "pauses"),
    [
        (4, 4, 5, 0.5, False),  # under the minimum met: never, even all accepted
        (5, 3, 5, 0.5, True),  # at the minimum, more than the share
        (6, 3, 5, 0.5, False),  # exactly the share is not more than it
        (6, 4, 5, 0.5, True),
    ],
)
def test_accepting_wrong_suggestions_pauses_past_the_share_once_enough_were_met(
    project, met, accepted, minimum, threshold, pauses
):
    project.assist_wrong_accept_min, project.assist_wrong_accept_threshold = minimum, threshold
    project.save()
    annie = member(project, "annie")
    for i in range(met):
        last = _use(project, annie, use="accepted" if i < accepted else "edited")
    finding = rules.accepts_wrong_suggestions(_seen(project, last.assignment))
    if not pauses:
        assert finding is None
        return
    assert finding == Finding(
        f"you accepted {accepted} of the {met} wrong suggestions on control items without changing them",
        {"wrong_met": met, "wrong_accepted": accepted, "threshold": threshold},
    )


def test_the_control_accuracy_finding_reads_this_standings_last_ten_control_results(project):
    annie, bob = member(project, "annie"), member(project, "bob")
    elsewhere = ProjectFactory(slug="elsewhere")
    project.monitoring_threshold, project.monitoring_evidence = 0.91237, 4.0
    project.save()
    # annie's control items: one wrong long ago, then ten: 7 right, 3 wrong
    control(project, annie, correct=False)
    for correct in [True] * 7 + [False] * 3:
        control(project, annie, correct=correct)
    # decoys, all wrong, made last (the read takes the newest): another project's, another annotator's,
    # another stage's, a qualification item
    control(elsewhere, annie, correct=False)
    control(project, bob, correct=False)
    other_stage = control(project, annie, correct=False)
    ControlResult.objects.filter(pk=other_stage.pk).update(stage="answers")
    control(project, annie, correct=False, purpose=Purpose.QUALIFICATION, attempt=1)
    row = standing(project, annie, evidence=4.5)
    finding = rules.control_accuracy(_seen(project, work(project, annie), standing=row))
    assert finding == Finding(
        "7 of your last 10 control items were right",
        {
            "evidence": 4.5,
            "bound": 4.0,
            "bar": 0.91237,
            "good": round(1 - 0.6 * (1 - 0.91237), 4),
            "bad": round(1 - 4 * (1 - 0.91237), 4),
            "recent": [False] * 3 + [True] * 7,
        },
    )
    assert (finding.figures["good"], finding.figures["bad"]) == (0.9474, 0.6495)  # four digits, not five
    # under the bound: no finding
    row.evidence = 3.99
    assert rules.control_accuracy(_seen(project, work(project, annie), standing=row)) is None


def _done(project, user, *, seconds, stage="prefilter", status="submitted", at=None):
    """A submitted (or other) assignment of ``user`` that took ``seconds``, ending at ``at``."""
    end = at or START
    return Assignment.objects.create(
        project=project,
        stage=stage,
        screen=ScreenFactory(project=project),
        annotator=user,
        status=status,
        lease_expires_at=end + timedelta(hours=1),
        submitted_at=end if status == "submitted" else None,
    )


def _created(assignment, at):
    Assignment.objects.filter(pk=assignment.pk).update(created_at=at)
    assignment.refresh_from_db()
    return assignment


def _fast_setup(project, *, seconds=2.0, count=3, window=10):
    project.fast_response_seconds, project.fast_response_count, project.fast_response_window = seconds, count, window
    project.save()


def _submit_taking(project, user, seconds, *, at):
    """The submit just made: it took ``seconds`` and is in the database already, as when the rules run."""
    return _created(_done(project, user, seconds=seconds, at=at), at - timedelta(seconds=seconds))


def _earlier(project, user, seconds, *, minutes_ago, now, **kw):
    end = now - timedelta(minutes=minutes_ago)
    return _created(_done(project, user, seconds=seconds, at=end, **kw), end - timedelta(seconds=seconds))


def test_fast_responses_count_this_submit_once_and_only_this_annotators_stage_and_project(project):
    _fast_setup(project, count=2)
    annie, bob = member(project, "annie"), member(project, "bob")
    elsewhere = ProjectFactory(slug="elsewhere")
    now = START
    # fast decoys: another project's, another annotator's, another stage's
    _earlier(elsewhere, annie, 1, minutes_ago=1, now=now)
    _earlier(project, bob, 1, minutes_ago=1, now=now)
    _earlier(project, annie, 1, minutes_ago=1, now=now, stage="questions-1")
    current = _submit_taking(project, annie, 1, at=now)
    # one fast submit (this one, counted once) of the two that pause
    assert rules.fast_responses(_seen(project, current, now=now)) is None
    _earlier(project, annie, 1.5, minutes_ago=2, now=now)
    assert rules.fast_responses(_seen(project, current, now=now)) == Finding(
        "2 of your last 2 submits took less than 2 s", {"fast": 2, "window": 2, "seconds": 2.0}
    )


def test_fast_responses_window_holds_submits_only(project):
    _fast_setup(project, count=3, window=3)
    annie = member(project, "annie")
    now = START
    _earlier(project, annie, 1, minutes_ago=3, now=now)
    _earlier(project, annie, 1, minutes_ago=2, now=now)
    current = _submit_taking(project, annie, 1, at=now)
    assert rules.fast_responses(_seen(project, current, now=now)) is not None
    # a skip since then does not take a place in the window of submits
    _done(project, annie, seconds=0, status="skipped")
    assert rules.fast_responses(_seen(project, current, now=now)) is not None


def test_a_window_of_one_is_this_submit_alone(project):
    _fast_setup(project, count=2, window=1)
    annie = member(project, "annie")
    now = START
    _earlier(project, annie, 1, minutes_ago=1, now=now)
    current = _submit_taking(project, annie, 1, at=now)
    assert rules.fast_responses(_seen(project, current, now=now)) is None


def test_a_minimum_time_under_a_second_still_counts(project):
    _fast_setup(project, seconds=0.5, count=2)
    annie = member(project, "annie")
    now = START
    _earlier(project, annie, 0.1, minutes_ago=1, now=now)
    current = _submit_taking(project, annie, 0.1, at=now)
    assert rules.fast_responses(_seen(project, current, now=now)) == Finding(
        "2 of your last 2 submits took less than 0.5 s", {"fast": 2, "window": 2, "seconds": 0.5}
    )


def _skips_setup(project, limit):
    project.skips_in_a_row = limit
    project.save()


def _updated(assignment, at):
    Assignment.objects.filter(pk=assignment.pk).update(updated_at=at)
    return assignment


def test_skips_in_a_row_read_this_annotators_stage_and_project_by_time(project):
    _skips_setup(project, 2)
    annie, bob = member(project, "annie"), member(project, "bob")
    elsewhere = ProjectFactory(slug="elsewhere")
    # annie: a skip, then a submit (the latest): not two skips in a row
    _updated(_done(project, annie, seconds=1, status="skipped"), START)
    submitted = _updated(_done(project, annie, seconds=1), START + timedelta(minutes=1))
    # newer skips of another project, another annotator and another stage, two of each
    for minute in (2, 3):
        _updated(_done(elsewhere, annie, seconds=1, status="skipped"), START + timedelta(minutes=minute))
        _updated(_done(project, bob, seconds=1, status="skipped"), START + timedelta(minutes=minute))
        _updated(
            _done(project, annie, seconds=1, status="skipped", stage="questions-1"), START + timedelta(minutes=minute)
        )
    assert rules.skips_in_a_row(_seen(project, submitted)) is None


def test_skips_in_a_row_go_by_when_the_item_ended_not_by_id(project):
    _skips_setup(project, 2)
    annie = member(project, "annie")
    first = _updated(_done(project, annie, seconds=1, status="skipped"), START + timedelta(minutes=3))
    _updated(_done(project, annie, seconds=1), START)
    last = _updated(_done(project, annie, seconds=1, status="skipped"), START + timedelta(minutes=2))
    # a lease given back since is neither a skip nor a submit
    _updated(_done(project, annie, seconds=1, status="released"), START + timedelta(minutes=4))
    assert rules.skips_in_a_row(_seen(project, last)) == Finding("your last 2 items were skipped", {"skips": 2})
    assert first.pk < last.pk


def test_one_skip_in_a_row_is_a_limit_too(project):
    _skips_setup(project, 1)
    annie = member(project, "annie")
    skipped = _done(project, annie, seconds=1, status="skipped")
    assert rules.skips_in_a_row(_seen(project, skipped)) == Finding("your last 1 items were skipped", {"skips": 1})
    _skips_setup(project, 0)
    assert rules.skips_in_a_row(_seen(project, skipped)) is None
