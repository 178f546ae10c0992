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
    rundir="$(cd "$(mktemp -d "${TMPDIR:-/tmp}/screenqa-proxy.XXXXXX")" && pwd)"
    # Started as root (a container run as user 0, a test suite run by root), nginx runs its workers as
    # nobody:nogroup. They write the request bodies and answers they buffer (over 1 MiB) in folders nginx
    # makes theirs under the run directory, so it and every folder above it must let them through: without
    # that every upload answered 500. Refuse to start rather than fail on the first large body.
    user=""
    if [ "$(id -u)" = 0 ]; then
      user="user nobody nogroup;"
      chmod 711 "$rundir"
      dir="$rundir"
      while [ "$dir" != / ]; do
        dir="$(dirname "$dir")"
        case "$(stat -c %A "$dir")" in
          *[xt]) ;;
          *)
            echo "proxy: started as root, nginx's workers run as nobody, and $dir keeps them out of $rundir:" \
              "set TMPDIR to a folder they can pass through (e.g. /tmp), or start the role as another user" >&2
            rmdir "$rundir"
            exit 78
            ;;
        esac
      done
    fi
    # nginx needs a resolver of its own to look the web role up again; take the container's.
    resolver=""
    nameserver="$(awk '$1 == "nameserver" { print $2; exit }' /etc/resolv.conf 2>/dev/null || true)"
    case "$nameserver" in
      "") ;;
      *:*) resolver="resolver [$nameserver] valid=10s;" ;;
      *) resolver="resolver $nameserver valid=10s ipv6=off;" ;;
    esac
    # The app's body limit (annotation/settings/base.py reads the same variables, with the same defaults),
    # and the upload cap plus 1 MiB of multipart envelope for the import routes.
    max_body=$(( ${SCREENQA_MAX_BODY_BYTES:-10485760} ))
    max_upload_body=$(( ${SCREENQA_MAX_UPLOAD_BYTES:-2147483648} + 1048576 ))
    sed -e "s|@USER@|$user|" \
        -e "s|@WORKERS@|${PROXY_WORKERS:-auto}|" \
        -e "s|@RUNDIR@|$rundir|g" \
        -e "s|@MAX_BODY@|$max_body|g" \
        -e "s|@MAX_UPLOAD_BODY@|$max_upload_body|g" \
        -e "s|@RESOLVER@|$resolver|" \
        -e "s|@LISTEN@|${BIND:-0.0.0.0}:${PORT:-8000}|" \
        -e "s|@UPSTREAM@|${WEB_UPSTREAM:-web:8000}|" \
        "$here/nginx.conf" > "$rundir/nginx.conf"
    exec "${NGINX:-nginx}" -e stderr -p "$rundir" -c "$rundir/nginx.conf" -g "daemon off;" "$@"
    ;;
  web)
    # docker/gunicorn.conf.py: multiprocess metrics (PROMETHEUS_MULTIPROC_DIR) and gunicorn's lines in the app's
    # log format; the app logs every request itself (with its request id), so gunicorn's access log is off.
    exec "$PYTHON" -m gunicorn annotation.wsgi:application --config "$here/gunicorn.conf.py" \
      --bind "${BIND:-0.0.0.0}:${PORT:-8000}" \
      --workers "${WEB_WORKERS:-$((2 * $(nproc) + 1))}" --threads "${WEB_THREADS:-1}" --worker-class gthread \
      --timeout "${WEB_TIMEOUT:-60}" "$@"
    ;;
  worker)
    # Without gossip and mingle (worker-to-worker events and the start-up sync of revoked tasks, which
    # nothing here uses): a message on the events exchange without a hostname (issue 19 saw one after a
    # broker restart) made gossip raise KeyError('hostname'), and the worker dropped its connection or ended.
    # The worker retries the broker forever (CELERY_BROKER_CONNECTION_MAX_RETRIES); a worker that exits
    # anyway is started again by its restart policy (compose.yaml, docs/operations.md).
    # Metrics of the jobs it runs: multiprocess (its pool's processes), served on $WORKER_METRICS_PORT when set
    # (annotation.observability; an internal port, never published).
    export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/screenqa-worker-metrics.XXXXXX")}"
    mkdir -p "$PROMETHEUS_MULTIPROC_DIR" && rm -f "$PROMETHEUS_MULTIPROC_DIR"/*.db
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
