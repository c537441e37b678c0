"""Campaigns, members, items, leased assignments, grades with error spans and their history.

Writes go through annotation.services; reads through annotation.selectors. The invariants that a
database can hold are constraints here: one grade per (item, expert), one assignment per (item,
expert), one item per (campaign, proof, analysis), scores within 0-50 (every campaign scale lies
inside it: annotation.scales.RANGE_MAX), span offsets ordered.

A package by sub-domain: `campaigns` (campaigns, members, items), `assignment`, `grading`
(grades, spans, revisions, progress), `review` (analysis review), `second_opinion`, `pairs`
(pairwise comparisons of proofs); every model
is imported from here (`from annotation.models import Grade`).
"""

from annotation.models.assignment import (
    Assignment,
    AssignmentStatus,
)
from annotation.models.campaigns import (
    DEFAULT_ERROR_TAXONOMY,
    Campaign,
    CampaignMember,
    CampaignStatus,
    DoubleDesign,
    Item,
    ItemDesign,
    ItemOrder,
    LabelPolicy,
    MemberRole,
    SecondOpinionSource,
    TaskKind,
    default_error_taxonomy,
)
from annotation.models.grading import (
    ErrorSpan,
    ExpertProgress,
    Grade,
    GradeRevision,
    GradeStatus,
)
from annotation.models.pairs import (
    JudgementStatus,
    PairChoice,
    PairItem,
    PairJudgement,
    PairLabelSource,
    PairStatus,
)
from annotation.models.review import (
    DefectSuggestion,
    MetaDefect,
    MetaReview,
)
from annotation.models.second_opinion import (
    SecondOpinion,
)
from annotation.scales import Scale  # a campaign's scale, importable with the models

__all__ = [
    "DEFAULT_ERROR_TAXONOMY",
    "default_error_taxonomy",
    "TaskKind",
    "LabelPolicy",
    "SecondOpinionSource",
    "ItemOrder",
    "ItemDesign",
    "DoubleDesign",
    "CampaignStatus",
    "MemberRole",
    "Campaign",
    "CampaignMember",
    "Item",
    "AssignmentStatus",
    "Assignment",
    "ExpertProgress",
    "GradeStatus",
    "Grade",
    "ErrorSpan",
    "GradeRevision",
    "MetaReview",
    "MetaDefect",
    "DefectSuggestion",
    "SecondOpinion",
    "PairChoice",
    "PairStatus",
    "PairLabelSource",
    "JudgementStatus",
    "PairItem",
    "PairJudgement",
    "Scale",
]
