from django.contrib.auth import views as auth_views
from django.urls import path

from . import core

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="frontend/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", core.home, name="home"),
    path("projects/<slug:slug>/", core.project_detail, name="project"),
    path("projects/<slug:slug>/screens/<str:rico_id>/", core.screen_detail, name="screen"),
    path("projects/<slug:slug>/imports/", core.import_create, name="import-create"),
    path("imports/<int:job_id>/", core.import_job_detail, name="import-job"),
    path("imports/<int:job_id>/progress/", core.import_job_progress, name="import-job-progress"),
    path("imports/<int:job_id>/retry/", core.import_job_retry_view, name="import-job-retry"),
]
