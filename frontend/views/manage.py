"""A lead's pages: project settings, guidelines, pipeline actions that were API-only, skip reasons and
notes, held leases (members and invitations: ``frontend.views.members``). Every page needs a login.

Who may use each page:

* creating a project: site admins (others 403);
* a project's settings, actions, skips, leases (and the member names its reassign field looks up),
  guidelines editing: leads of the project and site admins (annotators and reviewers 403, non-members 404);
* a project's guidelines: any member (non-members 404).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import App, Membership, Project
from annotation.models.projects import SETTINGS
from annotation.permissions import member_get, project_get_for_lead, project_get_for_member, user_is_lead
from annotation.selectors.assignments import assignment_skipped_list, prefilter_note_list
from annotation.services.guidelines import (
    GUIDELINES_MAX,
    guidelines_mark_seen,
    guidelines_render,
    guidelines_save,
    guidelines_text,
)
from annotation.services.projects import (
    PROJECT_SETTINGS,
    PROJECT_SETTINGS_GROUPS,
    project_create,
    project_settings_update,
)
from frontend.views.core import domain_errors_as_http
from pipeline.analytics.stored import snapshot_current
from pipeline.engine import app_language_list, app_mark_non_english, not_answerable_start
from pipeline.stages.leases import lease_free, lease_list, lease_reassign
from pipeline.stages.not_answerable import SAMPLE_MAX, not_answerable_default_size

ROWS_PER_PAGE = 50
MEMBER_NAMES_MAX = 20  # names the reassign field offers at a time, whatever the project's size


def _setting_formfield(db_field: Any, **kwargs: Any) -> Any:
    """A setting's form field with its declared bounds (``min``/``max`` in the HTML, and the
    model's own messages before the model is asked)."""
    return db_field.formfield(**{**kwargs, **SETTINGS.form_options(db_field.name)})


class ProjectSettingsForm(forms.ModelForm):
    """Every setting a lead edits, as declared (``annotation.models.projects.SETTINGS``): the
    papers' defaults, the ranges and the help come from the declarations through the model fields;
    the splits' sum is the model's ``clean``."""

    class Meta:
        model = Project
        fields = list(PROJECT_SETTINGS)
        formfield_callback = _setting_formfield

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["description"].widget.attrs["rows"] = 2
        for name in SETTINGS.secrets:  # write-only: never rendered; left empty, the stored one stays
            self.fields[name].widget = forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"})
            self.fields[name].required = False

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name in SETTINGS.secrets:
            if not cleaned.get(name) and self.instance.pk is not None:
                cleaned[name] = getattr(self.instance, name)
        return cleaned

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in PROJECT_SETTINGS_GROUPS]


class ProjectCreateForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["name", "slug", "description"]
        help_texts = {"slug": "The project's address: letters, digits, - and _."}


class GuidelinesForm(forms.Form):
    text = forms.CharField(
        required=False, max_length=GUIDELINES_MAX, widget=forms.Textarea(attrs={"rows": 24, "class": "mono"})
    )


def _add_app_error(form: forms.Form, exc: ApplicationError) -> None:
    form.add_error(exc.field if exc.field in form.fields else None, exc.message)


# --- projects ------------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@login_required
def project_create_page(request: HttpRequest) -> HttpResponse:
    """Create a project (then its settings page opens). Site admins only; others 403."""
    if not request.user.is_superuser:
        raise PermissionDenied("Only site admins create projects.")
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = project_create(user=request.user, **form.cleaned_data)
        except ApplicationError as exc:
            _add_app_error(form, exc)
        else:
            messages.success(request, f"Project {project.name} created with the papers' defaults.")
            return HttpResponseRedirect(reverse("frontend:project-settings", kwargs={"slug": project.slug}))
    status = 400 if request.method == "POST" else 200
    return render(request, "frontend/manage/project_create.html", {"form": form}, status=status)


@require_http_methods(["GET", "POST"])
@login_required
@domain_errors_as_http
def project_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """Edit every setting of the project. Leads of the project and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    form = ProjectSettingsForm(request.POST or None, instance=project)
    if request.method == "POST":
        if form.is_valid():
            changed = {name: form.cleaned_data[name] for name in form.changed_data}
            try:
                project_settings_update(project=project, **changed)
            except ApplicationError as exc:
                _add_app_error(form, exc)
            else:
                messages.success(request, "Settings saved." if changed else "Nothing changed.")
                return HttpResponseRedirect(reverse("frontend:project-settings", kwargs={"slug": slug}))
        project.refresh_from_db()
    status = 400 if request.method == "POST" else 200
    return render(request, "frontend/manage/settings.html", {"project": project, "form": form}, status=status)


# --- guidelines ----------------------------------------------------------------------------------


@require_GET
@login_required
@domain_errors_as_http
def guidelines_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's guidelines. Any member and site admins; others 404. Opening it counts as seen."""
    project = project_get_for_member(user=request.user, slug=slug)
    membership = member_get(project=project, user=request.user)
    first_time = membership is not None and membership.guidelines_seen_at is None
    guidelines_mark_seen(membership=membership)
    context = {
        "project": project,
        "html": mark_safe(guidelines_render(project=project)),  # noqa: S308 -- sanitised by nh3
        "first_time": first_time,
        "is_lead": user_is_lead(user=request.user, project=project),
    }
    return render(request, "frontend/manage/guidelines.html", context)


@require_http_methods(["GET", "POST"])
@login_required
@domain_errors_as_http
def guidelines_edit(request: HttpRequest, slug: str) -> HttpResponse:
    """Edit the guidelines (Markdown; empty: the papers' default). Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    form = GuidelinesForm(request.POST or None, initial={"text": guidelines_text(project=project)})
    if request.method == "POST" and form.is_valid():
        try:
            guidelines_save(project=project, text=form.cleaned_data["text"])
        except ApplicationError as exc:
            _add_app_error(form, exc)
        else:
            messages.success(request, "Guidelines saved.")
            return HttpResponseRedirect(reverse("frontend:guidelines", kwargs={"slug": slug}))
    status = 400 if request.method == "POST" else 200
    return render(request, "frontend/manage/guidelines_edit.html", {"project": project, "form": form}, status=status)


# --- actions, skips, leases ----------------------------------------------------------------------


def _not_answerable_counts(project: Project, *, live: bool) -> tuple[dict[str, Any], Any, bool]:
    """The not-answerable sample's counts, when they were counted (``None``: now) and whether they are being
    counted again: from the stored progress snapshot (``pipeline.analytics.stored``; they count every
    question of the project, 0.2 s at ScreenQA size), or ``live`` (after an action, a small project)."""
    if not live:
        stored = snapshot_current(project=project, kind="progress")
        if not stored.live and stored.figures.not_answerable is not None:
            return stored.figures.not_answerable, stored.computed_at, stored.refreshing
    return not_answerable_default_size(project=project), None, False


def _actions_page(request: HttpRequest, project: Project, *, status: int = 200, **extra: Any) -> HttpResponse:
    """The actions page; the apps a page at a time (``?page=``), searched by package (``?q=``). The
    not-answerable counts are stored figures on a view, counted again after an action (a POST)."""
    search = request.GET.get("q", "").strip()[:255]
    na, counted_at, recounting = _not_answerable_counts(project, live=request.method == "POST")
    apps = App.objects.filter(project=project).order_by("package")
    if search:
        apps = apps.filter(package__icontains=search)
    page = Paginator(apps.values_list("pk", flat=True), ROWS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "project": project,
        "na": na,
        "counted_at": counted_at,
        "recounting": recounting,
        "sample_max": SAMPLE_MAX,
        "apps": app_language_list(project=project, app_ids=list(page.object_list)),
        "page": page,
        "search": search,
        "page_query": urlencode({"q": search} if search else {}),
        **extra,
    }
    return render(request, "frontend/manage/actions.html", context, status=status)


@require_GET
@login_required
@domain_errors_as_http
def actions_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Start the not-answerable stage; decide apps' language. Leads and site admins."""
    return _actions_page(request, project_get_for_lead(user=request.user, slug=slug))


@require_POST
@login_required
@domain_errors_as_http
def not_answerable_start_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Sample screens for the not-answerable stage (empty size: up to the target). Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    raw = (request.POST.get("sample_size") or "").strip()
    try:
        size = int(raw) if raw else None
    except ValueError:
        return _actions_page(request, project, status=400, na_error=f"The sample size is a whole number, not {raw!r}.")
    try:
        result = not_answerable_start(project=project, sample_size=size)
    except ApplicationError as exc:
        return _actions_page(request, project, status=400, na_error=exc.message)
    return _actions_page(request, project, na_result=result)


@require_POST
@login_required
@domain_errors_as_http
def app_non_english_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Decide a whole app's language: non-English, or English with ``english=1`` (what its
    language excluded comes back). Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    english = request.POST.get("english", "")
    if english not in ("", "0", "1"):
        return _actions_page(request, project, status=400, app_error=f"english is 0 or 1, not {english!r}.")
    try:
        result = app_mark_non_english(project=project, package=request.POST.get("package", ""), english=english == "1")
    except ApplicationError as exc:
        return _actions_page(request, project, status=400, app_error=exc.message)
    return _actions_page(request, project, app_result=result)


@require_GET
@login_required
@domain_errors_as_http
def skips_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Skip reasons and pre-filter notes, newest first. Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    skips = Paginator(assignment_skipped_list(project=project), ROWS_PER_PAGE).get_page(request.GET.get("page"))
    notes = Paginator(prefilter_note_list(project=project), ROWS_PER_PAGE).get_page(request.GET.get("notes"))
    return render(request, "frontend/manage/skips.html", {"project": project, "skips": skips, "notes": notes})


def _leases_page(request: HttpRequest, project: Project, *, status: int = 200, error: str = "") -> HttpResponse:
    """The held leases a page at a time. Every row's reassign field offers the members whose names hold
    what has been typed (one ``<datalist>``, filled by ``lease_members_view`` as the lead types): the page
    stays the same size whether the project has ten members or a thousand."""
    page = Paginator(lease_list(project=project), ROWS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"project": project, "page": page, "leases": page.object_list, "error": error}
    return render(request, "frontend/manage/leases.html", context, status=status)


def _reassign_to(project: Project, request: HttpRequest) -> int | None:
    """The member a lease is handed to: ``user`` (an id) or ``username`` (a member's name, as the page's
    field sends it); ``None`` when neither names anybody."""
    user_id = (request.POST.get("user") or "").strip()
    if user_id.isdigit():
        return int(user_id)
    username = (request.POST.get("username") or "").strip()
    if not username:
        return None
    found = Membership.objects.filter(project=project, user__username=username).values_list("user_id", flat=True)
    return found.first() or 0  # 0: nobody; the service refuses it as "not a member"


@require_GET
@login_required
@domain_errors_as_http
def leases_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Leases held now, oldest first, a page at a time (``?page=``), with free and reassign. Leads and
    site admins."""
    return _leases_page(request, project_get_for_lead(user=request.user, slug=slug))


@require_GET
@login_required
@domain_errors_as_http
def lease_members_view(request: HttpRequest, slug: str) -> JsonResponse:
    """``{"members": [...]}``: up to ``MEMBER_NAMES_MAX`` member names holding ``?q=`` (any case), in name
    order, for the leases page's reassign field. Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    query = (request.GET.get("q") or "").strip()[:150]
    names = Membership.objects.filter(project=project, user__username__icontains=query)
    names = names.order_by("user__username").values_list("user__username", flat=True)[:MEMBER_NAMES_MAX]
    return JsonResponse({"members": list(names)})


@require_POST
@login_required
@domain_errors_as_http
def lease_action_view(request: HttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """Free a lease (``action=free``) or hand it to ``user`` (``action=reassign``). Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    action = request.POST.get("action")
    try:
        if action == "free":
            lease_free(project=project, assignment_id=assignment_id)
            messages.success(request, "Lease freed: the item is back in the queue.")
        elif action == "reassign":
            user_id = _reassign_to(project, request)
            if user_id is None:
                return _leases_page(request, project, status=400, error="Choose the member to hand it to.")
            assignment = lease_reassign(project=project, assignment_id=assignment_id, user_id=user_id)
            messages.success(request, f"Handed to {assignment.annotator.username}.")
        else:
            return _leases_page(request, project, status=400, error="Choose free or reassign.")
    except NotFoundError:
        raise
    except ApplicationError as exc:
        return _leases_page(
            request, project, status=400 if exc.__class__ is ApplicationError else 409, error=exc.message
        )
    return HttpResponseRedirect(reverse("frontend:leases", kwargs={"slug": slug}))
