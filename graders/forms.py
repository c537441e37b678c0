"""Forms of the evaluation pages: they check input and hand plain values to the services."""

from django import forms

from core.forms import OneChoicePreselected
from graders.metrics import AGGREGATIONS
from graders.models import GridContext, GridInstruction, PredictionSource
from graders.services.evaluations import MAX_RUNS
from rubrics.models import LLMEndpoint

MAX_PREDICTIONS_BYTES = 50 * 1024 * 1024


class PredictionsForm(OneChoicePreselected, forms.Form):
    campaign = forms.ModelChoiceField(queryset=None, to_field_name="slug")
    name = forms.CharField(max_length=200, label="Grader name")
    source = forms.ChoiceField(
        choices=[
            (PredictionSource.PROOFGRADER_JSONL, PredictionSource.PROOFGRADER_JSONL.label),
            (PredictionSource.DEEPSEEK_OUTPUTS, PredictionSource.DEEPSEEK_OUTPUTS.label),
        ],
        label="File format",
    )
    aggregation = forms.ChoiceField(
        choices=[(a, a) for a in AGGREGATIONS], label="Aggregate k runs by"
    )
    file = forms.FileField(label="Predictions (JSON Lines)")

    def __init__(self, *args, campaigns, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["campaign"].queryset = campaigns

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_PREDICTIONS_BYTES:
            raise forms.ValidationError("The file is over 50 MB.")
        return upload


class EndpointRunForm(OneChoicePreselected, forms.Form):
    campaign = forms.ModelChoiceField(queryset=None, to_field_name="slug")
    name = forms.CharField(max_length=200, label="Grader name")
    endpoint = forms.ModelChoiceField(queryset=LLMEndpoint.objects.order_by("name"))
    runs = forms.IntegerField(min_value=1, max_value=MAX_RUNS, initial=1, label="Runs (k)")
    aggregation = forms.ChoiceField(
        choices=[(a, a) for a in AGGREGATIONS], label="Aggregate k runs by"
    )

    def __init__(self, *args, campaigns, **kwargs):
        kwargs.setdefault("auto_id", "run_%s")  # beside PredictionsForm on one page
        super().__init__(*args, **kwargs)
        self.fields["campaign"].queryset = campaigns


class GridForm(OneChoicePreselected, forms.Form):
    """The design space: endpoints x contexts x instructions, k runs, a budget per cell."""

    campaign = forms.ModelChoiceField(queryset=None, to_field_name="slug")
    name = forms.CharField(max_length=200, label="Study name")
    endpoints = forms.ModelMultipleChoiceField(
        queryset=LLMEndpoint.objects.order_by("name"), label="Endpoints (backbones)"
    )
    contexts = forms.MultipleChoiceField(
        choices=GridContext.choices, widget=forms.CheckboxSelectMultiple, label="Contexts"
    )
    instructions = forms.MultipleChoiceField(
        choices=GridInstruction.choices,
        widget=forms.CheckboxSelectMultiple,
        label="Instructions",
    )
    runs = forms.IntegerField(min_value=1, max_value=MAX_RUNS, initial=1, label="Runs (k)")
    aggregation = forms.ChoiceField(
        choices=[(a, a) for a in AGGREGATIONS], label="Aggregate k runs by"
    )
    budget = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=10,
        decimal_places=2,
        label="Budget per cell (US $, optional)",
        help_text="A cell whose estimated cost is over it is not started.",
    )

    def __init__(self, *args, campaigns, **kwargs):
        kwargs.setdefault("auto_id", "grid_%s")
        super().__init__(*args, **kwargs)
        self.fields["campaign"].queryset = campaigns


class PickRunForm(OneChoicePreselected, forms.Form):
    """A pairwise grader run: one endpoint asked about every pair, in both orders."""

    endpoint = forms.ModelChoiceField(queryset=LLMEndpoint.objects.order_by("name"))
    name = forms.CharField(max_length=200, required=False, label="Run name (optional)")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "picks_%s")
        super().__init__(*args, **kwargs)
