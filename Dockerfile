# syntax=docker/dockerfile:1
# One image for every process: web (gunicorn), worker (celery), migrate, check.
#   docker build -t screenqa .
#   docker run --env-file prod.env screenqa web      # or: worker | migrate | check
# Configuration comes only from the environment (docs/operations.md); production secrets have no default.

FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY requirements.txt .
RUN python -m venv /venv && /venv/bin/pip install -r requirements.txt

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/venv/bin:$PATH \
    DJANGO_SETTINGS_MODULE=annotation.settings.production \
    DJANGO_STATIC_ROOT=/app/staticfiles \
    SCREENQA_DATA_DIR=/app/data
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-dejavu-core libpq5 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --uid 10001 app
COPY --from=build /venv /venv
WORKDIR /app
COPY --chown=app:app . .
# Static files are collected at build time with a throwaway key (never used at run time).
RUN DJANGO_SETTINGS_MODULE=annotation.settings.local DJANGO_SECRET_KEY=build-only \
    python manage.py collectstatic --noinput --verbosity 0 \
    && mkdir -p /app/data && chown app:app /app/data
USER app
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz').status != 200)"
ENTRYPOINT ["sh", "docker/entrypoint.sh"]
CMD ["web"]
