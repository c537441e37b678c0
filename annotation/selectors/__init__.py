"""Reads of the annotation app. Permission checks live in the `*_for_user` selectors; blindness
(an expert sees only their own judgement of an item until it is final or revealed) is enforced
here, so pages and the API cannot forget it.

A package by sub-domain: `campaigns` (access, members, the campaign page), `items` (the proofs
a selection matches), `assignment` (hand assignment, an item's place in an expert's work),
`grading` (the item as a page or the API shows it, own grades, blindness, final feedback).
Every public read is imported from here too (`from annotation import selectors`).
"""

from annotation.selectors.assignment import (
    HAND_ASSIGNABLE_SHOWN,
    OFFERABLE_BOUND,
    ExpertPosition,
    assignment_for_expert,
    expert_holds_item,
    expert_position,
    experts_for_assignment,
    gold_never_held,
    items_for_hand_assignment,
)
from annotation.selectors.campaigns import (
    ExpertRow,
    OlderPin,
    Progress,
    campaign_for_user,
    campaign_labelled_items,
    campaign_list_for_user,
    campaign_members,
    campaign_progress,
    ensure_campaign_expert,
    expert_campaign,
    generator_score_rows,
    is_campaign_admin,
    items_on_older_schemes,
    revisions_for_campaign,
)
from annotation.selectors.grading import (
    ExpertTotals,
    FinalFeedback,
    GradingView,
    expert_totals,
    final_feedback,
    grades_for_expert,
    grading_view_for_user,
    item_score_breakdown,
    item_view_for_json,
    own_grades_in_campaign,
    proofs_held_blind,
)
from annotation.selectors.items import (
    SelectionPreview,
    proof_selection,
    selection_choices,
    selection_preview,
)

__all__ = [
    "assignment_for_expert",
    "HAND_ASSIGNABLE_SHOWN",
    "items_for_hand_assignment",
    "experts_for_assignment",
    "expert_holds_item",
    "ExpertPosition",
    "OFFERABLE_BOUND",
    "gold_never_held",
    "expert_position",
    "is_campaign_admin",
    "campaign_list_for_user",
    "campaign_for_user",
    "expert_campaign",
    "ensure_campaign_expert",
    "campaign_members",
    "ExpertRow",
    "Progress",
    "generator_score_rows",
    "campaign_labelled_items",
    "campaign_progress",
    "revisions_for_campaign",
    "OlderPin",
    "items_on_older_schemes",
    "GradingView",
    "grading_view_for_user",
    "item_view_for_json",
    "grades_for_expert",
    "ExpertTotals",
    "expert_totals",
    "proofs_held_blind",
    "own_grades_in_campaign",
    "item_score_breakdown",
    "FinalFeedback",
    "final_feedback",
    "proof_selection",
    "selection_choices",
    "selection_preview",
    "SelectionPreview",
]
