"""Production: PostgreSQL, Redis as Celery broker, S3. Secrets have no default.

Behind the image's proxy role (nginx, docs/operations.md), itself behind whatever terminates TLS. The
``check`` role (``manage.py check --deploy --fail-level WARNING``) fails on every deployment warning, so a
weak secret, plain-HTTP cookies or a missing HSTS header stop a release; a warning that does not apply to a
deployment is silenced by name in ``DJANGO_SILENCED_SYSTEM_CHECKS``, where a reviewer sees it.
"""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import REST_FRAMEWORK, STORAGES, env, env_bool, env_int, env_list, logging_config


def required(name: str) -> str:
    value = env(name)
    if value is None:
        raise ImproperlyConfigured(f"Set the environment variable {name} (production has no default for it).")
    return value


SECRET_KEY = required("DJANGO_SECRET_KEY")
required("DATABASE_URL")
CELERY_BROKER_URL = required("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = False
# The cache holds the API throttles' counts: shared by every web process. While it cannot be reached the
# throttles count per process (annotation/throttling.py); the short timeouts keep a Redis that is gone
# without refusing (a stopped host, a dropped network) from holding requests for the system's TCP timeout.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env("CACHE_URL", CELERY_BROKER_URL),
        "KEY_PREFIX": "screenqa",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2},
    }
}
# The image's proxy role (nginx) is the one hop in front of gunicorn: the client is the address it saw.
REST_FRAMEWORK = {**REST_FRAMEWORK, "NUM_PROXIES": env_int("SCREENQA_TRUSTED_PROXIES", 1) or None}
SCREENQA_INPROCESS_THREADS = False
required("AWS_STORAGE_BUCKET_NAME")
DEBUG = False

# Static files: hashed names from the manifest that the image's collectstatic writes (Dockerfile), compressed.
STORAGES["staticfiles"] = {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}

# HTTPS. TLS ends before the proxy role, which passes the original scheme on in X-Forwarded-Proto.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]  # load balancers probe, and Prometheus scrapes, over plain HTTP
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
# HSTS: browsers remember for a year to use HTTPS only (sent on HTTPS responses only). Subdomains and preload
# follow cookiecutter-django's defaults; turn them off for a host whose sibling subdomains still speak HTTP.
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", True)

SILENCED_SYSTEM_CHECKS = env_list("DJANGO_SILENCED_SYSTEM_CHECKS", [])

# Logs: JSON lines for the log collector (DJANGO_LOG_FORMAT=text for people).
LOG_FORMAT = env("DJANGO_LOG_FORMAT", "json") or "json"
LOGGING = logging_config(LOG_FORMAT)
