"""Forms of the exports pages: they check input and hand plain values to the services."""

from django import forms

from core.forms import OneChoicePreselected
from exports.formats import LABEL_SOURCES
from exports.models import ExportFormat, FileType, Layout


class ExportForm(OneChoicePreselected, forms.Form):
    campaign = forms.ModelChoiceField(queryset=None, to_field_name="slug")
    format = forms.ChoiceField(choices=ExportFormat.choices)
    file_type = forms.ChoiceField(choices=FileType.choices)
    layout = forms.ChoiceField(
        choices=Layout.choices,
        initial=Layout.FILE,
        required=False,
        help_text="A Hugging Face dataset folder takes JSON Lines or Parquet.",
    )
    contest = forms.CharField(required=False, max_length=100)
    year = forms.IntegerField(required=False, min_value=1900, max_value=2100)
    generator = forms.CharField(required=False, max_length=200)
    label_sources = forms.MultipleChoiceField(
        required=False, choices=[(s, s) for s in LABEL_SOURCES], widget=forms.CheckboxSelectMultiple
    )
    min_agreement = forms.FloatField(
        required=False, min_value=0, max_value=1, help_text="0-1: 1 keeps only exact agreement."
    )
    test_fraction = forms.FloatField(
        required=False, min_value=0.01, max_value=0.99, help_text="Share of problems in test."
    )
    split_seed = forms.IntegerField(required=False, initial=0)
    cut_low = forms.IntegerField(initial=5, min_value=1, max_value=7, label="0.5 from")
    cut_high = forms.IntegerField(initial=7, min_value=1, max_value=7, label="1 from")
    expert_names = forms.BooleanField(
        required=False, label="Experts' names instead of pseudonyms (admins only)"
    )

    def __init__(self, *args, campaigns, can_name: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["campaign"].queryset = campaigns
        if not can_name:
            del self.fields["expert_names"]

    def clean(self):
        data = super().clean()
        low, high = data.get("cut_low"), data.get("cut_high")
        if low is not None and high is not None and low >= high:
            self.add_error("cut_high", "The cut for 1 must be above the cut for 0.5.")
        return data

    def filters(self) -> dict:
        data = self.cleaned_data
        return {
            "contest": data["contest"],
            "year": data["year"],
            "generator": data["generator"],
            "label_sources": data["label_sources"],
            "min_agreement": data["min_agreement"],
            "test_fraction": data["test_fraction"],
            "split_seed": data["split_seed"] or 0,
            "cuts": [data["cut_low"], data["cut_high"]],
            "expert_names": data.get("expert_names", False),
        }
