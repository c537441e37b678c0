"""Model instances from the rows of hand-written SQL, converted as the ORM converts its own
(booleans and dates from SQLite, JSON and decimals on both databases): the hot read paths join
in one statement what the ORM would compile at a higher CPU cost, and still hand out models."""

from functools import cache

from django.db import connection


def _in_model_order(model, attnames) -> tuple[str, ...]:
    wanted = set(attnames)
    return tuple(f.attname for f in model._meta.concrete_fields if f.attname in wanted)


@cache
def _converters(model, attnames: tuple[str, ...], vendor: str) -> list[tuple]:
    """Per column: the backend's and the field's converters, as the SQL compiler applies them."""
    by_attname = {f.attname: f for f in model._meta.concrete_fields}
    found = []
    for name in attnames:
        column = by_attname[name].get_col(model._meta.db_table)
        found.append(
            (
                column,
                connection.ops.get_db_converters(column) + column.get_db_converters(connection),
            )
        )
    return found


@cache
def columns(model, alias: str, attnames: tuple[str, ...] | None = None) -> tuple[tuple, str]:
    """The attnames of `model` in the model's order (all its concrete columns unless given) and
    the SQL list that selects them from the table aliased `alias`, in that order."""
    fields = model._meta.concrete_fields
    names = _in_model_order(model, attnames or [f.attname for f in fields])
    column = {f.attname: f.column for f in fields}
    return names, ", ".join(f"{alias}.{connection.ops.quote_name(column[n])}" for n in names)


def model_from_row(model, attnames: tuple[str, ...], values) -> object:
    """An instance of `model` from `values` of its columns `attnames`, given in the model's
    order as `columns` lists them (the other columns load on first use, as with `only()`)."""
    converted = []
    for value, (column, converters) in zip(
        values, _converters(model, attnames, connection.vendor), strict=True
    ):
        for convert in converters:
            value = convert(value, column, connection)
        converted.append(value)
    return model.from_db(connection.alias, list(attnames), converted)
