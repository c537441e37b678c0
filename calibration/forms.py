from decimal import Decimal

from django import forms

from annotation.models import Campaign
from core.forms import OneChoicePreselected


class RoundForm(forms.Form):
    name = forms.CharField(max_length=200, label="Name of the round")
    slug = forms.SlugField(max_length=80, required=False, help_text="Left empty: from the name.")
    guidelines = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, label="Guidelines (Markdown)"
    )
    experts = forms.CharField(
        required=False,
        label="Experts (user names, comma-separated)",
        help_text="They become experts of the round; a campaign requiring it adds its own.",
    )


class RequirementForm(OneChoicePreselected, forms.Form):
    round = forms.ModelChoiceField(
        queryset=Campaign.objects.filter(is_calibration=True).order_by("name"),
        label="Calibration round",
        to_field_name="slug",
    )
    max_mae = forms.DecimalField(
        min_value=Decimal("0"),
        max_digits=4,
        decimal_places=2,
        initial=Decimal("1"),
        label="Largest mean absolute error",
    )
    min_items = forms.IntegerField(
        min_value=1, max_value=1000, initial=5, label="On at least this many gold items"
    )
