from django.urls import include, path

urlpatterns = [
    path("", include("pipeline.apis.postprocess_urls")),
    path("", include("pipeline.apis.export_urls")),
]
