"""The annotator workspace: server-rendered pages over the engine's services.

Pages never go through the REST layer; each view parses the request, calls one service
of ``pipeline.stages`` (the engine) and renders the result.

Who may use what:

* every page needs a logged-in member of the project (any role; site admins too);
  non-members get 404 so that a project's existence does not leak;
* an assignment page and every partial under it (draft, extend, skip, release, hints)
  belong to the assignment's annotator only: anybody else gets 404.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from annotation.models import Assignment, AssignmentStatus, Project, Question, Stage
from annotation.permissions import project_get_for_member
from frontend import forms
from pipeline import stages as engine

from .core import domain_errors_as_http

# A draft is the page's whole state; far below this in practice (50 elements, short texts).
MAX_DRAFT_BYTES = 256 * 1024

# Fields that have an error slot on some page; any other error goes to the page's banner.
FIELD_SLOTS = {
    "questions",
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

STAGE_TEMPLATES = {
    Stage.PREFILTER: "frontend/workspace/prefilter.html",
    Stage.QUESTIONS_1: "frontend/workspace/questions.html",
    Stage.QUESTIONS_2: "frontend/workspace/questions.html",
    Stage.ANSWERS: "frontend/workspace/answers.html",
    Stage.NOT_ANSWERABLE: "frontend/workspace/not_answerable.html",
}


def _stage_or_404(stage: str) -> str:
    if stage not in Stage.values:
        raise Http404("No such stage.")
    return stage


def assignment_get_for_annotator(*, user: Any, slug: str, pk: int) -> Assignment:
    """The assignment if ``user`` holds it, in project ``slug`` that they are still a member of.

    Anybody else (another annotator, a lead, a non-member) gets ``NotFoundError``: one query.
    """
    qs = Assignment.objects.select_related("project", "screen", "screen__app", "question").filter(
        pk=pk, project__slug=slug, annotator=user
    )
    if not user.is_superuser:
        qs = qs.filter(project__memberships__user=user)
    assignment = qs.first()
    if assignment is None:
        raise NotFoundError("Assignment not found.")
    return assignment


def screen_question_texts(*, screen_id: int) -> list[str]:
    """The questions already on a screen (every pass), for the duplicate hint: one query."""
    return list(Question.objects.filter(screen_id=screen_id).order_by("position").values_list("text", flat=True))


def draft_lines(draft: Any) -> list[tuple[str, str]]:
    """A closed assignment's draft as ``(label, text)`` lines, so that nothing typed is out of reach."""
    if not isinstance(draft, dict):
        return []
    lines: list[tuple[str, str]] = []
    if isinstance(draft.get("question"), str) and draft["question"].strip():
        lines.append(("Question", draft["question"]))
    for i, text in enumerate(draft.get("questions") or []):
        if isinstance(text, str) and text.strip():
            lines.append((f"Question {i + 1}", text))
    for i, element in enumerate(draft.get("elements") or []):
        if isinstance(element, dict) and isinstance(element.get("text"), str):
            where = (
                f"VH #{element['vh_index']}" if element.get("vh_index") is not None else f"box {element.get('bounds')}"
            )
            lines.append((f"Element {i + 1} ({where})", element["text"]))
    if isinstance(draft.get("full_answer"), str) and draft["full_answer"].strip():
        lines.append(("Full answer", draft["full_answer"]))
    for key, label in (("non_english_app", "Non-English app"), ("vh_out_of_sync", "VH out of sync")):
        if key in draft:
            lines.append((label, "yes" if draft[key] else "no"))
    if isinstance(draft.get("note"), str) and draft["note"].strip():
        lines.append(("Note", draft["note"]))
    return lines


def _question_cap(assignment: Assignment) -> int:
    project = assignment.project
    return project.questions_pass2_cap if assignment.stage == Stage.QUESTIONS_2 else project.questions_pass1_cap


def _body_from_post(assignment: Assignment, request: HttpRequest) -> dict[str, Any]:
    post = request.POST
    if assignment.stage == Stage.PREFILTER:
        return forms.prefilter_body(post)
    if assignment.stage in (Stage.QUESTIONS_1, Stage.QUESTIONS_2):
        return forms.questions_body(post, cap=_question_cap(assignment))
    if assignment.stage == Stage.NOT_ANSWERABLE:
        return forms.not_answerable_body(post)
    return forms.answer_body(post)


def _state_from_post(assignment: Assignment, request: HttpRequest) -> dict[str, Any]:
    """What the annotator posted, as a draft-shaped state, so that a refused submit loses nothing."""
    post = request.POST
    if assignment.stage == Stage.PREFILTER:
        return {
            "non_english_app": forms.flag(post, "non_english_app"),
            "vh_out_of_sync": forms.flag(post, "vh_out_of_sync"),
            "note": post.get("note", ""),
        }
    if assignment.stage in (Stage.QUESTIONS_1, Stage.QUESTIONS_2):
        return {"questions": post.getlist("question")}
    if assignment.stage == Stage.NOT_ANSWERABLE:
        return {"question": post.get("question", "")}
    try:
        elements = json.loads(post.get("elements") or "[]")
    except ValueError:
        elements = []
    return {
        "question": post.get("question", ""),
        "full_answer": post.get("full_answer", ""),
        "elements": elements if isinstance(elements, list) else [],
    }


def _render_assignment(
    request: HttpRequest,
    assignment: Assignment,
    *,
    state: dict[str, Any] | None = None,
    error: ApplicationError | forms.FormError | None = None,
    status: int = 200,
) -> HttpResponse:
    slug = assignment.project.slug
    if assignment.status != AssignmentStatus.LEASED:
        return render(
            request,
            "frontend/workspace/closed.html",
            {
                "project": assignment.project,
                "assignment": assignment,
                "error": error,
                "kept": draft_lines(assignment.draft) if assignment.status != AssignmentStatus.SUBMITTED else [],
            },
            status=status if error else 200,
        )
    payload = engine.assignment_payload(assignment=assignment)
    if state is None:
        state = payload.get("draft") or {}
    errors: dict[str, str] = {}
    if error is not None:
        field = (getattr(error, "field", None) or "form").split(".")[0].split("[")[0]
        errors[field if field in FIELD_SLOTS else "form"] = error.message
    cap = int(payload.get("max_questions") or _question_cap(assignment))
    questions = list(state.get("questions") or []) if isinstance(state.get("questions"), list) else []
    questions = [q if isinstance(q, str) else "" for q in questions][:cap]
    questions += [""] * (cap - len(questions))
    question = payload.get("question") or {}
    pk = assignment.pk
    urls = {
        "draft": reverse("frontend:workspace-draft", kwargs={"slug": slug, "pk": pk}),
        "extend": reverse("frontend:workspace-extend", kwargs={"slug": slug, "pk": pk}),
        "hints": reverse("frontend:workspace-hints", kwargs={"slug": slug, "pk": pk}),
        "next": reverse("frontend:workspace-next", kwargs={"slug": slug, "stage": assignment.stage}),
        "home": reverse("frontend:workspace", kwargs={"slug": slug}),
    }
    config = {
        "assignment_id": pk,
        "stage": assignment.stage,
        "screen": payload["screen"],
        "lease_expires_at": payload.get("lease_expires_at"),
        "server_now": timezone.now().isoformat(),
        "state": state,
        "restored": bool(payload.get("draft")),
        "question": question,
        "cap": cap,
        "urls": urls,
        "errors": errors,
    }
    context = {
        "project": assignment.project,
        "assignment": assignment,
        "stage_label": Stage(assignment.stage).label,
        "payload": payload,
        "screen": payload["screen"],
        "config": config,
        "state": state,
        "errors": errors,
        "cap": cap,
        "questions": questions,
        "question": question,
        "previous_questions": [
            q.get("text", "") if isinstance(q, dict) else str(q) for q in payload.get("previous_questions") or []
        ],
        "urls": urls,
    }
    return render(request, STAGE_TEMPLATES[Stage(assignment.stage)], context, status=status)


@login_required
@require_GET
@domain_errors_as_http
def workspace_home(request: HttpRequest, slug: str) -> HttpResponse:
    """The stages this member may work on, what waits in each, their own counts today."""
    project = project_get_for_member(user=request.user, slug=slug)
    stages = engine.stages_for_user(project=project, user=request.user)
    return render(request, "frontend/workspace/home.html", {"project": project, "stages": stages})


@login_required
@require_GET
@domain_errors_as_http
def workspace_next(request: HttpRequest, slug: str, stage: str) -> HttpResponse:
    """Open the annotator's current assignment in ``stage``, or lease the next one.

    A GET on purpose: ``assignment_next`` is idempotent per (user, stage) (it returns the open
    lease before leasing a new one), so a reload or the redirect after a submit is safe.
    """
    stage = _stage_or_404(stage)
    project: Project = project_get_for_member(user=request.user, slug=slug)
    try:
        assignment = engine.assignment_next(project=project, user=request.user, stage=stage)
    except (NotFoundError, PermissionDeniedError):
        raise
    except ApplicationError as exc:
        return render(
            request,
            "frontend/workspace/nothing.html",
            {"project": project, "stage_label": Stage(stage).label, "reason": exc.message},
            status=409 if isinstance(exc, ConflictError) else 400,
        )
    if assignment is None:
        return render(
            request, "frontend/workspace/nothing.html", {"project": project, "stage_label": Stage(stage).label}
        )
    return redirect("frontend:workspace-assignment", slug=slug, pk=assignment.pk)


@login_required
@require_http_methods(["GET", "POST"])
@domain_errors_as_http
def assignment_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """GET: the stage's page (restored from the draft). POST: submit, then open the next one.

    A refused submit re-renders the page with what was posted and the reason next to its
    field (400); a lost lease (409) keeps the content as the draft (the engine's contract).
    """
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, pk=pk)
    if request.method == "GET":
        return _render_assignment(request, assignment)
    try:
        body = _body_from_post(assignment, request)
        engine.assignment_submit(assignment_id=assignment.pk, user=request.user, data=body)
    except forms.FormError as exc:
        return _render_assignment(
            request, assignment, state=_state_from_post(assignment, request), error=exc, status=400
        )
    except ConflictError as exc:
        assignment.refresh_from_db()
        return _render_assignment(
            request, assignment, state=_state_from_post(assignment, request), error=exc, status=409
        )
    except (NotFoundError, PermissionDeniedError):
        raise
    except ApplicationError as exc:
        return _render_assignment(
            request, assignment, state=_state_from_post(assignment, request), error=exc, status=400
        )
    return redirect("frontend:workspace-next", slug=slug, stage=assignment.stage)


@login_required
@require_POST
@domain_errors_as_http
def assignment_draft(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Autosave: body ``{"draft": {...}}`` (the page's state). JSON answers; 409 when the lease is lost."""
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, pk=pk)
    if len(request.body) > MAX_DRAFT_BYTES:
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
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, pk=pk)
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
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, pk=pk)
    # The quick-reason buttons post their own ``reason`` after the free-text one: the last non-empty wins.
    reasons = [r.strip() for r in request.POST.getlist("reason") if r.strip()]
    reason = reasons[-1] if reasons else ""
    if not reason:
        return _render_assignment(
            request, assignment, error=forms.FormError("Say why you skip this one.", field="skip_reason"), status=400
        )
    try:
        engine.assignment_skip(assignment_id=assignment.pk, user=request.user, reason=reason[:2000])
    except (NotFoundError, PermissionDeniedError):
        raise
    except ApplicationError as exc:
        if exc.field == "reason":
            refused = forms.FormError(exc.message, field="skip_reason")
            return _render_assignment(request, assignment, error=refused, status=400)
        return _render_assignment(request, assignment, error=exc, status=409 if isinstance(exc, ConflictError) else 400)
    return redirect("frontend:workspace-next", slug=slug, stage=assignment.stage)


@login_required
@require_POST
@domain_errors_as_http
def assignment_release(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Give the assignment back to the queue (e.g. end of the day) and return to the workspace home."""
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, pk=pk)
    try:
        engine.assignment_release(assignment_id=assignment.pk, user=request.user)
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
    assignment = assignment_get_for_annotator(user=request.user, slug=slug, pk=pk)
    texts = request.POST.getlist("question")
    try:
        index = int(request.POST.get("index", "0"))
    except ValueError:
        index = 0
    text = texts[index] if 0 <= index < len(texts) else ""
    on_screen = screen_question_texts(screen_id=assignment.screen_id)
    others = on_screen + [t for i, t in enumerate(texts) if i != index and t.strip()]
    hints = forms.question_hints(text, others=others)
    return render(request, "frontend/workspace/_hints.html", {"hints": hints})
