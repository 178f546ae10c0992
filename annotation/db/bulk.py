"""Bulk writes: many rows in one statement.

* ``bulk_set``: in-memory fields of many objects, one ``UPDATE ... FROM unnest(...)``;
* ``insert_returning``: new rows and their keys, one ``INSERT ... RETURNING`` with every value
  bound (large JSON texts are parsed by the database, never re-serialised in Python);
* ``copy_rows``: many plain rows with ``COPY`` (no model instances);
* ``batched``: a stream in batches, for the jobs that write in batches.

On PostgreSQL each is the fast path measured in its docstring; elsewhere (the embedded
SQLite default) the ORM's ``bulk_update`` / ``bulk_create`` do the same work.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar, cast

from django.db import connection
from django.db.models import Field, Model

from .backend import postgresql

T = TypeVar("T")


def batched(iterable: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(iterable)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


_PG_TYPES = {"CharField": "text", "TextField": "text", "BooleanField": "boolean", "JSONField": "jsonb"}


def bulk_set(
    model: type[Model], objs: Sequence[Model], fields: Sequence[str], *, only_if: dict[str, Sequence[str]] | None = None
) -> int:
    """Write each object's in-memory ``fields`` in one statement; rows failing ``only_if`` are left alone.

    ``only_if`` maps a field to the values the row must still hold *when updated* (checked by the
    database in the same statement, so a concurrent change wins). On PostgreSQL this is one
    ``UPDATE ... FROM unnest(arrays)``: ``bulk_update``'s ``CASE WHEN`` per row cost 13 s of 16 s
    for 2,000 questions in the benchmark. Other databases (the embedded SQLite) use ``bulk_update``.
    Returns the number of rows updated.
    """
    if not objs:
        return 0
    conditions = only_if or {}
    if not postgresql():
        queryset = model._default_manager.filter(**{f"{name}__in": list(values) for name, values in conditions.items()})
        return queryset.bulk_update(objs, list(fields))
    quote = connection.ops.quote_name
    meta = model._meta
    columns, casts, selects = ["id"], ["%s::bigint[]"], []
    params: list[list[Any]] = [[o.pk for o in objs]]
    for name in fields:
        field = cast(Field, meta.get_field(name))
        column = quote(str(field.column))
        values = [getattr(o, field.attname) for o in objs]
        kind = _PG_TYPES[field.get_internal_type()]
        if kind == "jsonb":  # sent as text and cast per row: psycopg adapts no list of Jsonb to jsonb[]
            values = [json.dumps(v) for v in values]
            selects.append(f"{column} = v.{column}::jsonb")
            kind = "text"
        else:
            selects.append(f"{column} = v.{column}")
        columns.append(column)
        casts.append(f"%s::{kind}[]")
        params.append(values)
    where = [f"t.{quote(str(cast(Field, meta.pk).column))} = v.id"]
    for name, allowed in conditions.items():
        where.append(f"t.{quote(str(cast(Field, meta.get_field(name)).column))} = ANY(%s)")
        params.append(list(allowed))
    # Table and column names come from the model's meta, never from input.
    sql = (
        f"UPDATE {quote(meta.db_table)} AS t SET {', '.join(selects)} "  # noqa: S608
        f"FROM unnest({', '.join(casts)}) AS v({', '.join(columns)}) WHERE {' AND '.join(where)}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


M = TypeVar("M", bound=Model)


def insert_returning(rows: Sequence[M], *, as_text: dict[str, Sequence[str]] | None = None) -> list[M]:
    """Insert new ``rows`` (of one model) and set their primary keys; the result of ``bulk_create``.

    ``as_text``: per field, each row's value as text for the database to parse into the
    column's type (a JSON text for a JSONField). On PostgreSQL this is one ``INSERT ...
    RETURNING`` whose values are bound by the server (``DB_PREPARED_STATEMENTS``): measured on
    real RICO VHs (~220 KB of JSON text each), 0.97 -> 0.24 ms of Python CPU and 9.1 -> 3.2 ms
    of wall time per screen against ``bulk_create``, because nothing is re-serialised and the
    server does not lex a 40 MB statement. Elsewhere ``bulk_create`` (the rows must then hold
    those fields as values or expressions themselves).
    """
    if not rows:
        return []
    model = type(rows[0])
    if not postgresql():
        return model._default_manager.bulk_create(rows)
    texts = as_text or {}
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    row_sql = "(" + ", ".join(f"%s::{f.db_type(connection)}" if f.name in texts else "%s" for f in fields) + ")"
    # Only quoted identifiers and column types from the model's metadata are spliced in; every value is bound.
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(str(f.column)) for f in fields)}) "  # noqa: S608
        f"VALUES {', '.join([row_sql] * len(rows))} RETURNING {quote(str(cast(Field, meta.pk).column))}"
    )
    params: list[Any] = []
    for i, row in enumerate(rows):
        for f in fields:
            if f.name in texts:
                params.append(texts[f.name][i])
            else:
                params.append(f.get_db_prep_save(f.pre_save(row, add=True), connection))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [r[0] for r in cursor.fetchall()]
    for row, pk in zip(rows, ids, strict=True):
        row.pk = pk
        row._state.adding = False
        row._state.db = connection.alias
    return list(rows)


def copy_rows(model: type[Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Insert plain rows (values in the order of ``columns``, field attnames such as
    ``screen_id``) into ``model``'s table.

    On PostgreSQL with ``COPY``: no model instances and no per-value Python quoting (measured:
    ~0.7 -> ~0.05 ms of CPU per screen of 20 candidates). Elsewhere ``bulk_create``.
    """
    if not postgresql():
        model._default_manager.bulk_create(
            [model(**dict(zip(columns, row, strict=True))) for row in rows], batch_size=2000
        )
        return
    meta = model._meta
    by_attname = {f.attname: f for f in meta.concrete_fields}
    quote = connection.ops.quote_name
    names = ", ".join(quote(str(by_attname[c].column)) for c in columns)
    sql = f"COPY {quote(meta.db_table)} ({names}) FROM STDIN"
    with connection.cursor() as cursor, connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(tuple(row))
