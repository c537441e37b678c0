"""Numbers as every page, report and export prints them (below every app: any app may use it)."""

from decimal import Decimal


def shown(value: Decimal | int | float | str) -> str:
    """A score printed one way everywhere: no trailing zeros, no exponent ("0.5", "1", "3.5")."""
    number = value if isinstance(value, Decimal) else Decimal(str(value))
    return format(number.normalize(), "f")
