"""Forms of the scheme pages: they check input; the services do the work."""

from django import forms

from rubrics.models import SchemeMethod, SchemeStatus
from rubrics.selectors import RATING_SCALE, SchemeFilters
from rubrics.services import TEXT_FORMATS


class SchemeFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search")
    contest = forms.CharField(required=False, max_length=100)
    problem = forms.CharField(required=False, max_length=100, label="Problem id")
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *SchemeStatus.choices])
    method = forms.ChoiceField(required=False, choices=[("", "Any method"), *SchemeMethod.choices])
    valid = forms.ChoiceField(
        required=False,
        label="Validity",
        choices=[("", "Valid or not"), ("yes", "Valid"), ("no", "With problems")],
    )

    def filters(self) -> SchemeFilters:
        if not self.is_valid():
            return SchemeFilters()
        data = self.cleaned_data
        valid = {"yes": True, "no": False}.get(data["valid"])
        return SchemeFilters(
            status=data["status"],
            method=data["method"],
            valid=valid,
            contest=data["contest"].strip(),
            search=data["q"].strip(),
            problem=data["problem"].strip(),
        )


class RateForm(forms.Form):
    score = forms.TypedChoiceField(
        coerce=int,
        choices=[(value, f"{value}: {meaning}") for value, meaning in RATING_SCALE],
        widget=forms.RadioSelect,
        label="Rating",
    )
    comment = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What is wrong or missing; what to change.",
    )


class EditForm(forms.Form):
    fmt = forms.ChoiceField(choices=TEXT_FORMATS, label="Written as")
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false"}),
        max_length=100_000,
        label="Scheme",
        strip=False,
    )
