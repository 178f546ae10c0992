"""Members and credentials on the site's pages: a lead's members page (project accounts, one by one or in
bulk as a job, invitations, roles, removal, a project account's token and password), the invitation page a
person accepts, and everybody's own account page (their API token and password).

Who may use each page:

* the members page and its actions, a bulk creation's page and its one credentials download: leads of the
  project and site admins (annotators and reviewers 403, non-members 404); a project account's token and
  password only (a personal account's: 403);
* an invitation's page: anybody holding an open link (a new account), or the logged-in account it names;
  declining one: the account it names (others 404);
* the account page: any logged-in user, for their own account only.

The rule behind them (docs/leads.md, "Accounts and credentials"): a lead never sees, receives or replaces a
credential that works outside their project.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import Invitation, MemberJob, Membership, Project, ProjectAccount, Role
from annotation.permissions import project_get_for_lead
from annotation.services.members import (
    BULK_MAX_ROWS,
    INVITATION_DAYS_DEFAULT,
    INVITATION_DAYS_MAX,
    invitation_accept,
    invitation_create,
    invitation_decline,
    invitation_join,
    invitation_open_get,
    invitation_revoke,
    member_add,
    member_kinds,
    membership_remove,
    membership_update,
    project_account_password_reset,
    project_account_token,
    token_get,
    token_rotate,
)
from frontend.jobs import job_display
from frontend.views.core import domain_errors_as_http
from pipeline.apis.members import credentials_response
from pipeline.jobs.lifecycle import job_get_for_lead
from pipeline.members import members_bulk_start


class MemberAddForm(forms.Form):
    username = forms.CharField(
        max_length=150, label="Name", help_text="The account is <project>/<name>, for this project only."
    )
    email = forms.EmailField(required=False)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    in_answer_pool = forms.BooleanField(required=False, label="In the answer pool")


class MembersBulkForm(forms.Form):
    csv = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="One per line: name, email or both."
    )
    count = forms.IntegerField(
        required=False, min_value=1, max_value=BULK_MAX_ROWS, help_text="…or this many new accounts."
    )
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    in_answer_pool = forms.BooleanField(required=False, label="In the answer pool")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not (data.get("csv") or "").strip() and not data.get("count"):
            raise forms.ValidationError("Paste a CSV or give a count.")
        return data


class InvitationForm(forms.Form):
    username = forms.CharField(
        required=False,
        max_length=150,
        label="Their username (optional)",
        help_text="A person who already has an account: the invitation waits on their home page, for them only.",
    )
    email = forms.EmailField(
        required=False, help_text="Who it is for (a note; without a username anybody with the link may use it)."
    )
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


def _add_app_error(form: forms.Form, exc: ApplicationError) -> None:
    form.add_error(exc.field if exc.field in form.fields else None, exc.message)


# --- the members page ----------------------------------------------------------------------------


def _members_page(request: HttpRequest, project: Project, *, status: int = 200, **forms_: Any) -> HttpResponse:
    members = list(Membership.objects.filter(project=project).select_related("user").order_by("user__username"))
    kinds = member_kinds(project=project)
    for member in members:
        member.account = kinds.get(member.user_id, "personal")
    context = {
        "project": project,
        "members": members,
        "roles": Role.choices,
        "invitations": Invitation.objects.filter(
            project=project, accepted_at__isnull=True, revoked_at__isnull=True, declined_at__isnull=True
        ),
        "jobs": MemberJob.objects.filter(project=project).select_related("created_by")[:5],
        "add_form": forms_.get("add_form") or MemberAddForm(),
        "bulk_form": forms_.get("bulk_form") or MembersBulkForm(),
        "invite_form": forms_.get("invite_form") or InvitationForm(),
        "created": forms_.get("created") or [],
        "bulk_errors": forms_.get("bulk_errors") or [],
        "invitation_url": forms_.get("invitation_url"),
        "shown_token": forms_.get("shown_token"),
        "shown_password": forms_.get("shown_password"),
    }
    return render(request, "frontend/manage/members.html", context, status=status)


@require_GET
@login_required
@domain_errors_as_http
def members_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Members with role, answer pool and kind of account; forms to add, create in bulk and invite.
    Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    return _members_page(request, project)


@require_POST
@login_required
@domain_errors_as_http
def member_add_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Create one project account. Leads and site admins. Its password is shown once, on the answer page."""
    project = project_get_for_lead(user=request.user, slug=slug)
    form = MemberAddForm(request.POST)
    if form.is_valid():
        try:
            created = member_add(project=project, created_by=request.user, **form.cleaned_data)
        except ApplicationError as exc:
            _add_app_error(form, exc)
        else:
            return _members_page(request, project, created=[created])
    return _members_page(request, project, status=400, add_form=form)


@require_POST
@login_required
@domain_errors_as_http
def members_bulk_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Create project accounts from a CSV or a count: every row is checked first (a bad row refuses them
    all, each named), then a job creates them and the lead is sent to its page. Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    form = MembersBulkForm(request.POST)
    if not form.is_valid():
        return _members_page(request, project, status=400, bulk_form=form)
    data = form.cleaned_data
    try:
        job = members_bulk_start(
            project=project,
            user=request.user,
            role=data["role"],
            in_answer_pool=data["in_answer_pool"],
            csv_text=data["csv"] or "",
            count=data["count"],
        )
    except ApplicationError as exc:
        _add_app_error(form, exc)
        return _members_page(request, project, status=400, bulk_form=form, bulk_errors=exc.extra.get("rows", []))
    return HttpResponseRedirect(reverse("frontend:member-job", kwargs={"slug": slug, "job_id": job.pk}))


def _member_job(request: HttpRequest, slug: str, job_id: int) -> MemberJob:
    job = job_get_for_lead(model=MemberJob, user=request.user, job_id=job_id)
    if job.project.slug != slug:
        raise NotFoundError("Job not found.")
    return job


@require_GET
@login_required
@domain_errors_as_http
def member_job_page(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    """A bulk creation: its progress, then the one download of the new accounts' credentials. Leads of the
    job's project and site admins."""
    job = _member_job(request, slug, job_id)
    return render(
        request, "frontend/manage/member_job.html", {"project": job.project, "job": job, "d": job_display(job)}
    )


@require_POST
@login_required
@domain_errors_as_http
def member_job_credentials_view(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    """The credentials CSV of a finished bulk creation, once (a POST: it deletes them). Leads of the job's
    project and site admins; 409 before the job is done, 410 after the first download."""
    job = _member_job(request, slug, job_id)
    try:
        return credentials_response(job)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        status = 410 if job.downloaded_at else 409
        return render(
            request,
            "frontend/manage/member_job.html",
            {"project": job.project, "job": job, "d": job_display(job)},
            status=status,
        )


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
    """Take a member out of the project (their leases go back to the queue) once the lead confirmed it.
    Leads and site admins."""
    project = project_get_for_lead(user=request.user, slug=slug)
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Tick the confirmation to remove a member.")
        return _members_page(request, project, status=400)
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
    """A project account's credentials: show (``action=show``) or rotate (``action=rotate``) its API token,
    or give it a new password (``action=password``). Leads and site admins; a personal account's are its
    owner's alone (403)."""
    project = project_get_for_lead(user=request.user, slug=slug)
    action = request.POST.get("action")
    if action == "password":
        reset = project_account_password_reset(project=project, user_id=user_id)
        messages.success(request, f"New password for {reset['username']}: the old one no longer works.")
        return _members_page(request, project, shown_password={"user_id": int(user_id), "password": reset["password"]})
    token = project_account_token(project=project, user_id=user_id, rotate=action == "rotate")
    if action == "rotate":
        messages.success(request, f"New API token for {token.user.username}: the old one no longer works.")
    return _members_page(request, project, shown_token={"user_id": token.user_id, "key": token.key})


# --- invitations ---------------------------------------------------------------------------------


@require_POST
@login_required
@domain_errors_as_http
def invitation_create_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Create an invitation link (for anybody, or for one existing account). Leads and site admins."""
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
    """Accept an invitation: with a new personal account (choose a username and password), or with the
    account one is logged in with (``action=join``); then read the guidelines.

    Anybody with an open link; an unknown link is 404, an expired, withdrawn, declined or used one 410.
    """
    try:
        invitation = invitation_open_get(token=token)
    except NotFoundError as exc:
        return render(request, "frontend/manage/invitation_closed.html", {"message": exc.message}, status=404)
    except ApplicationError as exc:
        return render(request, "frontend/manage/invitation_closed.html", {"message": exc.message}, status=410)
    signed_in = request.user.is_authenticated
    form = AcceptForm(request.POST or None) if not invitation.username else None
    error = ""
    if request.method == "POST":
        try:
            if request.POST.get("action") == "join":
                if not signed_in:
                    raise ApplicationError("Log in first to join with your own account.")
                invitation_join(token=token, user=request.user)
                return HttpResponseRedirect(reverse("frontend:guidelines", kwargs={"slug": invitation.project.slug}))
            if form is None:
                raise ApplicationError("This invitation is for an existing account: log in with it to accept.")
            if form.is_valid():
                user = invitation_accept(
                    token=token, username=form.cleaned_data["username"], password=form.cleaned_data["password"]
                )
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
                return HttpResponseRedirect(reverse("frontend:guidelines", kwargs={"slug": invitation.project.slug}))
        except ApplicationError as exc:
            if form is not None and exc.field in form.fields:
                _add_app_error(form, exc)
            else:
                error = exc.message
    context = {
        "invitation": invitation,
        "form": form,
        "error": error,
        "signed_in": signed_in,
        "project_account": signed_in and ProjectAccount.objects.filter(user_id=request.user.pk).exists(),
        "login_url": f"{reverse('frontend:login')}?next={request.path}",
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "frontend/manage/invitation.html", context, status=status)


@require_POST
@login_required
@domain_errors_as_http
def invitation_decline_view(request: HttpRequest, token: str) -> HttpResponse:
    """Say no to an invitation addressed to one's own account (others 404)."""
    try:
        invitation = invitation_decline(token=token, user=request.user)
    except NotFoundError:
        raise
    except ApplicationError as exc:
        raise NotFoundError(exc.message) from exc
    messages.success(request, f"Invitation to {invitation.project.name} declined.")
    return HttpResponseRedirect(reverse("frontend:home"))


# --- one's own account ---------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@login_required
def account_page(request: HttpRequest) -> HttpResponse:
    """One's own account: its kind, its API token (show, ``action=rotate`` a new one) and a link to change
    the password. Any logged-in user, for their own account only."""
    shown = None
    if request.method == "POST":
        if request.POST.get("action") == "rotate":
            shown = token_rotate(user=request.user).key
            messages.success(request, "New API token: the old one no longer works.")
        else:
            shown = token_get(user=request.user).key
    home = ProjectAccount.objects.select_related("project").filter(user_id=request.user.pk).first()
    return render(request, "frontend/account.html", {"token": shown, "project_account": home})


# Changing one's password: Django's own view (old password, the site's validators, the session kept), to
# GET and POST only. Any logged-in user, for their own account.
account_password = require_http_methods(["GET", "POST"])(
    auth_views.PasswordChangeView.as_view(
        template_name="frontend/account_password.html", success_url="/account/?password=changed"
    )
)
