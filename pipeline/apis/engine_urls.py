"""Routes of the pipeline engine (stage queues and assignments)."""

from django.urls import path

from . import engine

urlpatterns = [
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
]
