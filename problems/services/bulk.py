"""Batched reads and writes of plain rows by natural key, for the import.

PostgreSQL: keyed lookups join `unnest()` arrays, new rows go in by binary `COPY`, changed rows
by `COPY` into a staging table and one `INSERT ... SELECT ... ON CONFLICT DO UPDATE`. Elsewhere
(SQLite, embedded mode) the same results through the ORM (`__in` filters, bulk_create).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson
from django.db import connection, models

from core.sql import copy_rows

JSON_COLUMNS = {"metadata", "main_steps"}


def rows_by_key(
    model: type[models.Model], key: Sequence[str], keys: Iterable[tuple], columns: Sequence[str]
) -> dict[tuple, tuple]:
    """The existing rows whose `key` columns match one of `keys`: {key tuple: column values}.

    A join on unnest() of one array per key column (exact matches, one query whatever the
    batch size).
    """
    keys = list(dict.fromkeys(keys))
    if not keys:
        return {}
    fields = {field.attname: field for field in model._meta.concrete_fields}
    width = len(key)
    types = [
        "bigint"
        if fields[column].get_internal_type().endswith("AutoField")
        or isinstance(fields[column], models.ForeignKey)
        else "text"
        for column in key
    ]
    names = ", ".join(f"t.{column}" for column in (*key, *columns))
    match = " AND ".join(f"t.{column} = k.c{index}" for index, column in enumerate(key))
    arrays = ", ".join(f"%s::{kind}[]" for kind in types)
    aliases = ", ".join(f"c{index}" for index in range(width))
    with connection.cursor() as cursor:
        # LATERAL ... LIMIT 1 keeps one index probe per key: a hash join would scan the
        # whole table for every batch (the table's statistics are stale during an import).
        cursor.execute(
            f"SELECT r.* FROM unnest({arrays}) AS k({aliases}) CROSS JOIN LATERAL "
            f"(SELECT {names} FROM {model._meta.db_table} t WHERE {match} LIMIT 1) r",
            [[item[index] for item in keys] for index in range(width)],
        )
        found = cursor.fetchall()
    json_at = [width + index for index, column in enumerate(columns) if column in JSON_COLUMNS]
    out = {}
    for row in found:
        if json_at:
            row = list(row)
            for index in json_at:
                if isinstance(row[index], str):
                    row[index] = orjson.loads(row[index])
        out[tuple(row[:width])] = tuple(row[width:])
    return out


def tune_transaction() -> None:
    """Compresses long texts with lz4 (several times faster than the default pglz) for the rest
    of the transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL default_toast_compression = 'lz4'")


def insert_rows(model: type[models.Model], columns: Sequence[str], rows: list[tuple]) -> None:
    """Rows known to be new (their keys were looked up in this transaction): `COPY` straight
    into the table."""
    if not rows:
        return
    with connection.cursor() as cursor:
        copy_rows(cursor, model._meta.db_table, columns, rows)


def upsert_rows(
    model: type[models.Model],
    columns: Sequence[str],
    rows: list[tuple],
    *,
    unique: Sequence[str],
    update: Sequence[str],
) -> None:
    """Inserts rows, or updates the `update` columns of those whose `unique` key exists."""
    if not rows:
        return
    table = model._meta.db_table
    stage = f"pm_stage_{table}"
    names = ", ".join(columns)
    assignments = ", ".join(f"{column} = EXCLUDED.{column}" for column in update)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {stage} ON COMMIT DROP AS "
            f"SELECT {names} FROM {table} WITH NO DATA"
        )
        cursor.execute(f"TRUNCATE {stage}")
        copy_rows(cursor, stage, columns, rows, types_of=table)
        cursor.execute(
            f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} "
            f"ON CONFLICT ({', '.join(unique)}) DO UPDATE SET {assignments}"
        )
