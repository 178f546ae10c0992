"""Benchmarks: the test profile's services, on a database of their own (``<name>_bench``)."""

from .base import database_from_env, env
from .test import *  # noqa: F403

_url = env("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/screenqa") or ""
if _url.startswith("postgres"):
    _url = _url.rsplit("/", 1)[0] + "/" + (_url.rsplit("/", 1)[1].split("?")[0] or "screenqa") + "_bench"
DATABASES = {"default": database_from_env(_url)}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
