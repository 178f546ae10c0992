"""The image's HEALTHCHECK (web and proxy roles): ``GET /healthz`` on ``$PORT``, asked for the site's own
host name (the first of ``DJANGO_ALLOWED_HOSTS``), so that a production host list does not refuse it."""

import os
import sys
import urllib.request

host = (os.environ.get("DJANGO_ALLOWED_HOSTS") or "127.0.0.1").split(",")[0].strip().lstrip(".")
if host in ("", "*"):
    host = "127.0.0.1"
request = urllib.request.Request(f"http://127.0.0.1:{os.environ.get('PORT', '8000')}/healthz", headers={"Host": host})
with urllib.request.urlopen(request, timeout=4) as response:  # noqa: S310 - a fixed http URL
    sys.exit(0 if response.status == 200 else 1)
