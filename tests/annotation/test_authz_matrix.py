"""The authorization matrix: every route of the URL resolver × method × actor, with the status each
actor gets and no side effect for anybody refused.

Routes are read from the resolver (``annotation/urls.py`` and everything it includes), so a new route
without an entry in ``EXPECTED`` fails ``test_every_route_has_an_entry``. Each entry names the methods
the view accepts; ``test_unlisted_methods_are_refused`` checks that the others answer 405, so the
table cannot forget a method either.

The actors hold every role of the product (annotator, reviewer, lead; an annotator in and one out of
the answer pool) besides outsiders and a site admin (``test_the_actors_hold_every_role_...``). The
routes that name a stage are checked once more for each stage with a rule narrower than membership
(answers: the answer pool; review: reviewers and leads), in ``test_stage_rules``.

One world is built once for the module (inside a transaction rolled back at the end): two projects,
members of every kind, screens with leases, a submitted assignment, a gold item, a kept question, jobs
and an invitation, so that every URL argument names a real object. Each request runs in a savepoint
that is rolled back, so an allowed write never changes what the next actor meets; a refused request
must leave every table of the domain exactly as it found it (a checksum of their rows).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.authtoken.models import Token

from annotation.models import AssistJob, MemberJob, Membership, Role
from annotation.services.members import invitation_create, invitation_join, member_add
from pipeline.engine import assignment_next
from tests.factories import MembershipFactory, ProjectFactory, ScreenFactory, UserFactory, job_of_kind, kept_question
from tests.pipeline.quality.report_builders import gold, work
from tests.pipeline.stages.helpers import answering_question, screens

# Every test uses the module's world (``world``); the mark also has the test database created.
pytestmark = pytest.mark.django_db

# --- the actors ------------------------------------------------------------------------------

ACTORS = (
    "anonymous",  # not logged in
    "outsider",  # logged in, member of no project
    "foreign",  # annotator of another project
    "xlead",  # lead of another project
    "removed",  # was an annotator of the project (and still holds a lease): membership deleted
    "peer",  # another annotator of the same project (not the assignment's owner)
    "nopool",  # an annotator of the project outside the answer pool
    "reviewer",  # a reviewer of the project (role reviewer, outside the answer pool)
    "owner",  # the annotator whose assignment the URL names
    "lead",  # lead of the project
    "admin",  # site admin (is_superuser), member of nothing
    "joined",  # an existing account of another project (added there by its lead) that accepted an invitation
    "adminjoined",  # a site admin who accepted an invitation as an annotator of the project
    "crowd",  # a project account the project's lead created (works in this project only)
)
LOGIN = "login"  # a redirect to the login page (pages)
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
# Statuses that refuse: nothing may change in the database.
REFUSED = {LOGIN, 400, 401, 403, 404, 405, 409}

# GETs that may write, and why (every other GET must leave the database as it was).
WRITING_READS: dict[str, str] = {
    "api-screen-overlay": "renders the overlay once and caches its file name on the screen",
    "frontend:project": "remembers that the member has seen the guidelines (shown once)",
    "frontend:guidelines": "remembers that the member has seen the guidelines",
    "frontend:quality": "computes the stored quality figures on a project's first view (or queues their refresh)",
    "api-quality": "computes the stored quality figures on a project's first view (or queues their refresh)",
    "frontend:analysis": "computes the stored analysis figures on a project's first view (or queues their refresh)",
    "api-analysis": "computes the stored analysis figures on a project's first view (or queues their refresh)",
}

# Routes not in the matrix, and why.
SKIPPED_PREFIXES = {
    "admin/": "Django's admin: its own staff checks (tests/annotation/test_admin.py)",
}


# --- expectations ------------------------------------------------------------------------------

Expect = dict[str, Any]  # actor -> status (an int, or LOGIN)


def _expect(anonymous: Any, stranger: Any, member: Any, lead: Any, **exceptions: Any) -> Expect:
    row = {
        "anonymous": anonymous,
        "outsider": stranger,
        "foreign": stranger,
        "xlead": stranger,
        "removed": stranger,
        "peer": member,
        "nopool": member,
        "reviewer": member,
        "owner": member,
        "lead": lead,
        "admin": lead,
        "joined": member,
        "adminjoined": lead,  # a site admin stays one, whatever their role in the project
        "crowd": member,
    }
    row.update(exceptions)
    return row


def page_member(ok: Any = 200, **exceptions: Any) -> Expect:
    """Members of the project (any role) and site admins; others 404; anonymous to the login page."""
    return _expect(LOGIN, 404, ok, ok, **exceptions)


def page_lead(ok: Any = 200, **exceptions: Any) -> Expect:
    """Leads and site admins; annotators 403; others 404; anonymous to the login page."""
    return _expect(LOGIN, 404, 403, ok, **exceptions)


def page_own(ok: Any = 200, **exceptions: Any) -> Expect:
    """The assignment's annotator alone; everybody else 404 (a lead, a site admin too)."""
    return _expect(LOGIN, 404, 404, 404, **{"owner": ok, **exceptions})


def api(row: Expect) -> Expect:
    """The same rule under /api/: anonymous callers get 403 (session authentication asks for no
    challenge), never a redirect."""
    return {actor: (403 if status == LOGIN else status) for actor, status in row.items()}


def api_member(ok: Any = 200, **exceptions: Any) -> Expect:
    return api(page_member(ok, **exceptions))


def api_lead(ok: Any = 200, **exceptions: Any) -> Expect:
    return api(page_lead(ok, **exceptions))


def api_own(ok: Any = 200, **exceptions: Any) -> Expect:
    return api(page_own(ok, **exceptions))


def everyone(status: Any) -> Expect:
    return dict.fromkeys(ACTORS, status)


def signed_in(ok: Any, anonymous: Any = LOGIN, **exceptions: Any) -> Expect:
    """Any logged-in user (the page is not a project's)."""
    return {**dict.fromkeys(ACTORS, ok), "anonymous": anonymous, **exceptions}


@dataclass(frozen=True)
class Route:
    methods: dict[str, Expect]
    kwargs: dict[str, str] = field(default_factory=dict)  # URL argument -> world attribute
    data: dict[str, Any] = field(default_factory=dict)  # the body of unsafe methods (form or JSON)


def _own(ok: Any = 200, **exceptions: Any) -> Expect:
    return page_own(ok, **exceptions)


# The rule of every route, by URL name (``namespace:name``) or, for unnamed routes, by pattern.
EXPECTED: dict[str, Route] = {
    # --- the site's root ---
    "healthz": Route({"GET": everyone(200)}),
    # Prometheus: site admins (or the bearer of SCREENQA_METRICS_TOKEN: tests/annotation/test_observability.py)
    "metrics": Route({"GET": {**everyone(403), "admin": 200, "adminjoined": 200}}),
    # redirects answer every method alike
    "favicon.ico": Route(dict.fromkeys(METHODS, everyone(301))),
    "api-schema": Route({"GET": everyone(200)}),
    "api-docs": Route({"GET": everyone(200)}),
    "api-redoc": Route(dict.fromkeys(METHODS, everyone(301))),
    # --- screens (members) ---
    "api-screen-detail": Route({"GET": api_member()}),
    "api-screen-image": Route({"GET": api_member()}),
    "api-screen-overlay": Route({"GET": api_member()}),
    "api-screen-vh": Route({"GET": api_member()}),
    # --- project settings, members, invitations (leads) ---
    "api-project-settings": Route({"GET": api_lead(), "PATCH": api_lead()}),
    "api-members": Route({"GET": api_lead(), "POST": api_lead(400)}),
    "api-member": Route(
        {"PATCH": api_lead(), "DELETE": api_lead()},
        kwargs={"user_id": "owner_id"},
    ),
    # a project account's credentials (a personal account's are its owner's: tests/annotation/test_accounts.py)
    "api-member-token": Route({"POST": api_lead()}, kwargs={"user_id": "crowd_id"}),
    "api-member-password": Route({"POST": api_lead()}, kwargs={"user_id": "crowd_id"}),
    "api-members-bulk": Route({"POST": api_lead(400)}),
    "api-member-job-detail": Route({"GET": api_lead()}, kwargs={"job_id": "member_job_id"}),
    "api-member-job-retry": Route({"POST": api_lead(409)}, kwargs={"job_id": "member_job_id"}),
    "api-member-job-credentials": Route({"POST": api_lead()}, kwargs={"job_id": "member_job_id"}),
    "api-invitation-create": Route({"POST": api_lead(201)}),
    # --- imports and jobs (leads) ---
    "api-import-create": Route({"POST": api_lead(400)}),
    "api-import-detail": Route({"GET": api_lead()}, kwargs={"job_id": "import_job_id"}),
    "api-import-retry": Route({"POST": api_lead(409)}, kwargs={"job_id": "import_job_id"}),
    "api-release-job-detail": Route({"GET": api_lead()}, kwargs={"job_id": "export_job_id"}),
    "api-release-job-retry": Route({"POST": api_lead(409)}, kwargs={"job_id": "export_job_id"}),
    "api-release-job-download": Route({"GET": api_lead(409)}, kwargs={"job_id": "export_job_id"}),
    # --- the engine ---
    "api-stages": Route({"GET": api_member()}),
    "api-not-answerable-start": Route({"POST": api_lead()}),
    "api-stage-next": Route({"POST": api_member()}),
    "api-app-non-english": Route({"POST": api_lead()}),
    "api-my-work": Route({"GET": api_member()}),
    "api-project-progress": Route({"GET": api_member()}),
    "api-assignment": Route({"GET": api_own()}),
    "api-assignment-submit": Route({"POST": api_own(400)}),
    "api-assignment-skip": Route({"POST": api_own(400)}),
    "api-assignment-release": Route({"POST": api_own()}),
    "api-assignment-extend": Route({"POST": api_own()}),
    "api-assignment-draft": Route({"GET": api_own(), "PUT": api_own()}),
    # --- release (leads) ---
    "api-postprocess-start": Route({"POST": api_lead(202)}),
    "api-postprocess-decisions": Route({"GET": api_lead()}),
    "api-short-answers-start": Route({"POST": api_lead(202)}),
    "api-export-list": Route({"GET": api_lead(), "POST": api_lead(202)}),
    # --- model assistance (leads); the world's project has no backend: refill is a 400 for leads ---
    "api-assist": Route({"GET": api_lead()}),
    "api-assist-refill": Route({"POST": api_lead(400)}),
    # --- analysis and quality (leads) ---
    "api-analysis": Route({"GET": api_lead()}),
    "api-analysis-refresh": Route({"POST": api_lead(202)}),
    "api-quality": Route({"GET": api_lead()}),
    "api-quality-annotator": Route({"GET": api_lead()}, kwargs={"user_id": "owner_id"}),
    "api-quality-standing": Route({"POST": api_lead(400)}, kwargs={"user_id": "owner_id"}),
    "api-quality-events": Route({"GET": api_lead()}),
    "api-quality-refresh": Route({"POST": api_lead(202)}),
    "api-quality-gold": Route({"GET": api_lead(), "POST": api_lead(400)}),
    "api-quality-gold-promotable": Route({"GET": api_lead()}),
    "api-quality-gold-promote": Route({"POST": api_lead(400)}),
    "api-quality-gold-review": Route({"POST": api_lead(400)}),
    "api-quality-gold-active": Route({"POST": api_lead(400)}),
    # --- pages: signing in, home, projects ---
    # signed-in users are sent on from the login page
    "frontend:login": Route(
        {
            "GET": signed_in(302, anonymous=200),
            "POST": signed_in(302, anonymous=200),
            "PUT": signed_in(302, anonymous=200),  # Django's form views take PUT as POST
            "PATCH": signed_in(302, anonymous=405),
            "DELETE": signed_in(302, anonymous=405),
        }
    ),
    "frontend:logout": Route({"POST": everyone(LOGIN)}),
    "frontend:home": Route({"GET": signed_in(200)}),
    # one's own account (never anybody else's)
    "frontend:account": Route({"GET": signed_in(200), "POST": signed_in(200)}),
    "frontend:account-password": Route({"GET": signed_in(200), "POST": signed_in(200)}),
    # creating a project: site admins only
    "frontend:project-create": Route(
        {"GET": signed_in(403, admin=200, adminjoined=200), "POST": signed_in(403, admin=400, adminjoined=400)}
    ),
    # the invitation page is public: its token is the key (an empty form is a 400)
    "frontend:invitation": Route({"GET": everyone(200), "POST": everyone(400)}),
    # declining: the account an invitation names only (the world's names nobody)
    "frontend:invitation-decline": Route({"POST": signed_in(404)}),
    "frontend:project": Route({"GET": page_member()}),
    "frontend:screen": Route({"GET": page_member()}),
    "frontend:import-create": Route({"POST": page_lead(400)}),
    "frontend:import-job": Route({"GET": page_lead()}, kwargs={"job_id": "import_job_id"}),
    "frontend:import-job-progress": Route({"GET": page_lead()}, kwargs={"job_id": "import_job_id"}),
    "frontend:import-job-retry": Route({"POST": page_lead(302)}, kwargs={"job_id": "import_job_id"}),
    "frontend:release-job-progress": Route({"GET": page_lead()}, kwargs={"job_id": "export_job_id"}),
    "frontend:release-job-retry": Route({"POST": page_lead(302)}, kwargs={"job_id": "export_job_id"}),
    "frontend:member-job-progress": Route({"GET": page_lead()}, kwargs={"job_id": "member_job_id"}),
    "frontend:member-job-retry": Route({"POST": page_lead(302)}, kwargs={"job_id": "member_job_id"}),
    "frontend:assist-job-progress": Route({"GET": page_lead()}, kwargs={"job_id": "assist_job_id"}),
    "frontend:assist-job-retry": Route({"POST": page_lead(302)}, kwargs={"job_id": "assist_job_id"}),
    # --- the workspace (members; an assignment: its annotator) ---
    "frontend:workspace": Route({"GET": page_member()}),
    "frontend:my-work": Route({"GET": page_member()}),
    # GET shows the stage (the owner, who holds a lease, is sent to it); POST leases
    "frontend:workspace-next": Route({"GET": page_member(owner=302), "POST": page_member(302)}),
    "frontend:workspace-assignment": Route({"GET": _own(), "POST": _own(302)}),
    "frontend:workspace-draft": Route({"POST": _own(400)}),  # a form post: the draft is JSON
    "frontend:workspace-extend": Route({"POST": _own()}),
    "frontend:workspace-skip": Route({"POST": _own(400)}),
    "frontend:workspace-release": Route({"POST": _own(302)}),
    "frontend:workspace-hints": Route({"POST": _own()}),
    # --- release pages (leads) ---
    "frontend:postprocess": Route({"GET": page_lead()}),
    "frontend:postprocess-start": Route({"POST": page_lead(302)}),
    "frontend:postprocess-decisions": Route({"GET": page_lead()}),
    # no short answers yet: the review sends the lead to post-processing
    "frontend:short-answers-review": Route({"GET": page_lead(302)}),
    "frontend:short-answers-save": Route({"POST": page_lead(302)}, kwargs={"question_id": "question_id"}),
    "frontend:exports": Route({"GET": page_lead(), "POST": page_lead(400)}),
    "frontend:export-detail": Route({"GET": page_lead()}, kwargs={"job_id": "export_job_id"}),
    # --- running a project (leads) ---
    "frontend:project-settings": Route({"GET": page_lead(), "POST": page_lead(400)}),
    "frontend:members": Route({"GET": page_lead()}),
    "frontend:member-add": Route({"POST": page_lead(400)}),
    "frontend:members-bulk": Route({"POST": page_lead(400)}),
    "frontend:member-update": Route({"POST": page_lead(302)}, kwargs={"user_id": "owner_id"}),
    "frontend:member-remove": Route({"POST": page_lead(302)}, kwargs={"user_id": "owner_id"}, data={"confirm": "yes"}),
    "frontend:member-token": Route({"POST": page_lead(200)}, kwargs={"user_id": "crowd_id"}),
    "frontend:member-job": Route({"GET": page_lead()}, kwargs={"job_id": "member_job_id"}),
    "frontend:member-job-credentials": Route({"POST": page_lead()}, kwargs={"job_id": "member_job_id"}),
    "frontend:invitation-create": Route({"POST": page_lead(400)}),
    "frontend:invitation-revoke": Route({"POST": page_lead(302)}),
    "frontend:guidelines": Route({"GET": page_member()}),
    "frontend:guidelines-edit": Route({"GET": page_lead(), "POST": page_lead(400)}),
    "frontend:actions": Route({"GET": page_lead()}),
    "frontend:na-start": Route({"POST": page_lead()}),
    "frontend:app-non-english": Route({"POST": page_lead(400)}),
    "frontend:skips": Route({"GET": page_lead()}),
    "frontend:leases": Route({"GET": page_lead()}),
    "frontend:lease-members": Route({"GET": page_lead()}),
    "frontend:lease-action": Route({"POST": page_lead(400)}),
    # --- analysis and quality pages (leads) ---
    "frontend:analysis": Route({"GET": page_lead()}),
    "frontend:analysis-refresh": Route({"POST": page_lead(302)}),
    "frontend:quality": Route({"GET": page_lead()}),
    "frontend:quality-gold": Route({"GET": page_lead()}),
    "frontend:quality-refresh": Route({"POST": page_lead(302)}),
    # the world's project has no backend: the lead is sent back with the reason
    "frontend:quality-suggestions": Route({"POST": page_lead(302)}),
    "frontend:quality-gold-promote": Route({"POST": page_lead(400)}),
    "frontend:quality-gold-active": Route({"POST": page_lead(400)}),
    "frontend:quality-annotator": Route({"GET": page_lead()}, kwargs={"user_id": "owner_id"}),
    "frontend:quality-standing": Route({"POST": page_lead(400)}, kwargs={"user_id": "owner_id"}),
}


# --- the resolver's routes ----------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    key: str  # the EXPECTED key
    name: str | None  # for reverse()
    route: str  # the pattern, for messages
    arguments: tuple[str, ...]


def _walk(resolvers: list[Any], prefix: str = "", namespace: str = "") -> Iterator[Found]:
    for entry in resolvers:
        route = prefix + str(entry.pattern)
        if any(route.startswith(skipped) for skipped in SKIPPED_PREFIXES):
            continue
        if isinstance(entry, URLResolver):
            inner = f"{namespace}:{entry.namespace}".strip(":") if entry.namespace else namespace
            yield from _walk(entry.url_patterns, route, inner)
        elif isinstance(entry, URLPattern):
            name = f"{namespace}:{entry.name}".strip(":") if entry.name else None
            arguments = tuple(getattr(entry.pattern, "converters", {}))
            yield Found(key=name or route, name=name, route=route, arguments=arguments)


def routes() -> list[Found]:
    return list(_walk(get_resolver().url_patterns))


ROUTES = {found.key: found for found in routes()}


# --- stages with their own rule -------------------------------------------------------------------

# The matrix names the pre-filtering stage, open to every member. Two stages are narrower: who passes
# their rule (``check_access``); every other member of the project gets 403 there.
STAGE_RULES: dict[str, tuple[str, ...]] = {
    "answers": ("peer", "owner", "lead", "admin", "adminjoined"),  # the answer pool (and site admins)
    "review": ("reviewer", "lead", "admin", "adminjoined"),  # reviewers and leads (and site admins)
}
# The routes that name a stage, and what passing its rule gets (the world has work in both stages).
STAGE_ROUTES: dict[tuple[str, str], Any] = {
    ("api-stage-next", "POST"): 200,  # a lease
    ("frontend:workspace-next", "GET"): 200,  # the button that leases
    ("frontend:workspace-next", "POST"): 302,  # to the leased assignment
}


def stage_expect(key: str, method: str, stage: str) -> Expect:
    # (the accounts that joined by an invitation and the project account are annotators outside the pool)
    members = ("peer", "nopool", "reviewer", "owner", "lead", "joined", "crowd")
    row = page_member(STAGE_ROUTES[key, method], **{a: 403 for a in members if a not in STAGE_RULES[stage]})
    return api(row) if key.startswith("api-") else row


# --- the world ----------------------------------------------------------------------------------


@dataclass
class World:
    slug: str
    users: dict[str, Any]
    tokens: dict[str, str]
    sessions: dict[str, str]  # actor -> session key (a new client per request: a logout must not last)
    values: dict[str, Any]  # URL arguments by name (or world attribute)
    own_assignment: dict[str, int]  # actor -> the assignment an assignment URL names for them
    fingerprint: list[tuple[str, str | None]] = field(default_factory=list)  # as every request finds it


def _build() -> World:
    project = ProjectFactory(slug="w", name="World")
    other = ProjectFactory(slug="x", name="Elsewhere")
    users = {
        "outsider": UserFactory(username="otto"),
        "foreign": UserFactory(username="fay"),
        "xlead": UserFactory(username="xena"),
        "removed": UserFactory(username="remy"),
        "peer": UserFactory(username="pia"),
        "nopool": UserFactory(username="nora"),
        "reviewer": UserFactory(username="rita"),
        "owner": UserFactory(username="olly"),
        "lead": UserFactory(username="leo"),
        "admin": UserFactory(username="root", is_superuser=True, is_staff=True),
        "joined": UserFactory(username="jo"),
        "adminjoined": UserFactory(username="boss", is_superuser=True, is_staff=True),
    }
    MembershipFactory(project=other, user=users["foreign"])
    MembershipFactory(project=other, user=users["xlead"], role="lead")
    MembershipFactory(project=other, user=users["joined"])
    crowd = member_add(project=project, username="crowd")
    users["crowd"] = get_user_model().objects.get(username=crowd["username"])
    for who in ("removed", "peer", "owner"):
        MembershipFactory(project=project, user=users[who], in_answer_pool=True)
    MembershipFactory(project=project, user=users["nopool"], in_answer_pool=False)
    MembershipFactory(project=project, user=users["reviewer"], role="reviewer", in_answer_pool=False)
    MembershipFactory(project=project, user=users["lead"], role="lead", in_answer_pool=True)
    made = screens(project, 4)
    screens(other, 1)
    owner_lease = assignment_next(project=project, user=users["owner"], stage="prefilter")
    removed_lease = assignment_next(project=project, user=users["removed"], stage="prefilter")
    assert owner_lease is not None and removed_lease is not None
    # Removed behind the service's back (its lease still open): the checks, not the release, refuse.
    Membership.objects.filter(project=project, user=users["removed"]).delete()
    # a submitted assignment sampled for review: history on My work and the quality pages, review work
    work(project, users["owner"], review_state="sampled")
    answering_question(screens(project, 1)[0])  # answers work (``STAGE_RULES``)
    gold_item = gold(project)
    question = kept_question(
        screen=ScreenFactory(project=project, state="answering", split="train"), text="Q?", position=0
    )
    import_job = job_of_kind(kind="import", project=project, status="done")
    export_job = job_of_kind(kind="export", project=project, status="done")
    for who in ("joined", "adminjoined"):
        invitation_join(token=invitation_create(project=project, created_by=users["lead"]).token, user=users[who])
    invitation = invitation_create(project=project, created_by=users["lead"])
    member_job = MemberJob.objects.create(project=project, status="done", request={"names": []})
    assist_job = AssistJob.objects.create(project=project, status="done", result={"suggested": 0, "failed": 0})
    tokens = {who: Token.objects.get_or_create(user=user)[0].key for who, user in users.items()}
    sessions = {"anonymous": ""}
    for who, user in users.items():
        client = Client()
        client.force_login(user)
        sessions[who] = client.cookies[settings.SESSION_COOKIE_NAME].value
    values = {
        "slug": project.slug,
        "rico_id": made[0].rico_id,
        "stage": "prefilter",
        "package": made[0].app.package,
        "token": invitation.token,
        "invitation_id": invitation.pk,
        "gold_id": gold_item.pk,
        "question_id": question.pk,
        "owner_id": users["owner"].pk,
        "crowd_id": users["crowd"].pk,
        "member_job_id": member_job.pk,
        "assist_job_id": assist_job.pk,
        "user_id": users["owner"].pk,
        "import_job_id": import_job.pk,
        "export_job_id": export_job.pk,
        "job_id": import_job.pk,
    }
    own = dict.fromkeys(ACTORS, owner_lease.pk)
    own["removed"] = removed_lease.pk
    return World(project.slug, users, tokens, sessions, values, own)


@pytest.fixture
def _media_in_tmp():
    """The world's files live in the module's folder (``world``), not in one test's."""


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[World]:
    media = tmp_path_factory.mktemp("authz-media")
    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(media)}},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    with override_settings(MEDIA_ROOT=media, STORAGES=storages), django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            built = _build()
            built.fingerprint = fingerprint()
            yield built
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


# --- requests -----------------------------------------------------------------------------------


def _tables() -> list[str]:
    models = [*apps.get_app_config("annotation").get_models(), Token]
    return sorted({model._meta.db_table for model in models})


def fingerprint() -> list[tuple[str, str | None]]:
    """A checksum of every row of the domain's tables (and the users' identities): one query."""
    parts = [f"select '{t}', md5(string_agg(r::text, ',' order by r::text)) from {t} r" for t in _tables()]
    parts.append(
        "select 'users', md5(string_agg(concat_ws('|', id, username, password, is_active,"
        " is_superuser), ',' order by id)) from auth_user"
    )
    with connection.cursor() as cursor:
        cursor.execute(" union all ".join(parts))
        return sorted(cursor.fetchall())


def url_of(world: World, found: Found, actor: str) -> str:
    entry = EXPECTED[found.key]
    kwargs: dict[str, Any] = {}
    for argument in found.arguments:
        if argument in ("pk", "assignment_id") and argument not in entry.kwargs:
            kwargs[argument] = world.own_assignment[actor]
        else:
            kwargs[argument] = world.values[entry.kwargs.get(argument, argument)]
    if found.name is None:
        return "/" + found.route
    return reverse(found.name, kwargs=kwargs)


def send(world: World, found: Found, method: str, actor: str) -> Any:
    """One request of ``actor``: pages with the session, /api/ with the actor's token."""
    url = url_of(world, found, actor)
    entry = EXPECTED[found.key]
    is_api = url.startswith("/api/")
    if is_api:
        client = Client()
        headers = {} if actor == "anonymous" else {"authorization": f"Token {world.tokens[actor]}"}
        if method == "GET":
            return client.get(url, headers=headers)
        return client.generic(method, url, data=_json(entry.data), content_type="application/json", headers=headers)
    client = Client()
    if world.sessions[actor]:
        client.cookies[settings.SESSION_COOKIE_NAME] = world.sessions[actor]
    if method == "GET":
        return client.get(url)
    return client.post(url, entry.data) if method == "POST" else client.generic(method, url)


def _json(data: dict[str, Any]) -> str:
    import json

    return json.dumps(data)


def status_of(response: Any) -> Any:
    if response.status_code == 302 and response["Location"].startswith("/login/"):
        return LOGIN
    return response.status_code


def in_savepoint(action: Callable[[], Any]) -> Any:
    with transaction.atomic():
        try:
            return action()
        finally:
            transaction.set_rollback(True)


# --- the tests ----------------------------------------------------------------------------------


def test_every_route_has_an_entry():
    missing = sorted(key for key in ROUTES if key not in EXPECTED)
    assert not missing, f"routes without an entry in the authorization matrix: {missing}"
    stale = sorted(key for key in EXPECTED if key not in ROUTES)
    assert not stale, f"entries for routes that no longer exist: {stale}"


def test_every_row_names_every_actor():
    rows = [(key, method, row) for key, route in EXPECTED.items() for method, row in route.methods.items()]
    incomplete = [(key, method) for key, method, row in rows if set(row) != set(ACTORS)]
    assert not incomplete, f"rows without a status for every actor: {incomplete}"


def test_the_actors_hold_every_role_in_and_out_of_the_answer_pool(world):
    # every role of the product, and annotators both in and out of the answer pool, are actors here
    held = Membership.objects.filter(project__slug=world.slug, user__in=world.users.values())
    assert set(held.values_list("role", flat=True)) == set(Role.values)
    assert set(held.filter(role=Role.ANNOTATOR).values_list("in_answer_pool", flat=True)) == {True, False}
    assert set(held.filter(role=Role.REVIEWER).values_list("user__username", flat=True)) == {"rita"}


def test_every_route_that_names_a_stage_is_checked_per_stage():
    named = {
        (key, method) for key, found in ROUTES.items() if "stage" in found.arguments for method in EXPECTED[key].methods
    }
    assert named == set(STAGE_ROUTES)


def check(world: World, key: str, method: str, expected: Expect) -> None:
    found = ROUTES[key]
    got: dict[str, Any] = {}
    changed: list[str] = []
    for actor in ACTORS:

        def request(actor: str = actor) -> Any:
            status = status_of(send(world, found, method, actor))
            # refused requests change nothing; neither does any GET (side effects only on POST)
            read_only = method == "GET" and key not in WRITING_READS
            if (status in REFUSED or read_only) and fingerprint() != world.fingerprint:
                changed.append(actor)
            return status

        got[actor] = in_savepoint(request)
    if os.environ.get("AUTHZ_DUMP"):
        print(f"\nDUMP {key} {method} {got}")
    assert got == expected, f"{method} {found.route}"
    assert not changed, f"{method} {found.route}: refused or a read, yet the database changed for {changed}"


CASES = [(key, method) for key in sorted(ROUTES) if key in EXPECTED for method in EXPECTED[key].methods]


@pytest.mark.parametrize(("key", "method"), CASES)
def test_matrix(world, key, method):
    check(world, key, method, EXPECTED[key].methods[method])


@pytest.mark.parametrize("stage", sorted(STAGE_RULES))
@pytest.mark.parametrize(("key", "method"), sorted(STAGE_ROUTES))
def test_stage_rules(world, key, method, stage):
    check(replace(world, values={**world.values, "stage": stage}), key, method, stage_expect(key, method, stage))


@pytest.mark.parametrize("key", sorted(k for k in ROUTES if k in EXPECTED))
def test_unlisted_methods_are_refused(world, key):
    found = ROUTES[key]
    listed = EXPECTED[key].methods
    # the first actor who may use the route: an unlisted method must be 405 for them
    actor = next(
        (a for a in ("admin", "lead", "owner") if any(row[a] not in REFUSED for row in listed.values())),
        "admin",
    )
    for method in METHODS:
        if method in listed:
            continue
        status = in_savepoint(lambda method=method: status_of(send(world, found, method, actor)))
        assert status == 405, f"{method} {found.route} as {actor}: {status} (add it to EXPECTED if it is served)"
