"""gunicorn's settings for the web role (docker/entrypoint.sh) and ``make demo``: metrics and logs.

* Metrics are multiprocess (prometheus_client): every worker process writes its counters into files under
  ``PROMETHEUS_MULTIPROC_DIR`` and ``/metrics``, answered by any one process, adds them all up. The folder
  is made (a fresh one per start, under ``$TMPDIR``, when not given) and emptied here, before any worker
  starts; a worker that exits has its live gauges dropped (``child_exit``).
* gunicorn's own lines go out in the app's format: JSON when ``DJANGO_LOG_FORMAT`` is ``json`` (production's
  default), text otherwise. Requests are logged by the app (one line each, with the request id, annotator and
  project: annotation.observability), so gunicorn's access log stays off.
"""

import glob
import os
import tempfile

_metrics = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.path.join(
    tempfile.gettempdir(), f"screenqa-prometheus-{os.getpid()}"
)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics
os.makedirs(_metrics, exist_ok=True)
for _stale in glob.glob(os.path.join(_metrics, "*.db")):  # a previous run's processes: not ours to count
    os.remove(_stale)


def child_exit(server, worker):  # gunicorn calls it so
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


_production = os.environ.get("DJANGO_SETTINGS_MODULE", "").endswith(".production")
_json = (os.environ.get("DJANGO_LOG_FORMAT") or ("json" if _production else "text")) == "json"
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "line": (
            {
                "()": "pythonjsonlogger.json.JsonFormatter",
                "fmt": "%(levelname)s %(name)s %(message)s",
                "rename_fields": {"levelname": "level", "name": "logger"},
                "timestamp": True,
            }
            if _json
            else {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
        )
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "line", "stream": "ext://sys.stderr"}},
    "loggers": {
        "gunicorn.error": {"level": "INFO", "handlers": ["console"], "propagate": False},
        "gunicorn.access": {"level": "INFO", "handlers": [], "propagate": False},
    },
}
