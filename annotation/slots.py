"""The rule of judgement slots, written once: an assignment takes one of its item's slots when it
is submitted (done) or actively leased until later than now; an item "next" could offer is open
(needing a judgement, not final, not gold, not held back by a routing budget).

The hot statements of assignment (annotation/services/assignment.py) and of the expert's
position (annotation/selectors/assignment.py) are hand-written SQL; they take these fragments instead
of spelling the rule again, and the ORM paths (counts, lists) take the Q objects.
tests/annotation/test_slots.py checks that both forms agree.
"""

from __future__ import annotations

from django.db.models import Q

from annotation.models import Assignment, AssignmentStatus, Item


def slot_taken_sql(alias: str) -> str:
    """SQL: the assignment row `alias` takes a slot at `%(now)s`."""
    return (
        f"({alias}.status = '{AssignmentStatus.DONE.value}' OR ({alias}.status = "
        f"'{AssignmentStatus.ACTIVE.value}' AND {alias}.leased_until > %(now)s))"
    )


def slot_taken(now) -> Q:
    """The ORM twin of slot_taken_sql, on Assignment."""
    return Q(status=AssignmentStatus.DONE) | Q(status=AssignmentStatus.ACTIVE, leased_until__gt=now)


def item_open_sql(alias: str) -> str:
    """SQL: the item row `alias` is one "next" may offer (slots and the expert aside)."""
    return (
        f"{alias}.needs_work AND NOT {alias}.is_final AND NOT {alias}.is_gold "
        f"AND NOT {alias}.route_held"
    )


def item_open() -> Q:
    """The ORM twin of item_open_sql, on Item."""
    return Q(needs_work=True, is_final=False, is_gold=False, route_held=False)


def assignment_open_sql(assignment: str, item: str) -> str:
    """SQL: the assignment row `assignment` (of the item row `item`) is work its expert resumes
    before anything new: active, on an item not final (a gold item stays open)."""
    return (
        f"{assignment}.status = '{AssignmentStatus.ACTIVE.value}' "
        f"AND (NOT {item}.is_final OR {item}.is_gold)"
    )


def open_work_sql(campaign: str, *, other_than: str | None = None) -> str:
    """SQL: whether the expert `%(user)s` holds open work (`assignment_open_sql`) in the campaign
    whose id is the SQL expression `campaign`, on an item other than `other_than` when given."""
    other = f" AND o.item_id <> {other_than}" if other_than else ""
    return f"""EXISTS (SELECT 1 FROM {Assignment._meta.db_table} o
               JOIN {Item._meta.db_table} oi ON oi.id = o.item_id
               WHERE o.expert_id = %(user)s AND oi.campaign_id = {campaign}{other}
                 AND {assignment_open_sql("o", "oi")})"""


def assignment_open() -> Q:
    """The ORM twin of assignment_open_sql, on Assignment."""
    return Q(status=AssignmentStatus.ACTIVE) & (Q(item__is_final=False) | Q(item__is_gold=True))
