#!/bin/sh
# Process roles of the image (also run as-is by tests/ci/test_entrypoint.py).
#   web      gunicorn on $PORT (default 8000), $WEB_WORKERS processes x $WEB_THREADS threads
#   worker   a Celery worker ($WORKER_CONCURRENCY processes)
#   migrate  apply database migrations (run once per release, before web/worker)
#   check    Django's deployment checks against the configured environment
set -eu
role="${1:-web}"
[ $# -gt 0 ] && shift
PYTHON="${PYTHON:-python}"
case "$role" in
  web)
    exec "$PYTHON" -m gunicorn annotation.wsgi:application \
      --bind "${BIND:-0.0.0.0}:${PORT:-8000}" \
      --workers "${WEB_WORKERS:-$((2 * $(nproc) + 1))}" --threads "${WEB_THREADS:-1}" --worker-class gthread \
      --timeout "${WEB_TIMEOUT:-60}" --access-logfile - "$@"
    ;;
  worker)
    exec "$PYTHON" -m celery -A annotation worker --loglevel "${WORKER_LOGLEVEL:-INFO}" \
      --concurrency "${WORKER_CONCURRENCY:-2}" "$@"
    ;;
  migrate)
    exec "$PYTHON" manage.py migrate --noinput "$@"
    ;;
  check)
    exec "$PYTHON" manage.py check --deploy --fail-level ERROR "$@"
    ;;
  *)
    echo "unknown role '$role' (use web, worker, migrate or check)" >&2
    exit 64
    ;;
esac
