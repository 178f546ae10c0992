"""A lead's pages: project settings, members and invitations, guidelines, pipeline actions that
were API-only, skip reasons and notes, held leases. Every page needs a login.

Who may use each page:

* creating a project: site admins (others 403);
* a project's settings, members, invitations, actions, skips, leases, guidelines editing:
  leads of the project and site admins (annotators and reviewers 403, non-members 404);
* a project's guidelines: any member (non-members 404);
* accepting an invitation: anybody holding an open link (it is how a new person gets an account).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import Invitation, Membership, Project, Role
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
from annotation.services.members import (
    INVITATION_DAYS_DEFAULT,
    INVITATION_DAYS_MAX,
    invitation_accept,
    invitation_create,
    invitation_open_get,
    invitation_revoke,
    member_add,
    members_create,
    members_import_csv,
    membership_remove,
    membership_update,
    token_get,
    token_rotate,
)
from annotation.services.projects import (
    PROJECT_SETTINGS,
    PROJECT_SETTINGS_GROUPS,
    project_create,
    project_settings_update,
)
from frontend.views.core import domain_errors_as_http
from pipeline.stages import app_language_list, app_mark_non_english, not_answerable_start
from pipeline.stages.leases import LEASES_SHOWN, lease_free, lease_list, lease_reassign
from pipeline.stages.not_answerable import SAMPLE_MAX, not_answerable_default_size

ROWS_PER_PAGE = 50


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

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in PROJECT_SETTINGS_GROUPS]


class ProjectCreateForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["name", "slug", "description"]
        help_texts = {"slug": "The project's address: letters, digits, - and _."}


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    in_answer_pool = forms.BooleanField(required=False, label="In the answer pool")


class MembersBulkForm(forms.Form):
    csv = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="One per line: username, email or both."
    )
    count = forms.IntegerField(required=False, min_value=1, max_value=10_000, help_text="…or this many new accounts.")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    in_answer_pool = forms.BooleanField(required=False, label="In the answer pool")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not (data.get("csv") or "").strip() and not data.get("count"):
            raise forms.ValidationError("Paste a CSV or give a count.")
        return data


class InvitationForm(forms.Form):
    email = forms.EmailField(required=False, help_text="Who it is for (a note; anybody with the link may use it).")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    in_answer_pool = forms.BooleanField(required=False, label="In the answer pool")
    days = forms.IntegerField(min_value=1, max_value=INVITATION_DAYS_MAX, initial=INVITATION_DAYS_DEFAULT)


class AcceptForm(forms.Form):
    username = forms.CharField(max_length=150)
    password = forms.CharField(widget=forms.PasswordInput)
    password_again = forms.CharField(widget=forms.PasswordInput, label="Password (again)")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("password") and data.get("password") != data.get("password_again"):
            self.add_error("password_again", "The two passwords differ.")
        return data


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


# --- members -------------------------------------------------------------------------------------


def _members_page(request: HttpRequest, project: Project, *, status: int = 200, **forms_: Any) -> HttpResponse:
    members = Membership.objects.filter(project=project).select_related("user").order_by("user__username")
    context = {
        "project": project,
        "members": members,
        "roles": Role.choices,
        "invitations": Invitation.objects.filter(project=project, accepted_at__isnull=True, revoked_at__isnull=True),
        "add_form": forms_.get("add_form") or MemberAddForm(),
        "bulk_form": forms_.get("bulk_form") or MembersBulkForm(),
        "invite_form": forms_.get("invite_form") or InvitationForm(),
        "created": forms_.get("created") or [],
        "bulk_errors": forms_.get("bulk_errors") or [],
        "invitation_url": forms_.get("invitation_url"),
        "shown_token": forms_.get("shown_token"),
    }
    return render(request, "frontend/manage/members.html", context, status=status)


@require_GET
@login_required
@domain_errors_as_http
def members_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Members with role, answer pool and API token; forms to add, import and invite. Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    return _members_page(request, project)


@require_POST
@login_required
@domain_errors_as_http
def member_add_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Add one person. Leads and site admins. The new password is shown once, on the answer page."""
    project = project_get_for_lead(user=request.user, slug=slug)
    form = MemberAddForm(request.POST)
    if form.is_valid():
        try:
            created = member_add(project=project, **form.cleaned_data)
        except ApplicationError as exc:
            _add_app_error(form, exc)
        else:
            return _members_page(request, project, created=[created])
    return _members_page(request, project, status=400, add_form=form)


@require_POST
@login_required
@domain_errors_as_http
def members_bulk_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Add people from a CSV (bad rows reported, good ones added) or a count of new accounts."""
    project = project_get_for_lead(user=request.user, slug=slug)
    form = MembersBulkForm(request.POST)
    if not form.is_valid():
        return _members_page(request, project, status=400, bulk_form=form)
    data = form.cleaned_data
    try:
        if (data["csv"] or "").strip():
            result = members_import_csv(
                project=project, text=data["csv"], role=data["role"], in_answer_pool=data["in_answer_pool"]
            )
        else:
            result = {
                "added": members_create(
                    project=project, count=data["count"], role=data["role"], in_answer_pool=data["in_answer_pool"]
                ),
                "errors": [],
            }
    except ApplicationError as exc:
        _add_app_error(form, exc)
        return _members_page(request, project, status=400, bulk_form=form)
    status = 400 if result["errors"] and not result["added"] else 200
    return _members_page(request, project, status=status, created=result["added"], bulk_errors=result["errors"])


@require_POST
@login_required
@domain_errors_as_http
def member_update_view(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """Change a member's role and answer pool. Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    try:
        membership_update(
            project=project,
            user_id=user_id,
            role=request.POST.get("role") or None,
            in_answer_pool=request.POST.get("in_answer_pool") == "on",
        )
    except NotFoundError:
        raise
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return _members_page(request, project, status=400)
    messages.success(request, "Member updated.")
    return HttpResponseRedirect(reverse("frontend:members", kwargs={"slug": slug}))


@require_POST
@login_required
@domain_errors_as_http
def member_remove_view(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """Take a member out of the project (their leases go back to the queue). Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    try:
        result = membership_remove(project=project, user_id=user_id)
    except NotFoundError:
        raise
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return _members_page(request, project, status=400)
    messages.success(request, f"{result['username']} removed; {result['released']} held item(s) back in the queue.")
    return HttpResponseRedirect(reverse("frontend:members", kwargs={"slug": slug}))


@require_POST
@login_required
@domain_errors_as_http
def member_token_view(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """Show (``action=show``) or rotate (``action=rotate``) a member's API token. Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    membership = Membership.objects.select_related("user").filter(project=project, user_id=user_id).first()
    if membership is None:
        raise NotFoundError("No such member.")
    rotate = request.POST.get("action") == "rotate"
    token = token_rotate(user=membership.user) if rotate else token_get(user=membership.user)
    if rotate:
        messages.success(request, f"New API token for {membership.user.username}: the old one no longer works.")
    return _members_page(request, project, shown_token={"user_id": membership.user_id, "key": token.key})


@require_POST
@login_required
@domain_errors_as_http
def invitation_create_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Create an invitation link. Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    form = InvitationForm(request.POST)
    if form.is_valid():
        try:
            invitation = invitation_create(project=project, created_by=request.user, **form.cleaned_data)
        except ApplicationError as exc:
            _add_app_error(form, exc)
        else:
            url = request.build_absolute_uri(reverse("frontend:invitation", kwargs={"token": invitation.token}))
            return _members_page(request, project, invitation_url=url)
    return _members_page(request, project, status=400, invite_form=form)


@require_POST
@login_required
@domain_errors_as_http
def invitation_revoke_view(request: HttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    """Withdraw an unused invitation. Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    invitation_revoke(project=project, invitation_id=invitation_id)
    messages.success(request, "Invitation withdrawn.")
    return HttpResponseRedirect(reverse("frontend:members", kwargs={"slug": slug}))


@require_http_methods(["GET", "POST"])
def invitation_page(request: HttpRequest, token: str) -> HttpResponse:
    """Accept an invitation: choose a username and password, join the project, read the guidelines.

    Anybody with an open link; an unknown link is 404, an expired, withdrawn or used one 410.
    """
    try:
        invitation = invitation_open_get(token=token)
    except NotFoundError as exc:
        return render(request, "frontend/manage/invitation_closed.html", {"message": exc.message}, status=404)
    except ApplicationError as exc:
        return render(request, "frontend/manage/invitation_closed.html", {"message": exc.message}, status=410)
    form = AcceptForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = invitation_accept(
                token=token, username=form.cleaned_data["username"], password=form.cleaned_data["password"]
            )
        except ApplicationError as exc:
            _add_app_error(form, exc)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return HttpResponseRedirect(reverse("frontend:guidelines", kwargs={"slug": invitation.project.slug}))
    status = 400 if request.method == "POST" else 200
    return render(request, "frontend/manage/invitation.html", {"invitation": invitation, "form": form}, status=status)


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


def _actions_page(request: HttpRequest, project: Project, *, status: int = 200, **extra: Any) -> HttpResponse:
    context = {
        "project": project,
        "na": not_answerable_default_size(project=project),
        "sample_max": SAMPLE_MAX,
        "apps": app_language_list(project=project),
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
    members = Membership.objects.filter(project=project).select_related("user").order_by("user__username")
    context = {
        "project": project,
        "leases": lease_list(project=project),
        "members": members,
        "error": error,
        "shown_max": LEASES_SHOWN,
    }
    return render(request, "frontend/manage/leases.html", context, status=status)


@require_GET
@login_required
@domain_errors_as_http
def leases_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Leases held now, with free and reassign. Leads and site admins."""
    return _leases_page(request, project_get_for_lead(user=request.user, slug=slug))


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
            user_id = request.POST.get("user") or ""
            if not user_id.isdigit():
                return _leases_page(request, project, status=400, error="Choose the member to hand it to.")
            assignment = lease_reassign(project=project, assignment_id=assignment_id, user_id=int(user_id))
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
