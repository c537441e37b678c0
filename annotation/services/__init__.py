"""Writes of the annotation app (HackSoft style: keyword-only, typed, atomic).

Split by sub-domain: campaigns, items (creation, finalising), assignment (leases, next item),
grading (drafts, submission, revision).
"""

from annotation.services.assignment import (
    AssignmentError,
    assignment_create_manual,
    assignment_heartbeat,
    assignment_move,
    assignment_next,
    assignment_release,
)
from annotation.services.campaigns import (
    CampaignError,
    campaign_close,
    campaign_create,
    campaign_member_add,
    campaign_member_remove,
    campaign_update,
    taxonomy_from_text,
    taxonomy_to_text,
)
from annotation.services.grade_checks import (
    Cause,
    GradeConflict,
    GradeError,
    GradeInput,
    Origin,
    SpanInput,
    grade_snapshot,
    spans_snapshot,
)
from annotation.services.grading import (
    grade_revise,
    grade_save_draft,
    grade_submit,
)
from annotation.services.items import (
    ItemsCreated,
    double_scored_keys,
    item_finalize,
    item_reveal_judgements,
    item_set_gold,
    items_create_from_selection,
    items_repin_to_scheme,
)
from annotation.services.progress import expert_progress_count
from annotation.services.second_opinion import (
    SecondOpinionError,
    second_opinion_enabled,
    second_opinion_reveal,
    second_opinion_revise,
)

__all__ = [
    "AssignmentError",
    "CampaignError",
    "Cause",
    "GradeConflict",
    "GradeError",
    "GradeInput",
    "Origin",
    "ItemsCreated",
    "SecondOpinionError",
    "SpanInput",
    "assignment_create_manual",
    "assignment_heartbeat",
    "assignment_move",
    "assignment_next",
    "assignment_release",
    "campaign_close",
    "campaign_create",
    "campaign_member_add",
    "campaign_member_remove",
    "campaign_update",
    "expert_progress_count",
    "double_scored_keys",
    "grade_revise",
    "grade_save_draft",
    "grade_snapshot",
    "spans_snapshot",
    "grade_submit",
    "item_finalize",
    "item_reveal_judgements",
    "item_set_gold",
    "items_create_from_selection",
    "items_repin_to_scheme",
    "second_opinion_enabled",
    "second_opinion_reveal",
    "second_opinion_revise",
    "taxonomy_from_text",
    "taxonomy_to_text",
]
