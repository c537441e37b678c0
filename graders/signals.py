"""Events of the graders app that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent with evaluation_id: int and campaign_id: int when a grader evaluation has its predictions
# (an import, inside its transaction; an endpoint run, when it finishes with at least one): a new
# grader of the campaign, so estimation fits the campaign's rater model again.
grader_evaluated = Signal()
