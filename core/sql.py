"""Names for hand-written SQL, taken from the models' `_meta` (public API: `db_table`,
`get_field(...).column`): a statement names a model's table and columns through a `Table`, so
that a renamed table or column (`db_table`, `db_column`) changes the SQL with it and a name the
model lacks fails at import, not in production.

    a = Table(Assignment, "a")
    f"SELECT {a.id} FROM {a} WHERE {a.item_id} = %s"   # a."id" ... "annotation_assignment" a
    Table(Assignment).status                            # "status", for SET and INSERT lists
"""

from __future__ import annotations

from django.core.exceptions import FieldDoesNotExist
from django.db import connection


class Table:
    """`model`'s table in a statement, under `alias` (or none). `str(table)` is the quoted table
    and its alias; `table.<name>` (a field's name or attname) is its quoted column, qualified by
    the alias when there is one (so `Table(model)` gives the bare table and bare columns)."""

    __slots__ = ("_model", "_alias")

    def __init__(self, model, alias: str | None = None) -> None:
        self._model, self._alias = model, alias

    def __str__(self) -> str:
        table = connection.ops.quote_name(self._model._meta.db_table)
        return f"{table} {self._alias}" if self._alias else table

    def __getattr__(self, field: str) -> str:
        try:
            column = self._model._meta.get_field(field).column
        except FieldDoesNotExist:
            raise AttributeError(f"{self._model.__name__} has no column {field!r}") from None
        quoted = connection.ops.quote_name(column)
        return f"{self._alias}.{quoted}" if self._alias else quoted
