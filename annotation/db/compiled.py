"""Hot-path statements compiled once: the ORM writes the SQL, this module keeps it.

On the leasing hot path (``next``) the ORM spent more time building and compiling its
queries (~0.3-1 ms each) than PostgreSQL spent running them. A statement here is built by
an ORM ``build(values)`` function, so the ORM stays the single source of its SQL; it is
compiled once per ``key`` and afterwards only its parameters are filled in.

How a compiled statement learns where each value goes: the first time, ``build`` is called
with *stand-ins* for ``values`` (model instances with impossible keys, odd datetimes,
marker strings and integers) and the parameters are matched back to the names; then the
result is checked against a build with the real values (same SQL, same parameters). A key
that does not check out is never cached (it compiles every time, still correct).

``key`` must determine everything about the statement that is not a value: only the
values themselves become parameters (for a model instance, its primary key). Anything else
``build`` reads, including other attributes of a model instance in ``values`` (say a
project's setting), is frozen into the compiled statement, so it must be part of the key
(as ``StageRules.queue_shape`` does for the pre-filter's number of judges).

Rows come back as the ORM's ``values_list`` gives them (the same field converters, e.g.
JSON). PostgreSQL only; other databases run the ORM.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import Model, QuerySet

Build = Callable[[dict[str, Any]], QuerySet[Any]]

Converters = list[tuple[int, list[Any], Any]]


class _Compiled(NamedTuple):
    sql: str
    sources: list[tuple[str | None, Any]]  # per parameter: (value name, _) or (None, literal)
    converters: Converters  # per converted column: (position, converters, expression)


# key -> the compiled statement, or None when the key did not check out.
_CACHE: dict[Hashable, _Compiled | None] = {}
_STAND_IN_PK = -(10**12)
_STAND_IN_TIME = datetime(1970, 1, 2, 3, 4, 5, 424242, tzinfo=UTC)


def columns(model: type[Model], prefix: str = "", *, exclude: tuple[str, ...] = ()) -> list[str]:
    """``values_list`` paths of a model's columns (``prefix`` like ``"screen__"``)."""
    return [prefix + field.attname for field in model._meta.concrete_fields if field.name not in exclude]


def plain_columns(model: type[Model], prefix: str = "") -> list[str]:
    """``values_list`` paths of a model's columns but its JSON ones (large, or unneeded)."""
    return [prefix + field.attname for field in model._meta.concrete_fields if field.get_internal_type() != "JSONField"]


def instance_from_row(model: type[Model], paths: list[str], row: tuple[Any, ...]) -> Model:
    """A model instance from the columns ``paths`` (as from ``plain_columns``) of a row."""
    return model.from_db(connection.alias, [path.rsplit("__", 1)[-1] for path in paths], row)


def _stand_in(name: str, value: Any, n: int) -> Any:
    if isinstance(value, Model):
        other = copy.copy(value)
        other.pk = _STAND_IN_PK - n
        return other
    if isinstance(value, datetime):
        return _STAND_IN_TIME.replace(microsecond=424242 - n)
    if isinstance(value, bool):
        raise TypeError(f"no stand-in for {name}={value!r} (make it part of the key)")
    if isinstance(value, int):
        return _STAND_IN_PK - 1000 - n
    if isinstance(value, str):
        return f"\x1fstand-in-{n}\x1f"
    raise TypeError(f"no stand-in for {name}={value!r}")


def _as_param(value: Any) -> Any:
    return value.pk if isinstance(value, Model) else value


def _compile(queryset: QuerySet[Any]) -> tuple[str, tuple[Any, ...], Converters]:
    compiler = queryset.query.get_compiler(connection=connection)
    sql, params = compiler.as_sql()
    selected = [column[0] for column in compiler.select[: compiler.col_count]]
    converters = [(at, convs, expr) for at, (convs, expr) in compiler.get_converters(selected).items()]
    return sql, tuple(params), converters


def statement(*, key: Hashable, build: Build, values: dict[str, Any]) -> tuple[str, tuple[Any, ...], Converters]:
    """The SQL, parameters and column converters of ``build(values)``, compiled once per ``key``."""
    if key not in _CACHE:
        stand_ins = {name: _stand_in(name, value, n) for n, (name, value) in enumerate(values.items())}
        sql, params, converters = _compile(build(stand_ins))
        by_param = {_as_param(v): name for name, v in stand_ins.items()}
        sources = [(by_param.get(p), p) for p in params]
        real_sql, real_params, real_converters = _compile(build(values))
        filled = tuple(_as_param(values[name]) if name else p for name, p in sources)
        checks_out = (sql, filled) == (real_sql, real_params)
        _CACHE[key] = _Compiled(sql, sources, converters) if checks_out else None
        if not checks_out:
            return real_sql, real_params, real_converters
    cached = _CACHE[key]
    if cached is None:
        return _compile(build(values))
    params = tuple(_as_param(values[name]) if name else p for name, p in cached.sources)
    return cached.sql, params, cached.converters


def _converted(row: tuple[Any, ...], converters: Converters) -> tuple[Any, ...]:
    if not converters:
        return tuple(row)
    values = list(row)
    for at, convs, expression in converters:
        for convert in convs:
            values[at] = convert(values[at], expression, connection)
    return tuple(values)


def is_cached(key: Hashable) -> bool:
    """Whether ``key`` compiled and checked out (for tests)."""
    return _CACHE.get(key) is not None


def forget(key: Hashable) -> None:
    """Drop a compiled statement (for tests)."""
    _CACHE.pop(key, None)


def fetch_one(*, key: Hashable, build: Build, values: dict[str, Any]) -> tuple[Any, ...] | None:
    """The first row of ``build(values)`` (a ``values_list`` of plain columns), or ``None``."""

    def first(v: dict[str, Any]) -> QuerySet[Any]:
        return build(v)[:1]

    if connection.vendor != "postgresql":
        rows = list(first(values))
        return tuple(rows[0]) if rows else None
    sql, params, converters = statement(key=("first", key), build=first, values=values)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return _converted(row, converters) if row is not None else None


def fetch_all(*, key: Hashable, build: Build, values: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Every row of ``build(values)`` (a ``values_list`` of plain columns)."""
    if connection.vendor != "postgresql":
        return [tuple(row) for row in build(values)]
    sql, params, converters = statement(key=key, build=build, values=values)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [_converted(row, converters) for row in cursor.fetchall()]


def exists(*, key: Hashable, build: Build, values: dict[str, Any]) -> bool:
    """Whether ``build(values)`` has a row (``build`` returns any queryset)."""
    if connection.vendor != "postgresql":
        return build(values).exists()

    def probe(v: dict[str, Any]) -> QuerySet[Any]:
        return build(v).order_by().values_list("pk")  # like ``exists()``: no ordering

    return fetch_one(key=("exists", key), build=probe, values=values) is not None


_INSERT_SQL: dict[str, tuple[str, list[Any]]] = {}


def insert(instance: Model) -> Model:
    """Write a new ``instance`` like ``instance.save()`` (defaults, ``auto_now(_add)``, the
    same value preparation) with one ``INSERT ... RETURNING`` built once per model, and set
    its primary key. No model signals (the domain connects none). The ORM elsewhere."""
    if connection.vendor != "postgresql":
        instance.save(force_insert=True)
        return instance
    meta = instance._meta
    if meta.label not in _INSERT_SQL:
        fields = [f for f in meta.concrete_fields if not f.primary_key]
        quote = connection.ops.quote_name
        columns = ", ".join(quote(str(f.column)) for f in fields)
        marks = ", ".join(["%s"] * len(fields))
        # Only quoted identifiers from the model's metadata are spliced in; values are bound.
        sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({marks}) RETURNING {quote(str(meta.pk.column))}"  # type: ignore[union-attr]  # noqa: S608
        _INSERT_SQL[meta.label] = (sql, fields)
    sql, fields = _INSERT_SQL[meta.label]
    params = [f.get_db_prep_save(f.pre_save(instance, add=True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    instance.pk = row[0] if row is not None else None
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance
