from django.urls import path

from . import export

urlpatterns = [
    path("projects/<slug:slug>/exports/", export.export_list, name="exports"),
    path("projects/<slug:slug>/exports/<int:job_id>/", export.export_detail, name="export-detail"),
]
