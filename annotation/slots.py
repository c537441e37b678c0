"""The rules of assignment, each written once: a lease is live (an active assignment leased
until later than now); an assignment takes one of its item's slots when it is submitted (done) or
its lease is live; an item "next" could offer is open (needing a judgement, not final, not gold,
not held back by a routing budget); an assignment is open work (active, on an item not final).

Each rule is given here in the forms its callers need, side by side: an SQL fragment for the
hand-written statements of assignment, grading and the expert's position (column and table names
from the models' `_meta` through `core.sql.Table`, statuses from the enum), a Q object for the
ORM's reads (with a `prefix` for a relation, `assignments__`), and for a live lease a test of one
instance. No other module spells them: tests/annotation/test_slots.py checks that the forms
agree.
"""

from __future__ import annotations

from django.db.models import Q

from annotation.models import Assignment, AssignmentStatus, Item
from core.sql import Table

ACTIVE, DONE = AssignmentStatus.ACTIVE.value, AssignmentStatus.DONE.value


def lease_live_sql(alias: str) -> str:
    """SQL: the assignment row `alias` holds a live lease at `%(now)s`."""
    a = Table(Assignment, alias)
    return f"({a.status} = '{ACTIVE}' AND {a.leased_until} > %(now)s)"


def lease_live(now, *, prefix: str = "") -> Q:
    """The Q form of lease_live_sql, on Assignment (or through the relation `prefix`)."""
    return Q(**{f"{prefix}status": AssignmentStatus.ACTIVE, f"{prefix}leased_until__gt": now})


def lease_is_live(assignment: Assignment, now) -> bool:
    """lease_live for one assignment in hand."""
    return assignment.status == AssignmentStatus.ACTIVE and assignment.leased_until > now


def slot_taken_sql(alias: str) -> str:
    """SQL: the assignment row `alias` takes a slot at `%(now)s`."""
    return f"({Table(Assignment, alias).status} = '{DONE}' OR {lease_live_sql(alias)})"


def slot_taken(now) -> Q:
    """The Q form of slot_taken_sql, on Assignment."""
    return Q(status=AssignmentStatus.DONE) | lease_live(now)


def item_open_sql(alias: str) -> str:
    """SQL: the item row `alias` is one "next" may offer (slots and the expert aside)."""
    i = Table(Item, alias)
    return f"{i.needs_work} AND NOT {i.is_final} AND NOT {i.is_gold} AND NOT {i.route_held}"


def takeable_sql(item: str, assignment: str = "a") -> str:
    """SQL: the item row `item` may be given to the expert `%(expert)s`: they never held it and
    fewer of its slots are taken than it needs. One probe of the item's assignments (aliased
    `assignment`) per item: a correlated aggregate, which the planner never turns into a join
    that hashes all of the expert's assignments (as it did a NOT EXISTS on a small campaign: the
    expert's whole history read on each load of the grading page)."""
    i, a = Table(Item, item), Table(Assignment, assignment)
    return f"""(
    SELECT count(*) FILTER (WHERE {a.expert_id} = %(expert)s) = 0
       AND count(*) FILTER (WHERE {slot_taken_sql(assignment)}) < {i.required_judgements}
    FROM {a} WHERE {a.item_id} = {i.id}
  )"""


def never_held_sql(item: str, assignment: str = "a") -> str:
    """SQL: the expert `%(expert)s` never held the item row `item`, probed as `takeable_sql`."""
    i, a = Table(Item, item), Table(Assignment, assignment)
    return f"""(
    SELECT count(*) = 0 FROM {a} WHERE {a.item_id} = {i.id} AND {a.expert_id} = %(expert)s
  )"""


def item_open() -> Q:
    """The Q form of item_open_sql, on Item."""
    return Q(needs_work=True, is_final=False, is_gold=False, route_held=False)


def assignment_open_sql(assignment: str, item: str) -> str:
    """SQL: the assignment row `assignment` (of the item row `item`) is work its expert resumes
    before anything new: active, on an item not final (a gold item stays open)."""
    a, i = Table(Assignment, assignment), Table(Item, item)
    return f"{a.status} = '{ACTIVE}' AND (NOT {i.is_final} OR {i.is_gold})"


def open_work_sql(campaign: str, *, other_than: str | None = None) -> str:
    """SQL: whether the expert `%(user)s` holds open work (`assignment_open_sql`) in the campaign
    whose id is the SQL expression `campaign`, on an item other than `other_than` when given."""
    o, oi = Table(Assignment, "o"), Table(Item, "oi")
    other = f" AND {o.item_id} <> {other_than}" if other_than else ""
    return f"""EXISTS (SELECT 1 FROM {o}
               JOIN {oi} ON {oi.id} = {o.item_id}
               WHERE {o.expert_id} = %(user)s AND {oi.campaign_id} = {campaign}{other}
                 AND {assignment_open_sql("o", "oi")})"""


def assignment_open() -> Q:
    """The Q form of assignment_open_sql, on Assignment."""
    return Q(status=AssignmentStatus.ACTIVE) & (Q(item__is_final=False) | Q(item__is_gold=True))
