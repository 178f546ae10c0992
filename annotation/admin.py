from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from annotation.exceptions import ApplicationError
from annotation.services.members import member_remove, membership_create

from . import models
from .models.projects import PROJECT, SETTINGS, SPLITS

# Fields of a project that are not settings (fixed at creation), shown with the group they belong to.
_FIXED_FIELDS = {PROJECT: ("slug",), SPLITS: ("split_seed",)}


@admin.register(models.Project)
class ProjectAdmin(admin.ModelAdmin):
    """Every setting in the groups of the settings page, with its declared bounds in the form (the
    model's validators, from the same declarations, check them again, and the database on save)."""

    list_display = ["slug", "name", "agreement_rule", "created_at"]
    list_filter = ["agreement_rule"]
    search_fields = ["slug", "name"]
    prepopulated_fields = {"slug": ["name"]}
    fieldsets = [(title, {"fields": [*_FIXED_FIELDS.get(title, ()), *names]}) for title, names in SETTINGS.groups()]
    fieldsets += [("Guidelines", {"fields": ["guidelines"], "classes": ["collapse"]})]

    def formfield_for_dbfield(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        if db_field.name in SETTINGS.secrets:  # shown to nobody, not even here (docs/assist.md)
            kwargs["widget"] = forms.PasswordInput(render_value=False)
        return super().formfield_for_dbfield(db_field, request, **{**kwargs, **SETTINGS.form_options(db_field.name)})


class MembershipAdminForm(forms.ModelForm):
    class Meta:
        model = models.Membership
        fields = ["project", "user", "role", "in_answer_pool", "guidelines_seen_at"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        user, project = data.get("user"), data.get("project")
        if self.instance.pk is None and user is not None and project is not None:
            home = models.ProjectAccount.objects.filter(user=user).values_list("project_id", flat=True).first()
            if home is not None and home != project.pk:
                raise forms.ValidationError("A project account can only be a member of the project that created it.")
        return data


@admin.register(models.Membership)
class MembershipAdmin(admin.ModelAdmin):
    form = MembershipAdminForm
    list_display = ["user", "project", "role", "in_answer_pool"]
    list_filter = ["role", "project"]
    search_fields = ["user__username"]

    def save_model(self, request: Any, obj: models.Membership, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        try:  # the one way a membership is made (its checks again, under the same rule as the form's)
            made = membership_create(
                project=obj.project, user=obj.user, role=obj.role, in_answer_pool=obj.in_answer_pool
            )
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from exc
        obj.pk = made.pk

    # Removing a member releases their open leases (``member_remove``), one at a time or in bulk.
    def delete_model(self, request: Any, obj: models.Membership) -> None:
        member_remove(project_id=obj.project_id, user_id=obj.user_id)

    def delete_queryset(self, request: Any, queryset: Any) -> None:
        for project_id, user_id in queryset.values_list("project_id", "user_id"):
            member_remove(project_id=project_id, user_id=user_id)

    def get_readonly_fields(self, request: Any, obj: models.Membership | None = None) -> Any:
        # A membership is not moved to another user or project (that would skip the release
        # above): remove it and add a new one.
        return ["project", "user"] if obj is not None else []


# --- accounts: a project account stays its project's (no admin rights, its username kept as it is) --------

user_model = get_user_model()
if admin.site.is_registered(user_model):
    admin.site.unregister(user_model)


@admin.register(user_model)
class AccountAdmin(UserAdmin):
    """Django's user admin; a project account (``models.ProjectAccount``) cannot be made staff or a site
    admin (its lead holds its password), and its ``<slug>/<name>`` username, which no personal account may
    have, is not edited."""

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and models.ProjectAccount.objects.filter(user=obj).exists():
            fields += ["username", "is_staff", "is_superuser", "groups", "user_permissions"]
        return fields


@admin.register(models.ProjectAccount)
class ProjectAccountAdmin(admin.ModelAdmin):
    list_display = ["user", "project", "created_by", "created_at"]
    list_filter = ["project"]
    search_fields = ["user__username"]
    raw_id_fields = ["user", "created_by"]


@admin.register(models.PendingCredential)
class PendingCredentialAdmin(admin.ModelAdmin):
    """Waiting for their lead's one download: the admin sees that they exist, never the secrets."""

    list_display = ["username", "job", "line"]
    exclude = ["password", "token"]
    readonly_fields = ["job", "user", "username", "line"]


@admin.register(models.MemberJob)
class MemberJobAdmin(admin.ModelAdmin):
    list_display = ["pk", "project", "status", "processed", "total", "attempts", "downloaded_at", "created_at"]
    list_filter = ["status"]
    readonly_fields = ["request"]


@admin.register(models.Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["project", "username", "email", "role", "in_answer_pool", "expires_at", "accepted_at", "revoked_at"]
    list_filter = ["project", "role"]
    search_fields = ["email", "username"]
    raw_id_fields = ["created_by", "accepted_by"]
    readonly_fields = ["token"]


@admin.register(models.App)
class AppAdmin(admin.ModelAdmin):
    list_display = ["package", "project", "non_english"]
    list_filter = ["project", "non_english"]
    search_fields = ["package"]


class CandidateInline(admin.TabularInline):
    model = models.Candidate
    extra = 0


@admin.register(models.Screen)
class ScreenAdmin(admin.ModelAdmin):
    list_display = ["rico_id", "project", "app", "width", "height", "state", "split"]
    list_filter = ["project", "state", "split"]
    search_fields = ["rico_id", "app__package"]
    raw_id_fields = ["app"]
    inlines = [CandidateInline]


@admin.register(models.Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ["screen", "vh_index", "type", "class_name", "text"]
    list_filter = ["type"]
    raw_id_fields = ["screen"]


@admin.register(models.ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["pk", "project", "status", "processed", "total", "attempts", "heartbeat_at", "created_at"]
    list_filter = ["status"]


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["pk", "project", "stage", "annotator", "status", "lease_expires_at"]
    list_filter = ["stage", "status", "project"]
    raw_id_fields = ["screen", "question", "annotator"]


@admin.register(models.PrefilterJudgment)
class PrefilterJudgmentAdmin(admin.ModelAdmin):
    list_display = ["screen", "annotator", "non_english_app", "vh_out_of_sync", "withdrawn_reason"]
    list_filter = ["withdrawn_reason"]
    raw_id_fields = ["assignment", "screen", "annotator", "withdrawn_by"]


class AnswerElementInline(admin.TabularInline):
    model = models.AnswerElement
    extra = 0


@admin.register(models.Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["text", "screen", "source", "state", "answers_done", "answers_needed"]
    list_filter = ["source", "state"]
    search_fields = ["text"]
    raw_id_fields = ["screen", "author", "origin"]


@admin.register(models.Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["question", "annotator", "verdict", "kept"]
    list_filter = ["verdict", "kept"]
    raw_id_fields = ["assignment", "question", "annotator"]
    inlines = [AnswerElementInline]


@admin.register(models.ReleaseJob)
class ReleaseJobAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "project",
        "kind",
        "format",
        "status",
        "processed",
        "total",
        "attempts",
        "heartbeat_at",
        "created_at",
    ]
    list_filter = ["kind", "status"]


@admin.register(models.AnswerElement)
class AnswerElementAdmin(admin.ModelAdmin):
    list_display = ["answer", "position", "vh_index", "text"]
    raw_id_fields = ["answer"]


@admin.register(models.Standing)
class StandingAdmin(admin.ModelAdmin):
    list_display = ["user", "project", "stage", "status", "attempt", "items_done", "updated_at"]
    list_filter = ["project", "stage", "status"]
    search_fields = ["user__username", "reason"]
    raw_id_fields = ["user"]


@admin.register(models.GoldItem)
class GoldItemAdmin(admin.ModelAdmin):
    list_display = ["pk", "project", "stage", "screen", "question", "source", "active", "created_at"]
    list_filter = ["project", "stage", "source", "active"]
    search_fields = ["screen__rico_id", "question__text", "note"]
    raw_id_fields = ["screen", "question", "origin", "created_by"]


@admin.register(models.ControlResult)
class ControlResultAdmin(admin.ModelAdmin):
    list_display = ["pk", "user", "project", "stage", "purpose", "attempt", "correct", "created_at"]
    list_filter = ["project", "stage", "purpose", "correct"]
    search_fields = ["user__username"]
    raw_id_fields = ["assignment", "gold", "user"]


@admin.register(models.Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ["pk", "reviewed", "reviewer", "verdict", "reason", "withdrawn_reason", "created_at"]
    list_filter = ["verdict", "reviewed__project", "reviewed__stage", "reason", "withdrawn_reason"]
    search_fields = ["reviewer__username", "reviewed__annotator__username", "comment"]
    raw_id_fields = ["reviewed", "withdrawn_from", "withdrawn_by", "assignment", "reviewer"]


@admin.register(models.QualityEvent)
class QualityEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "user", "project", "stage", "rule", "status_before", "status_after", "actor"]
    list_filter = ["project", "stage", "rule", "status_after"]
    search_fields = ["user__username", "actor__username", "note"]
    raw_id_fields = ["user", "actor"]


@admin.register(models.Suggestion)
class SuggestionAdmin(admin.ModelAdmin):
    list_display = ["pk", "project", "stage", "question", "status", "calls", "failures", "model_version", "updated_at"]
    list_filter = ["stage", "status"]
    raw_id_fields = ["project", "screen", "question"]


@admin.register(models.AssistJob)
class AssistJobAdmin(admin.ModelAdmin):
    list_display = ["pk", "project", "stage", "status", "processed", "total", "attempts", "heartbeat_at", "created_at"]
    list_filter = ["status"]


@admin.register(models.AssistUse)
class AssistUseAdmin(admin.ModelAdmin):
    list_display = ["assignment", "user", "project", "purpose", "use", "suggestion_wrong", "correct", "created_at"]
    list_filter = ["use", "purpose", "suggestion_wrong"]
    raw_id_fields = ["assignment", "project", "user"]


@admin.register(models.AnnotatorFigures)
class AnnotatorFiguresAdmin(admin.ModelAdmin):
    """The quality page's stored figures (``pipeline.quality.figures``): read here, written by its job."""

    list_display = ["username", "project", "stage", "status", "control_accuracy", "agreement", "computed_at"]
    list_filter = ["project", "stage", "status"]
    search_fields = ["username"]
    raw_id_fields = ["project", "user"]


@admin.register(models.FiguresSnapshot)
class FiguresSnapshotAdmin(admin.ModelAdmin):
    """The stored figures of the analysis and project pages (``pipeline.analytics.stored``): seen here, never
    written (only their job writes them; ``data`` is not shown: a pickle, read by the product alone)."""

    list_display = ["project", "kind", "computed_at", "size"]
    list_filter = ["kind", "project"]
    fields = ["project", "kind", "computed_at"]
    readonly_fields = ["project", "kind", "computed_at"]

    @admin.display(description="bytes")
    def size(self, obj: models.FiguresSnapshot) -> int:
        return len(obj.data or b"")

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False
