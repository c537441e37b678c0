"""Events of the annotation app that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent on commit after a grade is submitted or revised, with item_id: int, grade_id: int and
# revised: bool (True when an already submitted grade changed): estimation refits the
# campaign's rater model (debounced, in the background).
judgement_submitted = Signal()

# Sent inside the submitting transaction, under the item's row lock, with item_id: int when the
# item holds all its required submitted judgements, and again after a revision of one of them:
# what receivers write (a final label, a case) commits or rolls back with the judgement itself.
item_judged = Signal()

# Sent inside the adding transaction with campaign_id: int and user_id: int when a user becomes an
# expert of a campaign: calibration makes them an expert of the round the campaign requires.
expert_added = Signal()

# Sent inside the creating transaction with campaign_id: int and item_ids: list[int] when items
# are added to a campaign (a selection, analyses to review, proofs the labelling loop routed):
# a campaign ordered by uncertainty ranks them where they belong.
items_added = Signal()
