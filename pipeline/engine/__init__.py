"""The work engine: the services the API, the workspace and the crowd call to lease, submit, skip, release
and extend work in every stage (docs/engine.md), with quality control in the loop (qualification,
control items, the rules that pause).

It sits above both the stages (``pipeline.stages``: what each stage is) and quality control
(``pipeline.quality``: who may work and how they stand), which never import it. For its callers it is
also the one door to the stages: what ``pipeline.stages`` exports is exported here too.
"""

from annotation.services.assignments import assignment_draft_save
from pipeline.stages import (
    AppLanguage,
    ProjectProgress,
    app_language_list,
    app_mark_non_english,
    not_answerable_start,
    project_progress,
    split_for,
    stage_filter,
    stage_get,
    stages,
)

from .services import (
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
