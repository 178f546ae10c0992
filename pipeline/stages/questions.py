"""Question writing (per screen), two passes by two different writers of the same pool.

* ``questions-1``: one writer, 0 to ``questions_pass1_cap`` (5) questions;
* ``questions-2``: one *different* writer sees the pass-1 questions and adds 0 to
  ``questions_pass2_cap`` (3). Then the screen's questions are final: it gets its split
  and goes to ``answering``, or closes as ``no-questions``.

"One writer per pass", "one accepted submission per pass" and "two different writers"
are partial unique constraints of ``Assignment``; the queue and the re-check under the
screen lock keep them from ever firing in normal operation.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from django.db.models import F, Max, Q, QuerySet
from django.http import QueryDict
from rest_framework import serializers

from annotation.db import compiled
from annotation.exceptions import ConflictError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Project,
    QualityEvent,
    Question,
    QuestionSource,
    QuestionState,
    ReviewState,
    Screen,
    ScreenState,
    Stage,
    StandingStatus,
)
from pipeline.decisions.decide import (
    QUALITY_QUESTION_REASONS,
    REASON_AUTHOR_NOT_QUALIFIED,
    REASON_AUTHOR_PAUSED,
    REASON_REVIEW_REJECTED,
)

from .base import (
    StageDefinition,
    form_refuse,
    live_q,
    others_live_lease_exists,
    question_brief,
    screen_questions,
    taken_by_user_q,
    user_submitted_exists,
)
from .split import screen_questions_finalize
from .units import SCREEN
from .wire import (
    TEXT_MAX,
    AssignmentPayloadSerializer,
    QuestionBriefSerializer,
    StrictSerializer,
    TextField,
    stage_name_field,
)

QUESTION_TEMPLATES = [
    'What does "{t}" say?',
    'What is shown as "{t}"?',
    'Which item reads "{t}"?',
    'What is written next to "{t}"?',
]
# Questions that break a writing rule (the code of ``review_reasons`` it breaks), as a scripted
# careless writer sometimes writes them (the actor's ``rule_breaking`` share). Each is caught by the
# writing hints (``frontend.hints``) with exactly that rule (tests/devtools/test_crowd.py).
RULE_BREAKING_TEMPLATES = [
    ("counting", 'How many items are shown below "{t}"?'),
    ("arithmetic", 'What is the sum of the numbers next to "{t}"?'),
    ("comparison", 'Which price is the highest after "{t}"?'),
    ("ads", 'What does the ad next to "{t}" offer?'),
    ("yes-no", 'Why is "{t}" shown?'),
]


def _last_position(values: dict[str, Any]) -> QuerySet[Any]:
    """The screen's highest question position (no row: no question yet)."""
    by_screen = Question.objects.filter(screen=values["screen"]).order_by().values("screen")
    return by_screen.annotate(m=Max("position")).values_list("m")


def questions_create(*, assignment: Assignment, screen: Screen, texts: list[str], source: str, state: str) -> None:
    """Append questions to a screen (caller holds the screen lock, so positions are free)."""
    row = compiled.fetch_one(key="questions-last-position", build=_last_position, values={"screen": screen})
    last = row[0] if row else None
    first = 0 if last is None else last + 1
    answers_needed = screen.project.answers_needed(screen.split) if state == QuestionState.ANSWERING else 0
    Question.objects.bulk_create(
        [
            Question(
                screen=screen,
                author_id=assignment.annotator_id,
                origin=assignment,
                source=source,
                position=first + i,
                text=text,
                state=state,
                answers_needed=answers_needed,
            )
            for i, text in enumerate(texts)
        ]
    )


def questions_drop(*, written_by: QuerySet[Question], reason: str, event: QualityEvent | None = None) -> int:
    """Take questions out of the release (and of the answer queue) with ``reason``, noting the state
    each left (``dropped_from``) and the quality decision that took it out (``event``), so that
    undoing it (``questions_restore``) puts it back."""
    return written_by.exclude(state=QuestionState.DROPPED).update(
        state=QuestionState.DROPPED, drop_reason=reason, dropped_from=F("state"), withdrawn_by=event
    )


# A stopped writer's questions still in the data: answered ones too (an answer does not vouch for its
# question: answerers answer what they are given, spam included).
AUTHOR_WITHDRAWABLE = [QuestionState.DRAFTING, QuestionState.ANSWERING, QuestionState.ANSWERED, QuestionState.KEPT]


def author_questions_withdrawable(questions: QuerySet[Question]) -> QuerySet[Question]:
    """What a stopped writer's withdrawal takes of ``questions`` (theirs): everything still in the data
    but the sets a review accepted (a reviewer vouched for those, as a passed control item vouches for
    a judge's earlier work)."""
    return questions.filter(state__in=AUTHOR_WITHDRAWABLE).exclude(origin__review_state=ReviewState.ACCEPTED)


def author_withdrawal_reason(event: QualityEvent | None) -> str:
    """Why a stopped writer's questions leave the release: paused, or not qualified by review."""
    if event is not None and event.status_after == StandingStatus.NOT_QUALIFIED:
        return REASON_AUTHOR_NOT_QUALIFIED
    return REASON_AUTHOR_PAUSED


def questions_restore(questions: QuerySet[Question]) -> dict[str, int]:
    """Bring back questions quality control dropped: to the state they left, or the one their screen
    is in now (a question written during the passes whose screen has since got its split waits for
    the split's answers; one post-processing had kept is decided again). A question whose screen is
    excluded now stays out (``kept_out``). Nothing redoes a question, so nothing is ``redone``."""
    rows = list(
        questions.filter(state=QuestionState.DROPPED, drop_reason__in=QUALITY_QUESTION_REASONS)
        .select_related("screen", "screen__project")
        .order_by("pk")
    )
    targets: dict[tuple[str, int | None], list[int]] = {}  # (state, answers_needed or None: as is)
    kept_out = 0
    for question in rows:
        screen = question.screen
        was = question.dropped_from
        if screen.state in (ScreenState.QUESTIONS_1, ScreenState.QUESTIONS_2):
            target: tuple[str, int | None] = (QuestionState.DRAFTING, None)
        elif screen.state == ScreenState.ANSWERING and was in (QuestionState.ANSWERING, QuestionState.ANSWERED):
            target = (was, None)
        elif screen.state == ScreenState.ANSWERING and was == QuestionState.KEPT:
            target = (QuestionState.ANSWERED, None)
        elif screen.state == ScreenState.ANSWERING:
            target = (QuestionState.ANSWERING, question.answers_needed or screen.project.answers_needed(screen.split))
        else:
            kept_out += 1
            continue
        targets.setdefault(target, []).append(question.pk)
    for (state, answers_needed), ids in targets.items():
        fields: dict[str, Any] = {"state": state, "drop_reason": "", "dropped_from": "", "withdrawn_by": None}
        if answers_needed is not None:
            fields["answers_needed"] = answers_needed
        Question.objects.filter(pk__in=ids).update(**fields)
    return {"restored": sum(len(ids) for ids in targets.values()), "redone": 0, "kept_out": kept_out}


class QuestionsSubmitSerializer(StrictSerializer):
    questions = serializers.ListField(
        child=TextField(),
        error_messages={"not_a_list": "Give a list of questions (an empty list means nothing to ask)."},
        help_text="0..5 (pass 1) or 0..3 (pass 2) questions (the project's caps); [] means nothing to ask",
    )

    def validate_questions(self, texts: list[str]) -> list[str]:
        cap = self.context["limits"]["max_questions"]
        if len(texts) > cap:
            raise serializers.ValidationError(f"At most {cap} questions in this pass.")
        asked = {t.casefold() for t in self.context.get("asked", [])}
        written: dict[str, int] = {}
        for i, text in enumerate(texts):
            key = text.casefold()
            if key in asked:
                raise serializers.ValidationError({str(i): ["This question is already asked on this screen."]})
            if key in written:
                raise serializers.ValidationError({str(i): [f"Question {i + 1} repeats question {written[key] + 1}."]})
            written[key] = i
        return texts


class QuestionFlagSerializer(StrictSerializer):
    question_id = serializers.IntegerField(help_text="a pass-1 question of the screen (``previous_questions``)")
    reason = serializers.CharField(help_text="the writing rule it breaks: a code of the stage's review reasons")


class QuestionsPass2SubmitSerializer(QuestionsSubmitSerializer):
    flags = QuestionFlagSerializer(
        many=True,
        required=False,
        default=list,
        help_text="pass-1 questions that break a writing rule, each at most once (feedback to their writer)",
    )

    def validate_flags(self, flags: list[dict[str, Any]]) -> list[dict[str, Any]]:
        previous = self.context.get("flaggable", {})
        reasons = self.context.get("flag_reasons", {})
        seen: set[int] = set()
        for i, flag in enumerate(flags):
            if flag["question_id"] not in previous:
                raise serializers.ValidationError({str(i): ["Not a pass-1 question of this screen."]})
            if flag["question_id"] in seen:
                raise serializers.ValidationError({str(i): ["This question is already flagged."]})
            if flag["reason"] not in reasons:
                raise serializers.ValidationError({str(i): [f"Unknown reason; one of {', '.join(reasons)}."]})
            seen.add(flag["question_id"])
        return flags


class QuestionsPass1PayloadSerializer(AssignmentPayloadSerializer):
    stage = stage_name_field(Stage.QUESTIONS_1)
    max_questions = serializers.IntegerField(help_text="the cap of this pass")


class QuestionsPass2PayloadSerializer(QuestionsPass1PayloadSerializer):
    stage = stage_name_field(Stage.QUESTIONS_2)
    previous_questions = QuestionBriefSerializer(many=True, help_text="the screen's pass-1 questions")


class QuestionsPass1(StageDefinition):
    name = Stage.QUESTIONS_1
    label = "Questions, pass 1"
    short_label = "Q. pass 1"
    unit = SCREEN
    screen_state = ScreenState.QUESTIONS_1
    source = QuestionSource.PASS_1
    submit_serializer = QuestionsSubmitSerializer
    payload_serializer = QuestionsPass1PayloadSerializer
    template = "frontend/workspace/questions.html"
    controller = "questions"
    messages = {
        "empty": "Write at least one question, or choose “Nothing to ask”.",
        "repeat": "Question {a} repeats question {b}.",
    }
    # The papers' writing rules: what a reviewer rejects a question set for.
    review_reasons = {
        "not-natural": "Not a natural question a user of the app would ask",
        "not-on-screen": "The answer cannot be read off the screen",
        "counting": "Needs counting",
        "arithmetic": "Needs arithmetic",
        "comparison": "Needs a comparison across the screen",
        "ads": "About an advertisement",
        "long-paragraph": "Question answering over a long paragraph",
        "yes-no": "Yes/no or why, and the screen does not state it",
        "duplicate": "Repeats a question of the screen",
    }
    # Numbers of questions a scripted writer picks (0, 1, 2, ...), by weight.
    crowd_weights: tuple[int, ...] = (10, 15, 25, 25, 15, 10)
    crowd_skips = True

    def cap(self, project: Project) -> int:
        return project.questions_pass1_cap

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        return (
            Screen.objects.filter(project=project, state=self.screen_state)
            .exclude(self.unit.has(self.name, live_q(now)))
            .exclude(self.unit.has(self.name, taken_by_user_q(user)))
            .order_by("queue_key", "pk")
        )

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        screen: Screen = unit
        if screen.state != self.screen_state:
            return False
        return not others_live_lease_exists(stage=self.name, now=now, own=own, screen=screen)

    def limits(self, *, project: Project) -> dict[str, int]:
        return {"max_questions": self.cap(project), "text_max": TEXT_MAX}

    def submit_context(self, *, assignment: Assignment) -> dict[str, Any]:
        """``asked``: the screen's questions the submission must not repeat (none before pass 1)."""
        return {**super().submit_context(assignment=assignment), "asked": []}

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        screen: Screen = unit
        if screen.state != self.screen_state:
            raise ConflictError("This screen's questions for this pass are already written.")
        questions_create(
            assignment=assignment,
            screen=screen,
            texts=cleaned["questions"],
            source=self.source,
            state=QuestionState.DRAFTING,
        )
        self.finish(screen=screen, now=now)

    def finish(self, *, screen: Screen, now: datetime) -> None:
        screen.state = ScreenState.QUESTIONS_2
        compiled.update(screen, ("state",))  # every pass-1 submit: one UPDATE built once

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        return {"max_questions": self.cap(assignment.project)}

    # --- quality control -------------------------------------------------------------------

    def review_rejected(self, *, reviewed: Assignment, reason: str, now: datetime) -> None:
        """The set's questions leave the release, with the review's reason."""
        questions_drop(written_by=Question.objects.filter(origin=reviewed), reason=REASON_REVIEW_REJECTED)

    def review_reverted(self, *, reviewed: Assignment, now: datetime) -> dict[str, int]:
        return questions_restore(Question.objects.filter(origin=reviewed, drop_reason=REASON_REVIEW_REJECTED))

    def withdraw(
        self,
        *,
        project: Project,
        user: Any,
        requeue: bool,
        now: datetime,
        event: QualityEvent | None = None,
        assignments: Collection[int] | None = None,
    ) -> int:
        """The stopped writer's questions of this pass leave the release, answered or not, but for the
        sets a review accepted (``author_questions_withdrawable``), with the reason of the decision
        (``author-paused``, or ``author-not-qualified`` when the review of their first submissions
        decided they did not qualify)."""
        mine = Question.objects.filter(screen__project=project, author=user, source=self.source)
        if assignments is not None:
            mine = mine.filter(origin_id__in=list(assignments))
        return questions_drop(
            written_by=author_questions_withdrawable(mine), reason=author_withdrawal_reason(event), event=event
        )

    def restore(self, *, project: Project, user: Any, event: QualityEvent, now: datetime) -> dict[str, int]:
        withdrawn = Question.objects.filter(screen__project=project, withdrawn_by=event)
        return questions_restore(withdrawn.filter(source=self.source))

    # --- the page ----------------------------------------------------------------------------

    def form_body(self, *, post: QueryDict, assignment: Assignment) -> dict[str, Any]:
        """An empty list only through the explicit "nothing to ask" action."""
        if post.get("action") == "nothing":
            return {"questions": []}
        questions = [q.strip() for q in post.getlist("question") if q.strip()]
        if not questions:
            raise form_refuse(self.messages["empty"], field="questions")
        return {"questions": questions}

    def form_state(self, *, post: QueryDict) -> dict[str, Any]:
        return {"questions": post.getlist("question")}

    def draft_lines(self, *, draft: dict[str, Any]) -> list[tuple[str, str]]:
        texts = draft.get("questions") if isinstance(draft.get("questions"), list) else []
        return [(f"Question {i + 1}", t) for i, t in enumerate(texts or []) if isinstance(t, str) and t.strip()]

    def page_context(self, *, payload: dict[str, Any], state: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
        cap = limits["max_questions"]
        typed = state.get("questions") if isinstance(state.get("questions"), list) else []
        fields = [q if isinstance(q, str) else "" for q in typed or []][:cap]
        return {
            "questions": fields + [""] * (cap - len(fields)),
            "previous_questions": [q["text"] for q in payload.get("previous_questions") or []],
        }

    # --- progress and crowd ------------------------------------------------------------------

    def pending(self, *, project: Project, screens: dict[str, int], questions: dict[str, int]) -> int:
        return screens.get(self.screen_state, 0)

    def crowd_submission(self, *, payload: dict[str, Any], actor: Any) -> dict[str, Any]:
        """Questions quoting the screen's candidate texts (``What does "Sign in" say?``),
        never repeating one already on the screen; the actor's ``rule_breaking`` share of them
        (default none) breaks a writing rule (``RULE_BREAKING_TEMPLATES``), drawn from the actor's
        ``rules_rng`` when it has one, so its other draws are the same with or without."""
        cap = payload.get("max_questions", 5)
        weights = self.crowd_weights
        wanted = min(cap, actor.rng.choices(range(len(weights)), weights=weights)[0])
        asked = {q["text"].casefold() for q in payload.get("previous_questions", [])}
        texts = list(dict.fromkeys(c["text"][:40] for c in payload["screen"]["candidates"] if c["text"].strip()))
        actor.rng.shuffle(texts)
        breaks = getattr(actor, "rule_breaking", 0.0)
        rules_rng = getattr(actor, "rules_rng", actor.rng)
        questions: list[str] = []
        for text in texts:
            if len(questions) >= wanted:
                break
            template = actor.rng.choice(QUESTION_TEMPLATES)
            # Rule breaking draws from its own stream: the actor's other choices stay as they were.
            if breaks and rules_rng.random() < breaks:
                template = rules_rng.choice(RULE_BREAKING_TEMPLATES)[1]
            question = template.format(t=text.replace('"', "'"))
            if question.casefold() not in asked:
                asked.add(question.casefold())
                questions.append(question)
        return {"questions": questions}


class QuestionsPass2(QuestionsPass1):
    """Pass 2 also lets its writer flag a pass-1 question with the writing rule it breaks
    (``flags``): the question stays (answerers still judge it), the flag is recorded on it
    (``Question.flag_reason``, ``flagged_by``) and counts in the pass-1 writer's quality, unless
    the flagging submission is rejected in review or withdrawn from a paused writer."""

    name = Stage.QUESTIONS_2
    label = "Questions, pass 2"
    short_label = "Q. pass 2"
    screen_state = ScreenState.QUESTIONS_2
    source = QuestionSource.PASS_2
    submit_serializer = QuestionsPass2SubmitSerializer
    payload_serializer = QuestionsPass2PayloadSerializer
    crowd_weights = (35, 35, 20, 10)
    crowd_skips = False

    def cap(self, project: Project) -> int:
        return project.questions_pass2_cap

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        # The pass-1 writer of a screen never writes its pass 2.
        wrote_pass1 = Q(annotator=user, status=AssignmentStatus.SUBMITTED)
        return super().queue(project=project, user=user, now=now).exclude(self.unit.has(Stage.QUESTIONS_1, wrote_pass1))

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        if not super().open_to(unit=unit, user=user, now=now, own=own):
            return False
        return not user_submitted_exists(stage=Stage.QUESTIONS_1, screen=unit, user=user)

    def submit_context(self, *, assignment: Assignment) -> dict[str, Any]:
        """The screen's questions (one query): none may be repeated, pass 1's may be flagged."""
        earlier = screen_questions(assignment.screen, not_from=assignment)
        return {
            **StageDefinition.submit_context(self, assignment=assignment),
            "asked": [q.text for q in earlier],
            "flaggable": {q.pk: q.text for q in earlier if q.source == QuestionSource.PASS_1},
            "flag_reasons": self.review_reasons,
        }

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        if Assignment.objects.filter(
            screen=unit,
            stage=Stage.QUESTIONS_1,
            annotator_id=assignment.annotator_id,
            status=AssignmentStatus.SUBMITTED,
        ).exists():
            raise ConflictError("You wrote pass 1 of this screen; pass 2 needs a different writer.")
        flagged: dict[str, list[int]] = {}  # one UPDATE per reason, not per flag
        for flag in cleaned.get("flags", []):
            flagged.setdefault(flag["reason"], []).append(flag["question_id"])
        for reason, ids in flagged.items():
            Question.objects.filter(pk__in=ids, screen=unit, source=QuestionSource.PASS_1).update(
                flag_reason=reason, flagged_by=assignment
            )
        super().apply(assignment=assignment, unit=unit, cleaned=cleaned, now=now)

    def finish(self, *, screen: Screen, now: datetime) -> None:
        screen_questions_finalize(screen=screen, now=now)

    # Withdrawn work's flags do not count against the pass-1 writers (the submission keeps them).

    def review_rejected(self, *, reviewed: Assignment, reason: str, now: datetime) -> None:
        super().review_rejected(reviewed=reviewed, reason=reason, now=now)
        Question.objects.filter(flagged_by=reviewed).update(flag_reason="", flagged_by=None)

    def review_reverted(self, *, reviewed: Assignment, now: datetime) -> dict[str, int]:
        restored = super().review_reverted(reviewed=reviewed, now=now)
        _flags_apply([reviewed])
        return restored

    def withdraw(
        self,
        *,
        project: Project,
        user: Any,
        requeue: bool,
        now: datetime,
        event: QualityEvent | None = None,
        assignments: Collection[int] | None = None,
    ) -> int:
        withdrawn = super().withdraw(
            project=project, user=user, requeue=requeue, now=now, event=event, assignments=assignments
        )
        flagged = Question.objects.filter(screen__project=project, flagged_by__annotator=user)
        if assignments is not None:
            flagged = flagged.filter(flagged_by_id__in=list(assignments))
        flagged.update(flag_reason="", flagged_by=None)
        return withdrawn

    def restore(self, *, project: Project, user: Any, event: QualityEvent, now: datetime) -> dict[str, int]:
        """The questions come back, and the flags of their submissions that review did not reject."""
        restored = super().restore(project=project, user=user, event=event, now=now)
        _flags_apply(
            Assignment.objects.filter(
                project=project, annotator=user, stage=self.name, status=AssignmentStatus.SUBMITTED
            ).exclude(review_state=ReviewState.REJECTED)
        )
        return restored

    # The page: one choice per pass-1 question, named ``flag-<question id>`` ("" = no flag).

    def form_body(self, *, post: QueryDict, assignment: Assignment) -> dict[str, Any]:
        flags = self.form_state(post=post)["flags"]
        body = super().form_body(post=post, assignment=assignment)
        return {**body, "flags": flags}

    def form_state(self, *, post: QueryDict) -> dict[str, Any]:
        flags = [
            {"question_id": int(key.removeprefix("flag-")), "reason": reason}
            for key, reason in post.items()
            if key.startswith("flag-") and key.removeprefix("flag-").isdigit() and reason
        ]
        return {**super().form_state(post=post), "flags": flags}

    def page_context(self, *, payload: dict[str, Any], state: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
        typed = state.get("flags") if isinstance(state.get("flags"), list) else []
        chosen = {f.get("question_id"): f.get("reason") for f in typed or [] if isinstance(f, dict)}
        return {
            **super().page_context(payload=payload, state=state, limits=limits),
            "flag_questions": [
                {"id": q["id"], "text": q["text"], "flag": chosen.get(q["id"], "")}
                for q in payload.get("previous_questions") or []
            ],
            "flag_reasons": self.review_reasons,
        }

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        return {
            "max_questions": self.cap(assignment.project),
            "previous_questions": [question_brief(q) for q in screen_questions(assignment.screen)],
        }

    def crowd_submission(self, *, payload: dict[str, Any], actor: Any) -> dict[str, Any]:
        """Pass 1's questions, and ``flags``: each pass-1 question the actor sees breaking a
        writing rule (``actor.rule_broken(text)``: a code of ``review_reasons`` or None) is
        flagged with it ``flagging`` of the time (default always)."""
        body = super().crowd_submission(payload=payload, actor=actor)
        rule_broken = getattr(actor, "rule_broken", None)
        flagging = getattr(actor, "flagging", 1.0)
        rules_rng = getattr(actor, "rules_rng", actor.rng)
        if rule_broken is None or not flagging:
            return {**body, "flags": []}
        flags = []
        for question in payload.get("previous_questions") or []:
            reason = rule_broken(question["text"])
            if reason in self.review_reasons and (flagging >= 1 or rules_rng.random() < flagging):
                flags.append({"question_id": question["id"], "reason": reason})
        return {**body, "flags": flags}


def _flags_apply(submissions: Any) -> None:
    """Record again the flags that pass-2 ``submissions`` made (they keep them in ``submission``) on
    the pass-1 questions nobody else flagged meanwhile."""
    for submission in submissions:
        for flag in (submission.submission or {}).get("flags", []):
            Question.objects.filter(
                pk=flag["question_id"], screen_id=submission.screen_id, source=QuestionSource.PASS_1, flagged_by=None
            ).update(flag_reason=flag["reason"], flagged_by=submission)
