from django.urls import path

from . import analytics

urlpatterns = [
    path("projects/<slug:slug>/analysis/", analytics.AnalysisApi.as_view(), name="api-analysis"),
]
