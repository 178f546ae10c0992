#!/bin/sh
# Process roles of the image (also run as-is, without Docker, by tests/ci/test_entrypoint.py and
# tests/ci/test_proxy.py). compose.yaml wires them together; docs/operations.md documents the variables.
#   proxy    nginx on $BIND:$PORT (default 0.0.0.0:8000) in front of the web role at $WEB_UPSTREAM: the
#            only role to expose. It buffers whole requests, so slow or half-open clients never reach
#            gunicorn, whose threads would wait for them without a time limit (docker/nginx.conf).
#   web      gunicorn on $BIND:$PORT, $WEB_WORKERS processes x $WEB_THREADS threads (behind the proxy)
#   worker   a Celery worker ($WORKER_CONCURRENCY processes); it outlives broker outages
#   migrate  apply database migrations (run once per release, before web/worker)
#   check    Django's deployment checks against the configured environment; any warning fails it
set -eu
role="${1:-web}"
[ $# -gt 0 ] && shift
PYTHON="${PYTHON:-python}"
here="$(dirname "$0")"
case "$role" in
  proxy)
    rundir="$(mktemp -d "${TMPDIR:-/tmp}/screenqa-proxy.XXXXXX")"
    # nginx needs a resolver of its own to look the web role up again; take the container's.
    resolver=""
    nameserver="$(awk '$1 == "nameserver" { print $2; exit }' /etc/resolv.conf 2>/dev/null || true)"
    case "$nameserver" in
      "") ;;
      *:*) resolver="resolver [$nameserver] valid=10s;" ;;
      *) resolver="resolver $nameserver valid=10s ipv6=off;" ;;
    esac
    max_body=$(( ${SCREENQA_MAX_UPLOAD_BYTES:-2147483648} + 1048576 ))
    sed -e "s|@WORKERS@|${PROXY_WORKERS:-auto}|" \
        -e "s|@RUNDIR@|$rundir|g" \
        -e "s|@MAX_BODY@|$max_body|" \
        -e "s|@RESOLVER@|$resolver|" \
        -e "s|@LISTEN@|${BIND:-0.0.0.0}:${PORT:-8000}|" \
        -e "s|@UPSTREAM@|${WEB_UPSTREAM:-web:8000}|" \
        "$here/nginx.conf" > "$rundir/nginx.conf"
    exec "${NGINX:-nginx}" -e stderr -p "$rundir" -c "$rundir/nginx.conf" -g "daemon off;" "$@"
    ;;
  web)
    exec "$PYTHON" -m gunicorn annotation.wsgi:application \
      --bind "${BIND:-0.0.0.0}:${PORT:-8000}" \
      --workers "${WEB_WORKERS:-$((2 * $(nproc) + 1))}" --threads "${WEB_THREADS:-1}" --worker-class gthread \
      --timeout "${WEB_TIMEOUT:-60}" --access-logfile - "$@"
    ;;
  worker)
    # Without gossip and mingle (worker-to-worker events and the start-up sync of revoked tasks, which
    # nothing here uses): a message on the events exchange without a hostname (issue 19 saw one after a
    # broker restart) made gossip raise KeyError('hostname'), and the worker dropped its connection or ended.
    # The worker retries the broker forever (CELERY_BROKER_CONNECTION_MAX_RETRIES); a worker that exits
    # anyway is started again by its restart policy (compose.yaml, docs/operations.md).
    exec "$PYTHON" -m celery -A annotation worker --loglevel "${WORKER_LOGLEVEL:-INFO}" \
      --concurrency "${WORKER_CONCURRENCY:-2}" --without-gossip --without-mingle "$@"
    ;;
  migrate)
    exec "$PYTHON" manage.py migrate --noinput "$@"
    ;;
  check)
    # --deploy adds the security checks; WARNING makes a weak secret or a missing HTTPS setting fail it.
    exec "$PYTHON" manage.py check --deploy --fail-level WARNING "$@"
    ;;
  *)
    echo "unknown role '$role' (use proxy, web, worker, migrate or check)" >&2
    exit 64
    ;;
esac
