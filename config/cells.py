"""Text cells written for spreadsheets (every CSV the site serves: exports, adjudication)."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: object) -> object:
    """A text cell that a spreadsheet would read as a formula (it starts with =, +, -, @, tab
    or carriage return) gets a leading apostrophe, as OWASP advises against CSV injection.
    Numbers are written as they are; JSONL and Parquet keep text exact."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
