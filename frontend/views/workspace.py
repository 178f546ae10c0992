"""The annotator workspace: server-rendered pages over the engine's services.

Pages never go through the REST layer; each view parses the request, calls one service
of ``pipeline.stages`` (the engine) and renders the result.

Who may use what:

* every page needs a logged-in member of the project (any role; site admins too);
  non-members get 404 so that a project's existence does not leak; a member refused a stage
  (paused, not qualified, outside the answer pool or not a reviewer) gets a 403 page saying why;
* an assignment page and every partial under it (draft, extend, skip, release, hints)
  belong to the assignment's annotator only: anybody else gets 404.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from annotation.models import Assignment, AssignmentStatus, Project, Question, StandingStatus
from annotation.permissions import assignment_get_for_annotator, member_get, project_get_for_member
from annotation.selectors.assignments import assignment_open_brief
from annotation.services.assignments import DRAFT_MAX_BYTES, SKIP_REASON_MAX
from frontend import hints
from pipeline import engine
from pipeline.quality.mine import refusal_items
from pipeline.stages.base import StageDefinition

from .core import domain_errors_as_http

# Fields that have an error slot on some page; any other error goes to the page's banner.
FIELD_SLOTS = {
    "questions",
    "flags",
    "question",
    "elements",
    "full_answer",
    "note",
    "skip_reason",
    "action",
    "verdict",
    "non_english_app",
    "vh_out_of_sync",
}


def _stage_or_404(stage: str) -> StageDefinition:
    try:
        return engine.stage_get(stage)
    except NotFoundError as exc:
        raise Http404("No such stage.") from exc


def screen_question_texts(*, screen_id: int) -> list[str]:
    """The questions already on a screen (every pass), for the duplicate hint: one query."""
    return list(Question.objects.filter(screen_id=screen_id).order_by("position").values_list("text", flat=True))


def _render_assignment(
    request: HttpRequest,
    assignment: Assignment,
    *,
    state: dict[str, Any] | None = None,
    error: ApplicationError | None = None,
    status: int = 200,
) -> HttpResponse:
    stage = engine.stage_get(assignment.stage)
    slug = assignment.project.slug
    if assignment.status != AssignmentStatus.LEASED:
        draft = assignment.draft if isinstance(assignment.draft, dict) else {}
        return render(
            request,
            "frontend/workspace/closed.html",
            {
                "project": assignment.project,
                "assignment": assignment,
                "error": error,
                "kept": stage.draft_lines(draft=draft) if assignment.status != AssignmentStatus.SUBMITTED else [],
            },
            status=status if error else 200,
        )
    payload = engine.assignment_payload(assignment=assignment)
    if state is None:
        state = payload.get("draft") or {}
    errors: dict[str, str] = {}
    if error is not None:
        field = (error.field or "form").split(".")[0].split("[")[0]
        errors[field if field in FIELD_SLOTS else "form"] = error.message
    limits = stage.limits(project=assignment.project)
    page = stage.page_context(payload=payload, state=state, limits=limits)
    pk = assignment.pk
    urls = {
        "draft": reverse("frontend:workspace-draft", kwargs={"slug": slug, "pk": pk}),
        "extend": reverse("frontend:workspace-extend", kwargs={"slug": slug, "pk": pk}),
        "release": reverse("frontend:workspace-release", kwargs={"slug": slug, "pk": pk}),
        "hints": reverse("frontend:workspace-hints", kwargs={"slug": slug, "pk": pk}),
        "next": reverse("frontend:workspace-next", kwargs={"slug": slug, "stage": assignment.stage}),
        "home": reverse("frontend:workspace", kwargs={"slug": slug}),
    }
    config = {
        "assignment_id": pk,
        "stage": assignment.stage,
        "controller": static(f"frontend/workspace/stages/{stage.controller}.js"),
        "viewer": stage.viewer,
        "limits": limits,
        "messages": stage.messages,
        "screen": payload["screen"],
        "lease_expires_at": payload.get("lease_expires_at"),
        "server_now": timezone.now().isoformat(),
        "state": state,
        "restored": bool(payload.get("draft")),
        "question": payload.get("question") or {},
        "urls": urls,
        "errors": errors,
        "page": page,
    }
    context = {
        "project": assignment.project,
        "assignment": assignment,
        "stage_label": stage.label,
        "payload": payload,
        "screen": payload["screen"],
        "config": config,
        "state": state,
        "errors": errors,
        "limits": limits,
        "question": payload.get("question") or {},
        "urls": urls,
        "skip_reason_max": SKIP_REASON_MAX,
        **page,
    }
    return render(request, stage.template, context, status=status)


@login_required
@require_GET
@domain_errors_as_http
def workspace_home(request: HttpRequest, slug: str) -> HttpResponse:
    """The stages this member may work on, what waits in each, their own counts today."""
    project = project_get_for_member(user=request.user, slug=slug)
    stages = engine.stages_for_user(project=project, user=request.user)
    return render(request, "frontend/workspace/home.html", {"project": project, "stages": stages})


@login_required
@require_http_methods(["GET", "POST"])
@domain_errors_as_http
def workspace_next(request: HttpRequest, slug: str, stage: str) -> HttpResponse:
    """POST: open the annotator's current assignment in ``stage``, or lease the next one.
    GET: never leases (a cross-site link or a prefetch must not hold work): it opens the
    caller's live lease in the stage if there is one, else shows a button that POSTs here.

    ``assignment_next`` is idempotent per (user, stage) (it returns the open lease before
    leasing a new one), so a double POST is safe.
    """
    definition = _stage_or_404(stage)
    project: Project = project_get_for_member(user=request.user, slug=slug)
    if request.method == "POST":
        return _open_next(request, project=project, definition=definition)
    definition.check_access(user=request.user, membership=member_get(project=project, user=request.user))
    now = timezone.now()
    standing, wrong = refusal_items(project=project, user=request.user, stage=definition.name)
    if standing is not None and standing.status == StandingStatus.PAUSED:  # no button that cannot work
        reason = f"You are paused in {definition.label}{': ' + standing.reason if standing.reason else ''}."
        context = {"project": project, "stage": definition, "reason": reason + " A lead can reinstate you."}
        context.update(standing=standing, wrong=wrong)
        return render(request, "frontend/workspace/refused.html", context, status=403)
    held = assignment_open_brief(project=project, user=request.user, stage=definition.name)
    if held is not None and held[1] > now:
        return redirect("frontend:workspace-assignment", slug=slug, pk=held[0])
    context = {"project": project, "stage": definition.name, "stage_label": definition.label}
    if not definition.available_count(project=project, user=request.user, now=now):
        return render(request, "frontend/workspace/nothing.html", context)
    return render(request, "frontend/workspace/next.html", context)


def _open_next(
    request: HttpRequest, *, project: Project, definition: StageDefinition, after_submit: bool = False
) -> HttpResponse:
    """Lease (or reopen) the caller's next assignment of the stage and redirect to it, or to
    this stage's GET page (which says when nothing waits). Only ever called on a POST."""
    try:
        assignment = engine.assignment_next(project=project, user=request.user, stage=definition.name)
    except NotFoundError:
        raise
    except PermissionDeniedError as exc:
        if after_submit:  # the submit stands; the stage's page says why no next item comes
            return redirect("frontend:workspace-next", slug=project.slug, stage=definition.name)
        # Refused (paused, not qualified, not in the answer pool, not a reviewer): a page that
        # says why and, for a quality decision, shows the items behind it.
        standing, wrong = refusal_items(project=project, user=request.user, stage=definition.name)
        context = {
            "project": project,
            "stage": definition,
            "reason": exc.message,
            "standing": standing,
            "wrong": wrong,
        }
        return render(request, "frontend/workspace/refused.html", context, status=403)
    except ApplicationError as exc:
        return render(
            request,
            "frontend/workspace/nothing.html",
            {"project": project, "stage": definition.name, "stage_label": definition.label, "reason": exc.message},
            status=409 if isinstance(exc, ConflictError) else 400,
        )
    if assignment is None:
        return redirect("frontend:workspace-next", slug=project.slug, stage=definition.name)
    return redirect("frontend:workspace-assignment", slug=project.slug, pk=assignment.pk)


@login_required
@require_http_methods(["GET", "POST"])
@domain_errors_as_http
def assignment_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """GET: the stage's page (restored from the draft). POST: submit, then open the next one.

    A refused submit re-renders the page with what was posted and the reason next to its
    field (400); a lost lease (409) keeps the content as the draft (the engine's contract).
    """
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, assignment_id=pk)
    if request.method == "GET":
        return _render_assignment(request, assignment)
    stage = engine.stage_get(assignment.stage)
    try:
        body = stage.form_body(post=request.POST, assignment=assignment)
        engine.assignment_submit(assignment_id=assignment.pk, user=request.user, data=body)
    except ConflictError as exc:
        assignment = assignment_get_for_annotator(user=request.user, slug=slug, assignment_id=pk)
        return _render_assignment(request, assignment, state=stage.form_state(post=request.POST), error=exc, status=409)
    except (NotFoundError, PermissionDeniedError):
        raise
    except ApplicationError as exc:
        return _render_assignment(request, assignment, state=stage.form_state(post=request.POST), error=exc, status=400)
    return _open_next(request, project=assignment.project, definition=stage, after_submit=True)


@login_required
@require_POST
@domain_errors_as_http
def assignment_draft(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Autosave: body ``{"draft": {...}}`` (the page's state). JSON answers; 409 when the lease is lost."""
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, assignment_id=pk)
    if request.content_type != "application/json":
        # a form post has had its body read as form fields already (the hostile-input check)
        return JsonResponse({"detail": 'Send {"draft": {...}} as application/json.'}, status=400)
    if len(request.body) > DRAFT_MAX_BYTES + 1024:  # the draft plus its {"draft": ...} wrapper
        return JsonResponse({"detail": "The draft is too large."}, status=400)
    try:
        draft = json.loads(request.body or b"{}").get("draft")
    except (ValueError, AttributeError):
        draft = None
    if not isinstance(draft, dict):
        return JsonResponse({"detail": 'Send {"draft": {...}}.'}, status=400)
    try:
        saved = engine.assignment_draft_save(assignment_id=assignment.pk, user=request.user, draft=draft)
    except ConflictError as exc:
        return JsonResponse({"detail": exc.message, "lease": "lost"}, status=409)
    except (NotFoundError, PermissionDeniedError):
        raise
    except ApplicationError as exc:
        return JsonResponse({"detail": exc.message, "field": exc.field}, status=400)
    return JsonResponse(
        {"saved_at": timezone.now().isoformat(), "lease_expires_at": saved.lease_expires_at.isoformat()}
    )


@login_required
@require_POST
@domain_errors_as_http
def assignment_extend(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Extend the lease. ``{"lease_expires_at"}``; 409 when it is already lost."""
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, assignment_id=pk)
    try:
        extended = engine.assignment_extend(assignment_id=assignment.pk, user=request.user)
    except ConflictError as exc:
        return JsonResponse({"detail": exc.message, "lease": "lost"}, status=409)
    return JsonResponse(
        {"lease_expires_at": extended.lease_expires_at.isoformat(), "server_now": timezone.now().isoformat()}
    )


@login_required
@require_POST
@domain_errors_as_http
def assignment_skip(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Skip with a reason (required), then open the next assignment of the stage."""
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, assignment_id=pk)
    # The quick-reason buttons post their own ``reason`` after the free-text one: the last non-empty wins.
    reasons = [r.strip() for r in request.POST.getlist("reason") if r.strip()]
    reason = reasons[-1] if reasons else ""
    if not reason:
        return _render_assignment(
            request, assignment, error=ApplicationError("Say why you skip this one.", field="skip_reason"), status=400
        )
    try:
        engine.assignment_skip(assignment_id=assignment.pk, user=request.user, reason=reason[:SKIP_REASON_MAX])
    except (NotFoundError, PermissionDeniedError):
        raise
    except ApplicationError as exc:
        if exc.field == "reason":
            refused = ApplicationError(exc.message, field="skip_reason")
            return _render_assignment(request, assignment, error=refused, status=400)
        return _render_assignment(request, assignment, error=exc, status=409 if isinstance(exc, ConflictError) else 400)
    return _open_next(request, project=assignment.project, definition=engine.stage_get(assignment.stage))


@login_required
@require_POST
@domain_errors_as_http
def assignment_release(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Give the assignment back to the queue (e.g. end of the day) and return to the workspace home.

    ``left=untouched`` in the body: the workspace's beacon on leaving an untouched item
    (``engine.assignment_release(untouched_leave=True)``)."""
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, assignment_id=pk)
    try:
        engine.assignment_release(
            assignment_id=assignment.pk, user=request.user, untouched_leave=request.POST.get("left") == "untouched"
        )
    except (NotFoundError, PermissionDeniedError):
        raise
    except ApplicationError as exc:
        return _render_assignment(request, assignment, error=exc, status=409 if isinstance(exc, ConflictError) else 400)
    return redirect("frontend:workspace", slug=slug)


@login_required
@require_POST
@domain_errors_as_http
def question_hints(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """htmx partial: live hints for the question field number ``index`` of the posted form.

    Compared with the questions already on the screen and the writer's other fields.
    """
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, assignment_id=pk)
    texts = request.POST.getlist("question")
    try:
        index = int(request.POST.get("index", "0"))
    except ValueError:
        index = 0
    text = texts[index] if 0 <= index < len(texts) else ""
    on_screen = screen_question_texts(screen_id=assignment.screen_id)
    others = on_screen + [t for i, t in enumerate(texts) if i != index and t.strip()]
    found = hints.question_hints(text, others=others)
    return render(request, "frontend/workspace/_hints.html", {"hints": found})
