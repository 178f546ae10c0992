"""Routes of the domain core's API (screens). The URL names are part of the contract:
``annotation.selectors.screens`` reverses ``api-screen-image`` and ``api-screen-overlay``."""

from django.urls import path

from . import screens

urlpatterns = [
    path("projects/<slug:slug>/screens/<str:rico_id>/", screens.ScreenDetailApi.as_view(), name="api-screen-detail"),
    path(
        "projects/<slug:slug>/screens/<str:rico_id>/image/", screens.ScreenImageApi.as_view(), name="api-screen-image"
    ),
    path(
        "projects/<slug:slug>/screens/<str:rico_id>/overlay/",
        screens.ScreenOverlayApi.as_view(),
        name="api-screen-overlay",
    ),
]
