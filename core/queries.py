"""Query parts every app's hot reads share."""

from collections.abc import Collection

from django.db import connection
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL


def of_ids(qs: QuerySet, column: str, ids: Collection[int]) -> QuerySet:
    """`qs` narrowed to the rows whose `column` (of its own table) is one of `ids`.

    This is `column = ANY(%s)` with the ids as one array parameter: an IN list costs Django
    and psycopg a placeholder each, about 0.15 s per 20,000 ids.
    """
    quote = connection.ops.quote_name
    sql = f"{quote(qs.model._meta.db_table)}.{quote(qs.model._meta.get_field(column).column)}"
    return qs.filter(RawSQL(f"{sql} = ANY(%s)", (list(ids),), output_field=BooleanField()))
