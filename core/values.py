"""Values as every app reads and writes them (below every app: any app may use them).

- Bounds of the numbers people and clients send, shared by forms and API serializers: each
  within its column's range, so that a huge number is a 400 naming the field, never a DB error.
- Numbers as every page, report and export prints them (`shown`).
- Text cells written for spreadsheets (every CSV the site serves: exports, adjudication;
  `csv_safe`)."""

from decimal import Decimal

INT_MIN = -(2**31)  # PostgreSQL integer
INT_MAX = 2**31 - 1
SMALLINT_MAX = 2**15 - 1
ID_MAX = 2**63 - 1  # bigint primary keys
LEASE_MINUTES_MAX = 24 * 60
REQUIRED_JUDGEMENTS_MAX = 10


def shown(value: Decimal | int | float | str) -> str:
    """A score printed one way everywhere: no trailing zeros, no exponent ("0.5", "1", "3.5")."""
    number = value if isinstance(value, Decimal) else Decimal(str(value))
    return format(number.normalize(), "f")


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: object) -> object:
    """A text cell that a spreadsheet would read as a formula (it starts with =, +, -, @, tab
    or carriage return) gets a leading apostrophe, as OWASP advises against CSV injection.
    Numbers are written as they are; JSONL and Parquet keep text exact."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
