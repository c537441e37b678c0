"""Events of the adjudication app that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent on commit with proof_id: int when the automated labelling loop
# labels a proof: a campaign holding that proof beyond its routing budget can take the label.
proof_labelled_by_loop = Signal()
