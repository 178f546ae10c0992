"""The choice between the PostgreSQL fast path and the plain ORM, made here and only here.

PostgreSQL (production, the test suite) gets ``COPY``, ``unnest`` updates, server-bound
``INSERT``s, session settings and the candidates read with the lease claim; other databases
(the embedded SQLite default) get the ORM's portable equivalent, with the same results.
"""

from __future__ import annotations

from django.db import connection


def postgresql() -> bool:
    """Whether the fast paths written for PostgreSQL run on this connection."""
    return connection.vendor == "postgresql"
