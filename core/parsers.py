"""The API's JSON parser: DRF's, refusing NUL characters (PostgreSQL cannot store them).

Its own module: DRF imports it while `rest_framework.views` is being set up."""

from rest_framework import parsers
from rest_framework.exceptions import ParseError

NUL_REFUSED = "NUL bytes are not accepted in paths, query strings or text."


def contains_nul(value) -> bool:
    """Whether a parsed JSON value holds a NUL character in any key or string."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(contains_nul(k) or contains_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(contains_nul(v) for v in value)
    return False


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing NUL characters anywhere in the body (a 400)."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        if contains_nul(data):
            raise ParseError(NUL_REFUSED)
        return data
