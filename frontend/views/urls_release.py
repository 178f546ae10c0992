from django.urls import include, path

urlpatterns = [
    path("", include("frontend.views.urls_postprocess")),
    path("", include("frontend.views.urls_export")),
]
