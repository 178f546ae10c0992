"""Review (per submission): a reviewer (a member with the reviewer or lead role) accepts a
sampled submission of another stage, or rejects it with a reason from that stage's rules and a
comment. The sample: ``project.review_rate`` of each annotator's submissions, and all of a
writer's first submissions while they qualify by review (``pipeline.quality.standing``).

A rejection does what the reviewed stage says (``StageDefinition.review_rejected``): a rejected
answer leaves the release and its question waits for another annotator; a rejected question set
or not-answerable question leaves the release with its reason. The annotator sees the verdict,
the reason and the comment on their "My work" page.

Reviewers are checked on gold reviews (``pipeline.quality.review_gold``): a gold item of this stage
is a reviewed submission with its known verdict, served as a control item exactly like a real review
item and scored by the verdict (``gold_score``). A share (``review_double_rate``) of reviewed
submissions is reviewed a second time by another reviewer: the second review decides nothing and
counts in the reviewers' agreement.

A stopped reviewer's reviews are withdrawn (``ReviewStage.withdraw``): each stays for the record
but lets go of its submission, which goes back to the review queue; a rejection's effects are
undone (``StageDefinition.review_reverted``: its questions or answer come back unless others
redid them), and a writer's qualification by review that counted it is decided again (the signal
``reviews_withdrawn``, on which quality control acts). A lead who reinstates the reviewer brings back
the reviews nobody redid meanwhile (``ReviewStage.restore``).
"""

from __future__ import annotations

import random
from collections.abc import Collection
from datetime import datetime
from typing import Any

from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.http import QueryDict
from rest_framework import serializers

from annotation.draws import secret_draw
from annotation.exceptions import ConflictError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Membership,
    Project,
    Purpose,
    QualityEvent,
    Review,
    ReviewState,
    ReviewVerdict,
    Stage,
)
from annotation.permissions import require_reviewer
from pipeline.decisions.decide import REASON_WITHDRAWN

from .base import StageDefinition, form_text, live_q, submission_lines, taken_by_user_q
from .registry import stage_get
from .signals import review_recorded, reviews_withdrawn
from .units import SUBMISSION
from .wire import (
    NOTE_MAX,
    AssignmentPayloadSerializer,
    StrictSerializer,
    TextField,
    stage_name_field,
)


class ReviewSubmitSerializer(StrictSerializer):
    verdict = serializers.ChoiceField(
        choices=ReviewVerdict.values,
        error_messages={"invalid_choice": f"The verdict is one of {', '.join(ReviewVerdict.values)}."},
    )
    reason = TextField(max_length=64, required=False, allow_blank=True, default="", help_text="a rule (rejections)")
    comment = TextField(
        max_length=NOTE_MAX, required=False, allow_blank=True, default="", help_text="for the annotator"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        reasons = self.context["reasons"]
        if attrs["verdict"] == ReviewVerdict.ACCEPTED:
            return {**attrs, "reason": ""}
        if attrs["reason"] not in reasons:
            choices = ", ".join(reasons)
            raise serializers.ValidationError({"reason": f"Say which rule it breaks: one of {choices}."})
        return attrs


class ReviewedQuestionSerializer(serializers.Serializer):
    text = serializers.CharField()


class ReviewedSerializer(serializers.Serializer):
    """The submission under review. No ids: a gold review's submission is an older one, and its ids
    would tell it from the queue's (``pipeline.quality.review_gold``)."""

    stage = serializers.CharField()
    label = serializers.CharField(help_text="the reviewed stage's name")  # type: ignore[assignment]
    submission = serializers.DictField(help_text="the submission as accepted (normalised)")
    question = ReviewedQuestionSerializer(allow_null=True, help_text="answers: the question answered")
    questions = ReviewedQuestionSerializer(many=True, help_text="question stages: the questions the submission wrote")
    reasons = serializers.DictField(child=serializers.CharField(), help_text="the rules a rejection names")


class ReviewPayloadSerializer(AssignmentPayloadSerializer):
    stage = stage_name_field(Stage.REVIEW)
    reviewed = ReviewedSerializer()


DECIDED = (ReviewState.ACCEPTED, ReviewState.REJECTED)


def _double_drawn(*, reviewed: Assignment, rate: float) -> bool:
    """Whether ``reviewed`` is sampled for a second review: a number fixed by the submission and the
    site's secret (``annotation.draws``: the writer knows the submission's id)."""
    return secret_draw("double-review", reviewed.pk) < rate


def _second_waiting() -> Q:
    """A reviewed submission sampled for double review whose second review is not in (yet)."""
    second = Review.objects.filter(second_of=OuterRef("pk"), withdrawn_reason="")
    return Q(review_double=True, review_state__in=DECIDED) & ~Q(Exists(second))


def _real_live(now: datetime) -> Q:
    """A live lease of real review work (a gold review's lease holds nobody else's work)."""
    return live_q(now) & Q(purpose=Purpose.WORK)


class ReviewStage(StageDefinition):
    name = Stage.REVIEW
    label = "Review"
    short_label = "Review"
    unit = SUBMISSION
    reviewed = False
    reviewing = True
    has_gold = True
    gold_classes = ({"verdict": ReviewVerdict.ACCEPTED.value}, {"verdict": ReviewVerdict.REJECTED.value})
    gold_balanced_controls = True
    blocks_release = False
    submit_serializer = ReviewSubmitSerializer
    payload_serializer = ReviewPayloadSerializer
    template = "frontend/workspace/review.html"
    controller = "review"
    viewer = {"labels": False, "drag_pans": True, "boxes": False}
    messages = {"reason": "Say which rule the submission breaks."}

    def check_access(self, *, user: Any, membership: Membership | None) -> None:
        require_reviewer(user=user, membership=membership)

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        """Submissions waiting for review, and reviewed ones waiting for their second review
        (``review_double``), never the caller's own nor one they had before."""
        return (
            Assignment.objects.filter(project=project, status=AssignmentStatus.SUBMITTED)
            .filter(Q(review_state=ReviewState.SAMPLED) | _second_waiting())
            .exclude(annotator=user)
            .exclude(self.unit.has(self.name, _real_live(now)))
            .exclude(self.unit.has(self.name, taken_by_user_q(user)))
            .order_by("pk")
        )

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        reviewed: Assignment = unit
        if reviewed.annotator_id == user.pk:
            return False
        if reviewed.review_state != ReviewState.SAMPLED and not self._second_open(reviewed=reviewed, user_id=user.pk):
            return False
        others = Assignment.objects.filter(reviewed=reviewed, stage=self.name).filter(_real_live(now))
        if own is not None:
            others = others.exclude(pk=own.pk)
        return not others.exists()

    @staticmethod
    def _second_open(*, reviewed: Assignment, user_id: int) -> bool:
        """Whether ``user`` may give ``reviewed`` its second review: sampled for it, decided by
        another reviewer, and no second review standing."""
        if not reviewed.review_double or reviewed.review_state not in DECIDED:
            return False
        if Review.objects.filter(second_of=reviewed, withdrawn_reason="").exists():
            return False
        return not Review.objects.filter(reviewed=reviewed, reviewer_id=user_id).exists()

    def submit_context(self, *, assignment: Assignment) -> dict[str, Any]:
        reviewed_stage = (
            Assignment.objects.filter(pk=assignment.reviewed_id or 0).values_list("stage", flat=True).first()
        )
        reasons = stage_get(reviewed_stage).review_reasons if reviewed_stage else {}
        return {**super().submit_context(assignment=assignment), "reasons": reasons}

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        reviewed: Assignment = unit
        if reviewed.review_state != ReviewState.SAMPLED:
            if not self._second_open(reviewed=reviewed, user_id=assignment.annotator_id):
                raise ConflictError("This submission is already reviewed.")
            # A second review: recorded for the reviewers' agreement, decides nothing.
            Review.objects.create(
                second_of=reviewed,
                assignment=assignment,
                reviewer_id=assignment.annotator_id,
                verdict=cleaned["verdict"],
                reason=cleaned["reason"],
                comment=cleaned["comment"],
            )
            return
        Review.objects.create(
            reviewed=reviewed,
            assignment=assignment,
            reviewer_id=assignment.annotator_id,
            verdict=cleaned["verdict"],
            reason=cleaned["reason"],
            comment=cleaned["comment"],
        )
        reviewed.review_state = cleaned["verdict"]
        if not reviewed.review_double and _double_drawn(reviewed=reviewed, rate=reviewed.project.review_double_rate):
            reviewed.review_double = True
        reviewed.save(update_fields=["review_state", "review_double", "updated_at"])
        if cleaned["verdict"] == ReviewVerdict.REJECTED:
            stage_get(reviewed.stage).review_rejected(reviewed=reviewed, reason=cleaned["reason"], now=now)
        review_recorded.send(sender=type(self), reviewed=reviewed, now=now)

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        assert assignment.reviewed_id is not None
        reviewed = Assignment.objects.select_related("question").get(pk=assignment.reviewed_id)
        stage = stage_get(reviewed.stage)
        return {
            "reviewed": {
                "stage": reviewed.stage,
                "label": stage.label,
                "submission": reviewed.submission or {},
                "question": {"text": reviewed.question.text} if reviewed.question else None,
                "questions": [{"text": q.text} for q in reviewed.questions_written.order_by("position")],
                "reasons": stage.review_reasons,
            }
        }

    # --- quality control -------------------------------------------------------------------

    def gold_score(self, *, given: dict[str, Any], gold: dict[str, Any], project: Project) -> tuple[bool, str]:
        """The same verdict (the rule a rejection names is the reviewer's judgement: not scored)."""
        if given.get("verdict") == gold.get("verdict"):
            return True, ""
        if gold.get("verdict") == ReviewVerdict.REJECTED:
            return False, f"This submission breaks a rule ({gold.get('reason') or 'see the rules'}): reject it."
        return False, "This submission keeps the rules: accept it."

    def gold_unit(self, *, gold: Any) -> dict[str, Any]:
        """A gold review's lease names its submission, as a real review lease does."""
        return {"screen_id": gold.screen_id, "reviewed_id": gold.origin_id}

    def gold_pick_rules(self, *, project: Project, user: Any, purpose: str) -> dict[str, Any]:
        """The rules of the gold pick (``pipeline.quality.gold.gold_pick``): never the reviewer's own
        submission, nor one they had as a review item before (real or gold: a repeat would tell); and
        the verdict of every gold review (qualification and control) drawn at random, each alike
        (``gold_classes``), so that about half of a reviewer's gold reviews are known-bad submissions
        (accepting everything cannot pass) and nothing served before tells the next one's verdict. No query."""
        theirs = Assignment.objects.filter(stage=Stage.REVIEW, annotator=user, reviewed_id=OuterRef("origin_id"))
        exclude = Q(origin__annotator=user) | Q(Exists(theirs))
        return {**super().gold_pick_rules(project=project, user=user, purpose=purpose), "exclude": exclude}

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
        """The stopped reviewer's reviews are withdrawn and their submissions reviewed again, in both
        ``paused_work`` modes (a verdict is a decision someone has to make; leaving the submission
        unreviewed would leave a writer's qualification undecided). A rejection's effects are undone.
        Locks the reviewed submissions in id order."""
        given = Review.objects.filter(reviewed__project=project, reviewer=user)
        seconds = Review.objects.filter(second_of__project=project, reviewer=user, withdrawn_reason="")
        if assignments is not None:
            given = given.filter(assignment_id__in=list(assignments))
            seconds = seconds.filter(assignment_id__in=list(assignments))
        # Second reviews decide nothing: withdrawn, they stop counting in the agreement.
        second_count = seconds.update(
            withdrawn_from=F("second_of"), withdrawn_reason=REASON_WITHDRAWN, withdrawn_by=event
        )
        reviews = list(given.order_by("reviewed_id").values_list("pk", "reviewed_id", "verdict", "created_at"))
        if not reviews:
            return second_count
        reviewed = {
            a.pk: a
            for a in Assignment.objects.select_for_update()
            .filter(pk__in=[r[1] for r in reviews])
            .select_related("project")
            .order_by("pk")
        }
        for pk, reviewed_id, verdict, _ in reviews:
            Review.objects.filter(pk=pk).update(
                reviewed=None, withdrawn_from_id=reviewed_id, withdrawn_reason=REASON_WITHDRAWN, withdrawn_by=event
            )
            if verdict == ReviewVerdict.REJECTED:
                submission = reviewed[reviewed_id]
                stage_get(submission.stage).review_reverted(reviewed=submission, now=now)
        Assignment.objects.filter(pk__in=list(reviewed)).update(review_state=ReviewState.SAMPLED, updated_at=now)
        reviews_withdrawn.send(sender=type(self), withdrawn=[(reviewed[r[1]], r[3]) for r in reviews], now=now)
        return len(reviews) + second_count

    def restore(self, *, project: Project, user: Any, event: QualityEvent, now: datetime) -> dict[str, int]:
        """The reviewer's withdrawn reviews come back where the submission still waits for review with
        nobody on it; each verdict then does again what it did (a rejection, a writer's qualification)."""
        withdrawn = list(Review.objects.filter(withdrawn_by=event, reviewer=user).order_by("withdrawn_from_id", "pk"))
        if not withdrawn:
            return {"restored": 0, "redone": 0}
        reviewed = {
            a.pk: a
            for a in Assignment.objects.select_for_update()
            .filter(pk__in=[r.withdrawn_from_id for r in withdrawn])
            .select_related("project")
            .order_by("pk")
        }
        busy = set(
            Assignment.objects.filter(_real_live(now), stage=self.name, reviewed_id__in=list(reviewed)).values_list(
                "reviewed_id", flat=True
            )
        )
        restored = 0
        for review in withdrawn:
            assert review.withdrawn_from_id is not None  # a withdrawn review names its submission
            submission = reviewed[review.withdrawn_from_id]
            if review.second_of_id is not None:  # a second review: back unless another one stands
                if Review.objects.filter(second_of=submission, withdrawn_reason="").exists():
                    continue
                Review.objects.filter(pk=review.pk).update(withdrawn_from=None, withdrawn_reason="", withdrawn_by=None)
                restored += 1
                continue
            if submission.review_state != ReviewState.SAMPLED or submission.pk in busy:
                continue  # reviewed again by someone else, or being reviewed now
            if Review.objects.filter(reviewed=submission).exists():
                continue
            Review.objects.filter(pk=review.pk).update(
                reviewed=submission, withdrawn_from=None, withdrawn_reason="", withdrawn_by=None
            )
            submission.review_state = review.verdict
            submission.save(update_fields=["review_state", "updated_at"])
            if review.verdict == ReviewVerdict.REJECTED:
                stage_get(submission.stage).review_rejected(reviewed=submission, reason=review.reason, now=now)
            review_recorded.send(sender=type(self), reviewed=submission, now=now)
            restored += 1
        return {"restored": restored, "redone": len(withdrawn) - restored}

    # --- the page ----------------------------------------------------------------------------

    def form_body(self, *, post: QueryDict, assignment: Assignment) -> dict[str, Any]:
        verdict = ReviewVerdict.ACCEPTED if post.get("action") == "accept" else ReviewVerdict.REJECTED
        return {"verdict": verdict, "reason": form_text(post, "reason"), "comment": form_text(post, "comment")}

    def form_state(self, *, post: QueryDict) -> dict[str, Any]:
        return {"reason": post.get("reason", ""), "comment": post.get("comment", "")}

    def draft_lines(self, *, draft: dict[str, Any]) -> list[tuple[str, str]]:
        return [(label, draft[key]) for key, label in (("reason", "Reason"), ("comment", "Comment")) if draft.get(key)]

    def page_context(self, *, payload: dict[str, Any], state: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
        reviewed = payload["reviewed"]
        shown = {k: v for k, v in reviewed["submission"].items() if k not in ("elements", "questions")}
        return {"reviewed": reviewed, "reviewed_lines": submission_lines(shown)}

    # --- progress and crowd ------------------------------------------------------------------

    def pending(self, *, project: Project, screens: dict[str, int], questions: dict[str, int]) -> int:
        return Assignment.objects.filter(
            project=project, review_state=ReviewState.SAMPLED, status=AssignmentStatus.SUBMITTED
        ).count()

    def crowd_submission(self, *, payload: dict[str, Any], actor: Any) -> dict[str, Any]:
        """A scripted reviewer accepts, and rejects ``review_rejects`` of the time (default 5%) with
        one of the reviewed stage's rules."""
        rng: random.Random = actor.rng
        reasons = list(payload["reviewed"]["reasons"])
        if reasons and rng.random() < getattr(actor, "review_rejects", 0.05):
            return {"verdict": "rejected", "reason": rng.choice(reasons), "comment": "Please check the rules."}
        return {"verdict": "accepted", "reason": "", "comment": ""}
