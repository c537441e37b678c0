"""Writes of the adjudication app (keyword-only, typed, atomic), split by sub-domain:
detection (labels or cases from judgements), cases (assign, return, comment, resolve), labels
(the one writer of FinalLabel), imported (dataset ratings as judgements), gold."""

from adjudication.services.cases import case_assign, case_comment, case_resolve, case_return
from adjudication.services.detection import (
    AdjudicationError,
    case_open_manual,
    effective_tolerance,
    item_evaluate,
)
from adjudication.services.gold import item_gold_set
from adjudication.services.imported import (
    ImportedReport,
    imported_on_scale,
    imported_ratings_materialise,
)
from adjudication.services.labels import final_label_set, label_confidences_set

__all__ = [
    "AdjudicationError",
    "ImportedReport",
    "case_assign",
    "case_comment",
    "case_open_manual",
    "case_resolve",
    "case_return",
    "effective_tolerance",
    "final_label_set",
    "item_evaluate",
    "imported_on_scale",
    "imported_ratings_materialise",
    "item_gold_set",
    "label_confidences_set",
]
