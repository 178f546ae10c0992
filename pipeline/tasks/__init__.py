"""Celery tasks. Celery's autodiscovery imports this package; each area has its module."""

from . import imports, release  # noqa: F401
