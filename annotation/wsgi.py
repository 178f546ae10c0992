import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.local")
application = get_wsgi_application()
# Import every URL module and view now, while the server process starts, not during the
# first request it serves (~170-230 ms, measured in docs/performance.md).
get_resolver().url_patterns  # noqa: B018
