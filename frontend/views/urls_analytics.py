from django.urls import path

from . import analytics

urlpatterns = [
    path("projects/<slug:slug>/analysis/", analytics.project_analysis, name="analysis"),
]
