"""URL wiring: the site's root, and the domain core's own API (screens, project settings, members).

Apps are included by dotted path so that ``annotation`` never imports them. The URL names are
part of the contract: ``annotation.selectors.screens`` reverses ``api-screen-image`` and
``api-screen-overlay`` and ``api-screen-vh``.
"""

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView

from annotation.apis import members, screens
from annotation.apis.docs import ApiDocsView
from annotation.apis.health import healthz
from annotation.apis.settings import ProjectSettingsApi
from annotation.observability import metrics

# Unknown URLs, unreadable requests and server errors under /api/ answer JSON like the rest of the
# API (a body over the size limit is a JSON 413 on every route); pages keep the site's own pages.
handler400 = "annotation.apis.errors.bad_request"
handler404 = "annotation.apis.errors.page_not_found"
handler500 = "annotation.apis.errors.server_error"

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # Prometheus (site admins, or the bearer of SCREENQA_METRICS_TOKEN): docs/operations.md
    path("metrics", metrics, name="metrics"),
    # Browsers ask for /favicon.ico whatever the page says: the icon the pages link to.
    path("favicon.ico", RedirectView.as_view(url="/static/frontend/favicon.svg", permanent=True)),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", ApiDocsView.as_view(url_name="api-schema"), name="api-docs"),
    # ReDoc was dropped (its bundle fetched a logo from Redocly's CDN): old links land on Swagger UI.
    path("api/redoc/", RedirectView.as_view(pattern_name="api-docs", permanent=True), name="api-redoc"),
    path(
        "api/projects/<slug:slug>/screens/<str:rico_id>/",
        screens.ScreenDetailApi.as_view(),
        name="api-screen-detail",
    ),
    path(
        "api/projects/<slug:slug>/screens/<str:rico_id>/image/",
        screens.ScreenImageApi.as_view(),
        name="api-screen-image",
    ),
    path(
        "api/projects/<slug:slug>/screens/<str:rico_id>/overlay/",
        screens.ScreenOverlayApi.as_view(),
        name="api-screen-overlay",
    ),
    path(
        "api/projects/<slug:slug>/screens/<str:rico_id>/vh/",
        screens.ScreenVHApi.as_view(),
        name="api-screen-vh",
    ),
    # project settings and members (leads)
    path("api/projects/<slug:slug>/settings/", ProjectSettingsApi.as_view(), name="api-project-settings"),
    path("api/projects/<slug:slug>/members/", members.MemberListApi.as_view(), name="api-members"),
    path("api/projects/<slug:slug>/members/<int:user_id>/", members.MemberDetailApi.as_view(), name="api-member"),
    path(
        "api/projects/<slug:slug>/members/<int:user_id>/token/",
        members.MemberTokenRotateApi.as_view(),
        name="api-member-token",
    ),
    path(
        "api/projects/<slug:slug>/members/<int:user_id>/password/",
        members.MemberPasswordResetApi.as_view(),
        name="api-member-password",
    ),
    path(
        "api/projects/<slug:slug>/invitations/",
        members.InvitationCreateApi.as_view(),
        name="api-invitation-create",
    ),
    path("api/", include("pipeline.urls")),
    path("", include("frontend.urls")),
]
