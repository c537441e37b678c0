"""The path converter of every id in a URL: 1 to the largest bigint key. A larger number matches
no URL (a 404 like any unknown id) instead of reaching the database, where SQLite cannot hold it
and PostgreSQL refuses it."""

from django.urls import register_converter

from core.values import ID_MAX


class IdConverter:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 1 <= number <= ID_MAX:
            raise ValueError(f"{value} is not an id")
        return number

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")
