"""Project accounts created in bulk: the ``members`` job's work function (``pipeline.kinds``) and the
service that checks a lead's request and queues it. The accounts themselves are made by
``annotation.services.members`` (one password hash each, about half a second: too slow for a request)."""

from __future__ import annotations

from typing import Any

from annotation.models import MemberJob, Project, Role
from annotation.services.members import member_job_request, member_job_work
from pipeline.jobs.lifecycle import Outcome, Progress, job_create


def members_bulk_start(
    *,
    project: Project,
    user: Any,
    role: str = Role.ANNOTATOR,
    in_answer_pool: bool = False,
    csv_text: str = "",
    count: int | None = None,
) -> MemberJob:
    """Check every row of a lead's request now (a bad row refuses it all, each named in the error), then
    queue the job that creates the accounts. The caller has checked that ``user`` leads ``project``."""
    request = member_job_request(
        project=project, role=role, in_answer_pool=in_answer_pool, csv_text=csv_text, count=count
    )
    return job_create(model=MemberJob, project=project, user=user, request=request, total=len(request["names"]))


def members_job_work(*, job: MemberJob, progress: Progress, **options: Any) -> Outcome:
    return Outcome(result=member_job_work(job=job, progress=progress))
