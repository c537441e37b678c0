"""Bounds of the numbers people and clients send, shared by forms and API serializers: each
within its column's range, so that a huge number is a 400 naming the field, never a DB error."""

INT_MIN = -(2**31)  # PostgreSQL integer
INT_MAX = 2**31 - 1
SMALLINT_MAX = 2**15 - 1
ID_MAX = 2**63 - 1  # bigint primary keys
LEASE_MINUTES_MAX = 24 * 60
REQUIRED_JUDGEMENTS_MAX = 10
