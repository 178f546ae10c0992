"""Celery tasks. Celery's autodiscovery imports this package; each area has its module."""

from . import export, imports, postprocess  # noqa: F401
