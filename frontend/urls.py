"""The site's pages: annotators' workspace and the leads' pages."""

from django.contrib.auth import views as auth_views
from django.urls import path

from annotation.models import AssistJob, ImportJob, MemberJob, ReleaseJob
from frontend.views import analytics, core, export, jobs, manage, members, mine, postprocess, quality, workspace

app_name = "frontend"

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="frontend/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # one's own account: API token and password
    path("account/", members.account_page, name="account"),
    path("account/password/", members.account_password, name="account-password"),
    path("", core.home, name="home"),
    path("projects/new/", manage.project_create_page, name="project-create"),
    path("invitations/<str:token>/", members.invitation_page, name="invitation"),
    path("invitations/<str:token>/decline/", members.invitation_decline_view, name="invitation-decline"),
    path("projects/<slug:slug>/", core.project_detail, name="project"),
    path("projects/<slug:slug>/screens/<str:rico_id>/", core.screen_detail, name="screen"),
    path("projects/<slug:slug>/imports/", core.import_create, name="import-create"),
    path("imports/<int:job_id>/", core.import_job_detail, name="import-job"),
    # any job's progress block and "Run again" (one view each; the route names the table)
    path("imports/<int:job_id>/progress/", jobs.job_progress, {"model": ImportJob}, name="import-job-progress"),
    path("imports/<int:job_id>/retry/", jobs.job_rerun_view, {"model": ImportJob}, name="import-job-retry"),
    path("release-jobs/<int:job_id>/progress/", jobs.job_progress, {"model": ReleaseJob}, name="release-job-progress"),
    path("release-jobs/<int:job_id>/retry/", jobs.job_rerun_view, {"model": ReleaseJob}, name="release-job-retry"),
    path("member-jobs/<int:job_id>/progress/", jobs.job_progress, {"model": MemberJob}, name="member-job-progress"),
    path("member-jobs/<int:job_id>/retry/", jobs.job_rerun_view, {"model": MemberJob}, name="member-job-retry"),
    path("assist-jobs/<int:job_id>/progress/", jobs.job_progress, {"model": AssistJob}, name="assist-job-progress"),
    path("assist-jobs/<int:job_id>/retry/", jobs.job_rerun_view, {"model": AssistJob}, name="assist-job-retry"),
    # the annotator workspace (see ``frontend.views.workspace`` for who may use each page)
    path("projects/<slug:slug>/work/", workspace.workspace_home, name="workspace"),
    path("projects/<slug:slug>/my-work/", mine.my_work, name="my-work"),
    path("projects/<slug:slug>/work/<str:stage>/next/", workspace.workspace_next, name="workspace-next"),
    path("projects/<slug:slug>/work/a/<int:pk>/", workspace.assignment_page, name="workspace-assignment"),
    path("projects/<slug:slug>/work/a/<int:pk>/draft/", workspace.assignment_draft, name="workspace-draft"),
    path("projects/<slug:slug>/work/a/<int:pk>/extend/", workspace.assignment_extend, name="workspace-extend"),
    path("projects/<slug:slug>/work/a/<int:pk>/skip/", workspace.assignment_skip, name="workspace-skip"),
    path("projects/<slug:slug>/work/a/<int:pk>/release/", workspace.assignment_release, name="workspace-release"),
    path("projects/<slug:slug>/work/a/<int:pk>/hints/", workspace.question_hints, name="workspace-hints"),
    # release (leads)
    path("projects/<slug:slug>/release/postprocess/", postprocess.postprocess_page, name="postprocess"),
    path("projects/<slug:slug>/release/postprocess/start/", postprocess.postprocess_start, name="postprocess-start"),
    path(
        "projects/<slug:slug>/release/postprocess/decisions/",
        postprocess.postprocess_decisions_page,
        name="postprocess-decisions",
    ),
    path(
        "projects/<slug:slug>/release/short-answers/",
        postprocess.short_answers_review,
        name="short-answers-review",
    ),
    path(
        "projects/<slug:slug>/release/short-answers/<int:question_id>/",
        postprocess.short_answers_save,
        name="short-answers-save",
    ),
    path("projects/<slug:slug>/exports/", export.export_list, name="exports"),
    path("projects/<slug:slug>/exports/<int:job_id>/", export.export_detail, name="export-detail"),
    # running a project (leads; see ``frontend.views.manage``)
    path("projects/<slug:slug>/settings/", manage.project_settings, name="project-settings"),
    path("projects/<slug:slug>/members/", members.members_page, name="members"),
    path("projects/<slug:slug>/members/add/", members.member_add_view, name="member-add"),
    path("projects/<slug:slug>/members/bulk/", members.members_bulk_view, name="members-bulk"),
    path("projects/<slug:slug>/members/jobs/<int:job_id>/", members.member_job_page, name="member-job"),
    path(
        "projects/<slug:slug>/members/jobs/<int:job_id>/credentials/",
        members.member_job_credentials_view,
        name="member-job-credentials",
    ),
    path("projects/<slug:slug>/members/<int:user_id>/", members.member_update_view, name="member-update"),
    path("projects/<slug:slug>/members/<int:user_id>/remove/", members.member_remove_view, name="member-remove"),
    path("projects/<slug:slug>/members/<int:user_id>/token/", members.member_token_view, name="member-token"),
    path("projects/<slug:slug>/invitations/", members.invitation_create_view, name="invitation-create"),
    path(
        "projects/<slug:slug>/invitations/<int:invitation_id>/revoke/",
        members.invitation_revoke_view,
        name="invitation-revoke",
    ),
    path("projects/<slug:slug>/guidelines/", manage.guidelines_page, name="guidelines"),
    path("projects/<slug:slug>/guidelines/edit/", manage.guidelines_edit, name="guidelines-edit"),
    path("projects/<slug:slug>/actions/", manage.actions_page, name="actions"),
    path("projects/<slug:slug>/actions/not-answerable/", manage.not_answerable_start_view, name="na-start"),
    path("projects/<slug:slug>/actions/non-english/", manage.app_non_english_view, name="app-non-english"),
    path("projects/<slug:slug>/skips/", manage.skips_page, name="skips"),
    path("projects/<slug:slug>/leases/", manage.leases_page, name="leases"),
    path("projects/<slug:slug>/leases/members/", manage.lease_members_view, name="lease-members"),
    path("projects/<slug:slug>/leases/<int:assignment_id>/", manage.lease_action_view, name="lease-action"),
    # analysis (leads)
    path("projects/<slug:slug>/analysis/", analytics.project_analysis, name="analysis"),
    path("projects/<slug:slug>/analysis/refresh/", analytics.analysis_refresh_view, name="analysis-refresh"),
    # quality control (leads)
    path("projects/<slug:slug>/quality/", quality.quality_page, name="quality"),
    path("projects/<slug:slug>/quality/refresh/", quality.quality_refresh, name="quality-refresh"),
    path("projects/<slug:slug>/quality/suggestions/", quality.suggestions_start, name="quality-suggestions"),
    path("projects/<slug:slug>/quality/gold/", quality.gold_page, name="quality-gold"),
    path("projects/<slug:slug>/quality/gold/promote/", quality.gold_promote_view, name="quality-gold-promote"),
    path("projects/<slug:slug>/quality/gold/<int:gold_id>/active/", quality.gold_active, name="quality-gold-active"),
    path("projects/<slug:slug>/quality/<int:user_id>/", quality.annotator_page, name="quality-annotator"),
    path("projects/<slug:slug>/quality/<int:user_id>/standing/", quality.standing_action, name="quality-standing"),
]
