from django.urls import path

from . import screens

urlpatterns = [
    path("projects/<slug:slug>/screens/<str:rico_id>/", screens.ScreenDetailApi.as_view(), name="api-screen-detail"),
]
