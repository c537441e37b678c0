"""Query parts every app's hot reads share."""

from collections.abc import Iterable

from django.db.models import BooleanField, F, Func, QuerySet


class _AnyOf(Func):
    """`<column> = ANY(%s::bigint[])`: the column resolved as an F() is (joins, a subquery's
    aliases); the ids one parameter, their array's text (`{1,2,3}`) cast to `bigint[]` (one
    type, so a prepared statement fits every list), joined at C speed: an ArrayField value
    prepared each id through the field, about ten Python calls an id (a query of 804 ids 4.8 ->
    2.0 ms CPU; benchmarks/RESULTS.md "Import after the fix")."""

    output_field = BooleanField()

    def __init__(self, column: F, ids: list[int]):
        super().__init__(column)
        self.ids = ids

    def as_sql(self, compiler, connection, **extra):
        column_sql, column_params = compiler.compile(self.get_source_expressions()[0])
        array = "{" + ",".join(map(str, self.ids)) + "}"
        return f"{column_sql} = ANY(%s::bigint[])", (*column_params, array)


def of_ids(qs: QuerySet, column: str, ids: Iterable[int] | QuerySet) -> QuerySet:
    """`qs` narrowed to the rows whose `column` (a field of its model, or a path through its
    relations: "proof", "item__proof") is one of `ids` (given as values, or as a subquery,
    which stays one: `column IN (SELECT ...)`).

    This is `column = ANY(%s)` with the ids as one array parameter: an IN list costs Django
    and psycopg a placeholder each, about 0.15 s per 20,000 ids, and PostgreSQL refuses a
    statement of more than 65,535 parameters (a selection of that many proofs). Safe inside a
    subquery (`pk__in=of_ids(...).values("pk")`): the column is qualified as Django aliases it.
    """
    if isinstance(ids, QuerySet):
        return qs.filter(**{f"{column}__in": ids})
    values = [int(pk) for pk in ids]
    if not values:  # no row: Django answers an empty IN list without asking the database
        return qs.filter(**{f"{column}__in": []})
    return qs.filter(_AnyOf(F(column), values))
