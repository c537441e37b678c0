"""Events of the adjudication app that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent on commit with proof_id: int when the automated labelling loop
# labels a proof: a campaign holding that proof beyond its routing budget can take the label.
proof_labelled_by_loop = Signal()

# Sent on commit with item_id: int when an item's final label is set by anything but the
# judgements themselves (an adjudication, an import, the labelling loop; a label derived from
# the judgements follows annotation's judgement_submitted): estimation refits the campaign's
# rater model.
label_changed = Signal()

# Sent on commit with case_id: int when an adjudication case opens (a disagreement beyond the
# tolerance, or an admin's hand) and when it is settled (an adjudicator's resolution, or the
# experts' revised judgements agreeing): webhooks tell the admins' receivers.
case_opened = Signal()
case_settled = Signal()
