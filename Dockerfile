# One image for every process (docker/entrypoint.sh): proxy (nginx, the only role to expose), web
# (gunicorn behind the proxy), worker (celery), migrate, check.
#   docker build -t screenqa .
#   docker compose up        # the whole deployment: compose.yaml, docs/operations.md
# Configuration comes only from the environment (docs/operations.md); production secrets have no default.
#
# Build arguments (no "# syntax=" line on purpose: it would pull a Dockerfile frontend image):
#   BASE_IMAGE      a Debian bookworm image with Python 3.11 and its venv module. The default is the
#                   official image; the image test (tests/ci/test_image.py) passes a base it made with
#                   debootstrap, so that the image builds on a machine with no image registry.
#   EXTRA_CA_CERTS  PEM certificates pip must trust besides its own bundle (a TLS-inspecting proxy's
#                   CA). Read in the build stage only: the final image holds neither the certificates
#                   nor the argument.
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS build
ARG EXTRA_CA_CERTS=""
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /build
# The lock file (make lock): exact versions of everything, each file's hash checked, so the image installs
# what CI tested and a changed or substituted package on the index fails the build.
COPY requirements.lock .
RUN python3 -m venv /venv \
    && if [ -n "$EXTRA_CA_CERTS" ]; then \
         cat "$(/venv/bin/python -c 'from pip._vendor import certifi; print(certifi.where())')" > /tmp/pip-ca.pem \
         && printf '%s\n' "$EXTRA_CA_CERTS" >> /tmp/pip-ca.pem \
         && export PIP_CERT=/tmp/pip-ca.pem; \
       fi \
    && /venv/bin/pip install --require-hashes -r requirements.lock

FROM ${BASE_IMAGE}
# PATH is spelled out: a base made with `docker import` has no PATH of its own to extend.
ENV LANG=C.UTF-8 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DJANGO_SETTINGS_MODULE=annotation.settings.production \
    DJANGO_STATIC_ROOT=/app/staticfiles \
    SCREENQA_DATA_DIR=/app/data
# nginx for the proxy role. psycopg[binary] carries its own libpq, and overlays use Pillow's own font.
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx-light \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
    && useradd --system --create-home --uid 10001 app
COPY --from=build /venv /venv
WORKDIR /app
# The code belongs to root: the processes run as `app` and cannot rewrite it.
COPY . .
# Static files are collected with the production settings, so that the manifest of hashed names that
# production's storage reads at run time is the one written here. The values below only let the
# settings load: collectstatic opens no database, broker or bucket.
RUN DJANGO_SECRET_KEY=build-only-never-used-at-run-time \
    DATABASE_URL=postgres://build.invalid/none \
    CELERY_BROKER_URL=redis://build.invalid:6379/0 \
    AWS_STORAGE_BUCKET_NAME=build-only \
    python manage.py collectstatic --noinput --verbosity 0 \
    && mkdir -p /app/data && chown app:app /app/data
USER app
EXPOSE 8000
# web and proxy answer on $PORT; compose.yaml gives the worker a check of its own.
HEALTHCHECK --interval=30s --timeout=5s --retries=3 CMD ["python", "docker/healthcheck.py"]
ENTRYPOINT ["sh", "docker/entrypoint.sh"]
CMD ["web"]
