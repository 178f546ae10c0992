"""Production: PostgreSQL, Redis as Celery broker, S3. Secrets have no default."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import env, env_bool


def required(name: str) -> str:
    value = env(name)
    if value is None:
        raise ImproperlyConfigured(f"Set the environment variable {name} (production has no default for it).")
    return value


SECRET_KEY = required("DJANGO_SECRET_KEY")
required("DATABASE_URL")
CELERY_BROKER_URL = required("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = False
SCREENQA_INPROCESS_THREADS = False
required("AWS_STORAGE_BUCKET_NAME")
DEBUG = False
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
