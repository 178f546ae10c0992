"""The one home of hand-written SQL and of the database fast paths.

* ``compiled``: hot-path statements the ORM writes once and this package keeps (any database);
* ``bulk``: many rows in one statement (``UPDATE ... FROM unnest``, ``INSERT ... RETURNING``, ``COPY``);
* ``session``: per-transaction settings (no-flush commits, lz4 for large values, read-only snapshots);
* ``backend``: the one place that chooses between the PostgreSQL fast path and the plain ORM.

Nothing outside this package looks at ``connection.vendor``.
"""
