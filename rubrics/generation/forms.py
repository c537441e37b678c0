"""The form that starts a generation run: it checks input; the services do the work."""

from django import forms

from problems.models import Problem
from rubrics.models import GENERATION_METHODS, GeneratorConfig, LLMEndpoint
from rubrics.workflows import prompt_versions


def _prompt_version_choices() -> list[tuple[str, str]]:
    """The versions at which some generation method has every template (a grader prompt's
    version alone is not one)."""
    versions = sorted({v for method, _ in GENERATION_METHODS for v in prompt_versions(method)})
    return [(version, version) for version in versions]


class GenerationStartForm(forms.Form):
    problems = forms.ModelMultipleChoiceField(
        queryset=Problem.objects.only("id"),
        error_messages={"required": "Choose at least one problem."},
    )
    config = forms.ModelChoiceField(
        queryset=GeneratorConfig.objects.select_related("endpoint"),
        required=False,
        empty_label="A new configuration (below)",
        label="Configuration",
    )
    method = forms.ChoiceField(choices=GENERATION_METHODS, required=False)
    prompt_version = forms.ChoiceField(choices=_prompt_version_choices, required=False)
    endpoint = forms.ModelChoiceField(
        queryset=LLMEndpoint.objects.order_by("name"),
        required=False,
        empty_label=None,
        label="Model endpoint",
    )
    reuse_steps = forms.BooleanField(
        required=False,
        initial=True,
        label="Reuse steps already computed for these problems (no new calls for them)",
    )

    def clean(self):
        data = super().clean()
        if data.get("config") is None:
            missing = [
                name for name in ("method", "prompt_version", "endpoint") if not data.get(name)
            ]
            for name in missing:
                self.add_error(name, "Choose a value, or an existing configuration above.")
        return data
