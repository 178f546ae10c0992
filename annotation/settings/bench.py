"""Benchmarks: the test profile's services, on a database of their own."""

from .base import database_from_env
from .test import *  # noqa: F403

DATABASES = {"default": database_from_env("postgres://postgres@127.0.0.1:5432/screenqa_bench")}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
