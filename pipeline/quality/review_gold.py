"""Quality control of the review stage (docs/quality.md, "Reviewers are checked too").

Reviews decide writers' qualification and take rejected work out of the release, so reviewers are
checked like any annotator, on gold of their own:

* **Gold reviews.** A gold item of the review stage is a reviewed submission with its known verdict
  (``GoldItem.origin`` is the submission, ``answer`` the review body). A lead makes one from a
  reviewed submission (``review_gold_create``: its standing review's verdict, or the lead's), or by
  promoting a review (``gold.gold_promote`` with the review assignment's id). It is served to
  reviewers exactly like a real review item (the lease names the submission as a real one does; the
  payload is built by the same code), never to the submission's author nor to a reviewer who
  reviewed it, and scored by the verdict (``ReviewStage.gold_score``). The results feed the usual
  standing machinery: a qualification set of gold reviews, then control reviews and the sequential
  test (``pipeline.quality.standing``), so a rubber-stamp reviewer is paused; a paused reviewer's
  reviews are withdrawn (``ReviewStage.withdraw``) and writers' qualifications decided on them are
  decided again.
* **Balanced gold.** Real submissions are mostly fine, so gold drawn at random would be mostly
  "accept" items, on which accepting everything scores well. Each gold review's verdict is drawn at
  random, each alike (``ReviewStage.gold_classes``, ``pipeline.quality.gold.gold_pick``): about half
  of a reviewer's gold reviews are known-bad submissions while the project has some, and none tells
  the next one's verdict.
* **Double review.** A share (``review_double_rate``) of reviewed submissions is reviewed by a second
  reviewer; the second review decides nothing and counts in each reviewer's agreement with other
  reviewers (``reviewer_agreement``, in the lead's figures).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import (
    Assignment,
    AssignmentStatus,
    GoldItem,
    GoldSource,
    Project,
    Purpose,
    Review,
    Stage,
)

from .gold import gold_item_create


def review_gold_create(
    *,
    project: Project,
    submission_id: int,
    user: Any,
    verdict: str | None = None,
    reason: str = "",
    note: str = "",
) -> GoldItem:
    """A gold review of the submission ``submission_id`` (real work of a reviewed stage): the gold
    verdict is ``verdict`` (and ``reason``, for a rejection) or, without one, its standing review's.
    ``NotFoundError`` when the project has no such submission; ``ApplicationError`` when it has no
    review and no verdict is given, or the stage's rules refuse the body; ``ConflictError`` when it is
    already a gold review."""
    submission = (
        Assignment.objects.select_related("screen")
        .filter(pk=submission_id, project=project, status=AssignmentStatus.SUBMITTED, purpose=Purpose.WORK)
        .exclude(stage=Stage.REVIEW)
        .first()
    )
    if submission is None:
        raise NotFoundError("No submission with this id in the project.", field="submission_id")
    source = GoldSource.MANUAL
    if verdict is None:
        review = Review.objects.filter(reviewed=submission).first()
        if review is None:
            raise ApplicationError("This submission has no review: say the gold verdict.", field="verdict")
        verdict, reason, source = review.verdict, review.reason, GoldSource.PROMOTED
    submission.project = project
    return gold_item_create(
        project=project,
        stage=Stage.REVIEW,
        screen=submission.screen,
        question=None,
        answer={"verdict": verdict, "reason": reason, "comment": ""},
        user=user,
        source=source,
        origin=submission,
        note=note,
    )


def reviewer_agreement(*, project: Project, user_ids: Iterable[int] | None = None) -> dict[int, tuple[int, int]]:
    """Per reviewer, ``(agreed, compared)``: over the double-reviewed submissions with both reviews
    standing (the deciding one and the second one, by two reviewers), how often their verdict was the
    other reviewer's. One query."""
    rows = Review.objects.filter(
        Q(second_of__project=project, withdrawn_reason="") | Q(reviewed__project=project, reviewed__review_double=True)
    ).values_list("reviewed_id", "second_of_id", "reviewer_id", "verdict")
    by_submission: dict[int, list[tuple[int | None, str]]] = defaultdict(list)
    for reviewed_id, second_of_id, reviewer_id, verdict in rows:
        by_submission[reviewed_id or second_of_id].append((reviewer_id, verdict))
    wanted = set(user_ids) if user_ids is not None else None
    out: dict[int, tuple[int, int]] = {}
    for reviews in by_submission.values():
        if len(reviews) != 2 or reviews[0][0] == reviews[1][0]:
            continue
        same = reviews[0][1] == reviews[1][1]
        for who, _ in reviews:
            if who is None or (wanted is not None and who not in wanted):
                continue
            agreed, compared = out.get(who, (0, 0))
            out[who] = (agreed + same, compared + 1)
    return out
