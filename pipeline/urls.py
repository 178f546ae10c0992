"""The pipeline's REST API (under ``/api/``): imports, the stage engine, release, analysis, quality."""

from django.urls import path

from pipeline.apis import analytics, assist, engine, export, imports, jobs, members, mine, postprocess, quality

urlpatterns = [
    # imports (leads)
    path("projects/<slug:slug>/imports/", imports.ImportJobCreateApi.as_view(), name="api-import-create"),
    path("imports/<int:job_id>/", jobs.ImportJobDetailApi.as_view(), name="api-import-detail"),
    path("imports/<int:job_id>/retry/", jobs.ImportJobRetryApi.as_view(), name="api-import-retry"),
    # project accounts in bulk (leads)
    path("projects/<slug:slug>/members/bulk/", members.MembersBulkApi.as_view(), name="api-members-bulk"),
    path("member-jobs/<int:job_id>/", jobs.MemberJobDetailApi.as_view(), name="api-member-job-detail"),
    path("member-jobs/<int:job_id>/retry/", jobs.MemberJobRetryApi.as_view(), name="api-member-job-retry"),
    path(
        "member-jobs/<int:job_id>/credentials/",
        members.MemberJobCredentialsApi.as_view(),
        name="api-member-job-credentials",
    ),
    # the engine: stage queues and assignments
    path("projects/<slug:slug>/stages/", engine.StageListApi.as_view(), name="api-stages"),
    path(
        "projects/<slug:slug>/stages/not-answerable/start/",
        engine.NotAnswerableStartApi.as_view(),
        name="api-not-answerable-start",
    ),
    path("projects/<slug:slug>/stages/<str:stage>/next/", engine.StageNextApi.as_view(), name="api-stage-next"),
    path(
        "projects/<slug:slug>/apps/<str:package>/non-english/",
        engine.AppNonEnglishApi.as_view(),
        name="api-app-non-english",
    ),
    path("projects/<slug:slug>/my-work/", mine.MyWorkApi.as_view(), name="api-my-work"),
    path("projects/<slug:slug>/progress/", engine.ProjectProgressApi.as_view(), name="api-project-progress"),
    path("assignments/<int:assignment_id>/", engine.AssignmentDetailApi.as_view(), name="api-assignment"),
    path("assignments/<int:assignment_id>/submit/", engine.AssignmentSubmitApi.as_view(), name="api-assignment-submit"),
    path("assignments/<int:assignment_id>/skip/", engine.AssignmentSkipApi.as_view(), name="api-assignment-skip"),
    path(
        "assignments/<int:assignment_id>/release/",
        engine.AssignmentReleaseApi.as_view(),
        name="api-assignment-release",
    ),
    path("assignments/<int:assignment_id>/extend/", engine.AssignmentExtendApi.as_view(), name="api-assignment-extend"),
    path("assignments/<int:assignment_id>/draft/", engine.AssignmentDraftApi.as_view(), name="api-assignment-draft"),
    # release: post-processing, short answers, exports, the jobs behind them (leads)
    path(
        "projects/<slug:slug>/postprocess/",
        postprocess.PostprocessStartApi.as_view(),
        name="api-postprocess-start",
    ),
    path(
        "projects/<slug:slug>/postprocess/decisions/",
        postprocess.PostprocessDecisionsApi.as_view(),
        name="api-postprocess-decisions",
    ),
    path(
        "projects/<slug:slug>/short-answers/",
        postprocess.ShortAnswersStartApi.as_view(),
        name="api-short-answers-start",
    ),
    path("release-jobs/<int:job_id>/", jobs.ReleaseJobDetailApi.as_view(), name="api-release-job-detail"),
    path("release-jobs/<int:job_id>/retry/", jobs.ReleaseJobRetryApi.as_view(), name="api-release-job-retry"),
    path("projects/<slug:slug>/exports/", export.ExportListStartApi.as_view(), name="api-export-list"),
    path("release-jobs/<int:job_id>/download/", export.ExportDownloadApi.as_view(), name="api-release-job-download"),
    # analysis (leads)
    path("projects/<slug:slug>/analysis/", analytics.AnalysisApi.as_view(), name="api-analysis"),
    path("projects/<slug:slug>/analysis/refresh/", analytics.AnalysisRefreshApi.as_view(), name="api-analysis-refresh"),
    # model assistance (leads)
    path("projects/<slug:slug>/assist/", assist.AssistReportApi.as_view(), name="api-assist"),
    path("projects/<slug:slug>/assist/refill/", assist.AssistRefillApi.as_view(), name="api-assist-refill"),
    # quality control (leads)
    path("projects/<slug:slug>/quality/", quality.QualityReportApi.as_view(), name="api-quality"),
    path("projects/<slug:slug>/quality/refresh/", quality.QualityRefreshApi.as_view(), name="api-quality-refresh"),
    path(
        "projects/<slug:slug>/quality/annotators/<int:user_id>/",
        quality.AnnotatorReportApi.as_view(),
        name="api-quality-annotator",
    ),
    path(
        "projects/<slug:slug>/quality/annotators/<int:user_id>/standing/",
        quality.StandingActionApi.as_view(),
        name="api-quality-standing",
    ),
    path("projects/<slug:slug>/quality/events/", quality.QualityEventListApi.as_view(), name="api-quality-events"),
    path("projects/<slug:slug>/quality/gold/", quality.GoldListCreateApi.as_view(), name="api-quality-gold"),
    path(
        "projects/<slug:slug>/quality/gold/promotable/",
        quality.GoldPromotableApi.as_view(),
        name="api-quality-gold-promotable",
    ),
    path(
        "projects/<slug:slug>/quality/gold/promote/",
        quality.GoldPromoteApi.as_view(),
        name="api-quality-gold-promote",
    ),
    path(
        "projects/<slug:slug>/quality/gold/review/",
        quality.GoldReviewApi.as_view(),
        name="api-quality-gold-review",
    ),
    path(
        "projects/<slug:slug>/quality/gold/<int:gold_id>/active/",
        quality.GoldActiveApi.as_view(),
        name="api-quality-gold-active",
    ),
]
