"""An expert's count of submitted grades in a campaign (ExpertProgress) and each grade's place
in it (Grade.sequence), kept in the transaction that submits the grade: the grading page reads
"item k of N" and the previous item from them instead of counting the expert's grades."""

from __future__ import annotations

from django.db import connection

from annotation.models import ExpertProgress
from core.sql import Table

# One statement (parameters %(campaign)s and %(expert)s), also the body of a data-modifying
# CTE where a submission counts in the statement of its bookkeeping (annotation.services.grading
# `_DONE_SQL`): the row's lock orders two submissions of the same expert, so no two grades get
# the same place.
_P = Table(ExpertProgress)
COUNT_SQL = f"""
INSERT INTO {_P} ({_P.campaign_id}, {_P.expert_id}, {_P.submitted})
VALUES (%(campaign)s, %(expert)s, 1)
ON CONFLICT ({_P.campaign_id}, {_P.expert_id}) DO UPDATE SET {_P.submitted} = {_P}.{_P.submitted} + 1
RETURNING {_P.submitted}
"""


def expert_progress_count(*, campaign_id: int, expert_id: int) -> int:
    """Counts one more submitted grade of the expert in the campaign and returns its place
    (1 = the first): the caller, submitting the grade, stores it as the grade's sequence. One
    statement, atomic by itself: no savepoint (two more round trips on every submission)."""
    with connection.cursor() as cursor:
        cursor.execute(COUNT_SQL, {"campaign": campaign_id, "expert": expert_id})
        return cursor.fetchone()[0]
