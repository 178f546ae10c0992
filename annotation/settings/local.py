"""Embedded default: SQLite, local files, tasks in-process. Runs with no services."""

from .base import *  # noqa: F403
from .base import DATA_DIR, INSTALLED_APPS, STATIC_ROOT, devtools_apps, env, env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = env("DJANGO_SECRET_KEY", "embedded-default-not-secret-change-me-in-production") or ""

DATA_DIR.mkdir(parents=True, exist_ok=True)
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns about a missing root
INSTALLED_APPS = [*INSTALLED_APPS, *devtools_apps()]
