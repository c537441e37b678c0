"""Query flags (`?revise=true`, `?next=1`, ...) read as booleans, the same way by every view and
API: 1/true/yes/on mean true, 0/false/no/off (and an absent or empty flag) false; anything else
is a 400 naming the flag."""

from collections.abc import Mapping

from rest_framework.exceptions import ValidationError

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"", "0", "false", "no", "off"})


class FlagError(ValidationError):
    """A flag that is neither true nor false. A DRF ValidationError (a 400 with the flag's name
    as the field) in an API; pages catch it and answer 400 with its message."""

    def __init__(self, name: str, value: str):
        self.message = f"{name}: {value!r} is not a flag; use true or false (1/0, yes/no, on/off)"
        super().__init__({name: [self.message]})


def query_flag(params: Mapping[str, str], name: str) -> bool:
    """The flag `name` of a query string (request.GET or request.query_params)."""
    raw = params.get(name, "")
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise FlagError(name, raw)
