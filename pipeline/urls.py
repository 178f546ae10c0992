"""API routes of the pipeline, one module per area (each owned by its part of the code)."""

from django.urls import include, path

urlpatterns = [
    path("", include("pipeline.apis.import_urls")),
    path("", include("pipeline.apis.engine_urls")),
    path("", include("pipeline.apis.release_urls")),
    path("", include("pipeline.apis.analytics_urls")),
]
