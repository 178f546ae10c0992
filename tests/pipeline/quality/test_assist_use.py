"""What an annotator did with a model suggestion, and the rule against rubber-stamping it
(pipeline/quality/assist_use.py: ``assist_recorded``; the rule ``accepts-wrong-suggestions`` in
pipeline/quality/rules.py). The whole story (a stamper and a careful annotator, pre-filtering too) is
in tests/pipeline/assist/test_assist.py; here: the rule's boundaries, and what is recorded when."""

from __future__ import annotations

import pytest

from annotation.models import Answer, AssistUse, Purpose, Standing, StandingStatus
from annotation.models.projects import SETTINGS
from pipeline.engine import assignment_next, assignment_payload, assignment_submit
from tests.pipeline.assist.test_assist import _body, _gold_with_wrong_suggestion, _top, _with_backend
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db


def _rule(project, lead, *, minimum: int, threshold: float, gold: int):
    """Every item a control item (while real work waits), ``gold`` gold items each with a wrong
    suggestion, the accuracy rule out of the way: only the suggestion rule can pause anyone."""
    _with_backend(
        project,
        "http://127.0.0.1:9",  # the suggestions are cached: nothing calls the backend
        control_rate=1.0,
        control_rate_new=1.0,
        control_rate_alert=1.0,
        monitoring_evidence=SETTINGS["monitoring_evidence"].high,
        assist_wrong_accept_min=minimum,
        assist_wrong_accept_threshold=threshold,
    )
    for n in range(gold):
        _gold_with_wrong_suggestion(project, lead, n)
    (waiting,) = screens(project, 1)
    return answering_question(waiting)


def _annotator(project, name: str):
    user = member(project, name)
    Standing.objects.create(project=project, user=user, stage="answers", status=StandingStatus.ACTIVE)
    return user


def _control(project, user, *, accept: bool) -> None:
    """One control item: the suggestion taken unchanged, or another element (the right one)."""
    lease = assignment_next(project=project, user=user, stage="answers")
    assert lease is not None and lease.purpose == Purpose.CONTROL
    suggestion = assignment_payload(assignment=lease)["suggestion"]
    elements = [_top(suggestion)] if accept else [{"vh_index": 1}]
    assignment_submit(assignment_id=lease.pk, user=user, data=_body(lease.question, elements))


def _status(user) -> str:
    return Standing.objects.get(user=user, stage="answers").status


def test_a_share_of_wrong_suggestions_accepted_exactly_at_the_threshold_does_not_pause(project, lead):
    # given the rule at "more than half, once two were met"
    _rule(project, lead, minimum=2, threshold=0.5, gold=3)
    stamper = _annotator(project, "stamper")
    # when the annotator accepts one wrong suggestion of two: exactly half
    _control(project, stamper, accept=True)
    _control(project, stamper, accept=False)
    # then they stay active
    assert _status(stamper) == StandingStatus.ACTIVE
    # and accepting the third (two of three: more than half) pauses them
    _control(project, stamper, accept=True)
    assert _status(stamper) == StandingStatus.PAUSED
    event = stamper.quality_events.get(rule="accepts-wrong-suggestions")
    assert (event.figures["wrong_met"], event.figures["wrong_accepted"]) == (3, 2)


def test_fewer_wrong_suggestions_met_than_the_minimum_never_pause_however_many_were_accepted(project, lead):
    # given the rule at "more than half, once three were met"
    _rule(project, lead, minimum=3, threshold=0.5, gold=3)
    stamper = _annotator(project, "stamper")
    # when the annotator accepts both of the first two (all of them, but two is under the minimum)
    for _ in range(2):
        _control(project, stamper, accept=True)
    assert _status(stamper) == StandingStatus.ACTIVE
    # then the third, at the minimum, decides
    _control(project, stamper, accept=True)
    assert _status(stamper) == StandingStatus.PAUSED


def test_a_threshold_of_one_turns_the_rule_off(project, lead):
    _rule(project, lead, minimum=2, threshold=1.0, gold=3)
    stamper = _annotator(project, "stamper")
    for _ in range(3):
        _control(project, stamper, accept=True)
    assert _status(stamper) == StandingStatus.ACTIVE
    # the uses are still recorded, each scored wrong, for the lead's figures
    assert (
        list(AssistUse.objects.filter(user=stamper).values_list("use", "suggestion_wrong", "correct"))
        == [("accepted", True, False)] * 3
    )


def test_another_annotators_accepted_suggestions_count_nothing_against_this_one(project, lead):
    # given two annotators under "more than half, once two were met"
    _rule(project, lead, minimum=2, threshold=0.5, gold=3)
    stamper, careful = _annotator(project, "stamper"), _annotator(project, "careful")
    # when one accepts two wrong suggestions and the other rejects one and accepts one
    _control(project, stamper, accept=True)
    _control(project, careful, accept=False)
    _control(project, stamper, accept=True)
    _control(project, careful, accept=True)
    # then only the stamper is paused: the careful one's share is their own (one of two)
    assert (_status(stamper), _status(careful)) == (StandingStatus.PAUSED, StandingStatus.ACTIVE)


def test_without_a_backend_nothing_is_recorded(project, lead):
    # given gold items with cached suggestions but no backend configured: nothing was shown
    _rule(project, lead, minimum=1, threshold=0.0, gold=2)
    project.assist_url = ""
    project.save(update_fields=["assist_url"])
    stamper = _annotator(project, "stamper")
    lease = assignment_next(project=project, user=stamper, stage="answers")
    assert lease.purpose == Purpose.CONTROL
    assignment_submit(assignment_id=lease.pk, user=stamper, data=_body(lease.question, [{"vh_index": 2}]))
    # then no use is recorded and the rule cannot fire, whatever the answer
    assert not AssistUse.objects.exists()
    assert _status(stamper) == StandingStatus.ACTIVE


def test_real_work_records_the_use_but_is_never_scored_against_gold(project, lead):
    # given real work only (no control item), with a suggestion cached for the waiting question
    question = _rule(project, lead, minimum=1, threshold=0.0, gold=0)
    project.control_rate = project.control_rate_new = project.control_rate_alert = 0.0
    project.save(update_fields=["control_rate", "control_rate_new", "control_rate_alert"])
    from annotation.models import Suggestion, SuggestionStatus

    candidate = question.screen.candidates.get(vh_index=2)
    Suggestion.objects.create(
        project=project,
        stage="answers",
        screen=question.screen,
        question=question,
        status=SuggestionStatus.OK,
        calls=1,
        result={"elements": [{"vh_index": 2, "bounds": candidate.bounds, "text": candidate.text, "score": 0.9}]},
    )
    stamper = _annotator(project, "stamper")
    lease = assignment_next(project=project, user=stamper, stage="answers")
    assert lease.purpose == Purpose.WORK
    suggestion = assignment_payload(assignment=lease)["suggestion"]
    assignment_submit(assignment_id=lease.pk, user=stamper, data=_body(lease.question, [_top(suggestion)]))
    # then the use is recorded (accepted), neither scored nor counted, and the answer keeps it
    use = AssistUse.objects.get(user=stamper)
    assert (use.purpose, use.use, use.suggestion_wrong, use.correct) == (Purpose.WORK, "accepted", None, None)
    assert Answer.objects.get(assignment=lease).suggestion_use == "accepted"
    assert _status(stamper) == StandingStatus.ACTIVE
