"""Model instances from the rows of hand-written SQL, converted as the ORM converts its own
(booleans and dates from SQLite, JSON and decimals on both databases): the hot read paths join
in one statement what the ORM would compile at a higher CPU cost, and still hand out models."""

from functools import cache

from django.db import connection
from django.utils import timezone


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
    return model.from_db(connection.alias, list(attnames), _converted(model, attnames, values))


def _converted(model, attnames: tuple[str, ...], values) -> list:
    """`values` of the columns `attnames` of `model`, converted as the ORM converts them."""
    converted = []
    for value, (column, converters) in zip(
        values, _converters(model, attnames, connection.vendor), strict=True
    ):
        for convert in converters:
            value = convert(value, column, connection)
        converted.append(value)
    return converted


def _insert_head(model, computed: tuple[tuple[str, str], ...] = ()) -> tuple[str, tuple]:
    """`INSERT INTO table (columns) VALUES (%s, ...)` of every concrete column of `model` but its
    automatic key, and the fields whose values it takes, in that order; `computed`: (attname,
    SQL expression) pairs whose columns take the expression instead of a value."""
    quote = connection.ops.quote_name
    expression = dict(computed)
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key)
    names = ", ".join(quote(f.column) for f in fields)
    values = ", ".join(expression.get(f.attname, "%s") for f in fields)
    taken = tuple(f for f in fields if f.attname not in expression)
    return f"INSERT INTO {quote(model._meta.db_table)} ({names}) VALUES ({values})", taken


@cache
def _insert_sql(
    model, vendor: str, computed: tuple[tuple[str, str], ...] = ()
) -> tuple[str, tuple]:
    """The INSERT of a new row of `model` (`_insert_head`), returning its key where the database
    can, then the `computed` columns."""
    sql, fields = _insert_head(model, computed)
    if connection.features.can_return_columns_from_insert:
        quote = connection.ops.quote_name
        returned = [model._meta.pk.column, *(model._meta.get_field(n).column for n, _ in computed)]
        sql += " RETURNING " + ", ".join(quote(c) for c in returned)
    return sql, fields


def model_insert(
    instance, *, computed: dict[str, str] | None = None, with_sql: str = "", with_params=()
) -> None:
    """Saves a new `instance` in one hand-written INSERT, its values prepared as the ORM prepares
    them (`pre_save`: automatic dates; `get_db_prep_save`: JSON, decimals, keys), and sets its
    key: what `save()` does for a new row without the query compiler's CPU. No model signals are
    sent (the models it serves have no receivers; tests/test_rows.py checks that).
    `computed` (attname: SQL expression) gives columns an expression instead of the instance's
    value, read back into the instance; `with_sql` (a WITH clause, its parameters `with_params`)
    goes before the INSERT: PostgreSQL then writes another row in the same statement and the
    expressions may read what it returned (a database that cannot return columns from an INSERT
    takes no `computed`)."""
    computed = tuple((computed or {}).items())
    sql, fields = _insert_sql(type(instance), connection.vendor, computed)
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(with_sql + sql, [*with_params, *values])
        if connection.features.can_return_columns_from_insert:
            row = cursor.fetchone()
            instance.pk = row[0]
            names = tuple(name for name, _ in computed)
            for name, value in zip(names, _converted(type(instance), names, row[1:]), strict=True):
                setattr(instance, name, value)
        else:
            instance.pk = cursor.lastrowid
    instance._state.adding = False
    instance._state.db = connection.alias


@cache
def _upsert_sql(model, unique: str, replaced: tuple[str, ...], vendor: str) -> tuple[str, tuple]:
    """The INSERT of a row of `model` that, when a row with the same `unique` column exists,
    replaces that row's `replaced` columns instead (the other columns keep their first values),
    returning the row's key; and the fields whose values it takes, in that order."""
    quote = connection.ops.quote_name
    sql, fields = _insert_head(model)
    column = {f.attname: quote(f.column) for f in fields}
    update = ", ".join(f"{column[n]} = EXCLUDED.{column[n]}" for n in replaced)
    sql += (
        f" ON CONFLICT ({column[unique]}) DO UPDATE SET {update}"
        f" RETURNING {quote(model._meta.pk.column)}"
    )
    return sql, fields


@cache
def _attnames(model) -> frozenset[str]:
    return frozenset(f.attname for f in model._meta.concrete_fields)


def row_upsert(model, *, unique: str, replaced: tuple[str, ...], values: dict) -> int:
    """Creates or replaces (on `unique`, an attname with a unique constraint) a row of `model` in
    one statement and returns its key: `values` by attname, the columns not given take their
    defaults, the automatic dates now (`replaced` names the columns a replacement rewrites:
    list `updated_at` to have it follow); values are prepared as the ORM prepares them
    (`get_db_prep_save`). What `bulk_create(update_conflicts=True)` of one instance does, without
    the instance or the query compiler's CPU. No model signals are sent."""
    sql, fields = _upsert_sql(model, unique, replaced, connection.vendor)
    if not values.keys() <= _attnames(model):
        raise TypeError(
            f"not columns of {model.__name__}: {sorted(values.keys() - _attnames(model))}"
        )
    now = None
    prepared = []
    for f in fields:
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            now = now or timezone.now()
            value = now
        elif f.attname in values:
            value = values[f.attname]
        else:
            value = f.get_default()
        prepared.append(f.get_db_prep_save(value, connection))
    with connection.cursor() as cursor:
        cursor.execute(sql, prepared)
        return cursor.fetchone()[0]
