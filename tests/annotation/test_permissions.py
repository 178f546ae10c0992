"""annotation/permissions.py, function by function: each check for each kind of caller (anonymous,
outsider, member of another project, annotator in and out of the answer pool, reviewer, lead, site
admin), with the error and its message.

The authorization matrix (test_authz_matrix.py) checks the same rules end to end, through every
route; these are the fast checks that mutation testing runs (docs/mutation.md)."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from annotation.db import compiled
from annotation.exceptions import NotFoundError, PermissionDeniedError
from annotation.models import Assignment, Membership, Role
from annotation.permissions import (
    IsAuthenticated,
    assignment_get_for_annotator,
    member_get,
    project_get_for_lead,
    project_get_for_member,
    project_require_lead,
    require_answer_pool,
    require_reviewer,
    user_is_lead,
)
from tests.factories import AppFactory, ProjectFactory, QuestionFactory, ScreenFactory, UserFactory
from tests.pipeline.stages.helpers import member

pytestmark = pytest.mark.django_db

NOT_FOUND = "Project not found."
ONLY_LEADS = "Only the project's leads may do this."
ONLY_POOL = "Only members of the answer pool may answer questions."
ONLY_REVIEWERS = "Only the project's reviewers and leads review work."


@pytest.fixture(autouse=True)
def _assignment_statement_compiled_per_test():
    """Every test compiles the assignment statement itself, so that each one that reads an assignment
    runs the statement's build (a statement cached by an earlier test would run none of it, and
    mutation testing maps a test to the functions it runs)."""
    compiled.forget(("first", "assignment-for-annotator"))


@pytest.fixture
def people(project):
    """Every kind of caller of ``project``, by name."""
    admin = UserFactory(username="root", is_superuser=True)
    foreign = UserFactory(username="fay")
    Membership.objects.create(project=ProjectFactory(slug="elsewhere"), user=foreign, role=Role.LEAD)
    return {
        "anonymous": AnonymousUser(),
        "outsider": UserFactory(username="otto"),
        "foreign": foreign,  # a lead of another project
        "annotator": member(project, "ann"),
        "nopool": member(project, "nora", pool=False),
        "reviewer": member(project, "rita", role=Role.REVIEWER, pool=False),
        "lead": member(project, "leo", role=Role.LEAD),
        "admin": admin,
    }


def membership_of(project, user):
    return Membership.objects.filter(project=project, user=user).first() if user.is_authenticated else None


def outcome(call):
    """What a check does: "ok" (or what it returns), or the error's class and message."""
    try:
        return call()
    except (NotFoundError, PermissionDeniedError) as error:
        return (type(error).__name__, error.message)


# --- membership -----------------------------------------------------------------------------------


def test_member_get(project, people):
    got = {who: outcome(lambda u=user: member_get(project=project, user=u)) for who, user in people.items()}
    assert {who: getattr(value, "user", value) for who, value in got.items()} == {
        "anonymous": ("NotFoundError", NOT_FOUND),
        "outsider": ("NotFoundError", NOT_FOUND),
        "foreign": ("NotFoundError", NOT_FOUND),
        "annotator": people["annotator"],
        "nopool": people["nopool"],
        "reviewer": people["reviewer"],
        "lead": people["lead"],
        "admin": None,  # a site admin needs no membership
    }


def test_project_get_for_member(project, people):
    ProjectFactory(slug="other")
    got = {who: outcome(lambda u=user: project_get_for_member(user=u, slug="demo")) for who, user in people.items()}
    refused = ("NotFoundError", NOT_FOUND)
    assert got == {**dict.fromkeys(people, project), "anonymous": refused, "outsider": refused, "foreign": refused}
    # a member of another project, or an unknown slug, is not found
    assert outcome(lambda: project_get_for_member(user=people["lead"], slug="other")) == refused
    assert outcome(lambda: project_get_for_member(user=people["admin"], slug="nowhere")) == refused
    assert project_get_for_member(user=people["admin"], slug="other").slug == "other"


# --- the stages' own rules --------------------------------------------------------------------------


def test_require_answer_pool(project, people):
    got = {
        who: outcome(lambda u=user: require_answer_pool(user=u, membership=membership_of(project, u)))
        for who, user in people.items()
    }
    refused = ("PermissionDeniedError", ONLY_POOL)
    assert got == {
        "anonymous": refused,
        "outsider": refused,
        "foreign": refused,
        "annotator": None,
        "nopool": refused,
        "reviewer": refused,  # outside the pool: the role does not matter
        "lead": None,
        "admin": None,
    }


def test_require_reviewer(project, people):
    got = {
        who: outcome(lambda u=user: require_reviewer(user=u, membership=membership_of(project, u)))
        for who, user in people.items()
    }
    refused = ("PermissionDeniedError", ONLY_REVIEWERS)
    assert got == {
        "anonymous": refused,
        "outsider": refused,
        "foreign": refused,
        "annotator": refused,
        "nopool": refused,
        "reviewer": None,
        "lead": None,
        "admin": None,
    }


# --- leads ------------------------------------------------------------------------------------------


LEAD_ONLY = {
    "anonymous": ("NotFoundError", NOT_FOUND),
    "outsider": ("NotFoundError", NOT_FOUND),
    "foreign": ("NotFoundError", NOT_FOUND),
    "annotator": ("PermissionDeniedError", ONLY_LEADS),
    "nopool": ("PermissionDeniedError", ONLY_LEADS),
    "reviewer": ("PermissionDeniedError", ONLY_LEADS),
}


def test_project_require_lead(project, people):
    got = {who: outcome(lambda u=user: project_require_lead(user=u, project=project)) for who, user in people.items()}
    assert got == {**LEAD_ONLY, "lead": None, "admin": None}


def test_project_get_for_lead(project, people):
    got = {who: outcome(lambda u=user: project_get_for_lead(user=u, slug="demo")) for who, user in people.items()}
    assert got == {**LEAD_ONLY, "lead": project, "admin": project}
    assert outcome(lambda: project_get_for_lead(user=people["admin"], slug="nowhere")) == ("NotFoundError", NOT_FOUND)


def test_a_lead_of_another_project_is_not_found(project, people):
    other = ProjectFactory(slug="other")
    assert outcome(lambda: project_require_lead(user=people["lead"], project=other)) == ("NotFoundError", NOT_FOUND)
    assert not user_is_lead(user=people["lead"], project=other)


def test_user_is_lead(project, people):
    got = {who: user_is_lead(user=user, project=project) for who, user in people.items() if who != "anonymous"}
    assert got == {
        "outsider": False,
        "foreign": False,
        "annotator": False,
        "nopool": False,
        "reviewer": False,
        "lead": True,
        "admin": True,
    }


# --- an annotator's own assignment ------------------------------------------------------------------


@pytest.fixture
def owned(project, people):
    """An assignment of the annotator's on a question, and one of the site admin's (no membership)."""
    screen = ScreenFactory(project=project, app=AppFactory(project=project, package="com.example.owned"))
    question = QuestionFactory(screen=screen, text="What is owned?")
    expires = timezone.now() + timedelta(minutes=10)

    def lease(user, stage):
        return Assignment.objects.create(
            project=project, stage=stage, screen=screen, question=question, annotator=user, lease_expires_at=expires
        )

    return lease(people["annotator"], "answers"), lease(people["admin"], "answers")


def test_an_assignment_is_its_annotators_alone(project, people, owned, django_assert_num_queries):
    mine, _ = owned
    # the annotator gets it, loaded with its project, screen, app and question in one statement
    with django_assert_num_queries(1):
        got = assignment_get_for_annotator(assignment_id=mine.pk, user=people["annotator"])
        loaded = (got.pk, got.project.slug, got.screen.rico_id, got.screen.app.package, got.question.text)
    assert loaded == (mine.pk, "demo", mine.screen.rico_id, "com.example.owned", "What is owned?")
    assert assignment_get_for_annotator(assignment_id=mine.pk, user=people["annotator"], slug="demo").pk == mine.pk
    # everybody else, a lead and a site admin included, is told it does not exist
    for who in ("anonymous", "outsider", "foreign", "nopool", "reviewer", "lead", "admin"):
        assert outcome(lambda w=who: assignment_get_for_annotator(assignment_id=mine.pk, user=people[w])) == (
            "NotFoundError",
            "Assignment not found.",
        ), who


def test_an_assignment_is_not_found_under_another_project_or_id(project, people, owned):
    mine, _ = owned
    ProjectFactory(slug="other")
    annotator = people["annotator"]
    refused = ("NotFoundError", "Assignment not found.")
    assert outcome(lambda: assignment_get_for_annotator(assignment_id=mine.pk, user=annotator, slug="other")) == refused
    for wrong in (str(mine.pk), float(mine.pk), None, mine.pk + 1000):
        assert outcome(lambda w=wrong: assignment_get_for_annotator(assignment_id=w, user=annotator)) == refused


def test_a_removed_member_loses_their_assignments(project, people, owned):
    # given the annotator removed from the project, still a member of another one
    mine, _ = owned
    Membership.objects.filter(project=project, user=people["annotator"]).delete()
    Membership.objects.create(project=ProjectFactory(slug="other"), user=people["annotator"])
    assert outcome(lambda: assignment_get_for_annotator(assignment_id=mine.pk, user=people["annotator"])) == (
        "NotFoundError",
        "Assignment not found.",
    )


def test_a_site_admin_keeps_their_own_assignments_without_membership(project, people, owned):
    _, admins = owned
    assert assignment_get_for_annotator(assignment_id=admins.pk, user=people["admin"]).pk == admins.pk


def test_no_user_at_all_is_refused_like_an_anonymous_caller(project, people, owned):
    # ``None`` where a user is expected (a call made for nobody): never a crash, never a pass
    mine, _ = owned
    not_found = ("NotFoundError", NOT_FOUND)
    assert outcome(lambda: member_get(project=project, user=None)) == not_found
    assert outcome(lambda: project_get_for_member(user=None, slug="demo")) == not_found
    assert outcome(lambda: project_get_for_lead(user=None, slug="demo")) == not_found
    assert outcome(lambda: project_require_lead(user=None, project=project)) == not_found
    assert outcome(lambda: require_answer_pool(user=None, membership=None)) == ("PermissionDeniedError", ONLY_POOL)
    assert outcome(lambda: require_reviewer(user=None, membership=None)) == ("PermissionDeniedError", ONLY_REVIEWERS)
    assert user_is_lead(user=None, project=project) is False
    assert outcome(lambda: assignment_get_for_annotator(assignment_id=mine.pk, user=object())) == (
        "NotFoundError",
        "Assignment not found.",
    )


# --- the API's permission class ---------------------------------------------------------------------


def test_the_api_needs_a_logged_in_caller(people):
    check = IsAuthenticated()
    allowed = {who: check.has_permission(SimpleNamespace(user=user), None) for who, user in people.items()}
    assert allowed == {**dict.fromkeys(people, True), "anonymous": False}
    assert check.has_permission(SimpleNamespace(user=None), None) is False
