"""The scripted crowd and the onboarding command."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

from annotation.models import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    Membership,
    PrefilterJudgment,
    Project,
    QualityEvent,
    Question,
    QuestionSource,
    QuestionState,
    Screen,
    ScreenState,
    Standing,
    StandingStatus,
)
from devtools.crowd import ScriptedAnnotator, crowd_screens_create, crowd_simulate
from frontend.hints import question_hints
from pipeline.decisions.decide import PREDECIDED_QUESTION_REASONS, QUALITY_ANSWER_REASONS
from pipeline.engine import assignment_double_leases
from pipeline.jobs.runner import job_run_now
from pipeline.quality.writers import written_questions
from pipeline.release.export.service import release_export
from pipeline.stages.answers import crowd_question_edit
from pipeline.stages.questions import QUESTION_TEMPLATES, RULE_BREAKING_TEMPLATES, QuestionsPass1
from tests.conftest import login_request
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def _not_ready_why(project: Project, summary: dict) -> dict:
    """What a crowd run that left the project short of ready left behind (an assertion's message: the
    simulation is deterministic only for given database ids, so a rare run can differ on CI)."""
    return {
        "pending": {name: n for name, n in summary["progress"]["pending"].items() if n},
        "refused": summary["refused"],
        "submitted": summary["submitted"],
        "skipped": summary["skipped"],
        "standings": list(
            Standing.objects.filter(project=project)
            .exclude(status=StandingStatus.ACTIVE)
            .values_list("user__username", "stage", "status", "reason")
        ),
        "events": list(
            QualityEvent.objects.filter(project=project)
            .exclude(rule__in=("started", "review-qualified"))
            .values_list("user__username", "stage", "rule", "figures")
        ),
        "leased": list(
            Assignment.objects.filter(project=project, status=AssignmentStatus.LEASED).values_list(
                "annotator__username", "stage", "screen_id", "question_id"
            )
        ),
    }


def test_simulated_crowd_makes_a_project_ready_for_postprocessing(project):
    # given 40 synthetic screens
    crowd_screens_create(project=project, count=40, seed=1)
    # when a crowd of 6 works through every stage
    summary = crowd_simulate(project=project, annotators=6, seed=1)
    # then the project is ready, with every rule visible in the data
    progress = summary["progress"]
    assert progress["ready_for_postprocessing"] is True, _not_ready_why(project, summary)
    assert progress["screens"]["prefilter"] == progress["screens"]["questions-1"] == 0
    assert progress["screens"]["excluded"] > 0 and progress["screens"]["answering"] > 0
    # one standing judgment per screen (a withdrawn one, if a rule paused its judge, stays as a record);
    # a screen without one lost its judge's judgment after questions were written on it, and stays where it
    # is (``prefilter._screens_reopen``): whether a rule pauses a judge that late depends on timing
    standing = list(PrefilterJudgment.objects.filter(withdrawn_reason="").values_list("screen_id", flat=True))
    assert len(standing) == len(set(standing))
    for screen in Screen.objects.filter(project=project).exclude(pk__in=standing):
        assert PrefilterJudgment.objects.filter(screen=screen).exclude(withdrawn_reason="").exists()
        assert screen.state not in (ScreenState.PREFILTER, ScreenState.QUESTIONS_1), screen.state
    assert len(standing) >= 40 - PrefilterJudgment.objects.exclude(withdrawn_reason="").count()
    assert summary["submitted"]["not-answerable"] >= 1
    for question in Question.objects.exclude(drop_reason__in=PREDECIDED_QUESTION_REASONS):
        # (an answer a reviewer rejected is withdrawn, and the question got another in its place;
        # a question a reviewer rejected left the release with its answers)
        live = [a for a in question.answers.all() if a.drop_reason not in QUALITY_ANSWER_REASONS]
        assert question.answers_done == question.answers_needed == len(live)
        assert question.author_id not in {a.annotator_id for a in question.answers.all()}
    verdicts = set(Answer.objects.values_list("verdict", flat=True))
    assert {"answered", "not_answerable"} <= verdicts
    drawn = AnswerElement.objects.filter(vh_index__isnull=True).count()
    picked = AnswerElement.objects.filter(vh_index__isnull=False).count()
    assert drawn > 0 and picked > 0  # both kinds of box are first-class
    assert assignment_double_leases(project=project) == 0
    # language is the app's: no screen of a non-English app went on, whatever its own judgment
    from annotation.models import App

    non_english = App.objects.filter(project=project, non_english=True)
    assert not Screen.objects.filter(app__in=non_english).exclude(state="excluded").exists()


def test_simulation_is_deterministic(project):
    def run(slug):
        target = ProjectFactory(slug=slug)
        crowd_screens_create(project=target, count=12, seed=3)
        # (five: a validation answer a reviewer rejects needs a fourth answerer other than the author)
        summary = crowd_simulate(project=target, annotators=5, seed=3)
        assert summary["progress"]["ready_for_postprocessing"] is True, _not_ready_why(target, summary)
        # The split and the not-answerable sample hash the project's slug (by design), so
        # compare what precedes them: pre-filter outcomes and the two question passes.
        rows = (
            Question.objects.filter(screen__project=target)
            .exclude(source="not-answerable")
            .order_by("screen__rico_id", "position")
        )
        outcomes = Screen.objects.filter(project=target).order_by("rico_id")
        return list(rows.values_list("screen__rico_id", "position", "text")), list(
            outcomes.values_list("rico_id", "exclusion_reason")
        )

    first, second = run("one"), run("two")
    assert first == second and len(first[0]) > 0


def test_crowd_question_edits_reach_the_release(project, tmp_path):
    # given a project a scripted crowd takes through every stage
    crowd_screens_create(project=project, count=40, seed=5)
    crowd_simulate(project=project, annotators=6, seed=5)
    # when the lead post-processes and exports
    assert job_run_now(kind="postprocess", project_slug=project.slug).status == "done"
    release_export(project=project, out_dir=tmp_path)
    # then about a fifth of the kept questions carry an edit that changes their text
    kept = list(Question.objects.filter(screen__project=project, state=QuestionState.KEPT))
    edited = [q for q in kept if q.final_text and q.final_text != q.text]
    assert 0.12 <= len(edited) / len(kept) <= 0.3, (len(edited), len(kept))
    assert all(q.final_text == crowd_question_edit(q.text) for q in edited)
    # and the release has the edited texts, not the texts as written
    exported = {
        (str(record["image_id"]), record["question"])
        for split in ("train", "validation", "test")
        for record in json.loads((tmp_path / "answers_and_bboxes" / f"{split}.json").read_text())
    }
    in_release = [q for q in edited if q.screen.split in ("train", "validation", "test")]
    assert in_release
    for q in in_release:
        assert (q.screen.rico_id, q.final_text) in exported and (q.screen.rico_id, q.text) not in exported


@pytest.mark.parametrize(
    ("text", "edited"),
    [
        ("what's the price", "What is the price?"),  # contraction, question mark, capital
        ("Which item isn't \"Don't stop\"", 'Which item is not "Don\'t stop"?'),  # quotes untouched
        ('What does "Sign in" say?', 'What does "Sign in" read?'),  # nothing to fix: reworded
        ('What is written next to "say"?', 'What is printed next to "say"?'),
    ],
)
def test_crowd_question_edit_changes_the_text(text, edited):
    assert crowd_question_edit(text) == edited


def test_every_question_the_crowd_writes_has_an_edit():
    # (so that ~20% of questions needing an edit means ~20% edited)
    for template in QUESTION_TEMPLATES:
        question = template.format(t="Sign in")
        assert crowd_question_edit(question) != question


def test_scripted_answerer_marks_unquoted_questions_not_answerable():
    bot = ScriptedAnnotator(username="x", seed=0)
    payload = {
        "stage": "answers",
        "question": {"id": 1, "text": "What is the phone number of the customer support?"},
        "screen": {"width": 540, "height": 960, "candidates": [{"vh_index": 1, "bounds": [0, 0, 9, 9], "text": "Hi"}]},
    }
    verdicts = {bot.work(payload)["verdict"] for _ in range(50)}
    assert "answered" not in verdicts


def test_too_small_a_crowd_is_refused(project):
    with pytest.raises(Exception, match="two annotators"):
        crowd_simulate(project=project, annotators=1)


def test_simulate_crowd_command(project):
    out = StringIO()
    call_command("simulate_crowd", "--project", "demo", "--annotators", "4", "--screens", "6", "--json", stdout=out)
    summary = json.loads(out.getvalue())
    assert summary["progress"]["ready_for_postprocessing"] is True
    with pytest.raises(CommandError):
        call_command("simulate_crowd", "--project", "nope", "--annotators", "4")
    assert not Project.objects.filter(slug="nope").exists()
    with pytest.raises(CommandError, match="Invalid project slug"):
        call_command("simulate_crowd", "--project", "Not A Slug", "--create", "--annotators", "4")


def test_simulate_crowd_creates_its_project_when_asked(db):
    # when the crowd is asked to work on a project that does not exist yet, with --create
    out = StringIO()
    call_command("simulate_crowd", "--project", "crowd", "--create", "--annotators", "4", "--screens", "4", "--json",
                 stdout=out)  # fmt: skip
    # then the project is made and worked through
    assert json.loads(out.getvalue())["progress"]["ready_for_postprocessing"] is True
    assert Project.objects.get(slug="crowd").screens.count() == 4


def test_create_annotators_prints_working_credentials(project, client):
    out = StringIO()
    call_command("create_annotators", "--project", "demo", "--count", "3", "--pool", "answers", "--json", stdout=out)
    members = json.loads(out.getvalue())
    assert [m["username"] for m in members] == ["demo/annotator-1", "demo/annotator-2", "demo/annotator-3"]
    assert client.login(request=login_request(), username=members[0]["username"], password=members[0]["password"])
    assert Token.objects.get(key=members[2]["token"]).user.username == "demo/annotator-3"
    assert Membership.objects.filter(project=project, in_answer_pool=True, role="annotator").count() == 3
    # a second run adds people instead of failing; leads are created the same way
    out = StringIO()
    call_command("create_annotators", "--project", "demo", "--count", "1", "--role", "lead", "--json", stdout=out)
    assert json.loads(out.getvalue())[0]["username"] == "demo/lead-1"
    assert Membership.objects.get(user__username="demo/lead-1").in_answer_pool is False
    with pytest.raises(CommandError):
        call_command("create_annotators", "--project", "demo", "--count", "0")
    with pytest.raises(CommandError):
        call_command("create_annotators", "--project", "nope", "--count", "1")


@pytest.mark.django_db(transaction=True)
def test_crowd_over_http_reaches_ready(live_server):
    # given a project and a running server (the same calls a crowd platform makes)
    project = ProjectFactory(slug="http-demo", answers_validation=1, answers_test=1)
    # when the crowd works through the REST API
    summary = crowd_simulate(project=project, annotators=3, seed=5, http_url=live_server.url, new_screens=5)
    # then the project is ready, and the work went through the assignments API
    assert summary["via"] == "http"
    assert summary["progress"]["ready_for_postprocessing"] is True
    assert summary["submitted"]["prefilter"] == 5


def test_expire_leases_command(project):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment, ScreenState
    from pipeline.engine import assignment_next
    from tests.pipeline.stages.helpers import member, screens

    screens(project, 1, state=ScreenState.QUESTIONS_1)
    lease = assignment_next(project=project, user=member(project, "a"), stage="questions-1")
    Assignment.objects.filter(pk=lease.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    out = StringIO()
    call_command("expire_leases", "--project", "demo", stdout=out)
    assert out.getvalue().strip() == "1 lease(s) expired"
    assert Assignment.objects.get(pk=lease.pk).status == "expired"


def test_simulate_crowd_with_profiles_and_qc(project):
    out = StringIO()
    call_command(
        "simulate_crowd",
        *("--project", "demo", "--annotators", "6", "--screens", "40", "--json"),
        *("--profiles", "careful=0.5,spammer=0.5", "--qc"),
        stdout=out,
    )
    summary = json.loads(out.getvalue())
    # The lead made gold in both stages with gold before the crowd started on them
    assert summary["lead_gold"]["prefilter"] > 0 and summary["lead_gold"]["answers"] > 0
    spammers = {name for name, profile in summary["profiles"].items() if profile == "spammer"}
    assert len(spammers) == 3
    # Every spammer is refused in pre-filtering (they fail the qualification)
    assert spammers <= set(summary["refused"]["prefilter"])
    assert not Answer.objects.filter(annotator__username__in=spammers).exists()
    with pytest.raises(CommandError, match="--profiles"):
        call_command("simulate_crowd", "--project", "demo", "--profiles", "careful=lots")
    with pytest.raises(CommandError, match="profiles"):
        call_command("simulate_crowd", "--project", "demo", "--profiles", "genius=1")


def test_crowd_rule_breaking_questions_break_exactly_their_rule():
    # Each rule-breaking template is seen by the writing hints as its rule (a review reason), and
    # an ordinary crowd question as none: careful pass-2 writers flag exactly the rule-breakers.
    for reason, template in RULE_BREAKING_TEMPLATES:
        assert reason in QuestionsPass1.review_reasons
        assert [h.kind for h in question_hints(template.format(t="Sign in"), others=[])] == [reason]
        assert ScriptedAnnotator.rule_broken(template.format(t="Most popular ads")) == reason
    for template in QUESTION_TEMPLATES:
        assert ScriptedAnnotator.rule_broken(template.format(t="How many ads are shown?")) is None


def test_careless_writers_are_flagged_by_pass2_writers(project):
    crowd_screens_create(project=project, count=40, seed=2)
    summary = crowd_simulate(project=project, annotators=6, seed=2, profiles={"careful": 0.5, "careless": 0.5})
    assert summary["progress"]["ready_for_postprocessing"] is True, _not_ready_why(project, summary)
    users = {m.user.username: m.user_id for m in Membership.objects.filter(project=project).select_related("user")}
    by_profile: dict[str, list[int]] = {"careful": [], "careless": []}
    for name, profile in summary["profiles"].items():
        by_profile[profile].append(users[name])
    figures = written_questions(project=project, author_ids=[*by_profile["careful"], *by_profile["careless"]])
    # Careless writers' rule-breaking questions are flagged by pass-2 writers and count against them ...
    careless = [figures[pk] for pk in by_profile["careless"] if pk in figures]
    assert sum(f.flagged_pass2 for f in careless) >= 5
    assert all(f.faulted >= f.flagged_pass2 for f in careless)
    # ... careful writers' questions are never flagged
    assert sum(figures[pk].flagged_pass2 for pk in by_profile["careful"] if pk in figures) == 0
    # Every flag names the rule its question breaks, on a pass-1 question, by another writer
    flagged = Question.objects.filter(screen__project=project).exclude(flag_reason="").select_related("flagged_by")
    assert flagged.exists()
    for question in flagged:
        assert question.source == QuestionSource.PASS_1
        assert ScriptedAnnotator.rule_broken(question.text) == question.flag_reason
        assert question.flagged_by.annotator_id != question.author_id
