from django.urls import path

from . import postprocess

urlpatterns = [
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
    path("release-jobs/<int:job_id>/progress/", postprocess.release_job_progress, name="release-job-progress"),
]
