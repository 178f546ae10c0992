"""The annotator workspace (see ``frontend.views.workspace`` for who may use each page)."""

from django.urls import path

from . import workspace

urlpatterns = [
    path("projects/<slug:slug>/work/", workspace.workspace_home, name="workspace"),
    path("projects/<slug:slug>/work/<str:stage>/next/", workspace.workspace_next, name="workspace-next"),
    path("projects/<slug:slug>/work/a/<int:pk>/", workspace.assignment_page, name="workspace-assignment"),
    path("projects/<slug:slug>/work/a/<int:pk>/draft/", workspace.assignment_draft, name="workspace-draft"),
    path("projects/<slug:slug>/work/a/<int:pk>/extend/", workspace.assignment_extend, name="workspace-extend"),
    path("projects/<slug:slug>/work/a/<int:pk>/skip/", workspace.assignment_skip, name="workspace-skip"),
    path("projects/<slug:slug>/work/a/<int:pk>/release/", workspace.assignment_release, name="workspace-release"),
    path("projects/<slug:slug>/work/a/<int:pk>/hints/", workspace.question_hints, name="workspace-hints"),
]
