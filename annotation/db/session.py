"""Per-transaction database settings (PostgreSQL; no-ops elsewhere), and the health probe."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.db import connection, transaction
from django.db.models import BooleanField, CharField, Func, Value

from .backend import postgresql

_LZ4_AVAILABLE: bool | None = None


def commit_without_flush() -> Func | None:
    """An expression that, selected by a statement of a transaction, makes that transaction's
    commit return before its WAL reaches the disk (``synchronous_commit`` off, for this
    transaction only); ``None`` where there is no such setting.

    For work that is cheap to lose in a crash: a lease (the unit is simply free again).
    Selected by the user lock's statement, so it costs no round trip of its own.
    """
    return _set_local("synchronous_commit", "off")


def plans_kept() -> Func | None:
    """An expression that, selected by a statement of a transaction, makes the prepared statements
    run after it in that transaction use their kept (generic) plan instead of being planned again
    for each call (``plan_cache_mode``, for this transaction only); ``None`` where there is none.

    PostgreSQL re-plans a prepared statement on every call while its generic plan looks costlier
    than the plans made for the values; the lease claim always did, and planning it (1.4 ms here)
    cost four times running it (0.36 ms; docs/performance.md). For the leasing transaction only,
    whose statements are key look-ups and the claims, whose generic plans
    ``tests/pipeline/engine/test_claim_plan.py`` checks for every stage. Selected by the user lock's
    statement, like ``commit_without_flush``: no round trip of its own.
    """
    return _set_local("plan_cache_mode", "force_generic_plan")


def _set_local(name: str, value: str) -> Func | None:
    """``set_config(name, value, true)``: the setting for the rest of the transaction (PostgreSQL; ``None``
    elsewhere), as an expression a statement selects."""
    if not postgresql():
        return None
    return Func(
        Value(name),
        Value(value),
        Value(True, output_field=BooleanField()),
        function="set_config",
        output_field=CharField(),
    )


def large_values_lz4() -> None:
    """Compress this transaction's large values (the VH) with lz4 where PostgreSQL has it.

    Measured on real RICO VHs (~60 KB of jsonb each): 2.5 ms per row with the default pglz,
    0.9 ms with lz4. ``SET LOCAL`` ends with the transaction; the column stays readable
    either way (PostgreSQL records the method per value).
    """
    global _LZ4_AVAILABLE
    if not postgresql():
        return
    with connection.cursor() as cursor:
        if _LZ4_AVAILABLE is None:
            cursor.execute("SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'")
            row = cursor.fetchone()
            _LZ4_AVAILABLE = bool(row and row[0] and "lz4" in row[0])
        if _LZ4_AVAILABLE:
            cursor.execute("SET LOCAL default_toast_compression = 'lz4'")


@contextlib.contextmanager
def read_only_snapshot() -> Iterator[None]:
    """One consistent, read-only view of the database for everything read inside (PostgreSQL:
    ``REPEATABLE READ READ ONLY``), so that several reads describe the same moment while others
    keep writing. Inside an enclosing transaction, that transaction is used as it is."""
    if not postgresql() or connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def ping() -> None:
    """Raise if the database does not answer (the health probe)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
