"""Forms of the verification pages: a proof selection with a verifier run, a meta-verifier run,
a labelling loop run, and an audit sample."""

from decimal import Decimal

from django import forms

from adjudication.verification import selectors as loop_selectors
from annotation.selectors import proof_selection
from core.forms import OneChoicePreselected


class ProofSelectionForm(OneChoicePreselected, forms.Form):
    contest = forms.CharField(required=False)
    year = forms.IntegerField(required=False, min_value=1, max_value=9999)
    generator = forms.CharField(required=False)
    problem = forms.CharField(required=False, help_text="A problem's external id.")

    def proofs(self):
        data = self.cleaned_data
        return proof_selection(
            contest=data["contest"], year=data["year"], generator=data["generator"],
            problem=data["problem"],
        )  # fmt: skip


class VerifierRunForm(ProofSelectionForm):
    """On the verification page beside the loop's form: its element ids start `run_`."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "run_%s")
        super().__init__(*args, **kwargs)

    kind = forms.ChoiceField(
        choices=[("verify", "Verifier: analyses of the proofs"),
                 ("meta_verify", "Meta-verifier: meta-analyses of their analyses"),
                 ("defect_split", "Pre-split their analyses into suggested defects")],
    )  # fmt: skip
    endpoint = forms.ModelChoiceField(queryset=loop_selectors.endpoints())
    samples = forms.IntegerField(min_value=1, max_value=64, initial=1, label="Samples per target")
    verifier = forms.CharField(
        required=False, help_text="Meta-verifier runs: only analyses by this verifier model."
    )


class LabellingRunForm(ProofSelectionForm):
    """On the verification page beside the verifier run's form: its element ids start `loop_`."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "loop_%s")
        super().__init__(*args, **kwargs)

    verifier = forms.ModelChoiceField(queryset=loop_selectors.endpoints(), label="Verifier")
    meta_verifier = forms.ModelChoiceField(
        queryset=loop_selectors.endpoints(), label="Meta-verifier"
    )
    n = forms.IntegerField(min_value=1, max_value=64, initial=4, label="n (analyses per proof)")
    m = forms.IntegerField(
        min_value=1, max_value=64, initial=3, label="m (meta-verifications per analysis)"
    )
    k = forms.IntegerField(min_value=1, max_value=64, initial=2, label="k (valid analyses)")
    confirm_at = forms.TypedChoiceField(
        choices=[("1", "a meta score of 1 confirms"), ("0.5", "0.5 also confirms")],
        coerce=Decimal, initial="1", label="Confirmation",
    )  # fmt: skip
    route_campaign = forms.ModelChoiceField(
        queryset=loop_selectors.grading_campaigns(),
        required=False,
        label="Route unsure proofs to",
        help_text="A proof grading campaign; empty: routed proofs are only listed.",
    )
    auto_campaign = forms.ModelChoiceField(
        queryset=loop_selectors.automatic_label_campaigns(),
        required=False,
        label="Automatic labels go to",
        help_text="A campaign on 0 / 0.5 / 1; empty: the campaign of the last run with the same "
        "verifier, meta-verifier, n, m, k and confirmation (a new one the first time).",
    )


class AuditForm(OneChoicePreselected, forms.Form):
    campaign = forms.ModelChoiceField(
        queryset=loop_selectors.grading_campaigns(), label="Expert campaign"
    )
    size = forms.IntegerField(min_value=1, max_value=10000, initial=20, label="Sample size")
    seed = forms.IntegerField(initial=0)
