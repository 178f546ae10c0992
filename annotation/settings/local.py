"""Embedded default: SQLite, local files, tasks in-process. Runs with no services.

``make demo`` serves it as production does (gunicorn, DEBUG off, static files collected,
hashed and compressed, served by WhiteNoise); ``make dev`` runs Django's development server
with ``DJANGO_DEBUG=true``. The SQLite fast path is in ``base.database_config``.
"""

from .base import *  # noqa: F403
from .base import DATA_DIR, INSTALLED_APPS, STATIC_ROOT, STORAGES, devtools_apps, env, env_bool

DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env("DJANGO_SECRET_KEY", "embedded-default-not-secret-change-me-in-production") or ""

DATA_DIR.mkdir(parents=True, exist_ok=True)
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns about a missing root
INSTALLED_APPS = [*INSTALLED_APPS, *devtools_apps()]

# Static files: once collected (``make demo`` runs collectstatic with DJANGO_STATIC_MANIFEST=true),
# hashed names from the manifest, compressed, served by WhiteNoise with far-future caching, as in
# production. Before that (or in DEBUG), straight from the apps' folders.
if not DEBUG and env_bool("DJANGO_STATIC_MANIFEST", (STATIC_ROOT / "staticfiles.json").is_file()):
    STORAGES["staticfiles"] = {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}
else:
    WHITENOISE_USE_FINDERS = True
