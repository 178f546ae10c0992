from .jobs import ImportJob, Job, JobStatus, ReleaseJob
from .projects import AgreementRule, App, Membership, Project, Role
from .screens import Candidate, ElementType, Screen, ScreenState, Split
from .work import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    PrefilterJudgment,
    Question,
    QuestionSource,
    QuestionState,
    Stage,
    Verdict,
)

__all__ = [
    "AgreementRule",
    "Answer",
    "AnswerElement",
    "App",
    "Assignment",
    "AssignmentStatus",
    "Candidate",
    "ElementType",
    "ImportJob",
    "Job",
    "JobStatus",
    "Membership",
    "PrefilterJudgment",
    "Project",
    "Question",
    "QuestionSource",
    "QuestionState",
    "ReleaseJob",
    "Role",
    "Screen",
    "ScreenState",
    "Split",
    "Stage",
    "Verdict",
]
