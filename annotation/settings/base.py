"""Settings shared by every profile.

Everything that differs between machines comes from the environment (see
``docs/operations.md``). The profiles only choose defaults:

* ``annotation.settings.local``      embedded default: SQLite, local files, in-process tasks
* ``annotation.settings.test``       the test suite: PostgreSQL and Redis
* ``annotation.settings.production`` PostgreSQL, Redis broker, S3; secrets have no default
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def env_bool(name: str, default: bool) -> bool:
    value = env(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = env(name)
    return int(value) if value is not None else default


def devtools_apps() -> list[str]:
    """``devtools`` (benchmarks, demo generator, scripted crowd) where the checkout has it: the
    embedded default and the tests install it, production never does (the image leaves it out)."""
    import importlib.util

    return ["devtools"] if importlib.util.find_spec("devtools") is not None else []


def env_list(name: str, default: list[str]) -> list[str]:
    value = env(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DATA_DIR = Path(env("SCREENQA_DATA_DIR", str(BASE_DIR / "data")) or "data")

DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "csp",
    "axes",
    "annotation",
    "pipeline",
    "frontend",
]

MIDDLEWARE = [
    # first: the request id and log context, the request's log line and latency (annotation.observability)
    "annotation.observability.RequestContextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # NUL characters, lone surrogates and deep JSON answered 400 before any view (annotation.hostile)
    "annotation.hostile.HostileInputMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # last, as django-axes asks: turns a locked-out login into its 429 answer
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out login before the password is checked
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "annotation.urls"
WSGI_APPLICATION = "annotation.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotation.context_processors.csp_nonce",
            ],
        },
    }
]


def database_from_env(default_url: str) -> dict[str, Any]:
    """One database from ``DATABASE_URL`` (``database_config``).

    SQLite's IMMEDIATE makes every transaction take the write lock when it starts, so two
    concurrent writers queue instead of failing with "database is locked" half-way through
    (Django 5.1+ ``transaction_mode``).
    """
    return database_config(env("DATABASE_URL", default_url) or default_url)


def database_config(url: str) -> dict[str, Any]:
    """The ``DATABASES`` entry for one database URL.

    SQLite (the embedded default) gets its fast path: connections kept 600 s unless
    ``DB_CONN_MAX_AGE`` says otherwise (opening one and running the pragmas costs a request
    ~1 ms), IMMEDIATE transactions, and on every new connection WAL (readers never wait for
    the writer), ``synchronous=NORMAL`` (safe with WAL: a power cut loses at most the last
    commits, never the file), a 20 s ``busy_timeout`` (writers queue instead of failing with
    "database is locked"), a 64 MB page cache and temporary tables in memory. The hot-path
    statements are compiled once on every database (``annotation.db.compiled``); SQLite's
    driver keeps the prepared statements of a kept connection (``cached_statements``).
    """
    sqlite = url.startswith("sqlite:")
    config: dict[str, Any] = dict(
        dj_database_url.parse(url, conn_max_age=env_int("DB_CONN_MAX_AGE", 600 if sqlite else 0))
    )
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "cached_statements": 256,
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000; "
                "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;"
            ),
        }
    else:
        config.setdefault("OPTIONS", {})
        if env_bool("DB_PREPARED_STATEMENTS", True):
            # Parameters bound by the server, and a statement run 5 times on a connection is
            # prepared: PostgreSQL plans it once. Planning the queue claims cost more than
            # running them (see docs/performance.md). Turn off behind a pooler in transaction
            # mode that cannot keep prepared statements (PgBouncer before 1.21).
            config["OPTIONS"].update({"server_side_binding": True, "prepare_threshold": 5})
        if not env_bool("DB_JIT", False):
            # No just-in-time compilation: a count of a waiting queue whose cost estimate passed
            # jit_above_cost spent 28 ms compiling a 3 ms query (docs/performance.md). Sent as a
            # start-up option; set DB_JIT=on behind a pooler that refuses those (and turn JIT off
            # on the server, ALTER DATABASE ... SET jit = off, instead).
            config["OPTIONS"]["options"] = "-c jit=off"
    config["ATOMIC_REQUESTS"] = False
    return config


DATABASES = {"default": database_from_env(f"sqlite:///{DATA_DIR / 'db.sqlite3'}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's four (issue 19 §10: "12345678" was accepted for an invitation account, which may carry the lead
# role): not like the username or email, 8 characters at least, not one of the 20,000 most common, not
# only digits. They judge the passwords people choose (invitations, the admin, createsuperuser); the ones
# the site makes (onboarding, the demo) are random and set directly.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env("DJANGO_STATIC_ROOT", str(BASE_DIR / "staticfiles")) or "staticfiles")
MEDIA_ROOT = DATA_DIR / "media"
MEDIA_URL = "/media/"  # never served directly: screens go through permission-checked views

# Storage: local files by default, S3 when AWS_STORAGE_BUCKET_NAME is set. Static files are a separate
# matter: plain names here, hashed names from a manifest in production (which collects them in the image).
AWS_STORAGE_BUCKET_NAME = env("AWS_STORAGE_BUCKET_NAME")
STORAGES: dict[str, dict[str, Any]] = {
    "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEDIA_ROOT)},
    },
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if AWS_STORAGE_BUCKET_NAME:
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": AWS_STORAGE_BUCKET_NAME,
            "region_name": env("AWS_S3_REGION_NAME"),
            "endpoint_url": env("AWS_S3_ENDPOINT_URL"),
            "location": env("AWS_S3_LOCATION", "") or "",
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": True,
        },
    }

# Content-Security-Policy (django-csp), in every profile so that the browser suite runs under it. The app
# serves every asset itself, so everything comes from 'self'; the few inline <script>/<style> blocks carry
# the request's nonce (`{{ csp_nonce }}`). Style *attributes* stay allowed (style-src-attr): chart bars and
# segments take their width from the data (style="width: N%"), which no stylesheet can know, and a style
# attribute cannot run code. The API documentation pages relax this for their bundles (annotation/apis/docs.py).
# The JSON API is left out: a policy governs documents a browser renders, and building the header cost
# ~0.2 ms of every leasing request (docs/performance.md). Its documentation pages keep the policy.
CONTENT_SECURITY_POLICY: dict[str, Any] = {
    "EXCLUDE_URL_PREFIXES": ["/api/projects/", "/api/assignments/", "/api/imports/", "/api/release-jobs/"],
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "style-src-attr": [UNSAFE_INLINE],
        "img-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

LOGIN_URL = "frontend:login"
LOGIN_REDIRECT_URL = "frontend:home"
LOGOUT_REDIRECT_URL = "frontend:login"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "annotation.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotation.apis.errors.exception_handler",
    # Bodies are JSON (the schema advertises what is parsed); the import endpoint adds its upload.
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # Brute force (annotation/throttling.py, docs/operations.md). Users get room for a fast crowd
    # client; anonymous callers and wrong tokens do not.
    "DEFAULT_THROTTLE_CLASSES": ["annotation.throttling.AnonThrottle", "annotation.throttling.UserThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env("SCREENQA_THROTTLE_ANON", "60/min"),
        "user": env("SCREENQA_THROTTLE_USER", "6000/min"),
        "token_failure": env("SCREENQA_THROTTLE_TOKEN_FAILURES", "20/min"),
    },
    # Proxies in front whose X-Forwarded-For is trusted (the image's nginx role: 1); 0 = REMOTE_ADDR.
    "NUM_PROXIES": env_int("SCREENQA_TRUSTED_PROXIES", 0) or None,
}

# Logins (/login/, /admin/login/): django-axes locks a username out for one client address after
# AXES_FAILURE_LIMIT wrong passwords, for AXES_COOLOFF_TIME, even when the right one comes next.
AXES_FAILURE_LIMIT = env_int("SCREENQA_LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("SCREENQA_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "annotation.throttling.client_ip"
AXES_VERBOSE = False

SPECTACULAR_SETTINGS = {
    "TITLE": "ScreenQA annotation platform API",
    "DESCRIPTION": "Screens, stages and assignments of the ScreenQA annotation pipeline.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The stage enum keeps its name beside the payloads' one-value ``stage`` enums (pipeline/stages/wire.py).
    "ENUM_NAME_OVERRIDES": {
        "StageEnum": "annotation.models.Stage.values",
        "ReviewVerdictEnum": "annotation.models.ReviewVerdict.values",
    },
    # every operation documents its error answers (annotation/apis/errors.py)
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "annotation.apis.errors.document_errors",
    ],
}

# Celery. Without a broker the embedded default runs tasks in-process.
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND")
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Redis redelivers an unacknowledged task (its whole worker was killed) after this many seconds. A job's
# heartbeat decides whether a delivery may run it (pipeline.jobs), so a redelivery of a live job is harmless.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 1800)}
# A worker outlives a broker outage (issue 19 §3): it retries connecting, at start and after a loss,
# for as long as it takes (Celery's default gives up after 100 tries, about 45 minutes, and exits).
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Embedded default only: run "queued" jobs on a background thread of the web
# process, so the page that started a job can show its progress.
SCREENQA_INPROCESS_THREADS = env_bool("SCREENQA_INPROCESS_THREADS", CELERY_BROKER_URL is None)

# Background jobs (pipeline.jobs, docs/operations.md). A running job beats every HEARTBEAT seconds; a queued or
# running job without a sign of life for STALE seconds has lost its worker: it is "stale" and may be run again.
SCREENQA_JOB_HEARTBEAT_SECONDS = env_int("SCREENQA_JOB_HEARTBEAT_SECONDS", 10)
SCREENQA_JOB_STALE_SECONDS = env_int("SCREENQA_JOB_STALE_SECONDS", 90)
# Time limits of the job task (prefork workers): at the soft limit the job fails with the reason; at the hard
# limit Celery kills its process (the job goes stale). A RICO-scale import takes ~4 minutes (docs/performance.md).
SCREENQA_JOB_SOFT_TIME_LIMIT = env_int("SCREENQA_JOB_SOFT_TIME_LIMIT", 3600)
SCREENQA_JOB_TIME_LIMIT = env_int("SCREENQA_JOB_TIME_LIMIT", SCREENQA_JOB_SOFT_TIME_LIMIT + 120)
CELERY_TASK_SOFT_TIME_LIMIT = SCREENQA_JOB_SOFT_TIME_LIMIT
# Every stored figure (the quality page's, pipeline.quality.figures; the analysis and project pages',
# pipeline.analytics.stored): a view that finds them older than this many seconds queues the job that refreshes
# them (and shows them, with the time they were computed, meanwhile). SCREENQA_QUALITY_FIGURES_MAX_AGE, its
# name before it covered every page, is still read when the new name is not set.
SCREENQA_STORED_FIGURES_MAX_AGE = env_int(
    "SCREENQA_STORED_FIGURES_MAX_AGE", env_int("SCREENQA_QUALITY_FIGURES_MAX_AGE", 300)
)
# The project page's counts (pipeline.analytics.stored) are read from a snapshot refreshed the same way once a
# project has this many screens; a smaller project's are counted on each view (milliseconds, and every
# submit shows at once). The analysis page always reads its snapshot.
SCREENQA_STORED_FIGURES_MIN_SCREENS = env_int("SCREENQA_STORED_FIGURES_MIN_SCREENS", 5000)
CELERY_TASK_TIME_LIMIT = SCREENQA_JOB_TIME_LIMIT

# Upload and import limits (see docs/operations.md). A request body (JSON, a form) over
# DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 (annotation.apis.errors.bad_request); the proxy role refuses larger
# ones itself with the same answer (docker/entrypoint.sh reads the same variable), except on the import
# routes, which take uploads up to MAX_UPLOAD_BYTES.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("SCREENQA_MAX_BODY_BYTES", 10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
SCREENQA_IMPORT = {
    "MAX_IMAGE_PIXELS": env_int("SCREENQA_MAX_IMAGE_PIXELS", 1440 * 2560 * 4),
    "MAX_IMAGE_BYTES": env_int("SCREENQA_MAX_IMAGE_BYTES", 20 * 1024 * 1024),
    "MAX_JSON_BYTES": env_int("SCREENQA_MAX_JSON_BYTES", 20 * 1024 * 1024),
    "MAX_JSON_DEPTH": env_int("SCREENQA_MAX_JSON_DEPTH", 200),
    "ZIP_MAX_ENTRIES": env_int("SCREENQA_ZIP_MAX_ENTRIES", 500_000),
    "ZIP_MAX_TOTAL_BYTES": env_int("SCREENQA_ZIP_MAX_TOTAL_BYTES", 50 * 1024**3),
    "ZIP_MAX_RATIO": env_int("SCREENQA_ZIP_MAX_RATIO", 200),
    "MAX_UPLOAD_BYTES": env_int("SCREENQA_MAX_UPLOAD_BYTES", 2 * 1024**3),
}


# Logs (docs/operations.md): every line has its time, level, logger, and the request id, annotator and project
# of the request or job it belongs to (annotation.observability). JSON, one object a line, for log collectors
# (production's default), or text for people (the local profile's and the tests').
def logging_config(log_format: str) -> dict[str, Any]:
    text = "%(asctime)s %(levelname)s %(name)s [%(request_id)s %(annotator)s %(project)s] %(message)s"
    formatters: dict[str, Any] = {
        "text": {"format": text},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s %(annotator)s %(project)s",
            "rename_fields": {"levelname": "level", "name": "logger"},
            "timestamp": True,
        },
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "refusals": {"()": "annotation.logfilters.RefusalsWithoutTraceback"},
            "context": {"()": "annotation.observability.ContextFilter"},
        },
        "formatters": {"line": formatters["json" if log_format == "json" else "text"]},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "filters": ["refusals", "context"], "formatter": "line"}
        },
        "root": {"handlers": ["console"], "level": env("DJANGO_LOG_LEVEL", "INFO")},
        "loggers": {"django.db.backends": {"level": "INFO"}},
    }


LOG_FORMAT = env("DJANGO_LOG_FORMAT", "text") or "text"
LOGGING = logging_config(LOG_FORMAT)
# The worker logs through the same configuration (Celery would otherwise install its own format).
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Metrics (GET /metrics, annotation.observability): site admins, or the bearer of this token (Prometheus).
SCREENQA_METRICS_TOKEN = env("SCREENQA_METRICS_TOKEN")

# Errors to Sentry when a DSN is set (requests, jobs, logged exceptions); no personal data is sent.
SENTRY_DSN = env("SENTRY_DSN")
if SENTRY_DSN:
    from annotation.observability import sentry_init

    sentry_init(
        SENTRY_DSN,
        environment=env("SENTRY_ENVIRONMENT"),
        traces=float(env("SENTRY_TRACES_SAMPLE_RATE", "0") or 0),
    )
