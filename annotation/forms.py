"""Forms of the campaign pages: they validate input; the services do the work."""

from decimal import Decimal

from django import forms
from django.contrib.auth import get_user_model

from annotation.models import (
    Campaign,
    CampaignStatus,
    DoubleDesign,
    LabelPolicy,
    MemberRole,
    Scale,
    SecondOpinionSource,
    TaskKind,
)
from annotation.scales import RANGE_MAX, is_scale
from annotation.services import CampaignError, taxonomy_from_text
from core.values import ID_MAX, INT_MAX, INT_MIN, LEASE_MINUTES_MAX, REQUIRED_JUDGEMENTS_MAX
from rubrics.models import GeneratorConfig


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(
        max_length=80, required=False, help_text="Left empty: made from the name."
    )
    task_kind = forms.ChoiceField(choices=TaskKind.choices, initial=TaskKind.PROOF_GRADING)
    scale = forms.ChoiceField(choices=Scale.choices, initial=Scale.ZERO_TO_SEVEN)
    scale_range = forms.CharField(
        max_length=10, required=False, label="Or another integer range",
        help_text=f"Such as 0-20 or 2-12 (up to 0-{RANGE_MAX}): every integer of it is a score, "
        "mapped onto 0-7 linearly. Given, it replaces the choice above.",
    )  # fmt: skip
    double_share = forms.DecimalField(
        min_value=0, max_value=1, decimal_places=3, initial="0.40",
        help_text="Share of items scored by two experts: 0.4 = 40%; 1 for a calibration round.",
    )  # fmt: skip
    sample_seed = forms.IntegerField(
        initial=0, min_value=INT_MIN, max_value=INT_MAX,
        help_text="Same seed, same double-scored sample.",
    )  # fmt: skip
    double_design = forms.ChoiceField(
        choices=DoubleDesign.choices, initial=DoubleDesign.UNIFORM, required=False,
        label="Double-scoring design",
        help_text="Uniform: a seeded random sample of the share. Adaptive: the share is spent "
        "where the automatic graders (or the rater model) expect experts to disagree, a "
        "uniform part kept; agreement figures are then weighted by the design.",
    )  # fmt: skip
    double_uniform_share = forms.DecimalField(
        min_value=Decimal("0.01"), max_value=1, decimal_places=3, initial="0.30", required=False,
        label="Uniform part of adaptive double-scoring",
        help_text="0.3 = 30% of the second judgements drawn uniformly at random.",
    )  # fmt: skip
    tolerance = forms.DecimalField(
        min_value=0, max_value=RANGE_MAX, decimal_places=2, initial="1",
        help_text="On the campaign's scale: judgements further apart go to adjudication.",
    )  # fmt: skip
    label_policy = forms.ChoiceField(choices=LabelPolicy.choices, initial=LabelPolicy.MEAN_FLOOR)
    lease_minutes = forms.IntegerField(min_value=1, max_value=LEASE_MINUTES_MAX, initial=60)
    gold_rate = forms.DecimalField(min_value=0, max_value=1, decimal_places=3, initial="0")
    fast_seconds = forms.IntegerField(min_value=0, max_value=INT_MAX, initial=60)
    error_taxonomy = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        required=False,
        help_text="One category a line, 'key: Label'. Left empty: the default categories.",
    )
    guidelines = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), required=False)
    status = forms.ChoiceField(choices=CampaignStatus.choices, initial=CampaignStatus.OPEN)
    generator_config = forms.ModelChoiceField(
        queryset=GeneratorConfig.objects.all(),
        required=False,
        label="Generator configuration",
        empty_label="None",
        help_text="Schemes for this campaign should come from this configuration (method, prompt "
        "version, endpoint). Choosing one freezes it if it is not frozen yet.",
    )

    second_opinion = forms.ChoiceField(
        choices=SecondOpinionSource.choices,
        required=False,
        label="AI second opinion after submission",
        help_text="Off by default. When on, an expert who submits then sees this automatic "
        "score and analysis of the proof, and may revise once, with a reason.",
    )
    second_opinion_from = forms.CharField(
        max_length=200,
        required=False,
        label="Second opinion from",
        help_text="Only this verifier (model name) or grader evaluation (its name); empty: "
        "every verifier's scored analyses, or the newest grader evaluation of the proof.",
    )

    def clean_error_taxonomy(self):
        try:
            return taxonomy_from_text(self.cleaned_data["error_taxonomy"])
        except CampaignError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean(self):
        data = super().clean()
        other = (data.pop("scale_range", "") or "").strip()
        if other:
            if is_scale(other):
                data["scale"] = other
            else:
                self.add_error(
                    "scale_range",
                    f"{other!r} is not an integer range such as 0-20 (from 0 up to {RANGE_MAX}).",
                )
        return data

    def clean_double_design(self):
        return self.cleaned_data.get("double_design") or DoubleDesign.UNIFORM

    def clean_double_uniform_share(self):
        value = self.cleaned_data.get("double_uniform_share")
        return Decimal("0.30") if value is None else value

    @classmethod
    def initial_from(cls, campaign: Campaign) -> dict:
        from annotation.services import taxonomy_to_text

        data = {name: getattr(campaign, name) for name in cls.base_fields if name != "scale_range"}
        if campaign.scale not in Scale.values:
            data["scale_range"] = campaign.scale
        data["error_taxonomy"] = taxonomy_to_text(campaign.error_taxonomy)
        data["generator_config"] = campaign.generator_config_id
        return data


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=MemberRole.choices, initial=MemberRole.EXPERT)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise forms.ValidationError(f"No user is called {name!r}.")
        return user


class SelectionForm(forms.Form):
    contest = forms.CharField(required=False)
    year = forms.IntegerField(required=False, min_value=1, max_value=9999)
    generator = forms.CharField(required=False)
    problem = forms.CharField(required=False, help_text="A problem's external id.")
    required_judgements = forms.IntegerField(
        required=False, min_value=1, max_value=REQUIRED_JUDGEMENTS_MAX,
        help_text="Left empty: the campaign's double-scored share decides (1 or 2).",
    )  # fmt: skip
    is_gold = forms.BooleanField(required=False, label="Gold items (for quality checks)")


class AssignForm(forms.Form):
    item = forms.IntegerField(min_value=1, max_value=ID_MAX, label="Item id")
    username = forms.CharField(max_length=150, label="Expert")


class MoveForm(forms.Form):
    assignment = forms.IntegerField(min_value=1, max_value=ID_MAX)
    username = forms.CharField(max_length=150, label="To expert")
