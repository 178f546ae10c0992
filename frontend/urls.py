"""Pages, one module per area (each owned by its part of the code)."""

from django.urls import include, path

app_name = "frontend"

urlpatterns = [
    path("", include("frontend.views.urls_core")),
    path("", include("frontend.views.urls_workspace")),
    path("", include("frontend.views.urls_release")),
    path("", include("frontend.views.urls_analytics")),
]
