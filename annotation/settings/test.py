"""Test suite: PostgreSQL and Redis (see .ci/services.py for how they are found)."""

from .base import *  # noqa: F403
from .base import DATA_DIR, INSTALLED_APPS, STORAGES, database_from_env, devtools_apps, env

SECRET_KEY = "test-only-secret"
DEBUG = False
DATABASES = {"default": database_from_env("postgres://postgres@127.0.0.1:5432/screenqa")}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_BROKER_URL = env("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
# Tests run tasks synchronously unless a test starts a real worker.
CELERY_TASK_ALWAYS_EAGER = True
SCREENQA_INPROCESS_THREADS = False
MEDIA_ROOT = DATA_DIR / "test-media"
STORAGES["default"]["OPTIONS"] = {"location": str(MEDIA_ROOT)}
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
STATIC_ROOT = DATA_DIR / "test-static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns about a missing root
WHITENOISE_USE_FINDERS = True
INSTALLED_APPS = [*INSTALLED_APPS, *devtools_apps()]
