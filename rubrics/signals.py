"""Events of the rubrics app that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent inside the approving transaction with scheme_id: int and problem_id: int when a version
# becomes its problem's approved one. A receiver returns how many items it moved to the version
# (annotation re-pins the items waiting for it), which `scheme_approve` reports.
scheme_approved = Signal()
