"""Statements that change under rated proofs.

A proof is graded, labelled and exported with the statement it was written for and rated
against. When an import changes a problem's statement, the old text is kept as a past version
(ProblemStatement, numbered as it was: version 1 is the statement a problem first had) and
every proof that was paired with it (Proof.statement empty: the current statement) is pinned to
it, so that its grades, ratings and exports keep their statement; the problem's statement and
`statement_version` become the new ones, which proofs made from then on are paired with. The
import warns, naming the problem, when it pinned any proof (`problems/services/upsert.py`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from problems.models import ProblemStatement, Proof


@dataclass(frozen=True)
class StatementChange:
    """An import's new statement for a problem: the text it replaces, at its version."""

    problem_id: int
    version: int
    text: str
    source: str
    replaced_by: str


PIN_SQL = (
    f"UPDATE {Proof._meta.db_table} AS p SET statement_id = s.id "
    f"FROM {ProblemStatement._meta.db_table} AS s "
    "WHERE s.id = ANY(%s) AND p.problem_id = s.problem_id AND p.statement_id IS NULL "
    "RETURNING p.problem_id"
)


@transaction.atomic
def statements_replace(*, changes: list[StatementChange]) -> Counter[int]:
    """Keeps each replaced statement as a past version and pins to it the proofs paired with
    it; returns the number of proofs pinned by problem id. The caller writes the new text and
    version on the problem rows (the import does it in its batched upsert)."""
    if not changes:
        return Counter()
    now = timezone.now()
    rows = ProblemStatement.objects.bulk_create(
        [
            ProblemStatement(
                problem_id=change.problem_id,
                version=change.version,
                text=change.text,
                source=change.source[:200],
                replaced_by=change.replaced_by[:200],
                replaced_at=now,
            )
            for change in changes
        ]
    )
    with connection.cursor() as cursor:
        cursor.execute(PIN_SQL, [[row.pk for row in rows]])
        return Counter(problem_id for (problem_id,) in cursor.fetchall())
