from django.urls import path

from . import export

urlpatterns = [
    path("projects/<slug:slug>/exports/", export.ExportListStartApi.as_view(), name="api-export-list"),
    path("release-jobs/<int:job_id>/download/", export.ExportDownloadApi.as_view(), name="api-release-job-download"),
]
