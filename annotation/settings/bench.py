"""Benchmarks: the test profile's services, on a database of their own (``<name>_bench``)."""

from .base import database_config, env
from .test import *  # noqa: F403

_url = env("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/screenqa") or ""
if _url.startswith("postgres"):
    _base, _name = _url.rsplit("/", 1)
    _name = _name.split("?")[0] or "screenqa"
    if not _name.endswith("_bench"):  # a child process handed the bench URL keeps it
        _name += "_bench"
    _url = f"{_base}/{_name}"
DATABASES = {"default": database_config(_url)}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
