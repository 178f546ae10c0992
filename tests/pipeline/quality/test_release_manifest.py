"""The release manifest's quality section says, per stage, whose work is in the release and on what
evidence, what quality control withdrew and why, and what non-English apps took out apart from it."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from annotation.models import (
    Assignment,
    PrefilterJudgment,
    Question,
    QuestionState,
    ScreenState,
    Standing,
    StandingStatus,
)
from pipeline.engine import app_mark_non_english, assignment_next, assignment_submit, stages
from pipeline.jobs.runner import job_run_now
from pipeline.quality.gold import gold_item_create
from pipeline.quality.release import ITEMS, released_on_withdrawn_evidence
from pipeline.quality.standing import standing_act
from pipeline.release.export.service import release_export
from tests.factories import ProjectFactory
from tests.pipeline.quality.builders import rule_pause
from tests.pipeline.stages.helpers import answering_question, member, screens

pytestmark = pytest.mark.django_db

NO_EVIDENCE = {"controlled": 0, "review_accepted": 0, "provisional": 0}


def answer(project, user, expect=None):
    lease = assignment_next(project=project, user=user, stage="answers")
    assert lease is not None
    question = Question.objects.get(pk=lease.question_id)
    if expect is not None:
        assert question.pk == expect.pk
    body = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    return assignment_submit(assignment_id=lease.pk, user=user, data=body)


def judge(project, user, **flags):
    lease = assignment_next(project=project, user=user, stage="prefilter")
    body = {"non_english_app": False, "vh_out_of_sync": False, "note": "", **flags}
    return assignment_submit(assignment_id=lease.pk, user=user, data=body)


def test_each_kind_of_work_lands_in_its_bucket(project, tmp_path, django_capture_on_commit_callbacks):
    # given a project without control items unless asked, and its people
    project.control_rate = project.control_rate_new = 0
    project.fast_response_seconds = 0
    project.save()
    lead = member(project, "lead", role="lead")
    careful, spam, pat, rex, sam, jo = (member(project, n) for n in ("careful", "spam", "pat", "rex", "sam", "jo"))
    for user in (careful, spam, pat, rex):
        Standing.objects.create(project=project, user=user, stage="answers", status=StandingStatus.ACTIVE)
    # a judge (sam) lets one screen on to the question passes and excludes another as out of sync
    judged_fine, judged_out = screens(project, 2)
    judge(project, sam)
    judge(project, sam, vh_out_of_sync=True)
    # five questions to answer (one on the screen sam let on), one on an app a lead marks
    # non-English, one gold question for control items
    real = [answering_question(s, text=f"What does label 1 of {s.rico_id} say?") for s in screens(project, 4)]
    real.append(answering_question(judged_fine, text="What does label 1 say here?"))
    foreign = answering_question(screens(project, 1)[0], text="What does label 2 say?")
    gold_screen = screens(project, 1)[0]
    gold_q = answering_question(gold_screen, text="What is the first label?")
    Question.objects.filter(pk=gold_q.pk).update(state=QuestionState.KEPT)
    right = {"question": gold_q.text, "verdict": "answered", "elements": [{"vh_index": 1}], "full_answer": "So."}
    gold_item_create(project=project, stage="answers", screen=gold_screen, question=gold_q, answer=right, user=lead)
    app_mark_non_english(project=project, package=foreign.screen.app.package)
    # when: careful answers, a spammer who is never paused answers, a spammer a rule pauses
    # answers, an answerer a rule pauses and a lead reinstates answers
    answer(project, careful, expect=real[0])
    answer(project, pat, expect=real[1])
    answer(project, spam, expect=real[2])
    answer(project, rex, expect=real[3])
    answer(project, careful, expect=real[4])
    rule_pause(project, pat, "answers")
    answer(project, careful, expect=real[1])  # pat's question, asked again
    rule_pause(project, rex, "answers")
    standing_act(project=project, user_id=rex.pk, stage="answers", action="reinstate", actor=lead)
    # and careful passes a control item after their answers (served while a question waits for
    # them: a control item comes only beside real work; the question is gone again after it)
    waiting = answering_question(screens(project, 1)[0], text="What does label 3 say?")
    project.control_rate = project.control_rate_new = 1.0
    project.save()
    control = assignment_next(project=project, user=careful, stage="answers")
    assert control.purpose == "control"
    assignment_submit(assignment_id=control.pk, user=careful, data=right)
    project.control_rate = project.control_rate_new = 0
    project.save()
    waiting.screen.delete()
    # and a rule pauses the judge: the excluded screen is judged again by jo; the screen with
    # questions stays, on withdrawn evidence
    with django_capture_on_commit_callbacks(execute=True):
        rule_pause(project, sam, "prefilter")
    judged_out.refresh_from_db()
    assert judged_out.state == ScreenState.PREFILTER
    judge(project, jo, vh_out_of_sync=True)
    job_run_now(kind="postprocess", project_slug=project.slug)
    release_export(project=project, out_dir=tmp_path, fmt="screenqa")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    quality = manifest["quality"]
    assert manifest["manifest_version"] == 2
    # then the answers say whose they are and on what evidence: careful's three are vouched for by
    # the control item after them, the never-paused spammer's is provisional, the reinstated
    # answerer's is counted apart, the paused spammer's was withdrawn by the rule
    answers = quality["stages"]["answers"]
    assert answers["items"] == "answers"
    assert answers["in_release"] == {
        "total": 5,
        "by_standing": {
            "active": {"controlled": 3, "review_accepted": 0, "provisional": 1},
            "reinstated": {"controlled": 0, "review_accepted": 0, "provisional": 1},
            "lead": 0,
            "no_standing": 0,
        },
        "passed_controls_after": {"0": 2, "1": 3, "2": 0, "3+": 0},
    }
    assert answers["withdrawn"] == {
        "rule-pause": 1,
        "not-qualified-by-review": 0,
        "review-rejected": 0,
        "owed-qualification-failed": 0,
    }
    # and pre-filtering: the withdrawn judge's two judgments are out by the rule, jo's counts, and
    # the screen that went on on sam's word alone is in the release on withdrawn evidence; jo came to a
    # stage with no gold, so is counted as let in without a qualification set
    prefilter = quality["stages"]["prefilter"]
    assert prefilter["in_release"]["total"] == 1
    assert prefilter["in_release"]["by_standing"] == {
        "unqualified": {**NO_EVIDENCE, "provisional": 1},
        "lead": 0,
        "no_standing": 0,
    }
    assert prefilter["withdrawn"] == {
        "rule-pause": 2,
        "not-qualified-by-review": 0,
        "review-rejected": 0,
        "owed-qualification-failed": 0,
    }
    assert prefilter["released_on_withdrawn_evidence"] == {"screens": 1, "questions": 1}
    # and the app-language drop is filed apart, not as a quality withdrawal
    assert quality["app_language"] == {
        "apps_non_english": {"rule": 0, "lead": 1},
        "screens_excluded": 1,
        "questions_dropped": 1,
    }
    for name in stages():
        assert set(quality["stages"][name]["withdrawn"]) == {
            "rule-pause",
            "not-qualified-by-review",
            "review-rejected",
            "owed-qualification-failed",
        }
    questions = quality["stages"]["questions-1"]
    assert questions["withdrawn"]["rule-pause"] == 0 and "passed_controls_after" not in questions["in_release"]


def test_every_stage_says_what_its_items_are():
    assert set(ITEMS) == set(stages())


@pytest.mark.django_db
def test_released_on_withdrawn_evidence_counts_only_screens_short_of_judgments_that_count(project):
    # given a project that takes two judgments a screen, and three screens in the release, each with one
    # withdrawn judgment: one still has two that count, one has one, one has none
    project.prefilter_judgments = 2
    project.save()
    judges = [member(project, f"j{i}") for i in range(3)]
    now = timezone.now()

    def judged(screen, judge, *, withdrawn=False):
        lease = Assignment.objects.create(
            project=screen.project,
            stage="prefilter",
            screen=screen,
            annotator=judge,
            status="submitted",
            lease_expires_at=now,
            submitted_at=now,
        )
        PrefilterJudgment.objects.create(
            assignment=lease,
            screen=screen,
            annotator=judge,
            non_english_app=False,
            vh_out_of_sync=False,
            withdrawn_reason="author-paused" if withdrawn else "",
        )

    enough, short, none = screens(project, 3, state=ScreenState.ANSWERING, split="train")
    for screen, counting in ((enough, 2), (short, 1), (none, 0)):
        judged(screen, judges[0], withdrawn=True)
        for judge in judges[1 : 1 + counting]:
            judged(screen, judge)
        kept = answering_question(screen)
        Question.objects.filter(pk=kept.pk).update(state=QuestionState.KEPT)
    # decoys: a screen short of judgments with none withdrawn, another project's screen on withdrawn evidence
    (unjudged,) = screens(project, 1, state=ScreenState.ANSWERING, split="train")
    judged(unjudged, judges[1])
    Question.objects.filter(pk=answering_question(unjudged).pk).update(state=QuestionState.KEPT)
    elsewhere = ProjectFactory(slug="elsewhere")
    (far,) = screens(elsewhere, 1, state=ScreenState.ANSWERING, split="train")
    judged(far, judges[0], withdrawn=True)
    Question.objects.filter(pk=answering_question(far).pk).update(state=QuestionState.KEPT)
    # then only the two screens short of judgments that count are reported, with their kept questions
    assert released_on_withdrawn_evidence(project=project) == {"screens": 2, "questions": 2}
