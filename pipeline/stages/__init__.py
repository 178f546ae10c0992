"""Every ScreenQA stage as a concurrency-safe assignment queue (see docs/engine.md).

One module per stage (``prefilter``, ``questions``, ``answers``, ``not_answerable``), each
declaring everything about its stage (``base.StageDefinition``); the ``registry`` finds them;
``units`` are what stages hand out; ``wire`` the serializers of the wire format; the
``engine`` services below are the contract the API, the workspace and the crowd use.
"""

from annotation.services.assignments import assignment_draft_save

from .engine import (
    Work,
    assignment_double_leases,
    assignment_expire_leases,
    assignment_extend,
    assignment_next,
    assignment_next_by_slug,
    assignment_payload,
    assignment_release,
    assignment_result,
    assignment_skip,
    assignment_submit,
    stages_for_user,
    work_payload,
)
from .not_answerable import not_answerable_start
from .prefilter import AppLanguage, app_language_list, app_mark_non_english
from .progress import ProjectProgress, project_progress
from .registry import stage_filter, stage_get, stages
from .split import split_for

__all__ = [
    "AppLanguage",
    "ProjectProgress",
    "Work",
    "app_language_list",
    "app_mark_non_english",
    "assignment_double_leases",
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
    "not_answerable_start",
    "project_progress",
    "split_for",
    "stage_filter",
    "stage_get",
    "stages",
    "stages_for_user",
    "work_payload",
]
