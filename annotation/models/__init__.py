from .projects import App, Membership, Project, Role
from .screens import Candidate, ElementType, ImportJob, Screen, ScreenState, Split
from .work import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    PrefilterJudgment,
    Question,
    QuestionSource,
    QuestionState,
    ReleaseJob,
    Stage,
    Verdict,
)

__all__ = [
    "Answer",
    "AnswerElement",
    "App",
    "Assignment",
    "AssignmentStatus",
    "Candidate",
    "ElementType",
    "ImportJob",
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
