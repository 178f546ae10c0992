from django.http import Http404, HttpRequest, HttpResponse
from django.urls import path


def workspace_placeholder(request: HttpRequest, slug: str) -> HttpResponse:
    raise Http404("The workspace is not built yet.")


urlpatterns = [path("projects/<slug:slug>/work/", workspace_placeholder, name="workspace")]
