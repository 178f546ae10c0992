"""Every ScreenQA stage as a concurrency-safe assignment queue (see docs/engine.md).

One module per stage (``prefilter``, ``questions``, ``answers``, ``not_answerable``,
``split``), a ``registry`` of them, and the ``engine`` services re-exported here: the
names below are the contract the API, the workspace and the crowd use.
"""

from annotation.services.assignments import (
    assignment_draft_save,
    assignment_expire_leases,
    assignment_extend,
    assignment_release,
    assignment_skip,
)

from .engine import (
    assignment_next,
    assignment_next_by_slug,
    assignment_payload,
    assignment_result,
    assignment_submit,
    member_check,
    member_project_get,
    stages_for_user,
)
from .not_answerable import not_answerable_start
from .prefilter import app_mark_non_english
from .progress import project_progress
from .registry import STAGES, stage_rules
from .split import split_for

__all__ = [
    "STAGES",
    "app_mark_non_english",
    "assignment_draft_save",
    "assignment_expire_leases",
    "assignment_extend",
    "assignment_next",
    "assignment_next_by_slug",
    "assignment_payload",
    "assignment_release",
    "assignment_result",
    "assignment_skip",
    "assignment_submit",
    "member_check",
    "member_project_get",
    "not_answerable_start",
    "project_progress",
    "split_for",
    "stage_rules",
    "stages_for_user",
]
