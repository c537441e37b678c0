"""An expert's count of submitted grades in a campaign (ExpertProgress) and each grade's place
in it (Grade.sequence), kept in the transaction that submits the grade: the grading page reads
"item k of N" and the previous item from them instead of counting the expert's grades."""

from __future__ import annotations

from django.db import connection

from annotation.models import ExpertProgress

# One statement on both databases (SQLite 3.35+ takes ON CONFLICT ... RETURNING too): the row's
# lock orders two submissions of the same expert, so no two grades get the same place.
_COUNT_SQL = f"""
INSERT INTO {ExpertProgress._meta.db_table} (campaign_id, expert_id, submitted)
VALUES (%s, %s, 1)
ON CONFLICT (campaign_id, expert_id) DO UPDATE SET submitted = {ExpertProgress._meta.db_table}.submitted + 1
RETURNING submitted
"""


# The count as a WITH clause (PostgreSQL), its parameters those of expert_progress_count, for the
# statement that writes the grade too: `(SELECT submitted FROM progress)` is the grade's place.
COUNT_WITH = f"WITH progress AS ({_COUNT_SQL}) "
COUNTED_PLACE = "(SELECT submitted FROM progress)"


def expert_progress_count(*, campaign_id: int, expert_id: int) -> int:
    """Counts one more submitted grade of the expert in the campaign and returns its place
    (1 = the first): the caller, submitting the grade, stores it as the grade's sequence. One
    statement, atomic by itself: no savepoint (two more round trips on every submission)."""
    with connection.cursor() as cursor:
        cursor.execute(_COUNT_SQL, [campaign_id, expert_id])
        return cursor.fetchone()[0]
