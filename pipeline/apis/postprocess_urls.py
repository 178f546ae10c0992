from django.urls import path

from . import postprocess

urlpatterns = [
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
    path("release-jobs/<int:job_id>/", postprocess.ReleaseJobDetailApi.as_view(), name="api-release-job-detail"),
]
