"""Every ScreenQA stage as an assignment queue (see docs/engine.md).

One module per stage (``prefilter``, ``questions``, ``answers``, ``not_answerable``, ``review``), each
declaring everything about its stage (``base.StageDefinition``); the ``registry`` finds them; ``units``
are what stages hand out; ``leases`` who may lease what; ``wire`` the serializers of the wire format.
The services that lease, submit and withdraw across stages (with quality control) are one layer up, in
``pipeline.engine``: a stage never imports quality control (``pyproject.toml``, the layers contract).
"""

from .not_answerable import not_answerable_start
from .prefilter import AppLanguage, app_language_list, app_mark_non_english
from .progress import ProjectProgress, project_progress
from .registry import stage_filter, stage_get, stages
from .split import split_for

__all__ = [
    "AppLanguage",
    "ProjectProgress",
    "app_language_list",
    "app_mark_non_english",
    "not_answerable_start",
    "project_progress",
    "split_for",
    "stage_filter",
    "stage_get",
    "stages",
]
