"""The form that starts a generation run: it checks input; the services do the work."""

from django import forms

from llm import prompts
from problems.models import Problem

from .models import GENERATION_METHODS, GeneratorConfig, LLMEndpoint


def _prompt_version_choices() -> list[tuple[str, str]]:
    versions = sorted({key.partition("@")[2] for key in prompts.available()})
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
