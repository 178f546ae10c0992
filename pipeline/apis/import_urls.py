from django.urls import path

from . import imports

urlpatterns = [
    path("projects/<slug:slug>/imports/", imports.ImportJobCreateApi.as_view(), name="api-import-create"),
    path("imports/<int:job_id>/", imports.ImportJobDetailApi.as_view(), name="api-import-detail"),
    path("imports/<int:job_id>/retry/", imports.ImportJobRetryApi.as_view(), name="api-import-retry"),
]
